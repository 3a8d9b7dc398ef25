"""What the simulated model answers: scripted turns, misbehaviours, and the default turn.

A ``ScriptedTurn`` is one reply of the simulated model, independent of the wire lane: some text,
some tool calls, the model name it reports, and the misbehaviours it commits. The lane renderers
(``_anthropic``, ``_chat``, ``_responses``, ``_gemini``, ``_bedrock``) turn it into each provider's wire shape.

When no scripted turn is queued, ``default_turn`` decides from the request itself:

- the conversation's last item is a tool result → a short text answer;
- otherwise, when the request declares tools → one call to the first declared tool, arguments ``{}``;
- otherwise → a short text answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

from otel_toolturn._vocab import Lane

Misbehaviour = Literal["cut_arguments", "no_finish", "frames_after_end", "bad_frame", "malformed_call"]
"""How a scripted turn breaks its own reply.

- ``cut_arguments``: the first call's arguments stop half-way and the reply ends there (streamed:
  the connection closes mid-arguments; plain JSON: the argument text is cut — Anthropic, whose
  arguments are an object, leaves the call out, and so does Gemini, streamed or not — and the stop
  reason says the token cap cut it).
- ``no_finish``: the stream ends without its terminal frames (no stop reason, no final event).
- ``frames_after_end``: after the terminal frames come a content frame and a second ending.
- ``bad_frame``: a ``data:`` line that is not JSON, right after the first frame.

- ``malformed_call``: Gemini's ``MALFORMED_FUNCTION_CALL``: the provider could not parse the
  calls the model wrote, and the reply carries no content, only that finish reason and a
  ``finishMessage`` quoting them (plain and streamed). The other lanes have no such reply and ignore it.

``no_finish``, ``frames_after_end`` and ``bad_frame`` describe stream frames; a plain JSON reply
has no frames and ignores them.
"""
MISBEHAVIOURS: Final[tuple[Misbehaviour, ...]] = get_args(Misbehaviour)

DEFAULT_ANSWER: Final = "Done: every tool result is in."
"""The default text answer (after tool results, or when the request declares no tools)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedCall:
    """One tool call of a scripted turn; ``call_id=None`` lets the simulator number it."""

    name: str
    arguments: Mapping[str, object] = field(default_factory=dict)
    call_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedTurn:
    """One reply of the simulated model.

    ``model=None`` echoes the requested model; any other name is a model substitution.
    ``server_calls``: tools the provider's server runs (Anthropic: ``server_tool_use`` blocks, e.g.
    ``web_search``), left open by a ``pause_turn`` reply for the caller to send back; the other
    lanes have no such calls and ignore them.
    """

    text: str = ""
    calls: tuple[ScriptedCall, ...] = ()
    server_calls: tuple[ScriptedCall, ...] = ()
    model: str | None = None
    misbehaviours: tuple[Misbehaviour, ...] = ()

    def __post_init__(self) -> None:
        unknown = [m for m in self.misbehaviours if m not in MISBEHAVIOURS]
        if unknown:
            raise ValueError(f"unknown misbehaviour(s) {unknown!r}; expected some of {MISBEHAVIOURS!r}")
        if not self.text and not self.calls and not self.server_calls:
            raise ValueError("a scripted turn needs text, calls or both; got neither")
        for needs_calls in ("cut_arguments", "malformed_call"):
            if needs_calls in self.misbehaviours and not self.calls:
                raise ValueError(f"the misbehaviour {needs_calls!r} needs a call to break; the turn has none")


def default_turn(body: Mapping[str, object], *, lane: Lane) -> ScriptedTurn:
    """Decide the reply when nothing is scripted: a call after user text, an answer after results."""
    if _ends_with_tool_result(body, lane=lane):
        return ScriptedTurn(text=DEFAULT_ANSWER)
    tool = _first_tool_name(body, lane=lane)
    if tool is None:
        return ScriptedTurn(text=DEFAULT_ANSWER)
    return ScriptedTurn(calls=(ScriptedCall(name=tool),))


def _ends_with_tool_result(body: Mapping[str, object], *, lane: Lane) -> bool:
    """Whether the conversation's last item carries a tool result, in the lane's spelling."""
    field = {"openai.responses": "input", "gemini.generate_content": "contents"}.get(lane, "messages")
    items = body.get(field)
    if not isinstance(items, list) or not items or not isinstance(items[-1], Mapping):
        return False
    last = items[-1]
    if lane == "gemini.generate_content":
        parts = last.get("parts")
        return isinstance(parts, list) and any(
            isinstance(p, Mapping) and ("functionResponse" in p or "function_response" in p) for p in parts
        )
    if lane == "anthropic.messages":
        content = last.get("content")
        return isinstance(content, list) and any(
            isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content
        )
    if lane == "bedrock.converse":
        content = last.get("content")
        return isinstance(content, list) and any(isinstance(b, Mapping) and "toolResult" in b for b in content)
    if lane == "openai.chat_completions":
        return last.get("role") == "tool"
    return last.get("type") in ("function_call_output", "custom_tool_call_output")


def _first_tool_name(body: Mapping[str, object], *, lane: Lane) -> str | None:
    """Find the name of the first function tool the request declares (``None``: none declared)."""
    tools = body.get("tools")
    if lane == "bedrock.converse":
        tool_config = body.get("toolConfig")
        tools = tool_config.get("tools") if isinstance(tool_config, Mapping) else None
    if not isinstance(tools, list):
        return None
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        if lane == "gemini.generate_content":
            declared = tool.get("functionDeclarations", tool.get("function_declarations"))
            specs = [d for d in declared if isinstance(d, Mapping)] if isinstance(declared, list) else []
            if specs and isinstance(specs[0].get("name"), str):
                return str(specs[0]["name"])
            continue
        spec = {"openai.chat_completions": tool.get("function"), "bedrock.converse": tool.get("toolSpec")}.get(
            lane, tool
        )
        if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
            return str(spec["name"])
    return None


def token_estimate(value: object) -> int:
    """Estimate a token count deterministically: about four characters of JSON per token."""
    return max(1, len(json.dumps(value, default=str)) // 4)
