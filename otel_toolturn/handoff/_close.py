"""Closing a handoff: strip its dispatch's system messages, then hand control back.

A body's persona is no use to the caller afterwards and would grow the context on every
dispatch, so closing always strips the messages tagged with the dispatch's scope key first. Then
one user-role message hands control back: a follow-up request needs a user-role message in front
of it.

The rule (``close_handoff``):

- the hand-back text is the tool's custom text (``TurnMarks.message``, set by the body's
  hand-back) when the outcome allows it, else the default for the outcome
  (``handoff_resume_text`` for a success or a rejection, ``handoff_stopped_text`` for a stop);
- a custom text never replaces the default when it is empty (warning: the hand-back cannot be
  empty) or when the outcome is a rejection (warning: the model must see the rejection);
- a success whose body asked to end the turn defers its hand-back: nothing is pushed, and the
  ``DeferredHandBack`` it returns is pushed later by the end-of-turn step only if the turn goes
  on after all (``apply_end_turn_decision``).

Warnings are returned, never logged: the caller decides where they go.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, get_args

from otel_toolturn._vocab import Lane
from otel_toolturn.handoff._scope import strip_handoff_system_messages
from otel_toolturn.handoff._texts import handoff_resume_text, handoff_stopped_text
from otel_toolturn.handoff._wire import as_messages, user_message

TurnScope = Literal["llm", "turn"]
"""How far an end-of-turn reaches: the nearest model call (``"llm"``), or every enclosing one up to the user's turn."""

HandoffOutcomeKind = Literal["success", "stopped", "rejected"]
"""How a handoff's body finished, from the tool loop's point of view."""
HANDOFF_OUTCOME_KINDS: Final[tuple[HandoffOutcomeKind, ...]] = get_args(HandoffOutcomeKind)


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnMarks:
    """What a tool set while it ran: end the turn (and how far), and a custom hand-back text."""

    end_turn: bool = False
    scope: TurnScope = "llm"
    message: str | None = None


NO_MARKS: Final = TurnMarks()
"""A tool that set nothing."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HandoffOutcome:
    """How a body finished: ``text`` is its result (success, rejection) or the reason it stopped."""

    kind: HandoffOutcomeKind
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class DeferredHandBack:
    """A hand-back held until the round's end-of-turn step knows whether the turn ends."""

    scope_key: str
    body: str
    message: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class HandoffClosed:
    """What closing a handoff gives: the new list, the deferred hand-back (if any) and the warnings."""

    messages: list[object]
    deferred: DeferredHandBack | None
    warnings: tuple[str, ...]


def _custom_hand_back(tool_name: str, outcome: HandoffOutcome, marks: TurnMarks) -> tuple[str | None, tuple[str, ...]]:
    """The custom text the outcome allows, and the warning when one was set but cannot be used."""
    if marks.message is None:
        return None, ()
    if not marks.message:
        return None, (f"{tool_name}: hand-back ignored; the hand-back message cannot be empty",)
    if outcome.kind == "rejected":
        return None, (f"{tool_name}: hand-back ignored; the handoff was rejected and the model must see the rejection",)
    return marks.message, ()


def default_hand_back_text(tool_name: str, outcome: HandoffOutcome) -> str:
    """The hand-back for an outcome when no custom text applies."""
    if outcome.kind == "stopped":
        return handoff_stopped_text(tool_name, outcome.text)
    return handoff_resume_text(tool_name, outcome.text)


def close_handoff(
    messages: Sequence[object] | str,
    *,
    scope_key: str,
    tool_name: str,
    outcome: HandoffOutcome,
    marks: TurnMarks,
    lane: Lane,
) -> HandoffClosed:
    """Strip the dispatch's system messages, then push the hand-back or defer it (see the module rule)."""
    stripped = strip_handoff_system_messages(as_messages(messages, lane=lane), scope_key)
    custom, warnings = _custom_hand_back(tool_name, outcome, marks)
    if outcome.kind == "success" and marks.end_turn:
        deferred = DeferredHandBack(scope_key=scope_key, body=outcome.text, message=custom)
        return HandoffClosed(messages=stripped, deferred=deferred, warnings=warnings)
    text = custom if custom is not None else default_hand_back_text(tool_name, outcome)
    return HandoffClosed(messages=[*stripped, user_message(text)], deferred=None, warnings=warnings)
