"""The law's cost in instructions, where wall time is too noisy to read a change of a tenth from.

For each row of ``bench.law`` (each lane, Gemini without ids, the Chat lane in Ollama's dialect) and each
state (``clean``, ``few``, ``dense``): the instructions one call of the law takes on that list, and one
``json.dumps`` of it, as callgrind counts them (``valgrind --tool=callgrind``). A count is the difference
of two fresh processes that make the same list and warm up alike, one then calling the function
``--calls`` times and one not, divided by ``--calls``: what the calls alone took. Both hash strings alike
(``PYTHONHASHSEED=0``) and collect no garbage while the calls run, so the count of a given code on a given
list is the same on every run, and two versions of the code compare by their counts. The ratio to
``json.dumps`` is lower than ``bench.law``'s wall-time one: the standard encoder's C code runs more
instructions a cycle than the interpreter does; read it across versions, not against ``bench.law``.

Run: ``python -m bench.instructions`` (``--size``: messages, 2,000 unless told; ``--only NAME``: the rows
whose label holds NAME; ``--state``: one state). It needs ``valgrind`` on the ``PATH``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, Literal, NamedTuple

from bench import law
from otel_toolturn import ensure_tool_turn_invariants

ROOT: Final = Path(__file__).resolve().parents[1]
STATES: Final = ("clean", "few", "dense")
Measured = Literal["law", "dumps"]
_COLLECTED: Final = re.compile(r"Collected : (\d+)")
_WARM: Final = 5
"""Calls made before the counted ones in every run: the first calls of a process take more than the later ones."""


class Count(NamedTuple):
    """One row and state: the list's length, and the instructions a call of the law and of ``json.dumps`` takes."""

    messages: int
    law: float
    dumps: float


def _row(label: str) -> law.Row:
    """The ``bench.law`` row of that label."""
    return next(row for row in law.ROWS if row.label == label)


def run(label: str, state: str, size: int, calls: int, measured: Measured) -> None:
    """The counted process: make the row's list, call both functions ``_WARM`` times, then ``measured`` ``calls``."""
    row = _row(label)
    messages = row.written(law.session(size, state=state))
    call: Callable[[], object] = (
        (lambda: ensure_tool_turn_invariants(messages, lane=row.lane, dialect=row.dialect))
        if measured == "law"
        else (lambda: json.dumps(messages))
    )
    for _ in range(_WARM):  # in both runs: imports, and the interpreter's specialising of what the calls run
        ensure_tool_turn_invariants(messages, lane=row.lane, dialect=row.dialect)
        json.dumps(messages)
    gc.collect()
    gc.disable()  # a collection falls in one run and not in another: the counts would not add up
    for _ in range(calls):
        call()


def collected(label: str, state: str, size: int, calls: int, measured: Measured) -> int:
    """The instructions callgrind counts for a fresh process running ``run`` with these arguments."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise RuntimeError("valgrind is not on the PATH: install it (Debian: apt-get install valgrind)")
    command = [
        valgrind,
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-m",
        "bench.instructions",
        "--run",
        label,
        state,
        str(size),
        str(calls),
        measured,
    ]
    same_hashes = {**os.environ, "PYTHONHASHSEED": "0"}  # string hashes, so set and dict layouts, alike in every run
    done = subprocess.run(  # noqa: S603 - valgrind running this module
        command, capture_output=True, text=True, check=True, cwd=ROOT, timeout=1800, env=same_hashes
    )
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count: {done.stderr[-400:]}")
    return int(found.group(1))


def count(label: str, state: str, size: int, calls: int = 10) -> Count:
    """The row's instructions per call of the law and of ``json.dumps``: a counted run less one without the calls."""
    base = collected(label, state, size, 0, "law")
    return Count(
        messages=len(_row(label).written(law.session(size, state=state))),
        law=(collected(label, state, size, calls, "law") - base) / calls,
        dumps=(collected(label, state, size, calls, "dumps") - base) / calls,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table (or, with ``--run``, be one counted process)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=2_000, help="messages in each list (default: 2,000)")
    parser.add_argument("--only", action="append", default=[], help="only the rows whose label holds this")
    parser.add_argument("--state", choices=STATES, action="append", default=[], help="only this state (repeatable)")
    parser.add_argument("--calls", type=int, default=10, help="calls in a counted run (default: 10)")
    parser.add_argument(
        "--run", nargs=5, metavar=("LABEL", "STATE", "SIZE", "CALLS", "MEASURED"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.run:
        label, state, size, calls, measured = args.run
        run(label, state, int(size), int(calls), measured)
        return
    print(f"{'row':<26} {'state':<6} {'msgs':>7} {'law, M instr.':>14} {'json.dumps':>11} {'÷ json.dumps':>13}")
    print("-" * 82)
    for row in law.ROWS:
        if args.only and not any(name in row.label for name in args.only):
            continue
        for state in args.state or STATES:
            found = count(row.label, state, args.size, args.calls)
            print(
                f"{row.label:<26} {state:<6} {found.messages:>7,} {found.law / 1e6:>14.2f} "
                f"{found.dumps / 1e6:>11.2f} {found.law / found.dumps:>12.3f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
