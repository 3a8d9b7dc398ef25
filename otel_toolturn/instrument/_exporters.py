"""The exporters ``init`` creates, each wrapped so that a failing or hanging one is counted.

Role: the OpenTelemetry SDK's batch processors and metric readers catch an exporter's exception
and log it; nothing counts it. An exporter that hangs holds the processor's worker thread, and
every flush queued behind it, for as long as it hangs. ``_setup`` wraps every exporter it
creates from the ``OTEL_*`` variables (never one the application configured) in one of the thin
delegating exporters below, which:

- run each ``export`` on a short-lived thread (in the caller's context, so the processor's
  suppress-instrumentation flag still holds) and wait for it up to the export deadline;
- count an export that raises in ``toolturn.instrumentation.errors`` (stage ``span_export``,
  ``metric_export`` or ``log_export``; ``error.type`` the exception's class) and answer FAILURE
  instead of raising;
- count an export still running at its deadline (a hang) with ``error.type`` ``TimeoutError``
  and answer FAILURE, so the processor moves on. While that export still runs, no batch is
  handed to the exporter (one export at a time, as the SDK promises exporters): each is counted
  the same way and answered FAILURE at once. When the hung export returns, exporting resumes;
- count a ``force_flush`` that raises or reports it did not complete, and a ``shutdown`` that
  raises (neither raises).

An export that returns FAILURE on its own (a collector down) is the exporter's normal report
and is not counted. The count itself goes through ``on_error``, which never raises.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final, Generic, TypeVar

from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_toolturn.instrument import names

_log = logging.getLogger("otel_toolturn.instrument")

OnError = Callable[[names.ErrorStage, BaseException], None]
"""Counts one error (``Telemetry.error``'s signature)."""

DEFAULT_DEADLINE_S: Final = 30.0
"""The export deadline when no variable sets one (the SDK's own default export timeout)."""

_R = TypeVar("_R")


class _Bounded(Generic[_R]):
    """One exporter's calls, each export bounded by a deadline (see the module docstring)."""

    def __init__(self, stage: names.ErrorStage, on_error: OnError, failure: _R) -> None:
        self.stage = stage
        self._on_error = on_error
        self._failure = failure
        self._lock = threading.Lock()
        self._hung: threading.Thread | None = None

    def error(self, exc: BaseException) -> None:
        """Count ``exc`` for this exporter's stage; never raises."""
        try:
            self._on_error(self.stage, exc)
        except Exception:  # noqa: BLE001 - the last guard: nothing may escape into the SDK
            _log.debug("otel-toolturn: could not count an exporter error", exc_info=True)

    def export(self, call: Callable[[], _R], deadline_s: float) -> _R:
        """``call()``'s result, or FAILURE (counted) when it raises or is still running at the deadline."""
        with self._lock:
            hung = self._hung
            if hung is not None and hung.is_alive():
                busy = True
            else:
                busy, self._hung = False, None
        if busy:
            self.error(TimeoutError("the exporter's previous export is still running"))
            return self._failure
        results: list[_R] = []
        errors: list[BaseException] = []
        context = contextvars.copy_context()

        def run() -> None:
            try:
                results.append(context.run(call))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, counted there
                errors.append(exc)

        worker = threading.Thread(target=run, name=f"otel-toolturn-{self.stage}", daemon=True)
        worker.start()
        worker.join(deadline_s)
        if worker.is_alive():
            with self._lock:
                self._hung = worker
            self.error(TimeoutError(f"export still running after its {deadline_s:g} s deadline"))
            return self._failure
        if errors:
            self.error(errors[0])
            return self._failure
        return results[0] if results else self._failure

    def flush(self, call: Callable[[], bool]) -> bool:
        """``call()`` (a ``force_flush``): ``False`` (counted) when it raises or reports it did not complete."""
        try:
            done = call()
        except Exception as exc:  # noqa: BLE001 - an exporter's failure never reaches the SDK or the caller
            self.error(exc)
            return False
        if done is False:
            self.error(TimeoutError("the exporter's flush did not complete"))
        return done

    def shutdown(self, call: Callable[[], object]) -> None:
        """``call()`` (a ``shutdown``), counted when it raises."""
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - an exporter's failure never reaches the SDK or the caller
            self.error(exc)


class CountingSpanExporter(SpanExporter):
    """A span exporter whose failures and hangs are counted (stage ``span_export``)."""

    def __init__(self, exporter: SpanExporter, *, on_error: OnError, deadline_s: float = DEFAULT_DEADLINE_S) -> None:
        self.exporter = exporter
        self._deadline_s = deadline_s
        self._bounded = _Bounded("span_export", on_error, SpanExportResult.FAILURE)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self._bounded.export(lambda: self.exporter.export(spans), self._deadline_s)

    def shutdown(self) -> None:
        self._bounded.shutdown(self.exporter.shutdown)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._bounded.flush(lambda: self.exporter.force_flush(timeout_millis))


class CountingLogRecordExporter(LogRecordExporter):
    """A log record exporter whose failures and hangs are counted (stage ``log_export``)."""

    def __init__(
        self, exporter: LogRecordExporter, *, on_error: OnError, deadline_s: float = DEFAULT_DEADLINE_S
    ) -> None:
        self.exporter = exporter
        self._deadline_s = deadline_s
        self._bounded = _Bounded("log_export", on_error, LogRecordExportResult.FAILURE)

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        return self._bounded.export(lambda: self.exporter.export(batch), self._deadline_s)

    def shutdown(self) -> None:
        self._bounded.shutdown(self.exporter.shutdown)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._bounded.flush(lambda: self.exporter.force_flush(timeout_millis))


class CountingMetricExporter(MetricExporter):
    """A metric exporter whose failures and hangs are counted (stage ``metric_export``).

    Keeps the wrapped exporter's preferred temporality and aggregation; the deadline of an export
    is the ``timeout_millis`` the metric reader passes (``OTEL_METRIC_EXPORT_TIMEOUT``).
    """

    def __init__(self, exporter: MetricExporter, *, on_error: OnError) -> None:
        super().__init__(
            preferred_temporality=exporter._preferred_temporality,  # passed through unchanged
            preferred_aggregation=exporter._preferred_aggregation,  # passed through unchanged
        )
        self.exporter = exporter
        self._bounded = _Bounded("metric_export", on_error, MetricExportResult.FAILURE)

    def export(
        self,
        metrics_data: MetricsData,
        timeout_millis: float = 10_000,
        **kwargs: Any,  # noqa: ANN401 - the SDK's own signature
    ) -> MetricExportResult:
        return self._bounded.export(
            lambda: self.exporter.export(metrics_data, timeout_millis=timeout_millis, **kwargs),
            timeout_millis / 1000,
        )

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self._bounded.flush(lambda: self.exporter.force_flush(timeout_millis=timeout_millis))

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:  # noqa: ANN401 - the SDK's signature
        self._bounded.shutdown(lambda: self.exporter.shutdown(timeout_millis=timeout_millis, **kwargs))
