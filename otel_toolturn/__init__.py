"""otel-toolturn: keeps LLM agents' tool turns valid at the provider boundary, and shows every repair.

The law, ``validate`` and the vocabularies import the standard library only. The instrumentation
(``init``, ``shutdown``, ``withhold_tools``, ``ToolTurnInstrumentor``), which imports OpenTelemetry
and wrapt, loads on first use.
"""

from __future__ import annotations

import importlib
import typing

from otel_toolturn._errors import (
    HandoffError,
    ToolTurnError,
    ToolTurnInputError,
    UnknownLaneError,
    UnsupportedLaneError,
)
from otel_toolturn._law import (
    SECOND_RESULT_SEPARATOR,
    ToolTurnRepair,
    ToolTurnView,
    ensure_tool_turn_invariants,
)
from otel_toolturn._validate import Violation, validate
from otel_toolturn._version import __version__
from otel_toolturn._view import INTERRUPTED_RESULT_TEXT, KNOWN_INTERRUPTED_TEXTS
from otel_toolturn._vocab import (
    CALL_KINDS,
    DIALECTS,
    INCOMPLETE_CAUSES,
    LANES,
    REPAIR_DROPS,
    REPAIR_FORMS,
    STREAM_DROP_CAUSES,
    CallKind,
    Dialect,
    IncompleteCause,
    Lane,
    RepairForm,
    StreamDropCause,
)

if typing.TYPE_CHECKING:
    from otel_toolturn.instrument import ToolTurnInstrumentor, init, shutdown, withhold_tools

_INSTRUMENTATION = frozenset({"ToolTurnInstrumentor", "init", "shutdown", "withhold_tools"})
"""The public names ``otel_toolturn.instrument`` provides, loaded on first use."""


def __getattr__(name: str) -> object:
    if name in _INSTRUMENTATION:
        value = getattr(importlib.import_module("otel_toolturn.instrument"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CALL_KINDS",
    "DIALECTS",
    "INCOMPLETE_CAUSES",
    "INTERRUPTED_RESULT_TEXT",
    "KNOWN_INTERRUPTED_TEXTS",
    "LANES",
    "REPAIR_DROPS",
    "REPAIR_FORMS",
    "SECOND_RESULT_SEPARATOR",
    "STREAM_DROP_CAUSES",
    "CallKind",
    "Dialect",
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
    "UnsupportedLaneError",
    "Violation",
    "__version__",
    "ensure_tool_turn_invariants",
    "init",
    "shutdown",
    "validate",
    "withhold_tools",
]
