"""``otel-toolturn check``'s memory on large files of every shape, side by side with ``json.load``'s, as ratios.

Each shape is written at about ``--size`` bytes (24 MB unless told) into a temporary directory, and
three programs run on it, each in a fresh process: ``check FILE``, ``check FILE --fix OUT`` and
``json.load`` of the file (JSON only). A figure is the program's peak resident memory beyond the same
program's on a file of two messages, divided by the file's size: what the file itself cost.
``json.load`` is the floor of any reader that decodes the file into Python objects.

Shapes: agent sessions in every lane with tool results of 3-6 KB, 1.5-2 KB and 0.6-0.9 KB; messages of
two words; nothing but calls with empty arguments and two-letter results, one call a turn (every
lane); fifty calls a message with six-character ids, every one answered (compact JSON); every call
interrupted; every call reusing one id; a JSONL file of one-message requests; a body whose ``tools``
list is nearly all of it; one call whose input is nearly all of it (nested JSON).

Run: ``python -m bench.check_memory`` (``--quick``: 6 MB files and one lane per shape; ``--only NAME``
for the shapes whose name holds NAME). The test suite (``tests/test_cli.py``) checks a few of these
shapes' bounds on smaller files with the same measure (``peak_rss``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import string
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Final, NamedTuple, get_args

from otel_toolturn import Lane
from tests.transcripts import A, Event, R, U, build, c, t

_PEAK: Final = """\
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
sys.stderr.write(done.stderr.decode(errors="replace")[-4000:])
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""
ROOT: Final = Path(__file__).resolve().parents[1]
CHECK: Final = (sys.executable, "-m", "otel_toolturn.cli", "check")
JSON_LOAD: Final = (sys.executable, "-c", "import json, sys; json.load(open(sys.argv[1], encoding='utf-8'))")
BODY_FIELDS: Final[dict[Lane, str]] = {"openai.responses": "input", "gemini.generate_content": "contents"}
"""The request body field a lane's transcript is read from when it is not a bare list."""
_LINE: Final = "def handler(request):  # reads the request, answers with the stored value\n"


class Peak(NamedTuple):
    """One run: its exit code, its peak resident memory in bytes, and the end of what it wrote to stderr."""

    code: int
    rss: int
    stderr: str


def peak_rss(*argv: str) -> Peak:
    """One run of ``argv`` in a fresh process (in the project's root), measured."""
    command = [sys.executable, "-c", _PEAK, *argv]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT, timeout=900)  # noqa: S603
    code, peak = map(int, done.stdout.split())
    return Peak(code, peak * (1 if sys.platform == "darwin" else 1024), done.stderr)


def as_body(lane: Lane, messages: list[object]) -> object:
    """The transcript as the lane's request body holds it (Anthropic and Chat: the bare list)."""
    if lane in BODY_FIELDS:
        return {BODY_FIELDS[lane]: messages}
    return {"modelId": "m", "messages": messages} if lane == "bedrock.converse" else messages


def agent_session(
    path: Path, size: int, *, lines: tuple[int, int] = (40, 40), lane: Lane = "anthropic.messages"
) -> None:
    """An agent's transcript of about ``size`` bytes in ``lane``: a question, a text and a call, its result.

    Each result is ``lines[0]`` up to ``lines[0] + lines[1]`` lines of 75 characters (3-6 KB unless told).
    """
    events: list[Event] = []
    written = 0
    number = 0
    while written < size:
        number += 1
        turn: list[Event] = [
            U(f"Step {number}: look at the next module and say what it does."),
            A(t("Reading it."), c(f"toolu_{number}", "read", json.dumps({"path": f"m{number}.py"}))),
            R(f"toolu_{number}", _LINE * (lines[0] + number % lines[1])),
        ]
        events.extend(turn)
        written += len(json.dumps(build(lane, turn)))
    path.write_text(json.dumps(as_body(lane, build(lane, events))), encoding="utf-8")


def _rounds_of(size: int, lane: Lane, turn: Callable[[int], list[Event]]) -> Iterator[Event]:
    """A first question, then ``turn(n)`` for n = 0, 1, … until about ``size`` bytes are written in ``lane``."""
    yield U("go")
    one = len(json.dumps(build(lane, [U("go"), *turn(0)])))
    for number in range(size // max(one - 20, 1)):
        yield from turn(number)


def two_words(path: Path, size: int) -> None:
    """Messages of two words each, user and assistant in turn (Chat)."""
    words = itertools.cycle(f"word{n} other{n % 97}" for n in range(1000))
    messages: list[dict[str, str]] = []
    written = 0
    while written < size:
        message = {"role": "user" if len(messages) % 2 == 0 else "assistant", "content": next(words)}
        messages.append(message)
        written += len(json.dumps(message)) + 2
    path.write_text(json.dumps(messages), encoding="utf-8")


def empty_calls(path: Path, size: int, *, lane: Lane) -> None:
    """Nothing but calls with ``{}`` arguments, each answered "ok" right after it: one call a turn."""
    events = list(_rounds_of(size, lane, lambda n: [A(c(f"toolu_{n:08d}", "r", "{}")), R(f"toolu_{n:08d}", "ok")]))
    path.write_text(json.dumps(as_body(lane, build(lane, events))), encoding="utf-8")


def id_dense(path: Path, size: int, *, lane: Lane) -> None:
    """Fifty calls a message with six-character ids, every one answered right after; compact JSON."""
    alphabet = string.ascii_letters + string.digits
    ids = ("t" + "".join(p) for p in itertools.product(alphabet, repeat=5))
    events: list[Event] = [U("go")]
    written = 0
    while written < size:
        batch = [next(ids) for _ in range(50)]
        turn: list[Event] = [A(*(c(i, "r", "{}") for i in batch)), *(R(i, "k") for i in batch)]
        events.extend(turn)
        written += len(json.dumps(build(lane, turn), separators=(",", ":")))
    messages = build(lane, events, merge_user=True)
    path.write_text(json.dumps(as_body(lane, messages), separators=(",", ":")), encoding="utf-8")


def interrupted(path: Path, size: int) -> None:
    """Every call interrupted by the user's next words: a violation and a repair each (Anthropic)."""
    events = list(_rounds_of(size, "anthropic.messages", lambda n: [A(c(f"toolu_{n:08d}", "r", "{}")), U("go")]))
    path.write_text(json.dumps(build("anthropic.messages", events)), encoding="utf-8")


def one_id(path: Path, size: int) -> None:
    """Every call reusing one id, each answered right after (Anthropic)."""
    events = list(_rounds_of(size, "anthropic.messages", lambda _: [A(c("toolu_1", "r", "{}")), R("toolu_1", "ok")]))
    path.write_text(json.dumps(build("anthropic.messages", events)), encoding="utf-8")


def requests_jsonl(path: Path, size: int) -> None:
    """A JSONL file of one-message requests, one a line (a log export)."""
    with path.open("w", encoding="utf-8") as out:
        for number in itertools.count():
            if out.tell() >= size:
                break
            out.write(json.dumps([{"role": "user", "content": f"question {number}"}]) + "\n")


def big_tools(path: Path, size: int) -> None:
    """A request body whose ``tools`` list is nearly all of it, around a short broken transcript (Anthropic)."""
    tool = {"name": "tool_0", "description": "reads a file and returns its lines " * 3, "input_schema": {}}
    count = size // len(json.dumps(tool))
    tools = [{**tool, "name": f"tool_{n}"} for n in range(count)]
    messages = build("anthropic.messages", [U("go"), A(c("k1", "read"))])
    path.write_text(json.dumps({"model": "m", "system": "s", "tools": tools, "messages": messages}), encoding="utf-8")


def big_input(path: Path, size: int) -> None:
    """One call whose input is nested JSON of nearly all the file, answered right after (Anthropic)."""
    row = {"id": 0, "name": "n0", "tags": ["a", "b"], "v": 1.5}
    rows = [{**row, "id": n, "name": f"n{n}", "v": n / 2} for n in range(size // len(json.dumps(row)))]
    messages = build("anthropic.messages", [U("go"), A(c("k1", "read")), R("k1", "ok")])
    call = messages[1]
    assert isinstance(call, dict)  # noqa: S101 - built just above
    messages[1] = {**call, "content": [{**call["content"][0], "input": {"rows": rows}}]}
    path.write_text(json.dumps(messages), encoding="utf-8")


Shape = tuple[str, Callable[[Path, int], None], bool]
"""A shape's name, how to write it at about a size, and whether it is JSON (``json.load`` reads it)."""


def shapes(*, every_lane: bool) -> list[Shape]:
    """Every shape measured, in the order printed (``every_lane``: per lane where a shape has lanes)."""
    lanes: tuple[Lane, ...] = get_args(Lane) if every_lane else ("anthropic.messages",)
    found: list[Shape] = [
        (f"results of {label}, {lane}", partial(agent_session, lines=lines, lane=lane), True)
        for label, lines in (("3-6 KB", (40, 40)), ("1.5-2 KB", (20, 7)), ("0.6-0.9 KB", (8, 4)))
        for lane in lanes
    ]
    found.append(("two words a message", two_words, True))
    found += [(f"calls with {{}} and ok, {lane}", partial(empty_calls, lane=lane), True) for lane in lanes]
    found += [(f"fifty calls a message, {lane}", partial(id_dense, lane=lane), True) for lane in lanes]
    found += [
        ("every call interrupted", interrupted, True),
        ("every call reusing one id", one_id, True),
        ("JSONL of one-message requests", requests_jsonl, False),
        ("a body whose tools list is nearly all of it", big_tools, True),
        ("one call whose input is nearly all of it", big_input, True),
    ]
    return found


def grown(argv: tuple[str, ...], path: Path, base: Path, *extra: str) -> float:
    """Peak memory of ``argv`` on ``path`` beyond that on ``base``, ÷ the file's size; the run must not fail."""
    run = peak_rss(*argv, str(path), *extra)
    if run.code not in (0, 1, 2):
        raise SystemExit(f"{' '.join(argv[-2:])} {path.name} {' '.join(extra)}: exit {run.code}: {run.stderr}")
    return (run.rss - peak_rss(*argv, str(base), *extra).rss) / path.stat().st_size


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 MB files, one lane per shape")
    parser.add_argument("--size", type=int, default=None, help="about how many bytes a file holds")
    parser.add_argument("--only", action="append", default=[], help="only the shapes whose name holds this")
    args = parser.parse_args()
    size = args.size or (6_000_000 if args.quick else 24_000_000)
    header = f"{'shape':52} {'MB':>6} {'check':>7} {'--fix':>7} {'json.load':>10}"
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        base = folder / "base.json"
        base.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
        for name, write, is_json in shapes(every_lane=not args.quick):
            if args.only and not any(part in name for part in args.only):
                continue
            path = folder / ("shape.json" if is_json else "shape.jsonl")
            write(path, size)
            out = folder / "fixed"
            checked = grown(CHECK, path, base)
            fixed = grown(CHECK, path, base, "--fix", str(out))
            loaded = f"{grown(JSON_LOAD, path, base):>9.2f}x" if is_json else f"{'n/a':>10}"
            print(f"{name:52} {path.stat().st_size / 1e6:>6.1f} {checked:>6.2f}x {fixed:>6.2f}x {loaded}")


if __name__ == "__main__":
    main()
