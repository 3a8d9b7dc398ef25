"""otel-toolturn: keeps LLM agents' tool turns valid at the provider boundary, and shows every repair."""

from __future__ import annotations

from otel_toolturn._errors import ToolTurnError, ToolTurnInputError, UnknownLaneError
from otel_toolturn._law import (
    SECOND_RESULT_SEPARATOR,
    ToolTurnRepair,
    ToolTurnView,
    ensure_tool_turn_invariants,
)
from otel_toolturn._vocab import (
    LANES,
    REPAIR_DROPS,
    REPAIR_FORMS,
    Lane,
    RepairForm,
)

__version__ = "0.1.0"

__all__ = [
    "LANES",
    "REPAIR_DROPS",
    "REPAIR_FORMS",
    "SECOND_RESULT_SEPARATOR",
    "Lane",
    "RepairForm",
    "ToolTurnError",
    "ToolTurnInputError",
    "ToolTurnRepair",
    "ToolTurnView",
    "UnknownLaneError",
    "__version__",
    "ensure_tool_turn_invariants",
]
