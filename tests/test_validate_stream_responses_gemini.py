"""Responses and Gemini ``validate`` fed in segments is ``validate`` of the whole list.

For generated broken transcripts (Gemini in each spelling, with and without ids; Responses also chained),
raw and as the law's view of them, cut at a random choice of the points ``cut_here`` allows: ``close``
gives exactly the whole list's violations, in its order, and a list ``validate`` refuses is refused with the
same words and position.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_toolturn import Lane, ToolTurnInputError, ensure_tool_turn_invariants
from otel_toolturn._law_stream import cut_here
from otel_toolturn._view import Violation
from otel_toolturn.lanes import adapter_for
from tests.test_law_properties import transcripts
from tests.transcripts import A, Event, R, U, build, c, gemini, t, th

RESPONSES: Lane = "openai.responses"
GEMINI: Lane = "gemini.generate_content"
_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CUTS = st.lists(st.booleans(), min_size=20, max_size=20)
"""Which of the allowed cut points a case cuts at, in order."""


def _segments(items: Sequence[object], lane: Lane, chosen: Sequence[bool]) -> list[Sequence[object]]:
    """``items`` cut at the allowed points ``chosen`` picks (in order), as segments."""
    points = [i for i in range(1, len(items)) if cut_here(items[i - 1], items[i], lane=lane)]
    bounds = [0, *(p for p, cut in zip(points, chosen, strict=False) if cut), len(items)]
    return [items[start:end] for start, end in itertools.pairwise(bounds)]


def _streamed(segments: Sequence[Sequence[object]], lane: Lane, *, chained: bool) -> list[Violation]:
    stream = adapter_for(lane).validate_stream(chained=chained)
    for number, segment in enumerate(segments, 1):
        stream.feed(segment, last=number == len(segments))
    return stream.close()


def _outcome(judge: Callable[[], list[Violation]]) -> list[Violation] | tuple[str, int | None]:
    """The violations ``judge`` gives, or the words and position of the ``ToolTurnInputError`` it raises."""
    try:
        return judge()
    except ToolTurnInputError as refused:
        return str(refused), refused.position


def _same_as_whole(items: list[object], lane: Lane, chosen: Sequence[bool], *, chained: bool = False) -> None:
    """Fed in segments, ``items`` gives ``validate``'s violations, or its refusal, exactly."""
    segments = _segments(items, lane, chosen)
    whole = _outcome(lambda: adapter_for(lane).validate(items, chained=chained))
    assert _outcome(lambda: _streamed(segments, lane, chained=chained)) == whole


def _dropped(items: list[object], data: st.DataObject) -> list[object]:
    """``items`` with one item left out, or all of them (breaks more rules: reasoning with nothing after it, ...)."""
    drop = data.draw(st.integers(-1, len(items) - 1))
    return items if drop < 0 else [*items[:drop], *items[drop + 1 :]]


def _unreadable(contents: list[object], data: st.DataObject) -> list[object]:
    """Gemini ``contents`` with one content made unreadable in its role, or none: parts no list, a call unnamed."""
    at = data.draw(st.integers(-max(len(contents), 1), len(contents) - 1))  # negative: none (about half the cases)
    if at < 0:
        return contents
    role = adapter_for(GEMINI).is_model_output(contents[at])
    broken = (
        {"role": "model", "parts": [{"functionCall": {"args": {}}}]}
        if role and data.draw(st.booleans())
        else {"role": "model" if role else "user", "parts": "not a list"}
    )
    return [*contents[:at], broken, *contents[at + 1 :]]


@pytest.mark.parametrize("chained", [False, True])
@pytest.mark.parametrize("viewed", [False, True])
@_SETTINGS
@given(data=st.data())
def test_responses_segments_give_the_whole_lists_violations(chained: bool, viewed: bool, data: st.DataObject) -> None:
    """Responses input, raw or the law's view, chained or not, cut at any answers' starts: the whole list's rules."""
    items = build(RESPONSES, data.draw(transcripts(RESPONSES)))
    items = list(ensure_tool_turn_invariants(items, lane=RESPONSES).messages) if viewed else _dropped(items, data)
    _same_as_whole(items, RESPONSES, data.draw(CUTS), chained=chained)


@pytest.mark.parametrize("spelling", ["rest", "snake", "sdk", ("rest", "sdk")])
@pytest.mark.parametrize("ids", [True, False])
@pytest.mark.parametrize("viewed", [False, True])
@_SETTINGS
@given(data=st.data())
def test_gemini_segments_give_the_whole_lists_violations(
    spelling: str | tuple[str, ...], ids: bool, viewed: bool, data: st.DataObject
) -> None:
    """Gemini contents in each spelling, with ids and without, raw or the law's view, cut anywhere allowed: the same."""
    events = data.draw(transcripts(GEMINI))
    contents = gemini(events, spelling=spelling, ids=ids)  # type: ignore[arg-type]
    if viewed:
        contents = list(ensure_tool_turn_invariants(contents, lane=GEMINI).messages)
    else:
        contents = _unreadable(_dropped(contents, data), data)
    _same_as_whole(contents, GEMINI, data.draw(CUTS))


def test_responses_rules_spanning_a_cut_name_whole_list_positions() -> None:
    """An output answering a call two segments back is no orphan; a repeated item id and an unanswered call are not."""
    events: list[Event] = [
        U("q"),
        A(th("why"), c("a", item_id="fc_1"), c("b")),
        U("more"),
        A(t("meanwhile")),
        R("a"),
        U("again"),
        A(c("d", item_id="fc_1")),
        R("d"),
    ]
    items = build(RESPONSES, events)
    segments = _segments(items, RESPONSES, [True] * 20)
    assert len(segments) == 4
    violations = _streamed(segments, RESPONSES, chained=False)
    assert violations == adapter_for(RESPONSES).validate(items)
    assert [(v.position, v.rule) for v in violations] == [(3, "missing_output"), (8, "duplicate_item")]


def test_gemini_refusal_in_a_later_segment_names_its_whole_list_position() -> None:
    """Unreadable parts in the third segment are refused at their position in the whole list, in the same words."""
    contents = gemini([U("q"), A(c("a")), R("a"), A(t("x")), U("more"), A(t("y"))])
    contents[5] = {"role": "model", "parts": "not a list"}
    segments = _segments(contents, GEMINI, [True] * 20)
    assert [len(segment) for segment in segments] == [1, 2, 2, 1]
    with pytest.raises(ToolTurnInputError) as whole:
        adapter_for(GEMINI).validate(contents)
    with pytest.raises(ToolTurnInputError) as streamed:
        _streamed(segments, GEMINI, chained=False)
    assert (str(streamed.value), streamed.value.position) == (str(whole.value), whole.value.position)
    assert whole.value.position == 5


def test_gemini_missing_signature_in_a_later_segment_names_its_whole_list_position() -> None:
    """An unsigned first call two segments in is reported at its content's position, in the words and the violation."""
    contents = gemini([U("q"), A(c("a")), R("a"), A(t("x")), U("more"), A(c("b", signed=False)), R("b")])
    violations = _streamed(_segments(contents, GEMINI, [True] * 20), GEMINI, chained=False)
    assert violations == adapter_for(GEMINI).validate(contents)
    assert [(v.position, v.rule) for v in violations] == [(5, "missing_thought_signature")]
    assert "position 6." in violations[0].message


def test_gemini_response_matched_by_id_to_a_call_segments_back_as_in_the_whole_list() -> None:
    """A response whose id only an earlier segment's call carries answers that call, not the run right before it."""
    signed = {"thoughtSignature": "c2ln"}
    call = {"functionCall": {"id": "R", "name": "R", "args": {}}}
    unnamed = {"functionCall": {"name": "R", "args": {}}}
    response = {"functionResponse": {"id": "R", "name": "R", "response": {"output": "ok"}}}
    contents: list[object] = [
        {"role": "user", "parts": [{"text": "q"}]},
        {"role": "model", "parts": [call | signed, call | signed]},
        {"role": "user", "parts": [{"text": "more"}]},
        {"role": "model", "parts": [unnamed | signed, unnamed]},
        {"role": "user", "parts": [response, response]},
    ]
    segments = _segments(contents, GEMINI, [True] * 20)
    assert len(segments) == 3
    violations = _streamed(segments, GEMINI, chained=False)
    assert violations == adapter_for(GEMINI).validate(contents)
    assert [(v.position, v.rule) for v in violations] == [
        (1, "function_response_count"),
        (4, "function_response_count"),
    ]
