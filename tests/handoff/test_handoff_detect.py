"""Which calls of a response are handoffs, and when the response is refused (the instrumentation's decision)."""

from __future__ import annotations

import pytest

from otel_toolturn.handoff import HandoffCall, handoff_calls
from otel_toolturn.handoff._detect import is_handoff_tool, matching_pattern
from otel_toolturn.handoff._texts import too_many_handoffs_text

PATTERNS = ["explorer", "agent_*"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("explorer", True),
        ("agent_oracle", True),
        ("agent_", True),
        ("Agent_oracle", False),
        ("explorers", False),
        ("search", False),
        ("agent*", False),
    ],
)
def test_a_name_is_a_handoff_by_exact_name_or_case_sensitive_glob(name: str, expected: bool) -> None:
    """A tool name is a handoff when it equals a pattern or matches it as a case-sensitive glob."""
    assert is_handoff_tool(name, PATTERNS) is expected


def test_literal_pattern_with_glob_characters_matches_itself() -> None:
    """A configured name containing glob characters still matches that exact name."""
    assert is_handoff_tool("ask[expert]", ["ask[expert]"])


def test_no_patterns_no_handoffs() -> None:
    """With no handoff tools configured nothing is a handoff."""
    assert handoff_calls([("explorer", "c1")], []).handoffs == ()


def test_one_handoff_beside_ordinary_calls_runs() -> None:
    """One handoff among ordinary calls: found with its index among the response's calls; not refused."""
    found = handoff_calls([("search", "c1"), ("explorer", "c2"), ("read", "c3")], PATTERNS)
    assert found.handoffs == (HandoffCall(index=1, call_id="c2", name="explorer"),)
    assert not found.refused
    assert found.refusals() == ()


def test_several_handoffs_refuse_every_one_naming_all() -> None:
    """More than one handoff call: all are refused, each answered with the text naming every handoff call."""
    found = handoff_calls([("explorer", "c1"), ("search", "c2"), ("agent_oracle", "c3")], PATTERNS)
    assert found.refused
    assert found.names == ("explorer", "agent_oracle")
    assert found.refusals() == (
        (HandoffCall(index=0, call_id="c1", name="explorer"), too_many_handoffs_text("explorer", found.names)),
        (HandoffCall(index=2, call_id="c3", name="agent_oracle"), too_many_handoffs_text("agent_oracle", found.names)),
    )
    assert "explorer and agent_oracle were called in the same response" in found.refusals()[0][1]


def test_one_tool_called_twice_is_refused_with_the_count() -> None:
    """The same handoff called twice is refused; the text says how many times."""
    found = handoff_calls([("explorer", "c1"), ("explorer", "c2")], PATTERNS)
    assert found.refused
    assert "It was called 2 times in this response" in found.refusals()[1][1]


def test_the_pattern_matched_is_the_first_configured_that_matches() -> None:
    """``matching_pattern`` names the first entry, in configured order, that the name equals or matches."""
    assert matching_pattern("agent[1]", ["agent[1]"]) == "agent[1]"
    assert matching_pattern("agent_x", ["agent_?", "agent_*"]) == "agent_?"
    assert matching_pattern("search", PATTERNS) is None
