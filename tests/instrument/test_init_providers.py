"""``init`` creates a provider, and so an exporter, only for a signal the application has none for.

Each ``init`` case runs in a fresh process (global providers can be set once per process), with a
socket guard that refuses, and records, every connection to an OTLP collector's ports, and a
record of every OTLP log exporter constructed.
"""

from __future__ import annotations

import pytest

from otel_toolturn.instrument._setup import Signals, to_create
from tests.instrument.test_init import CALL, _run

GUARD = """
import socket
ATTEMPTS = []
def _guard(real):
    def guarded(self, address):
        if isinstance(address, tuple) and len(address) >= 2 and address[1] in (4317, 4318):
            ATTEMPTS.append(address[1])
            raise ConnectionRefusedError("no collector in this test")
        return real(self, address)
    return guarded
socket.socket.connect = _guard(socket.socket.connect)
socket.socket.connect_ex = _guard(socket.socket.connect_ex)

import opentelemetry.exporter.otlp.proto.grpc._log_exporter as grpc_logs
import opentelemetry.exporter.otlp.proto.http._log_exporter as http_logs
LOG_EXPORTERS = []
def _record(cls):
    real = cls.__init__
    def init(self, *args, **kwargs):
        LOG_EXPORTERS.append(cls.__module__)
        real(self, *args, **kwargs)
    cls.__init__ = init
_record(http_logs.OTLPLogExporter)
_record(grpc_logs.OTLPLogExporter)

from opentelemetry import _logs, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
spans = InMemorySpanExporter()
tracer_provider = TracerProvider()
tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
"""

REPORT = """
print("SPAN_EVENTS", sorted({e.name for s in spans.get_finished_spans() for e in s.events}))
print("GLOBAL_LOGGER_PROVIDER", type(_logs.get_logger_provider()).__name__)
t.shutdown()
print("LOG_EXPORTERS", LOG_EXPORTERS)
print("ATTEMPTS", ATTEMPTS)
"""

MY_LOGGER_PROVIDER = """
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
records = InMemoryLogRecordExporter()
mine = LoggerProvider()
mine.add_log_record_processor(SimpleLogRecordProcessor(records))
_logs.set_logger_provider(mine)
"""


def test_handed_providers_start_no_log_pipeline() -> None:
    """Tracer and meter providers handed over, none for logs: no OTLP log exporter, no connection, events on spans."""
    code = GUARD + "import otel_toolturn.instrument as t\n"
    code += "t.init(tracer_provider=tracer_provider, meter_provider=meter_provider)\n" + CALL + REPORT
    done = _run(code, env={})
    assert done.returncode == 0, done.stderr
    assert "ANSWER ok" in done.stdout
    assert "'toolturn.repair'" in done.stdout.split("SPAN_EVENTS", 1)[1].splitlines()[0]
    assert "GLOBAL_LOGGER_PROVIDER ProxyLoggerProvider" in done.stdout
    assert "LOG_EXPORTERS []" in done.stdout
    assert "ATTEMPTS []" in done.stdout
    assert "Failed to export" not in done.stderr


def test_the_applications_global_logger_provider_receives_the_events() -> None:
    """Tracer and meter providers handed over, a global logger provider set: the events reach it as log records."""
    code = GUARD + MY_LOGGER_PROVIDER + "import otel_toolturn.instrument as t\n"
    code += "t.init(tracer_provider=tracer_provider, meter_provider=meter_provider)\n" + CALL
    code += "print('RECORDS', sorted({r.log_record.event_name for r in records.get_finished_logs()}))\n"
    code += "assert _logs.get_logger_provider() is mine\n" + REPORT
    done = _run(code, env={})
    assert done.returncode == 0, done.stderr
    assert "'toolturn.repair'" in done.stdout.split("RECORDS", 1)[1].splitlines()[0]
    assert "LOG_EXPORTERS []" in done.stdout
    assert "ATTEMPTS []" in done.stdout


def test_a_global_tracer_provider_starts_no_log_pipeline() -> None:
    """The application set its global tracer provider and no logger provider: ``init()`` creates no log exporter."""
    code = GUARD + "trace.set_tracer_provider(tracer_provider)\nimport otel_toolturn.instrument as t\n"
    code += "t.init(meter_provider=meter_provider)\n" + CALL + REPORT
    done = _run(code, env={})
    assert done.returncode == 0, done.stderr
    assert "'toolturn.repair'" in done.stdout.split("SPAN_EVENTS", 1)[1].splitlines()[0]
    assert "GLOBAL_LOGGER_PROVIDER ProxyLoggerProvider" in done.stdout
    assert "LOG_EXPORTERS []" in done.stdout
    assert "ATTEMPTS []" in done.stdout
    assert "Failed to export" not in done.stderr


def test_nothing_configured_still_sets_up_logs_from_the_environment() -> None:
    """No providers anywhere: ``init()`` creates the logger provider too, and the events go out as log records."""
    code = GUARD + "import otel_toolturn.instrument as t\nt.init()\n" + CALL + REPORT
    env = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "console"}
    done = _run(code, env=env)
    assert done.returncode == 0, done.stderr
    assert "GLOBAL_LOGGER_PROVIDER LoggerProvider" in done.stdout
    assert '"event_name": "toolturn.repair"' in done.stdout


@pytest.mark.parametrize(
    ("present", "created"),
    [
        (Signals(traces=False, metrics=False, logs=False), Signals(traces=True, metrics=True, logs=True)),
        (Signals(traces=True, metrics=True, logs=False), Signals(traces=False, metrics=False, logs=False)),
        (Signals(traces=True, metrics=False, logs=False), Signals(traces=False, metrics=True, logs=False)),
        (Signals(traces=False, metrics=True, logs=False), Signals(traces=True, metrics=False, logs=True)),
        (Signals(traces=False, metrics=False, logs=True), Signals(traces=True, metrics=True, logs=False)),
        (Signals(traces=True, metrics=True, logs=True), Signals(traces=False, metrics=False, logs=False)),
    ],
)
def test_to_create_follows_the_rule(present: Signals, created: Signals) -> None:
    """Tracer and meter providers are created when absent; a logger provider only when absent and traces are created."""
    assert to_create(present) == created
