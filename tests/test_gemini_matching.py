"""Gemini's call matcher (``lanes._gemini_matching``): what it keeps of an answered call, and how it reads it later."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from otel_toolturn.lanes._gemini_matching import Matcher


def _calls(*ids: str) -> list[tuple[int, object, object]]:
    """A run's calls as the lane reads them: ``(content index, part, call data)``, each signed, named ``lookup``."""
    return [
        (0, {"functionCall": data, "thoughtSignature": "s"}, data)
        for data in ({"id": i, "name": "lookup"} for i in ids)
    ]


def _kept(matcher: Matcher, call_id: str) -> object:
    """What the matcher keeps under ``call_id``."""
    return matcher.by_id[call_id]


def test_a_call_answered_alone_by_its_id_is_kept_as_its_name_and_a_later_response_is_a_second_result() -> None:
    """Once answered, a call alone under its id is no choice list; a later response to that id still reads it."""
    matcher = Matcher()
    assert matcher.turn(0, _calls("a", "b")) == ["a", "b"]
    assert matcher.responses([{"id": "a", "name": "lookup"}, {"id": "b", "name": "lookup"}]) == ["a", "b"]
    assert not isinstance(_kept(matcher, "a"), list)
    assert not isinstance(_kept(matcher, "b"), list)
    assert _kept(matcher, "a") is _kept(matcher, "b")  # one record for the calls of one name
    assert matcher.responses([{"id": "a", "name": "lookup"}]) == ["a"]  # a second result for it
    assert isinstance(_kept(matcher, "a"), list)  # read again as its one answered choice


def test_a_call_not_answered_keeps_its_choice() -> None:
    """A call no response answered yet stays a choice a later response can take."""
    matcher = Matcher()
    matcher.turn(0, _calls("a", "b"))
    assert matcher.responses([{"id": "a", "name": "lookup"}]) == ["a"]
    assert isinstance(_kept(matcher, "b"), list)
    assert matcher.responses([{"id": "b", "name": "lookup"}]) == ["b"]


def _unnamed(*names: str) -> list[tuple[int, object, object]]:
    """A run's calls without ids, each signed, named as given."""
    return _run([{"name": name} for name in names])


def _run(datas: list[dict[str, str]]) -> list[tuple[int, object, object]]:
    """A run's calls, each signed, with these data."""
    return [(0, {"functionCall": data, "thoughtSignature": "s"}, data) for data in datas]


NAMES = st.sampled_from(["read", "grep"])
DATA = st.builds(
    lambda name, call_id: {"name": name} if call_id is None else {"name": name, "id": call_id},
    NAMES,
    st.sampled_from([None, None, "read#1", "read#2", "x"]),
)
"""A call's or response's data: a name, and an id or none (some ids the keys of calls without one)."""


@given(
    first=st.lists(NAMES, min_size=1, max_size=4),
    order=st.randoms(use_true_random=False),
    later=st.lists(st.tuples(st.lists(DATA, min_size=1, max_size=3), st.lists(DATA, max_size=3)), max_size=6),
)
def test_a_run_without_ids_answered_by_name_reads_later_as_turn_and_responses_leave_it(
    first: list[str], order: Any, later: list[tuple[list[dict[str, str]], list[dict[str, str]]]]
) -> None:
    """A run without ids answered at once by name gives ``turn``'s keys, and every later read the same keys.

    Later: runs with and without ids (taken at once where they are answered so, else read as turns) and
    responses naming any call, by id or by name.
    """
    answers = [{"name": name} for name in first]
    order.shuffle(answers)
    fast, full = Matcher(), Matcher()
    run = fast.answered(_unnamed(*first), answers)
    assert run is not None
    assert list(run) == full.turn(0, _unnamed(*first))
    full.responses(answers)
    for position, (calls, responses) in enumerate(later, 1):
        taken = fast.answered(_run(calls), responses)
        if taken is not None:
            assert list(taken) == full.turn(position, _run(calls))
            assert sorted(full.responses(responses), key=str) == sorted(taken)  # the responses, in their own order
            continue
        assert fast.turn(position, _run(calls)) == full.turn(position, _run(calls))
        assert fast.responses(responses) == full.responses(responses)


def test_a_run_without_ids_is_not_taken_at_once_when_its_responses_do_not_name_each_call() -> None:
    """A name answered twice and another not at all, a response or call with an id: left to ``turn``, nothing taken."""
    matcher = Matcher()
    assert matcher.answered(_unnamed("a", "b"), [{"name": "a"}, {"name": "a"}]) is None
    assert matcher.answered(_unnamed("a"), [{"name": "a", "id": "x"}]) is None
    assert matcher.answered([*_unnamed("a"), *_calls("x")], [{"name": "a"}, {"name": "lookup", "id": "x"}]) is None
    assert matcher.answered(_unnamed("a"), [{"name": "b"}]) is None
    assert matcher.pending == []
