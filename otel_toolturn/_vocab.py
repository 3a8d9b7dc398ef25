"""The closed vocabularies of otel-toolturn, each defined once.

Every vocabulary is a ``Literal`` alias with its runtime tuple taken from ``typing.get_args``, so
the type checker and the code read the same list. A table keyed by a vocabulary has a test that
its keys are the whole vocabulary.

- ``Lane``: the wire formats the law speaks.
- ``RepairForm``: what the tool-turn law restored. The six forms of the law plus ``reused_id``,
  the derived id given to a later call that repeats an id in a lane whose API rejects repeats.
- ``REPAIR_DROPS``: whether a form leaves recorded content out of the request (a lossy
  projection) rather than moving, folding, renaming or adding it.
- ``IncompleteCause`` / ``StreamDropCause``: why a tool turn reached the model incomplete.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final, Literal, get_args

Lane = Literal["anthropic.messages", "openai.chat_completions", "openai.responses"]
LANES: Final[tuple[Lane, ...]] = get_args(Lane)

RepairForm = Literal[
    "trailing_text",
    "late_result",
    "missing_result",
    "duplicate_result",
    "duplicate_call",
    "orphan_result",
    "reused_id",
]
REPAIR_FORMS: Final[tuple[RepairForm, ...]] = get_args(RepairForm)

REPAIR_DROPS: Final[MappingProxyType[RepairForm, bool]] = MappingProxyType(
    {
        "trailing_text": False,
        "late_result": False,
        "missing_result": False,
        "duplicate_result": False,
        "duplicate_call": True,
        "orphan_result": True,
        "reused_id": False,
    }
)
"""Does the form leave recorded content out of the request? A request that did is lossy."""

IncompleteCause = Literal["truncated", "unnamed", "bad_frame", "missing_result_synthesized"]
INCOMPLETE_CAUSES: Final[tuple[IncompleteCause, ...]] = get_args(IncompleteCause)

StreamDropCause = Literal["truncated", "unnamed", "bad_frame"]
STREAM_DROP_CAUSES: Final[tuple[StreamDropCause, ...]] = get_args(StreamDropCause)


def is_lossy(form: RepairForm) -> bool:
    """Whether ``form`` drops recorded content (see ``REPAIR_DROPS``)."""
    return REPAIR_DROPS[form]
