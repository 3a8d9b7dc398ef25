"""The contract every simulated wire lane fulfils: four pure functions and the lane's names.

- ``admit(request)``: the lane's own checks of a request that passed the tool-turn rules (an
  ``Admission``: what the model sees, a refusal, fields the reply carries about the input);
- ``reply_body(turn, request=, new_id=, cut=, prompt=)``: the complete plain-JSON reply to
  ``request`` (``cut``: the first call's arguments are cut, as a token cap would leave them;
  ``prompt``: the prompt's token estimate and the part served from cache, see ``_cache``);
- ``reply_frames(reply, request=, misbehaviours=)``: that reply as the lane's SSE frames, in the
  provider's event order, with the misbehaviours applied;
- ``error_body(message)``: the provider's HTTP 400 body for ``message``.

``new_id(prefix)`` hands out the simulator's next id with that prefix (deterministic per simulator).
``head_fields`` name the request fields that open the prompt ahead of the transcript (``_cache``).
``route(path)``, for a lane whose URL carries request fields (Gemini, Bedrock: the model and the
streaming method), reads them from a path (``None``: not this lane's path); a lane without one is
served at its ``path`` alone. ``dialect``: the variant of the lane's rules its requests are judged in
(Mistral's Chat Completions). ``error_headers`` ride on the lane's 4xx answers (Bedrock names the
error's type in one); ``stream_content_type`` and ``encode_frame`` say how a streamed reply goes on the
wire (SSE by default; Bedrock: the AWS event stream framing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from otel_toolturn._vocab import Dialect, Lane
from otel_toolturn.simulator._cache import PromptUsage
from otel_toolturn.simulator._frames import Frame
from otel_toolturn.simulator._script import Misbehaviour, ScriptedTurn

NewId = Callable[[str], str]
SSE_CONTENT_TYPE: Final = "text/event-stream; charset=utf-8"

Json = dict[str, object]


@dataclass(frozen=True, kw_only=True, slots=True)
class Admission:
    """A lane's verdict on a request that passed the tool-turn rules.

    ``request`` is what the model sees (the request itself unless the lane left something out);
    ``refusal`` the HTTP 400 message (``None``: served); ``reply_fields`` top-level fields the
    reply carries about its input; ``dropped`` how many input blocks were left out.
    """

    request: Mapping[str, object]
    refusal: str | None = None
    reply_fields: Mapping[str, object] = field(default_factory=dict)
    dropped: int = 0


def admit_all(request: Mapping[str, object]) -> Admission:
    """Admit ``request`` as it is (lanes without checks of their own)."""
    return Admission(request=request)


class ReplyBody(Protocol):
    """Builds the plain-JSON reply of one scripted turn."""

    def __call__(
        self, turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool, prompt: PromptUsage
    ) -> Json:
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
    """One lane as the simulator speaks it: the URL path (or ``route``), the request field holding the transcript."""

    lane: Lane
    path: str
    transcript_field: str
    head_fields: tuple[str, ...]
    admit: Callable[[Mapping[str, object]], Admission]
    reply_body: ReplyBody
    reply_frames: ReplyFrames
    error_body: Callable[[str], Mapping[str, object]]
    route: Callable[[str], Mapping[str, object] | None] | None = None
    dialect: Dialect | None = None
    error_headers: Mapping[str, str] = field(default_factory=dict)
    stream_content_type: str = SSE_CONTENT_TYPE
    encode_frame: Callable[[Frame], bytes] = Frame.encode
