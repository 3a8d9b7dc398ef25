"""THE tool-turn law (placeholder body: being written; the signature and the value types are final)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from otel_toolturn._vocab import REPAIR_DROPS, Lane, RepairForm

SECOND_RESULT_SEPARATOR = "[another result was recorded for this same call:]"


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolTurnRepair:
    """One restoration the law made."""

    form: RepairForm
    tool_call_ids: tuple[str, ...]
    before_run: bool = False

    @property
    def lossy(self) -> bool:
        """Whether this repair left recorded content out of the request."""
        return REPAIR_DROPS[self.form]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolTurnView:
    """The request view and what was restored to make it."""

    messages: Sequence[object] | str
    repairs: tuple[ToolTurnRepair, ...]

    @property
    def lossy(self) -> bool:
        """Whether any repair left recorded content out of the request."""
        return any(r.lossy for r in self.repairs)


def ensure_tool_turn_invariants(
    messages: Sequence[object] | str,
    *,
    lane: Lane,
    prior_messages: Iterable[object] | None = None,
) -> ToolTurnView:
    """Restore the tool-turn law on a provider-bound list (placeholder: returns the input)."""
    del lane, prior_messages
    return ToolTurnView(messages=messages, repairs=())
