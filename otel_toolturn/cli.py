"""The ``otel-toolturn`` command: ``check`` saved transcripts, run the ``demo``.

``otel-toolturn check FILE...`` reads saved request bodies or transcripts and says, per transcript,
what the provider would refuse (``validate``: position, rule, the provider's own words) and what
the law would restore (``ensure_tool_turn_invariants``: each repair's form, call ids, whether it
is lossy). ``--fix OUT`` writes the repaired copy in the shape it was read.

Input, per file (``-`` is stdin):

- JSON: a list of messages (or Responses items, or Gemini contents), or a request body holding
  ``messages``, ``input`` or ``contents`` (the rest of the body is kept as it is in the ``--fix`` copy);
- JSONL: one such value per line (blank lines skipped).

A Responses body that continues server-held state (a non-empty ``previous_response_id`` or
``conversation``: ``compose.continues_server_state``) is judged as such: an output whose call is
not in the list may answer a call the server holds.

The lane, unless ``--lane`` names it, is read from the shape, first match wins:
a body with ``input`` → ``openai.responses``; a body with ``contents`` → ``gemini.generate_content``;
a body with a top-level ``system`` → ``anthropic.messages``; then any item that is a Responses
item (``function_call``, ``function_call_output``, ``reasoning``, …) → Responses; an item with a
``parts`` list or the role ``model`` → Gemini; a ``tool_use``/``tool_result`` block →
Anthropic; ``tool_calls`` or role ``tool`` → Chat Completions; then a ``system``/``developer``
role message → Chat Completions. A list with none of these has no tool turn to judge: it is read
as Chat Completions and the report says the lane was a guess.

Exit codes (the highest over all transcripts): 0 clean; 1 repaired without loss; 2 a lossy
repair was needed (or, never expected, the law's view would still be refused); 3 unreadable input
or a usage error — always one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, NoReturn, get_args

from otel_toolturn._errors import ToolTurnError, ToolTurnInputError
from otel_toolturn._law import ToolTurnView, ensure_tool_turn_invariants
from otel_toolturn._validate import Violation, validate
from otel_toolturn._vocab import LANES, Lane
from otel_toolturn.compose import continues_server_state

Outcome = Literal["clean", "repaired", "lossy"]
OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)
EXIT_CODES: Final[Mapping[Outcome, int]] = {"clean": 0, "repaired": 1, "lossy": 2}
EXIT_UNREADABLE: Final = 3
VERDICTS: Final[Mapping[Outcome, str]] = {
    "clean": "clean: the provider would accept it as it is",
    "repaired": "repaired without loss",
    "lossy": "a lossy repair was needed",
}
LANE_ALIASES: Final[Mapping[str, Lane]] = {
    "anthropic": "anthropic.messages",
    "chat": "openai.chat_completions",
    "responses": "openai.responses",
    "gemini": "gemini.generate_content",
    **{lane: lane for lane in LANES},
}
_RESPONSES_ITEMS: Final = frozenset(
    {
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "reasoning",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "computer_call_output",
        "mcp_call",
        "item_reference",
    }
)
_ANTHROPIC_BLOCKS: Final = frozenset({"tool_use", "tool_result", "server_tool_use", "thinking", "redacted_thinking"})

Telemetry = Literal["console", "otlp", "none"]
Container = Literal["list", "body"]
Format = Literal["json", "jsonl"]


# --- reading ------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class Entry:
    """One transcript as read: where it came from, the container it sat in, and the list itself."""

    source: str
    container: Container
    body: Mapping[str, object] | None
    field: str | None
    messages: list[object] | str


@dataclass(frozen=True, kw_only=True, slots=True)
class Document:
    """One input file: its format and its transcripts, in order."""

    name: str
    format: Format
    entries: tuple[Entry, ...]


def read_document(name: str, text: str) -> Document:
    """Parse one file's text (JSON, else JSONL); raise ``ToolTurnInputError`` naming what is wrong."""
    if not text.strip():
        raise ToolTurnInputError(f"{name}: empty input; expected JSON or JSONL")
    try:
        value = json.loads(text)
    except ValueError as whole:
        lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
        entries: list[Entry] = []
        for number, line in lines:
            try:
                line_value = json.loads(line)
            except ValueError as error:
                if number == lines[0][0]:
                    raise ToolTurnInputError(f"{name}: not JSON or JSONL ({whole})") from error
                raise ToolTurnInputError(f"{name}: line {number} is not JSON ({error})") from error
            entries.append(_entry(f"{name}:{number}", line_value))
        return Document(name=name, format="jsonl", entries=tuple(entries))
    return Document(name=name, format="json", entries=(_entry(name, value),))


def _entry(source: str, value: object) -> Entry:
    """Read one JSON value as a transcript: a list of messages, or a body with ``messages``/``input``."""
    if isinstance(value, list):
        return Entry(source=source, container="list", body=None, field=None, messages=value)
    if isinstance(value, dict):
        for field in ("input", "messages", "contents"):
            inner = value.get(field)
            if isinstance(inner, list) or (field == "input" and isinstance(inner, str)):
                return Entry(source=source, container="body", body=value, field=field, messages=inner)
        keys = ", ".join(sorted(str(k) for k in value)[:6]) or "none"
        raise ToolTurnInputError(
            f"{source}: a JSON object without a 'messages' or 'contents' list or an 'input'; keys: {keys}; "
            "expected a list of messages or a request body"
        )
    raise ToolTurnInputError(f"{source}: a JSON {type(value).__name__}; expected a list of messages or a request body")


def detect_lane(entry: Entry) -> tuple[Lane, bool]:
    """The lane ``entry`` is written for, and whether that was a guess (see the module docstring)."""
    body = entry.body or {}
    if entry.field == "input":
        return "openai.responses", False
    if entry.field == "contents":
        return "gemini.generate_content", False
    if "system" in body:
        return "anthropic.messages", False
    items = entry.messages if isinstance(entry.messages, list) else []
    for item in items:
        lane = _strong_hint(item)
        if lane is not None:
            return lane, False
    if any(isinstance(i, Mapping) and i.get("role") in ("system", "developer") for i in items):
        return "openai.chat_completions", False
    return "openai.chat_completions", True


def _kind(item: Mapping[object, object]) -> str | None:
    """The item's ``type`` when it is a string (any other value names no kind)."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else None


def _strong_hint(item: object) -> Lane | None:
    if not isinstance(item, Mapping):
        return None
    if _kind(item) in _RESPONSES_ITEMS:
        return "openai.responses"
    if isinstance(item.get("parts"), list) or item.get("role") == "model":
        return "gemini.generate_content"
    content = item.get("content")
    if isinstance(content, list) and any(isinstance(b, Mapping) and _kind(b) in _ANTHROPIC_BLOCKS for b in content):
        return "anthropic.messages"
    if "tool_calls" in item or item.get("role") == "tool":
        return "openai.chat_completions"
    return None


# --- judging --------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """What ``check`` found for one transcript."""

    entry: Entry
    lane: Lane
    lane_guessed: bool
    violations: tuple[Violation, ...]
    view: ToolTurnView
    still_refused: tuple[Violation, ...]

    @property
    def outcome(self) -> Outcome:
        """``clean`` (nothing to do), ``repaired`` (no loss), or ``lossy`` (content left out, or still refused)."""
        if self.view.lossy or self.still_refused:
            return "lossy"
        return "repaired" if self.view.repairs else "clean"


def judge(entry: Entry, *, lane: Lane | None) -> Finding:
    """Run the provider rules and the law on one transcript (chained when its body says so)."""
    chosen, guessed = (lane, False) if lane is not None else detect_lane(entry)
    body = entry.body or {}
    chained = continues_server_state(body, lane=chosen)
    violations = validate(entry.messages, lane=chosen, chained=chained)
    view = ensure_tool_turn_invariants(entry.messages, lane=chosen, chained=chained)
    still = violations if view.messages is entry.messages else validate(view.messages, lane=chosen, chained=chained)
    return Finding(
        entry=entry,
        lane=chosen,
        lane_guessed=guessed,
        violations=tuple(violations),
        view=view,
        still_refused=tuple(still),
    )


def repaired_document(document: Document, findings: Sequence[Finding]) -> str:
    """The ``--fix`` copy: each transcript replaced by its view, in the container and format it came in."""
    values = [_repaired_value(f) for f in findings]
    if document.format == "jsonl":
        return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values)
    return json.dumps(values[0], ensure_ascii=False, indent=2) + "\n"


def _repaired_value(finding: Finding) -> object:
    messages = finding.view.messages
    view: object = messages if isinstance(messages, str) else list(messages)
    entry = finding.entry
    if entry.body is None or entry.field is None:
        return view
    return {**entry.body, entry.field: view}


# --- rendering ------------------------------------------------------------------------------------
def render_text(finding: Finding) -> str:
    """A short, readable report of one transcript."""
    entry = finding.entry
    count = 1 if isinstance(entry.messages, str) else len(entry.messages)
    guessed = ", guessed: no tool turn to tell the lanes apart" if finding.lane_guessed else ""
    what = "request body" if entry.container == "body" else "list"
    lines = [f"{entry.source}: {finding.lane} ({what}, {count} messages{guessed})"]
    if finding.violations:
        lines.append("  the provider would refuse it (HTTP 400):")
        lines.extend(f"    #{v.position:<4} {v.rule:<24} {v.message}" for v in finding.violations)
    if finding.view.repairs:
        lines.append("  the law's repairs:")
        lines.append(f"    {'form':<18} {'lossy':<6} {'before run':<11} call ids")
        lines.extend(
            f"    {r.form:<18} {'yes' if r.lossy else 'no':<6} {'yes' if r.before_run else 'no':<11} "
            + (", ".join(r.tool_call_ids) or "-")
            for r in finding.view.repairs
        )
    if finding.still_refused:
        lines.append("  the repaired view would still be refused:")
        lines.extend(f"    #{v.position:<4} {v.rule:<24} {v.message}" for v in finding.still_refused)
    outcome = finding.outcome
    lines.append(f"  verdict: {VERDICTS[outcome]} (exit {EXIT_CODES[outcome]})")
    return "\n".join(lines)


def as_json(finding: Finding) -> dict[str, object]:
    """One transcript's report as plain JSON."""
    return {
        "source": finding.entry.source,
        "lane": finding.lane,
        "lane_guessed": finding.lane_guessed,
        "violations": [{"position": v.position, "rule": v.rule, "message": v.message} for v in finding.violations],
        "repairs": [
            {"form": r.form, "tool_call_ids": list(r.tool_call_ids), "lossy": r.lossy, "before_run": r.before_run}
            for r in finding.view.repairs
        ],
        "still_refused": [
            {"position": v.position, "rule": v.rule, "message": v.message} for v in finding.still_refused
        ],
        "lossy": finding.view.lossy,
        "outcome": finding.outcome,
        "exit_code": EXIT_CODES[finding.outcome],
    }


# --- the command ----------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors as one line and exit code 3 (2 means a lossy repair here)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_UNREADABLE, f"otel-toolturn: {message} (see otel-toolturn --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``otel-toolturn`` argument parser with its ``check`` and ``demo`` subcommands."""
    parser = _Parser(
        prog="otel-toolturn",
        description="Keep LLM tool turns valid at the provider boundary, and see every repair.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    check = commands.add_parser(
        "check",
        help="say what a provider would refuse in saved transcripts, and what the law would repair",
        description=("Exit codes: 0 clean, 1 repaired without loss, 2 a lossy repair was needed, 3 unreadable input."),
    )
    check.add_argument(
        "files", nargs="+", metavar="FILE", help="JSON or JSONL transcripts or request bodies; - for stdin"
    )
    check.add_argument("--lane", choices=sorted(LANE_ALIASES), help="the wire lane (default: read from the shape)")
    check.add_argument("--json", action="store_true", help="print the reports as JSON")
    check.add_argument("--fix", metavar="OUT", help="write the repaired copy to OUT (- for stdout); one FILE only")
    demo = commands.add_parser(
        "demo", help="watch an agent's broken tool turns refused, then repaired, on a local provider simulator"
    )
    demo.add_argument(
        "--telemetry",
        choices=get_args(Telemetry),
        help="where spans go (default: otlp when OTEL_EXPORTER_OTLP_ENDPOINT is set, else console)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            return _demo(args.telemetry)
        return _check(args)
    except BrokenPipeError:
        _silence_stdout()  # the reader went away (``| head``): stop quietly, as other tools do
        return EXIT_UNREADABLE
    except KeyboardInterrupt:
        print("otel-toolturn: interrupted", file=sys.stderr)
        return EXIT_UNREADABLE
    except Exception as error:  # noqa: BLE001 - the command promises one line, never a traceback
        print(f"otel-toolturn: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_UNREADABLE


def _demo(telemetry: Telemetry | None) -> int:
    """Run the demo, or say in one line which SDK it needs."""
    try:
        from otel_toolturn.demo import run_demo  # noqa: PLC0415 - the demo loads the SDKs; check does not
    except ModuleNotFoundError as missing:
        print(
            f"otel-toolturn: the demo needs the {missing.name} SDK: "
            "pip install 'otel-toolturn[openai,anthropic,gemini]'",
            file=sys.stderr,
        )
        return EXIT_UNREADABLE
    return run_demo(telemetry=telemetry)


def _check(args: argparse.Namespace) -> int:
    files: list[str] = args.files
    if args.fix is not None and len(files) != 1:
        print(f"otel-toolturn: --fix writes one copy; got {len(files)} files, expected one", file=sys.stderr)
        return EXIT_UNREADABLE
    lane: Lane | None = LANE_ALIASES[args.lane] if args.lane else None
    report = sys.stderr if args.fix == "-" else sys.stdout
    worst = 0
    reports: list[dict[str, object]] = []
    for name in files:
        try:
            document = read_document("<stdin>" if name == "-" else name, _read(name))
            findings = [judge(entry, lane=lane) for entry in document.entries]
        except (ToolTurnError, OSError, UnicodeDecodeError) as error:
            reason = _one_line(error, name)
            print(f"otel-toolturn: {reason}", file=sys.stderr)
            reports.append({"source": name, "outcome": "unreadable", "error": reason, "exit_code": EXIT_UNREADABLE})
            worst = EXIT_UNREADABLE
            continue
        for finding in findings:
            worst = max(worst, EXIT_CODES[finding.outcome])
            if args.json:
                reports.append(as_json(finding))
            else:
                print(render_text(finding), file=report)
        if args.fix is not None:
            _write(args.fix, repaired_document(document, findings))
            if not args.json:
                print(f"repaired copy written to {'<stdout>' if args.fix == '-' else args.fix}", file=report)
    if args.json:
        print(json.dumps(reports, indent=2, ensure_ascii=False), file=report)
    return worst


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _read(name: str) -> str:
    return sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")


def _write(name: str, text: str) -> None:
    if name == "-":
        sys.stdout.write(text)
    else:
        Path(name).write_text(text, encoding="utf-8")


def _one_line(error: BaseException, name: str) -> str:
    """A one-line reason for an unreadable input."""
    if isinstance(error, FileNotFoundError):
        return f"{name}: no such file"
    if isinstance(error, OSError):
        return f"{name}: cannot read ({error.strerror or error})"
    if isinstance(error, UnicodeDecodeError):
        return f"{name}: not UTF-8 text ({error.reason} at byte {error.start})"
    text = " ".join(str(error).split())
    return text if text.startswith(name) or name == "-" else f"{name}: {text}"


if __name__ == "__main__":
    raise SystemExit(main())
