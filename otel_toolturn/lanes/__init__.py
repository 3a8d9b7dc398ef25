"""One small adapter per wire lane: provider spelling lives here and nowhere else.

Each adapter reads its wire list into the neutral view, writes the law's outcome back, and checks
the lane's provider rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final, cast

from otel_toolturn._errors import ToolTurnInputError, UnknownLaneError
from otel_toolturn._view import LaneAdapter
from otel_toolturn._vocab import DIALECTS, LANES, Dialect, Lane
from otel_toolturn.lanes import (
    anthropic_messages,
    bedrock_converse,
    cohere_chat,
    deepseek_chat,
    gemini,
    mistral_chat,
    ollama_chat,
    openai_chat,
    openai_responses,
    request_parts,
)

ADAPTERS: Final[dict[Lane, LaneAdapter]] = {
    "anthropic.messages": anthropic_messages.ADAPTER,
    "openai.chat_completions": openai_chat.ADAPTER,
    "openai.responses": openai_responses.ADAPTER,
    "gemini.generate_content": gemini.ADAPTER,
    "bedrock.converse": bedrock_converse.ADAPTER,
}


DIALECT_ADAPTERS: Final[dict[Dialect, openai_chat.OpenAIChat]] = {
    "mistral": mistral_chat.ADAPTER,
    "ollama": ollama_chat.ADAPTER,
    "deepseek": deepseek_chat.ADAPTER,
    "cohere": cohere_chat.ADAPTER,
}
"""Each dialect's adapter: a small adapter on top of its lane's (``openai_chat``), the lane its ``lane``."""


def adapter_for(lane: object, dialect: object = None) -> LaneAdapter:
    """The adapter of ``lane`` (in ``dialect``, when one is given); an unknown one is a typed error naming the known.

    >>> adapter_for("openai.chat_completions", "mistral").lane
    'openai.chat_completions'
    """
    adapter = ADAPTERS.get(cast("Lane", lane)) if isinstance(lane, str) else None
    if adapter is None:
        raise UnknownLaneError(f"unknown lane {lane!r}; expected one of {', '.join(LANES)}")
    if dialect is None:
        return adapter
    return dialect_adapter(cast("Lane", lane), dialect)


def dialect_adapter(lane: Lane, dialect: object) -> openai_chat.OpenAIChat:
    """The adapter of ``dialect`` of ``lane``; a dialect outside ``DIALECTS`` or of another lane is a typed error."""
    adapter = DIALECT_ADAPTERS.get(cast("Dialect", dialect)) if isinstance(dialect, str) else None
    if adapter is None:
        raise UnknownLaneError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
    if adapter.lane != lane:
        raise UnknownLaneError(f"the dialect {dialect!r} is of {adapter.lane}, not of {lane}")
    return adapter


STRING_INPUT_LANES: Final = frozenset(lane for lane, adapter in ADAPTERS.items() if adapter.string_input)
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


DETECTION_ORDER: Final[tuple[Lane, ...]] = (
    "openai.responses",
    "gemini.generate_content",
    "bedrock.converse",
    "anthropic.messages",
    "openai.chat_completions",
)
"""The order lanes are asked to claim a body or an item read without its lane: first claim wins."""

FALLBACK_LANE: Final[Lane] = "openai.chat_completions"
"""The lane a transcript no lane claims is read as (its shape is the plainest: role and content)."""

BODY_TRANSCRIPT_LANES: Final[tuple[Lane, ...]] = (
    "openai.responses",
    "openai.chat_completions",
    "gemini.generate_content",
)
"""The lanes whose transcript field a request body is searched for, in order (Messages and Converse: Chat's)."""

CLI_ALIASES: Final[Mapping[str, Lane]] = {
    **{adapter.cli_alias: lane for lane, adapter in ADAPTERS.items()},
    **{lane: lane for lane in LANES},
}
"""Every name a lane goes by on the command line: its short alias, or the lane itself."""


STRING_BODY_LANES: Final[frozenset[Lane]] = frozenset({"openai.responses"})
"""The lanes whose wire body may hold its transcript as a string (Responses ``input``)."""


def wire_transcript(body: Mapping[str, object], lane: Lane) -> list[object] | str | None:
    """The transcript a wire body holds in ``lane``; ``None``: it holds none.

    A list at the lane's transcript field, or a string there where the lane's body takes one (``STRING_BODY_LANES``).

    >>> wire_transcript({"input": "hi"}, "openai.responses"), wire_transcript({"messages": "hi"}, "anthropic.messages")
    ('hi', None)
    """
    inner = body.get(ADAPTERS[lane].transcript_field)
    if isinstance(inner, list) or (isinstance(inner, str) and lane in STRING_BODY_LANES):
        return inner
    return None


def body_transcript(body: Mapping[str, object]) -> tuple[str, list[object] | str] | None:
    """Where a request body holds its transcript, and the value there; ``None``: it holds none.

    The transcript field of the first lane of ``BODY_TRANSCRIPT_LANES`` whose ``wire_transcript`` the body holds.
    """
    for lane in BODY_TRANSCRIPT_LANES:
        inner = wire_transcript(body, lane)
        if inner is not None:
            return ADAPTERS[lane].transcript_field, inner
    return None


def detect_lane(body: Mapping[str, object], transcript_field: str | None, items: Iterable[object]) -> tuple[Lane, bool]:
    """The lane a transcript read without its lane is written for, and whether that was a guess.

    Each lane in ``DETECTION_ORDER`` is asked to claim the body, then each item in turn; a list no lane
    claims is Chat Completions, a guess unless one of its messages has a system or developer role.
    """
    clues = LaneClues()
    for item in items:
        if clues.read(item):
            break
    return clues.lane(body, transcript_field)


class LaneClues:
    """What a transcript's items tell of its lane, read one item at a time (``detect_lane``'s reading)."""

    __slots__ = ("claimed", "instructed")

    def __init__(self) -> None:
        self.claimed: Lane | None = None
        """The lane that claimed the first item one claims."""
        self.instructed = False
        """Whether an item before it had a system or developer role."""

    def read(self, item: object) -> bool:
        """Take the next item; ``True`` once a lane claimed one (the items after it tell nothing more)."""
        if self.claimed is None and isinstance(item, Mapping):
            for lane in DETECTION_ORDER:
                if ADAPTERS[lane].claims_item(item):
                    self.claimed = lane
                    return True
            self.instructed = self.instructed or item.get("role") in request_parts.INSTRUCTION_ROLES
        return self.claimed is not None

    def lane(self, body: Mapping[str, object], transcript_field: str | None) -> tuple[Lane, bool]:
        """The lane, and whether it was a guess: the body's claim first, then the items'."""
        for lane in DETECTION_ORDER:
            if ADAPTERS[lane].claims_body(body, transcript_field):
                return lane, False
        if self.claimed is not None:
            return self.claimed, False
        return FALLBACK_LANE, not self.instructed
