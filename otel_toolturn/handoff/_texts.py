"""The words a handoff puts in front of the model, each built in one function.

Every text names the tool, so a model that called several tools can tell which one is meant.
The texts are exact: agent code and tests compare them byte for byte.

- ``too_many_handoffs_text``: the refusal for a handoff called in the same response as another
  handoff (one distinct name: how many times; several: the names, joined ``A and B`` /
  ``A, B, and C``).
- ``handoff_not_started_text``: answers a handoff's call when the run stopped before its body
  began, so the call is not left without a result.
- ``handoff_resume_text`` / ``handoff_stopped_text``: the user-role hand-back after a body that
  finished, or one that failed or was aborted partway.
"""

from __future__ import annotations

from collections.abc import Sequence


def _join_names(names: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B, and C``."""
    if len(names) <= 2:
        return " and ".join(names)
    return f"{', '.join(names[:-1])}, and {names[-1]}"


def too_many_handoffs_text(tool_name: str, names: Sequence[str]) -> str:
    """The refusal for ``tool_name`` when a response called more than one handoff.

    ``names`` lists the response's handoff calls, one entry per call (a tool called twice appears
    twice); distinct names keep their first-seen order.

    >>> too_many_handoffs_text("explorer", ["explorer", "explorer"])
    'Error: explorer was not run. It was called 2 times in this response, and only one call can run per response. Call it once in a new response.'
    >>> too_many_handoffs_text("explorer", ["explorer", "oracle", "coder"])[:68]
    'Error: explorer was not run. explorer, oracle, and coder were called'
    """  # noqa: E501
    distinct = list(dict.fromkeys(names))
    if len(distinct) == 1:
        return (
            f"Error: {tool_name} was not run. It was called {len(names)} times in this response, "
            "and only one call can run per response. Call it once in a new response."
        )
    return (
        f"Error: {tool_name} was not run. {_join_names(distinct)} were called in the same response, "
        "and only one of them can run per response. Call one of them again in a new response."
    )


def handoff_not_started_text(tool_name: str, reason: str) -> str:
    """The result for a handoff's call when the run stopped before its body could start.

    >>> handoff_not_started_text("explorer", "cost limit reached")
    'Error: explorer was not run. The run stopped before it could start: cost limit reached'
    """
    return f"Error: {tool_name} was not run. The run stopped before it could start: {reason}"


def handoff_resume_text(tool_name: str, body: str) -> str:
    r"""The hand-back after a body that finished: its result, then the cue to go on.

    >>> handoff_resume_text("explorer", "x")
    "[explorer finished. x]\nContinue with the user's request."
    """
    return f"[{tool_name} finished. {body}]\nContinue with the user's request."


def handoff_stopped_text(tool_name: str, reason: str) -> str:
    r"""The hand-back after a body that failed or was aborted partway.

    >>> handoff_stopped_text("explorer", "timeout")[:44]
    '[explorer stopped before finishing: timeout]'
    """
    return (
        f"[{tool_name} stopped before finishing: {reason}]\n"
        "Its work so far is in the messages above. Continue with the user's request using that work."
    )
