"""The law copies the stretches of clean turns it leaves alone as the wire items they are.

A broken session keeps its break on every request, and all but a few of its turns stand as they were: the
law writes the units it changes with the lane's ``write`` and the stretches between them, from one clean turn
to another, as the wire items themselves. These tests hold that to the view written unit by unit.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Final, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_toolturn import Dialect, Lane, ensure_tool_turn_invariants
from otel_toolturn._law import _Placed, _untouched, attributed, emit_view, plan_view
from otel_toolturn.lanes import adapter_for
from tests.transcripts import A, Block, Event, R, Rx, U, build, c, gemini, ollama, su, t

_FAULTS: Final = ("none", "none", "none", "missing", "late", "trailing", "orphan", "duplicate", "interrupted")
"""What may break a round: nothing (most rounds), or one fault of a real session."""


@st.composite
def broken_sessions(draw: st.DrawFn) -> list[Event]:
    """Rounds of an agent session (a question, a turn of one to three calls, their results, an answer), some broken.

    A result of a call trimmed away may stand at the head; a round may lose a result, have one recorded
    behind the user's next words, text after its calls, a result no call made, a result twice, or an
    interrupted close.
    """
    events: list[Event] = []
    if draw(st.booleans()):
        events.append(R("call_trimmed", "<trimmed>"))
    for n in range(draw(st.integers(2, 12))):
        events.append(U(f"<q{n}>"))
        calls = [f"call_{n}_{k}" for k in range(draw(st.integers(1, 3)))]
        fault = draw(st.sampled_from(_FAULTS))
        blocks: list[Block] = [t(f"<t{n}>"), *(c(call_id, f"tool_{call_id}") for call_id in calls)]
        if fault == "trailing":
            blocks.append(t(f"<after{n}>"))
        events.append(A(*blocks))
        results: list[Event] = [R(call_id, f"<r_{call_id}>") for call_id in calls]
        if fault == "missing":
            results = results[:-1]
        elif fault == "late":
            results = [results[0], U(f"<hurry{n}>"), *results[1:]]
        elif fault == "orphan":
            results.append(R(f"gone_{n}", f"<gone{n}>"))
        elif fault == "duplicate":
            results.append(R(calls[0], f"<again{n}>"))
        elif fault == "interrupted":
            results[-1] = Rx(calls[-1])
        events.extend(results)
        events.append(A(t(f"<a{n}>")))
    return events


_WRITTEN: Final[dict[str, tuple[Lane, Dialect | None, Callable[[list[Event]], list[object]]]]] = {
    **{lane: (lane, None, partial(build, lane)) for lane in get_args(Lane)},
    "gemini, no ids": ("gemini.generate_content", None, partial(gemini, ids=False)),
    "chat, ollama": ("openai.chat_completions", "ollama", ollama),
}


def _unit_by_unit(messages: list[object], lane: Lane, dialect: Dialect | None) -> tuple[list[object], int]:
    """The view the lane writes unit by unit (``emit_view`` of the whole reading), and how many stretches it has."""
    adapter = adapter_for(lane, dialect)
    reading = attributed(adapter, messages, adapter.read(messages), chained=False)
    plan = plan_view(adapter, reading)
    stretches = len(list(_untouched(reading.view, _Placed(plan))))
    return adapter.write(emit_view(adapter, reading.view, plan, messages)), stretches


@pytest.mark.parametrize("written", list(_WRITTEN))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=broken_sessions())
def test_a_view_with_stretches_copied_is_the_view_written_unit_by_unit(written: str, events: list[Event]) -> None:
    """Every lane: the law's view of a broken session is the one its lane writes unit by unit, item for item."""
    lane, dialect, make = _WRITTEN[written]
    messages = make(events)
    view = ensure_tool_turn_invariants(messages, lane=lane, dialect=dialect)
    if not view.repairs:
        assert view.messages is messages
        return
    whole, _ = _unit_by_unit(messages, lane, dialect)
    assert len(view.messages) == len(whole)
    for copied, written_item in zip(view.messages, whole, strict=True):
        assert copied is written_item or copied == written_item


@pytest.mark.parametrize("written", list(_WRITTEN))
def test_a_session_broken_at_its_head_and_end_is_copied_in_one_stretch_between(written: str) -> None:
    """An orphan at the head and an interrupted last round: every round between is copied, the very objects."""
    lane, dialect, make = _WRITTEN[written]
    events: list[Event] = [R("call_trimmed", "<trimmed>")]
    for n in range(6):
        events += [U(f"<q{n}>"), A(t("look"), c(f"call_{n}", "read")), R(f"call_{n}", f"<r{n}>"), A(t(f"<a{n}>"))]
    events += [U("<last>"), A(t("look"), c("call_last", "read"))]
    messages = make(events)
    view = ensure_tool_turn_invariants(messages, lane=lane, dialect=dialect)
    whole, stretches = _unit_by_unit(messages, lane, dialect)
    assert stretches == 1
    assert [r.form for r in view.repairs] == ["missing_result", "orphan_result"]
    assert view.messages == whole
    kept = [item for item in view.messages if any(item is message for message in messages)]
    assert len(kept) >= 4 * 5  # the rounds between the head and the last one, each of their items itself


def test_a_reply_the_lane_restores_between_clean_turns_is_written_restored() -> None:
    """Anthropic: a reply whose server tool use is open, between clean turns, is written closed, never copied."""
    events: list[Event] = [R("call_trimmed", "<trimmed>")]
    for n in range(4):
        events += [U(f"<q{n}>"), A(t("look"), c(f"call_{n}", "read")), R(f"call_{n}", f"<r{n}>")]
        events.append(A(t(f"<a{n}>"), su(f"srvtoolu_{n}")) if n == 1 else A(t(f"<a{n}>")))
    messages = build("anthropic.messages", events)
    view = ensure_tool_turn_invariants(messages, lane="anthropic.messages")
    whole, stretches = _unit_by_unit(messages, "anthropic.messages", None)
    assert stretches == 2
    assert [(r.form, r.call_kind) for r in view.repairs] == [
        ("orphan_result", "function"),
        ("missing_result", "server_tool"),
    ]
    assert view.messages == whole
    assert view.messages[7] is not messages[8]
