"""``otel-toolturn check`` over every lane: exit codes, reports, ``--fix`` copies, unreadable input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from otel_toolturn import Lane, validate
from otel_toolturn.cli import EXIT_CODES, OUTCOMES, VERDICTS, Entry, detect_lane, main

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
    """``--json`` on a plain list prints one machine-readable report with outcome, repairs and exit code."""
    code, out, _ = run(capsys, str(write(tmp_path, "list.json", sample.messages)), "--json")
    (report,) = json.loads(out)
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
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(plain)))
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
    assert str(path) in err


def test_missing_file_and_worst_code_over_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing file is reported in one line and the run still judges the others; exit is the worst (3)."""
    good = write(tmp_path, "good.json", SAMPLES[0].messages)
    code, out, err = run(capsys, str(tmp_path / "absent.json"), str(good))
    assert code == 3
    assert "absent.json: no such file" in err
    assert "verdict: clean" in out


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
