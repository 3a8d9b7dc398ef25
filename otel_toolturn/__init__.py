"""otel-toolturn: keeps LLM agents' tool turns valid at the provider boundary, and shows every repair."""

from __future__ import annotations

from otel_toolturn._errors import HandoffError, ToolTurnError, ToolTurnInputError, UnknownLaneError
from otel_toolturn._law import (
    SECOND_RESULT_SEPARATOR,
    ToolTurnRepair,
    ToolTurnView,
    ensure_tool_turn_invariants,
)
from otel_toolturn._validate import Violation, validate
from otel_toolturn._view import INTERRUPTED_RESULT_TEXT, KNOWN_INTERRUPTED_TEXTS
from otel_toolturn._vocab import (
    INCOMPLETE_CAUSES,
    LANES,
    REPAIR_DROPS,
    REPAIR_FORMS,
    STREAM_DROP_CAUSES,
    IncompleteCause,
    Lane,
    RepairForm,
    StreamDropCause,
)
from otel_toolturn.instrument import ToolTurnInstrumentor, init, shutdown, withhold_tools

__version__ = "0.1.0"

__all__ = [
    "INCOMPLETE_CAUSES",
    "INTERRUPTED_RESULT_TEXT",
    "KNOWN_INTERRUPTED_TEXTS",
    "LANES",
    "REPAIR_DROPS",
    "REPAIR_FORMS",
    "SECOND_RESULT_SEPARATOR",
    "STREAM_DROP_CAUSES",
    "HandoffError",
    "IncompleteCause",
    "Lane",
    "RepairForm",
    "StreamDropCause",
    "ToolTurnError",
    "ToolTurnInputError",
    "ToolTurnInstrumentor",
    "ToolTurnRepair",
    "ToolTurnView",
    "UnknownLaneError",
    "Violation",
    "__version__",
    "ensure_tool_turn_invariants",
    "init",
    "shutdown",
    "validate",
    "withhold_tools",
]
