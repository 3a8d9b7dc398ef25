"""Anthropic's and Bedrock's ``validate`` fed in segments is ``validate``: cut at any answer's start, the same verdict.

For generated broken transcripts (Anthropic also with results and text sharing user messages), and for
the law's views of them, cut at a random choice of the points ``cut_here`` allows: ``close`` after
feeding every segment gives exactly ``validate`` of the whole list (violations, positions, words, order),
and a ``ToolTurnInputError`` the whole list raises is raised by the segments with the same words and
position.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_toolturn import Lane, ensure_tool_turn_invariants
from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._law_stream import cut_here
from otel_toolturn._view import Violation
from otel_toolturn.lanes import adapter_for
from tests.test_law_properties import transcripts
from tests.test_validate_input import ITEMS
from tests.transcripts import A, R, U, build, c, t

ANTHROPIC: Lane = "anthropic.messages"
BEDROCK: Lane = "bedrock.converse"
_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CUTS = st.lists(st.booleans(), min_size=20, max_size=20)
"""Which of the allowed cut points a case cuts at, in order."""

Verdict = list[Violation] | tuple[str, int | None]
"""What ``validate`` answers: the violations, or a ``ToolTurnInputError``'s words and position."""


def _segments(items: Sequence[object], lane: Lane, chosen: Sequence[bool]) -> list[Sequence[object]]:
    """``items`` cut at the allowed points ``chosen`` picks, in order."""
    points = [i for i in range(1, len(items)) if cut_here(items[i - 1], items[i], lane=lane)]
    bounds = [0, *(p for p, cut in zip(points, chosen, strict=False) if cut), len(items)]
    return [items[start:end] for start, end in itertools.pairwise(bounds)]


def _whole(items: Sequence[object], lane: Lane) -> Verdict:
    try:
        return adapter_for(lane).validate(items)
    except ToolTurnInputError as error:
        return str(error), error.position


def _streamed(segments: Sequence[Sequence[object]], lane: Lane) -> Verdict:
    stream = adapter_for(lane).validate_stream()
    try:
        for number, segment in enumerate(segments, 1):
            stream.feed(segment, last=number == len(segments))
        return stream.close()
    except ToolTurnInputError as error:
        return str(error), error.position


def _same_as_whole(items: list[object], lane: Lane, chosen: Sequence[bool]) -> None:
    assert _streamed(_segments(items, lane, chosen), lane) == _whole(items, lane)


@pytest.mark.parametrize("merge_user", [False, True])
@_SETTINGS
@given(data=st.data())
def test_anthropic_segments_give_the_whole_lists_violations(merge_user: bool, data: st.DataObject) -> None:
    """Anthropic: any cuts of a broken transcript give ``validate`` of the whole list, in its order."""
    items = build(ANTHROPIC, data.draw(transcripts(ANTHROPIC)), merge_user=merge_user)
    _same_as_whole(items, ANTHROPIC, data.draw(CUTS))


@pytest.mark.parametrize("merge_user", [False, True])
@_SETTINGS
@given(data=st.data())
def test_anthropic_segments_of_the_view_give_its_violations(merge_user: bool, data: st.DataObject) -> None:
    """Anthropic: any cuts of the law's view of a broken transcript give ``validate`` of the whole view."""
    items = build(ANTHROPIC, data.draw(transcripts(ANTHROPIC)), merge_user=merge_user)
    view = list(ensure_tool_turn_invariants(items, lane=ANTHROPIC).messages)
    _same_as_whole(view, ANTHROPIC, data.draw(CUTS))


@_SETTINGS
@given(data=st.data())
def test_bedrock_segments_give_the_whole_lists_violations(data: st.DataObject) -> None:
    """Bedrock: any cuts of a broken transcript give ``validate`` of the whole list, in its order."""
    items = build(BEDROCK, data.draw(transcripts(BEDROCK)))
    _same_as_whole(items, BEDROCK, data.draw(CUTS))


@_SETTINGS
@given(data=st.data())
def test_bedrock_segments_of_the_view_give_its_violations(data: st.DataObject) -> None:
    """Bedrock: any cuts of the law's view of a broken transcript give ``validate`` of the whole view."""
    items = build(BEDROCK, data.draw(transcripts(BEDROCK)))
    view = list(ensure_tool_turn_invariants(items, lane=BEDROCK).messages)
    _same_as_whole(view, BEDROCK, data.draw(CUTS))


@pytest.mark.parametrize("lane", [ANTHROPIC, BEDROCK])
@_SETTINGS
@given(items=ITEMS, chosen=CUTS)
def test_segments_of_any_json_give_the_whole_lists_verdict(lane: Lane, items: list[object], chosen: list[bool]) -> None:
    """Over any JSON-shaped items, the segments give the whole list's violations, or its input error and position."""
    _same_as_whole(items, lane, chosen)


def test_anthropic_duplicate_id_whose_first_use_is_in_an_earlier_segment() -> None:
    """Anthropic: a ``tool_use`` id first used before a cut is a duplicate after it, at its whole-list position."""
    items = build(ANTHROPIC, [U("q"), A(c("c1")), R("c1"), A(t("again"), c("c1")), R("c1", "r2")])
    segments = _segments(items, ANTHROPIC, [True, True])
    assert [len(s) for s in segments] == [1, 2, 2]
    streamed = _streamed(segments, ANTHROPIC)
    assert streamed == _whole(items, ANTHROPIC)
    assert isinstance(streamed, list)
    assert [(v.position, v.rule, v.message[:20]) for v in streamed] == [
        (3, "duplicate_tool_use_id", "messages.3.content.1"),
        (4, "unexpected_tool_result", "messages.4.content.0"),
    ]


def test_anthropic_empty_text_of_a_later_segment_comes_before_an_earlier_tool_violation() -> None:
    """Anthropic: empty messages and text come first across the whole list, ahead of an earlier segment's tool rules."""
    items = build(ANTHROPIC, [U("q"), A(c("c1")), U("no result"), A(t("")), U("q2")])
    segments = _segments(items, ANTHROPIC, [True, True])
    assert len(segments) == 3
    streamed = _streamed(segments, ANTHROPIC)
    assert streamed == _whole(items, ANTHROPIC)
    assert isinstance(streamed, list)
    assert [(v.position, v.rule) for v in streamed] == [(3, "empty_text"), (1, "missing_tool_result")]


def test_bedrock_duplicate_id_across_a_cut_and_no_first_message_rule_after_it() -> None:
    """Bedrock: an id used before a cut is a duplicate after it; a segment opening with the model breaks no rule."""
    items = build(BEDROCK, [U("q"), A(c("c1")), R("c1"), A(c("c1")), R("c1", "r2")])
    segments = _segments(items, BEDROCK, [True, True])
    assert [len(s) for s in segments] == [1, 2, 2]
    streamed = _streamed(segments, BEDROCK)
    assert streamed == _whole(items, BEDROCK)
    assert isinstance(streamed, list)
    assert [(v.position, v.rule, v.message[:35]) for v in streamed] == [
        (3, "duplicate_tool_use_id", "The toolUse blocks at messages.3.co"),
        (4, "unexpected_tool_result", "The number of toolResult blocks at "),
    ]
