"""Fault injection: whatever fails inside otel-toolturn, the caller's result is the uninstrumented one."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest
import wrapt
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

import otel_toolturn.streams
from otel_toolturn import _law
from otel_toolturn.instrument import ToolTurnInstrumentor, names
from otel_toolturn.instrument._patches import STATE
from otel_toolturn.streams._report import StreamReport
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.wire import MODEL, Wire
from tests.transcripts import A, R, U, build, c

BROKEN = build("openai.chat_completions", [U("go"), A(c("c1"), c("c2")), R("c1"), U("next")])


def _call(*, stream: bool) -> tuple[object, list[bytes]]:
    """One chat call (plain or streamed) and what the caller saw, with the bodies sent."""
    wire = Wire()
    client = wire.openai()
    if stream:
        chunks = client.chat.completions.create(model=MODEL, messages=BROKEN, stream=True)
        seen: object = [ch.model_dump() for ch in chunks]
    else:
        seen = client.chat.completions.create(model=MODEL, messages=BROKEN).model_dump()
    return seen, wire.bodies


def _errors(otel: Otel, stage: str) -> float:
    return otel.total(names.INSTRUMENTATION_ERRORS.name, toolturn__error__stage=stage)


class BoomError(RuntimeError):
    """The fault injected."""


def _boom(*args: object, **kwargs: object) -> Any:
    raise BoomError("injected")


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_law_failure(instrument: Instrument, monkeypatch: pytest.MonkeyPatch, stream: bool) -> None:
    """The law raising: the caller's request goes out as written, the result is unchanged, the counter moves."""
    plain = _call(stream=stream)
    otel = instrument()
    monkeypatch.setattr(_law, "ensure_tool_turn_invariants", _boom)
    assert _call(stream=stream) == plain
    assert _errors(otel, "law") == 1


class _FailingObserver:
    def feed(self, event: object) -> None:
        del event
        raise BoomError("feed")

    def finish(self) -> StreamReport:
        raise BoomError("finish")


def test_observer_failure(instrument: Instrument, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream observer raising: every event still reaches the caller unchanged; the counter moves."""
    plain = _call(stream=True)
    otel = instrument()
    monkeypatch.setattr(otel_toolturn.streams, "observer_for", lambda *_a, **_k: _FailingObserver())
    assert _call(stream=True)[0] == plain[0]
    assert _errors(otel, "stream") >= 1
    assert len(otel.call_spans()) == 1


def test_observer_factory_failure(instrument: Instrument, monkeypatch: pytest.MonkeyPatch) -> None:
    """Getting an observer raising: the stream is passed through as is; the counter moves."""
    plain = _call(stream=True)
    otel = instrument()
    monkeypatch.setattr(otel_toolturn.streams, "observer_for", _boom)
    assert _call(stream=True)[0] == plain[0]
    assert _errors(otel, "stream") == 1


def test_response_check_failure(instrument: Instrument, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole-response check raising: the result is unchanged; the counter moves; the span still ends."""
    plain = _call(stream=False)
    otel = instrument()
    monkeypatch.setattr(otel_toolturn.streams, "check_response", _boom)
    assert _call(stream=False)[0] == plain[0]
    assert _errors(otel, "response") == 1
    assert len(otel.call_spans()) == 1


class _RaisingProcessor(SpanProcessor):
    def __init__(self, *, on_start: bool = False, on_end: bool = False) -> None:
        self.start, self.end = on_start, on_end

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        del span, parent_context
        if self.start:
            raise BoomError("on_start")

    def on_end(self, span: ReadableSpan) -> None:
        del span
        if self.end:
            raise BoomError("on_end")


def _instrument_with(instrument: Instrument, otel: Otel, processor: SpanProcessor) -> Otel:
    otel.tracer_provider = TracerProvider()
    otel.tracer_provider.add_span_processor(processor)
    return instrument()


@pytest.mark.parametrize("where", ["on_start", "on_end"])
def test_span_failure(instrument: Instrument, otel: Otel, where: str) -> None:
    """A span that cannot start or end: the result is unchanged and the counter moves (stage ``span``)."""
    plain = _call(stream=False)
    otel = _instrument_with(instrument, otel, _RaisingProcessor(**{where: True}))
    assert _call(stream=False)[0] == plain[0]
    assert _errors(otel, "span") == 1


class _RaisingCounter:
    def add(self, amount: float, attributes: object = None) -> None:
        del amount, attributes
        raise BoomError("add")


def test_metric_failure(instrument: Instrument) -> None:
    """A counter that raises: the result is unchanged and the error counter moves (stage ``metric``)."""
    plain = _call(stream=False)
    otel = instrument()
    assert STATE.telemetry is not None
    STATE.telemetry._counters[names.REQUESTS.name] = _RaisingCounter()  # type: ignore[assignment]
    assert _call(stream=False)[0] == plain[0]
    assert _errors(otel, "metric") == 1


def test_event_failure(instrument: Instrument, monkeypatch: pytest.MonkeyPatch) -> None:
    """An event that cannot be emitted: the result is unchanged and the error counter moves (stage ``event``)."""
    plain = _call(stream=False)
    otel = instrument()
    assert STATE.telemetry is not None
    monkeypatch.setattr(STATE.telemetry, "_logger", type("L", (), {"emit": _boom})())
    assert _call(stream=False)[0] == plain[0]
    assert _errors(otel, "event") >= 1


class _RaisingExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        del spans
        raise BoomError("export")


class _HangingExporter(SpanExporter):
    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        del spans
        self.entered.set()
        self.release.wait()
        return SpanExportResult.SUCCESS


def test_exporter_that_raises(instrument: Instrument, otel: Otel) -> None:
    """An exporter that raises on every span: the caller's result is unchanged."""
    plain = _call(stream=True)
    _instrument_with(instrument, otel, SimpleSpanProcessor(_RaisingExporter()))
    assert _call(stream=True)[0] == plain[0]


def test_exporter_that_hangs(instrument: Instrument, otel: Otel) -> None:
    """An exporter that never returns (behind a batch processor): every call still completes unchanged."""
    plain = _call(stream=False)
    exporter = _HangingExporter()
    processor = BatchSpanProcessor(exporter, schedule_delay_millis=1, max_export_batch_size=1)
    _instrument_with(instrument, otel, processor)
    results: list[object] = [_call(stream=False)[0] for _ in range(3)]
    exporter.entered.wait()
    results += [_call(stream=False)[0] for _ in range(3)]
    assert results == [plain[0]] * 6
    exporter.release.set()
    processor.shutdown()  # type: ignore[no-untyped-call]


def test_wrapper_left_beneath_another_stays_inert(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ours undone beneath another wrapper, then exposed and instrumented again: the law runs once a call."""
    providers = {
        "tracer_provider": otel.tracer_provider,
        "meter_provider": otel.meter_provider,
        "logger_provider": otel.logger_provider,
    }
    first = ToolTurnInstrumentor()
    first.instrument(**providers)
    owner, method = next(
        (o, m) for o, m, _ in STATE.originals if getattr(o, "__qualname__", "") == "Completions" and m == "create"
    )
    ours = vars(owner)[method]
    wrapt.wrap_function_wrapper(owner, method, lambda wrapped, _instance, args, kwargs: wrapped(*args, **kwargs))
    first.uninstrument()
    assert vars(owner)[method].__wrapped__ is ours  # theirs kept, ours beneath it
    setattr(owner, method, ours)  # theirs undone as wrapt's unwrap does it: ours, left behind, is on the class again
    again = ToolTurnInstrumentor()
    try:
        again.instrument(**providers)
        monkeypatch.setattr(_law, "ensure_tool_turn_invariants", _boom)
        _call(stream=False)
        assert _errors(otel, "law") == 1
    finally:
        again.uninstrument()
        setattr(owner, method, ours.__wrapped__)
