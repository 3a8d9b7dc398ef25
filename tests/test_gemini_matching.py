"""Gemini's call matcher (``lanes._gemini_matching``): what it keeps of an answered call, and how it reads it later."""

from __future__ import annotations

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
