"""What a stream observer reports when its response ends: one frozen value per response.

The observers (one per lane) are pure reducers: ``feed`` takes one event at a time (the SDK's own
event object or the raw SSE JSON as a dict) and never alters it; ``finish`` returns the report.
The instrumentation reads only this report; it never decides anything about a stream itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol, get_args

from otel_toolturn._vocab import StreamDropCause

EndStatement = Literal["finish", "message_stop", "error", "content"]
"""The kind of a frame refused after the first terminal statement (``content``: any content frame)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamedCall:
    """One tool call the response carried whole: an id, a name and arguments that are a JSON object."""

    call_id: str
    name: str
    arguments: Mapping[str, object]
    index: int
    choice: int = 0
    """The choice the call belongs to (Chat Completions with ``n > 1``; 0 elsewhere)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamDrop:
    """One cause a response dropped content for: how many calls (or frames), and the call ids known."""

    cause: StreamDropCause
    count: int
    call_ids: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnNote:
    """One drop note of a turn: what was dropped, how many, and the sentence the model reads."""

    cause: StreamDropCause
    count: int
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelOutputInvalid:
    """The structured account of a turn that failed for its dropped tool calls.

    ``cause`` is ``truncated`` when any call's arguments were cut, else ``unnamed``;
    ``output_limit`` (only with ``truncated``) says the output cap cut the response.
    """

    cause: Literal["truncated", "unnamed"]
    output_limit: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamEndIgnored:
    """What arrived after the first terminal statement: the first refused frame's kind and word, and how many came."""

    statement: EndStatement
    word: str
    count: int


@dataclass(frozen=True, kw_only=True, slots=True)
class RepetitionEvent:
    """A degenerate loop found in the streamed text: the rule that matched, the segment, its depth."""

    rule: str
    segment: str
    depth: int


@dataclass(frozen=True, kw_only=True, slots=True)
class RepetitionReport:
    """The repetition poll's outcome for one response: the cut (if a poll tripped) and the spared hits."""

    cut: RepetitionEvent | None = None
    spared: tuple[RepetitionEvent, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """Token usage as the provider reported it (``None`` where it said nothing).

    ``input_tokens`` counts every input token, those served from or written to the provider's prompt
    cache among them (Anthropic states those apart from its ``input_tokens``; they are added).
    ``cache_read_input_tokens``: the input tokens served from the prompt cache;
    ``cache_creation_input_tokens``: those written to it (Anthropic states it).
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None

    def updated(self, later: Usage) -> Usage:
        """These counts, each one ``later`` states in its place (a stream's later usage record)."""
        return Usage(
            input_tokens=_later(self.input_tokens, later.input_tokens),
            output_tokens=_later(self.output_tokens, later.output_tokens),
            cache_read_input_tokens=_later(self.cache_read_input_tokens, later.cache_read_input_tokens),
            cache_creation_input_tokens=_later(self.cache_creation_input_tokens, later.cache_creation_input_tokens),
        )


def _later(earlier: int | None, later: int | None) -> int | None:
    return earlier if later is None else later


InputTransformationType = Literal["thinking_dropped", "other"]
"""The closed set an input transformation's ``type`` maps onto (``other``: any value outside it)."""
INPUT_TRANSFORMATION_TYPES: Final[tuple[InputTransformationType, ...]] = get_args(InputTransformationType)
InputTransformationReason = Literal["prefix_binding_mismatch", "model_binding_mismatch", "other"]
"""The closed set an input transformation's ``reason`` maps onto (``other``: any value outside it)."""
INPUT_TRANSFORMATION_REASONS: Final[tuple[InputTransformationReason, ...]] = get_args(InputTransformationReason)


@dataclass(frozen=True, kw_only=True, slots=True)
class InputTransformation:
    """One change the provider made to the request before the model read it (Anthropic's ``input_transformations``).

    ``type``, ``reason`` and ``path`` are the provider's strings as sent (``""`` where one is
    absent or not a string), e.g. ``thinking_dropped`` / ``prefix_binding_mismatch`` /
    ``messages.2.content.0``. ``type_label`` and ``reason_label`` are the same values mapped onto
    closed sets, for metric labels: a value outside the set is ``other``. Equal entries are the
    same transformation (a stream that lists one in ``message_start`` and ``message_delta``
    reports it once).
    """

    type: str
    reason: str
    path: str

    @property
    def type_label(self) -> InputTransformationType:
        """``type`` when it is a known value, else ``other``."""
        return "thinking_dropped" if self.type == "thinking_dropped" else "other"

    @property
    def reason_label(self) -> InputTransformationReason:
        """``reason`` when it is a known value, else ``other``."""
        reason = self.reason
        if reason == "prefix_binding_mismatch":
            return "prefix_binding_mismatch"
        if reason == "model_binding_mismatch":
            return "model_binding_mismatch"
        return "other"


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamReport:
    """Everything one response told us, streamed or not."""

    calls: tuple[StreamedCall, ...] = ()
    drops: tuple[StreamDrop, ...] = ()
    ends_ignored: StreamEndIgnored | None = None
    torn: bool = False
    finish_reasons: tuple[str, ...] = ()
    response_id: str | None = None
    requested_model: str | None = None
    response_model: str | None = None
    substituted_model: str | None = None
    """The provider's model name when it differs from the requested one (``None``: no substitution)."""
    echo_dropped: int = 0
    """Whether a model name outside the shape of a provider word arrived and was dropped (0 or 1)."""
    truncation_clause: str = ""
    repetition: RepetitionReport = field(default_factory=RepetitionReport)
    usage: Usage = field(default_factory=Usage)
    events: int = 0
    notes: tuple[TurnNote, ...] = ()
    """The sentences the model would read for this turn's drops (the same list as ``drops``)."""
    model_output_invalid: ModelOutputInvalid | None = None
    frames_unread: int = 0
    """Frames that were JSON but not of a shape the observer can read (ignored, never fatal)."""
    input_transformations: tuple[InputTransformation, ...] = ()
    """What the provider changed in the request before reading it, each once, in order of first report."""
    unfinished: StreamDrop | None = None
    """The ``truncated`` drop's calls that no frame closed (each also counted there): cut where the stream stopped."""
    closed_early: bool = False
    """The caller stopped reading before the final frame (``closed_by_caller``): not torn, open calls not dropped."""


class StreamObserver(Protocol):
    """A pure reducer over one response's events."""

    def feed(self, event: object) -> None:
        """Read one event (an SDK event object or a raw JSON dict); never alter it, never raise."""

    def finish(self) -> StreamReport:
        """Return the report; calling it again returns an equal report."""
