"""Handoffs on a shared thread, and ending a turn from a tool: pure operations over any lane's message list.

A handoff tool runs its body on the caller's thread instead of answering its call with a result:
the call is dropped from the assistant message that carried it, the system messages the body
pushes carry its dispatch's scope key and are stripped when it closes, and one user-role message
hands control back. A tool may also end the turn with its value as the answer.

Every operation takes a plain message list of one lane (``lane=``, one of ``otel_toolturn.LANES``)
and returns a new list; the caller's list and its messages are never changed, and kept messages
are the same objects. Warnings are returned, never logged.

The operations, in the order a tool loop calls them:

- ``handoff_calls``: which calls of a response are handoffs (``HandoffRound``: each a
  ``HandoffCall``; ``refused`` when there are several, with the text answering each);
- ``drop_handoff_call``: remove the handoff's own call instead of answering it, or
  ``answer_handoff_not_started`` when its body never started;
- ``handoff_scope_key`` and ``push_scoped``: tag the system messages the body pushes with its
  dispatch (``HandoffScopes`` are the dispatches open);
- ``close_handoff``: strip the dispatch's messages and hand back (``HandoffOutcome``,
  ``TurnMarks`` in; ``HandoffClosed`` out, with a ``DeferredHandBack`` when the body asked to end
  the turn);
- ``record_turn_mark`` and ``run_end_turn_step``: end the turn with a tool's value, from the
  marks recorded in ``RunnerState`` (``EndTurnStep`` out, with the round's ``TurnEnded``).

The law never fights a handoff: a thread whose handoff call was dropped is a valid thread, and
``ensure_tool_turn_invariants`` returns it unchanged.
"""

from __future__ import annotations

from otel_toolturn.handoff._close import (
    DeferredHandBack,
    HandoffClosed,
    HandoffOutcome,
    HandoffOutcomeKind,
    TurnMarks,
    TurnScope,
    close_handoff,
)
from otel_toolturn.handoff._detect import HandoffRound, handoff_calls, matching_pattern
from otel_toolturn.handoff._drop import HandoffCall, answer_handoff_not_started, drop_handoff_call
from otel_toolturn.handoff._end_turn import (
    EndTurnStep,
    ResponseFormat,
    RunnerState,
    TurnEnded,
    record_turn_mark,
    run_end_turn_step,
)
from otel_toolturn.handoff._scope import HandoffScopes, handoff_scope_key, push_scoped

__all__ = [
    "DeferredHandBack",
    "EndTurnStep",
    "HandoffCall",
    "HandoffClosed",
    "HandoffOutcome",
    "HandoffOutcomeKind",
    "HandoffRound",
    "HandoffScopes",
    "ResponseFormat",
    "RunnerState",
    "TurnEnded",
    "TurnMarks",
    "TurnScope",
    "answer_handoff_not_started",
    "close_handoff",
    "drop_handoff_call",
    "handoff_calls",
    "handoff_scope_key",
    "matching_pattern",
    "push_scoped",
    "record_turn_mark",
    "run_end_turn_step",
]
