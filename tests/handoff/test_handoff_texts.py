"""The handoff texts, byte for byte."""

from __future__ import annotations

import pytest

from otel_toolturn.handoff._texts import (
    handoff_not_started_text,
    handoff_resume_text,
    handoff_stopped_text,
    too_many_handoffs_text,
)


def test_one_name_called_several_times_counts_the_calls() -> None:
    """One distinct name: the refusal says how many times it was called."""
    assert too_many_handoffs_text("explorer", ["explorer", "explorer", "explorer"]) == (
        "Error: explorer was not run. It was called 3 times in this response, and only one call can run per "
        "response. Call it once in a new response."
    )


@pytest.mark.parametrize(
    ("names", "joined"),
    [
        (["explorer", "oracle"], "explorer and oracle"),
        (["explorer", "oracle", "coder"], "explorer, oracle, and coder"),
        (["explorer", "oracle", "explorer", "coder", "oracle"], "explorer, oracle, and coder"),
    ],
)
def test_several_names_are_joined_once_each_in_first_seen_order(names: list[str], joined: str) -> None:
    """Several distinct names: ``A and B`` / ``A, B, and C``, each name once, first-seen order."""
    assert too_many_handoffs_text("oracle", names) == (
        f"Error: oracle was not run. {joined} were called in the same response, and only one of them can run per "
        "response. Call one of them again in a new response."
    )


def test_not_started_text() -> None:
    """The not-started text names the tool and the reason."""
    assert handoff_not_started_text("explorer", "cost limit reached") == (
        "Error: explorer was not run. The run stopped before it could start: cost limit reached"
    )


def test_resume_text() -> None:
    """The resume text: the bracketed result, a newline, the cue to continue."""
    assert handoff_resume_text("explorer", "the answer") == (
        "[explorer finished. the answer]\nContinue with the user's request."
    )


def test_stopped_text() -> None:
    """The stopped text: the bracketed reason, a newline, where the work so far is."""
    assert handoff_stopped_text("explorer", "provider timeout") == (
        "[explorer stopped before finishing: provider timeout]\n"
        "Its work so far is in the messages above. Continue with the user's request using that work."
    )
