"""The requirements of CI's floors stage, read from ``pyproject.toml``: every floor pinned exactly.

Reads ``[project] dependencies`` and every extra a user installs (all but ``TEST_EXTRAS``) and
prints one requirement a line for ``pip install -r``: each as ``name==floor``, the floor being the
version of its ``>=`` (or ``==``) clause, its environment marker kept. Then the test tools the
floors stage runs with (``TEST_TOOLS``, by name), as the ``dev`` extra declares them: newest.

Fails (exit 1, naming the requirement) on a runtime requirement without a floor, and on two extras
that declare different floors for one package, so a floor is always what ``pyproject.toml`` says.

    python .ci/floors.py > floors.txt
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PYPROJECT: Final = Path(__file__).resolve().parents[1] / "pyproject.toml"

TEST_EXTRAS: Final = frozenset({"dev", "bench", "frameworks", "beside"})
"""The extras that only the tests and benchmarks install: the floors stage leaves them out."""

TEST_TOOLS: Final = ("pytest", "pytest-asyncio", "hypothesis", "httpx2", "PyYAML")
"""The tools the floors stage's tests run with, taken from the ``dev`` extra at its newest."""


class FloorError(ValueError):
    """A requirement of ``pyproject.toml`` that names no single floor."""


def floor(requirement: Requirement) -> str:
    """The lowest version ``requirement`` allows: the version of its ``>=`` or ``==`` clause."""
    lows = [s.version for s in requirement.specifier if s.operator in {">=", "=="}]
    if len(lows) != 1:
        raise FloorError(f"{str(requirement)!r} names no single floor (expected one '>=' or '==' clause)")
    return lows[0]


def pinned(requirement: Requirement) -> str:
    """``requirement`` pinned to its floor, with its extras and its marker."""
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    marker = f"; {requirement.marker}" if requirement.marker else ""
    return f"{requirement.name}{extras}=={floor(requirement)}{marker}"


def runtime_requirements(project: dict[str, Any]) -> Iterator[Requirement]:
    """The dependencies, then each extra's requirements (the test extras left out), in pyproject order."""
    dependencies: list[str] = project.get("dependencies", [])
    extras: dict[str, list[str]] = project.get("optional-dependencies", {})
    yield from (Requirement(line) for line in dependencies)
    for name, lines in extras.items():
        if name not in TEST_EXTRAS:
            yield from (Requirement(line) for line in lines)


def pins(requirements: Iterable[Requirement]) -> list[str]:
    """One pin per package; the same package in two extras must name the same floor."""
    seen: dict[str, Requirement] = {}
    out: list[str] = []
    for requirement in requirements:
        key = canonicalize_name(requirement.name)
        before = seen.get(key)
        if before is None:
            seen[key] = requirement
            out.append(pinned(requirement))
        elif floor(before) != floor(requirement):
            raise FloorError(f"{str(before)!r} and {str(requirement)!r} declare different floors")
    return out


def test_tools(project: dict[str, Any]) -> list[str]:
    """``TEST_TOOLS`` as the ``dev`` extra declares them."""
    extras: dict[str, list[str]] = project.get("optional-dependencies", {})
    declared = {canonicalize_name(Requirement(line).name): line for line in extras["dev"]}
    missing = [name for name in TEST_TOOLS if canonicalize_name(name) not in declared]
    if missing:
        raise FloorError(f"the dev extra declares no {missing!r}")
    return [declared[canonicalize_name(name)] for name in TEST_TOOLS]


def main() -> int:
    """Print the floors stage's requirements; exit 1 on a requirement without a single floor."""
    tomllib = importlib.import_module("tomllib")  # the standard library's from Python 3.11, which CI runs
    project: dict[str, Any] = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    try:
        lines = [*pins(runtime_requirements(project)), *test_tools(project)]
    except FloorError as exc:
        sys.stderr.write(f"floors: {exc}\n")
        return 1
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
