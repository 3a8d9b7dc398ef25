"""LangChain (``langchain-openai``, ``langchain-anthropic``) against the simulator: broken message lists.

Each call sends a history with ``AIMessage(tool_calls=...)`` and ``ToolMessage`` broken one way, and the
simulated model answers with a tool call (one request); the request must reach the simulator valid and
be recorded once, and the AIMessage must come back with the call.
The framework leaves each break in the request, so it reaches otel-toolturn (Responses takes a late
result where it stands).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from otel_toolturn import Lane
from otel_toolturn.simulator import Simulator
from tests.frameworks.breaks import (
    BREAKS,
    HISTORIES,
    LANES,
    PROMPT,
    TOOL,
    Break,
    Call,
    Result,
    Step,
    Text,
    User,
    call_turn,
    read,
)
from tests.frameworks.traffic import assert_traffic
from tests.instrument.conftest import Otel

READ = tool(read)
KEY = SecretStr("test-key")


def history(steps: Sequence[Step]) -> list[BaseMessage]:
    """The steps as LangChain messages, the prompt last."""
    messages: list[BaseMessage] = []
    for step in steps:
        match step:
            case User():
                messages.append(HumanMessage(step.text))
            case Text():
                messages.append(AIMessage(step.text))
            case Call():
                call = {"name": step.name, "args": dict(step.arguments), "id": step.call_id, "type": "tool_call"}
                messages.append(AIMessage("", tool_calls=[call]))
            case Result():
                messages.append(ToolMessage(step.text, tool_call_id=step.call_id))
    messages.append(HumanMessage(PROMPT))
    return messages


@pytest.fixture
def chat_model(sim: Simulator, lane: Lane) -> Iterator[BaseChatModel]:
    """LangChain's chat model of ``lane`` on the simulator (its SDK clients closed afterwards)."""
    model: ChatOpenAI | ChatAnthropic
    if lane == "anthropic.messages":
        model = ChatAnthropic(
            model_name="claude-test", base_url=sim.base_url, api_key=KEY, max_retries=0, timeout=None, stop=None
        )
    else:
        responses = lane == "openai.responses"
        model = ChatOpenAI(
            model="gpt-test", base_url=sim.openai_base_url, api_key=KEY, max_retries=0, use_responses_api=responses
        )
    yield model
    if isinstance(model, ChatAnthropic):
        model._client.close()
    else:
        model.root_client.close()


def assert_call(message: BaseMessage) -> None:
    """The reply is an AIMessage carrying the scripted call of the tool."""
    assert isinstance(message, AIMessage)
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [(TOOL, {"path": "b"})]


@pytest.mark.parametrize("broken", BREAKS)
@pytest.mark.parametrize("lane", LANES)
def test_invoke_sends_a_broken_history_valid(
    sim: Simulator, otel: Otel, chat_model: BaseChatModel, lane: Lane, broken: Break
) -> None:
    """``invoke`` with a broken history: the request valid, one span and one count; the AIMessage with its call."""
    sim.enqueue(call_turn())
    assert_call(chat_model.bind_tools([READ]).invoke(history(HISTORIES[broken])))
    assert_traffic(sim, otel, lane=lane, requests=1)


@pytest.mark.parametrize("lane", LANES)
async def test_ainvoke_sends_a_broken_history_valid(
    sim: Simulator, otel: Otel, chat_model: BaseChatModel, lane: Lane
) -> None:
    """``ainvoke`` with a call left without its result: the request valid, one span, one count; the AIMessage back."""
    sim.enqueue(call_turn())
    assert_call(await chat_model.bind_tools([READ]).ainvoke(history(HISTORIES["missing_result"])))
    assert_traffic(sim, otel, lane=lane, requests=1)


@pytest.mark.parametrize("lane", LANES)
def test_stream_sends_a_broken_history_valid(sim: Simulator, otel: Otel, chat_model: BaseChatModel, lane: Lane) -> None:
    """``stream``, a call left without its result: the request valid, one span, one count; chunks add up to the call."""
    sim.enqueue(call_turn())
    streamed = list(chat_model.bind_tools([READ]).stream(history(HISTORIES["missing_result"])))
    chunks = [c for c in streamed if isinstance(c, AIMessageChunk)]
    assert len(chunks) == len(streamed) > 1
    assert_call(add_ai_message_chunks(*chunks))
    assert [r.body.get("stream") for r in sim.requests if isinstance(r.body, dict)] == [True]
    assert_traffic(sim, otel, lane=lane, requests=1)
