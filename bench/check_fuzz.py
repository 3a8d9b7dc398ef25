"""Soak ``otel-toolturn check`` on long transcripts: judged in segments, each must get what the whole list gets.

The fuzz's transcripts (``bench._fuzz_make``) are short; ``check`` judges a transcript in segments of
about a thousand items or a megabyte of text. Here the generated transcripts of a lane are put one after
another until a file holds 1,100 to 4,000 items (near-valid ones with random or malformed ones mixed in,
as JSON reads them back), and ``check --json --fix`` runs on the file in process. Each file is counted
under one outcome:

- ``judged``: the report's violations, repairs and ``still_refused``, and the ``--fix`` copy, are
  ``validate`` of the whole list, the law's repairs, ``validate`` of the law's view, and that view;
- ``refused``: ``validate`` or the law refuses the whole list, and ``check``'s one line says the same (exit 3);
- failures: ``internal error`` (``check`` said so), ``another refusal`` (it refused in other words, or
  refused a list the whole-list rules read), ``violations``, ``repairs``, ``still refused``, ``copy``
  (that part differs from the whole list's).

Run: ``python -m bench.check_fuzz`` (1,000 files per lane), or ``--count N``, ``--seed S``, ``--lane LANE``.
The test suite (``tests/test_cli.py``) runs a sample of it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal, get_args

from bench._fuzz_make import Flavour, transcript
from otel_toolturn import LANES, Lane, ToolTurnInputError, Violation, ensure_tool_turn_invariants, validate
from otel_toolturn.cli import main as cli

Outcome = Literal[
    "judged", "refused", "internal error", "another refusal", "violations", "repairs", "still refused", "copy"
]
OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)
FAILURES: Final[tuple[Outcome, ...]] = OUTCOMES[2:]
MIXES: Final[tuple[tuple[Flavour, ...], ...]] = (("near",), ("near", "random"), ("near", "malformed"), ("random",))
"""The flavours a file's transcripts are drawn from, one mix a file."""


def generated(lane: Lane, rng: random.Random, *, flavours: Sequence[Flavour], at_least: int) -> list[object]:
    """Generated transcripts of ``flavours`` (as JSON reads them back) one after another, ``at_least`` items in all."""
    items: list[object] = []
    while len(items) < at_least:
        made = transcript(lane, rng.choice(flavours), rng)
        with contextlib.suppress(TypeError, ValueError):  # typed SDK objects and non-finite numbers are no JSON
            items += json.loads(json.dumps(made.items, allow_nan=False))
    return items


def whole_list_refusals(lane: Lane, items: list[object]) -> list[str]:
    """What ``validate`` and the law, each on the whole list, refuse it with (empty: neither)."""
    said = []
    for judge_whole in (validate, ensure_tool_turn_invariants):
        try:
            judge_whole(items, lane=lane)
        except ToolTurnInputError as error:  # noqa: PERF203 - two calls, each refusing on its own
            said.append(str(error))
    return said


def _as_reported(violations: Sequence[Violation]) -> list[dict[str, object]]:
    """Violations as ``check --json`` reports them."""
    return [{"position": v.position, "rule": v.rule, "message": v.message} for v in violations]


def outcome(lane: Lane, items: list[object], folder: Path) -> Outcome:
    """``check --json --fix`` on a file of ``items`` in ``folder``, against the whole list's rules and view."""
    source, fixed = folder / "transcript.json", folder / "fixed.json"
    source.write_text(json.dumps(items), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(["check", str(source), "--json", "--lane", lane, "--fix", str(fixed)])
    if "internal error" in err.getvalue():
        return "internal error"
    refusals = whole_list_refusals(lane, items)
    if refusals or code == 3:
        said = err.getvalue().strip().split(": ", 2)[-1]
        return "refused" if code == 3 and said in refusals else "another refusal"
    whole = ensure_tool_turn_invariants(items, lane=lane)
    view = json.loads(json.dumps(list(whole.messages)))
    report = json.loads(out.getvalue().splitlines()[0])
    repairs = [
        {"form": r.form, "tool_call_ids": list(r.tool_call_ids), "lossy": r.lossy, "before_run": r.before_run}
        for r in whole.repairs
    ]
    if report["violations"] != _as_reported(validate(items, lane=lane)):
        return "violations"
    if report["repairs"] != repairs:
        return "repairs"
    if report["still_refused"] != _as_reported(validate(view, lane=lane)):
        return "still refused"
    return "judged" if json.loads(fixed.read_text(encoding="utf-8")) == view else "copy"


def run(count: int, *, seed: int = 1, lanes: Sequence[Lane] = LANES) -> dict[Lane, Counter[Outcome]]:
    """``count`` files per lane, each lane from its own seeded generator: the outcomes counted."""
    counts: dict[Lane, Counter[Outcome]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for lane in lanes:
            rng = random.Random(f"{seed}:{lane}")
            tally = counts[lane] = Counter()
            for _ in range(count):
                items = generated(lane, rng, flavours=rng.choice(MIXES), at_least=rng.randint(1_100, 4_000))
                tally[outcome(lane, items, Path(folder))] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=1_000, help="files per lane")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--lane", choices=LANES, action="append", help="only this lane (repeatable)")
    args = parser.parse_args()
    counts = run(args.count, seed=args.seed, lanes=args.lane or LANES)
    print(f"{'lane':<24}" + "".join(f"{name:>17}" for name in OUTCOMES))
    for lane, tally in counts.items():
        print(f"{lane:<24}" + "".join(f"{tally[name]:>17,}" for name in OUTCOMES))
    failures = sum(tally[name] for tally in counts.values() for name in FAILURES)
    print(f"\nfailures: {failures:,}")


if __name__ == "__main__":
    main()
