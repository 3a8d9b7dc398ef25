"""The handoff package's public surface: ``__all__`` and the namespace agree."""

from __future__ import annotations

import types

from otel_toolturn import handoff


def test_all_matches_the_public_namespace() -> None:
    """Every public name is exported and every export exists."""
    public = {
        name
        for name, value in vars(handoff).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    public.discard("annotations")
    assert set(handoff.__all__) == public


def test_all_is_sorted_and_is_what_a_tool_loop_calls() -> None:
    """``__all__`` is sorted and holds the operations a tool loop (and the instrumentation) calls and their values."""
    assert handoff.__all__ == sorted(handoff.__all__)
    operations = {
        "handoff_calls",
        "matching_pattern",
        "drop_handoff_call",
        "answer_handoff_not_started",
        "handoff_scope_key",
        "push_scoped",
        "close_handoff",
        "record_turn_mark",
        "run_end_turn_step",
    }
    values = {
        "HandoffRound",
        "HandoffCall",
        "HandoffScopes",
        "HandoffOutcome",
        "HandoffOutcomeKind",
        "TurnMarks",
        "TurnScope",
        "HandoffClosed",
        "DeferredHandBack",
        "RunnerState",
        "ResponseFormat",
        "EndTurnStep",
        "TurnEnded",
    }
    assert set(handoff.__all__) == operations | values
