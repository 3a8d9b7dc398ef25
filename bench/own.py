"""otel-toolturn's own time inside real SDK calls: how much of each call is its code.

The side-by-side ratios of ``bench.overhead`` carry the machine's noise, and on the chat calls
(the OpenAI SDK takes ~0.5-1 s over the mock transport) that noise is wider than anything
otel-toolturn adds. This reading has far less: in one process, instrumented once, each call of
``bench.overhead`` runs as it does there (same transcripts, same clients), and the time spent
inside otel-toolturn's own sections is summed per call: the request hook (the law, the strip
rule, the tools rule), the record made where the SDK sends (the span's start), the request's
record once the first send has returned (the receipt: the prefix digests, the conversation
state; the repairs' events and counts), the response's check or the stream's start, each
streamed event's observer, and the record's end. A section run inside another is
counted once, in the outer one. Each section's timing costs a pair of clock reads; their cost,
measured alone, is taken off.

Per call the figure is ``call / (call - own)``: the ratio the call would show if the only
difference from an uninstrumented one were otel-toolturn's own instructions, with the median of
each over the calls. What it leaves out, so the side-by-side ratio can be higher: the SDK's own
work slowed by the cache state otel-toolturn's work leaves behind, the ``wrapt`` call into the
patched method, and a stream proxy's step from one event to the next around its observer.

Run: ``python -m bench.own [--only CALL]... [--calls N]``.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Final, ParamSpec, TypeVar

from bench import overhead
from otel_toolturn.instrument import ToolTurnInstrumentor, _patches
from otel_toolturn.instrument._pending import PendingCall
from otel_toolturn.instrument._record import CallRecord

P = ParamSpec("P")
R = TypeVar("R")

CLOCK: Final = time.perf_counter_ns
"""Sections are short (µs) and each is one thread's own run, so a wall clock with a cheap read serves."""


class Ledger:
    """The time spent inside the sections of one call, each outermost section counted once."""

    def __init__(self, pair_ns: float = 0.0, *, clock: Callable[[], int] = CLOCK) -> None:
        self.pair_ns = pair_ns
        self._clock = clock
        self.own_ns = 0.0
        self.sections = 0
        self._depth = 0

    def timed(self, function: Callable[P, R]) -> Callable[P, R]:
        """``function``, counting its time into the ledger unless it runs inside another counted section."""

        @functools.wraps(function)
        def section(*args: P.args, **kwargs: P.kwargs) -> R:
            if self._depth:
                return function(*args, **kwargs)
            self._depth = 1
            clock = self._clock
            started = clock()
            try:
                return function(*args, **kwargs)
            finally:
                self.own_ns += clock() - started - self.pair_ns
                self.sections += 1
                self._depth = 0

        return section

    def reset(self) -> None:
        """Start the next call's count."""
        self.own_ns = 0.0
        self.sections = 0


def pair_cost(samples: int = 20_000) -> float:
    """What one empty section costs to time, in ns (the median over runs of a loop of them)."""
    ledger = Ledger()
    empty = ledger.timed(lambda: None)
    runs = []
    for _ in range(15):
        ledger.reset()
        for _ in range(samples // 15):
            empty()
        runs.append(ledger.own_ns / ledger.sections)
    return statistics.median(runs)


SECTIONS: Final[tuple[tuple[object, str], ...]] = (
    (_patches, "_begin"),
    (_patches, "_watched"),
    (PendingCall, "sent"),
    (PendingCall, "handed_over"),
    (CallRecord, "feed"),
    (CallRecord, "finish"),
)
"""otel-toolturn's own sections: where each function lives, and its name."""


@contextmanager
def sections(ledger: Ledger) -> Iterator[None]:
    """otel-toolturn's own sections counted into ``ledger`` while inside (see the module docstring)."""
    saved = [getattr(owner, name) for owner, name in SECTIONS]
    for (owner, name), function in zip(SECTIONS, saved, strict=True):
        setattr(owner, name, ledger.timed(function))
    try:
        yield
    finally:
        for (owner, name), function in zip(SECTIONS, saved, strict=True):
            setattr(owner, name, function)


def measure(*, only: Sequence[str] = (), calls: int = 40, warm: int = 5) -> dict[str, dict[str, float]]:
    """Per call of ``bench.overhead`` (``only``: just these): median call time, own time, their ratio."""
    overhead.setup_telemetry()
    chosen = overhead.calls_by_name(openai_only=False, only=only)
    ledger = Ledger(pair_cost())
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument()
    rows: dict[str, dict[str, float]] = {}
    try:
        with sections(ledger):
            for name, (source, run) in chosen.items():
                totals: list[float] = []
                owns: list[float] = []
                for step in range(warm + calls):
                    given = source()
                    ledger.reset()
                    started = CLOCK()
                    run(given)
                    took = CLOCK() - started
                    if step >= warm:
                        totals.append(took)
                        owns.append(ledger.own_ns)
                call, own = statistics.median(totals), statistics.median(owns)
                rows[name] = {"call_ms": call / 1e6, "own_us": own / 1e3, "ratio": call / (call - own)}
    finally:
        instrumentor.uninstrument()
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", action="append", default=[], metavar="CALL", help="only this call (repeatable)")
    parser.add_argument("--calls", type=int, default=40, help="timed calls per row (after 5 warm-up calls)")
    args = parser.parse_args(argv)
    rows = measure(only=args.only, calls=args.calls)
    width = max(len(n) for n in rows) + 2
    print("otel-toolturn's own time inside real SDK calls (median over calls; see `bench/own.py`).\n")
    print(f"{'call':<{width}}{'call':>12}{'own':>12}{'call / (call - own)':>22}")
    for name, row in rows.items():
        print(f"{name:<{width}}{row['call_ms']:>9.2f} ms{row['own_us']:>9.0f} µs{row['ratio']:>21.4f}x")


if __name__ == "__main__":
    main()
