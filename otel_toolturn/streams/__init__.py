"""Pure reducers over provider responses: the seed-001 helpers, one observer per lane, the report.

``observer_for(lane, requested_model=...)`` gives a fresh ``StreamObserver`` for one streamed
response: ``feed`` it every event the SDK yields (or every raw SSE JSON frame), then ``finish``
it for the ``StreamReport``. ``check_response`` gives the same report for a response that was not
streamed. Nothing here imports an SDK or OpenTelemetry; nothing here alters what it reads.
"""

from __future__ import annotations

from typing import NoReturn

from otel_toolturn._errors import UnknownLaneError
from otel_toolturn._vocab import LANES, Lane
from otel_toolturn.streams import _response
from otel_toolturn.streams._args import name_missing_cause, parse_streamed_tool_args
from otel_toolturn.streams._cap import TurnCapFacts, model_output_invalid_of, truncation_cause_clause
from otel_toolturn.streams._echo import (
    ModelSeat,
    echo_folded_word,
    is_provider_echo_shape,
    names_requested_model,
    note_response_model,
)
from otel_toolturn.streams._ledger import STREAM_TORN_WARNING, StreamEndLedger
from otel_toolturn.streams._notes import place_turn_notes, stamp_stream_drops, stream_drops_of, turn_notes_of
from otel_toolturn.streams._repetition import RepetitionPoll
from otel_toolturn.streams._report import (
    INPUT_TRANSFORMATION_REASONS,
    INPUT_TRANSFORMATION_TYPES,
    EndStatement,
    InputTransformation,
    InputTransformationReason,
    InputTransformationType,
    ModelOutputInvalid,
    RepetitionEvent,
    RepetitionReport,
    StreamDrop,
    StreamedCall,
    StreamEndIgnored,
    StreamObserver,
    StreamReport,
    TurnNote,
    Usage,
)
from otel_toolturn.streams._sse import sse_data
from otel_toolturn.streams.anthropic_messages import AnthropicMessagesObserver, input_transformations_of
from otel_toolturn.streams.openai_chat import OpenAIChatObserver
from otel_toolturn.streams.openai_responses import OpenAIResponsesObserver


def _unknown_lane(lane: NoReturn) -> NoReturn:
    raise UnknownLaneError(f"unknown lane {lane!r}; expected one of {LANES!r}")


def observer_for(lane: Lane, *, requested_model: str | None, max_output_tokens: int | None = None) -> StreamObserver:
    """Return a fresh observer for one streamed response of ``lane``.

    ``requested_model`` is the model the request named (``None``: no substitution is judged);
    ``max_output_tokens`` the output cap the request carried, if any (it lets the truncation
    clause name the cap when the counted output reached it). Raises ``UnknownLaneError`` for a
    lane outside ``LANES``.
    """
    if lane == "anthropic.messages":
        return AnthropicMessagesObserver(requested_model=requested_model, max_output_tokens=max_output_tokens)
    if lane == "openai.chat_completions":
        return OpenAIChatObserver(requested_model=requested_model, max_output_tokens=max_output_tokens)
    if lane == "openai.responses":
        return OpenAIResponsesObserver(requested_model=requested_model, max_output_tokens=max_output_tokens)
    _unknown_lane(lane)


def check_response(
    lane: Lane, response: object, *, requested_model: str | None, max_output_tokens: int | None = None
) -> StreamReport:
    """Return the report of one response that was not streamed (the SDK's object or the raw JSON dict).

    Judges arguments that are not a JSON object, calls without a name, model substitution,
    finish reasons, usage and the response id; never alters ``response``. Raises
    ``UnknownLaneError`` for a lane outside ``LANES``.
    """
    if lane == "anthropic.messages":
        return _response.check_anthropic_message(
            response, requested_model=requested_model, max_output_tokens=max_output_tokens
        )
    if lane == "openai.chat_completions":
        return _response.check_chat_completion(
            response, requested_model=requested_model, max_output_tokens=max_output_tokens
        )
    if lane == "openai.responses":
        return _response.check_responses_response(
            response, requested_model=requested_model, max_output_tokens=max_output_tokens
        )
    _unknown_lane(lane)


__all__ = [
    "INPUT_TRANSFORMATION_REASONS",
    "INPUT_TRANSFORMATION_TYPES",
    "STREAM_TORN_WARNING",
    "AnthropicMessagesObserver",
    "EndStatement",
    "InputTransformation",
    "InputTransformationReason",
    "InputTransformationType",
    "ModelOutputInvalid",
    "ModelSeat",
    "OpenAIChatObserver",
    "OpenAIResponsesObserver",
    "RepetitionEvent",
    "RepetitionPoll",
    "RepetitionReport",
    "StreamDrop",
    "StreamEndIgnored",
    "StreamEndLedger",
    "StreamObserver",
    "StreamReport",
    "StreamedCall",
    "TurnCapFacts",
    "TurnNote",
    "Usage",
    "check_response",
    "echo_folded_word",
    "input_transformations_of",
    "is_provider_echo_shape",
    "model_output_invalid_of",
    "name_missing_cause",
    "names_requested_model",
    "note_response_model",
    "observer_for",
    "parse_streamed_tool_args",
    "place_turn_notes",
    "sse_data",
    "stamp_stream_drops",
    "stream_drops_of",
    "truncation_cause_clause",
    "turn_notes_of",
]
