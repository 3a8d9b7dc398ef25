"""The request path decides every call on its input as it stands then: nothing remembered decides the wire."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final, overload

import pytest

from otel_toolturn import Lane, compose, ensure_tool_turn_invariants
from otel_toolturn._validate import validate
from otel_toolturn.instrument import _request, names
from otel_toolturn.instrument._config import Options
from otel_toolturn.instrument._request import prepare_request
from tests.instrument.conftest import Instrument
from tests.instrument.test_repair import KEY, send
from tests.instrument.wire import Wire
from tests.transcripts import A, Event, R, U, build, c, t

Edit = Callable[[list[Any]], None]

LANES: Final[tuple[Lane, ...]] = ("anthropic.messages", "openai.chat_completions", "openai.responses")
"""The lanes the mock wire speaks (google-genai's request path: ``test_gemini``)."""


def _rename_call(messages: list[Any]) -> None:
    messages[1]["content"][0]["id"] = "x"


def _remove_result(messages: list[Any]) -> None:
    messages[2]["content"].pop()


def _append_text_after_call(messages: list[Any]) -> None:
    messages[1]["content"].append({"type": "text", "text": "and one more thing"})


def _replace_content(messages: list[Any]) -> None:
    messages[2]["content"] = "no results here any more"


EDITS: Final[dict[str, Edit]] = {
    "rename a call id in place": _rename_call,
    "remove a result from its list": _remove_result,
    "append a text block after a call": _append_text_after_call,
    "replace a message's content": _replace_content,
}


def _expected(lane: Lane, messages: list[Any]) -> object:
    """What the wire must carry for ``messages``: the law's view of them now, stripped, as JSON."""
    view = ensure_tool_turn_invariants(compose.strip_framework_fields(messages), lane=lane)
    return json.loads(json.dumps(list(view.messages)))


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_a_resent_transcript_edited_in_place_goes_out_as_the_law_repairs_it_now(
    instrument: Instrument, edit: str
) -> None:
    """Sent twice, then edited in place and resent: the wire carries the law's view of the edited transcript, valid."""
    instrument(mode="repair")
    lane: Lane = "anthropic.messages"
    messages: list[Any] = build(lane, [U("q"), A(c("c1"), c("c2")), R("c1"), R("c2")], merge_user=True)
    wire = Wire()
    for _ in range(2):
        send(wire, lane, messages)
    EDITS[edit](messages)
    send(wire, lane, messages)
    sent = wire.body()["messages"]
    assert sent == _expected(lane, messages)
    assert sent != wire.body(0)["messages"]
    assert validate(sent, lane=lane) == []


@pytest.mark.parametrize("lane", LANES)
def test_a_growing_transcript_edited_in_place_each_call_is_always_valid(instrument: Instrument, lane: Lane) -> None:
    """Each lane: a transcript grown, then a result removed in place from an earlier turn: every body sent is valid."""
    instrument(mode="repair")
    messages: list[Any] = build(lane, [U("q"), A(t("a"), c("c1"))])
    wire = Wire()
    for n in range(4):
        messages += build(lane, [A(c(f"k{n}")), R(f"k{n}"), U(f"more {n}")])
        send(wire, lane, messages)
        assert validate(wire.body()[KEY[lane]], lane=lane) == []
    call, result = [i for i, m in enumerate(messages) if '"k1"' in json.dumps(m)]
    assert call < result
    del messages[result]
    send(wire, lane, messages)
    assert wire.body()[KEY[lane]] == _expected(lane, messages)
    assert validate(wire.body()[KEY[lane]], lane=lane) == []


class _Plain(list[object]):
    """A list subclass: a sequence the digest cache and the conversation state read like any other."""


class _Sequence(Sequence[object]):
    """A sequence that is neither a list nor a tuple."""

    def __init__(self, items: list[object]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> object: ...
    @overload
    def __getitem__(self, index: slice) -> list[object]: ...
    def __getitem__(self, index: int | slice) -> object:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)


@pytest.mark.parametrize("mode", ["repair", "observe"])
@pytest.mark.parametrize("lane", LANES)
def test_the_decision_is_the_pure_rules_on_every_call_of_a_growing_conversation(lane: Lane, mode: str) -> None:
    """Each call of a growing conversation: what is sent and recorded is the strip rule and the law on it, then."""
    options = Options(mode=mode, capture_content=True)  # type: ignore[arg-type]
    key = KEY[lane]
    system: list[object] = [{"role": "system", "content": "You are terse."}] if lane != "anthropic.messages" else []
    transcript: list[object] = [*system]
    for n in range(6):
        events: list[Event] = [U(f"q{n}"), A(t("a"), c(f"call{n}"))]
        if n % 3:
            events.append(R(f"call{n}", f"out{n}"))
        transcript += build(lane, events)
        transcript[-1] = {**transcript[-1], "injectedBy": "memory"}  # type: ignore[dict-item]
        prepared, receipt = prepare_request({key: transcript}, lane=lane, options=options, scope=None, receipt=True)
        view = ensure_tool_turn_invariants(compose.strip_framework_fields(transcript), lane=lane)
        assert prepared.view is not None
        assert prepared.view.repairs == view.repairs
        assert prepared.kwargs[key] is (transcript if mode == "observe" else prepared.kwargs[key])
        if mode == "repair":
            assert list(prepared.kwargs[key]) == list(view.messages)  # type: ignore[call-overload]
        sent = prepared.kwargs[key]
        assert isinstance(sent, list)
        digests = [compose.message_digest(m) for m in sent[:-1]]
        assert receipt.prefix_fingerprint == compose.prefix_fingerprint(digests)
        assert receipt.failures == ()


def _odd_inputs() -> list[object]:
    plain = build("anthropic.messages", [U("q")])
    return [
        "just text",
        (),
        [],
        _Sequence(plain),
        _Plain(plain),
        iter(plain),
        None,
        42,
        [{"role": "user", "content": object()}],
        [{"role": "user", "content": [{"type": "text", "text": "x"}]}, 7],
    ]


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("given_", _odd_inputs())
def test_odd_input_is_decided_by_the_law_and_recorded_without_failure(lane: Lane, given_: object) -> None:
    """Strings, other sequences, odd items: the law's verdict decides; anything else passes; the record never fails."""
    options = Options()
    if not isinstance(given_, (Sequence, str)):
        prepared, _ = prepare_request({KEY[lane]: given_}, lane=lane, options=options, scope=None, receipt=True)
        assert prepared.view is None
        assert prepared.kwargs[KEY[lane]] is given_
        return
    for _ in range(2):
        try:
            expected = ensure_tool_turn_invariants(given_, lane=lane)
        except Exception as error:  # the request path must raise the same
            with pytest.raises(type(error)):
                prepare_request({KEY[lane]: given_}, lane=lane, options=options, scope=None, receipt=True)
            continue
        prepared, receipt = prepare_request({KEY[lane]: given_}, lane=lane, options=options, scope=None, receipt=True)
        assert receipt.failures == ()
        if prepared.view is not None:
            assert prepared.view.repairs == expected.repairs


def test_a_failing_record_stage_never_changes_what_is_sent(
    instrument: Instrument, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conversation state raising: the repaired view still goes out, and the error is counted (stage request)."""
    otel = instrument(mode="repair")

    def broken(*_args: object, **_kwargs: object) -> object:
        raise RuntimeError("conversation state down")

    monkeypatch.setattr(_request.CONVERSATIONS, "follow", broken)
    lane: Lane = "openai.chat_completions"
    messages = build(lane, [U("go"), A(c("c1")), U("next")])
    wire = Wire()
    send(wire, lane, messages)
    assert wire.body()["messages"] == _expected(lane, messages)
    assert (
        otel.total("toolturn.instrumentation.errors", toolturn__error__stage="request", error__type="RuntimeError") == 1
    )
    assert [e[names.REPAIR_REPEAT] for e in otel.events(names.EVENT_REPAIR)] == [False]
