"""The code, docs and dashboards say what they mean: no internal work-item labels anywhere a reader looks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parents[1]
READ: Final = ("otel_toolturn", "docs", "dashboards", "bench", "tests", "README.md", "CHANGELOG.md")
SUFFIXES: Final = frozenset({".py", ".md", ".json", ".yml", ".yaml", ".toml"})
LABEL: Final = re.compile("se" + r"eds?[- ]0\d\d", re.IGNORECASE)
"""An internal work-item label such as the one spelled here in two pieces (so this file holds none)."""


def _files() -> list[Path]:
    out: list[Path] = []
    for name in READ:
        path = REPO / name
        if path.is_file():
            out.append(path)
        elif path.is_dir():
            out.extend(p for p in sorted(path.rglob("*")) if p.suffix in SUFFIXES and "__pycache__" not in p.parts)
    return out


def test_no_work_item_labels_in_code_docs_or_dashboards() -> None:
    """No file a reader opens names an internal work item instead of what it means."""
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for path in _files()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1)
        if LABEL.search(line)
    ]
    assert found == []
