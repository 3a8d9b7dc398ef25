"""The recorded provider traffic is read under CI or the run fails; elsewhere its absence is a skip with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.streams._recordings import present


def test_under_ci_a_missing_recording_fails_the_test(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With ``CI`` set, a recording that is not there is a failure naming it, never a skip."""
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"the recording gone\.sse beside the repository is absent"):
        present(tmp_path / "gone.sse")


def test_outside_ci_a_missing_recording_is_skipped_with_its_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without ``CI``, the same absence skips the test and says which recording is missing."""
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"gone\.sse"):
        present(tmp_path / "gone.sse")


def test_a_recording_that_is_there_is_read() -> None:
    """A recording that exists is handed back as its path, under CI or not."""
    assert present(Path(__file__)) == Path(__file__)
