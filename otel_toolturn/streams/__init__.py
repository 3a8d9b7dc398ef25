"""Pure readers of provider responses: one stream observer per lane, one check for a whole response.

``observer_for(lane, requested_model=...)`` gives a fresh ``StreamObserver`` for one streamed
response: ``feed`` it every event the SDK yields (or every raw SSE JSON frame: ``sse_data`` splits
a recorded body into them), then ``finish`` it for the ``StreamReport``. ``check_response`` gives
the same report for a response that was not streamed (both take a ``reply_format`` for an SDK
whose responses are not its lane's: ``REPLY_FORMATS``); ``closed_by_caller`` the report of a stream
the caller stopped reading before its final frame (not torn). ``parse_streamed_tool_args`` is the
fail-closed argument rule both apply. Nothing here imports an SDK or OpenTelemetry; nothing here
alters what it reads.
"""

from __future__ import annotations

from typing import Final, NoReturn

from otel_toolturn._errors import UnknownLaneError
from otel_toolturn._vocab import LANES, REPLY_FORMATS, Lane, ReplyFormat
from otel_toolturn.streams import _response
from otel_toolturn.streams._caller_close import closed_by_caller
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
from otel_toolturn.streams._tool_calls import parse_streamed_tool_args
from otel_toolturn.streams.anthropic_messages import AnthropicMessagesObserver
from otel_toolturn.streams.bedrock_converse import BedrockConverseObserver
from otel_toolturn.streams.cohere_chat import CohereChatObserver
from otel_toolturn.streams.gemini import GeminiObserver
from otel_toolturn.streams.ollama_chat import OllamaChatObserver
from otel_toolturn.streams.openai_chat import OpenAIChatObserver
from otel_toolturn.streams.openai_responses import OpenAIResponsesObserver

OBSERVED_LANES: Final[tuple[Lane, ...]] = LANES
"""The lanes with a stream observer and a response check: every lane."""


def _unknown_lane(lane: NoReturn) -> NoReturn:
    raise UnknownLaneError(f"unknown lane {lane!r}; expected one of {LANES!r}")


def observer_for(
    lane: Lane,
    *,
    requested_model: str | None,
    max_output_tokens: int | None = None,
    reply_format: ReplyFormat | None = None,
) -> StreamObserver:
    """Return a fresh observer for one streamed response of ``lane``.

    ``requested_model`` is the model the request named (``None``: no substitution is judged);
    ``max_output_tokens`` the output cap the request carried, if any (it lets the truncation
    clause name the cap when the counted output reached it); ``reply_format`` the format the
    response comes in when it is not the lane's own (``None``: the lane's). Raises
    ``UnknownLaneError`` for a lane outside ``LANES``.
    """
    if reply_format == "cohere.chat":
        return CohereChatObserver(requested_model=requested_model, max_output_tokens=max_output_tokens)
    if reply_format == "ollama.chat":
        return OllamaChatObserver(requested_model=requested_model, max_output_tokens=max_output_tokens)
    if lane == "anthropic.messages":
        return AnthropicMessagesObserver(requested_model=requested_model, max_output_tokens=max_output_tokens)
    if lane == "openai.chat_completions":
        return OpenAIChatObserver(requested_model=requested_model, max_output_tokens=max_output_tokens)
    if lane == "openai.responses":
        return OpenAIResponsesObserver(requested_model=requested_model, max_output_tokens=max_output_tokens)
    if lane == "gemini.generate_content":
        return GeminiObserver(requested_model=requested_model, max_output_tokens=max_output_tokens)
    if lane == "bedrock.converse":
        return BedrockConverseObserver(requested_model=requested_model, max_output_tokens=max_output_tokens)
    _unknown_lane(lane)


def check_response(
    lane: Lane,
    response: object,
    *,
    requested_model: str | None,
    max_output_tokens: int | None = None,
    reply_format: ReplyFormat | None = None,
) -> StreamReport:
    """Return the report of one response that was not streamed (the SDK's object or the raw JSON dict).

    Judges arguments that are not a JSON object, calls without a name, model substitution,
    finish reasons, usage and the response id; never alters ``response``. ``reply_format`` as
    for ``observer_for``. Raises ``UnknownLaneError`` for a lane outside ``LANES``.
    """
    if reply_format == "cohere.chat":
        return _response.check_cohere_chat_response(
            response, requested_model=requested_model, max_output_tokens=max_output_tokens
        )
    if reply_format == "ollama.chat":
        return _response.check_ollama_chat_response(
            response, requested_model=requested_model, max_output_tokens=max_output_tokens
        )
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
    if lane == "gemini.generate_content":
        return _response.check_gemini_response(
            response, requested_model=requested_model, max_output_tokens=max_output_tokens
        )
    if lane == "bedrock.converse":
        return _response.check_converse_response(
            response, requested_model=requested_model, max_output_tokens=max_output_tokens
        )
    _unknown_lane(lane)


__all__ = [
    "INPUT_TRANSFORMATION_REASONS",
    "INPUT_TRANSFORMATION_TYPES",
    "OBSERVED_LANES",
    "REPLY_FORMATS",
    "AnthropicMessagesObserver",
    "BedrockConverseObserver",
    "CohereChatObserver",
    "EndStatement",
    "GeminiObserver",
    "InputTransformation",
    "InputTransformationReason",
    "InputTransformationType",
    "ModelOutputInvalid",
    "OllamaChatObserver",
    "OpenAIChatObserver",
    "OpenAIResponsesObserver",
    "RepetitionEvent",
    "RepetitionReport",
    "ReplyFormat",
    "StreamDrop",
    "StreamEndIgnored",
    "StreamObserver",
    "StreamReport",
    "StreamedCall",
    "TurnNote",
    "Usage",
    "check_response",
    "closed_by_caller",
    "observer_for",
    "parse_streamed_tool_args",
    "sse_data",
]
