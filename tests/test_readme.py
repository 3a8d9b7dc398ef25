"""Every Python block of the README runs as written, in a fresh process, against the simulator and no collector."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[1]
BLOCKS: Final = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S | re.M)


def test_the_readme_has_its_python_blocks() -> None:
    """The README shows Python: the set-up, the law, the simulator (a test of none would pass for nothing)."""
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block-{n + 1}" for n in range(len(BLOCKS))])
def test_a_readme_python_block_runs_as_written(block: str) -> None:
    """The block runs to its end, exit 0, with nothing of its own undefined."""
    environ = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "OTEL_TRACES_EXPORTER": "none",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
    }
    done = subprocess.run(
        [sys.executable, "-c", block], check=False, capture_output=True, text=True, env=environ, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
