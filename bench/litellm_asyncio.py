"""LiteLLM calls, each in its own ``asyncio.run``: how many spans are exported by the time their call returns.

A script's ``main`` under ``asyncio.run`` makes one LiteLLM call and the loop closes. Here,
``--calls`` such calls (1,000 by default) go round the async entry points and modes in turn:
``acompletion``, ``aresponses`` and ``litellm.anthropic.messages.acreate``, plain and streamed (a
stream read to its end), each with a transcript missing a tool result, against the provider
simulator on loopback. Spans go through a ``SimpleSpanProcessor`` into an in-memory exporter, so
a span is exported when it ends. After each ``asyncio.run`` returns, before the next call starts,
the call's span (the one started since the call began) is looked for: the call is "at return"
when it is exported by then. "Later" counts spans exported after their call returned, by the end
of the run (before the instrumentation is removed, which would end what is left open). Also per
entry point and mode: the requests the simulator served (200), the spans carrying a repair, and
the median and slowest wall time of a call.

Run: ``python -m bench.litellm_asyncio [--calls N] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import logging
import os
import statistics
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Final

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_toolturn.instrument import Options, ToolTurnInstrumentor
from otel_toolturn.simulator import Simulator

ENTRIES: Final = ("acompletion", "aresponses", "anthropic.messages.acreate")
CALL: Final = {"type": "function", "function": {"name": "read", "arguments": "{}"}, "id": "call_1"}
TRANSCRIPTS: Final[dict[str, list[dict[str, object]]]] = {
    "acompletion": [
        {"role": "user", "content": "read a"},
        {"role": "assistant", "content": "Reading.", "tool_calls": [CALL]},
        {"role": "user", "content": "and now?"},
    ],
    "aresponses": [
        {"role": "user", "content": "read a"},
        {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{}"},
        {"role": "user", "content": "and now?"},
    ],
    "anthropic.messages.acreate": [
        {"role": "user", "content": "read a"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "call_1", "name": "read", "input": {}},
            ],
        },
        {"role": "user", "content": "and now?"},
    ],
}
"""One transcript per entry point, in its own shape, each missing the result of ``call_1``."""


@dataclass
class Mode:
    """The figures of one entry point in one mode (plain or streamed)."""

    calls: int = 0
    at_return: int = 0
    later: int = 0
    served: int = 0
    repaired: int = 0
    seconds: list[float] = field(default_factory=list)


async def call(sim: Simulator, entry: str, *, stream: bool) -> None:
    """One LiteLLM call of ``entry`` (a stream read to its end)."""
    kwargs: dict[str, Any] = {"api_key": "sk-bench", "stream": stream}
    if entry == "anthropic.messages.acreate":
        kwargs.update(model="anthropic/claude-sonnet-4-5", api_base=sim.base_url, max_tokens=64)
    else:
        kwargs.update(model="openai/gpt-4o-mini", api_base=sim.openai_base_url)
    transcript = TRANSCRIPTS[entry]
    response: Any
    if entry == "acompletion":
        response = await litellm.acompletion(messages=transcript, max_tokens=64, **kwargs)
    elif entry == "aresponses":
        response = await litellm.aresponses(input=transcript, **kwargs)
    else:
        response = await litellm.anthropic.messages.acreate(messages=transcript, **kwargs)  # type: ignore[attr-defined]
    if stream:
        async for _ in response:
            pass


def run(calls: int) -> dict[str, Mode]:
    """Make ``calls`` calls, each in its own ``asyncio.run``; the figures per entry point and mode."""
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(
        options=Options(),
        tracer_provider=tracer_provider,
        meter_provider=MeterProvider(metric_readers=[InMemoryMetricReader()]),
    )
    modes = [(entry, stream) for entry in ENTRIES for stream in (False, True)]
    figures = {f"{entry} {'stream' if stream else 'plain'}": Mode() for entry, stream in modes}
    made: list[tuple[int, Mode, bool]] = []
    """Each call: when it started, its mode, whether its span was exported when it returned."""
    try:
        with Simulator() as sim:
            for index in range(calls):
                entry, stream = modes[index % len(modes)]
                mode = figures[f"{entry} {'stream' if stream else 'plain'}"]
                served = len(sim.requests)
                started_ns = time.time_ns()
                started = time.perf_counter()
                asyncio.run(call(sim, entry, stream=stream))
                mode.seconds.append(time.perf_counter() - started)
                mine = [s for s in spans.get_finished_spans() if (s.start_time or 0) >= started_ns]
                made.append((started_ns, mode, len(mine) == 1))
                mode.calls += 1
                mode.at_return += len(mine) == 1
                mode.served += len(sim.requests) == served + 1 and sim.requests[-1].status == 200
                mode.repaired += len(mine) == 1 and any(e.name == "toolturn.repair" for e in mine[0].events)
            starts = sorted(s.start_time or 0 for s in spans.get_finished_spans())
    finally:
        instrumentor.uninstrument()
    bounds = [started_ns for started_ns, _, _ in made] + [time.time_ns()]
    for number, (started_ns, mode, at_return) in enumerate(made):
        exported = bisect.bisect_left(starts, bounds[number + 1]) - bisect.bisect_left(starts, started_ns)
        mode.later += exported - at_return
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1_000, help="calls in all (default: 1,000)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    # LiteLLM's own notices: its logging queue moving to each new loop, its pydantic serialisation
    logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning)
    started = time.perf_counter()
    figures = run(args.calls)
    wall = time.perf_counter() - started
    if args.json:
        table = {
            name: {
                "calls": m.calls,
                "at_return": m.at_return,
                "later": m.later,
                "served": m.served,
                "repaired": m.repaired,
                "median_ms": round(statistics.median(m.seconds) * 1000, 1),
                "max_ms": round(max(m.seconds) * 1000, 1),
            }
            for name, m in figures.items()
        }
        print(json.dumps({"calls": args.calls, "wall_s": round(wall, 1), "modes": table}, indent=2))
        return
    print(
        f"{'entry point, mode':<34}{'calls':>7}{'at return':>11}{'later':>7}{'served':>8}{'repaired':>10}"
        f"{'median':>10}{'max':>10}"
    )
    for name, m in figures.items():
        print(
            f"{name:<34}{m.calls:>7}{m.at_return:>11}{m.later:>7}{m.served:>8}{m.repaired:>10}"
            f"{statistics.median(m.seconds) * 1000:>8.1f}ms{max(m.seconds) * 1000:>8.0f}ms"
        )
    total = sum(m.at_return for m in figures.values())
    later = sum(m.later for m in figures.values())
    print(f"{args.calls} calls: {total} spans exported by the time their call returned, {later} later; {wall:.1f} s")


if __name__ == "__main__":
    main()
