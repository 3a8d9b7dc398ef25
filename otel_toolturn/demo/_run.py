"""The demo's run: the stories of every installed SDK, played without and then with otel-toolturn."""

from __future__ import annotations

import importlib
import io
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    InMemoryMetricReader,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_toolturn
from otel_toolturn._vocab import DemoTelemetry
from otel_toolturn.demo._agent import DemoSdk, Sent, Session
from otel_toolturn.instrument import names
from otel_toolturn.simulator import Simulator

SHOWN_METRICS: Final = (
    names.REQUESTS.name,
    names.REPAIRS.name,
    names.LOSSY_PROJECTIONS.name,
    names.STREAM_DROPS.name,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class StoryModule:
    """Where one SDK's stories live, the SDK module they need, and the extra that installs it."""

    module: str
    sdk: str
    package: str
    extra: str


STORY_MODULES: Final = (
    StoryModule(
        module="otel_toolturn.demo._anthropic_stories", sdk="anthropic", package="anthropic", extra="anthropic"
    ),
    StoryModule(module="otel_toolturn.demo._openai_stories", sdk="openai", package="openai", extra="openai"),
    StoryModule(
        module="otel_toolturn.demo._gemini_stories", sdk="google.genai", package="google-genai", extra="gemini"
    ),
    StoryModule(module="otel_toolturn.demo._bedrock_stories", sdk="boto3", package="boto3", extra="bedrock"),
)
"""The SDKs' stories, in the order they are played."""


def installed() -> tuple[tuple[DemoSdk[Any], ...], tuple[StoryModule, ...], tuple[StoryModule, ...]]:
    """The stories of each SDK that imports here; the story modules whose SDK does not; those it is too old for.

    Too old: the SDK imports, but not what its stories use from it (an ``ImportError`` importing them).
    """
    found: list[DemoSdk[Any]] = []
    missing: list[StoryModule] = []
    outdated: list[StoryModule] = []
    for place in STORY_MODULES:
        try:
            importlib.import_module(place.sdk)
        except ImportError:
            missing.append(place)
            continue
        try:
            stories = importlib.import_module(place.module)
        except ImportError:
            outdated.append(place)
            continue
        found.append(stories.SDK)
    return tuple(found), tuple(missing), tuple(outdated)


# --- telemetry --------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class Pipeline:
    """The providers the demo hands to ``init``, the readers it summarises from, and where the rest went."""

    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    logger_provider: LoggerProvider
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    console: io.StringIO | None
    destination: str


def resolve_telemetry(choice: DemoTelemetry | None, environ: Mapping[str, str]) -> DemoTelemetry:
    """The telemetry destination: the one asked for, else OTLP when an endpoint is set, else the console."""
    if choice is not None:
        return choice
    return "otlp" if environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") else "console"


def build_pipeline(telemetry: DemoTelemetry, environ: Mapping[str, str]) -> Pipeline:
    """SDK providers with an in-memory span exporter and metric reader, plus the chosen destination."""
    resource = Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME", "otel-toolturn-demo")})
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    metrics = InMemoryMetricReader()
    readers: list[MetricReader] = [metrics]
    logger_provider = LoggerProvider(resource=resource)
    console: io.StringIO | None = None
    destination = "nowhere but this summary (--telemetry none)"
    if telemetry == "console":
        console = io.StringIO()
        tracer_provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=console, formatter=_one_line)))
        destination = "the console (the console span exporter, one line per span, below)"
    elif telemetry == "otlp":
        grpc = environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").strip().lower() == "grpc"
        span_exporter, metric_exporter, log_exporter = _otlp_exporters(grpc=grpc)
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
        readers.append(PeriodicExportingMetricReader(metric_exporter))
        logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
        where = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "the default OTLP endpoint")
        destination = f"OTLP ({'grpc' if grpc else 'http/protobuf'}) at {where}: spans, metrics and log events"
    return Pipeline(
        tracer_provider=tracer_provider,
        meter_provider=MeterProvider(metric_readers=readers, resource=resource),
        logger_provider=logger_provider,
        spans=spans,
        metrics=metrics,
        console=console,
        destination=destination,
    )


def _otlp_exporters(*, grpc: bool) -> tuple[SpanExporter, MetricExporter, LogRecordExporter]:
    if grpc:
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter  # noqa: PLC0415
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter  # noqa: PLC0415
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter  # noqa: PLC0415

        return OTLPSpanExporter(), OTLPMetricExporter(), OTLPLogExporter()
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs  # noqa: PLC0415
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetrics  # noqa: PLC0415
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans  # noqa: PLC0415

    return HttpSpans(), HttpMetrics(), HttpLogs()


def _one_line(span: ReadableSpan) -> str:
    """The console exporter's format here: one line per span with its toolturn events."""
    context = span.get_span_context()
    trace_id = format(context.trace_id, "032x") if context is not None else "?"
    events = ", ".join(e.name for e in span.events if e.name.startswith("toolturn.")) or "no toolturn events"
    return f"  {span.name:<36} trace {trace_id[:16]}  {events}\n"


def metric_totals(reader: InMemoryMetricReader) -> dict[str, float]:
    """The summed data points of each ``toolturn.*`` metric the reader holds."""
    data = reader.get_metrics_data()
    totals: dict[str, float] = {}
    for resource_metrics in data.resource_metrics if data is not None else ():
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                points = getattr(metric.data, "data_points", ())
                values = [getattr(p, "value", 0) for p in points]
                totals[metric.name] = totals.get(metric.name, 0) + float(sum(values))
    return totals


# --- the run ------------------------------------------------------------------------------------------------
def _play(sim: Simulator, spans: InMemorySpanExporter | None, sdks: tuple[DemoSdk[Any], ...]) -> list[Sent]:
    session = Session(sim=sim, spans=spans, refusals=tuple(sdk.refusal for sdk in sdks))
    first = 1
    for sdk in sdks:
        sdk.play(session, first)
        first += len(sdk.stories)
    return session.log


def _install(missing: tuple[StoryModule, ...]) -> str:
    """The command that installs the SDKs of ``missing``."""
    return f"pip install 'otel-toolturn[{','.join(m.extra for m in missing)}]'"


def run_demo(*, telemetry: DemoTelemetry | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Play the installed SDKs' stories without, then with otel-toolturn; 0 when the second pass is all 200s.

    No SDK installed: one line on stderr, exit 3.
    """
    env = os.environ if environ is None else environ
    chosen = resolve_telemetry(telemetry, env)
    sdks, missing, outdated = installed()
    if not sdks:
        print(
            f"otel-toolturn: the demo drives an SDK client, and none is installed here: {_install(missing + outdated)}",
            file=sys.stderr,
        )
        return 3
    with Simulator() as sim:
        print(f"otel-toolturn demo: a provider simulator at {sim.base_url} (no API key, no network),")
        played = ", ".join(m.package for m in STORY_MODULES if m not in missing + outdated)
        print(f"driven by the real {played} SDK clients.")
        if missing:
            packages = ", ".join(m.package for m in missing)
            print(f"Skipped: the stories of {packages}, not installed here ({_install(missing)}).")
        if outdated:
            packages = ", ".join(m.package for m in outdated)
            print(f"Skipped: the stories of {packages}, too old here for them ({_install(outdated)}).")
        print()
        print(
            "Without otel-toolturn: the simulator refuses each broken transcript as the provider does "
            "(HTTP 400, the provider's words; its verdict is otel-toolturn's own validate, checked "
            "against recorded provider traffic in the test suite)."
        )
        before = _play(sim, None, sdks)
        print("\nWith otel_toolturn.init(): the same agent, the same transcripts.")
        pipeline = build_pipeline(chosen, env)
        otel_toolturn.init(
            tracer_provider=pipeline.tracer_provider,
            meter_provider=pipeline.meter_provider,
            logger_provider=pipeline.logger_provider,
        )
        try:
            after = _play(sim, pipeline.spans, sdks)
        finally:
            otel_toolturn.shutdown()
        totals = metric_totals(pipeline.metrics)
        for provider in (pipeline.tracer_provider, pipeline.meter_provider, pipeline.logger_provider):
            provider.shutdown()
    refused = sum(s.status != 200 for s in before)
    failed = sum(s.status != 200 for s in after)
    print(
        f"\nSummary, per the simulator: without otel-toolturn {refused} of {len(before)} requests were refused; "
        f"with it {len(after) - failed} of {len(after)} succeeded."
    )
    print("Metrics: " + ", ".join(f"{name} {totals.get(name, 0):g}" for name in SHOWN_METRICS))
    print(f"Telemetry went to {pipeline.destination}.")
    if chosen == "console" and pipeline.console is not None:
        print(pipeline.console.getvalue().rstrip("\n"))
        print("Set OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://localhost:4318) to send it to a collector instead.")
    return 0 if failed == 0 and refused > 0 else 1
