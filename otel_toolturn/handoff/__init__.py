"""Handoffs on a shared thread, and ending a turn from a tool: pure operations over any lane's message list.

A handoff tool runs its body on the caller's thread instead of answering its call with a result:
the call is dropped from the assistant message that carried it, the system messages the body
pushes carry its dispatch's scope key and are stripped when it closes, and one user-role message
hands control back. A tool may also end the turn with its value as the answer.

Every operation takes a plain message list of one lane (``lane=``: ``"anthropic.messages"``,
``"openai.chat_completions"``, ``"openai.responses"``) and returns a new list; the caller's list
and its messages are never changed, and kept messages are the same objects. Decisions, applying
them and recording them are separate functions, and warnings are returned, never logged.

- texts: ``too_many_handoffs_text``, ``handoff_not_started_text``, ``handoff_resume_text``,
  ``handoff_stopped_text`` (exact);
- scopes: ``HandoffScopes``, ``handoff_scope_key``, ``tag_scoped``, ``push_scoped``,
  ``scope_of``, ``strip_handoff_system_messages`` (the tag is the library-only ``SCOPE_FIELD``);
- the call: ``drop_handoff_call``, ``answer_handoff_not_started``;
- closing: ``finish_handoff``, ``finish_stopped_handoff``, ``close_handoff``,
  ``handoff_outcome_for``;
- ending the turn: ``answer_value_of``, ``record_turn_mark``, ``decide_end_turn``,
  ``apply_end_turn_decision``, ``end_thread_with_answer``, ``run_end_turn_step``;
- instrumentation: ``handoff_calls`` / ``is_handoff_tool`` (which calls of a response are
  handoffs, and whether the response is refused).

The law never fights a handoff: a thread whose handoff call was dropped is a valid thread, and
``ensure_tool_turn_invariants`` returns it unchanged.
"""

from __future__ import annotations

from otel_toolturn.handoff._close import (
    HANDOFF_OUTCOME_KINDS,
    NO_MARKS,
    TURN_SCOPES,
    DeferredHandBack,
    HandoffClosed,
    HandoffOutcome,
    HandoffOutcomeKind,
    TurnMarks,
    TurnScope,
    close_handoff,
    default_hand_back_text,
    finish_handoff,
    finish_stopped_handoff,
    handoff_outcome_for,
)
from otel_toolturn.handoff._detect import HandoffRound, handoff_calls, is_handoff_tool
from otel_toolturn.handoff._drop import HandoffCall, answer_handoff_not_started, drop_handoff_call
from otel_toolturn.handoff._end_turn import (
    CONTINUE,
    ContinueTurn,
    EndTurn,
    EndTurnApplied,
    EndTurnDecided,
    EndTurnDecision,
    EndTurnStep,
    ResponseFormat,
    RunnerState,
    ToolSuccess,
    TurnEnded,
    TurnMark,
    answer_value_of,
    apply_end_turn_decision,
    decide_end_turn,
    end_thread_with_answer,
    record_turn_mark,
    run_end_turn_step,
)
from otel_toolturn.handoff._scope import (
    SCOPE_FIELD,
    HandoffScopes,
    handoff_scope_key,
    push_scoped,
    scope_of,
    strip_handoff_system_messages,
    tag_scoped,
)
from otel_toolturn.handoff._texts import (
    handoff_not_started_text,
    handoff_resume_text,
    handoff_stopped_text,
    too_many_handoffs_text,
)

__all__ = [
    "CONTINUE",
    "HANDOFF_OUTCOME_KINDS",
    "NO_MARKS",
    "SCOPE_FIELD",
    "TURN_SCOPES",
    "ContinueTurn",
    "DeferredHandBack",
    "EndTurn",
    "EndTurnApplied",
    "EndTurnDecided",
    "EndTurnDecision",
    "EndTurnStep",
    "HandoffCall",
    "HandoffClosed",
    "HandoffOutcome",
    "HandoffOutcomeKind",
    "HandoffRound",
    "HandoffScopes",
    "ResponseFormat",
    "RunnerState",
    "ToolSuccess",
    "TurnEnded",
    "TurnMark",
    "TurnMarks",
    "TurnScope",
    "answer_handoff_not_started",
    "answer_value_of",
    "apply_end_turn_decision",
    "close_handoff",
    "decide_end_turn",
    "default_hand_back_text",
    "drop_handoff_call",
    "end_thread_with_answer",
    "finish_handoff",
    "finish_stopped_handoff",
    "handoff_calls",
    "handoff_not_started_text",
    "handoff_outcome_for",
    "handoff_resume_text",
    "handoff_scope_key",
    "handoff_stopped_text",
    "is_handoff_tool",
    "push_scoped",
    "record_turn_mark",
    "run_end_turn_step",
    "scope_of",
    "strip_handoff_system_messages",
    "tag_scoped",
    "too_many_handoffs_text",
]
