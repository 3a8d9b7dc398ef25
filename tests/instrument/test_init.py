"""``init`` in a fresh process: providers from ``OTEL_*`` when the app has none, the app's own kept, the entry point."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[2]

CALL: Final = """
import httpx2, openai
def reply(request):
    return httpx2.Response(200, json={"id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}]})
client = openai.OpenAI(api_key="k", http_client=httpx2.Client(transport=httpx2.MockTransport(reply)))
messages = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]
print("ANSWER", client.chat.completions.create(model="m", messages=messages).choices[0].message.content)
"""


def _run(code: str, *, env: dict[str, str], argv: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": "openai,anthropic",
        **env,
    }
    command = [*(argv or []), sys.executable, "-c", code]
    return subprocess.run(command, check=False, capture_output=True, text=True, env=environ, cwd=ROOT)


def test_init_sets_up_providers_from_the_environment() -> None:
    """No providers configured: ``init`` builds them from ``OTEL_*`` (console here); ``shutdown`` flushes the span."""
    code = "import otel_toolturn.instrument as t\nt.init()\n" + CALL + "t.shutdown()\n"
    env = {
        "OTEL_SERVICE_NAME": "svc-under-test",
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
    }
    done = _run(code, env=env)
    assert done.returncode == 0, done.stderr
    assert "ANSWER ok" in done.stdout
    assert '"toolturn.repair"' in done.stdout
    assert "svc-under-test" in done.stdout


def test_init_keeps_the_applications_providers() -> None:
    """A tracer provider the application set stays the global one and receives the spans."""
    code = (
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter\n"
        "mine = TracerProvider(); spans = InMemorySpanExporter()\n"
        "mine.add_span_processor(SimpleSpanProcessor(spans)); trace.set_tracer_provider(mine)\n"
        "import otel_toolturn.instrument as t\nt.init()\n" + CALL + "assert trace.get_tracer_provider() is mine\n"
        "print('SPANS', [s.name for s in spans.get_finished_spans()])\nt.shutdown()\n"
    )
    done = _run(code, env={"OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"})
    assert done.returncode == 0, done.stderr
    assert "SPANS ['chat m']" in done.stdout


def test_opentelemetry_instrument_loads_the_entry_point() -> None:
    """``opentelemetry-instrument python app.py`` patches the SDKs through the registered instrumentor."""
    launcher = shutil.which("opentelemetry-instrument", path=str(Path(sys.executable).parent))
    if launcher is None:
        pytest.fail("opentelemetry-instrument is not installed beside the interpreter")
    code = (
        "import wrapt, openai.resources.chat.completions.completions as m\n"
        "print('PATCHED', isinstance(vars(m.Completions)['create'], wrapt.FunctionWrapper))\n" + CALL
    )
    done = _run(
        code,
        env={"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"},
        argv=[launcher],
    )
    assert done.returncode == 0, done.stderr
    assert "PATCHED True" in done.stdout
    assert "ANSWER ok" in done.stdout


def test_init_imports_no_sdk_and_patches_one_imported_after_it() -> None:
    """``init()`` imports no SDK; the openai SDK imported after it is patched as it loads, and its calls go through."""
    code = (
        "import sys, otel_toolturn\n"
        "otel_toolturn.init()\n"
        "print('IMPORTED', sorted(m for m in ('openai', 'anthropic', 'google.genai', 'litellm') if m in sys.modules))\n"
        "import wrapt, openai.resources.chat.completions.completions as m\n"
        "print('PATCHED', isinstance(vars(m.Completions)['create'], wrapt.FunctionWrapper))\n" + CALL
    )
    done = _run(
        code, env={"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}
    )
    assert done.returncode == 0, done.stderr
    assert "IMPORTED []" in done.stdout
    assert "PATCHED True" in done.stdout
    assert "ANSWER ok" in done.stdout


def test_with_no_collector_listening_the_exit_stops_waiting_at_the_bound_and_says_where_telemetry_went() -> None:
    """OTLP at a port nothing listens on: the exit leaves the exporters' retries at the bound, saying so in one line."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free now, and nothing listens on it
    code = (
        "import otel_toolturn\n"
        "otel_toolturn.init()\n"
        "from opentelemetry import trace\n"
        "with trace.get_tracer('app').start_as_current_span('work'):\n"
        "    pass\n"
    )
    done = _run(code, env={"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}", "OTEL_LOGS_EXPORTER": "none"})
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("otel-toolturn:")]
    assert said == [
        f"otel-toolturn: telemetry not delivered within 1 s at exit; it was meant for http://127.0.0.1:{port}"
    ]


ANTHROPIC_CALL: Final = """
import httpx2, anthropic
def answer(request):
    return httpx2.Response(200, json={"id": "m", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}})
claude = anthropic.Anthropic(api_key="k", http_client=httpx2.Client(transport=httpx2.MockTransport(answer)))
history = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]}]
print("ANSWER", claude.messages.create(model="claude-x", max_tokens=8, messages=history).content[0].text)
"""


SPANS: Final = """
from opentelemetry import trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
memory = InMemorySpanExporter()
trace.get_tracer_provider().add_span_processor(SimpleSpanProcessor(memory))
"""

REPORT: Final = """
for span in memory.get_finished_spans():
    repairs = sum(e.name == "toolturn.repair" for e in span.events)
    print("SPAN", span.instrumentation_scope.name, span.kind.name, "toolturn.lane" in span.attributes, repairs)
"""


def test_zero_code_beside_the_other_genai_instrumentations_adds_no_span_of_its_own() -> None:
    """Zero-code with the distro and every GenAI instrumentation: no span of ours, each repair once on theirs.

    The official and OpenLLMetry openai instrumentations (both loaded: one entry point name) and OpenLLMetry's
    anthropic one, beside the anthropic SDK's own span: otel-toolturn records onto theirs and starts none.
    """
    launcher = shutil.which("opentelemetry-instrument", path=str(Path(sys.executable).parent))
    if launcher is None:
        pytest.fail("opentelemetry-instrument is not installed beside the interpreter")
    done = _run(
        SPANS + CALL + ANTHROPIC_CALL + REPORT,
        env={
            "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": "google-genai",
            "OTEL_TRACES_EXPORTER": "none",
            "OTEL_METRICS_EXPORTER": "none",
            "OTEL_LOGS_EXPORTER": "none",
        },
        argv=[launcher],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("ANSWER ok") == 2
    spans = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("SPAN ")]
    assert spans, done.stdout
    assert not [s for s in spans if s[0] == "otel_toolturn"]
    assert sorted(int(s[3]) for s in spans if s[2] == "True") == [1, 1]
    assert all(s[1] == "CLIENT" for s in spans if s[2] == "True")


ERRORS: Final = """
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
reader = InMemoryMetricReader()
def errors():
    data = reader.get_metrics_data()
    return sorted(
        (dict(p.attributes)["toolturn.error.stage"], dict(p.attributes)["error.type"], p.value)
        for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics
        if m.name == "toolturn.instrumentation.errors" for p in m.data.data_points
    )
class Boom(RuntimeError): pass
def boom(self, spans): raise Boom("export")
"""


def test_init_counts_an_exporter_it_created_that_raises() -> None:
    """The span exporter ``init`` built from ``OTEL_*`` raises: the answer is unchanged and the counter moves."""
    code = (
        ERRORS + "from opentelemetry.sdk.trace.export import ConsoleSpanExporter\n"
        "ConsoleSpanExporter.export = boom\n"
        "from opentelemetry import trace\n"
        "import otel_toolturn.instrument as t\nt.init(meter_provider=MeterProvider(metric_readers=[reader]))\n"
        + CALL
        + "trace.get_tracer_provider().force_flush()\nprint('ERRORS', errors())\nt.shutdown()\n"
    )
    done = _run(code, env={"OTEL_TRACES_EXPORTER": "console", "OTEL_LOGS_EXPORTER": "none"})
    assert done.returncode == 0, done.stderr
    assert "ANSWER ok" in done.stdout
    assert "ERRORS [('span_export', 'Boom', 1)]" in done.stdout


def test_init_leaves_the_applications_exporters_as_they_are() -> None:
    """The application's own span exporter raising: init wraps nothing of it, so nothing is counted; calls unchanged."""
    code = (
        ERRORS + "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter\n"
        "class Mine(SpanExporter):\n    export = boom\n"
        "mine = Mine(); provider = TracerProvider(); provider.add_span_processor(SimpleSpanProcessor(mine))\n"
        "trace.set_tracer_provider(provider)\n"
        "import otel_toolturn.instrument as t\nt.init(meter_provider=MeterProvider(metric_readers=[reader]))\n"
        + CALL
        + "processor = provider._active_span_processor._span_processors[0]\n"
        "print('MINE', processor.span_exporter is mine)\nprint('ERRORS', errors())\nt.shutdown()\n"
    )
    done = _run(code, env={"OTEL_LOGS_EXPORTER": "none"})
    assert done.returncode == 0, done.stderr
    assert "ANSWER ok" in done.stdout
    assert "MINE True" in done.stdout
    assert "ERRORS []" in done.stdout


def test_a_call_with_no_sdk_configured_says_once_that_nothing_is_exported() -> None:
    """``opentelemetry-instrument`` without a distro or exporters: one warning at the first call, none at the second."""
    launcher = shutil.which("opentelemetry-instrument", path=str(Path(sys.executable).parent))
    if launcher is None:
        pytest.fail("opentelemetry-instrument is not installed beside the interpreter")
    done = _run(
        CALL + CALL.split("client = ", 1)[1].split("\n", 1)[1],
        env={"OTEL_PYTHON_CONFIGURATOR": "none", "OTEL_PYTHON_DISTRO": "none"},
        argv=[launcher],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("ANSWER ok") == 2
    assert done.stderr.count("no OpenTelemetry SDK tracer provider is set") == 1
