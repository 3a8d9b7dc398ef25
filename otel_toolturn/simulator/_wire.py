"""The contract every simulated wire lane fulfils: three pure functions and the lane's names.

- ``reply_body(turn, request=, new_id=, cut=)``: the complete plain-JSON reply to ``request``
  (``cut``: the first call's arguments are cut, as a token cap would leave them);
- ``reply_frames(reply, request=, misbehaviours=)``: that reply as the lane's SSE frames, in the
  provider's event order, with the misbehaviours applied;
- ``error_body(message)``: the provider's HTTP 400 body for ``message``.

``new_id(prefix)`` hands out the simulator's next id with that prefix (deterministic per simulator).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from otel_toolturn._vocab import Lane
from otel_toolturn.simulator._frames import Frame
from otel_toolturn.simulator._script import Misbehaviour, ScriptedTurn

NewId = Callable[[str], str]
Json = dict[str, object]


class ReplyBody(Protocol):
    """Builds the plain-JSON reply of one scripted turn."""

    def __call__(self, turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool) -> Json:
        """Build the reply body."""


class ReplyFrames(Protocol):
    """Turns a complete reply into the lane's SSE frames, misbehaviours applied."""

    def __call__(
        self,
        reply: Mapping[str, object],
        *,
        request: Mapping[str, object],
        misbehaviours: Sequence[Misbehaviour],
    ) -> list[Frame]:
        """Render the frames."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Wire:
    """One lane as the simulator speaks it: the URL path, the request field holding the transcript."""

    lane: Lane
    path: str
    transcript_field: str
    reply_body: ReplyBody
    reply_frames: ReplyFrames
    error_body: Callable[[str], Mapping[str, object]]
