"""Threads a handoff meets, in each lane, built from the neutral notation of ``tests.transcripts``."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from otel_toolturn import Lane
from otel_toolturn.handoff import HandoffCall
from tests.transcripts import A, Event, R, U, build, c, t

EXPLORER = HandoffCall(index=1, call_id="call-1", name="explorer")
"""The handoff call of ``round_with_sibling``: second of the message's calls."""
ALONE = HandoffCall(index=0, call_id="call-1", name="explorer")
"""The handoff call when it is the message's only call."""


def round_with_sibling(lane: Lane, *, feedback: bool = False) -> list[object]:
    """``user, assistant("Exploring." [updateStatus, explorer]), tool(updateStatus)`` (+ guard feedback)."""
    events: list[Event] = [
        U("hello"),
        A(t("Exploring."), c("call-2", "updateStatus"), c("call-1", "explorer")),
        R("call-2"),
    ]
    if feedback:
        events.append(U("guard feedback"))
    return build(lane, events)


def persona(lane: Lane, text: str) -> dict[str, object]:
    """A dispatch's instructions: a system message, or a user-role one where the lane has no system role."""
    return {"role": "user" if lane == "anthropic.messages" else "system", "content": text}


def contents(messages: Sequence[object]) -> list[object]:
    """Each message's ``content`` (``None`` for items without one)."""
    return [m.get("content") if isinstance(m, dict) else None for m in messages]


def snapshot(messages: Sequence[object]) -> list[object]:
    """A deep copy to compare the caller's list with after an operation."""
    return copy.deepcopy(list(messages))
