"""What cut a turn's calls: the cap clause and the structured account, table-driven over their contracts."""

from __future__ import annotations

import pytest

from otel_toolturn.streams._truncation_cause import (
    CAP_CLAUSE,
    TRANSPORT_CLAUSE,
    OutputCapFacts,
    model_output_invalid_of,
    truncation_cause_clause,
)

CLAUSE_CASES = [
    # (cap facts, terminal frame seen, clause)
    (OutputCapFacts(cap_stop=True), True, CAP_CLAUSE),  # the lane's cap stop
    (OutputCapFacts(output_tokens=100, cap_tokens=100), True, CAP_CLAUSE),  # counted output at the cap
    (OutputCapFacts(output_tokens=120, cap_tokens=100), True, CAP_CLAUSE),  # over the cap
    (OutputCapFacts(output_tokens=99, cap_tokens=100), True, ""),  # below: another stop adds nothing
    (OutputCapFacts(output_tokens=100), True, ""),  # cap unknown: nothing says the cap cut it
    (OutputCapFacts(), True, ""),  # any other stop adds nothing
    (OutputCapFacts(), False, TRANSPORT_CLAUSE),  # no terminal frame: the transport
    (OutputCapFacts(output_tokens=5, cap_tokens=100), False, TRANSPORT_CLAUSE),
    (OutputCapFacts(cap_stop=True), False, CAP_CLAUSE),  # the cap named when the stream says so
    (OutputCapFacts(output_tokens=100, cap_tokens=100), False, CAP_CLAUSE),
]


@pytest.mark.parametrize(("cap", "terminal", "clause"), CLAUSE_CASES)
def test_truncation_cause_clause_table(cap: OutputCapFacts, terminal: bool, clause: str) -> None:
    """The cap is named only when the stream says it cut; no terminal frame names the transport."""
    assert truncation_cause_clause(cap, terminal_frame_seen=terminal) == clause


@pytest.mark.parametrize(
    ("truncated", "unnamed", "cap", "expected"),
    [
        (0, 0, OutputCapFacts(cap_stop=True), None),
        (1, 0, OutputCapFacts(), ("truncated", False)),
        (1, 3, OutputCapFacts(cap_stop=True), ("truncated", True)),
        (2, 0, OutputCapFacts(output_tokens=10, cap_tokens=10), ("truncated", True)),
        (0, 2, OutputCapFacts(cap_stop=True), ("unnamed", False)),  # the cap rides only with truncated
    ],
)
def test_model_output_invalid_of_table(
    truncated: int, unnamed: int, cap: OutputCapFacts, expected: tuple[str, bool] | None
) -> None:
    """Truncated wins over unnamed; the output limit rides only with truncated and reads the cap facts."""
    account = model_output_invalid_of(truncated=truncated, unnamed=unnamed, cap=cap)
    assert (None if account is None else (account.cause, account.output_limit)) == expected
