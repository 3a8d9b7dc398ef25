"""Each lane's provider rules as a checker: ``validate(messages, lane=...)``.

A violation names the position, a short stable rule key and the provider's own error words, so a
test (or the simulator) can tell exactly what the provider would reject. The law's output always
validates. Responses: ``chained=True`` when the request continues server-held state, where an
output may answer a call the server holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._view import Violation
from otel_toolturn._vocab import Lane
from otel_toolturn.lanes import adapter_for
from otel_toolturn.lanes.anthropic_messages import ADAPTER as _ANTHROPIC
from otel_toolturn.lanes.openai_chat import ADAPTER as _CHAT
from otel_toolturn.lanes.openai_responses import ADAPTER as _RESPONSES

__all__ = ["Violation", "validate"]


def validate(messages: Sequence[object] | str, *, lane: Lane, chained: bool = False) -> list[Violation]:
    """The provider rules ``messages`` breaks in ``lane``, in order of position (empty: none)."""
    adapter_for(lane)
    if isinstance(messages, str):
        if lane == "openai.responses":
            return []
        raise ToolTurnInputError(f"{lane} expects a list of messages, got a string")
    if not isinstance(messages, Sequence):
        raise ToolTurnInputError(f"{lane} expects a list of messages, got {type(messages).__name__!r}")
    if lane == "anthropic.messages":
        return _ANTHROPIC.validate(messages)
    if lane == "openai.chat_completions":
        return _CHAT.validate(messages)
    return _RESPONSES.validate(messages, chained=chained)
