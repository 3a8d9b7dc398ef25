"""Property tests of the law over generated broken transcripts, per lane.

Transcripts are drawn from a small id pool, so interruptions, late and duplicate results, repeated
calls, reused ids, orphans and interrupted closes all occur; every text and result payload is
unique, so what survives can be checked id by id.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_toolturn import LANES, Lane, ToolTurnView, ensure_tool_turn_invariants, validate
from otel_toolturn._law import ToolTurnRepair, _repair, _restore, _restore_quick
from otel_toolturn.lanes import adapter_for
from tests.transcripts import A, Block, CallBlock, Event, R, Rx, Text, Thinking, U, build

IDS = ("c0", "c1", "c2", "c3")


@st.composite
def transcripts(draw: st.DrawFn, lane: Lane, ids: tuple[str, ...] = IDS, tag: str = "") -> list[Event]:
    """A transcript of 0 to 14 events with unique payloads (``tag`` in each) and ids from a small pool."""
    events: list[Event] = []
    counter = (f"{tag}{n}" for n in range(10_000))
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(("U", "A", "A", "R", "R", "Rx")))
        if kind == "U":
            events.append(U(f"<u{next(counter)}>"))
        elif kind == "R":
            events.append(R(draw(st.sampled_from(ids)), f"<r{next(counter)}>", draw(st.booleans())))
        elif kind == "Rx":
            events.append(Rx(draw(st.sampled_from(ids))))
        else:
            blocks: list[Block] = []
            for _ in range(draw(st.integers(1, 4))):
                block = draw(st.sampled_from(("t", "c", "c", "th")))
                n = next(counter)
                if block == "t":
                    blocks.append(Text(f"<a{n}>"))
                elif block == "th":
                    if lane == "openai.chat_completions":
                        blocks.append(Text(f"<a{n}>"))  # Chat carries no reasoning blocks
                    elif lane == "openai.responses":
                        blocks.append(Thinking(f"<th{n}>"))
                        blocks.append(Text(f"<a{n}>"))  # a reasoning item always has its following item
                    else:
                        blocks.append(Thinking(f"<th{n}>"))
                else:
                    blocks.append(CallBlock(draw(st.sampled_from(ids)), f"tool{n}"))
            events.append(A(*blocks))
    return events


def _payloads(events: list[Event]) -> tuple[list[str], list[tuple[str, str]], list[tuple[str, str]]]:
    texts: list[str] = []
    results: list[tuple[str, str]] = []
    calls: list[tuple[str, str]] = []
    for event in events:
        if isinstance(event, U):
            texts.append(event.text)
        elif isinstance(event, R):
            results.append((event.call_id, event.output))
        elif isinstance(event, A):
            for block in event.blocks:
                if isinstance(block, CallBlock):
                    calls.append((block.call_id, block.name))
                else:
                    texts.append(block.text)
    return texts, results, calls


def _check(lane: Lane, events: list[Event], *, merge_user: bool = False) -> None:
    given_list = build(lane, events, merge_user=merge_user)
    view = ensure_tool_turn_invariants(given_list, lane=lane)

    assert validate(view.messages, lane=lane) == [], "the view validates for its lane"

    again = ensure_tool_turn_invariants(view.messages, lane=lane)
    assert again.repairs == (), "a second pass restores nothing"
    assert again.messages is view.messages, "and returns the same object"

    assert ensure_tool_turn_invariants(build(lane, events, merge_user=merge_user), lane=lane) == view, "deterministic"

    if not view.repairs:
        assert view.messages is given_list

    wire = json.dumps(view.messages)
    texts, results, calls = _payloads(events)
    orphaned = {i for r in view.repairs if r.form == "orphan_result" for i in r.tool_call_ids}
    duplicated = {i for r in view.repairs if r.form == "duplicate_call" for i in r.tool_call_ids}
    for text in texts:
        assert text in wire, f"text {text} survives"
    for call_id, payload in results:
        assert payload in wire or call_id in orphaned, f"result {payload} of {call_id} survives or is a reported orphan"
    for call_id, name in calls:
        assert name in wire or call_id in duplicated, f"call {name} ({call_id}) survives or is a reported duplicate"
    assert view.lossy == bool(orphaned or duplicated)


_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(transcripts("anthropic.messages"))
def test_anthropic_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Anthropic: the view validates, a second pass is a no-op, and nothing is lost unreported."""
    _check("anthropic.messages", events)


@_SETTINGS
@given(transcripts("anthropic.messages"))
def test_anthropic_with_results_and_text_sharing_user_messages(events: list[Event]) -> None:
    """Anthropic, results and user text in shared messages: the same properties hold."""
    _check("anthropic.messages", events, merge_user=True)


@_SETTINGS
@given(transcripts("openai.chat_completions"))
def test_chat_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Chat Completions: the view validates, a second pass is a no-op, and nothing is lost unreported."""
    _check("openai.chat_completions", events)


@_SETTINGS
@given(transcripts("openai.responses"))
def test_responses_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Responses: the view validates, a second pass is a no-op, and nothing is lost unreported."""
    _check("openai.responses", events)


@st.composite
def sessions(draw: st.DrawFn, lane: Lane) -> list[Event]:
    """A longer session: clean rounds with fresh ids between broken stretches, ids rarely shared between stretches."""
    events: list[Event] = []
    for k in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            calls = [CallBlock(f"k{k}_{j}", f"tool_k{k}_{j}") for j in range(draw(st.integers(1, 2)))]
            results = [R(call.call_id, f"<o{k}_{call.call_id}>") for call in calls]
            events += [U(f"<q{k}>"), A(Text(f"<c{k}>"), *calls), *results]
        else:
            events += draw(transcripts(lane, ids=(f"b{k}_0", f"b{k}_1", "shared"), tag=f"{k}_"))
    return events


def _whole_list_reading(lane: Lane, messages: list[object], *, chained: bool = False) -> ToolTurnView:
    return _restore(adapter_for(lane), messages, [(0, len(messages))], None, chained=chained)


@st.composite
def _cases(draw: st.DrawFn) -> tuple[Lane, list[Event], bool]:
    lane = draw(st.sampled_from(LANES))
    return lane, draw(sessions(lane)), lane == "openai.responses" and draw(st.booleans())


@_SETTINGS
@given(_cases())
def test_reading_only_the_dirty_segments_gives_the_whole_list_reading(case: tuple[Lane, list[Event], bool]) -> None:
    """The law reading only the segments its survey marks gives exactly what reading the whole list gives."""
    lane, events, chained = case
    messages = build(lane, events)
    view = ensure_tool_turn_invariants(messages, lane=lane, chained=chained)
    whole = _whole_list_reading(lane, messages, chained=chained)
    assert view.repairs == whole.repairs
    assert view.messages == whole.messages
    if not chained:
        _check(lane, events)


@pytest.mark.parametrize("lane", LANES)
def test_two_faults_far_apart_are_read_as_two_spans(lane: Lane) -> None:
    """A missing result early and a late result near the end: two spans are read, the rest carried as it stands."""
    head: list[Event] = [U("start"), A(CallBlock("gone")), U("go on")]
    clean: list[Event] = [A(Text("a"), CallBlock("ok1")), R("ok1"), A(Text("done")), U("q")]
    messages = build(lane, [*head, *clean, A(CallBlock("late")), U("wait"), R("late")])
    survey = adapter_for(lane).survey(messages)
    assert survey is not None
    assert len(survey.spans(len(messages))) == 2
    view = ensure_tool_turn_invariants(messages, lane=lane)
    assert [r.form for r in view.repairs] == ["missing_result", "late_result"]
    assert view == _whole_list_reading(lane, messages)
    first = len(build(lane, head))
    stretch = messages[first : first + len(build(lane, clean))]
    at = next(i for i, m in enumerate(view.messages) if m is stretch[0])
    assert all(a is b for a, b in zip(view.messages[at : at + len(stretch)], stretch, strict=True)), "carried as is"


_SCRIPT = """
import json, sys
from otel_toolturn import ensure_tool_turn_invariants
from tests.transcripts import A, R, Rx, U, build, c, t
events = [R("c9"), U("q"), A(t("a"), c("c1"), c("c2"), c("c3"), c("c1"), t("b")), R("c3"), U("wait"),
          R("c2", "x"), R("c2", "y"), Rx("c1"), A(c("c3")), U("more")]
out = {}
for lane in ("anthropic.messages", "openai.chat_completions", "openai.responses"):
    view = ensure_tool_turn_invariants(build(lane, events), lane=lane)
    out[lane] = [view.messages, [[r.form, list(r.tool_call_ids), r.before_run] for r in view.repairs]]
sys.stdout.write(json.dumps(out))
"""


def test_output_is_identical_across_processes_and_hash_seeds() -> None:
    """The same input gives the same bytes in two processes with different PYTHONHASHSEED values."""
    root = Path(__file__).resolve().parents[1]
    outputs = []
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, cwd=root, check=True
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["anthropic.messages"][1]


@pytest.mark.parametrize("lane", LANES)
def test_typed_sdk_objects_pass_through_and_are_copied_not_mutated(lane: Lane) -> None:
    """Pydantic items from an earlier response are read like dicts; repaired ones are copies."""
    from pydantic import BaseModel, ConfigDict  # noqa: PLC0415 - only this test needs pydantic

    class Item(BaseModel):
        model_config = ConfigDict(extra="allow", frozen=True)

    events: list[Event] = [U("q"), A(CallBlock("c1"), CallBlock("c1")), R("c1")]
    wire = [Item(**item) if isinstance(item, dict) else item for item in build(lane, events)]
    view = ensure_tool_turn_invariants(wire, lane=lane)
    assert [r.form for r in view.repairs] == ["duplicate_call"]
    assert isinstance(view.messages[1], Item)
    assert view.messages[1] is not wire[1] or lane == "openai.responses"


@st.composite
def plain_sessions(draw: st.DrawFn, lane: Lane) -> list[Event]:
    """Rounds with fresh ids broken the common ways: results missing, late behind another message, text after a call."""
    events: list[Event] = []
    if draw(st.booleans()):
        events.append(R("trimmed", "<orphan>"))
    for k in range(draw(st.integers(1, 6))):
        events.append(U(f"<q{k}>"))
        calls = [CallBlock(f"k{k}_{j}", f"tool_k{k}_{j}") for j in range(draw(st.integers(1, 3)))]
        blocks: list[Block] = [Text(f"<c{k}>")]
        if lane != "openai.chat_completions" and draw(st.booleans()):
            blocks.append(Thinking(f"<th{k}>"))
        blocks += calls
        if draw(st.booleans()):
            blocks.append(Text(f"<after{k}>"))
        events.append(A(*blocks))
        results: list[Event] = draw(st.permutations([R(c.call_id, f"<o{k}_{c.call_id}>") for c in calls]))
        kept = draw(st.integers(0, len(results)))
        placed = draw(st.integers(0, kept))
        events += results[:placed]
        if placed < kept:
            behind: list[Event] = [U(f"<w{k}>"), A(Text(f"<t{k}>"))]
            events.append(draw(st.sampled_from(behind)))
            events += results[placed:kept]
        if draw(st.booleans()):
            events.append(A(Text(f"<d{k}>")))
    return events


@st.composite
def _plain_cases(draw: st.DrawFn) -> tuple[Lane, list[Event], bool, bool]:
    lane = draw(st.sampled_from(LANES))
    merge_user = lane == "anthropic.messages" and draw(st.booleans())
    return lane, draw(plain_sessions(lane)), lane == "openai.responses" and draw(st.booleans()), merge_user


@_SETTINGS
@given(_plain_cases())
def test_the_quick_reading_gives_the_whole_list_reading(case: tuple[Lane, list[Event], bool, bool]) -> None:
    """Dirty spans read the quick way give the whole-list reading: equal views, the same objects where carried."""
    lane, events, chained, merge_user = case
    messages = build(lane, events, merge_user=merge_user)
    prior = messages[: len(messages) // 2]
    view = ensure_tool_turn_invariants(messages, lane=lane, prior_messages=prior, chained=chained)
    whole = _restore(adapter_for(lane), messages, [(0, len(messages))], prior, chained=chained)
    assert view == whole
    given_ids = {id(m) for m in messages}
    for ours, theirs in zip(view.messages, whole.messages, strict=True):
        assert ours is theirs or (id(ours) not in given_ids and id(theirs) not in given_ids)


@pytest.mark.parametrize("lane", LANES)
def test_common_faults_are_read_the_quick_way(lane: Lane) -> None:
    """An orphan ahead, a missing result, a late result behind a user message and text after a call read quickly."""
    events: list[Event] = [
        R("trimmed"),
        U("q1"),
        A(Text("a"), CallBlock("c1"), CallBlock("c2")),
        R("c1"),
        U("hurry"),
        R("c2"),
        U("q2"),
        A(CallBlock("c3"), CallBlock("c4")),
        R("c3"),
        U("q3"),
        A(Text("b"), CallBlock("c5"), Text("after")),
        R("c5"),
    ]
    messages = build(lane, events)
    adapter = adapter_for(lane)
    survey = adapter.survey(messages)
    assert survey is not None
    spans = survey.spans(len(messages))
    quick = _restore_quick(adapter, messages, spans, None, chained=False)
    assert quick is not None
    assert quick == _restore(adapter, messages, [(0, len(messages))], None, chained=False)
    text_after = {  # Chat keeps text and calls in separate fields; a Responses message item makes the result late
        "anthropic.messages": ["trailing_text"],
        "openai.chat_completions": [],
        "openai.responses": ["late_result"],
    }
    expected = ["late_result", "missing_result", *text_after[lane], "orphan_result"]
    assert [r.form for r in quick.repairs] == expected


def test_the_request_path_repair_constructor_gives_the_same_value() -> None:
    """``_repair`` builds exactly what ``ToolTurnRepair(...)`` builds, every field set."""
    assert [f.name for f in dataclasses.fields(ToolTurnRepair)] == ["form", "tool_call_ids", "before_run"]
    made = _repair("missing_result", ("a", "b"), before_run=True)
    assert made == ToolTurnRepair(form="missing_result", tool_call_ids=("a", "b"), before_run=True)
    assert _repair("late_result", ("a",)) == ToolTurnRepair(form="late_result", tool_call_ids=("a",))
    assert hash(made) == hash(ToolTurnRepair(form="missing_result", tool_call_ids=("a", "b"), before_run=True))
