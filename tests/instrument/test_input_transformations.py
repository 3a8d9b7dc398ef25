"""The provider's ``input_transformations`` recorded: one event per entry, a counter point per type and reason."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

import httpx2
import pytest

from otel_toolturn import Lane
from otel_toolturn.instrument import names
from tests.instrument.conftest import Instrument, Otel, shared_dir
from tests.instrument.wire import MODEL, Wire
from tests.streams._frames import (
    Frame,
    a_block_stop,
    a_delta,
    a_dropped,
    a_start,
    a_stop,
    a_text,
    a_text_start,
    sse_bytes,
)

LANE: Final[Lane] = "anthropic.messages"
Q: Final = [{"role": "user", "content": "go"}]
SSE: Final = {"content-type": "text/event-stream"}
PREFIX: Final = a_dropped("messages.2.content.0")
MODEL_BOUND: Final = a_dropped("messages.0.content.0", "model_binding_mismatch")


def _message(transformations: object) -> dict[str, object]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": "Hello there!"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 7},
        "input_transformations": transformations,
    }


def _stream(start: list[Frame] | None, delta: list[Frame] | None) -> bytes:
    frames = [
        a_start(MODEL, transformations=start),
        a_text_start(0),
        a_text(0, "Hello there!"),
        a_block_stop(0),
        a_delta("end_turn", transformations=delta),
        a_stop(),
    ]
    return sse_bytes(LANE, frames)


def _plain(body: dict[str, object]) -> Wire:
    return Wire(responder=lambda _lane, _request: httpx2.Response(200, json=body))


def _streamed(body: bytes) -> Wire:
    return Wire(responder=lambda _lane, _request: httpx2.Response(200, content=body, headers=SSE))


def _create(wire: Wire, *, stream: bool) -> None:
    result: Any = wire.anthropic().messages.create(model=MODEL, max_tokens=16, messages=Q, stream=stream)
    if stream:
        for _ in result:
            pass


def _helper(wire: Wire) -> None:
    with wire.anthropic().messages.stream(model=MODEL, max_tokens=16, messages=Q) as s:
        s.get_final_message()


def _events(otel: Otel) -> list[tuple[object, object, object, object]]:
    return [
        (
            e[names.INPUT_TRANSFORMATION_TYPE],
            e[names.INPUT_TRANSFORMATION_REASON],
            e[names.INPUT_TRANSFORMATION_PATH],
            e[names.LANE],
        )
        for e in otel.events(names.EVENT_INPUT_TRANSFORMATION)
    ]


def _points(otel: Otel) -> dict[tuple[object, object], float]:
    """The counter's points by (type, reason), after checking each carries the lane and provider only besides."""
    out: dict[tuple[object, object], float] = {}
    for attributes, value in otel.points(names.INPUT_TRANSFORMATIONS.name):
        assert set(attributes) == set(names.INPUT_TRANSFORMATIONS.attributes)
        assert (attributes[names.LANE], attributes[names.PROVIDER]) == (LANE, "anthropic")
        key = (attributes[names.INPUT_TRANSFORMATION_TYPE], attributes[names.INPUT_TRANSFORMATION_REASON])
        out[key] = out.get(key, 0) + value
    return out


BOTH_EVENTS: Final = [
    ("thinking_dropped", "prefix_binding_mismatch", "messages.2.content.0", LANE),
    ("thinking_dropped", "model_binding_mismatch", "messages.0.content.0", LANE),
]
BOTH_POINTS: Final = {
    ("thinking_dropped", "prefix_binding_mismatch"): 1.0,
    ("thinking_dropped", "model_binding_mismatch"): 1.0,
}


def test_plain_response_records_each_entry(instrument: Instrument) -> None:
    """A whole message's entries: one event each with type, reason, path and lane; one point per reason."""
    otel = instrument()
    _create(_plain(_message([PREFIX, MODEL_BOUND])), stream=False)
    assert _events(otel) == BOTH_EVENTS
    assert _points(otel) == BOTH_POINTS


def test_async_plain_response_records_each_entry(instrument: Instrument) -> None:
    """The async client records a whole message's entries the same way."""
    otel = instrument()
    wire = _plain(_message([PREFIX, MODEL_BOUND]))

    async def call() -> None:
        await wire.async_anthropic().messages.create(model=MODEL, max_tokens=16, messages=Q)

    asyncio.run(call())
    assert _events(otel) == BOTH_EVENTS
    assert _points(otel) == BOTH_POINTS


@pytest.mark.parametrize(
    "consume", [lambda w: _create(w, stream=True), _helper], ids=["create-stream", "stream-helper"]
)
def test_streamed_response_records_start_and_delta_entries(
    instrument: Instrument, consume: Callable[[Wire], None]
) -> None:
    """A stream's message_start and message_delta entries are recorded, in order, through either SDK path."""
    otel = instrument()
    consume(_streamed(_stream([PREFIX], [MODEL_BOUND])))
    assert _events(otel) == BOTH_EVENTS
    assert _points(otel) == BOTH_POINTS


def test_an_entry_in_both_start_and_delta_is_counted_once(instrument: Instrument) -> None:
    """The same entry listed in message_start and message_delta gives one event and a point of 1."""
    otel = instrument()
    _create(_streamed(_stream([PREFIX], [dict(PREFIX)])), stream=True)
    assert _events(otel) == BOTH_EVENTS[:1]
    assert _points(otel) == {("thinking_dropped", "prefix_binding_mismatch"): 1.0}


def test_two_responses_add_up_by_reason(instrument: Instrument) -> None:
    """Each response's entries are counted: two responses with the same reason give a point of 2."""
    otel = instrument()
    wire = _plain(_message([PREFIX]))
    _create(wire, stream=False)
    _create(wire, stream=False)
    assert _points(otel) == {("thinking_dropped", "prefix_binding_mismatch"): 2.0}


def test_unknown_type_and_reason_are_other_on_the_counter_and_as_sent_on_the_event(instrument: Instrument) -> None:
    """Values outside the known sets are ``other`` as labels; the event keeps the provider's strings."""
    otel = instrument()
    unknown = [a_dropped("messages.1", "cache_policy"), a_dropped("messages.3", "new_reason", "new_kind")]
    _create(_plain(_message(unknown)), stream=False)
    assert _events(otel) == [
        ("thinking_dropped", "cache_policy", "messages.1", LANE),
        ("new_kind", "new_reason", "messages.3", LANE),
    ]
    assert _points(otel) == {("thinking_dropped", "other"): 1.0, ("other", "other"): 1.0}


@pytest.mark.parametrize(
    ("wire", "stream"),
    [
        (lambda: _plain(_message([])), False),
        (lambda: _plain(_message(None)), False),
        (lambda: _plain(_message("thinking_dropped")), False),
        (lambda: _streamed(_stream([], [])), True),
        (lambda: _streamed(_stream(None, None)), True),
    ],
    ids=["plain empty", "plain null", "plain not a list", "stream empty", "stream absent"],
)
def test_no_entries_record_nothing(instrument: Instrument, wire: Callable[[], Wire], stream: bool) -> None:
    """An empty, null, absent or unreadable list records no event, no point and no error; the call succeeds."""
    otel = instrument()
    _create(wire(), stream=stream)
    assert otel.events(names.EVENT_INPUT_TRANSFORMATION) == []
    assert otel.points(names.INPUT_TRANSFORMATIONS.name) == []
    assert otel.points(names.INSTRUMENTATION_ERRORS.name) == []
    assert otel.call_spans()


def test_no_zero_point_is_created_at_instrument_time(instrument: Instrument) -> None:
    """Like the other counters (all but the lossy projections), no zero point exists before a response."""
    otel = instrument()
    assert otel.points(names.INPUT_TRANSFORMATIONS.name) == []
    assert otel.points(names.LOSSY_PROJECTIONS.name)


RECORDED: Final = {
    "input_transformations_delta_response.txt": BOTH_POINTS,
    "input_transformations_empty_delta_response.txt": {("thinking_dropped", "model_binding_mismatch"): 1.0},
    "input_transformations_start_only_response.txt": {("thinking_dropped", "model_binding_mismatch"): 1.0},
}


@pytest.mark.parametrize("name", sorted(RECORDED))
@pytest.mark.parametrize(
    "consume", [lambda w: _create(w, stream=True), _helper], ids=["create-stream", "stream-helper"]
)
def test_recorded_streams_are_recorded(instrument: Instrument, name: str, consume: Callable[[Wire], None]) -> None:
    """Each recorded stream, through the real SDK: its entries as events and its points by reason."""
    body = (shared_dir() / "fixtures" / "recorded" / "anthropic" / name).read_bytes()
    otel = instrument()
    consume(_streamed(body))
    assert _points(otel) == RECORDED[name]
    events = otel.events(names.EVENT_INPUT_TRANSFORMATION)
    assert len(events) == sum(RECORDED[name].values())
    assert all(e[names.INPUT_TRANSFORMATION_PATH].startswith("messages.") for e in events)


def test_recorded_delta_stream_events_carry_the_recorded_values(instrument: Instrument) -> None:
    """The recorded start-and-delta stream: both entries' type, reason and path exactly as recorded."""
    body = (
        shared_dir() / "fixtures" / "recorded" / "anthropic" / "input_transformations_delta_response.txt"
    ).read_bytes()
    otel = instrument()
    _create(_streamed(body), stream=True)
    assert _events(otel) == BOTH_EVENTS
