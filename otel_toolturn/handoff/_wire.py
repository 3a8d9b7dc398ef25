"""Each lane's spelling of the few shapes a handoff touches, and nothing else.

- ``as_messages``: the list a lane's operation works on (a Responses ``input`` string is one user
  message; anything else that is not a list of messages is a ``ToolTurnInputError``).
- ``last_carrier``: the assistant message that carried the round's calls — the LAST assistant
  message (Anthropic, Chat), or the last run of model-output items (Responses: reasoning, call
  items, hosted-tool items and assistant message items standing together) — with its client
  calls in order, each as ``(name, id, where)``.
- ``user_message`` / ``assistant_message``: a plain text message (``{"role", "content": str}``,
  which every lane accepts; in Responses it is the easy input-message form).
- ``is_plain_assistant``: an assistant message carrying no tool calls.
- ``result_for``: a tool result answering one call with a text, and ``batch_end`` / ``place_result``:
  where the results of the carrier's batch end, so an added result joins them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from otel_toolturn._errors import HandoffError, ToolTurnInputError
from otel_toolturn._view import field, replace
from otel_toolturn._vocab import Lane
from otel_toolturn.lanes import adapter_for
from otel_toolturn.lanes.openai_responses import CALL_TYPES, OUTPUT_TYPES, model_made

_OUTPUT_OF: Final = dict(zip(CALL_TYPES, OUTPUT_TYPES, strict=True))


@dataclass(frozen=True, kw_only=True, slots=True)
class WireCall:
    """One client call of the carrier: its name, its id, and where it stands.

    ``position`` is the index in the message list of the message (Anthropic, Chat) or item
    (Responses) holding it; ``slot`` its index in that message's blocks / ``tool_calls``
    (``None`` for a Responses item, which is the call itself); ``kind`` its wire type (Responses:
    ``function_call`` or ``custom_tool_call``, which decides the type of the output answering it).
    """

    name: str
    call_id: str
    position: int
    slot: int | None
    kind: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Carrier:
    """The last assistant message (Responses: run of items ``start..end`` inclusive) and its calls."""

    start: int
    end: int
    calls: tuple[WireCall, ...]


HANDOFF_LANES: Final[tuple[Lane, ...]] = ("anthropic.messages", "openai.chat_completions", "openai.responses")
"""The lanes a handoff runs on: those whose transcript carries system messages (Gemini's system instruction
lives in the request's ``config``, outside ``contents``, so a handoff body cannot push one there)."""


def as_messages(messages: object, *, lane: Lane) -> Sequence[object]:
    """``messages`` as a list of messages of ``lane``.

    An unknown lane is an ``UnknownLaneError``; a known lane outside ``HANDOFF_LANES`` a ``HandoffError``.
    """
    adapter_for(lane)
    if lane not in HANDOFF_LANES:
        raise HandoffError(f"handoffs run on {', '.join(HANDOFF_LANES)}; {lane} keeps its system instruction apart")
    if isinstance(messages, str):
        if lane == "openai.responses":
            return [user_message(messages)]
        raise ToolTurnInputError(f"{lane} expects a list of messages, got a string")
    if not isinstance(messages, Sequence):
        raise ToolTurnInputError(f"{lane} expects a list of messages, got {type(messages).__name__!r}")
    return messages


def _kind(obj: object) -> object:
    return field(obj, "type")


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def last_carrier(messages: Sequence[object], *, lane: Lane) -> Carrier | None:
    """The carrier of the round's calls in ``lane``; ``None`` when the list holds no assistant message."""
    if lane == "openai.responses":
        end = next((i for i in range(len(messages) - 1, -1, -1) if model_made(messages[i])), None)
        if end is None:
            return None
        start = end
        while start > 0 and model_made(messages[start - 1]):
            start -= 1
        calls = tuple(
            WireCall(
                name=_text(field(item, "name")),
                call_id=_text(field(item, "call_id")),
                position=position,
                slot=None,
                kind=str(_kind(item)),
            )
            for position, item in enumerate(messages[start : end + 1], start)
            if _kind(item) in CALL_TYPES
        )
        return Carrier(start=start, end=end, calls=calls)
    at = next((i for i in range(len(messages) - 1, -1, -1) if field(messages[i], "role") == "assistant"), None)
    if at is None:
        return None
    message = messages[at]
    if lane == "anthropic.messages":
        content = field(message, "content")
        blocks: Sequence[object] = content if isinstance(content, (list, tuple)) else ()
        found = tuple(
            WireCall(
                name=_text(field(block, "name")),
                call_id=_text(field(block, "id")),
                position=at,
                slot=slot,
                kind="tool_use",
            )
            for slot, block in enumerate(blocks)
            if _kind(block) == "tool_use"
        )
        return Carrier(start=at, end=at, calls=found)
    tool_calls = field(message, "tool_calls")
    listed: Sequence[object] = tool_calls if isinstance(tool_calls, (list, tuple)) else ()
    found = tuple(
        WireCall(
            name=_text(field(field(call, "function"), "name")),
            call_id=_text(field(call, "id")),
            position=at,
            slot=slot,
            kind="function",
        )
        for slot, call in enumerate(listed)
    )
    return Carrier(start=at, end=at, calls=found)


def user_message(text: str) -> dict[str, object]:
    """A user-role text message, the same spelling in every lane."""
    return {"role": "user", "content": text}


def assistant_message(text: str) -> dict[str, object]:
    """An assistant text message, the same spelling in every lane."""
    return {"role": "assistant", "content": text}


def is_plain_assistant(message: object, *, lane: Lane) -> bool:
    """An assistant message that carries no tool calls (Responses: an assistant message item)."""
    if field(message, "role") != "assistant":
        return False
    if lane == "openai.responses":
        return _kind(message) in (None, "message")
    if lane == "openai.chat_completions":
        return not field(message, "tool_calls")
    content = field(message, "content")
    return not (isinstance(content, (list, tuple)) and any(_kind(block) == "tool_use" for block in content))


def _is_result(message: object, lane: Lane) -> bool:
    """Whether a list entry is a result of a batch: a ``tool`` message, an output item, a results message."""
    if lane == "openai.chat_completions":
        return field(message, "role") == "tool"
    if lane == "openai.responses":
        return _kind(message) in OUTPUT_TYPES
    content = field(message, "content")
    return (
        field(message, "role") == "user"
        and isinstance(content, (list, tuple))
        and bool(content)
        and _kind(content[0]) == "tool_result"
    )


def batch_end(messages: Sequence[object], carrier: Carrier, *, lane: Lane) -> int:
    """The index right after the results that directly follow the carrier (where the next result joins)."""
    position = carrier.end + 1
    while position < len(messages) and _is_result(messages[position], lane):
        position += 1
    return position


def result_for(call: WireCall, text: str, *, lane: Lane) -> object:
    """The lane's error result answering ``call`` with ``text`` (Anthropic: the block alone)."""
    if lane == "anthropic.messages":
        return {"type": "tool_result", "tool_use_id": call.call_id, "content": text, "is_error": True}
    if lane == "openai.chat_completions":
        return {"role": "tool", "tool_call_id": call.call_id, "content": text}
    return {"type": _OUTPUT_OF.get(call.kind, "function_call_output"), "call_id": call.call_id, "output": text}


def place_result(messages: Sequence[object], carrier: Carrier, result: object, *, lane: Lane) -> list[object]:
    """A new list with ``result`` joining the results of the carrier's batch, after those already there.

    Anthropic: the block goes into a user message of its own, except when the batch's last results
    message also holds other blocks (guard feedback), where it is placed right after that message's
    leading results, so the results still lead the user turn the API reads.
    """
    end = batch_end(messages, carrier, lane=lane)
    if lane == "anthropic.messages":
        if end > carrier.end + 1:
            last = messages[end - 1]
            content = field(last, "content")
            blocks = list(content) if isinstance(content, (list, tuple)) else []
            lead = 0
            while lead < len(blocks) and _kind(blocks[lead]) == "tool_result":
                lead += 1
            if lead < len(blocks):
                updated = replace(last, end - 1, content=[*blocks[:lead], result, *blocks[lead:]])
                return [*messages[: end - 1], updated, *messages[end:]]
        result = {"role": "user", "content": [result]}
    return [*messages[:end], result, *messages[end:]]
