"""Exporters ``init`` creates: one that raises or hangs leaves every call unchanged and moves the error counter."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY, attach, detach, get_value, set_value
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    InMemoryMetricReader,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_toolturn.instrument import _count_export_error, _setup, names
from otel_toolturn.instrument._exporters import CountingMetricExporter, CountingSpanExporter
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.test_faults import BoomError, _call

RESOURCE = Resource.create({"service.name": "exporter-faults"})


def _errors(otel: Otel, stage: str, error_type: str | None = None) -> float:
    match: dict[str, object] = {"toolturn__error__stage": stage}
    if error_type is not None:
        match["error__type"] = error_type
    return otel.total(names.INSTRUMENTATION_ERRORS.name, **match)


class _RaisingSpans(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        del spans
        raise BoomError("export")


class _HangingSpans(SpanExporter):
    """Blocks every export until released (the test releases it before it ends)."""

    release = threading.Event()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        del spans
        self.release.wait()
        return SpanExportResult.SUCCESS


class _RaisingLogs(LogRecordExporter):
    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        del batch
        raise BoomError("export")

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        del timeout_millis
        return True


class _RaisingMetrics(MetricExporter):
    def export(
        self,
        metrics_data: MetricsData,
        timeout_millis: float = 10_000,
        **kwargs: Any,
    ) -> MetricExportResult:
        del metrics_data, timeout_millis, kwargs
        raise BoomError("export")

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        del timeout_millis
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        del timeout_millis, kwargs


@pytest.fixture
def hanging() -> Iterator[type[_HangingSpans]]:
    """The hanging exporter class, released (and its abandoned exports finished) when the test ends."""
    _HangingSpans.release = threading.Event()
    yield _HangingSpans
    _HangingSpans.release.set()
    for thread in threading.enumerate():
        if thread.name == "otel-toolturn-span_export":
            thread.join()


def test_span_exporter_that_raises(instrument: Instrument, otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    """A span exporter init created raising: the caller's results are unchanged; counted as ``span_export``."""
    plain = [_call(stream=False)[0], _call(stream=True)[0]]
    monkeypatch.setattr(_setup, "_exporter", lambda _environ, _signal, _name: _RaisingSpans())
    otel.tracer_provider = _setup.tracer_provider({"OTEL_TRACES_EXPORTER": "console"}, RESOURCE, _count_export_error)
    instrument()
    assert [_call(stream=False)[0], _call(stream=True)[0]] == plain
    assert otel.tracer_provider.force_flush()
    assert _errors(otel, "span_export", "BoomError") == 1
    otel.tracer_provider.shutdown()


def test_span_exporter_that_hangs(
    instrument: Instrument, otel: Otel, monkeypatch: pytest.MonkeyPatch, hanging: type[_HangingSpans]
) -> None:
    """A span exporter hanging behind the batch processor: calls complete unchanged, the flush returns, counted."""
    plain = _call(stream=False)[0]
    monkeypatch.setattr(_setup, "_exporter", lambda _environ, _signal, _name: hanging())
    environ = {"OTEL_TRACES_EXPORTER": "console", "OTEL_BSP_EXPORT_TIMEOUT": "20"}
    otel.tracer_provider = _setup.tracer_provider(environ, RESOURCE, _count_export_error)
    instrument()
    results = [_call(stream=False)[0] for _ in range(3)]
    assert otel.tracer_provider.force_flush()  # the hung export is abandoned at its 20 ms deadline
    results += [_call(stream=False)[0] for _ in range(3)]
    assert otel.tracer_provider.force_flush()  # still hung: the batch is answered FAILURE at once
    assert results == [plain] * 6
    assert _errors(otel, "span_export", "TimeoutError") == 2
    hanging.release.set()
    otel.tracer_provider.shutdown()


def test_log_exporter_that_raises(instrument: Instrument, otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log exporter init created raising on the repair events' records: results unchanged; ``log_export`` counted."""
    plain = _call(stream=False)[0]
    monkeypatch.setattr(_setup, "_exporter", lambda _environ, _signal, _name: _RaisingLogs())
    otel.logger_provider = _setup.logger_provider({"OTEL_LOGS_EXPORTER": "console"}, RESOURCE, _count_export_error)
    instrument()
    assert _call(stream=False)[0] == plain
    assert otel.logger_provider.force_flush()
    assert _errors(otel, "log_export", "BoomError") == 1
    otel.logger_provider.shutdown()


def test_metric_exporter_that_raises(instrument: Instrument, otel: Otel) -> None:
    """A metric exporter wrapped as init wraps it, raising: results unchanged; counted as ``metric_export``."""
    plain = _call(stream=False)[0]
    exporter = CountingMetricExporter(_RaisingMetrics(), on_error=_count_export_error)
    periodic = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
    otel.metric_reader = InMemoryMetricReader()
    otel.meter_provider = MeterProvider(metric_readers=[otel.metric_reader, periodic])
    instrument()
    assert _call(stream=False)[0] == plain
    assert otel.meter_provider.force_flush()
    assert _errors(otel, "metric_export", "BoomError") == 1
    otel.meter_provider.shutdown()


class _Flaky(SpanExporter):
    def __init__(self, *, flushed: bool) -> None:
        self.flushed = flushed
        self.suppressed: list[object] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        del spans
        self.suppressed.append(get_value(_SUPPRESS_INSTRUMENTATION_KEY))
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        del timeout_millis
        if not self.flushed:
            return False
        raise BoomError("flush")

    def shutdown(self) -> None:
        raise BoomError("shutdown")


def test_flush_and_shutdown_failures_are_counted_never_raised() -> None:
    """A flush that raises or does not complete and a shutdown that raises: each counted, none raised."""
    seen: list[tuple[str, str]] = []

    def count(stage: names.ErrorStage, exc: BaseException) -> None:
        seen.append((stage, type(exc).__name__))

    raising = CountingSpanExporter(_Flaky(flushed=True), on_error=count)
    incomplete = CountingSpanExporter(_Flaky(flushed=False), on_error=count)
    assert raising.force_flush() is False
    assert incomplete.force_flush() is False
    raising.shutdown()
    assert seen == [("span_export", "BoomError"), ("span_export", "TimeoutError"), ("span_export", "BoomError")]


def test_export_runs_in_the_processors_context() -> None:
    """The wrapped export sees the processor's suppress-instrumentation flag (no spans about exporting)."""
    inner = _Flaky(flushed=True)
    exporter = CountingSpanExporter(inner, on_error=lambda _stage, _exc: None)
    token = attach(set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
    try:
        assert exporter.export([]) is SpanExportResult.SUCCESS
    finally:
        detach(token)
    assert inner.suppressed == [True]


def test_a_hung_exporter_is_used_again_once_it_returns(hanging: type[_HangingSpans]) -> None:
    """After a hang, batches fail fast while the export still runs, and go to the exporter again once it returned."""
    seen: list[str] = []
    exporter = CountingSpanExporter(
        hanging(), on_error=lambda _stage, exc: seen.append(type(exc).__name__), deadline_s=0.01
    )
    assert exporter.export([]) is SpanExportResult.FAILURE
    assert exporter.export([]) is SpanExportResult.FAILURE
    hanging.release.set()
    for thread in threading.enumerate():
        if thread.name == "otel-toolturn-span_export":
            thread.join()
    assert exporter.export([]) is SpanExportResult.SUCCESS
    assert seen == ["TimeoutError", "TimeoutError"]


def test_the_providers_init_creates_wrap_their_exporters() -> None:
    """Each exporter built from the ``OTEL_*`` variables sits behind its processor wrapped (the counting one)."""
    made = _setup.tracer_provider({"OTEL_TRACES_EXPORTER": "console"}, RESOURCE)
    processors = made._active_span_processor._span_processors
    assert [type(p._batch_processor._exporter) for p in processors] == [CountingSpanExporter]  # type: ignore[attr-defined]
    made.shutdown()


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("otlp_proto_grpc", "opentelemetry.exporter.otlp.proto.grpc.trace_exporter"),
        ("otlp_proto_http", "opentelemetry.exporter.otlp.proto.http.trace_exporter"),
        ("console", "opentelemetry.sdk.trace.export"),
    ],
)
def test_any_exporter_registered_with_the_sdk_is_made_by_its_name(name: str, module: str) -> None:
    """``OTEL_TRACES_EXPORTER`` names resolve through the SDK's entry points, as its own configuration does."""
    provider = _setup.tracer_provider({"OTEL_TRACES_EXPORTER": name}, RESOURCE)
    try:
        processors = provider._active_span_processor._span_processors
        (processor,) = processors
        exporter = processor._batch_processor._exporter  # type: ignore[attr-defined]
        assert type(exporter.exporter).__module__ == module
    finally:
        provider.shutdown()


def test_an_exporter_name_nothing_registers_is_left_out_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """An unknown ``OTEL_TRACES_EXPORTER`` name makes no exporter and says so once."""
    with caplog.at_level("WARNING", logger="otel_toolturn.instrument"):
        provider = _setup.tracer_provider({"OTEL_TRACES_EXPORTER": "no_such_exporter"}, RESOURCE)
    provider.shutdown()
    assert [r.getMessage() for r in caplog.records] == [
        "otel-toolturn: no OTEL_TRACES_EXPORTER 'no_such_exporter' is installed; ignored"
    ]
