"""``otel-toolturn dashboards``: a wheel user reaches the dashboards, rules and stack the repository ships."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_toolturn.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "dashboards"


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_every_dashboards_file_is_package_data() -> None:
    """The wheel's package-data globs take every file of ``dashboards/``, so the command has them all to write."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["otel_toolturn"]
    package = ROOT / "otel_toolturn"
    taken = {
        str(found.relative_to(package / "dashboards"))
        for pattern in patterns
        if pattern.startswith("dashboards/")
        for found in package.glob(pattern)
        if found.is_file()
    }
    assert taken == set(_tree(SHIPPED))


def test_dashboards_writes_the_shipped_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command writes every shipped file, byte for byte, into a new folder, one line per file, exit 0."""
    target = tmp_path / "out"
    assert main(["dashboards", str(target)]) == 0
    assert _tree(target) == _tree(SHIPPED)
    assert len(capsys.readouterr().out.splitlines()) == len(_tree(SHIPPED))


def test_dashboards_never_overwrites_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file already there stops the command with one line and exit 3, writing nothing; ``--force`` overwrites."""
    rules = tmp_path / "prometheus" / "toolturn-rules.yml"
    rules.parent.mkdir()
    rules.write_text("mine\n", encoding="utf-8")
    assert main(["dashboards", str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--force" in err
    assert rules.read_text(encoding="utf-8") == "mine\n"
    assert _tree(tmp_path) == {"prometheus/toolturn-rules.yml": b"mine\n"}
    assert main(["dashboards", str(tmp_path), "--force"]) == 0
    assert _tree(tmp_path) == _tree(SHIPPED)


def test_dashboards_into_an_unwritable_place_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder that cannot be made is exit 3 with one line naming the path, never an internal error."""
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    assert main(["dashboards", str(blocker / "sub")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("otel-toolturn: cannot write ")
    assert "internal error" not in err
    assert err.count("\n") == 1
