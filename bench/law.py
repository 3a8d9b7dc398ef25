"""The law's cost, side by side in one run, as ratios.

For 200, 2,000 and 20,000 messages, clean and broken, per lane (Gemini also with calls and responses
without ids, as the Developer API often sends them, and the Chat lane in Ollama's dialect, both matched by
name): the law's time as a ratio of
``json.dumps`` of the same list (the floor any request pays to serialise it), and of
``turnsafe.repair`` (the closest Python peer; Anthropic and Chat only) on the same input.
Three states: ``clean``; ``few`` faults, as a real broken session has them (an orphan at the head
left by trimming, the last round interrupted); ``dense`` faults, every kind in three rounds of ten
(a missing result, a late result behind a user message, text after a call) — the worst case.

Run: ``python -m bench.law`` (``--quick`` for fewer rounds). Timings are process CPU time; each
round times the law, ``json.dumps`` and the peer back to back, and a ratio is the median of the
rounds' ratios, so load on the machine moves all three together. Read the ratios, not the times.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Final, NamedTuple, get_args

from otel_toolturn import Dialect, Lane, ensure_tool_turn_invariants
from tests.transcripts import A, Block, Event, R, U, build, c, gemini, ollama, t

try:
    import turnsafe
except ImportError:  # the peer is an optional bench dependency
    turnsafe = None  # type: ignore[assignment]

SIZES = (200, 2_000, 20_000)
LANES: tuple[Lane, ...] = get_args(Lane)
PEER_PROVIDER = {"anthropic.messages": "anthropic", "openai.chat_completions": "openai"}


class Row(NamedTuple):
    """One row of the table: its label, its lane and dialect, and how a session is written in them."""

    label: str
    lane: Lane
    dialect: Dialect | None
    written: Callable[[list[Event]], list[object]]


ROWS: Final = (
    *(Row(lane, lane, None, partial(build, lane)) for lane in LANES),
    Row("gemini, no ids", "gemini.generate_content", None, partial(gemini, ids=False)),
    Row("chat, ollama (no ids)", "openai.chat_completions", "ollama", ollama),
)


def session(size: int, *, state: str, seed: int = 7) -> list[Event]:
    """An agent session of about ``size`` messages: questions, tool rounds, answers.

    ``state``: ``clean``; ``few`` — a real broken session: an orphan at the head (the window was
    trimmed) and the last round interrupted; ``dense`` — every fault kind in three rounds of ten.
    """
    rng = random.Random(seed)
    events: list[Event] = []
    if state != "clean":
        events.append(R("call_trimmed", "result of a call trimmed away"))
    n = 0
    while len(events) < size:
        n += 1
        events.append(U(f"question {n}: " + "please look into the logs " * 3))
        calls = [f"call_{n}_{k}" for k in range(rng.randint(1, 3))]
        fault = rng.randrange(10) if state == "dense" else -1
        blocks: list[Block] = [t("Let me check."), *(c(i, "read_file", '{"path": "src/app.py"}') for i in calls)]
        if fault == 0:
            blocks.append(t("(text after the calls)"))
        events.append(A(*blocks))
        results = [R(i, "line of output " * 12) for i in calls]
        if fault == 1:
            results = results[:-1]
        if fault == 2:
            events.append(results[0])
            events.append(U("and hurry"))
            events.extend(results[1:])
        else:
            events.extend(results)
        events.append(A(t("Here is what I found: " + "details " * 20)))
    if state == "few":
        events.extend([U("one more thing"), A(t("Checking."), c("call_last_0", "read_file"), c("call_last_1", "grep"))])
        events.append(R("call_last_0", "partial output"))
        events.append(U("continue"))
    return events


def _timed(fn: Callable[[], object], loops: int) -> float:
    """Process CPU seconds per call of ``fn`` over ``loops`` calls."""
    started = time.process_time()
    for _ in range(loops):
        fn()
    return (time.process_time() - started) / loops


def _loops(fn: Callable[[], object]) -> int:
    """How many calls make one timing last about 5 ms (the clock's grain is far below that)."""
    once = max(_timed(fn, 1), 1e-6)
    return max(1, min(1000, int(0.005 / once)))


def paired(fns: dict[str, Callable[[], object]], rounds: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median seconds per call of each of ``fns``, and the median per-round ratio of each to the first."""
    loops = {name: _loops(fn) for name, fn in fns.items()}
    times: dict[str, list[float]] = {name: [] for name in fns}
    ratios: dict[str, list[float]] = {name: [] for name in fns}
    first = next(iter(fns))
    for _ in range(rounds):
        now = {name: _timed(fn, loops[name]) for name, fn in fns.items()}
        for name, value in now.items():
            times[name].append(value)
            ratios[name].append(value / now[first])
    return (
        {name: statistics.median(values) for name, values in times.items()},
        {name: statistics.median(values) for name, values in ratios.items()},
    )


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    rounds = 3 if args.quick else 9
    header = (
        f"{'lane':26} {'state':7} {'msgs':>7} {'law µs':>10} {'÷ json.dumps':>13} "
        f"{'turnsafe µs':>12} {'peer ÷ law':>11}"
    )
    print(header)
    print("-" * len(header))
    for label, lane, dialect, written in ROWS:
        for state in ("clean", "few", "dense"):
            for size in SIZES:
                messages = written(session(size, state=state))
                view = ensure_tool_turn_invariants(messages, lane=lane, dialect=dialect)
                if bool(view.repairs) != (state != "clean"):
                    raise SystemExit(f"bench transcript {label} {size} {state} came out wrong")
                fns: dict[str, Callable[[], object]] = {
                    "law": partial(ensure_tool_turn_invariants, messages, lane=lane, dialect=dialect),
                    "dumps": partial(json.dumps, messages),
                }
                provider = PEER_PROVIDER.get(lane) if dialect is None else None
                if turnsafe is not None and provider is not None:
                    fns["peer"] = partial(turnsafe.repair, messages, provider)
                times, ratios = paired(fns, rounds)
                peer_cell, ratio_cell = "n/a", "n/a"
                if "peer" in times:
                    peer_cell, ratio_cell = f"{times['peer'] * 1e6:,.0f}", f"{ratios['peer']:,.1f}x"
                print(
                    f"{label:26} {state:7} {len(messages):>7,} {times['law'] * 1e6:>10,.0f} "
                    f"{1 / ratios['dumps']:>12.3f}x {peer_cell:>12} {ratio_cell:>11}"
                )


if __name__ == "__main__":
    main()
