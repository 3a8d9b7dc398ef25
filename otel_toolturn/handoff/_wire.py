"""The few shapes a handoff touches, each read through the lane's adapter (``LaneAdapter.handoff``).

- ``as_messages``: the list a lane's operation works on (a string input, where the lane takes one,
  is one user message; anything else that is not a list of messages is a ``ToolTurnInputError``).
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
from typing import Final

from otel_toolturn._errors import HandoffError, ToolTurnInputError
from otel_toolturn._view import Carrier, HandoffWire, WireCall
from otel_toolturn._vocab import LANES, Lane
from otel_toolturn.lanes import adapter_for, listed

__all__ = [
    "HANDOFF_LANES",
    "Carrier",
    "WireCall",
    "as_messages",
    "assistant_message",
    "batch_end",
    "is_plain_assistant",
    "last_carrier",
    "place_result",
    "result_for",
    "spelling_of",
    "user_message",
]

HANDOFF_LANES: Final[tuple[Lane, ...]] = tuple(lane for lane in LANES if adapter_for(lane).handoff is not None)
"""The lanes a handoff runs on: those whose transcript carries system messages (Gemini's system instruction
lives in the request's ``config``, outside ``contents``, so a handoff body cannot push one there)."""


def spelling_of(lane: Lane) -> HandoffWire:
    """The lane's handoff spelling; an unknown lane is an ``UnknownLaneError``, one without any a ``HandoffError``."""
    wire = adapter_for(lane).handoff
    if wire is None:
        raise HandoffError(f"handoffs run on {', '.join(HANDOFF_LANES)}; {lane} keeps its system instruction apart")
    return wire


def as_messages(messages: object, *, lane: Lane) -> Sequence[object]:
    """``messages`` as a list of messages of ``lane``.

    An unknown lane is an ``UnknownLaneError``; a known lane outside ``HANDOFF_LANES`` a ``HandoffError``.
    """
    spelling_of(lane)
    if isinstance(messages, str):
        if listed(messages, lane=lane) is None:  # a lane that takes a string input: one user turn
            return [user_message(messages)]
    elif not isinstance(messages, Sequence):
        raise ToolTurnInputError(f"{lane} expects a list of messages, got {type(messages).__name__!r}")
    return messages


def last_carrier(messages: Sequence[object], *, lane: Lane) -> Carrier | None:
    """The carrier of the round's calls in ``lane``; ``None`` when the list holds no assistant message."""
    return spelling_of(lane).carrier(messages)


def user_message(text: str) -> dict[str, object]:
    """A user-role text message, the same spelling in every lane."""
    return {"role": "user", "content": text}


def assistant_message(text: str) -> dict[str, object]:
    """An assistant text message, the same spelling in every lane."""
    return {"role": "assistant", "content": text}


def is_plain_assistant(message: object, *, lane: Lane) -> bool:
    """An assistant message that carries no tool calls (Responses: an assistant message item)."""
    return spelling_of(lane).is_plain_assistant(message)


def batch_end(messages: Sequence[object], carrier: Carrier, *, lane: Lane) -> int:
    """The index right after the results that directly follow the carrier (where the next result joins)."""
    wire = spelling_of(lane)
    position = carrier.end + 1
    while position < len(messages) and wire.holds_results(messages[position]):
        position += 1
    return position


def result_for(call: WireCall, text: str, *, lane: Lane) -> object:
    """The lane's error result answering ``call`` with ``text`` (Anthropic: the block alone)."""
    return spelling_of(lane).error_result(call, text)


def place_result(messages: Sequence[object], carrier: Carrier, result: object, *, lane: Lane) -> list[object]:
    """A new list with ``result`` joining the results of the carrier's batch, after those already there.

    Anthropic: the block goes into a user message of its own, except when the batch's last results
    message also holds other blocks (guard feedback), where it is placed right after that message's
    leading results, so the results still lead the user turn the API reads.
    """
    return spelling_of(lane).join_batch(messages, carrier, batch_end(messages, carrier, lane=lane), result)
