"""The agents of ``bench.stability``: one transcript per wire lane, kept as that SDK's users keep it.

Each agent appends what its user types, what its tools return and what the model replies, and sends
its transcript through one real SDK call after a policy (the transcript as it is, or a peer's repair
of it). It records only results of calls it received, and answers ``None`` for a request the
provider refused with HTTP 400, so the session can skip what follows it.

- ``AnthropicAgent``: ``anthropic`` ``messages.create`` with thinking on (``beta.messages.create``
  with ``drop_block``); a reply is one assistant message of its blocks, signed thinking included;
  results of one batch share one user message.
- ``LiteLLMAgent``: ``litellm.completion`` on the Anthropic route over an OpenAI-format transcript:
  the returned message object as it is (its ``thinking_blocks`` included), one ``tool`` message per
  result.
- ``ResponsesAgent``: ``openai`` ``responses.create``; the response's ``output`` items are appended
  as returned, each result as a ``function_call_output`` item.
- ``GeminiAgent``: ``google-genai`` ``models.generate_content``; the candidate's content is appended
  as returned (its signed first call included), results of one batch share one user content of
  ``function_response`` parts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import anthropic
import openai
from anthropic.types import ThinkingConfigEnabledParam, ToolParam
from anthropic.types.beta import BetaThinkingConfigEnabledParam, BetaToolParam
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

ANTHROPIC_MODEL: Final = "claude-sonnet-4-5"
RESPONSES_MODEL: Final = "gpt-5"
GEMINI_MODEL: Final = "gemini-3-pro-preview"
SYSTEM: Final = (
    "You are a coding agent working in a Python repository. Read before you change anything, run the "
    "tests after every change, and answer with what you found and what you did."
)
THINK: Final[ThinkingConfigEnabledParam] = {"type": "enabled", "budget_tokens": 1024}
DROP: Final[BetaThinkingConfigEnabledParam] = {
    "type": "enabled",
    "budget_tokens": 1024,
    "block_binding": {"prefix_mismatch_behavior": "drop_block"},
}
BETA: Final = "thinking-binding-controls-2026-08-01"
TOOL_NAMES: Final = ("read_file", "run_tests", "grep")
ANTHROPIC_TOOLS: Final[list[ToolParam]] = [
    {"name": name, "description": f"The {name} tool.", "input_schema": {"type": "object"}} for name in TOOL_NAMES
]
BETA_TOOLS: Final[list[BetaToolParam]] = [
    {"name": name, "description": f"The {name} tool.", "input_schema": {"type": "object"}} for name in TOOL_NAMES
]
CHAT_TOOLS: Final[list[dict[str, Any]]] = [
    {
        "type": "function",
        "function": {"name": name, "description": f"The {name} tool.", "parameters": {"type": "object"}},
    }
    for name in TOOL_NAMES
]
RESPONSES_TOOLS: Final[list[Any]] = [
    {"type": "function", "name": name, "description": f"The {name} tool.", "parameters": {"type": "object"}}
    for name in TOOL_NAMES
]
GEMINI_CONFIG: Final = genai_types.GenerateContentConfig(
    system_instruction=SYSTEM,
    tools=[
        genai_types.Tool(
            function_declarations=[
                genai_types.FunctionDeclaration(
                    name=name, description=f"The {name} tool.", parameters_json_schema={"type": "object"}
                )
                for name in TOOL_NAMES
            ]
        )
    ],
)
Policy = Callable[[list[Any]], list[Any]]
"""What the agent hands the SDK, from its transcript."""


class Agent(Protocol):
    """An agent's transcript and its one way to send it."""

    recorded: list[str]

    def say(self, text: str) -> None:
        """Append the user's text."""

    def record(self, call_id: str, content: str) -> None:
        """Append a tool's result, when the agent received the call; else nothing."""

    def send(self) -> object | None:
        """Send the transcript; the reply, or ``None`` when the provider refused it (HTTP 400)."""

    def keep(self, reply: object) -> None:
        """Append ``reply`` to the transcript as returned."""


@dataclass(kw_only=True, slots=True)
class AnthropicAgent:
    """An Anthropic-format transcript sent through the anthropic SDK after ``policy``."""

    client: anthropic.Anthropic
    policy: Policy
    drop: bool
    transcript: list[Any] = field(default_factory=list)
    calls: set[str] = field(default_factory=set)
    recorded: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        """Append the user's text as its own message."""
        self.transcript.append({"role": "user", "content": text})

    def record(self, call_id: str, content: str) -> None:
        """Add the result to the results message the transcript ends with, or open a new one."""
        if call_id not in self.calls:
            return
        self.recorded.append(content)
        block = {"type": "tool_result", "tool_use_id": call_id, "content": content}
        last = self.transcript[-1]
        blocks = last["content"]
        if last["role"] == "user" and isinstance(blocks, list) and all(b["type"] == "tool_result" for b in blocks):
            self.transcript[-1] = {**last, "content": [*blocks, block]}
        else:
            self.transcript.append({"role": "user", "content": [block]})

    def send(self) -> object | None:
        """One ``messages.create`` (``beta.messages.create`` with ``drop_block``) over the policy's request."""
        request = self.policy(self.transcript)
        try:
            if self.drop:
                beta = self.client.beta.messages.create(
                    model=ANTHROPIC_MODEL,
                    max_tokens=2048,
                    system=SYSTEM,
                    tools=BETA_TOOLS,
                    messages=request,
                    thinking=DROP,
                    betas=[BETA],
                )
                return [b.model_dump(mode="json", exclude_none=True) for b in beta.content]
            reply = self.client.messages.create(
                model=ANTHROPIC_MODEL,
                max_tokens=2048,
                system=SYSTEM,
                tools=ANTHROPIC_TOOLS,
                messages=request,
                thinking=THINK,
            )
        except anthropic.BadRequestError:
            return None
        return [b.model_dump(mode="json", exclude_none=True) for b in reply.content]

    def keep(self, reply: object) -> None:
        """Append the reply's blocks as one assistant message; remember its calls."""
        if not isinstance(reply, list):
            raise TypeError(f"expected the reply's blocks as a list, got {type(reply).__name__}")
        self.transcript.append({"role": "assistant", "content": reply})
        self.calls.update(str(b["id"]) for b in reply if b.get("type") == "tool_use")


@dataclass(kw_only=True, slots=True)
class LiteLLMAgent:
    """An OpenAI-format transcript sent through ``litellm.completion`` with ``modify_params=True``."""

    base_url: str
    drop: bool
    transcript: list[Any] = field(default_factory=lambda: [{"role": "system", "content": SYSTEM}])
    calls: set[str] = field(default_factory=set)
    recorded: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        """Append a user message."""
        self.transcript.append({"role": "user", "content": text})

    def record(self, call_id: str, content: str) -> None:
        """Append a ``tool`` message, when the agent received the call."""
        if call_id not in self.calls:
            return
        self.recorded.append(content)
        self.transcript.append({"role": "tool", "tool_call_id": call_id, "content": content})

    def send(self) -> object | None:
        """One ``litellm.completion`` on the simulator; ``None`` on LiteLLM's ``BadRequestError``."""
        import litellm  # noqa: PLC0415 - optional, and slow to import

        extra = {"extra_headers": {"anthropic-beta": BETA}} if self.drop else {}
        try:
            response = litellm.completion(
                model=f"anthropic/{ANTHROPIC_MODEL}",
                api_base=self.base_url,
                api_key="bench-key-not-used",
                messages=self.transcript,
                tools=CHAT_TOOLS,
                thinking=DROP if self.drop else THINK,
                max_tokens=2048,
                num_retries=0,
                **extra,
            )
        except litellm.exceptions.BadRequestError:
            return None
        message: object = response.choices[0].message
        return message

    def keep(self, reply: object) -> None:
        """Append the returned message object; remember its calls."""
        self.transcript.append(reply)
        self.calls.update(str(c.id) for c in getattr(reply, "tool_calls", None) or ())


@dataclass(kw_only=True, slots=True)
class ResponsesAgent:
    """A Responses ``input`` list sent through the openai SDK's ``responses.create`` after ``policy``."""

    client: openai.OpenAI
    policy: Policy
    transcript: list[Any] = field(default_factory=list)
    calls: set[str] = field(default_factory=set)
    recorded: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        """Append a user message item."""
        self.transcript.append({"role": "user", "content": text})

    def record(self, call_id: str, content: str) -> None:
        """Append a ``function_call_output`` item, when the agent received the call."""
        if call_id not in self.calls:
            return
        self.recorded.append(content)
        self.transcript.append({"type": "function_call_output", "call_id": call_id, "output": content})

    def send(self) -> object | None:
        """One ``responses.create`` over the policy's request: the response's ``output`` items."""
        try:
            response = self.client.responses.create(
                model=RESPONSES_MODEL, instructions=SYSTEM, tools=RESPONSES_TOOLS, input=self.policy(self.transcript)
            )
        except openai.BadRequestError:
            return None
        return list(response.output)

    def keep(self, reply: object) -> None:
        """Append the output items as returned; remember their calls."""
        if not isinstance(reply, list):
            raise TypeError(f"expected the response's output items as a list, got {type(reply).__name__}")
        self.transcript.extend(reply)
        self.calls.update(str(item.call_id) for item in reply if item.type == "function_call")


@dataclass(kw_only=True, slots=True)
class GeminiAgent:
    """A Gemini ``contents`` list sent through google-genai's ``models.generate_content`` after ``policy``."""

    client: genai.Client
    policy: Policy
    transcript: list[Any] = field(default_factory=list)
    calls: dict[str, str] = field(default_factory=dict)
    recorded: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        """Append a user content of one text part."""
        self.transcript.append(genai_types.Content(role="user", parts=[genai_types.Part(text=text)]))

    def record(self, call_id: str, content: str) -> None:
        """Add a ``function_response`` part to the responses content the transcript ends with, or open a new one."""
        name = self.calls.get(call_id)
        if name is None:
            return
        self.recorded.append(content)
        part = genai_types.Part(
            function_response=genai_types.FunctionResponse(id=call_id, name=name, response={"output": content})
        )
        last = self.transcript[-1]
        parts = last.parts or []
        if last.role == "user" and parts and all(p.function_response is not None for p in parts):
            self.transcript[-1] = genai_types.Content(role="user", parts=[*parts, part])
        else:
            self.transcript.append(genai_types.Content(role="user", parts=[part]))

    def send(self) -> object | None:
        """One ``models.generate_content`` over the policy's request: the candidate's content."""
        try:
            response = self.client.models.generate_content(
                model=GEMINI_MODEL, contents=self.policy(self.transcript), config=GEMINI_CONFIG
            )
        except genai_errors.ClientError as error:
            if error.code == 400:
                return None
            raise
        if not response.candidates or response.candidates[0].content is None:
            raise ValueError(f"expected a candidate with content, got {response!r}")
        return response.candidates[0].content

    def keep(self, reply: object) -> None:
        """Append the candidate's content as returned; remember its calls by id."""
        if not isinstance(reply, genai_types.Content):
            raise TypeError(f"expected the candidate's content, got {type(reply).__name__}")
        self.transcript.append(reply)
        for part in reply.parts or ():
            call = part.function_call
            if call is not None and call.id is not None and call.name is not None:
                self.calls[call.id] = call.name
