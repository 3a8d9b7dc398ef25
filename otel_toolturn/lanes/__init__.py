"""One small adapter per wire lane: provider spelling lives here and nowhere else.

Each adapter reads its wire list into the neutral view, writes the law's outcome back, and checks
the lane's provider rules.
"""

from __future__ import annotations

from typing import Final, cast

from otel_toolturn._errors import UnknownLaneError
from otel_toolturn._view import LaneAdapter
from otel_toolturn._vocab import LANES, Lane
from otel_toolturn.lanes import anthropic_messages, gemini, openai_chat, openai_responses

ADAPTERS: Final[dict[Lane, LaneAdapter]] = {
    "anthropic.messages": anthropic_messages.ADAPTER,
    "openai.chat_completions": openai_chat.ADAPTER,
    "openai.responses": openai_responses.ADAPTER,
    "gemini.generate_content": gemini.ADAPTER,
}


def adapter_for(lane: object) -> LaneAdapter:
    """The adapter of ``lane``; an unknown lane is a typed error naming the known ones."""
    adapter = ADAPTERS.get(cast("Lane", lane)) if isinstance(lane, str) else None
    if adapter is None:
        raise UnknownLaneError(f"unknown lane {lane!r}; expected one of {', '.join(LANES)}")
    return adapter
