"""Closing a handoff: hand-back, custom text, rejection, empty text, deferral."""

from __future__ import annotations

import pytest

from otel_toolturn import Lane
from otel_toolturn.handoff import (
    DeferredHandBack,
    HandoffClosed,
    HandoffOutcome,
    HandoffScopes,
    TurnMarks,
    close_handoff,
    handoff_scope_key,
    push_scoped,
)
from otel_toolturn.handoff._close import HANDOFF_OUTCOME_KINDS, NO_MARKS
from otel_toolturn.handoff._texts import handoff_resume_text, handoff_stopped_text
from otel_toolturn.handoff._wire import HANDOFF_LANES
from tests.handoff.threads import contents, persona, snapshot

KEY = handoff_scope_key(HandoffScopes(), "explorer", "call-1")
SUCCESS = HandoffOutcome(kind="success", text="done")
STOPPED = HandoffOutcome(kind="stopped", text="boom")
REJECTED = HandoffOutcome(kind="rejected", text="Tool call rejected: no.")


def _close(lane: Lane, outcome: HandoffOutcome, marks: TurnMarks = NO_MARKS) -> tuple[list[object], HandoffClosed]:
    thread = push_scoped(
        [{"role": "user", "content": "hello"}], persona(lane, "persona"), scopes=HandoffScopes().enter(KEY)
    )
    before = snapshot(thread)
    closed = close_handoff(thread, scope_key=KEY, tool_name="explorer", outcome=outcome, marks=marks, lane=lane)
    assert thread == before
    return thread, closed


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_close_strips_then_pushes_the_default_hand_back(lane: Lane) -> None:
    """The persona is stripped, then the default resume text is pushed as a user message."""
    thread, closed = _close(lane, SUCCESS)
    assert closed.deferred is None
    assert closed.warnings == ()
    assert closed.messages[0] is thread[0]
    assert closed.messages[1:] == [{"role": "user", "content": handoff_resume_text("explorer", "done")}]


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_close_after_a_stop_pushes_the_stopped_text(lane: Lane) -> None:
    """A stopped body's default hand-back is the stopped text."""
    _, closed = _close(lane, STOPPED)
    assert contents(closed.messages) == ["hello", handoff_stopped_text("explorer", "boom")]


@pytest.mark.parametrize("lane", HANDOFF_LANES)
@pytest.mark.parametrize("outcome", [SUCCESS, STOPPED])
def test_custom_hand_back_replaces_the_default(lane: Lane, outcome: HandoffOutcome) -> None:
    """A custom text replaces the default for a success and for a stop, without warning."""
    _, closed = _close(lane, outcome, TurnMarks(message="Custom."))
    assert contents(closed.messages) == ["hello", "Custom."]
    assert closed.warnings == ()


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_empty_custom_hand_back_is_ignored_with_a_warning(lane: Lane) -> None:
    """An empty custom text keeps the default, and says the hand-back cannot be empty."""
    _, closed = _close(lane, SUCCESS, TurnMarks(message=""))
    assert contents(closed.messages) == ["hello", handoff_resume_text("explorer", "done")]
    assert closed.warnings == ("explorer: hand-back ignored; the hand-back message cannot be empty",)


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_rejection_keeps_its_text_and_warns_about_a_custom_one(lane: Lane) -> None:
    """For a rejection the model must see the rejection, so the custom text is ignored."""
    _, closed = _close(lane, REJECTED, TurnMarks(message="Custom."))
    assert contents(closed.messages) == ["hello", handoff_resume_text("explorer", "Tool call rejected: no.")]
    assert closed.warnings == (
        "explorer: hand-back ignored; the handoff was rejected and the model must see the rejection",
    )


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_success_that_ends_the_turn_defers_its_hand_back(lane: Lane) -> None:
    """A success asking to end the turn strips, pushes nothing and returns the deferred record."""
    thread, closed = _close(lane, SUCCESS, TurnMarks(end_turn=True, message="Custom."))
    assert closed.messages == [thread[0]]
    assert closed.deferred == DeferredHandBack(scope_key=KEY, body="done", message="Custom.")
    assert closed.warnings == ()


@pytest.mark.parametrize("lane", HANDOFF_LANES)
@pytest.mark.parametrize("outcome", [STOPPED, REJECTED])
def test_only_a_success_defers(lane: Lane, outcome: HandoffOutcome) -> None:
    """A stop or a rejection that asked to end the turn still hands back at once."""
    _, closed = _close(lane, outcome, TurnMarks(end_turn=True))
    assert closed.deferred is None
    assert len(closed.messages) == 2


def test_outcome_kinds_are_the_whole_vocabulary() -> None:
    """The outcome vocabulary's runtime tuple names every kind the close rule handles."""
    assert set(HANDOFF_OUTCOME_KINDS) == {"success", "stopped", "rejected"}
