"""Paired timing across processes: each side of a comparison in its own process, one call at a time, in turn.

An instrumentation is compared with the same SDK uninstrumented without switching it on and off
in one process (some instrumentations leave wrappers behind when switched off, so every later
call, instrumented or not, grows slower). Three worker processes serve the same calls: the
uninstrumented SDK, the instrumented one (instrumented once, as an application is) and the
control, a second uninstrumented process. The parent has them run one call each, back to back,
in an order that rotates from triple to triple, so drift in the machine's load falls on all three
alike. A call's ratio is its time over the adjacent uninstrumented call's; the median over the
triples is reported with its 95% interval. The control's median ratio is the method's own noise
and any bias between two processes (1.00x when it measures nothing).

A worker (``serve``) reads a call's name per line on its standard input, runs that call once on a
fresh input (made before the clock starts) and answers with the seconds of its CPU time on its
own line; anything else the process prints goes to standard error.
"""

from __future__ import annotations

import gc
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import IO, Any, Final

Call = tuple[Callable[[], object], Callable[[Any], object]]
"""A timed call: what makes its input (not timed: a transcript, as the application builds it), and the call."""

SIDES: Final = ("plain", "instrumented", "control")


def timed(run: Callable[[Any], object], given: object) -> float:
    """Seconds of this process's CPU time for one call, garbage collection paused (as ``timeit`` does).

    CPU time rather than wall time: other processes' load on a shared machine stays out.
    """
    gc.disable()
    try:
        started = time.process_time_ns()
        run(given)
        return (time.process_time_ns() - started) / 1e9
    finally:
        gc.enable()


def serve(calls: dict[str, Call], *, note: str = "") -> None:
    """The worker's loop (see the module docstring): first a line naming its calls and ``note``, then one per call."""
    answers: IO[str] = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    answers.write(json.dumps({"calls": list(calls), "note": note}) + "\n")
    for line in sys.stdin:
        name = line.strip()
        if not name:
            break
        prepare, run = calls[name]
        answers.write(f"{timed(run, prepare())!r}\n")


class Worker:
    """One worker process, started at once; ``close`` ends it."""

    def __init__(self, command: Sequence[str], *, cwd: str) -> None:
        self._errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 - kept open for the worker's life, closed in close()
        self._process = subprocess.Popen(  # noqa: S603 - our own module, run with this interpreter
            list(command), cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._errors, text=True
        )
        hello = json.loads(self._line())
        self.calls: list[str] = hello["calls"]
        self.note: str = hello["note"]

    def _line(self) -> str:
        assert self._process.stdout is not None  # noqa: S101 - set by Popen(stdout=PIPE)
        line = self._process.stdout.readline()
        if not line:
            self._process.wait(timeout=60)
            self._errors.seek(0)
            tail = self._errors.read()[-3000:]
            self.close()
            raise RuntimeError(f"a bench worker ({' '.join(self._process.args)}) ended early:\n{tail}")  # type: ignore[arg-type]
        return line

    def time(self, name: str) -> float:
        """Seconds of CPU time of one ``name`` call in this worker."""
        assert self._process.stdin is not None  # noqa: S101 - set by Popen(stdin=PIPE)
        self._process.stdin.write(name + "\n")
        self._process.stdin.flush()
        return float(self._line())

    def close(self) -> None:
        """End the worker (its input closed), wait for it, and close its pipes (idempotent)."""
        for pipe in (self._process.stdin, self._process.stdout):
            if pipe is not None:
                pipe.close()
        self._process.wait(timeout=60)
        self._errors.close()


def median_interval(values: Sequence[float]) -> tuple[float, float]:
    """A distribution-free 95% interval of the median of ``values`` (order statistics, normal approximation)."""
    ordered = sorted(values)
    size = len(ordered)
    spread = 1.96 * math.sqrt(size) / 2
    low = max(0, math.floor(size / 2 - spread))
    high = min(size - 1, math.ceil(size / 2 + spread) - 1)
    return ordered[low], ordered[high]


def compare(
    start: Callable[[str], Worker], *, sets: int, budget: float, fewest: int, most: int
) -> tuple[str, dict[str, dict[str, Any]]]:
    """Every call of the instrumented worker compared across sides in rotating triples (see the module docstring).

    ``start`` starts the worker of one side (of ``SIDES``); ``sets`` sets of the three run one after
    the other, each a fresh set of processes started in an order that rotates from set to set (a
    process started later runs a little faster, a percent or two), so that no one process's luck
    (where its memory landed, its hash seed, when it started) decides a figure. As many triples run
    in all as fit ``budget`` seconds of uninstrumented calls, between ``fewest`` and ``most``, shared
    among the sets. Answers the instrumented worker's note and, per call, the median uninstrumented
    time, the median ratio and its interval, the control's median ratio and the number of triples.
    """
    times: dict[str, dict[str, list[float]]] = {}
    per_set: dict[str, int] = {}
    note = ""
    for index in range(sets):
        workers: dict[str, Worker] = {}
        try:
            for side in (SIDES * 2)[index % 3 : index % 3 + 3]:
                workers[side] = start(side)
            note = workers["instrumented"].note
            for name in workers["instrumented"].calls:
                for side in SIDES:
                    workers[side].time(name)  # each process's first call of this kind is not counted
                if name not in per_set:
                    first = workers["plain"].time(name)
                    per_set[name] = max(fewest, min(most, int(budget / max(first, 1e-6)))) // sets or 1
                    times[name] = {side: [] for side in SIDES}
                for triple in range(per_set[name]):
                    shift = triple % 3
                    for side in (SIDES * 2)[shift : shift + 3]:
                        times[name][side].append(workers[side].time(name))
        finally:
            for one in workers.values():
                one.close()
    return note, {name: _summary(sides) for name, sides in times.items()}


def _summary(times: dict[str, list[float]]) -> dict[str, Any]:
    """One call's figures from its triples' times (see ``compare``)."""
    plain = times["plain"]
    ratios = [i / p for i, p in zip(times["instrumented"], plain, strict=True)]
    return {
        "before": statistics.median(plain),
        "ratio": statistics.median(ratios),
        "interval": median_interval(ratios),
        "control": statistics.median(c / p for c, p in zip(times["control"], plain, strict=True)),
        "triples": len(plain),
    }
