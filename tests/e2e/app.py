"""An application instrumented by ``otel_toolturn.init``, run as its own process by the e2e tests.

It talks to a fake provider through the real ``anthropic`` and ``openai`` SDK clients (an
``httpx2.MockTransport`` answers in the providers' wire formats: JSON, and SSE for streams), so
every metric point, span and event comes from the library's own instrumentation.

``python tests/e2e/app.py metrics --port P``: exposes its metrics on ``127.0.0.1:P/metrics``
(``PrometheusMetricReader`` + ``prometheus_client``) and repeats the scenario every half second
until it is terminated.

``python tests/e2e/app.py traces --endpoint URL --protocol http|grpc --project NAME``: sends one
request whose transcript holds an orphan tool result, with its spans exported over OTLP to URL,
flushes, and exits.

The scenario, one request each, every one of which the dashboard shows:

- a transcript with an orphan tool result → a lossy ``orphan_result`` repair;
- a stream cut inside a tool call's arguments, without its end → a ``truncated`` drop, a torn stream;
- a stream that goes on after its ``message_stop`` → ignored stream ends;
- a response from another model than the one requested → a substitution;
- a request inside ``withhold_tools("wrap-up")`` → tools withheld;
- a response with two handoff calls → handoffs, refused;
- a response listing a thinking block the provider dropped (``input_transformations``) →
  an input transformation, ``thinking_dropped`` / ``prefix_binding_mismatch``;
- an OpenAI request whose span the application's own span pipeline refuses (a span processor
  that raises) → an instrumentation error, while the call itself still succeeds;
- a conversation new each round, whose call was interrupted, sent twice with its system prompt
  rebuilt in between (the date changed) → one new break (``toolturn.breaks``) and a prefix change
  the caller made (``toolturn.prefix_changes``, cause ``caller``).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from types import FrameType
from typing import Any, Final

import anthropic
import httpx2
import openai
from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from prometheus_client import start_http_server

import otel_toolturn.instrument as toolturn

SERVICE: Final = "toolturn-e2e"
PROJECT_ATTRIBUTE: Final = "openinference.project.name"
LANE: Final = "anthropic.messages"
PROVIDER: Final = "anthropic"
MODEL: Final = "claude-sonnet-4-5"
OTHER_MODEL: Final = "claude-haiku-4-5"
FAULTY_MODEL: Final = "gpt-fault-injection"
ORPHAN_ID: Final = "toolu_orphan_1"
HANDOFF_PATTERN: Final = "transfer_to_*"
SCENARIO_HEADER: Final = "x-e2e-scenario"

Frame = tuple[str, dict[str, Any]]

_TOOLS: Final[list[anthropic.types.ToolParam]] = [
    {"name": "lookup", "description": "Look a word up.", "input_schema": {"type": "object"}}
]


# --- the fake provider ------------------------------------------------------------------------------
def _message(content: list[dict[str, Any]], *, model: str = MODEL, stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_e2e",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 3},
    }


def _start() -> Frame:
    return ("message_start", {"type": "message_start", "message": {**_message([]), "stop_reason": None}})


def _text_turn() -> list[Frame]:
    return [
        _start(),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def _cut_tool_call() -> list[Frame]:
    """A tool call whose arguments stop mid-JSON, and no end: the connection just closes."""
    return [
        _start(),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_cut_1", "name": "lookup", "input": {}},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"word": "ter'},
            },
        ),
    ]


def _talks_after_its_end() -> list[Frame]:
    """A complete turn followed by a second ending, which the ledger refuses."""
    return [
        *_text_turn(),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 2}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def _sse(frames: Iterable[Frame]) -> bytes:
    return b"".join(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode() for event, data in frames)


def _handoffs() -> dict[str, Any]:
    calls = [
        {"type": "tool_use", "id": f"toolu_handoff_{n}", "name": name, "input": {}}
        for n, name in enumerate(("transfer_to_billing", "transfer_to_support"))
    ]
    return _message(calls, stop_reason="tool_use")


def _openai_completion(model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-e2e",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }


def _respond(request: httpx2.Request) -> httpx2.Response:
    """The fake provider: the scenario header picks the answer."""
    scenario = request.headers.get(SCENARIO_HEADER, "")
    if request.url.path.endswith("/chat/completions"):
        return httpx2.Response(200, json=_openai_completion(json.loads(request.content)["model"]))
    match scenario:
        case "cut":
            return httpx2.Response(200, content=_sse(_cut_tool_call()), headers={"content-type": "text/event-stream"})
        case "after-end":
            return httpx2.Response(
                200, content=_sse(_talks_after_its_end()), headers={"content-type": "text/event-stream"}
            )
        case "substituted":
            return httpx2.Response(200, json=_message([{"type": "text", "text": "ok"}], model=OTHER_MODEL))
        case "handoffs":
            return httpx2.Response(200, json=_handoffs())
        case "thinking-dropped":
            dropped = {"type": "thinking_dropped", "path": "messages.1.content.0", "reason": "prefix_binding_mismatch"}
            body = {**_message([{"type": "text", "text": "ok"}]), "input_transformations": [dropped]}
            return httpx2.Response(200, json=body)
        case _:
            return httpx2.Response(200, json=_message([{"type": "text", "text": "ok"}]))


# --- the application ----------------------------------------------------------------------------------
def orphan_transcript() -> list[dict[str, Any]]:
    """A user turn, then a tool result no assistant turn asked for (a trimmed history)."""
    return [
        {"role": "user", "content": "Look up 'tern'."},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": ORPHAN_ID, "content": "a sea bird"}]},
        {"role": "user", "content": "And 'gull'?"},
    ]


def _clients() -> tuple[anthropic.Anthropic, openai.OpenAI]:
    http = httpx2.Client(transport=httpx2.MockTransport(_respond))
    return (
        anthropic.Anthropic(api_key="sk-ant-e2e", base_url="http://provider.invalid", http_client=http),
        openai.OpenAI(api_key="sk-e2e", base_url="http://provider.invalid/v1", http_client=http),
    )


def _ask(client: anthropic.Anthropic, scenario: str, messages: list[dict[str, Any]], **extra: Any) -> None:
    client.messages.create(
        model=MODEL,
        max_tokens=64,
        messages=messages,  # type: ignore[arg-type]  # plain dicts, as applications send them
        extra_headers={SCENARIO_HEADER: scenario},
        **extra,
    )


def _read_stream(client: anthropic.Anthropic, scenario: str) -> None:
    stream = client.messages.create(
        model=MODEL,
        max_tokens=64,
        messages=[{"role": "user", "content": "Look up 'tern'."}],
        tools=_TOOLS,
        stream=True,
        extra_headers={SCENARIO_HEADER: scenario},
    )
    for _ in stream:
        pass


def _rebuilt_system_prompt(client: anthropic.Anthropic, round_number: int) -> None:
    """A new conversation with an interrupted call, resent with the system prompt rebuilt and the answer appended."""
    call = {"type": "tool_use", "id": f"toolu_r{round_number}", "name": "lookup", "input": {"word": "tern"}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"Round {round_number}: look up 'tern'."},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": "Never mind, go on."},
    ]
    _ask(client, "conversation", messages, system=f"Today is day {round_number}.")
    answered = [*messages, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "And 'gull'?"}]
    _ask(client, "conversation", answered, system=f"Today is day {round_number + 1}.")


def scenario(client: anthropic.Anthropic, chat: openai.OpenAI, round_number: int = 0) -> None:
    """One request of each kind the dashboard shows (see the module docstring)."""
    _ask(client, "orphan", orphan_transcript())
    _read_stream(client, "cut")
    _read_stream(client, "after-end")
    _ask(client, "substituted", [{"role": "user", "content": "Hello"}])
    with toolturn.withhold_tools("wrap-up"):
        _ask(client, "wrap-up", [{"role": "user", "content": "Sum it up."}], tools=_TOOLS)
    _ask(client, "handoffs", [{"role": "user", "content": "Billing or support?"}])
    _ask(client, "thinking-dropped", [{"role": "user", "content": "Think it over."}])
    chat.chat.completions.create(model=FAULTY_MODEL, messages=[{"role": "user", "content": "Hello"}])
    _rebuilt_system_prompt(client, round_number)


class RefuseFaultySpans(SpanProcessor):
    """A span pipeline that raises when the faulty model's call span starts (fault injection)."""

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        """Raise for the faulty model's span; let every other span through."""
        del parent_context
        if FAULTY_MODEL in span.name:
            raise RuntimeError("span pipeline refused the span")

    def on_end(self, span: ReadableSpan) -> None:
        """Nothing to do."""


def _instrument(tracer_provider: TracerProvider, meter_provider: MeterProvider) -> None:
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(meter_provider)
    toolturn.init(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        logger_provider=LoggerProvider(),
        handoff_tools=[HANDOFF_PATTERN],
    )


def serve_metrics(port: int) -> None:
    """The metrics application: scenario every half second, metrics on 127.0.0.1:``port``."""
    start_http_server(port, addr="127.0.0.1")
    resource = Resource.create({"service.name": SERVICE})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(RefuseFaultySpans())
    _instrument(tracer_provider, MeterProvider(metric_readers=[PrometheusMetricReader()], resource=resource))
    client, chat = _clients()
    round_number = 0
    while True:
        scenario(client, chat, round_number)
        round_number += 1
        time.sleep(0.5)


def send_trace(endpoint: str, protocol: str, project: str) -> None:
    """The traces application: one request with an orphan result, exported over OTLP, flushed."""
    exporter: SpanExporter = (
        GrpcSpanExporter(endpoint=endpoint, insecure=True)
        if protocol == "grpc"
        else HttpSpanExporter(endpoint=endpoint)
    )
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": SERVICE, PROJECT_ATTRIBUTE: project}))
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    _instrument(tracer_provider, MeterProvider())
    client, _ = _clients()
    _ask(client, "orphan", orphan_transcript())
    toolturn.shutdown()
    tracer_provider.shutdown()


def _stop(signum: int, frame: FrameType | None) -> None:
    sys.exit(0)


COMMANDS: Final[dict[str, Callable[[argparse.Namespace], None]]] = {
    "metrics": lambda args: serve_metrics(args.port),
    "traces": lambda args: send_trace(args.endpoint, args.protocol, args.project),
}


def main(argv: Sequence[str]) -> int:
    """Run the metrics or the traces application (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="app")
    commands = parser.add_subparsers(dest="command", required=True)
    metrics_command = commands.add_parser("metrics")
    metrics_command.add_argument("--port", type=int, required=True)
    traces_command = commands.add_parser("traces")
    traces_command.add_argument("--endpoint", required=True)
    traces_command.add_argument("--protocol", choices=("http", "grpc"), required=True)
    traces_command.add_argument("--project", required=True)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    COMMANDS[args.command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
