"""The repetition poll: its documented rule for degenerate loops, spared hits and their de-duplication."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from otel_toolturn.streams._repetition import (
    CUT_DEPTH,
    CUT_SPAN,
    POLL_EVERY,
    SPARED_DEPTH,
    WINDOW,
    RepetitionPoll,
    tail_loop,
)

PROSE = (
    "The quick brown fox jumps over the lazy dog while the committee debates the budget for the "
    "next fiscal year, and nobody remembers who ordered the forty-two pizzas that arrived at noon. "
)


def feed_all(poll: RepetitionPoll, text: str, step: int = 7) -> bool:
    tripped = False
    for i in range(0, len(text), step):
        tripped = poll.feed(text[i : i + step]) or tripped
    return tripped


@pytest.mark.parametrize(
    ("text", "period", "depth"),
    [
        ("x" * 40, 1, 40),
        ("ab" * 20, 2, 20),
        ("prefix " + "hello world " * 5, 12, 5),
        (PROSE, 0, 0),
        ("short", 0, 0),
    ],
)
def test_tail_loop_finds_the_period_and_depth(text: str, period: int, depth: int) -> None:
    """The tail's period is the needle's nearest recurrence; the depth counts whole copies back to back."""
    assert tail_loop(text) == (period, depth)


def test_natural_text_never_trips() -> None:
    """Long natural prose neither trips nor records spared hits."""
    poll = RepetitionPoll()
    text = "".join(f"{i}: {PROSE}" for i in range(30))
    assert not feed_all(poll, text)
    report = poll.report()
    assert report.cut is None
    assert report.spared == ()


def test_a_loop_trips_once_deep_and_long_enough() -> None:
    """A segment repeated to the cut depth and span trips the poll, with the canonical segment."""
    poll = RepetitionPoll()
    segment = "Let me check the file again. "
    assert not feed_all(poll, PROSE + segment * (SPARED_DEPTH + 1))
    assert poll.report().cut is None
    repeats = max(CUT_DEPTH, -(-CUT_SPAN // len(segment))) + 3  # past both thresholds and one poll
    assert feed_all(poll, segment * repeats)
    cut = poll.report().cut
    assert cut is not None
    assert cut.rule == "segment_loop"
    assert len(segment) * cut.depth >= CUT_SPAN
    assert sorted(cut.segment) == sorted(segment)  # a rotation of the looping segment


def test_a_character_run_is_its_own_rule() -> None:
    """One character repeated past the cut span trips as a character run."""
    poll = RepetitionPoll()
    assert feed_all(poll, PROSE + "=" * (CUT_SPAN + POLL_EVERY))
    cut = poll.report().cut
    assert cut is not None
    assert (cut.rule, cut.segment) == ("char_run", "=")


def test_spared_hits_are_deduplicated_by_rule_and_segment_with_peak_depth() -> None:
    """A loop polled at several phases is one spared hit at its deepest; another loop is another hit."""
    poll = RepetitionPoll()
    row = "| a | b | c |\n"
    text = PROSE + row * 16 + PROSE + "x y z " * 30 + PROSE
    assert not feed_all(poll, text, step=3)
    report = poll.report()
    assert report.cut is None
    assert [(hit.rule, sorted(hit.segment)) for hit in report.spared] == [
        ("segment_loop", sorted(row)),
        ("segment_loop", sorted("x y z ")),
    ]
    assert report.spared[0].depth >= 16 - POLL_EVERY // len(row) - 1


def test_a_cut_loop_leaves_the_spared_list() -> None:
    """The loop that is finally cut is not also listed as spared."""
    poll = RepetitionPoll()
    feed_all(poll, PROSE + "again and again " * 60)
    report = poll.report()
    assert report.cut is not None
    assert all(hit.segment != report.cut.segment for hit in report.spared)


def test_poll_inspects_only_the_window() -> None:
    """A loop that scrolled out of the window is not inspected by a later poll."""
    poll = RepetitionPoll()
    varied = "".join(f"{i}: {PROSE}" for i in range(WINDOW // len(PROSE) + 1))
    assert poll.poll("ab" * 600)
    assert not RepetitionPoll().poll("ab" * 600 + varied)


def test_once_tripped_it_stays_tripped() -> None:
    """After the cut, polls report degenerate without inspecting again."""
    poll = RepetitionPoll()
    assert poll.poll("z" * 1000)
    assert poll.poll(PROSE)
    assert poll.feed("anything")


@given(cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=40))
def test_a_loop_in_any_chunking_is_cut_as_the_same_segment(cuts: list[int]) -> None:
    """Natural text then a long loop, cut into fragments anywhere: the poll cuts it, with one canonical segment."""
    text = PROSE + "I will check the file. " * 60
    edges = [0, *sorted(min(cut, len(text)) for cut in cuts), len(text)]
    poll = RepetitionPoll()
    for start, stop in itertools.pairwise(edges):
        if stop > start:
            poll.feed(text[start:stop])
    cut = poll.report().cut
    assert cut is not None
    assert cut.rule == "segment_loop"
    assert cut.segment == min(("I will check the file. "[i:] + "I will check the file. "[:i]) for i in range(23))
