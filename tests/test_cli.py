"""``otel-toolturn check`` over every lane: exit codes, reports, ``--fix`` copies, unreadable input."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import otel_toolturn
from bench import check_fuzz, check_memory
from bench.check_memory import BODY_FIELDS
from bench.law import session
from otel_toolturn import Lane, ToolTurnInputError, cli, ensure_tool_turn_invariants, validate
from otel_toolturn._law_stream import LawStream
from otel_toolturn.cli import (
    DEFAULT_MAX_SIZE,
    EXIT_CODES,
    EXIT_UNREADABLE,
    OUTCOMES,
    VERDICTS,
    Entry,
    detect_lane,
    judge_streamed,
    main,
    parse_size,
    read_document,
)
from tests.transcripts import A, Event, R, U, build, c, t

ROOT = Path(__file__).resolve().parents[1]

Message = dict[str, object]


def a_calls(*ids: str) -> Message:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": "read", "input": {}} for i in ids]}


def a_result(call_id: str) -> Message:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "done"}]}


def c_calls(*ids: str) -> Message:
    calls = [{"id": i, "type": "function", "function": {"name": "read", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def c_result(call_id: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": "done"}


def r_call(call_id: str) -> Message:
    return {"type": "function_call", "call_id": call_id, "name": "read", "arguments": "{}"}


def r_result(call_id: str) -> Message:
    return {"type": "function_call_output", "call_id": call_id, "output": "done"}


def g_calls(*ids: str) -> Message:
    calls = [{"functionCall": {"id": i, "name": "read", "args": {}}, "thoughtSignature": "c2ln"} for i in ids]
    return {"role": "model", "parts": calls}


def g_result(*ids: str) -> Message:
    return {
        "role": "user",
        "parts": [{"functionResponse": {"id": i, "name": "read", "response": {"output": "done"}}} for i in ids],
    }


def b_calls(*ids: str) -> Message:
    return {"role": "assistant", "content": [{"toolUse": {"toolUseId": i, "name": "read", "input": {}}} for i in ids]}


def b_result(*ids: str) -> Message:
    return {"role": "user", "content": [{"toolResult": {"toolUseId": i, "content": [{"text": "done"}]}} for i in ids]}


B_USER: Message = {"role": "user", "content": [{"text": "go on"}]}
B_SAID: Message = {"role": "assistant", "content": [{"text": "All read."}]}
G_USER: Message = {"role": "user", "parts": [{"text": "go on"}]}
G_SAID: Message = {"role": "model", "parts": [{"text": "All read."}]}
USER: Message = {"role": "user", "content": "go on"}
SAID: Message = {"role": "assistant", "content": "All read."}


@dataclass(frozen=True, kw_only=True, slots=True)
class Sample:
    """A transcript of one lane, the outcome ``check`` must give it, and the repair forms it must print."""

    lane: Lane
    outcome: str
    messages: list[Message]
    forms: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.lane}-{self.outcome}"


SAMPLES = (
    Sample(
        lane="anthropic.messages",
        outcome="clean",
        messages=[USER, a_calls("toolu_1"), a_result("toolu_1"), SAID],
        forms=(),
    ),
    Sample(
        lane="anthropic.messages",
        outcome="repaired",
        messages=[USER, a_calls("toolu_1", "toolu_2"), a_result("toolu_1"), USER],
        forms=("missing_result",),
    ),
    Sample(
        lane="anthropic.messages",
        outcome="lossy",
        messages=[USER, a_calls("toolu_1", "toolu_1"), a_result("toolu_1")],
        forms=("duplicate_call",),
    ),
    Sample(
        lane="openai.chat_completions",
        outcome="clean",
        messages=[USER, c_calls("call_1"), c_result("call_1"), SAID],
        forms=(),
    ),
    Sample(
        lane="openai.chat_completions",
        outcome="repaired",
        messages=[USER, c_calls("call_1", "call_2"), c_result("call_1"), USER, c_result("call_2")],
        forms=("late_result",),
    ),
    Sample(
        lane="openai.chat_completions",
        outcome="lossy",
        messages=[c_result("call_9"), SAID, USER],
        forms=("orphan_result",),
    ),
    Sample(
        lane="openai.responses",
        outcome="clean",
        messages=[USER, r_call("call_1"), r_result("call_1"), USER],
        forms=(),
    ),
    Sample(
        lane="openai.responses",
        outcome="repaired",
        messages=[USER, r_call("call_1"), r_call("call_2"), r_result("call_1"), USER],
        forms=("missing_result",),
    ),
    Sample(
        lane="openai.responses",
        outcome="lossy",
        messages=[USER, r_result("call_9"), USER],
        forms=("orphan_result",),
    ),
    Sample(
        lane="gemini.generate_content",
        outcome="clean",
        messages=[G_USER, g_calls("fc_1"), g_result("fc_1"), G_SAID],
        forms=(),
    ),
    Sample(
        lane="gemini.generate_content",
        outcome="repaired",
        messages=[G_USER, g_calls("fc_1", "fc_2"), g_result("fc_1"), G_USER],
        forms=("missing_result",),
    ),
    Sample(
        lane="gemini.generate_content",
        outcome="lossy",
        messages=[G_USER, G_SAID, g_result("fc_9"), G_USER],
        forms=("orphan_result",),
    ),
    *(
        Sample(lane="bedrock.converse", outcome="clean", messages=[B_USER, b_calls("t_1"), b_result("t_1")], forms=()),
        Sample(
            lane="bedrock.converse",
            outcome="repaired",
            messages=[B_USER, b_calls("t_1", "t_2"), b_result("t_1"), b_result("t_2")],
            forms=("late_result",),
        ),
        Sample(
            lane="bedrock.converse",
            outcome="lossy",
            messages=[B_USER, B_SAID, b_result("t_9"), B_SAID],
            forms=("orphan_result",),
        ),
    ),
)
EXIT = {"clean": 0, "repaired": 1, "lossy": 2}
VERDICT = {"clean": "clean", "repaired": "repaired without loss", "lossy": "a lossy repair was needed"}


def body_of(sample: Sample) -> dict[str, object]:
    """The sample as a saved request body, in its lane's spelling."""
    if sample.lane == "openai.responses":
        return {"model": "gpt-test", "input": sample.messages, "store": False}
    if sample.lane == "gemini.generate_content":
        return {"contents": sample.messages, "generationConfig": {"temperature": 0}}
    if sample.lane == "anthropic.messages":
        return {"model": "claude-test", "max_tokens": 64, "system": "Be brief.", "messages": sample.messages}
    if sample.lane == "bedrock.converse":
        return {"modelId": "claude-test", "messages": sample.messages, "inferenceConfig": {"maxTokens": 64}}
    return {"model": "gpt-test", "messages": sample.messages, "temperature": 0}


def write(tmp_path: Path, name: str, value: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.name for s in SAMPLES])
def test_body_gives_the_documented_exit_code_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sample: Sample
) -> None:
    """A saved request body: its lane is read, the exit code is 0/1/2, and the report names the repairs."""
    code, out, err = run(capsys, str(write(tmp_path, "body.json", body_of(sample))))
    assert code == EXIT[sample.outcome]
    assert err == ""
    assert sample.lane in out
    assert f"verdict: {VERDICT[sample.outcome]}" in out
    for form in sample.forms:
        assert form in out
    if sample.outcome == "clean":
        assert "refuse" not in out
    else:
        first = validate(sample.messages, lane=sample.lane)[0]
        assert first.message in out


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.name for s in SAMPLES])
def test_json_report_carries_violations_and_repairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sample: Sample
) -> None:
    """``--json`` on a plain list prints one machine-readable report line with outcome, repairs and exit code."""
    code, out, _ = run(capsys, str(write(tmp_path, "list.json", sample.messages)), "--json")
    (report,) = [json.loads(line) for line in out.splitlines()]
    assert code == report["exit_code"] == EXIT[sample.outcome]
    assert report["lane"] == sample.lane
    assert report["outcome"] == sample.outcome
    assert tuple(r["form"] for r in report["repairs"]) == sample.forms
    assert bool(report["violations"]) == (sample.outcome != "clean")
    assert report["lossy"] == (sample.outcome == "lossy")


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.outcome != "clean"], ids=lambda s: s.name)
def test_fix_writes_a_copy_that_validates_in_the_same_container(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sample: Sample
) -> None:
    """``--fix`` keeps the body's other fields, replaces the transcript with the view, and the copy validates."""
    body = body_of(sample)
    out_path = tmp_path / "fixed.json"
    code, _, _ = run(capsys, str(write(tmp_path, "body.json", body)), "--fix", str(out_path))
    assert code == EXIT[sample.outcome]
    fixed = json.loads(out_path.read_text())
    field = {"openai.responses": "input", "gemini.generate_content": "contents"}.get(sample.lane, "messages")
    assert {k: v for k, v in fixed.items() if k != field} == {k: v for k, v in body.items() if k != field}
    assert fixed[field] != sample.messages
    assert validate(fixed[field], lane=sample.lane) == []
    assert main(["check", str(out_path)]) == 0


def test_jsonl_is_judged_line_by_line_and_fixed_line_by_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSONL: one report per line (named ``file:line``), the worst exit code wins, the fix keeps one value per line."""
    lines = [SAMPLES[3].messages, body_of(SAMPLES[5]), SAMPLES[4].messages]
    source = tmp_path / "sessions.jsonl"
    source.write_text("\n".join(json.dumps(v) for v in lines) + "\n\n")
    out_path = tmp_path / "fixed.jsonl"
    code, out, _ = run(capsys, str(source), "--fix", str(out_path))
    assert code == 2
    assert f"{source}:1" in out
    assert f"{source}:3" in out
    fixed = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert len(fixed) == 3
    assert fixed[0] == lines[0]
    assert validate(fixed[1]["messages"], lane="openai.chat_completions") == []
    assert validate(fixed[2], lane="openai.chat_completions") == []


def test_chained_responses_body_keeps_outputs_for_server_held_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Responses body with ``previous_response_id`` may answer a call the server holds: clean, not an orphan."""
    held = {"model": "gpt-test", "previous_response_id": "resp_1", "input": [r_result("call_held"), USER]}
    alone = {"model": "gpt-test", "input": [r_result("call_held"), USER]}
    assert run(capsys, str(write(tmp_path, "chained.json", held)))[0] == 0
    assert run(capsys, str(write(tmp_path, "alone.json", alone)))[0] == 2


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("previous_response_id", "resp_1", 0),
        ("previous_response_id", "", 2),
        ("previous_response_id", None, 2),
        ("conversation", "conv_1", 0),
        ("conversation", {"id": "conv_1"}, 0),
        ("conversation", None, 2),
    ],
)
def test_a_body_is_chained_only_when_it_names_server_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object, code: int
) -> None:
    """An empty or null ``previous_response_id``/``conversation`` names no server state: the orphan is repaired."""
    body = {"model": "gpt-test", field: value, "input": [r_result("call_held"), USER]}
    assert run(capsys, str(write(tmp_path, "body.json", body)))[0] == code


def test_stdin_and_lane_option(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``-`` reads stdin; ``--lane`` (short alias) decides the lane instead of the shape."""
    plain = [USER, SAID]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(plain).encode())))
    code, out, _ = run(capsys, "-", "--lane", "anthropic")
    assert code == 0
    assert "<stdin>: anthropic.messages" in out


def test_fix_to_stdout_sends_the_report_to_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--fix -`` prints only the repaired copy on stdout, the report on stderr."""
    sample = SAMPLES[1]
    code, out, err = run(capsys, str(write(tmp_path, "list.json", sample.messages)), "--fix", "-")
    assert code == 1
    assert validate(json.loads(out), lane=sample.lane) == []
    assert "missing_result" in err


@pytest.mark.parametrize(
    ("entry", "lane", "guessed"),
    [
        (
            Entry(source="x", container="body", body={"input": "hi"}, field="input", messages="hi"),
            "openai.responses",
            False,
        ),
        (
            Entry(source="x", container="body", body={"system": "s", "messages": []}, field="messages", messages=[]),
            "anthropic.messages",
            False,
        ),
        (
            Entry(source="x", container="list", body=None, field=None, messages=[USER, a_calls("t")]),
            "anthropic.messages",
            False,
        ),
        (
            Entry(source="x", container="list", body=None, field=None, messages=[USER, c_calls("c")]),
            "openai.chat_completions",
            False,
        ),
        (
            Entry(source="x", container="list", body=None, field=None, messages=[USER, r_call("c")]),
            "openai.responses",
            False,
        ),
        (
            Entry(
                source="x", container="list", body=None, field=None, messages=[{"role": "system", "content": "s"}, USER]
            ),
            "openai.chat_completions",
            False,
        ),
        (
            Entry(source="x", container="list", body=None, field=None, messages=[USER, SAID]),
            "openai.chat_completions",
            True,
        ),
        (
            Entry(source="x", container="body", body={"contents": []}, field="contents", messages=[]),
            "gemini.generate_content",
            False,
        ),
        (
            Entry(
                source="x",
                container="list",
                body=None,
                field=None,
                messages=[{"role": "user", "parts": [{"text": "hi"}]}],
            ),
            "gemini.generate_content",
            False,
        ),
    ],
)
def test_lane_is_read_from_the_shape(entry: Entry, lane: Lane, guessed: bool) -> None:
    """The lane comes from the body's fields or the first telling item; a list with no tell is a marked guess."""
    assert detect_lane(entry) == (lane, guessed)


@pytest.mark.parametrize(
    "entry",
    [
        Entry(source="x", container="body", body={"modelId": "m"}, field="messages", messages=[B_USER]),
        Entry(source="x", container="body", body={"system": [{"text": "s"}]}, field="messages", messages=[B_USER]),
        Entry(source="x", container="list", body=None, field=None, messages=[B_USER, b_calls("t")]),
        Entry(source="x", container="list", body=None, field=None, messages=[b_result("t")]),
    ],
)
def test_a_converse_body_or_block_reads_as_bedrock(entry: Entry) -> None:
    """A Converse body field, a ``system`` of untyped blocks, or a ``toolUse``/``toolResult`` block: Bedrock."""
    assert detect_lane(entry) == ("bedrock.converse", False)


def test_bedrock_alias_names_the_converse_lane(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--lane bedrock`` reads a bare list as Converse messages and judges it in the service's words."""
    path = write(tmp_path, "list.json", [B_USER, b_calls("t_1"), B_USER])
    code, out, _ = run(capsys, str(path), "--lane", "bedrock")
    assert code == 1
    assert "bedrock.converse" in out
    assert "Expected toolResult blocks at messages.2.content for the following Ids: t_1" in out


def test_the_mistral_dialect_judges_in_mistrals_words_and_fixes_the_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--dialect mistral``: OpenAI's ids refused in Mistral's words (magentic#276), the copy renamed; a clash is 3."""
    call = {"id": "call_search", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    messages = [USER, {"role": "assistant", "tool_calls": [call]}, {"role": "tool", "tool_call_id": "call_search"}]
    path = write(tmp_path, "list.json", messages)
    assert run(capsys, str(path))[0] == 0
    code, out, _ = run(capsys, str(path), "--dialect", "mistral", "--fix", str(tmp_path / "fixed.json"))
    assert code == 1
    assert "openai.chat_completions in the mistral dialect" in out
    assert "Tool call id was call_search but must be a-z, A-Z, 0-9, with a length of 9." in out
    assert "invalid_id" in out
    fixed = json.loads((tmp_path / "fixed.json").read_text())
    assert validate(fixed, lane="openai.chat_completions", dialect="mistral") == []
    with pytest.raises(SystemExit) as usage:
        run(capsys, str(path), "--dialect", "mistral", "--lane", "anthropic")
    assert usage.value.code == 3
    assert (
        "--dialect mistral is of openai.chat_completions, not of --lane anthropic.messages" in capsys.readouterr().err
    )


UNREADABLE = [
    ("not-json.json", "{oops", "not JSON or JSONL"),
    ("scalar.json", "42", "a JSON int"),
    ("object.json", json.dumps({"model": "m"}), "without a 'messages' or 'contents' list or an 'input'"),
    ("empty.json", "  \n", "empty input"),
    ("bad-line.jsonl", json.dumps([USER]) + "\n{oops\n", "line 2 is not JSON"),
    (
        "no-id.json",
        json.dumps([USER, {"role": "assistant", "content": [{"type": "tool_use", "name": "x"}]}]),
        "no-id.json",
    ),
    (
        "no-id-on-line-2.jsonl",
        json.dumps([USER]) + "\n" + json.dumps([USER, {"role": "assistant", "content": [{"type": "tool_use"}]}]),
        "no-id-on-line-2.jsonl:2: item 1:",
    ),
    ("no-messages.json", '[[1],[2],"x",null,5]', "no message in a list of 5 items"),
    ("empty-list.json", "[]", "an empty list"),
    ("empty-body.json", json.dumps({"model": "m", "messages": []}), "'messages': an empty list"),
    ("no-contents.json", json.dumps({"contents": [1, "x"]}), "'contents': no message in a list of 2 items"),
    ("nan.json", '[{"role": "user", "content": "hi", "temperature": NaN}]', "NaN is not JSON"),
    ("infinity.jsonl", json.dumps([USER]) + '\n[{"role": "user", "x": -Infinity}]\n', "-Infinity is not JSON"),
    ("huge-number.json", '[{"role": "user", "content": "hi", "x": 1e400}]', "1e400 is beyond a float's range"),
    ("bomb.json", "[" * 100_000 + "]" * 100_000, "nested too deeply to read"),
]


@pytest.mark.parametrize(("name", "text", "reason"), UNREADABLE, ids=[u[0] for u in UNREADABLE])
def test_unreadable_input_is_exit_3_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, reason: str
) -> None:
    """Unreadable input gives exit 3 and exactly one line on stderr naming the file and what is wrong."""
    path = tmp_path / name
    path.write_text(text)
    code, out, err = run(capsys, str(path))
    assert code == 3
    assert out == ""
    assert err.count("\n") == 1
    assert reason in err
    assert "internal error" not in err
    assert str(path) in err


def test_missing_file_and_worst_code_over_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing file is reported in one line and the run still judges the others; exit is the worst (3)."""
    good = write(tmp_path, "good.json", SAMPLES[0].messages)
    code, out, err = run(capsys, str(tmp_path / "absent.json"), str(good))
    assert code == 3
    assert "absent.json: no such file" in err
    assert "verdict: clean" in out


def test_a_fifo_without_a_writer_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO no one writes to is refused in one line, exit 3; it never blocks the command."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "otel_toolturn.cli", "check", str(fifo)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=60,  # a safety net against a regression that blocks; the refusal takes no wait at all
    )
    assert done.returncode == 3
    assert (
        done.stderr == f"otel-toolturn: {fifo}: a FIFO, not a regular file; check reads regular files and - (stdin)\n"
    )


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "a character device"), (".", "a directory")])
def test_a_device_or_a_directory_is_refused_unread(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, path: str, kind: str
) -> None:
    """``/dev/zero`` or a directory is named for what it is and refused, exit 3, without a byte read."""
    monkeypatch.setattr(os, "read", _no_read)
    code, out, err = run(capsys, path)
    assert (code, out) == (3, "")
    assert err == f"otel-toolturn: {path}: {kind}, not a regular file; check reads regular files and - (stdin)\n"


def _no_read(descriptor: int, size: int) -> bytes:
    raise AssertionError(f"read {size} bytes of descriptor {descriptor}")


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file larger than the limit (a sparse 1 GiB, or 2 KiB over ``--max-size 1K``) is refused from its size."""
    sparse = tmp_path / "sparse.json"
    with sparse.open("wb") as handle:
        handle.truncate(1 << 30)
    small = write(tmp_path, "small.json", [USER, {"role": "user", "content": "x" * 2048}])
    monkeypatch.setattr(os, "read", _no_read)
    code, _, err = run(capsys, str(sparse))
    assert code == 3
    assert err == f"otel-toolturn: {sparse}: over the size limit of 64 MiB (raise it with --max-size)\n"
    code, _, err = run(capsys, str(small), "--max-size", "1K")
    assert code == 3
    assert err == f"otel-toolturn: {small}: over the size limit of 1 KiB (raise it with --max-size)\n"
    monkeypatch.undo()
    assert run(capsys, str(small), "--max-size", "4K")[0] == 0


def test_stdin_is_read_no_further_than_the_limit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Standard input longer than ``--max-size`` is refused after at most one byte past the limit."""
    endless = io.BytesIO(b"[" + b" " * (8 << 20))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(endless))
    code, _, err = run(capsys, "-", "--max-size", "1K")
    assert code == 3
    assert err == "otel-toolturn: <stdin>: over the size limit of 1 KiB (raise it with --max-size)\n"
    assert endless.tell() <= 1025


@pytest.mark.parametrize(
    ("text", "size"),
    [("500000", 500_000), ("512K", 512 << 10), ("64M", DEFAULT_MAX_SIZE), ("1g", 1 << 30), (" 2M ", 2 << 20)],
)
def test_max_size_reads_bytes_with_binary_multiples(text: str, size: int) -> None:
    """``--max-size`` takes bytes, or K, M and G as 1024, 1024² and 1024³; the default is 64 MiB."""
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["0", "-1", "12Q", "1.5M", "", "M"])
def test_a_max_size_that_is_no_size_is_a_usage_error(capsys: pytest.CaptureFixture[str], text: str) -> None:
    """A ``--max-size`` that is not a positive count of bytes is exit 3 with one line."""
    with pytest.raises(SystemExit) as raised:
        main(["check", "x.json", "--max-size", text])
    assert raised.value.code == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "is not a size" in err


@pytest.mark.parametrize("target", ["folder", "missing/out.json"])
def test_a_fix_target_that_cannot_be_written_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """``--fix`` into a directory or a missing folder: the report, then one line naming the target, exit 3."""
    (tmp_path / "folder").mkdir()
    source = write(tmp_path, "list.json", SAMPLES[1].messages)
    code, out, err = run(capsys, str(source), "--fix", str(tmp_path / target))
    reason = "Is a directory" if target == "folder" else "No such file or directory"
    assert code == 3
    assert "verdict: repaired without loss" in out
    assert err == f"otel-toolturn: --fix {tmp_path / target}: cannot write ({reason})\n"


def test_fix_never_writes_what_is_not_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``NaN`` read is refused (exit 3) and no ``--fix`` copy is written, so none can hold it."""
    source = tmp_path / "nan.json"
    source.write_text('{"model": "m", "temperature": NaN, "messages": [{"role": "user", "content": "hi"}]}')
    out_path = tmp_path / "fixed.json"
    code, _, err = run(capsys, str(source), "--fix", str(out_path))
    assert code == 3
    assert "NaN is not JSON" in err
    assert not out_path.exists()


def test_fix_writes_one_message_a_line_and_reads_back_equal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON ``--fix`` copy puts each message of a body's list on its own line; it reads back as the view."""
    body = body_of(SAMPLES[1])
    out_path = tmp_path / "fixed.json"
    run(capsys, str(write(tmp_path, "body.json", body)), "--fix", str(out_path))
    lines = out_path.read_text().splitlines()
    fixed = json.loads("\n".join(lines))
    assert len(lines) == 2 + len(body) - 1 + 2 + len(fixed["messages"])
    assert [json.loads(line.strip().rstrip(",")) for line in lines[5:-2]] == fixed["messages"]
    assert validate(fixed["messages"], lane="anthropic.messages") == []


def test_a_lone_surrogate_is_reported_and_written_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A lone surrogate read from JSON (in an id, in a text) is printed and written as its escape, never a crash."""
    source = tmp_path / "surrogate.json"
    source.write_text(
        r'[{"role": "user", "content": "\ud800"},'
        r' {"role": "assistant", "content": [{"type": "tool_use", "id": "t\udc00", "name": "f", "input": {}}]}]'
    )
    out_path = tmp_path / "fixed.json"
    code, out, err = run(capsys, str(source), "--fix", str(out_path))
    assert (code, err) == (1, "")
    assert r"t\udc00" in out
    fixed = json.loads(out_path.read_text(encoding="utf-8"))
    assert fixed[0]["content"] == "\ud800"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=10,
)
MESSAGES = st.lists(st.fixed_dictionaries({"role": st.just("user"), "content": JSON_VALUES}), min_size=1, max_size=3)
BODIES = st.fixed_dictionaries(
    {"messages": MESSAGES}, optional={"model": st.text(max_size=4), "tools": JSON_VALUES, "x": JSON_VALUES}
)


def _dribble(data: bytes, pieces: list[int]) -> Callable[[int], bytes]:
    """A byte source that hands ``data`` over in pieces of the given sizes, in turn."""
    stream = io.BytesIO(data)
    sizes = itertools.cycle(pieces)
    return lambda size: stream.read(min(size, next(sizes)))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(MESSAGES | BODIES, min_size=1, max_size=3),
    indent=st.sampled_from([None, 0, 2]),
    pieces=st.lists(st.integers(1, 7), min_size=1, max_size=5),
)
def test_reading_in_any_pieces_gives_what_json_reads(
    values: list[object], indent: int | None, pieces: list[int]
) -> None:
    """However the bytes arrive (cut in numbers, escapes, UTF-8 characters), each value read is ``json.loads``'s."""
    if len(values) == 1:
        lines = [json.dumps(values[0], indent=indent, ensure_ascii=False)]
    else:
        lines = [json.dumps(value, ensure_ascii=False) for value in values]
    document = read_document("t", _dribble("\n".join(lines).encode(), pieces))
    read = [entry.body if entry.body is not None else entry.messages for entry in document.entries]
    assert read == [json.loads(line) for line in lines]
    assert document.format == ("json" if len(values) == 1 else "jsonl")


def test_a_short_string_read_twice_is_held_once() -> None:
    """Roles, types and other short strings repeated across messages are one object each; long ones are not shared."""
    long_text = "x" * 40
    messages = [{"role": "user", "content": "two words"}, {"role": "user", "content": "two words"}] * 2
    messages += [{"role": "user", "content": long_text}] * 2
    document = read_document("t", io.BytesIO(json.dumps(messages).encode()).read)
    entry = document.entries[0].messages
    assert isinstance(entry, list)
    read = [m for m in entry if isinstance(m, dict)]
    assert read == messages
    assert len({id(m["role"]) for m in read}) == 1
    assert len({id(m["content"]) for m in read[:4]}) == 1
    assert read[4]["content"] is not read[5]["content"]


JSONISH = st.text(alphabet='[]{}",:-+.0123456789eEtrufalsnNIy \n\\\u00e9\U0001f600', max_size=40)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.binary(max_size=40)
    | JSONISH.map(str.encode)
    | JSON_VALUES.map(lambda v: json.dumps(v).encode())
    | MESSAGES.map(lambda m: json.dumps(m)[:-1].encode())
)
def test_check_on_any_bytes_is_one_line_or_a_verdict_on_messages(data: bytes) -> None:
    """Any bytes: exit 3 with one line, or a verdict on messages and a strict JSON copy; never an internal error."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "any.json"
        path.write_bytes(data)
        fixed = Path(folder) / "fixed.json"
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["check", str(path), "--fix", str(fixed)])
        copy = fixed.read_text(encoding="utf-8") if code != 3 else ""
    assert "internal error" not in err.getvalue()
    if code == 3:
        assert err.getvalue().count("\n") == 1
        return
    assert code in {0, 1, 2}
    assert err.getvalue() == ""
    try:
        values = [json.loads(copy, parse_constant=_not_json)]
    except json.JSONDecodeError:
        values = [json.loads(line, parse_constant=_not_json) for line in copy.splitlines()]
    assert all(_holds_a_message(value) for value in values)


def _not_json(name: str) -> object:
    raise AssertionError(f"{name} written")


def _holds_a_message(value: object) -> bool:
    """Whether a transcript (a list, or a body's ``input``/``messages``/``contents``) holds a message."""
    if isinstance(value, dict):
        value = next(value[key] for key in ("input", "messages", "contents") if key in value)
    return isinstance(value, str) or (
        isinstance(value, list) and any(isinstance(i, dict) and {"role", "type", "parts"} & i.keys() for i in value)
    )


MEMORY_CASES = [(lane, lines) for lines in ((40, 40), (20, 7)) for lane in get_args(Lane)]
"""Every lane, with results of 3-6 KB and of 1.5-2 KB."""
MEMORY_FILE: Final = 12_000_000
"""About how large the files the memory bounds are checked on are (``bench.check_memory`` measures 24 MB ones)."""


@pytest.mark.parametrize(
    ("lane", "lines"),
    MEMORY_CASES,
    ids=[f"{lane}, results of {'3-6' if lines[0] == 40 else '1.5-2'} KB" for lane, lines in MEMORY_CASES],
)
def test_memory_stays_within_twice_the_file(tmp_path: Path, lane: Lane, lines: tuple[int, int]) -> None:
    """On a 12 MB agent transcript, ``check`` and ``check --fix`` grow by at most twice the file's size."""
    source = tmp_path / "session.json"
    check_memory.agent_session(source, MEMORY_FILE, lines=lines, lane=lane)
    baseline = _peak_rss("check", str(write(tmp_path, "small.json", [USER, SAID])))
    size = source.stat().st_size
    for extra in ([], ["--fix", str(tmp_path / "fixed.json")]):
        grown = _peak_rss("check", str(source), *extra) - baseline
        assert grown <= 2 * size, f"check {extra}: grew by {grown / size:.2f}x the file's size"


def test_memory_of_short_messages_stays_within_twice_the_file(tmp_path: Path) -> None:
    """On 12 MB of messages of two words each, ``check`` and ``check --fix`` grow by at most twice the file's size."""
    source = tmp_path / "chat.json"
    check_memory.two_words(source, MEMORY_FILE)
    baseline = _peak_rss("check", str(write(tmp_path, "small.json", [USER, SAID])))
    size = source.stat().st_size
    for extra in ([], ["--fix", str(tmp_path / "fixed.json")]):
        grown = _peak_rss("check", str(source), *extra) - baseline
        assert grown <= 2 * size, f"check {extra}: grew by {grown / size:.2f}x the file's size"


def test_memory_of_many_short_transcripts_stays_within_twice_the_file(tmp_path: Path) -> None:
    """100,000 short transcripts in JSONL (a tenth repaired) are judged a line at a time, within twice the file."""
    source = tmp_path / "requests.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for n in range(100_000):
            events: list[Event] = (
                [U(f"q{n}"), A(c(f"k{n}", "read")), U("well?")] if n % 10 == 0 else [U(f"q{n}"), A(t("a"))]
            )
            out.write(json.dumps(build("anthropic.messages", events)) + "\n")
    baseline = _peak_rss("check", str(write(tmp_path, "small.json", [USER, SAID])))
    size = source.stat().st_size
    for extra in ([], ["--fix", str(tmp_path / "fixed.jsonl")]):
        grown = _peak_rss("check", str(source), *extra, exit_code=1) - baseline
        assert grown <= 2 * size, f"check {extra}: grew by {grown / size:.2f}x the file's size"


def _decoded_rss(path: Path, small: Path) -> int:
    """The peak resident memory, in bytes, of Python's own ``json.load`` of ``path``, beyond its peak on ``small``."""
    return (
        check_memory.peak_rss(*check_memory.JSON_LOAD, str(path)).rss
        - check_memory.peak_rss(*check_memory.JSON_LOAD, str(small)).rss
    )


def test_a_bodys_other_fields_are_held_once(tmp_path: Path) -> None:
    """A body with an 8 MB ``tools`` list: ``check`` and ``--fix`` hold it once, in less than ``json.load`` takes."""
    tools = [
        {"name": f"tool_{n}", "description": f"reads file {n}", "input_schema": {"type": "object", "required": ["p"]}}
        for n in range(80_000)
    ]
    body = {"model": "m", "tools": tools, "messages": build("anthropic.messages", [U("go"), A(c("k1", "read"))])}
    source = write(tmp_path, "body.json", body)
    small = write(tmp_path, "small.json", [USER, SAID])
    decoded = _decoded_rss(source, small)
    baseline = _peak_rss("check", str(small))
    for extra in ([], ["--fix", str(tmp_path / "fixed.json")]):
        grown = _peak_rss("check", str(source), *extra, exit_code=1) - baseline
        assert grown < decoded, f"check {extra}: grew by {grown / decoded:.2f}x what json.load takes"
    assert json.loads((tmp_path / "fixed.json").read_text(encoding="utf-8"))["tools"] == tools


def test_a_long_item_is_written_to_the_copy_without_a_second_copy_of_its_text(tmp_path: Path) -> None:
    """One call with 8 MB of nested input: ``--fix`` grows no more than ``check`` (within a tenth) does."""
    rows = [{"id": n, "name": f"n{n}", "tags": ["a", "b"], "v": n / 2} for n in range(120_000)]
    messages = build("anthropic.messages", [U("go"), A(c("k1", "read")), R("k1", "ok")])
    call = messages[1]
    assert isinstance(call, dict)
    messages[1] = {**call, "content": [{**call["content"][0], "input": {"rows": rows}}]}
    source = write(tmp_path, "session.json", messages)
    baseline = _peak_rss("check", str(write(tmp_path, "small.json", [USER, SAID])))
    checked = _peak_rss("check", str(source)) - baseline
    fixed = _peak_rss("check", str(source), "--fix", str(tmp_path / "fixed.json")) - baseline
    assert fixed <= 1.1 * checked, f"--fix grew by {fixed / checked:.2f}x what check grew by"
    assert json.loads((tmp_path / "fixed.json").read_text(encoding="utf-8")) == messages


@pytest.mark.parametrize("jsonl", [False, True], ids=["json", "jsonl"])
def test_fix_keeps_every_field_of_a_body_beside_its_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *, jsonl: bool
) -> None:
    """A body's other fields (another transcript field's list among them) reach the ``--fix`` copy as they were."""
    messages = build("anthropic.messages", [U("go"), A(c("k1", "read")), U("well?")])
    body = {
        "model": "m",
        "contents": [{"role": "user", "parts": [{"text": "x"}]}],
        "messages": messages,
        "tools": [{"name": "read", "input_schema": {"type": "object"}}],
        "system": [{"type": "text", "text": "be brief"}],
        "metadata": {"user_id": "u", "tags": [1, 2.5, None, True]},
    }
    name = "bodies.jsonl" if jsonl else "body.json"
    source = tmp_path / name
    source.write_text("\n".join([json.dumps(body)] * (2 if jsonl else 1)) + "\n", encoding="utf-8")
    code, _, _ = run(capsys, str(source), "--fix", str(tmp_path / "fixed"))
    assert code == 1
    text = (tmp_path / "fixed").read_text(encoding="utf-8")
    copies = [json.loads(line) for line in text.splitlines()] if jsonl else [json.loads(text)]
    for copy in copies:
        assert list(copy) == list(body)
        assert {k: v for k, v in copy.items() if k != "messages"} == {k: v for k, v in body.items() if k != "messages"}
        view = ensure_tool_turn_invariants(messages, lane="anthropic.messages")
        assert copy["messages"] == list(view.messages)


def _checked_and_fixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lane: Lane, messages: list[object]
) -> tuple[int, dict[str, Any], object]:
    """``check --json --fix`` on a file of ``messages`` (in a body where the lane has one): exit code, report, copy."""
    body = {BODY_FIELDS[lane]: messages} if lane in BODY_FIELDS else messages
    source, fixed = write(tmp_path, "session.json", body), tmp_path / "fixed.json"
    code, out, _ = run(capsys, str(source), "--json", "--fix", str(fixed))
    copy = json.loads(fixed.read_text(encoding="utf-8"))
    return code, json.loads(out.splitlines()[0]), copy[BODY_FIELDS[lane]] if lane in BODY_FIELDS else copy


@pytest.mark.parametrize("lane", get_args(Lane))
def test_a_transcript_judged_in_segments_gets_the_whole_lists_verdict_and_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lane: Lane
) -> None:
    """A broken transcript many segments long: the report and the ``--fix`` copy are the whole list's own.

    Its first call is answered only at the end, thousands of messages later; faults stand in every segment.
    """
    events: list[Event] = [U("start"), A(c("early", "read")), U("go on")]
    events += list(session(6_000, state="dense"))
    events += [A(t("done")), R("early", "the early result, at last")]
    messages = build(lane, events)
    code, report, copy = _checked_and_fixed(tmp_path, capsys, lane, messages)
    whole = ensure_tool_turn_invariants(messages, lane=lane)
    assert copy == json.loads(json.dumps(list(whole.messages)))
    assert [(r["form"], tuple(r["tool_call_ids"])) for r in report["repairs"]] == [
        (r.form, r.tool_call_ids) for r in whole.repairs
    ]
    assert [v["message"] for v in report["violations"]] == [v.message for v in validate(messages, lane=lane)]
    assert report["still_refused"] == []
    assert code == EXIT_CODES[report["outcome"]]
    assert "late_result_in_place" in {r["form"] for r in report["repairs"]}


@pytest.mark.parametrize("lane", get_args(Lane))
@pytest.mark.parametrize("fault", [True, False], ids=["changed late", "never changed"])
def test_the_views_verdict_is_its_own_when_the_law_changes_it_only_late_or_never(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lane: Lane, *, fault: bool
) -> None:
    """Segments the law leaves as they are share the input's verdict; from the first it changes, the view has its own.

    An empty text (refused by Anthropic and Bedrock, left by the law) stands before and after an interrupted call
    placed thousands of messages in; without the call, nothing is changed and the view's verdict is the input's.
    """
    clean = session(6_000, state="clean")
    middle = next(i for i in range(3_000, len(clean)) if type(clean[i]) is type(U("")))
    events: list[Event] = [U("start"), U(""), *clean[:middle]]
    events += [A(c("cut", "read")), U("")] if fault else [U("")]
    events += clean[middle:]
    messages = build(lane, events)
    code, report, copy = _checked_and_fixed(tmp_path, capsys, lane, messages)
    whole = ensure_tool_turn_invariants(messages, lane=lane)
    assert copy == json.loads(json.dumps(list(whole.messages)))
    assert [v["message"] for v in report["violations"]] == [v.message for v in validate(messages, lane=lane)]
    assert [v["message"] for v in report["still_refused"]] == [
        v.message for v in validate(list(whole.messages), lane=lane)
    ]
    assert bool(whole.repairs) is fault
    assert code == EXIT_CODES[report["outcome"]]


@pytest.mark.parametrize(
    "second",
    [[USER, SAID, USER], [USER], [[USER], [SAID]], [[USER, SAID], [USER]], {"messages": [USER, SAID]}],
    ids=["longer", "shorter", "two lines", "a line more", "a body"],
)
def test_a_file_changed_between_its_two_readings_is_refused(second: object) -> None:
    """Text that differs at the second reading (more or fewer items, more values, another shape) is unreadable."""
    first = json.dumps([USER, SAID]).encode()
    again = (
        "\n".join(json.dumps(v) for v in second)
        if isinstance(second, list) and isinstance(second[0], list)
        else json.dumps(second)
    ).encode()
    document = read_document("s.json", io.BytesIO(first).read, streamed=True)
    with pytest.raises(ToolTurnInputError, match="changed while it was read"):
        list(
            judge_streamed(
                "s.json",
                io.BytesIO(again).read,
                document.entries,
                limit=DEFAULT_MAX_SIZE,
                lane=None,
                dialect=None,
                copy=None,
            )
        )


def _peak_rss(*argv: str, exit_code: int = 0) -> int:
    """The peak resident memory, in bytes, of one ``otel-toolturn`` run, which must exit with ``exit_code``."""
    run = check_memory.peak_rss(sys.executable, "-m", "otel_toolturn.cli", *argv)
    assert run.code == exit_code, run.stderr
    return run.rss


def test_usage_errors_are_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A usage error (no file; ``--fix`` over two files) is exit 3 with one line, not argparse's 2."""
    with pytest.raises(SystemExit) as raised:
        main(["check"])
    assert raised.value.code == 3
    assert capsys.readouterr().err.count("\n") == 1
    one = write(tmp_path, "a.json", SAMPLES[0].messages)
    code, _, err = run(capsys, str(one), str(one), "--fix", str(tmp_path / "out.json"))
    assert code == 3
    assert "expected one" in err


def test_console_command_never_prints_a_traceback(tmp_path: Path) -> None:
    """Run as a program, an unreadable input exits 3 with a one-line reason and no traceback."""
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe not text")
    done = subprocess.run(
        [sys.executable, "-m", "otel_toolturn.cli", "check", str(bad)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 3
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0
    assert "not UTF-8" in done.stderr


def test_the_outcome_tables_cover_the_whole_vocabulary() -> None:
    """Every outcome has its exit code and its verdict, and no table names another."""
    assert set(EXIT_CODES) == set(VERDICTS) == set(OUTCOMES)


def test_json_prints_one_report_per_line_unreadable_files_included(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json`` over several files and JSONL lines is JSON Lines: one report per line, an unreadable file too."""
    lines = [SAMPLES[0].messages, SAMPLES[-1].messages]
    source = tmp_path / "sessions.jsonl"
    source.write_text("\n".join(json.dumps(v) for v in lines) + "\n")
    code, out, err = run(capsys, str(source), str(tmp_path / "absent.json"), "--json")
    reports = [json.loads(line) for line in out.splitlines()]
    assert len(reports) == 3
    assert reports[-1]["outcome"] == "unreadable"
    assert code == EXIT_UNREADABLE
    assert len(err.splitlines()) == 1


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    """``otel-toolturn --version`` prints the version and exits 0."""
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"otel-toolturn {otel_toolturn.__version__}"


def test_a_lane_asked_against_the_shape_is_judged_as_asked_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--lane chat`` on an Anthropic body: judged as Chat, and one note says its shape reads as Anthropic."""
    body = {
        "model": "claude-x",
        "system": "be brief",
        "messages": [{"role": "user", "content": "hi"}],
    }
    code, out, _ = run(capsys, str(write(tmp_path, "body.json", body)), "--lane", "chat")
    assert code == 0
    assert "note: its shape reads as anthropic.messages; judged as openai.chat_completions, as --lane asked" in out
    _, out, _ = run(capsys, str(write(tmp_path, "body.json", body)), "--lane", "chat", "--json")
    assert json.loads(out)["shape_lane"] == "anthropic.messages"
    _, out, _ = run(capsys, str(write(tmp_path, "body.json", body)), "--lane", "anthropic")
    assert "note:" not in out


@pytest.mark.parametrize("fix", [False, True], ids=["check", "check --fix"])
def test_a_small_file_is_judged_with_nothing_on_disk_and_every_spool_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *, fix: bool
) -> None:
    """The report (and ``--fix``'s copy) of a small file wait in memory, never in a file; each spool is closed."""
    on_disk: list[object] = []
    spools: list[tempfile.SpooledTemporaryFile[str]] = []
    real_file, real_spool = tempfile.TemporaryFile, cli._spooled

    def file(*args: object, **kwargs: object) -> object:
        on_disk.append(real_file(*args, **kwargs))  # type: ignore[call-overload]
        return on_disk[-1]

    def spool() -> tempfile.SpooledTemporaryFile[str]:
        spools.append(real_spool())
        return spools[-1]

    monkeypatch.setattr(tempfile, "TemporaryFile", file)
    monkeypatch.setattr(cli, "_spooled", spool)
    source = write(tmp_path, "broken.json", build("anthropic.messages", [U("go"), A(c("k1", "read")), U("well?")]))
    code, _, _ = run(capsys, str(source), *(["--fix", str(tmp_path / "fixed.json")] if fix else []))
    assert code == 1
    assert on_disk == []
    assert len(spools) == (3 if fix else 1)
    assert all(spooled.closed for spooled in spools)


@pytest.mark.parametrize("extra", [[], ["--json"], ["--fix", "-"]], ids=["text", "json", "fix"])
def test_a_report_and_copy_past_the_memory_spool_move_to_disk_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, extra: list[str]
) -> None:
    """Past ``SPOOLED_IN_MEMORY`` the report and the copy go to temporary files, closed after, and read the same."""
    lines = [build("anthropic.messages", [U(f"go {n}"), A(c(f"k{n}", "read")), U("well?")]) for n in range(60)]
    lines.append(build("anthropic.messages", [U("go"), *(A(c(f"k{n}", "read")) for n in range(20)), U("well?")]))
    source = tmp_path / "sessions.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    in_memory = run(capsys, str(source), *extra)
    on_disk: list[IO[str]] = []
    real_file = tempfile.TemporaryFile

    def file(*args: object, **kwargs: object) -> IO[str]:
        on_disk.append(real_file(*args, **kwargs))  # type: ignore[call-overload]
        return on_disk[-1]

    monkeypatch.setattr(tempfile, "TemporaryFile", file)
    monkeypatch.setattr(cli, "SPOOLED_IN_MEMORY", 500)
    assert run(capsys, str(source), *extra) == in_memory
    assert in_memory[0] == 1
    assert len(on_disk) == (3 if "--fix" in extra else 1)
    assert all(spooled.closed for spooled in on_disk)


def test_a_text_longer_than_the_memory_spool_goes_straight_to_its_file() -> None:
    """A 4 MB write (or writelines) to a spool holding a little is never copied in memory: less than one more copy."""
    text = "x" * 4_000_000
    peaks = []
    for write in ("write", "writelines"):
        with cli._spooled() as spool:
            spool.write("[")
            tracemalloc.start()
            try:
                getattr(spool, write)(text if write == "write" else [text])
                peaks.append(tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
            spool.seek(0)
            assert spool.read() == "[" + text
    assert max(peaks) < 1.5 * len(text)


def test_a_long_value_is_read_in_about_what_json_loads_takes() -> None:
    """Reading one 4 MB message takes at most a twentieth more than ``json.loads`` (its text never copied again)."""
    rows = [{"id": n, "name": f"n{n}", "tags": ["a", "b"], "v": n / 2} for n in range(60_000)]
    messages = build("anthropic.messages", [U("go"), A(c("k1", "read")), R("k1", "ok")])
    call = messages[1]
    assert isinstance(call, dict)
    messages[1] = {**call, "content": [{**call["content"][0], "input": {"rows": rows}}]}
    data = json.dumps(messages).encode()
    del rows, messages, call

    def peak(read: Callable[[], object]) -> int:
        tracemalloc.start()
        try:
            read()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    loaded = peak(lambda: json.loads(io.BytesIO(data).read().decode()))
    surveyed = peak(lambda: list(cli.surveyed("s.json", io.BytesIO(data).read, streamed=True)))
    assert surveyed <= 1.05 * loaded, f"read in {surveyed / loaded:.3f}x what json.loads takes"


class _Writes(io.StringIO):
    """A text stream that keeps the length of its longest single write."""

    longest = 0

    def write(self, text: str) -> int:
        self.longest = max(self.longest, len(text))
        return super().write(text)


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_report_is_written_a_finding_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, as_json: bool
) -> None:
    """A report of 2,000 findings is spooled a finding at a time (each write one line's), never built whole."""
    events: list[Event] = [U("go")]
    for k in range(1000):  # each call interrupted by the user's next words: a violation and a repair each
        events += [A(c(f"k{k}")), U("go on")]
    source = write(tmp_path, "session.json", build("anthropic.messages", events))
    spooled = _Writes()
    monkeypatch.setattr(cli, "_spooled", lambda: spooled)
    report = io.StringIO()
    monkeypatch.setattr(sys, "stdout", report)
    assert main(["check", str(source), *(["--json"] if as_json else [])]) == 1
    text = report.getvalue()
    found = json.loads(text) if as_json else None
    assert len(text) > 200_000
    assert spooled.longest < 400
    if found is not None:
        assert (len(found["violations"]), len(found["repairs"])) == (1000, 1000)


def _rounds(count: int, calls: int) -> list[Event]:
    """A session of ``count`` rounds, each ``calls`` calls answered right after them."""
    events: list[Event] = [U("go")]
    for k in range(count):
        ids = [f"k{k}_{n}" for n in range(calls)]
        events += [A(*(c(i) for i in ids)), *(R(i, "ok") for i in ids)]
    return events


def test_a_bad_message_judged_in_a_later_segment_gets_its_own_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A call with no string id 1,600 messages in is named as it is in a short file, never "changed while read"."""
    messages = build("anthropic.messages", _rounds(1000, 1))
    call = messages[1601]
    assert isinstance(call, dict)
    messages[1601] = {**call, "content": [{**call["content"][0], "id": 5}]}
    code, out, err = run(capsys, str(write(tmp_path, "session.json", messages)))
    assert (code, out) == (EXIT_UNREADABLE, "")
    assert "item 1601: a tool_use block needs a non-empty string 'id'" in err
    assert "changed" not in err


def test_messages_of_many_blocks_are_judged_a_quarter_megabyte_of_text_at_a_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """600 messages of 50 blocks each (2 MB) reach the law in segments of about 256 KB, not as one of 600 messages."""
    fed: list[int] = []
    feed = LawStream.feed

    def counted(stream: LawStream, items: list[object], *, last: bool) -> list[object]:
        fed.append(len(json.dumps(items)))
        return feed(stream, items, last=last)

    monkeypatch.setattr(LawStream, "feed", counted)
    source = write(tmp_path, "session.json", build("anthropic.messages", _rounds(300, 50), merge_user=True))
    code, _, _ = run(capsys, str(source))
    assert code == 0
    assert len(fed) >= 8
    assert max(fed) < 1.2 * 2**18
    assert sum(fed) == len(source.read_text(encoding="utf-8"))


@pytest.mark.parametrize("lane", get_args(Lane))
def test_a_long_generated_transcript_gets_the_whole_lists_findings_or_its_refusal(tmp_path: Path, lane: Lane) -> None:
    """Judged in segments, 1,500 generated items get the whole list's verdict, copy and repairs, or its refusal."""
    rng = random.Random(f"long:{lane}")  # noqa: S311 - a reproducible test input, not a secret
    judged = check_fuzz.generated(lane, rng, flavours=("near", "random"), at_least=1500)
    unreadable: list[object] = []
    while not check_fuzz.whole_list_refusals(lane, unreadable):  # one malformed transcript the law cannot read
        unreadable = check_fuzz.generated(lane, rng, flavours=("malformed",), at_least=1)
    assert check_fuzz.outcome(lane, judged, tmp_path) == "judged"
    assert check_fuzz.outcome(lane, [*judged[:1200], *unreadable, *judged[1200:]], tmp_path) == "refused"
