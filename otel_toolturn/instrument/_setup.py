"""OpenTelemetry SDK providers from the standard ``OTEL_*`` variables, for apps that configured none.

Role: ``configure_missing`` looks at the global tracer, meter and logger providers; each one the
application has not set is created from the environment and made global; each one it has set is
left exactly as it is. It returns the providers it created, so ``shutdown`` can flush and close
those (and only flush the application's own).

Exporters, per signal (``OTEL_TRACES_EXPORTER``, ``OTEL_METRICS_EXPORTER``,
``OTEL_LOGS_EXPORTER``; comma-separated; default ``otlp``): ``otlp`` (protocol from
``OTEL_EXPORTER_OTLP_PROTOCOL``: ``http/protobuf`` by default, or ``grpc``; endpoint and headers
read by the exporter itself from ``OTEL_EXPORTER_OTLP_*``), ``console``, ``none``; for metrics
also ``prometheus`` (a scrape endpoint on ``OTEL_EXPORTER_PROMETHEUS_HOST``:
``OTEL_EXPORTER_PROMETHEUS_PORT``, default ``localhost:9464``). The resource comes from
``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass

from opentelemetry import _logs, metrics, trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, ConsoleLogRecordExporter, LogRecordExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

_log = logging.getLogger("otel_toolturn.instrument")


@dataclass(frozen=True, kw_only=True, slots=True)
class Owned:
    """The providers ``configure_missing`` created (``None``: the application's own was kept)."""

    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    logger_provider: LoggerProvider | None = None


def _exporters(environ: Mapping[str, str], variable: str) -> tuple[str, ...]:
    raw = environ.get(variable, "otlp")
    return tuple(w.strip().lower() for w in raw.split(",") if w.strip() and w.strip().lower() != "none")


def _grpc(environ: Mapping[str, str], signal: str) -> bool:
    protocol = environ.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL", environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", ""))
    return protocol.strip().lower() == "grpc"


def _otlp(environ: Mapping[str, str], signal: str, class_name: str) -> object:
    transport = "grpc" if _grpc(environ, signal) else "http"
    module_name = {
        "TRACES": "trace_exporter",
        "METRICS": "metric_exporter",
        "LOGS": "_log_exporter",
    }[signal]
    module = importlib.import_module(f"opentelemetry.exporter.otlp.proto.{transport}.{module_name}")
    exporter: object = getattr(module, class_name)()
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


def _tracer_provider(environ: Mapping[str, str], resource: Resource) -> TracerProvider:
    provider = TracerProvider(resource=resource)
    for name in _exporters(environ, "OTEL_TRACES_EXPORTER"):
        exporter: SpanExporter | None = None
        if name == "console":
            exporter = ConsoleSpanExporter()
        elif name == "otlp":
            exporter = _otlp(environ, "TRACES", "OTLPSpanExporter")  # type: ignore[assignment]
        else:
            _log.warning("otel-toolturn: unknown OTEL_TRACES_EXPORTER %r ignored", name)
        if exporter is not None:
            provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _meter_provider(environ: Mapping[str, str], resource: Resource) -> MeterProvider:
    readers: list[MetricReader] = []
    for name in _exporters(environ, "OTEL_METRICS_EXPORTER"):
        exporter: MetricExporter | None = None
        if name == "console":
            exporter = ConsoleMetricExporter()
        elif name == "otlp":
            exporter = _otlp(environ, "METRICS", "OTLPMetricExporter")  # type: ignore[assignment]
        elif name == "prometheus":
            readers.append(_prometheus(environ))
        else:
            _log.warning("otel-toolturn: unknown OTEL_METRICS_EXPORTER %r ignored", name)
        if exporter is not None:
            readers.append(PeriodicExportingMetricReader(exporter))
    return MeterProvider(resource=resource, metric_readers=readers)


def _prometheus(environ: Mapping[str, str]) -> MetricReader:
    """A Prometheus scrape endpoint (needs the ``prometheus`` extra)."""
    exporter = importlib.import_module("opentelemetry.exporter.prometheus")
    client = importlib.import_module("prometheus_client")
    host = environ.get("OTEL_EXPORTER_PROMETHEUS_HOST", "localhost")
    port = int(environ.get("OTEL_EXPORTER_PROMETHEUS_PORT", "9464"))
    client.start_http_server(port, addr=host)
    reader: MetricReader = exporter.PrometheusMetricReader()
    return reader


def _logger_provider(environ: Mapping[str, str], resource: Resource) -> LoggerProvider:
    provider = LoggerProvider(resource=resource)
    for name in _exporters(environ, "OTEL_LOGS_EXPORTER"):
        exporter: LogRecordExporter | None = None
        if name == "console":
            exporter = ConsoleLogRecordExporter()
        elif name == "otlp":
            exporter = _otlp(environ, "LOGS", "OTLPLogExporter")  # type: ignore[assignment]
        else:
            _log.warning("otel-toolturn: unknown OTEL_LOGS_EXPORTER %r ignored", name)
        if exporter is not None:
            provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
    return provider


def configure_missing(
    environ: Mapping[str, str], *, traces: bool = True, metrics_: bool = True, logs: bool = True
) -> Owned:
    """Create and set globally each provider asked for that the application has not configured.

    ``traces``/``metrics_``/``logs`` say which signals still need a provider (``init`` passes
    ``False`` for a signal whose provider it was handed).
    """
    resource = Resource.create()
    tracer_provider = meter_provider = logger_provider = None
    if traces and _is_default(trace.get_tracer_provider()):
        tracer_provider = _tracer_provider(environ, resource)
        trace.set_tracer_provider(tracer_provider)
    if metrics_ and _is_default(metrics.get_meter_provider()):
        meter_provider = _meter_provider(environ, resource)
        metrics.set_meter_provider(meter_provider)
    if logs and _is_default(_logs.get_logger_provider()):
        logger_provider = _logger_provider(environ, resource)
        _logs.set_logger_provider(logger_provider)
    return Owned(tracer_provider=tracer_provider, meter_provider=meter_provider, logger_provider=logger_provider)


def flush(owned: Owned) -> None:
    """Flush every provider in reach; shut down the ones otel-toolturn created."""
    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider(), _logs.get_logger_provider()):
        force_flush = getattr(provider, "force_flush", None)
        if callable(force_flush):
            force_flush()
    for mine in (owned.tracer_provider, owned.meter_provider, owned.logger_provider):
        if mine is not None:
            mine.shutdown()
