"""The instrumentation's overhead on real SDK calls, side by side with the other OpenAI instrumentations.

Each variant runs in its own process, so patches never mix. Inside a process the same calls are
timed uninstrumented first, then instrumented, and the ratio of the two is reported (lower is
better; 1.00x is free). Every process has the same OpenTelemetry SDK set up: a tracer provider
with a batch processor, a meter provider and a logger provider, all exporting to nothing.

Calls, over a mock transport of the SDK's own HTTP client (no network):

- ``chat 2,000 msgs``: ``chat.completions.create`` with a 2,000-message transcript (tool rounds);
- ``chat 2,000 msgs, broken``: the same with missing and late results (otel-toolturn repairs it);
- ``chat stream 5,000``: ``chat.completions.create(stream=True)`` read to the end, 5,000 chunks;
- ``anthropic 2,000 msgs`` / ``anthropic 2,000 msgs, broken`` / ``anthropic stream 5,000``: the
  same through ``messages.create`` (otel-toolturn only; the other two instrument OpenAI).

Variants: ``otel-toolturn``; ``otel-genai`` (``opentelemetry-instrumentation-genai-openai``, or
``-openai-v2``); ``openllmetry`` (``opentelemetry-instrumentation-openai`` from traceloop), each
with its default settings. A variant whose package is not installed is reported as such.

Run: ``python -m bench.overhead`` (``--quick`` for fewer rounds). ``--split`` instead prints where
otel-toolturn's own time goes on each 2,000-message call, with the SDK call itself stubbed out:
the law (its clean scan), the strip rule, the request receipt (prefix fingerprint; system-prompt
pieces and fingerprints), the telemetry (span, metrics, events, the response check) and the
rest, in microseconds of this thread's CPU time per call (the best of many repeats).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final

import anthropic
import httpx2
import openai
from opentelemetry import _logs, metrics, trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from otel_toolturn.instrument import ToolTurnInstrumentor

VARIANTS: Final = ("otel-toolturn", "otel-genai", "openllmetry")
MODEL: Final = "model-a"
MESSAGES: Final = 2000
EVENTS: Final = 5000


def chat_transcript(size: int, *, broken: bool) -> list[dict[str, Any]]:
    """A Chat Completions transcript of ``size`` messages: user, assistant with a call, tool result."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful assistant."}]
    turn = 0
    while len(out) < size - 1:
        call = f"call_{turn}"
        out.append({"role": "user", "content": f"Question {turn}: what is in file {turn}?"})
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call, "type": "function", "function": {"name": "read", "arguments": f'{{"n": {turn}}}'}}
                ],
            }
        )
        if not (broken and turn % 50 == 7):
            out.append({"role": "tool", "tool_call_id": call, "content": f"contents of file {turn} " * 4})
        turn += 1
    out.append({"role": "user", "content": "Summarise."})
    return out[:size]


def anthropic_transcript(size: int, *, broken: bool = False) -> list[dict[str, Any]]:
    """An Anthropic transcript of ``size`` messages with a tool round every three messages.

    ``broken``: every 50th round's result is missing (otel-toolturn adds a closing one).
    """
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < size - 1:
        call = f"toolu_{turn}"
        out.append({"role": "user", "content": f"Question {turn}"})
        out.append(
            {"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "read", "input": {"n": turn}}]}
        )
        if not (broken and turn % 50 == 7):
            result = {"type": "tool_result", "tool_use_id": call, "content": f"file {turn} " * 4}
            out.append({"role": "user", "content": [result]})
        turn += 1
    out = out[: size - 1] if out[size - 2]["role"] == "assistant" else out[:size]
    if out[-1]["role"] == "assistant":
        out.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{turn - 1}", "content": "x"}]}
        )
    return out


def chat_json() -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
        }
    ).encode()


def chat_sse(events: int) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None) -> str:
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n"

    parts = [chunk({"role": "assistant", "content": ""}, None)]
    parts += [chunk({"content": f"w{i} "}, None) for i in range(events - 2)]
    parts += [chunk({}, "stop"), "data: [DONE]\n\n"]
    return "".join(parts).encode()


def anthropic_json() -> bytes:
    return json.dumps(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 7},
        }
    ).encode()


def anthropic_sse(events: int) -> bytes:
    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"

    start: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL, "content": []}
    start |= {"stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}
    parts = [event("message_start", {"message": start})]
    parts.append(event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}))
    parts += [
        event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": f"w{i} "}})
        for i in range(events - 5)
    ]
    parts.append(event("content_block_stop", {"index": 0}))
    parts.append(event("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}}))
    parts.append(event("message_stop", {}))
    return "".join(parts).encode()


class _NoSpans(SpanExporter):
    def export(self, spans: Sequence[object]) -> SpanExportResult:
        del spans
        return SpanExportResult.SUCCESS


class _NoLogs(LogRecordExporter):
    def export(self, batch: Sequence[object]) -> LogRecordExportResult:
        del batch
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        del timeout_millis
        return True


def _telemetry() -> None:
    """The same OpenTelemetry SDK in every process: real providers, exporting to nothing."""
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(_NoSpans()))
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(_NoLogs()))
    _logs.set_logger_provider(logger_provider)


def _instrumentor(variant: str) -> tuple[Any, str] | None:
    """The ``BaseInstrumentor`` of ``variant`` and its package, or ``None`` when not installed."""
    if variant == "otel-toolturn":
        return ToolTurnInstrumentor(), "otel-toolturn"
    candidates = (
        [
            ("opentelemetry.instrumentation.genai.openai", "opentelemetry-instrumentation-genai-openai"),
            ("opentelemetry.instrumentation.openai_v2", "opentelemetry-instrumentation-openai-v2"),
        ]
        if variant == "otel-genai"
        else [("opentelemetry.instrumentation.openai", "opentelemetry-instrumentation-openai")]
    )
    for module, dist in candidates:
        try:
            instrumentor = importlib.import_module(module).OpenAIInstrumentor
        except ImportError:
            continue
        return instrumentor(), dist
    return None


Call = Callable[[], object]


def _drain(stream: Iterable[object]) -> int:
    """Read a stream to its end, as a caller would; the number of events."""
    count = 0
    for _ in stream:
        count += 1
    return count


def _calls(*, quick: bool, openai_only: bool) -> dict[str, tuple[Call, int]]:
    """Each timed call and how many times one round runs it."""

    def client(body: bytes, kind: str) -> httpx2.Client:
        headers = {"content-type": "text/event-stream" if kind == "sse" else "application/json"}
        return httpx2.Client(
            transport=httpx2.MockTransport(lambda _r: httpx2.Response(200, content=body, headers=headers))
        )

    chat: Any = openai.OpenAI(api_key="k", http_client=client(chat_json(), "json"), max_retries=0)
    chat_stream: Any = openai.OpenAI(api_key="k", http_client=client(chat_sse(EVENTS), "sse"), max_retries=0)
    clean = chat_transcript(MESSAGES, broken=False)
    broken = chat_transcript(MESSAGES, broken=True)
    n = 1
    calls: dict[str, tuple[Call, int]] = {
        "chat 2,000 msgs": (lambda: chat.chat.completions.create(model=MODEL, messages=clean), n),
        "chat 2,000 msgs, broken": (lambda: chat.chat.completions.create(model=MODEL, messages=broken), n),
        "chat stream 5,000": (
            lambda: _drain(chat_stream.chat.completions.create(model=MODEL, messages=clean[:3], stream=True)),
            1,
        ),
    }
    if openai_only:
        return calls
    telemetry_off: Any = {"traces": {"enabled": False}}
    ant: Any = anthropic.Anthropic(
        api_key="k", http_client=client(anthropic_json(), "json"), max_retries=0, open_telemetry=telemetry_off
    )
    ant_stream: Any = anthropic.Anthropic(
        api_key="k", http_client=client(anthropic_sse(EVENTS), "sse"), max_retries=0, open_telemetry=telemetry_off
    )
    transcript = anthropic_transcript(MESSAGES)
    broken_transcript = anthropic_transcript(MESSAGES, broken=True)
    calls["anthropic 2,000 msgs"] = (
        lambda: ant.messages.create(model=MODEL, max_tokens=8, messages=transcript),
        3 if quick else 10,
    )
    calls["anthropic 2,000 msgs, broken"] = (
        lambda: ant.messages.create(model=MODEL, max_tokens=8, messages=broken_transcript),
        3 if quick else 10,
    )
    calls["anthropic stream 5,000"] = (
        lambda: _drain(ant_stream.messages.create(model=MODEL, max_tokens=8, messages=transcript[:1], stream=True)),
        1,
    )
    return calls


def _once(call: Call, count: int) -> float:
    """Seconds of this process's CPU time per call, garbage collection paused (as ``timeit`` does).

    CPU time rather than wall time: other processes' load on a shared machine stays out.
    """
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        for _ in range(count):
            call()
        return (time.process_time() - started) / count
    finally:
        gc.enable()


def child(variant: str, *, quick: bool) -> dict[str, Any]:
    """Time every call uninstrumented and instrumented in paired rounds; the median of the paired ratios.

    Each round times the call on both sides back to back (the order alternating from round to
    round), so drift in the machine's load falls on both sides alike; the median of the rounds'
    ratios is reported, with the best uninstrumented time for scale.
    """
    _telemetry()
    calls = _calls(quick=quick, openai_only=variant != "otel-toolturn")
    found = _instrumentor(variant)
    if found is None:
        return {"variant": variant, "package": "not installed", "before": {}, "ratio": {}}
    instrumentor, package = found
    rounds = 3 if quick else 11
    before: dict[str, float] = {}
    ratio: dict[str, float] = {}
    for name, (call, count) in calls.items():
        call()
        plain: list[float] = []
        ratios: list[float] = []
        for index in range(rounds):
            if index % 2:
                instrumentor.instrument()
                instrumented = _once(call, count)
                instrumentor.uninstrument()
                uninstrumented = _once(call, count)
            else:
                uninstrumented = _once(call, count)
                instrumentor.instrument()
                instrumented = _once(call, count)
                instrumentor.uninstrument()
            plain.append(uninstrumented)
            ratios.append(instrumented / uninstrumented)
        before[name] = min(plain)
        ratio[name] = statistics.median(ratios)
    return {"variant": variant, "package": package, "before": before, "ratio": ratio}


def _best_us(calls: dict[str, Call], count: int, repeats: int) -> dict[str, float]:
    """Microseconds of this thread's CPU time per call of each: the best of ``repeats`` interleaved runs of ``count``.

    Interleaved (every call once per repeat, in turn), so a burst of load elsewhere falls on all alike.
    """
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeats):
        for name, call in calls.items():
            gc.collect()
            gc.disable()
            try:
                started = time.thread_time_ns()
                for _ in range(count):
                    call()
                best[name] = min(best[name], (time.thread_time_ns() - started) / count / 1000)
            finally:
                gc.enable()
    return best


SPLIT: Final = ("total", "law", "strip", "receipt: prefix", "receipt: system", "telemetry", "rest")


def _split_row(resource: object, reply: object, kwargs: dict[str, Any], *, quick: bool) -> dict[str, float]:
    """One call's split (see ``split``)."""
    from otel_toolturn import _law, compose  # noqa: PLC0415 - only the split reads the internals
    from otel_toolturn.instrument import _patches  # noqa: PLC0415
    from otel_toolturn.instrument._record import CallRecord  # noqa: PLC0415
    from otel_toolturn.instrument._request import DIGESTS, prepare_request  # noqa: PLC0415

    telemetry = _patches.STATE.telemetry
    if telemetry is None:
        raise RuntimeError("the split needs otel-toolturn instrumented")
    lane = "anthropic.messages" if isinstance(resource, anthropic.resources.Messages) else "openai.chat_completions"
    target = next(t for t in _patches.TARGETS if t.lane == lane and t.method == "create" and not t.is_async)
    lane, provider = target.lane, target.provider
    wrapper = _patches._wrapper_for(target)
    messages = kwargs["messages"]
    view = _law.ensure_tool_turn_invariants(messages, lane=lane)
    sent = compose.strip_framework_fields(view.messages)
    request = {**kwargs, "messages": sent}
    prepared = prepare_request(kwargs, lane=lane, options=telemetry.options, scope=None, receipt=True)

    def total() -> object:
        return wrapper(lambda *_a, **_k: reply, resource, (), kwargs)

    def law() -> object:
        return _law.ensure_tool_turn_invariants(messages, lane=lane)

    def strip() -> object:
        return compose.strip_framework_fields(view.messages)

    def prefix() -> object:
        return DIGESTS.prefix_fingerprint(sent, source=messages)

    def system() -> object:
        pieces = compose.contributing_pieces(compose.system_prompt_pieces(request, lane=lane))
        return tuple(compose.fingerprint(p.raw_content) for p in pieces)

    def record() -> None:
        one = CallRecord(telemetry, lane=lane, provider=provider, requested_model=MODEL, server_address="h")
        with one.current():
            pass
        one.request(prepared)
        one.response(reply)

    total()
    count, repeats = (5, 5) if quick else (10, 30)
    pieces: dict[str, Call] = {
        "total": total,
        "law": law,
        "strip": strip,
        "receipt: prefix": prefix,
        "receipt: system": system,
        "telemetry": record,
    }
    row = _best_us(pieces, count, repeats)
    row["rest"] = row["total"] - sum(v for k, v in row.items() if k != "total")
    return row


def split(*, quick: bool) -> dict[str, dict[str, float]]:
    """Where otel-toolturn's own time goes on each 2,000-message call, the SDK call stubbed out (µs per call).

    ``total``: the patched method around a stub that returns the SDK's own response object at
    once. ``law``: ``ensure_tool_turn_invariants`` (its clean scan when nothing needs restoring).
    ``strip``: the strip rule on the view. ``receipt: prefix``: the prefix fingerprint (digest
    cache warm, as on a conversation's next turn). ``receipt: system``: the system-prompt pieces
    and their fingerprints. ``telemetry``: one call's record (span, metric points, events and log
    records, the whole-response check). ``rest``: ``total`` less the others.
    """
    _telemetry()
    telemetry_off: Any = {"traces": {"enabled": False}}
    chat: Any = openai.OpenAI(api_key="k", http_client=httpx2.Client(), max_retries=0)
    ant: Any = anthropic.Anthropic(
        api_key="k", http_client=httpx2.Client(), max_retries=0, open_telemetry=telemetry_off
    )
    chat_reply = openai.types.chat.ChatCompletion.model_validate_json(chat_json())
    ant_reply = anthropic.types.Message.model_validate_json(anthropic_json())
    cases: dict[str, tuple[Any, object, dict[str, Any]]] = {
        "chat 2,000 msgs": (chat.chat.completions, chat_reply, {"messages": chat_transcript(MESSAGES, broken=False)}),
        "chat 2,000 msgs, broken": (
            chat.chat.completions,
            chat_reply,
            {"messages": chat_transcript(MESSAGES, broken=True)},
        ),
        "anthropic 2,000 msgs": (
            ant.messages,
            ant_reply,
            {"max_tokens": 8, "messages": anthropic_transcript(MESSAGES)},
        ),
        "anthropic 2,000 msgs, broken": (
            ant.messages,
            ant_reply,
            {"max_tokens": 8, "messages": anthropic_transcript(MESSAGES, broken=True)},
        ),
    }
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument()
    try:
        return {
            name: _split_row(resource, reply, {"model": MODEL, **extra}, quick=quick)
            for name, (resource, reply, extra) in cases.items()
        }
    finally:
        instrumentor.uninstrument()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--child", choices=VARIANTS)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--split", action="store_true", help="where otel-toolturn's own time goes, per call")
    args = parser.parse_args(argv)
    if args.split:
        rows = split(quick=args.quick)
        width = max(len(n) for n in rows) + 2
        print("otel-toolturn's own time per call, SDK call stubbed: µs of thread CPU time, best of repeats.\n")
        print(f"{'call':<{width}}" + "".join(f"{k:>17}" for k in SPLIT))
        for name, cells in rows.items():
            print(f"{name:<{width}}" + "".join(f"{cells[k]:>17.0f}" for k in SPLIT))
        return
    if args.child:
        print(json.dumps(child(args.child, quick=args.quick)))
        return
    root = Path(__file__).resolve().parents[1]
    results = []
    for variant in VARIANTS:
        command = [sys.executable, str(Path(__file__).resolve()), "--child", variant]
        if args.quick:
            command.append("--quick")
        done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=root)  # noqa: S603
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    names = list(next(r for r in results if r["before"])["before"])
    width = max(len(n) for n in names) + 2
    print("Overhead of each instrumentation: median over paired rounds of instrumented / uninstrumented time.")
    print("'uninstrumented': best per-call time. '-': not measured for that instrumentation.\n")
    header = f"{'call':<{width}}{'uninstrumented':>16}" + "".join(f"{r['variant']:>16}" for r in results)
    print(header)
    for name in names:
        base = min(r["before"][name] for r in results if name in r["before"])
        row = f"{name:<{width}}{base * 1000:>13.2f} ms"
        for r in results:
            measured = r["ratio"].get(name)
            row += f"{measured:>15.3f}x" if measured else f"{'-':>16}"
        print(row)
    print()
    for r in results:
        print(f"{r['variant']}: {r['package']}")


if __name__ == "__main__":
    main()
