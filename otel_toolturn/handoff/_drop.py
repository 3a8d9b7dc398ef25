"""Dropping a handoff's own call, and answering it when its body never started.

A handoff runs its body on the caller's thread, so its call is not answered with a result: it is
removed from the message that carried it, the LAST assistant message (Responses: the last run of
model-output items). The round's other calls have run by then, so their results — and any guard
feedback — may already follow that message.

The rule (``drop_handoff_call``):

- the call at ``call.index`` of the carrier's client calls must be exactly ``(name, call_id)``;
  no assistant message, an index out of range or another call there is a ``HandoffError`` naming
  what was expected and what stands there;
- other calls remain ⇒ only this call is removed (Anthropic: its ``tool_use`` block; Chat: its
  entry of ``tool_calls``; Responses: its item, with the ``reasoning`` items directly ahead of it,
  which the API never lets stand apart from the item they precede), so their results still pair;
- it was the only call ⇒ its text stays as a plain assistant message (Anthropic: the non-blank
  ``text`` blocks; Chat: the content), and a message without text is removed — including when
  guard feedback already follows it. Responses needs no rewrite: the call item goes, and the
  assistant message items of the run are already plain;
- nothing is inserted in its place: a model that sees dispatch narration in its history learns to
  write narration instead of calling the tool.

``answer_handoff_not_started`` is the other way out: when the run stopped before the body could
start, the call stays and is answered with ``handoff_not_started_text``, joining the results of its
batch, so the provider never sees it unanswered.

Both return a new list; the caller's list and its messages are never changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from otel_toolturn._errors import HandoffError
from otel_toolturn._vocab import Lane
from otel_toolturn.handoff._texts import handoff_not_started_text
from otel_toolturn.handoff._wire import (
    Carrier,
    WireCall,
    as_messages,
    last_carrier,
    place_result,
    result_for,
    spelling_of,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class HandoffCall:
    """One handoff call: its index among the response's (the carrier's) client calls, its id and tool name."""

    index: int
    call_id: str
    name: str


def _locate(messages: Sequence[object], call: HandoffCall, lane: Lane) -> tuple[Carrier, WireCall]:
    """The carrier and the wire call at ``call.index``, checked to be exactly ``(name, call_id)``."""
    carrier = last_carrier(messages, lane=lane)
    if carrier is None:
        raise HandoffError(
            f"handoff {call.name!r}: expected an assistant message carrying call {call.call_id!r}, found none"
        )
    expected = f"call {call.index} of the last assistant message to be {call.name} ({call.call_id})"
    if not 0 <= call.index < len(carrier.calls):
        raise HandoffError(f"handoff: expected {expected}; it carries {len(carrier.calls)} call(s)")
    found = carrier.calls[call.index]
    if (found.name, found.call_id) != (call.name, call.call_id):
        raise HandoffError(f"handoff: expected {expected}, found {found.name} ({found.call_id})")
    return carrier, found


def drop_handoff_call(messages: Sequence[object] | str, call: HandoffCall, *, lane: Lane) -> list[object]:
    """A new list with the handoff's call removed from the last assistant message (see the module rule)."""
    messages = as_messages(messages, lane=lane)
    carrier, found = _locate(messages, call, lane)
    return spelling_of(lane).without_call(messages, carrier, found)


def answer_handoff_not_started(
    messages: Sequence[object] | str, call: HandoffCall, reason: str, *, lane: Lane
) -> list[object]:
    """A new list where the handoff's call is answered with ``handoff_not_started_text``, after its batch's results.

    The call must stand at ``call.index`` of the last assistant message, exactly as for
    ``drop_handoff_call``; the result is the lane's error result (``is_error`` on Anthropic).
    """
    messages = as_messages(messages, lane=lane)
    carrier, found = _locate(messages, call, lane)
    text = handoff_not_started_text(call.name, reason)
    return place_result(messages, carrier, result_for(found, text, lane=lane), lane=lane)
