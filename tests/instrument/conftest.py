"""Fixtures: real OpenTelemetry SDK providers with in-memory exporters, and the instrumentation on/off."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_toolturn.instrument import Options, ToolTurnInstrumentor


@dataclass
class Otel:
    """Providers wired to in-memory exporters, and readers of what they hold."""

    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    logger_provider: LoggerProvider
    span_exporter: InMemorySpanExporter
    metric_reader: InMemoryMetricReader
    log_exporter: InMemoryLogRecordExporter

    def spans(self) -> list[ReadableSpan]:
        return list(self.span_exporter.get_finished_spans())

    def call_spans(self) -> list[ReadableSpan]:
        """Spans that carry a call's telemetry (ours, or the SDK's own that we added to)."""
        return [s for s in self.spans() if s.attributes and "toolturn.lane" in s.attributes]

    def events(self, name: str) -> list[dict[str, Any]]:
        """The attributes of every span event named ``name``, in order."""
        return [dict(e.attributes or {}) for s in self.spans() for e in s.events if e.name == name]

    def logs(self, name: str | None = None) -> list[ReadableLogRecord]:
        records = list(self.log_exporter.get_finished_logs())
        return [r for r in records if name is None or r.log_record.event_name == name]

    def points(self, name: str) -> list[tuple[dict[str, object], float]]:
        """Every data point of metric ``name``: its attributes and value (a histogram gives its count)."""
        data = self.metric_reader.get_metrics_data()
        out: list[tuple[dict[str, object], float]] = []
        if data is None:
            return out
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name != name:
                        continue
                    for point in metric.data.data_points:
                        value = getattr(point, "value", getattr(point, "count", 0))
                        out.append((dict(point.attributes or {}), float(value)))
        return out

    def total(self, name: str, **match: object) -> float:
        """The sum of metric ``name`` over points whose attributes include ``match`` (dots as ``__``)."""
        wanted = {k.replace("__", "."): v for k, v in match.items()}
        return sum(v for attrs, v in self.points(name) if all(attrs.get(k) == w for k, w in wanted.items()))


def make_otel() -> Otel:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    logs = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    return Otel(tracer_provider, meter_provider, logger_provider, spans, reader, logs)


@pytest.fixture
def otel() -> Otel:
    """Fresh providers with in-memory exporters."""
    return make_otel()


Instrument = Callable[..., Otel]


@pytest.fixture
def instrument(otel: Otel, caplog: pytest.LogCaptureFixture) -> Iterator[Instrument]:
    """Instrument with the given ``Options`` fields into ``otel``; uninstrument afterwards.

    Also proves no span was ended twice (the SDK logs a warning when that happens).
    """
    instrumentor = ToolTurnInstrumentor()

    def go(**options: object) -> Otel:
        instrumentor.instrument(
            options=Options(**options),  # type: ignore[arg-type]
            tracer_provider=otel.tracer_provider,
            meter_provider=otel.meter_provider,
            logger_provider=otel.logger_provider,
        )
        return otel

    with each_span_ended_once(caplog):
        yield go
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()


@contextmanager
def each_span_ended_once(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Capture the OpenTelemetry SDK's warnings while inside; on leaving, none may say a span was ended twice."""
    with caplog.at_level(logging.WARNING, logger="opentelemetry.sdk.trace"):
        yield
    assert not [r for r in caplog.records if "ended span" in r.getMessage()]


def shared_dir() -> Path:
    """The ``shared`` folder beside the repository (recorded traffic); skip when absent."""
    path = Path(__file__).resolve().parents[2] / ".." / "shared"
    if not path.is_dir():
        pytest.skip("../shared (recorded provider traffic) is absent")
    return path


class _CutStream(httpx2.SyncByteStream):
    """A streamed body that delivers ``frames``, then its connection drops."""

    def __init__(self, frames: bytes) -> None:
        self._frames = frames

    def __iter__(self) -> Iterator[bytes]:
        yield self._frames
        raise httpx2.ReadError("connection dropped")


def cut_event_stream(frames: bytes) -> httpx2.Response:
    """A 200 event-stream response whose connection drops after ``frames``."""
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=_CutStream(frames))
