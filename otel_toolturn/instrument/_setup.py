"""OpenTelemetry SDK providers from the standard ``OTEL_*`` variables, for apps that configured none.

Role: ``configure_missing`` looks at the providers ``init`` was handed and at the global tracer,
meter and logger providers; it creates from the environment, and makes global, only the providers
that ``to_create`` names; every provider the application handed over or set is left exactly as it
is. It returns the providers it created, so ``shutdown`` can flush and close those (and only flush
the application's own). An exporter is created only for a provider created here.

The rule (``to_create``): a tracer or meter provider is created when the application has none
(neither handed one to ``init`` nor set a global one). A logger provider is created only along
with a tracer provider: events are span events first, and their log records are a copy. So an
application that has its own tracer provider gets the events on its spans, and as log records only
on a logger provider of its own (handed over, or its global one); ``init`` then starts no log
pipeline (no OTLP log exporter, no connection to a collector) it did not ask for.

Exporters, per signal (``OTEL_TRACES_EXPORTER``, ``OTEL_METRICS_EXPORTER``,
``OTEL_LOGS_EXPORTER``; comma-separated; default ``otlp``): ``otlp`` (protocol from
``OTEL_EXPORTER_OTLP_PROTOCOL``: ``http/protobuf`` by default, or ``grpc``; endpoint and headers
read by the exporter itself from ``OTEL_EXPORTER_OTLP_*``), ``none``, and any exporter registered
in the SDK's entry-point groups (``opentelemetry_traces_exporter``, ...: ``console``,
``otlp_proto_grpc``, ``otlp_proto_http``, a vendor's), made as the SDK's own configuration makes it;
for metrics also ``prometheus`` (a scrape endpoint on ``OTEL_EXPORTER_PROMETHEUS_HOST``:
``OTEL_EXPORTER_PROMETHEUS_PORT``, default ``localhost:9464``). The resource comes from
``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``.

Every exporter created here is wrapped (``_exporters``) so that one that raises, hangs past its
deadline or fails to flush is counted in ``toolturn.instrumentation.errors``; the deadline of a
span or log export is ``OTEL_BSP_EXPORT_TIMEOUT`` / ``OTEL_BLRP_EXPORT_TIMEOUT`` (milliseconds,
default 30000), of a metric export the reader's own (``OTEL_METRIC_EXPORT_TIMEOUT``). The
application's providers, processors and exporters are never wrapped or changed.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.metadata
import logging
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, cast

from opentelemetry import _logs, metrics, trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from otel_toolturn.instrument import names
from otel_toolturn.instrument._exporters import (
    DEFAULT_DEADLINE_S,
    CountingLogRecordExporter,
    CountingMetricExporter,
    CountingSpanExporter,
    OnError,
)

_log = logging.getLogger("otel_toolturn.instrument")


@dataclass(frozen=True, kw_only=True, slots=True)
class Signals:
    """One flag per signal: traces, metrics, logs."""

    traces: bool
    metrics: bool
    logs: bool


def to_create(present: Signals) -> Signals:
    """The providers to create, from which the application has (handed to ``init`` or set globally).

    Tracer and meter providers: each one absent. Logger provider: absent, and only when the tracer
    provider is created too (see the module docstring).

    >>> to_create(Signals(traces=True, metrics=True, logs=False))
    Signals(traces=False, metrics=False, logs=False)
    >>> to_create(Signals(traces=False, metrics=False, logs=False))
    Signals(traces=True, metrics=True, logs=True)
    """
    traces = not present.traces
    return Signals(traces=traces, metrics=not present.metrics, logs=traces and not present.logs)


@dataclass(frozen=True, kw_only=True, slots=True)
class Owned:
    """The providers ``configure_missing`` created (``None``: the application's own was kept)."""

    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    logger_provider: LoggerProvider | None = None


def _ignore(stage: names.ErrorStage, exc: BaseException) -> None:
    """The ``on_error`` that counts nothing (no instrumentation to count into)."""
    del stage, exc


def _deadline(environ: Mapping[str, str], variable: str) -> float:
    """An export deadline in seconds from a milliseconds variable (else the default: unset, unreadable, not > 0)."""
    raw = environ.get(variable, "").strip()
    if not raw:
        return DEFAULT_DEADLINE_S
    try:
        millis = float(raw)
    except ValueError:
        millis = 0.0
    if not millis > 0:
        _log.warning("otel-toolturn: %s=%r is not a positive number; %g s used", variable, raw, DEFAULT_DEADLINE_S)
        return DEFAULT_DEADLINE_S
    return millis / 1000


SPAN_DEADLINE_VARIABLE: Final = "OTEL_BSP_EXPORT_TIMEOUT"
LOG_DEADLINE_VARIABLE: Final = "OTEL_BLRP_EXPORT_TIMEOUT"


def _exporters(environ: Mapping[str, str], variable: str) -> tuple[str, ...]:
    raw = environ.get(variable, "otlp")
    return tuple(w.strip().lower() for w in raw.split(",") if w.strip() and w.strip().lower() != "none")


def _grpc(environ: Mapping[str, str], signal: str) -> bool:
    protocol = environ.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL", environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", ""))
    return protocol.strip().lower() == "grpc"


_GROUPS: Final = {
    "TRACES": "opentelemetry_traces_exporter",
    "METRICS": "opentelemetry_metrics_exporter",
    "LOGS": "opentelemetry_logs_exporter",
}
"""The entry-point groups the SDK's exporters register under, per signal (the SDK's own configurator reads them)."""


def _exporter(environ: Mapping[str, str], signal: str, name: str) -> object | None:
    """The exporter registered as ``name`` for ``signal``, made with no arguments (it reads its own ``OTEL_*``).

    ``otlp`` is the OTLP exporter of the protocol ``OTEL_EXPORTER_OTLP[_<SIGNAL>]_PROTOCOL`` names
    (``http/protobuf`` by default, or ``grpc``); any other name is looked up as registered, so a vendor's
    exporter or ``otlp_proto_grpc`` works as it does under the SDK's own configuration. ``None``: no
    exporter is registered under that name (a warning says so).
    """
    if name == "otlp":
        name = "otlp_proto_grpc" if _grpc(environ, signal) else "otlp_proto_http"
    found = [e for e in importlib.metadata.entry_points(group=_GROUPS[signal]) if e.name == name]
    if not found:
        _log.warning("otel-toolturn: no OTEL_%s_EXPORTER %r is installed; ignored", signal, name)
        return None
    exporter: object = found[0].load()()
    return exporter


def _is_default(provider: object) -> bool:
    """The API's placeholder provider (nothing configured yet)."""
    return type(provider).__name__ in {
        "ProxyTracerProvider",
        "NoOpTracerProvider",
        "_ProxyMeterProvider",
        "NoOpMeterProvider",
        "ProxyLoggerProvider",
        "NoOpLoggerProvider",
    }


def tracer_provider(environ: Mapping[str, str], resource: Resource, on_error: OnError = _ignore) -> TracerProvider:
    """A tracer provider with a batch processor per ``OTEL_TRACES_EXPORTER`` exporter, each counted."""
    deadline_s = _deadline(environ, SPAN_DEADLINE_VARIABLE)
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    for name in _exporters(environ, "OTEL_TRACES_EXPORTER"):
        exporter = cast("SpanExporter | None", _exporter(environ, "TRACES", name))
        if exporter is not None:
            counted = CountingSpanExporter(exporter, on_error=on_error, deadline_s=deadline_s)
            provider.add_span_processor(BatchSpanProcessor(counted))
    return provider


def meter_provider(environ: Mapping[str, str], resource: Resource, on_error: OnError = _ignore) -> MeterProvider:
    """A meter provider with a periodic reader per ``OTEL_METRICS_EXPORTER`` exporter (each counted), or Prometheus."""
    readers: list[MetricReader] = []
    for name in _exporters(environ, "OTEL_METRICS_EXPORTER"):
        if name == "prometheus":
            readers.append(_prometheus(environ))
            continue
        exporter = cast("MetricExporter | None", _exporter(environ, "METRICS", name))
        if exporter is not None:
            readers.append(PeriodicExportingMetricReader(CountingMetricExporter(exporter, on_error=on_error)))
    return MeterProvider(resource=resource, metric_readers=readers, shutdown_on_exit=False)


def _prometheus(environ: Mapping[str, str]) -> MetricReader:
    """A Prometheus scrape endpoint (needs the ``prometheus`` extra)."""
    exporter = importlib.import_module("opentelemetry.exporter.prometheus")
    client = importlib.import_module("prometheus_client")
    host = environ.get("OTEL_EXPORTER_PROMETHEUS_HOST", "localhost")
    port = int(environ.get("OTEL_EXPORTER_PROMETHEUS_PORT", "9464"))
    client.start_http_server(port, addr=host)
    reader: MetricReader = exporter.PrometheusMetricReader()
    return reader


def logger_provider(environ: Mapping[str, str], resource: Resource, on_error: OnError = _ignore) -> LoggerProvider:
    """A logger provider with a batch processor per ``OTEL_LOGS_EXPORTER`` exporter, each counted."""
    deadline_s = _deadline(environ, LOG_DEADLINE_VARIABLE)
    provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
    for name in _exporters(environ, "OTEL_LOGS_EXPORTER"):
        exporter = cast("LogRecordExporter | None", _exporter(environ, "LOGS", name))
        if exporter is not None:
            counted = CountingLogRecordExporter(exporter, on_error=on_error, deadline_s=deadline_s)
            provider.add_log_record_processor(BatchLogRecordProcessor(counted))
    return provider


def configure_missing(
    environ: Mapping[str, str],
    *,
    traces: bool = True,
    metrics_: bool = True,
    logs: bool = True,
    on_error: OnError = _ignore,
) -> Owned:
    """Create and set globally each provider ``to_create`` names; return the ones created.

    ``traces``/``metrics_``/``logs`` say which signals ``init`` was not handed a provider for
    (``False``: the application handed one over). A signal counts as present when it was handed
    over or its global provider is set. ``on_error`` counts what the created exporters' wrappers
    catch (see the module docstring).
    """
    present = Signals(
        traces=not traces or not _is_default(trace.get_tracer_provider()),
        metrics=not metrics_ or not _is_default(metrics.get_meter_provider()),
        logs=not logs or not _is_default(_logs.get_logger_provider()),
    )
    wanted = to_create(present)
    resource = Resource.create()
    traces_made = metrics_made = logs_made = None
    if wanted.traces:
        traces_made = tracer_provider(environ, resource, on_error)
        trace.set_tracer_provider(traces_made)
    if wanted.metrics:
        metrics_made = meter_provider(environ, resource, on_error)
        metrics.set_meter_provider(metrics_made)
    if wanted.logs:
        logs_made = logger_provider(environ, resource, on_error)
        _logs.set_logger_provider(logs_made)
    owned = Owned(tracer_provider=traces_made, meter_provider=metrics_made, logger_provider=logs_made)
    if traces_made is not None or metrics_made is not None or logs_made is not None:
        atexit.register(close, owned, where=_destination(environ))
    return owned


EXIT_BOUND_S: Final = 1.0
"""How long the providers ``init`` created may take to shut down (their last export included)."""


def _destination(environ: Mapping[str, str]) -> str:
    """Where the created exporters send, in words (for the one line said when they could not deliver)."""
    endpoint = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return endpoint or "the OTLP default, localhost:4317/4318"


def flush(on_error: OnError = _ignore) -> None:
    """Force-flush every provider in reach (the application's too); a flush that fails is counted, never raised.

    A flush that raises is counted with its exception; one that reports it did not complete (the
    SDK's ``False``) as ``TimeoutError``; the stage is the signal's export stage.
    """
    stages: tuple[tuple[names.ErrorStage, object], ...] = (
        ("span_export", trace.get_tracer_provider()),
        ("metric_export", metrics.get_meter_provider()),
        ("log_export", _logs.get_logger_provider()),
    )
    for stage, provider in stages:
        force_flush = getattr(provider, "force_flush", None)
        if not callable(force_flush):
            continue
        try:
            done = force_flush()
        except Exception as exc:  # noqa: BLE001 - shutting down never raises into the application
            _count(on_error, stage, exc)
            continue
        if done is False:
            _count(on_error, stage, TimeoutError("the provider's flush did not complete"))


def close(owned: Owned, *, where: str | None = None) -> bool:
    """Shut down the providers otel-toolturn created (never the application's), within ``EXIT_BOUND_S``; never raises.

    Their shutdown (the last export, the exporters' retries) runs on a daemon thread; a shutdown not done
    within the bound is left to it, and, when ``where`` says where telemetry was meant to go, one line on
    stderr says it was not delivered. So a process exits within a second with no collector listening.
    Closing twice does nothing more. Returns whether the shutdown finished in time.
    """
    with _CLOSING:
        if id(owned) in _CLOSED:
            return True
        _CLOSED.add(id(owned))
    worker = threading.Thread(target=_shut_down, args=(owned,), name="otel-toolturn-shutdown", daemon=True)
    worker.start()
    worker.join(EXIT_BOUND_S)
    if worker.is_alive():
        if where is not None:
            sys.stderr.write(
                f"otel-toolturn: telemetry not delivered within {EXIT_BOUND_S:g} s at exit; it was meant for {where}\n"
            )
        return False
    return True


_CLOSING: Final = threading.Lock()
_CLOSED: Final[set[int]] = set()


def _shut_down(owned: Owned) -> None:
    for mine in (owned.tracer_provider, owned.meter_provider, owned.logger_provider):
        if mine is None:
            continue
        try:
            mine.shutdown()
        except Exception:  # noqa: BLE001 - shutting down never raises into the application
            _log.debug("otel-toolturn: a provider it created failed to shut down", exc_info=True)


def _count(on_error: OnError, stage: names.ErrorStage, exc: BaseException) -> None:
    _log.debug("otel-toolturn: flushing the %s providers failed", stage, exc_info=exc)
    try:
        on_error(stage, exc)
    except Exception:  # noqa: BLE001 - the last guard
        _log.debug("otel-toolturn: could not count a flush error", exc_info=True)
