"""Cohere's dialect of the Chat Completions lane: the cohere SDK's v2 chat ``messages``.

Reading, writing and the law are the Chat lane's (``openai_chat``): v2 chat's ``messages`` are
Chat-shaped (assistant ``tool_calls``, ``tool`` messages answering a ``tool_call_id``). What differs:

- **Calling no tool.** v2 chat's ``tool_choice`` takes ``REQUIRED`` or ``NONE`` only (the cohere SDK's
  ``V2ChatRequestToolChoice``; https://docs.cohere.com/reference/chat): the rule that withholds tools
  sends ``"NONE"``, and a caller's ``"NONE"`` says no tool.
- **Its words.** Chat's, after ``invalid request: `` (oracle/langchain-oracle#10 quotes Command A's
  "invalid request: An assistant message with 'tool_calls' must be followed by tool messages responding
  to each 'tool_call_id'. The following tool_call_ids did not have response messages: …").

>>> ADAPTER.tool_choice_none(), ADAPTER.says_no_tool("NONE"), ADAPTER.says_no_tool("none")
('NONE', True, False)
"""

from __future__ import annotations

from typing import Final

from otel_toolturn._view import ValidationStream, Violation
from otel_toolturn._vocab import Dialect
from otel_toolturn.lanes.openai_chat import ChatValidation, OpenAIChat

ERROR_PREFIX: Final = "invalid request: "
"""What Cohere writes ahead of a refusal's words."""
NONE: Final = "NONE"
"""v2 chat's ``tool_choice`` that calls no tool."""


class CohereChat(OpenAIChat):
    """The Chat Completions adapter with v2 chat's tool choice and words (see the module docstring)."""

    dialect: Dialect | None = "cohere"

    def tool_choice_none(self) -> object:
        """Cohere's ``"NONE"``: call no tool."""
        return NONE

    def says_no_tool(self, tool_choice: object) -> bool:
        """Cohere's ``"NONE"``."""
        return tool_choice == NONE

    def validate_stream(self, *, chained: bool = False) -> ValidationStream:
        """Chat's tool-turn rules, in Cohere's words (``invalid request: `` and OpenAI's), fed one segment at a time."""
        del chained  # no server-held state continues this lane's transcript
        return CohereValidation()


class CohereValidation(ChatValidation):
    """Chat's rules over a transcript fed in segments, each stated after ``invalid request: ``: Chat's state alone."""

    __slots__ = ()

    def close(self) -> list[Violation]:
        """Chat's violations of the whole transcript, in order, in Cohere's words."""
        return [Violation(position=v.position, rule=v.rule, message=ERROR_PREFIX + v.message) for v in super().close()]


ADAPTER: Final[CohereChat] = CohereChat()
