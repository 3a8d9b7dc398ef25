"""``otel-toolturn demo`` runs to completion: the provider's 400s without otel-toolturn, success with it."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys

import pytest

from otel_toolturn import REPAIR_FORMS
from otel_toolturn._vocab import DemoTelemetry
from otel_toolturn.demo import REPAIR_WORDS, installed, resolve_telemetry

WITH_MARKER = "With otel_toolturn.init():"
PROVIDER_WORDS = {
    "`tool_use` ids were found without `tool_result` blocks immediately after": 2,
    "must be followed by tool messages responding to each 'tool_call_id'": 1,
    "Did not find 1 tool_result block(s) at the beginning of this message": 1,
    "`tool_use` ids must be unique": 1,
    "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'": 1,
    "No tool call found for function call output with call_id": 1,
    "Invalid `signature` in `thinking` block. The block is bound to a different conversation.": 1,
    "tool use with id `srvtoolu_": 1,
    "was found without a corresponding `web_search_tool_result` block": 1,
    "Please ensure that the number of function response parts is equal to the number of function call parts": 1,
    "The number of toolResult blocks at messages.0.content exceeds the number of toolUse blocks": 1,
    "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_": 1,
}
"""The provider's words each refusal before ``init`` shows, and how many stories end in them."""
STORIES = [story for sdk in installed()[0] for story in sdk.stories]
PREFIX_STORY = "a preserved-thinking model: a tool's result arrives after the model answered"
CACHED = re.compile(r"(\d+) of (\d+) prompt tokens read from cache")
REPAIRS_SHOWN = (
    "toolturn.repair: missing_result",
    "toolturn.repair: late_result",
    "toolturn.repair: late_result_in_place",
    "toolturn.repair: trailing_text",
    "toolturn.repair: duplicate_call",
    "toolturn.repair: orphan_result",
    "toolturn.stream.drop: truncated",
    "toolturn.repair: missing_result [gc-",
    "toolturn.repair: orphan_result [tooluse_log]",
    "toolturn.repair: missing_result [tooluse_",
)


@pytest.fixture(scope="module")
def demo_run() -> subprocess.CompletedProcess[str]:
    """The demo run as a newcomer runs it: a program, console telemetry, no OTLP endpoint, no key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "ANTHROPIC_"))}
    return subprocess.run(
        [sys.executable, "-m", "otel_toolturn.cli", "demo"], capture_output=True, text=True, env=env, check=False
    )


def test_demo_finishes_cleanly(demo_run: subprocess.CompletedProcess[str]) -> None:
    """The demo exits 0 and writes nothing on stderr (no traceback, no warning)."""
    assert demo_run.returncode == 0, demo_run.stderr
    assert demo_run.stderr == ""


def test_without_otel_toolturn_each_story_ends_in_the_providers_400(demo_run: subprocess.CompletedProcess[str]) -> None:
    """Before ``init``: one 400 per story (two for preserved thinking), each in the provider's own words."""
    before, _ = demo_run.stdout.split(WITH_MARKER)
    refused = [line for line in before.splitlines() if " 400 refused " in line]
    assert len(refused) == len(STORIES) + 1
    for words, count in PROVIDER_WORDS.items():
        assert sum(words in line for line in refused) == count, words


def test_with_otel_toolturn_every_call_succeeds_and_shows_its_repairs(
    demo_run: subprocess.CompletedProcess[str],
) -> None:
    """After ``init``: no 400, every request 200, and each story's repair or stream event is shown."""
    _, after = demo_run.stdout.split(WITH_MARKER)
    assert " 400 " not in after
    assert after.count(" 200 ok ") == 2 * len(STORIES) + 1
    for shown in REPAIRS_SHOWN:
        assert shown in after


def _story(text: str, title: str) -> list[str]:
    """The lines of the story titled ``title`` in one pass of the demo's output (its requests and events)."""
    lines = text.split(f". {title} (anthropic)\n", 1)[1].splitlines()
    return list(itertools.takewhile(lambda line: line.startswith("     "), lines))


def test_the_moved_up_result_is_refused_by_the_prefix_check(demo_run: subprocess.CompletedProcess[str]) -> None:
    """Before ``init``: the closed call is served, and moving the late result up in place of the close is refused."""
    before, _ = demo_run.stdout.split(WITH_MARKER)
    closed, moved = (line for line in _story(before, PREFIX_STORY) if "move-up rule:" in line)
    assert " 200 ok " in closed
    assert " 400 refused " in moved
    assert "Invalid `signature` in `thinking` block" in moved


def test_with_otel_toolturn_the_late_result_keeps_the_cache(demo_run: subprocess.CompletedProcess[str]) -> None:
    """After ``init``: the late result's request reads the whole previous request from cache."""
    _, after = demo_run.stdout.split(WITH_MARKER)
    figures = [CACHED.search(line) for line in _story(after, PREFIX_STORY) if " 200 ok " in line]
    (_, _), (_, previous), (cached, prompt) = ((int(m[1]), int(m[2])) for m in figures if m is not None)
    assert len(figures) == 3
    assert cached == previous
    assert 0 < cached < prompt


def test_demo_says_where_the_telemetry_went(demo_run: subprocess.CompletedProcess[str]) -> None:
    """The summary names the console as the destination and prints one console line per span."""
    assert "Telemetry went to the console" in demo_run.stdout
    assert "toolturn.lossy_projections 4" in demo_run.stdout
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" in demo_run.stdout


@pytest.mark.parametrize(
    ("choice", "environ", "expected"),
    [
        (None, {}, "console"),
        (None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"}, "otlp"),
        ("none", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"}, "none"),
        ("console", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"}, "console"),
    ],
)
def test_telemetry_destination(choice: DemoTelemetry | None, environ: dict[str, str], expected: DemoTelemetry) -> None:
    """Console by default, OTLP when an endpoint is set, and an explicit choice wins."""
    assert resolve_telemetry(choice, environ) == expected


def test_every_repair_form_has_words() -> None:
    """The demo explains every repair form, and only those."""
    assert set(REPAIR_WORDS) == set(REPAIR_FORMS)


_WITHOUT = """\
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # the SDK is not installed: importing it raises ImportError
from otel_toolturn.cli import main
raise SystemExit(main(["demo", "--telemetry", "none"]))
"""


@pytest.mark.parametrize(
    ("blocked", "played", "line"),
    [
        ("google.genai", 10, "the stories of google-genai, not installed here (pip install 'otel-toolturn[gemini]')"),
        ("anthropic", 6, "the stories of anthropic, not installed here (pip install 'otel-toolturn[anthropic]')"),
        (
            "anthropic,openai",
            3,
            "the stories of anthropic, openai, not installed here (pip install 'otel-toolturn[anthropic,openai]')",
        ),
        ("boto3", 9, "the stories of boto3, not installed here (pip install 'otel-toolturn[bedrock]')"),
    ],
)
def test_the_stories_of_an_sdk_not_installed_are_skipped_in_one_line(blocked: str, played: int, line: str) -> None:
    """Without an SDK the demo plays the other SDKs' stories, says in one line which it skipped, and exits 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "ANTHROPIC_"))}
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT, blocked], capture_output=True, text=True, env=env, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert [text for text in done.stdout.splitlines() if text.startswith("Skipped: ")] == [f"Skipped: {line}."]
    before, after = done.stdout.split(WITH_MARKER)
    assert len(re.findall(r"^  \d+\. ", before, re.MULTILINE)) == played
    assert " 400 " not in after


_TOO_OLD = """\
import sys, types
sys.modules["google.genai"] = types.ModuleType("google.genai")  # imports, but holds nothing the stories use
from otel_toolturn.cli import main
raise SystemExit(main(["demo", "--telemetry", "none"]))
"""


def test_the_stories_of_an_sdk_too_old_for_them_are_skipped_in_one_line() -> None:
    """An SDK that imports but lacks what its stories use: the other stories play, one line says why, exit 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_", "ANTHROPIC_"))}
    done = subprocess.run(
        [sys.executable, "-c", _TOO_OLD], capture_output=True, text=True, env=env, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stdout + done.stderr
    skipped = [text for text in done.stdout.splitlines() if text.startswith("Skipped: ")]
    assert skipped == [
        "Skipped: the stories of google-genai, too old here for them (pip install 'otel-toolturn[gemini]')."
    ]


def test_without_any_sdk_the_demo_says_so_in_one_line() -> None:
    """No SDK client installed: one line naming the extras that bring them, exit 3, no traceback."""
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT, "anthropic,openai,google.genai,boto3"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 3
    assert done.stdout == ""
    assert done.stderr == (
        "otel-toolturn: the demo drives an SDK client, and none is installed here: "
        "pip install 'otel-toolturn[anthropic,openai,gemini,bedrock]'\n"
    )
