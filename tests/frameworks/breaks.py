"""Broken session histories, framework-neutral, and the scripted turns the simulated model answers with.

Each break is a history as a real session leaves it, written as neutral steps that every framework
module turns into its own message types; the framework then adds its own prompt (``PROMPT``):

- ``missing_result``: a call, then the user moves on ("continue") before its result is recorded;
- ``late_result``: a call, the user's "continue" answered without it, then the call's result;
- ``orphan_result``: a result whose call is not in the history.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

from otel_toolturn import Lane
from otel_toolturn.simulator import ScriptedCall, ScriptedTurn


@dataclass(frozen=True, kw_only=True, slots=True)
class User:
    """A user message."""

    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Text:
    """An assistant message with text only."""

    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Call:
    """An assistant message with one tool call."""

    call_id: str
    name: str
    arguments: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class Result:
    """A tool result."""

    call_id: str
    name: str
    text: str


Step = User | Text | Call | Result
Break = Literal["missing_result", "late_result", "orphan_result"]
BREAKS: Final[tuple[Break, ...]] = get_args(Break)
LANES: Final[tuple[Lane, ...]] = ("anthropic.messages", "openai.chat_completions", "openai.responses")
OPENAI_LANES: Final[tuple[Lane, ...]] = ("openai.chat_completions", "openai.responses")

TOOL: Final = "read"
PROMPT: Final = "What now?"
ANSWER: Final = "Both files are read."

_CALL: Final = Call(call_id="call_a", name=TOOL, arguments={"path": "a"})
HISTORIES: Final[Mapping[Break, tuple[Step, ...]]] = {
    "missing_result": (User(text="Read a."), _CALL, User(text="continue")),
    "late_result": (
        User(text="Read a."),
        _CALL,
        User(text="continue"),
        Text(text="Carrying on without a."),
        Result(call_id="call_a", name=TOOL, text="contents of a"),
    ),
    "orphan_result": (
        User(text="Read a."),
        Text(text="Reading a."),
        Result(call_id="call_gone", name=TOOL, text="contents of a"),
    ),
}
"""Each break's history, ahead of the framework's own prompt."""


def read(path: str) -> str:
    """Read the file at ``path`` (the agent frameworks' one tool)."""
    return f"contents of {path}"


def agent_turns() -> tuple[ScriptedTurn, ScriptedTurn]:
    """An agent run's two replies: a call of the tool, then the answer (two requests)."""
    return (ScriptedTurn(calls=(ScriptedCall(name=TOOL, arguments={"path": "b"}),)), ScriptedTurn(text=ANSWER))


def call_turn() -> ScriptedTurn:
    """A single reply that calls the tool (one request; for a chat model called once)."""
    return ScriptedTurn(calls=(ScriptedCall(name=TOOL, arguments={"path": "b"}, call_id="call_b"),))
