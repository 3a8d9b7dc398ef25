"""DeepSeek's dialect of the Chat Completions lane: thinking mode's ``reasoning_content`` on tool turns.

Reading, writing and the law are the Chat lane's (``openai_chat``); the lane stays
``openai.chat_completions``. What differs is one rule of thinking mode (on by default), from DeepSeek's
guide (https://api-docs.deepseek.com/guides/thinking_mode#tool-calls): between two user messages, when
the model called tools, the ``reasoning_content`` of its assistant messages there must be sent back, in
every later request. An assistant message of such a turn without the field (absent or ``null``) is
refused: ``Missing `reasoning_content` field in the assistant message at message index 2. For more
information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls``
(hotovo/aider-desk#529, continuedev/continue#10193, CherryHQ/cherry-studio#11751,
spring-projects/spring-ai#5038). A turn without tool calls needs none: DeepSeek ignores it there.

The law keeps the field: every message it keeps, moves or rewrites (a renamed call, a turn written
with its kept calls) is a copy with all its fields, ``reasoning_content`` among them. It cannot invent
reasoning, so a missing one is reported by ``validate`` (``missing_reasoning_content``), never repaired.

Kimi (Moonshot) has the same rule for assistant messages with ``tool_calls`` only, in other words
(``thinking is enabled but reasoning_content is missing in assistant tool call message at index 2``,
mastra-ai/mastra#12592, continuedev/continue#11711): not this dialect.

>>> [v.rule for v in ADAPTER.validate([{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": []}])]
[]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from otel_toolturn._view import ValidationStream, Violation, field
from otel_toolturn._vocab import Dialect
from otel_toolturn.lanes._common import is_list, role_of
from otel_toolturn.lanes.openai_chat import ChatValidation, OpenAIChat

GUIDE: Final = "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
"""The page DeepSeek's refusal points to."""


def reasoning_words(position: int) -> str:
    """DeepSeek's refusal of an assistant message of a tool turn without ``reasoning_content``."""
    return (
        f"Missing `reasoning_content` field in the assistant message at message index {position}. "
        f"For more information, please refer to {GUIDE}"
    )


def _calls_tools(message: object) -> bool:
    calls = field(message, "tool_calls")
    return is_list(calls) and len(calls) > 0


class DeepSeekChat(OpenAIChat):
    """The Chat Completions adapter with DeepSeek's thinking-mode rule (see the module docstring)."""

    dialect: Dialect | None = "deepseek"

    def validate_stream(self, *, chained: bool = False) -> ValidationStream:
        """Chat's tool-turn rules in OpenAI's words, and each assistant message of a tool turn without reasoning."""
        del chained  # no server-held state continues this lane's transcript
        return DeepSeekValidation()


class DeepSeekValidation(ChatValidation):
    """Chat's rules and DeepSeek's reasoning rule over a transcript fed in segments.

    The rule spans everything between two user messages, so cuts too: beyond Chat's state it holds whether
    the model called tools since the last user message and, until it has, the positions of the assistant
    messages there without ``reasoning_content`` (once it has, each such message is stated as it comes).
    """

    __slots__ = ("_tools", "_unreasoned", "_unreasoned_turns")

    def __init__(self) -> None:
        super().__init__()
        self._tools = False
        self._unreasoned: list[int] = []
        self._unreasoned_turns: list[Violation] = []
        """The assistant messages of tool turns without reasoning so far, in order of position."""

    def feed(self, messages: Sequence[object], *, last: bool) -> None:
        """Judge the next segment by Chat's rules, then its assistant messages by the reasoning rule."""
        start = self.fed
        super().feed(messages, last=last)
        stated, unreasoned, tools = self._unreasoned_turns, self._unreasoned, self._tools
        for position, message in enumerate(messages, start):
            role = role_of(message)
            if role == "user":
                unreasoned, tools = [], False
            elif role == "assistant":
                if field(message, "reasoning_content") is None:
                    unreasoned.append(position)
                if tools or _calls_tools(message):
                    tools = True
                    stated.extend(
                        Violation(position=at, rule="missing_reasoning_content", message=reasoning_words(at))
                        for at in unreasoned
                    )
                    unreasoned = []
        self._unreasoned, self._tools = unreasoned, tools

    def close(self) -> list[Violation]:
        """Chat's violations and the reasoning rule's, in order of position (Chat's first at one position)."""
        violations = [*super().close(), *self._unreasoned_turns]
        violations.sort(key=lambda violation: violation.position)
        return violations


ADAPTER: Final[DeepSeekChat] = DeepSeekChat()
