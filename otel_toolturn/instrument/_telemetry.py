"""The instruments of one instrumentation: a tracer, one meter instrument per contract name, a logger.

Role: the only place that creates OpenTelemetry instruments. Every name comes from ``names``.
Every method that touches OpenTelemetry is guarded: a failure is counted in
``toolturn.instrumentation.errors`` (with its stage), logged at debug, and never raised.

Events go out twice, driven by what the application configured: as span events (Jaeger and
Tempo show these) and, when a logger provider is configured, as log records of the same name
(the form the OpenTelemetry specification is moving to).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from opentelemetry import metrics, trace
from opentelemetry._logs import LoggerProvider, get_logger, get_logger_provider
from opentelemetry._logs._internal import NoOpLoggerProvider, ProxyLoggerProvider
from opentelemetry.context import Context
from opentelemetry.metrics import Counter, Histogram, MeterProvider
from opentelemetry.trace import Span, TracerProvider
from opentelemetry.util.types import AttributeValue

from otel_toolturn.instrument import names
from otel_toolturn.instrument._config import LANES_OF, Options

_log = logging.getLogger("otel_toolturn.instrument")

Attributes = Mapping[str, AttributeValue]

VERSION = "0.1.0"


def _configured(provider: LoggerProvider) -> bool:
    """Whether ``provider`` is one the application set up (not the API's proxy or no-op default)."""
    return not isinstance(provider, (ProxyLoggerProvider, NoOpLoggerProvider))


class Telemetry:
    """The tracer, the contract's instruments and the optional event logger, for one ``instrument()``."""

    def __init__(
        self,
        *,
        options: Options,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        logger_provider: LoggerProvider | None = None,
    ) -> None:
        self.options = options
        self.tracer = trace.get_tracer(names.INSTRUMENTATION_NAME, VERSION, tracer_provider=tracer_provider)
        meter = metrics.get_meter(names.INSTRUMENTATION_NAME, VERSION, meter_provider=meter_provider)
        self._counters: dict[str, Counter] = {
            i.name: meter.create_counter(i.name, unit=i.unit, description=i.description)
            for i in names.INSTRUMENTS
            if i.kind == "counter"
        }
        self._law_duration: Histogram = meter.create_histogram(
            names.LAW_DURATION.name,
            unit=names.LAW_DURATION.unit,
            description=names.LAW_DURATION.description,
            explicit_bucket_boundaries_advisory=list(names.LAW_DURATION_BUCKETS),
        )
        chosen = logger_provider if logger_provider is not None else get_logger_provider()
        self._logger = (
            get_logger(names.INSTRUMENTATION_NAME, VERSION, logger_provider=chosen) if _configured(chosen) else None
        )
        for provider in options.providers:
            for lane in LANES_OF[provider]:
                self.add(names.LOSSY_PROJECTIONS, 0, {names.LANE: lane, names.PROVIDER: provider})

    def error(self, stage: names.ErrorStage, exc: BaseException) -> None:
        """Count and log (at debug) an error caught inside otel-toolturn; never raises."""
        try:
            _log.debug("otel-toolturn: %s stage failed; the call proceeds", stage, exc_info=exc)
            self._counters[names.INSTRUMENTATION_ERRORS.name].add(
                1, {names.ERROR_STAGE: stage, names.ERROR_TYPE: type(exc).__qualname__}
            )
        except Exception:  # noqa: BLE001 - the last guard: nothing may escape
            _log.debug("otel-toolturn: could not count an instrumentation error", exc_info=True)

    def add(self, instrument: names.Instrument, value: int, attributes: Attributes) -> None:
        """Add ``value`` to a counter of the contract (guarded)."""
        try:
            self._counters[instrument.name].add(value, attributes)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.error("metric", exc)

    def law_duration(self, seconds: float, attributes: Attributes) -> None:
        """Record the law's time on one request (guarded)."""
        try:
            self._law_duration.record(seconds, attributes)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.error("metric", exc)

    def event(self, span: Span | None, name: str, attributes: Attributes) -> None:
        """Emit one contract event on ``span`` and, when configured, as a log record (guarded)."""
        try:
            if span is not None and span.is_recording():
                span.add_event(name, attributes)
            if self._logger is not None:
                context: Context | None = trace.set_span_in_context(span) if span is not None else None
                self._logger.emit(event_name=name, attributes=attributes, context=context)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.error("event", exc)

    def set_attributes(self, span: Span | None, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Set the non-``None`` ``attributes`` on ``span`` (guarded)."""
        if span is None:
            return
        try:
            if span.is_recording():
                span.set_attributes({k: v for k, v in attributes.items() if v is not None})
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.error("span", exc)


def string_tuple(values: Sequence[str]) -> tuple[str, ...]:
    """An attribute value for a list of strings (OpenTelemetry takes sequences of one type)."""
    return tuple(values)
