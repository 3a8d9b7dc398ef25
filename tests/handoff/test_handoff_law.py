"""The law never fights a handoff: a thread whose handoff call was dropped is valid and left as it is."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_toolturn import Lane, ensure_tool_turn_invariants, validate
from otel_toolturn.handoff import (
    HandoffCall,
    HandoffOutcome,
    HandoffScopes,
    close_handoff,
    drop_handoff_call,
    handoff_scope_key,
    push_scoped,
)
from otel_toolturn.handoff._close import NO_MARKS
from otel_toolturn.handoff._scope import strip_handoff_system_messages
from otel_toolturn.handoff._wire import HANDOFF_LANES
from tests.handoff.threads import ALONE, EXPLORER, persona, round_with_sibling
from tests.transcripts import A, Event, R, U, build, c, t

KEY = handoff_scope_key(HandoffScopes(), "explorer", "call-1")


def _beside_sibling(lane: Lane) -> list[object]:
    return drop_handoff_call(round_with_sibling(lane, feedback=True), EXPLORER, lane=lane)


def _alone_with_text(lane: Lane) -> list[object]:
    return drop_handoff_call(build(lane, [U("hello"), A(t("Asking."), c("call-1", "explorer"))]), ALONE, lane=lane)


def _alone_without_text(lane: Lane) -> list[object]:
    return drop_handoff_call(build(lane, [U("hello"), A(c("call-1", "explorer"))]), ALONE, lane=lane)


def _mid_body(lane: Lane) -> list[object]:
    """The body's own request: its persona pushed, and a tool round of its own answered."""
    thread = push_scoped(_beside_sibling(lane), persona(lane, "explorer persona"), scopes=HandoffScopes().enter(KEY))
    return [*thread, *build(lane, [A(t("Reading."), c("call-3", "read")), R("call-3", "source")])]


def _closed(lane: Lane) -> list[object]:
    thread = [*_mid_body(lane), {"role": "assistant", "content": "the parser drops the id"}]
    outcome = HandoffOutcome(kind="success", text="the parser drops the id")
    return close_handoff(
        thread, scope_key=KEY, tool_name="explorer", outcome=outcome, marks=NO_MARKS, lane=lane
    ).messages


SCENARIOS: dict[str, Callable[[Lane], list[object]]] = {
    "beside-a-sibling": _beside_sibling,
    "alone-with-text": _alone_with_text,
    "alone-without-text": _alone_without_text,
    "mid-body": _mid_body,
    "closed": _closed,
}


@pytest.mark.parametrize("lane", HANDOFF_LANES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_dropped_handoff_thread_validates_and_the_law_returns_it_unchanged(lane: Lane, scenario: str) -> None:
    """A thread whose handoff call was dropped validates clean and the law returns the same object, no repair."""
    thread = SCENARIOS[scenario](lane)
    assert validate(thread, lane=lane) == []
    view = ensure_tool_turn_invariants(thread, lane=lane)
    assert view.messages is thread
    assert view.repairs == ()


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_the_undropped_call_is_what_the_law_would_repair(lane: Lane) -> None:
    """Control: the same round with the handoff's call left in place is rejected, so the checks above can fail."""
    thread = push_scoped(round_with_sibling(lane), persona(lane, "explorer persona"), scopes=HandoffScopes().enter(KEY))
    assert validate(thread, lane=lane) != []
    assert [r.form for r in ensure_tool_turn_invariants(thread, lane=lane).repairs] == ["missing_result"]
    assert strip_handoff_system_messages(thread, KEY) == round_with_sibling(lane)


@st.composite
def rounds(draw: st.DrawFn) -> tuple[list[Event], HandoffCall]:
    """A round: earlier turns, then an assistant message with text or not, siblings around the handoff, results."""
    events: list[Event] = [U("hello")]
    for turn in range(draw(st.integers(0, 2))):
        events += [A(c(f"old-{turn}", "read")), R(f"old-{turn}"), U(f"next {turn}")]
    siblings = draw(st.integers(0, 3))
    at = draw(st.integers(0, siblings))
    calls = [c(f"sib-{i}", f"tool{i}") for i in range(siblings)]
    calls.insert(at, c("handoff-1", "explorer"))
    text = [t("Exploring.")] if draw(st.booleans()) else []
    events.append(A(*text, *calls))
    events += [R(f"sib-{i}") for i in draw(st.permutations(range(siblings)))]
    if draw(st.booleans()):
        events.append(U("guard feedback"))
    return events, HandoffCall(index=at, call_id="handoff-1", name="explorer")


@pytest.mark.parametrize("lane", HANDOFF_LANES)
@settings(max_examples=60, deadline=None)
@given(drawn=rounds())
def test_any_dropped_round_validates_and_the_law_leaves_it(lane: Lane, drawn: tuple[list[Event], HandoffCall]) -> None:
    """Property: any round whose siblings ran, with its handoff call dropped, is valid and left as it is by the law."""
    events, call = drawn
    thread = build(lane, events)
    out = drop_handoff_call(thread, call, lane=lane)
    assert validate(out, lane=lane) == []
    assert ensure_tool_turn_invariants(out, lane=lane).messages is out
    assert len(out) in (len(thread), len(thread) - 1)
