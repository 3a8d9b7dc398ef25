"""The law fed in segments (``LawStream``) is the law: cut at any answer's start, the pieces are the whole view.

For generated broken transcripts in every lane (Gemini in each spelling and with id-less calls, Chat in
each dialect), cut at a random choice of the points ``cut_here`` allows: the segments' views, concatenated,
equal ``ensure_tool_turn_invariants`` of the whole list, and ``close`` gives its repairs in its order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_toolturn import LANES, Dialect, Lane, ToolTurnInputError, ensure_tool_turn_invariants
from otel_toolturn._law import CarriedCall, CarriedTurn
from otel_toolturn._law_stream import LawStream, cut_here
from otel_toolturn._vocab import DIALECTS
from otel_toolturn.lanes import adapter_for
from tests.test_law_properties import transcripts
from tests.transcripts import A, Event, R, U, build, c, gemini, ollama, t

CHAT: Lane = "openai.chat_completions"
GEMINI: Lane = "gemini.generate_content"
ANTHROPIC: Lane = "anthropic.messages"
_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CUTS = st.lists(st.booleans(), min_size=20, max_size=20)
"""Which of the allowed cut points a case cuts at, in order."""


def _streamed(
    items: Sequence[object], lane: Lane, chosen: Sequence[bool], dialect: Dialect | None = None
) -> tuple[list[object], object]:
    """The view and repairs of ``items`` fed to a ``LawStream`` in segments, cut where ``chosen`` says."""
    points = [i for i in range(1, len(items)) if cut_here(items[i - 1], items[i], lane=lane)]
    bounds = [0, *(p for p, cut in zip(points, chosen, strict=False) if cut), len(items)]
    stream = LawStream(lane, dialect=dialect)
    out: list[object] = []
    for start, end in pairwise(bounds):
        out.extend(stream.feed(items[start:end], last=end == len(items)))
    return out, stream.close()


def _same_as_whole(items: list[object], lane: Lane, chosen: Sequence[bool], dialect: Dialect | None = None) -> None:
    whole = ensure_tool_turn_invariants(items, lane=lane, dialect=dialect)
    out, repairs = _streamed(items, lane, chosen, dialect)
    assert out == list(whole.messages)
    assert repairs == whole.repairs


@pytest.mark.parametrize("lane", LANES)
@_SETTINGS
@given(data=st.data())
def test_segments_give_the_whole_view_and_its_repairs(lane: Lane, data: st.DataObject) -> None:
    """In every lane, any cuts at answers' starts give the whole list's view and repairs, in order."""
    events = data.draw(transcripts(lane))
    _same_as_whole(build(lane, events), lane, data.draw(CUTS))


@_SETTINGS
@given(data=st.data())
def test_segments_give_the_whole_view_with_results_and_text_sharing_user_messages(data: st.DataObject) -> None:
    """Anthropic, results and the user's words in one message: read in full, any cuts give the whole list's view."""
    _same_as_whole(build(ANTHROPIC, data.draw(transcripts(ANTHROPIC)), merge_user=True), ANTHROPIC, data.draw(CUTS))


@pytest.mark.parametrize("dialect", [d for d in DIALECTS if d != "ollama"])
@_SETTINGS
@given(data=st.data())
def test_segments_give_the_whole_view_in_each_chat_dialect(dialect: Dialect, data: st.DataObject) -> None:
    """In each Chat dialect's rules, any cuts give the whole list's view and repairs."""
    _same_as_whole(build(CHAT, data.draw(transcripts(CHAT))), CHAT, data.draw(CUTS), dialect)


@_SETTINGS
@given(data=st.data())
def test_segments_give_the_whole_view_in_ollamas_wire(data: st.DataObject) -> None:
    """Ollama's calls without ids, matched by name and order: any cuts give the whole list's view and repairs."""
    events = data.draw(transcripts(CHAT, ("c0", "c1", "c2", "c3")))
    _same_as_whole(ollama(events), CHAT, data.draw(CUTS), "ollama")


@pytest.mark.parametrize("spelling", ["rest", "snake", "sdk", ("rest", "sdk")])
@pytest.mark.parametrize("ids", [True, False])
@_SETTINGS
@given(data=st.data())
def test_segments_give_the_whole_view_in_each_gemini_spelling(
    spelling: str | tuple[str, ...], ids: bool, data: st.DataObject
) -> None:
    """Gemini in each spelling (and mixed), calls with ids and without: any cuts give the whole view and repairs."""
    events = data.draw(transcripts(GEMINI))
    _same_as_whole(gemini(events, spelling=spelling, ids=ids), GEMINI, data.draw(CUTS))  # type: ignore[arg-type]


def test_a_result_recorded_segments_later_joins_its_turns_report() -> None:
    """A late result three segments after its call is delivered where it stands and reported on its turn."""
    events: list[Event] = [U("q"), A(c("a"), c("b")), R("a", "ra"), U("more")]
    for k in range(3):
        events += [A(t(f"answer {k}")), U(f"then {k}")]
    events += [A(t("last")), R("b", "late b")]
    items = build(ANTHROPIC, events)
    whole = ensure_tool_turn_invariants(items, lane=ANTHROPIC)
    out, repairs = _streamed(items, ANTHROPIC, [True] * 20)
    assert [r.form for r in whole.repairs] == ["missing_result", "late_result_in_place"]
    assert out == list(whole.messages)
    assert repairs == whole.repairs


def test_the_stream_cuts_only_where_an_answer_starts() -> None:
    """A cut falls before an assistant message that follows a user's, never inside a run of the model's."""
    items = build(ANTHROPIC, [U("q"), A(t("x")), A(c("a")), R("a"), A(t("y"))])
    assert [i for i in range(1, len(items)) if cut_here(items[i - 1], items[i], lane=ANTHROPIC)] == [1, 4]


def _containers(value: object) -> list[object]:
    """Every dict and list in a wire value, itself included."""
    if isinstance(value, dict):
        return [value, *(inner for member in value.values() for inner in _containers(member))]
    if isinstance(value, list):
        return [value, *(inner for member in value for inner in _containers(member))]
    return []


def _reachable(root: object, *, skip: object) -> list[object]:
    """Every object reachable from ``root`` by references, ``skip`` and what only it reaches left out."""
    import gc  # noqa: PLC0415 - only this test asks the collector

    seen = {id(root), id(skip)}
    stack, found = [root], []
    while stack:
        for referent in gc.get_referents(stack.pop()):
            if id(referent) not in seen and not isinstance(referent, type):
                seen.add(id(referent))
                found.append(referent)
                stack.append(referent)
    return found


@pytest.mark.parametrize("lane", LANES)
def test_a_written_segment_is_held_by_nothing_the_stream_keeps(lane: Lane) -> None:
    """Once a segment is written, the stream keeps no wire object of it: a later result still gets its call's name."""
    items = build(lane, [U("go"), A(c("k1", "lookup")), U("well?"), A(t("meanwhile")), R("k1", "found it")])
    cut = max(i for i in range(1, len(items)) if cut_here(items[i - 1], items[i], lane=lane))  # before "meanwhile"
    stream = LawStream(lane)
    view = stream.feed(items[:cut], last=False)
    wire = {id(container) for item in [*items[:cut], *view] for container in _containers(item)}
    kept = [held for held in _reachable(stream, skip=adapter_for(lane)) if id(held) in wire]
    assert kept == []
    view += stream.feed(items[cut:], last=True)
    whole = ensure_tool_turn_invariants(items, lane=lane)
    assert view == list(whole.messages)
    assert stream.close() == whole.repairs
    assert [r.form for r in whole.repairs] == ["missing_result", "late_result_in_place"]
    assert "lookup" in json.dumps(view[-2:])


@pytest.mark.parametrize("lane", LANES)
def test_a_repaired_turn_is_held_without_a_dict_of_its_own(lane: Lane) -> None:
    """Once written, a turn's repairs are held flat: ten times the repaired turns, no more dicts the stream keeps."""

    def dicts_held(turns: int) -> int:
        stream = LawStream(lane)
        stream.feed(build(lane, [U("go")]), last=False)
        for k in range(turns):  # each segment a call the user's next words interrupt: a missing result each
            stream.feed(build(lane, [A(c(f"k{k}", "lookup")), U("go on")]), last=False)
        stream.feed(build(lane, [A(t("done"))]), last=True)
        held = sum(isinstance(kept, dict) for kept in _reachable(stream, skip=adapter_for(lane)))
        assert [r.form for r in stream.close()] == ["missing_result"] * turns
        return held

    assert dicts_held(50) == dicts_held(5)


@pytest.mark.parametrize("lane", LANES)
def test_a_closed_stream_holds_nothing_of_its_calls(lane: Lane) -> None:
    """``close`` lets go of each call's carried turn, the ids taken and each turn's notes as it reports them."""
    stream = LawStream(lane)
    stream.feed(build(lane, [U("go")]), last=False)
    for k in range(5):  # each segment a call the user's next words interrupt: a missing result each
        stream.feed(build(lane, [A(c(f"call_{k}", "lookup")), U("go on")]), last=False)
    stream.feed(build(lane, [A(t("done"))]), last=True)

    def held() -> list[object]:
        return [
            kept
            for kept in _reachable(stream, skip=adapter_for(lane))
            if isinstance(kept, CarriedCall | CarriedTurn) or (isinstance(kept, str) and kept.startswith("call_"))
        ]

    assert held()
    assert [r.tool_call_ids for r in stream.close()] == [(f"call_{k}",) for k in range(5)]
    assert held() == []


@pytest.mark.parametrize("lane", LANES)
def test_a_turn_of_many_calls_is_carried_as_one_object(lane: Lane) -> None:
    """A written turn's calls are held once for the turn: one carried object for five calls or fifty."""

    def carried(calls: int) -> int:
        stream = LawStream(lane)
        ids = [f"k{k}" for k in range(calls)]
        stream.feed(build(lane, [U("go"), A(*(c(i, "lookup") for i in ids)), *(R(i) for i in ids)]), last=False)
        stream.feed(build(lane, [A(t("done"))]), last=True)
        held = sum(isinstance(kept, CarriedCall | CarriedTurn) for kept in _reachable(stream, skip=adapter_for(lane)))
        assert stream.close() == ()
        return held

    assert carried(50) == carried(5) == 1


@pytest.mark.parametrize("lane", LANES)
def test_a_late_result_segments_later_finds_its_call_in_a_turn_of_many(lane: Lane) -> None:
    """A later result for one call of a written turn of three (one renamed) is delivered as on the whole list."""
    items = build(
        lane,
        [
            *(U("go"), A(c("x", "ls")), R("x")),
            *(U("again"), A(c("x", "ls"), c("y", "grep"), c("z", "cat")), R("x"), R("z"), U("well?")),
            *(A(t("meanwhile")), R("y", "found it"), R("x", "twice")),
        ],
    )
    cut = max(i for i in range(1, len(items)) if cut_here(items[i - 1], items[i], lane=lane))  # before "meanwhile"
    stream = LawStream(lane)
    view = stream.feed(items[:cut], last=False) + stream.feed(items[cut:], last=True)
    whole = ensure_tool_turn_invariants(items, lane=lane)
    assert view == list(whole.messages)
    assert stream.close() == whole.repairs
    assert "grep" in json.dumps(view[cut:])


@pytest.mark.parametrize("lane", LANES)
def test_an_item_the_law_cannot_read_is_named_where_it_stands_in_the_whole_list(lane: Lane) -> None:
    """A call with a number for its id, segments in, is refused with the whole list's words: its position in it."""
    items = build(lane, [U("go"), A(c("k1")), R("k1"), A(t("x")), U("more"), A(c("k2", "lookup")), R("k2")])
    at = next(
        i for i, item in enumerate(items) if adapter_for(lane).is_model_output(item) and '"k2"' in json.dumps(item)
    )
    items[at] = json.loads(json.dumps(items[at]).replace('"k2"', "5").replace('"lookup"', "5"))
    with pytest.raises(ToolTurnInputError) as whole:
        ensure_tool_turn_invariants(items, lane=lane)
    with pytest.raises(ToolTurnInputError) as streamed:
        _streamed(items, lane, [True] * 20)  # cut at every answer's start
    assert (str(streamed.value), streamed.value.position) == (str(whole.value), at)
