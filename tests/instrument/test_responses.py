"""What responses tell, recorded: stream drops, torn streams, model substitutions, handoffs, per lane."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import httpx2
import pytest

from otel_toolturn import Lane
from otel_toolturn.instrument import names
from tests.instrument.conftest import Instrument, shared_dir
from tests.instrument.wire import MODEL, Call, Wire, respond

LANES: Final[tuple[Lane, ...]] = ("anthropic.messages", "openai.chat_completions", "openai.responses")
Q: Final = [{"role": "user", "content": "go"}]
SSE: Final = {"content-type": "text/event-stream"}


def _consume(wire: Wire, lane: Lane, *, stream: bool) -> None:
    """One call in ``lane`` read to its end (a cut stream is read as far as it goes)."""
    if lane == "anthropic.messages":
        result: Any = wire.anthropic().messages.create(model=MODEL, max_tokens=16, messages=Q, stream=stream)
    elif lane == "openai.chat_completions":
        result = wire.openai().chat.completions.create(model=MODEL, messages=Q, stream=stream)
    else:
        result = wire.openai().responses.create(model=MODEL, input=Q, stream=stream)
    if stream:
        for _ in result:
            pass


@pytest.mark.parametrize("lane", LANES)
def test_cut_stream_is_torn_and_its_call_dropped(instrument: Instrument, lane: Lane) -> None:
    """A stream cut inside a tool call's arguments: a torn event and counter, and a ``truncated`` drop."""
    otel = instrument()
    wire = Wire(responder=lambda ln, _body: respond(ln, stream=True, calls=[Call("call_1", "f", '{"a": 1')], cut=True))
    _consume(wire, lane, stream=True)
    assert otel.events(names.EVENT_STREAM_TORN)
    assert otel.total(names.STREAM_TORN_COUNT.name, toolturn__lane=lane) == 1
    drops = otel.events(names.EVENT_STREAM_DROP)
    assert [d[names.STREAM_DROP_CAUSE] for d in drops if d] == ["truncated"]
    assert otel.total(names.STREAM_DROPS.name, toolturn__stream__drop__cause="truncated") == 1
    (span,) = otel.call_spans()
    assert span.attributes is not None
    assert span.attributes[names.STREAM_TORN] is True


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_whole_response_records_the_genai_attributes(instrument: Instrument, lane: Lane, stream: bool) -> None:
    """A whole response: id, model, usage on the span (Chat streams send no usage unless asked); not torn."""
    otel = instrument()
    wire = Wire(
        responder=lambda ln, body: respond(ln, stream=bool(body.get("stream")), calls=[Call("call_1", "f", '{"a": 1}')])
    )
    _consume(wire, lane, stream=stream)
    (span,) = otel.call_spans()
    attributes = span.attributes
    assert attributes is not None
    assert attributes[names.GEN_AI_RESPONSE_MODEL] == MODEL
    assert attributes[names.GEN_AI_RESPONSE_ID]
    chat_stream = stream and lane == "openai.chat_completions"
    assert attributes.get(names.GEN_AI_USAGE_OUTPUT_TOKENS) == (None if chat_stream else 7)
    assert attributes.get(names.STREAM_TORN) is None
    assert otel.events(names.EVENT_STREAM_DROP) == []
    assert otel.events(names.EVENT_STREAM_TORN) == []


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_substituted_model_is_recorded(instrument: Instrument, lane: Lane, stream: bool) -> None:
    """A response from another model than requested: a ``toolturn.response_model`` event and counter."""
    otel = instrument()
    wire = Wire(responder=lambda ln, body: respond(ln, stream=bool(body.get("stream")), model="model-b"))
    _consume(wire, lane, stream=stream)
    (event,) = otel.events(names.EVENT_RESPONSE_MODEL)
    assert event is not None
    assert event[names.RESPONSE_MODEL_REQUESTED] == MODEL
    assert event[names.RESPONSE_MODEL_REPORTED] == "model-b"
    assert otel.total(names.MODEL_SUBSTITUTIONS.name, toolturn__lane=lane) == 1


@pytest.mark.parametrize("lane", LANES)
def test_two_handoff_calls_are_refused_and_each_seen(instrument: Instrument, lane: Lane) -> None:
    """Two calls matching a handoff pattern: one refused event and point, then one handoff event and point each."""
    otel = instrument(handoff_tools=("transfer_to_*",))
    calls = [Call("call_1", "transfer_to_billing"), Call("call_2", "transfer_to_support"), Call("call_3", "lookup")]
    wire = Wire(responder=lambda ln, body: respond(ln, stream=bool(body.get("stream")), calls=calls))
    _consume(wire, lane, stream=True)
    (refused,) = otel.events(names.EVENT_HANDOFF_REFUSED)
    assert refused is not None
    assert refused[names.HANDOFF_COUNT] == 2
    seen = otel.events(names.EVENT_HANDOFF)
    assert [(e[names.HANDOFF_TOOL], e[names.HANDOFF_CALL_ID]) for e in seen if e] == [
        ("transfer_to_billing", "call_1"),
        ("transfer_to_support", "call_2"),
    ]
    assert otel.total(names.HANDOFFS_REFUSED.name, toolturn__lane=lane) == 1
    assert otel.total(names.HANDOFFS.name, toolturn__lane=lane) == 2


def test_one_handoff_call_is_not_refused(instrument: Instrument) -> None:
    """A single handoff call gives its ``toolturn.handoff`` event and no refusal."""
    otel = instrument(handoff_tools=("handoff",))
    wire = Wire(responder=lambda ln, _body: respond(ln, stream=False, calls=[Call("call_1", "handoff")]))
    _consume(wire, "openai.chat_completions", stream=False)
    assert len(otel.events(names.EVENT_HANDOFF)) == 1
    assert otel.events(names.EVENT_HANDOFF_REFUSED) == []


def test_recorded_anthropic_stream_with_cut_arguments(instrument: Instrument) -> None:
    """The recorded stream whose tool arguments stop mid-string: a ``truncated`` drop through the real SDK."""
    recording = shared_dir() / "fixtures" / "recorded" / "anthropic" / "incomplete_partial_json_response.txt"
    body = recording.read_bytes()
    otel = instrument()

    def replay(lane: Lane, request: dict[str, object]) -> Any:
        del lane, request
        return httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})

    _consume(Wire(responder=replay), "anthropic.messages", stream=True)
    assert "truncated" in [d[names.STREAM_DROP_CAUSE] for d in otel.events(names.EVENT_STREAM_DROP) if d]


def _recorded_anthropic_streams() -> list[Path]:
    folder = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "recorded" / "anthropic"
    return sorted([*folder.glob("*.txt"), *folder.glob("*.sse")]) if folder.is_dir() else []


def _read_all(body: bytes) -> str:
    wire = Wire(responder=lambda _lane, _body: httpx2.Response(200, content=body, headers=SSE))
    client = wire.anthropic(open_telemetry={"traces": {"enabled": False}})
    try:
        events = [e.type for e in client.messages.create(model=MODEL, max_tokens=16, messages=Q, stream=True)]
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return " ".join(events)


@pytest.mark.parametrize("recording", _recorded_anthropic_streams(), ids=lambda p: p.name)
def test_recorded_anthropic_streams_pass_through_unchanged(instrument: Instrument, recording: Path) -> None:
    """Every recorded Anthropic stream: the same events (or error) as uninstrumented; no internal error."""
    shared_dir()
    body = recording.read_bytes()
    plain = _read_all(body)
    otel = instrument()
    assert _read_all(body) == plain
    assert len(otel.call_spans()) == 1
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0
