"""Each lane's provider rules as a checker: ``validate(messages, lane=...)``.

A violation names the position, a short stable rule key and the provider's own error words, so a
test (or the simulator) can tell exactly what the provider would reject. The law's output always
validates. Responses: ``chained=True`` when the request continues server-held state, where an
output may answer a call the server holds.

Gemini (``gemini.generate_content``) rule keys: ``function_response_count`` (a call turn not followed by
one content holding exactly one response per call), ``response_turn_position`` (a response content
not right after a call turn), ``call_turn_position`` (a call turn with no user or response content
before it), ``text_after_responses`` (a part after the responses of a user content),
``empty_parts`` (a content with no parts), ``missing_thought_signature`` (the first call of a call
turn without a thought signature: checked on every turn, since each was once the current one).

Mistral (``dialect="mistral"`` of ``openai.chat_completions``) rule keys: Chat's, with ``function_call_count``
(a turn whose calls and ``tool`` messages do not pair up) for its missing, second and orphan ``tool`` messages,
and ``invalid_tool_call_id`` (an id of a call or ``tool`` message that is not nine letters and digits).
DeepSeek (``dialect="deepseek"``): Chat's, with ``missing_reasoning_content`` (an assistant message of a turn
with tool calls without its ``reasoning_content``: reported, never repaired). Cohere (``dialect="cohere"``):
Chat's, in Cohere's words (``invalid request: `` ahead of them).

Ollama (``dialect="ollama"`` of ``openai.chat_completions``, its native ``/api/chat``) rule keys, in neutral words
(Ollama refuses none of them): ``missing_tool_messages``, ``multiple_tool_messages``, ``orphan_tool_message``
and ``duplicate_tool_call_id``, with ``tool`` messages matched to calls by ``tool_name`` and order.

Bedrock Converse (``bedrock.converse``) rule keys: ``missing_tool_result`` (a call whose id no leading
``toolResult`` of the next message answers), ``unexpected_tool_result`` (a ``toolResult`` answering no call
of the message before it, or not leading its message), ``duplicate_tool_result``, ``duplicate_tool_use_id``
(an id used earlier in the request), ``invalid_tool_use_id``, ``block_after_tool_use``,
``roles_not_alternating`` (two messages of one role in a row: the service refuses them rather than
combining them), ``empty_message``, ``empty_text``.
"""

from __future__ import annotations

from collections.abc import Sequence

from otel_toolturn._view import Violation
from otel_toolturn._vocab import Dialect, Lane
from otel_toolturn.lanes import adapter_for, listed

__all__ = ["Violation", "validate"]


def validate(
    messages: Sequence[object] | str, *, lane: Lane, chained: bool = False, dialect: Dialect | None = None
) -> list[Violation]:
    """The provider rules ``messages`` breaks in ``lane`` (in ``dialect``, if given), by position (empty: none)."""
    adapter = adapter_for(lane, dialect)
    items = listed(messages, lane=lane)
    return [] if items is None else adapter.validate(items, chained=chained)
