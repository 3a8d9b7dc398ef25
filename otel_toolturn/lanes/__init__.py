"""One small adapter per wire lane: provider spelling lives here and nowhere else.

Each adapter reads its wire list into the neutral view, writes the law's outcome back, and checks
the lane's provider rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

from otel_toolturn._errors import ToolTurnInputError, UnknownLaneError
from otel_toolturn._view import LaneAdapter
from otel_toolturn._vocab import LANES, Lane
from otel_toolturn.lanes import anthropic_messages, bedrock_converse, gemini, openai_chat, openai_responses

ADAPTERS: Final[dict[Lane, LaneAdapter]] = {
    "anthropic.messages": anthropic_messages.ADAPTER,
    "openai.chat_completions": openai_chat.ADAPTER,
    "openai.responses": openai_responses.ADAPTER,
    "gemini.generate_content": gemini.ADAPTER,
    "bedrock.converse": bedrock_converse.ADAPTER,
}


def adapter_for(lane: object) -> LaneAdapter:
    """The adapter of ``lane``; an unknown lane is a typed error naming the known ones."""
    adapter = ADAPTERS.get(cast("Lane", lane)) if isinstance(lane, str) else None
    if adapter is None:
        raise UnknownLaneError(f"unknown lane {lane!r}; expected one of {', '.join(LANES)}")
    return adapter


STRING_INPUT_LANES: Final = frozenset({"openai.responses", "gemini.generate_content"})
"""The lanes whose input may be a string: one user turn, with no tool turn to read."""


def listed(messages: object, *, lane: Lane) -> Sequence[object] | None:
    """``messages`` as the list the law and ``validate`` read in ``lane``; ``None`` for a string input there.

    A string in another lane, or anything that is not a sequence, is a typed error naming what arrived.
    """
    if isinstance(messages, str):
        if lane in STRING_INPUT_LANES:
            return None
        raise ToolTurnInputError(f"{lane} expects a list of messages, got a string")
    if not isinstance(messages, Sequence):
        raise ToolTurnInputError(
            f"{lane} expects a list of messages, got {type(messages).__name__!r}; "
            "materialise an iterator with list() first"
        )
    return messages
