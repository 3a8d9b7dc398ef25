"""An Anthropic transcript as pydantic-ai and LangChain hold it, and the call a user of each makes with it.

A user of either framework keeps the conversation in the framework's own message types and hands
the whole history over on every call; the framework converts those objects into the Anthropic
request anew each time, so the SDK gets new message dicts on every call whatever it was given.

``pydantic_ai_messages`` and ``langchain_messages`` give a transcript (user text, assistant turns of
thinking with its signature, text and tool calls, and user turns of tool results) in each
framework's types, message for message: pydantic-ai's ``ModelRequest`` and ``ModelResponse``
parts; LangChain's ``HumanMessage``, ``AIMessage`` (its content blocks and ``tool_calls``) and one
``ToolMessage`` per result. Each framework sends it back as the same Anthropic messages.
``pydantic_ai_call`` and ``langchain_call`` are the calls: an agent's ``run_sync`` with
``message_history`` (through ``AsyncAnthropic``'s ``beta.messages.create``), a chat model's
``invoke`` (through ``Anthropic``'s ``messages.create``), each on an SDK client over the HTTP client
given, the client's own tracing off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import anthropic
import httpx2
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import SecretStr
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

TELEMETRY_OFF: Final[Any] = {"traces": {"enabled": False}}
"""The SDK client's own tracing off, so an instrumentation starts its own inference span."""


def pydantic_ai_messages(transcript: list[dict[str, Any]], *, model: str) -> list[ModelMessage]:
    """``transcript`` as pydantic-ai's messages, the responses by ``model`` on Anthropic (their thinking is sent)."""
    tools: dict[str, str] = {}
    out: list[ModelMessage] = []
    for message in transcript:
        content = message["content"]
        if message["role"] == "assistant":
            parts: list[ModelResponsePart] = []
            for block in content:
                if block["type"] == "thinking":
                    parts.append(
                        ThinkingPart(content=block["thinking"], signature=block["signature"], provider_name="anthropic")
                    )
                elif block["type"] == "text":
                    parts.append(TextPart(content=block["text"]))
                else:
                    tools[block["id"]] = block["name"]
                    parts.append(ToolCallPart(tool_name=block["name"], args=block["input"], tool_call_id=block["id"]))
            out.append(ModelResponse(parts=parts, model_name=model, provider_name="anthropic"))
        elif isinstance(content, str):
            out.append(ModelRequest(parts=[UserPromptPart(content=content)]))
        else:
            results: list[ModelRequestPart] = [
                ToolReturnPart(tool_name=tools[b["tool_use_id"]], content=b["content"], tool_call_id=b["tool_use_id"])
                for b in content
            ]
            out.append(ModelRequest(parts=results))
    return out


def langchain_messages(transcript: list[dict[str, Any]]) -> list[BaseMessage]:
    """``transcript`` as LangChain's messages: an assistant turn's blocks as its content, one message per result."""
    out: list[BaseMessage] = []
    for message in transcript:
        content = message["content"]
        if message["role"] == "assistant":
            calls = [
                {"name": b["name"], "args": b["input"], "id": b["id"], "type": "tool_call"}
                for b in content
                if b["type"] == "tool_use"
            ]
            out.append(AIMessage([dict(b) for b in content], tool_calls=calls))
        elif isinstance(content, str):
            out.append(HumanMessage(content))
        else:
            out.extend(ToolMessage(b["content"], tool_call_id=b["tool_use_id"]) for b in content)
    return out


def pydantic_ai_call(http: httpx2.AsyncClient, *, model: str) -> Callable[[list[ModelMessage]], object]:
    """A run of an agent on pydantic-ai's Anthropic model, continuing the history given (one request)."""
    client = anthropic.AsyncAnthropic(api_key="k", http_client=http, max_retries=0, open_telemetry=TELEMETRY_OFF)
    agent = Agent(AnthropicModel(model, provider=AnthropicProvider(anthropic_client=client)))
    return lambda history: agent.run_sync(None, message_history=history).output


def langchain_call(http: httpx2.Client, *, model: str) -> Callable[[list[BaseMessage]], object]:
    """``invoke`` of LangChain's Anthropic chat model on the messages given (one request)."""
    chat = ChatAnthropic(model_name=model, api_key=SecretStr("k"), max_retries=0, timeout=None, stop=None)
    # ChatAnthropic builds its SDK client from its own settings on first use and offers no way to
    # pass an HTTP client: the client on ``http`` takes that place before the first call.
    chat.__dict__["_client"] = anthropic.Anthropic(
        api_key="k", http_client=http, max_retries=0, open_telemetry=TELEMETRY_OFF
    )
    return chat.invoke
