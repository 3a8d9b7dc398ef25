"""The compiled law and lane adapters (mypyc, see ``setup.py``) are the pure-Python ones, only faster.

``tests/run.sh`` also runs the law's tests a second time with ``OTEL_TOOLTURN_PURE_PYTHON=1``, so
both implementations meet every test; these tests hold the choice itself and compare the two
implementations' answers across processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import otel_toolturn.lanes
from bench.law import session
from otel_toolturn import LANES, ensure_tool_turn_invariants
from tests.test_law_examples import EXAMPLES
from tests.transcripts import build

ROOT = Path(__file__).resolve().parents[1]

_ANSWERS = """
import json, sys
from bench.law import session
from otel_toolturn import LANES, _law, _view, ensure_tool_turn_invariants, lanes
from tests.test_law_examples import EXAMPLES
from tests.transcripts import build

def answer(messages, lane):
    view = ensure_tool_turn_invariants(messages, lane=lane)
    return [[r.form, list(r.tool_call_ids), r.before_run] for r in view.repairs], view.messages

modules = (lanes._common, lanes.anthropic_messages, lanes.openai_chat, lanes.openai_responses, _law, _view)
files = [m.__file__ for m in modules]
out = {"compiled": lanes.COMPILED, "files": files, "answers": []}
for lane in LANES:
    for state in ("clean", "few", "dense"):
        out["answers"].append(answer(build(lane, session(300, state=state)), lane))
    for example in EXAMPLES:
        if lane in example.expected:
            out["answers"].append(answer(build(lane, example.given), lane))
json.dump(out, sys.stdout, default=str)
"""


def _answers(*, pure: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "OTEL_TOOLTURN_PURE_PYTHON"}
    if pure:
        env["OTEL_TOOLTURN_PURE_PYTHON"] = "1"
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", _ANSWERS], env=env, cwd=ROOT, capture_output=True, text=True, check=True, timeout=300
    )
    answers: dict[str, object] = json.loads(done.stdout)
    return answers


def test_pure_python_is_chosen_by_the_environment() -> None:
    """``OTEL_TOOLTURN_PURE_PYTHON=1``: the law and every lane module are loaded from their ``.py`` files."""
    pure = _answers(pure=True)
    assert pure["compiled"] is False
    assert all(str(f).endswith(".py") for f in pure["files"])  # type: ignore[attr-defined]


def test_the_compiled_and_the_pure_lanes_give_the_same_answers() -> None:
    """The worked examples and the bench's sessions, every lane: repairs and request views equal in both builds."""
    installed, pure = _answers(pure=False), _answers(pure=True)
    assert installed["answers"] == pure["answers"]


def test_the_lanes_are_compiled_where_a_c_compiler_is_at_hand() -> None:
    """A machine with a C compiler builds the lanes with mypyc (the build only falls back without one)."""
    if os.environ.get("OTEL_TOOLTURN_PURE_PYTHON") == "1":
        assert not otel_toolturn.lanes.COMPILED
        return
    compiler = os.environ.get("CC", "cc")
    assert shutil.which(compiler) is None or otel_toolturn.lanes.COMPILED, (
        f"{compiler} is installed but the lane adapters run as pure Python: reinstall with "
        "`pip install -e .` (and without OTEL_TOOLTURN_PURE_PYTHON=1) to build them"
    )


def test_this_process_answers_as_the_installed_build() -> None:
    """The in-process law (this test run's build) answers the dense sessions as the installed build does."""
    installed = _answers(pure=os.environ.get("OTEL_TOOLTURN_PURE_PYTHON") == "1")
    mine = []
    for lane in LANES:
        for state in ("clean", "few", "dense"):
            view = ensure_tool_turn_invariants(build(lane, session(300, state=state)), lane=lane)
            mine.append([[[r.form, list(r.tool_call_ids), r.before_run] for r in view.repairs], view.messages])
        for example in EXAMPLES:
            if lane in example.expected:
                view = ensure_tool_turn_invariants(build(lane, example.given), lane=lane)
                mine.append([[[r.form, list(r.tool_call_ids), r.before_run] for r in view.repairs], view.messages])
    assert json.loads(json.dumps(mine, default=str)) == installed["answers"]
