"""The recording half: one call's span, events, log records and metric points.

``_record`` (the span's life), ``_request_telemetry`` and ``_response_telemetry`` (what a request and a
response carry), ``_telemetry`` (the instruments).
"""

from __future__ import annotations

from typing import Any, Final

import anthropic
import httpx2
import pytest
from opentelemetry.trace import SpanKind

import otel_toolturn.streams
from otel_toolturn import _law
from otel_toolturn._vocab import LANES, Lane
from otel_toolturn.instrument import names
from otel_toolturn.instrument._config import LANES_OF, NAMES_OF, UNINSTRUMENTED_LANES, Options
from otel_toolturn.instrument._record import CallRecord
from otel_toolturn.instrument._telemetry import Telemetry
from otel_toolturn.streams._report import StreamReport
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.wire import MODEL, Wire
from tests.openai_bodies import chat_envelope
from tests.transcripts import A, R, U, build, c

LANE: Final[Lane] = "openai.chat_completions"
THREE_MISSING = build(
    LANE,
    [
        U("a"),
        A(c("c1"), c("c2")),
        R("c1"),
        U("b"),
        A(c("c3"), c("c4")),
        R("c3"),
        U("c"),
        A(c("c5"), c("c6")),
        R("c5"),
        U("d"),
    ],
)
"""Three turns, each with a call whose result is missing: three repairs of one form."""


def test_repairs_of_one_form_give_an_event_and_log_record_each_and_one_counter_total(instrument: Instrument) -> None:
    """Repairs of one form: one span event and one log record per repair (the span's), the counter totals them."""
    expected = _law.ensure_tool_turn_invariants(THREE_MISSING, lane=LANE).repairs
    assert len(expected) == 3
    assert {r.form for r in expected} == {"missing_result"}
    otel = instrument()
    Wire().openai().chat.completions.create(model=MODEL, messages=THREE_MISSING)
    (span,) = otel.call_spans()
    events = otel.events(names.EVENT_REPAIR)
    assert [e[names.REPAIR_TOOL_CALL_IDS] for e in events] == [r.tool_call_ids for r in expected]
    logs = otel.logs(names.EVENT_REPAIR)
    assert [dict(r.log_record.attributes or {}) for r in logs] == events
    assert {(r.log_record.trace_id, r.log_record.span_id) for r in logs} == {
        (span.context.trace_id, span.context.span_id)
    }
    assert otel.total(names.REPAIRS.name, toolturn__repair__form="missing_result", toolturn__lane=LANE) == 3
    assert span.attributes is not None
    assert span.attributes[names.REPAIRS_COUNT] == 3
    assert span.attributes[names.REPAIRS_FORMS] == ("missing_result",)


def _rejecting(lane: object, body: dict[str, object]) -> httpx2.Response:
    del lane, body
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    return httpx2.Response(400, json=error)


def test_a_failed_call_keeps_its_request_attributes_beside_the_error(instrument: Instrument) -> None:
    """A call the provider rejects: its span carries the request's attributes beside ``error.type``."""
    otel = instrument()
    with pytest.raises(anthropic.BadRequestError):
        Wire(responder=_rejecting).anthropic().messages.create(
            model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "q"}]
        )
    (span,) = otel.call_spans()
    assert span.attributes is not None
    assert span.attributes[names.ERROR_TYPE] == "BadRequestError"
    assert span.attributes[names.REPAIRS_COUNT] == 0
    assert span.attributes[names.GEN_AI_REQUEST_MODEL] == MODEL


def test_a_stream_span_gets_request_and_response_attributes(instrument: Instrument) -> None:
    """A streamed call's own span ends with the request's attributes and the response's, each once."""
    otel = instrument()
    chunks = Wire().openai().chat.completions.create(model=MODEL, messages=THREE_MISSING, stream=True)
    for _ in chunks:
        assert otel.call_spans() == []
    (span,) = otel.call_spans()
    assert span.attributes is not None
    assert span.attributes[names.REPAIRS_COUNT] == 3
    assert span.attributes[names.GEN_AI_RESPONSE_MODEL] == MODEL
    assert names.FINGERPRINT_PREFIX in span.attributes


class _Counting:
    """An observer that counts what it is fed and refuses events after its ``finish``."""

    def __init__(self, real: Any) -> None:
        self.real, self.fed, self.finished = real, 0, False

    def feed(self, event: object) -> None:
        assert not self.finished, "fed after finish"
        self.fed += 1
        self.real.feed(event)

    def finish(self) -> StreamReport:
        self.finished = True
        report: StreamReport = self.real.finish()
        return report


def test_stream_events_reach_the_observer_until_the_call_finishes(
    instrument: Instrument, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each event read is fed once; once the call finished (its response closed mid-read) none is fed, none fails."""
    otel = instrument()
    real = otel_toolturn.streams.observer_for
    made: list[_Counting] = []

    def counting(lane: Any, *, requested_model: str | None) -> _Counting:
        made.append(_Counting(real(lane, requested_model=requested_model)))
        return made[-1]

    monkeypatch.setattr(otel_toolturn.streams, "observer_for", counting)
    client = Wire().openai()
    read = sum(1 for _ in client.chat.completions.create(model=MODEL, messages=THREE_MISSING, stream=True))
    assert made[0].fed == read > 1
    stream = client.chat.completions.create(model=MODEL, messages=THREE_MISSING, stream=True)
    after = 0
    for index, _ in enumerate(stream):
        if index == 0:
            stream.response.close()
        else:
            after += 1
    assert after > 0
    assert made[1].finished
    assert made[1].fed == 1
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0
    assert len(otel.call_spans()) == 2


def test_label_sets_cover_every_lane_of_every_provider(otel: Otel) -> None:
    """The prebuilt metric attribute sets are keyed by the whole lane vocabulary, each with its provider and mode."""
    telemetry = Telemetry(
        options=Options(mode="observe"),
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        logger_provider=otel.logger_provider,
    )
    for sdk, lanes in LANES_OF.items():
        for lane, provider in ((lane, name) for lane in lanes for name in NAMES_OF[sdk]):
            labels = telemetry.labels(lane, provider)
            assert labels.base == {names.LANE: lane, names.PROVIDER: provider}
            assert labels.requests == {names.LANE: lane, names.PROVIDER: provider, names.MODE: "observe"}
            one = labels.with_((names.REPAIR_FORM, "late_result"), (names.REPAIR_LOSSY, False))
            assert one == {**labels.base, names.REPAIR_FORM: "late_result", names.REPAIR_LOSSY: False}
            assert labels.with_((names.REPAIR_FORM, "late_result"), (names.REPAIR_LOSSY, False)) is one
    assert {lane for lanes in LANES_OF.values() for lane in lanes} == set(LANES) - UNINSTRUMENTED_LANES


def _telemetry(otel: Otel) -> Telemetry:
    return Telemetry(
        options=Options(),
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        logger_provider=otel.logger_provider,
    )


@pytest.mark.parametrize("read", [0, 1], ids=["never-read", "read"])
def test_another_s_span_ended_mid_stream_waits_for_the_stream_s_end_once_read(otel: Otel, read: int) -> None:
    """Another's span ended while its stream is read ends once, after the torn flag; one never read is not held."""
    their = otel.tracer_provider.get_tracer("their-genai").start_span(
        f"chat {MODEL}", kind=SpanKind.CLIENT, attributes={names.GEN_AI_OPERATION_NAME: "chat"}
    )
    record = CallRecord(
        _telemetry(otel), lane=LANE, provider="openai", requested_model=MODEL, server_address="h", other_span=their
    )
    record.start_stream()
    for _ in range(read):
        record.feed(chat_envelope(MODEL, [{"index": 0, "delta": {"content": "hi"}}], chunk=True))
    their.end()  # the owner's stream wrapper, beneath ours, ends its span at its own stream's end
    assert len(otel.spans()) == 1 - read  # held while the stream's end has not reached us
    record.finish()  # the stream ended without its final frame
    (span,) = otel.spans()
    assert (span.attributes or {}).get(names.STREAM_TORN) is (True if read else None)
    assert "end" not in vars(their)  # the owner's own ``end`` again
    record.finish()
    assert len(otel.spans()) == 1
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0
