"""What several lanes read alike: keyword settings, system-prompt pieces, plain messages, item kinds.

A lane adapter reads its own requests and transcripts through these (which field holds what is the
adapter's to say); the parts built on the adapters (``otel_toolturn.compose``, the handoff, the
instrumentation, the CLI) ask the adapter, never the wire. The neutral types the adapters answer in
(``SystemPromptPiece``, ``Carrier``, ``WireCall``, ``HandoffWire``) are re-exported here for them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, TypeAlias

from otel_toolturn._view import Carrier, HandoffWire, SystemPromptPiece, WireCall, field, replace

__all__ = [
    "INSTRUCTION_ROLES",
    "USER_TEXT_PARTS",
    "Carrier",
    "HandoffWire",
    "Item",
    "Request",
    "SystemPromptPiece",
    "WireCall",
    "changed_fields",
    "has_text",
    "inserted",
    "is_instruction",
    "kind_of",
    "last_assistant",
    "listed_field",
    "request_transcript_pieces",
    "text_or_empty",
    "text_pieces",
    "transcript_pieces",
    "with_plain_text",
    "with_setting",
]

Request: TypeAlias = Mapping[str, object]
"""A request as the SDK method receives it: its keyword arguments, by name."""

Item: TypeAlias = Mapping[object, object]
"""One transcript item read as JSON, before its lane is known."""

INSTRUCTION_ROLES: Final[tuple[str, ...]] = ("system", "developer")
"""The roles of a transcript item (Chat, Responses) that instructs the model rather than speaks to it."""


def text_pieces(content: object, source: str) -> list[SystemPromptPiece]:
    """Pieces of a message content: a string is one piece; each text part of a list is one piece."""
    if isinstance(content, str):
        return [SystemPromptPiece(raw_content=content, source=source)]
    if isinstance(content, Sequence):
        out: list[SystemPromptPiece] = []
        for index, part in enumerate(content):
            text = field(part, "text")
            if isinstance(text, str):
                out.append(SystemPromptPiece(raw_content=text, source=f"{source}.{index}"))
        return out
    return []


def is_instruction(item: object) -> bool:
    """Whether a transcript item (Chat, Responses) is a ``system`` or ``developer`` message."""
    return field(item, "role") in INSTRUCTION_ROLES and field(item, "type") in (None, "message")


def transcript_pieces(items: Sequence[object], *, key: str, start: int = 0) -> list[SystemPromptPiece]:
    """The system-prompt pieces of transcript items (Chat ``messages``, Responses ``input``), in order.

    ``items`` stand at positions ``start``, ``start + 1``, ... of the request's ``key`` list, so
    the pieces of a list read in two parts, concatenated, are the pieces of the whole list.
    """
    pieces: list[SystemPromptPiece] = []
    for index, item in enumerate(items, start):
        if type(item) is dict and item.get("role") not in INSTRUCTION_ROLES:
            continue  # not an instruction whatever its type (``is_instruction`` asks the role first)
        if is_instruction(item):
            pieces.extend(text_pieces(field(item, "content"), f"{key}.{index}"))
    return pieces


def request_transcript_pieces(
    request: Request, key: str, transcript: Sequence[SystemPromptPiece] | None
) -> Sequence[SystemPromptPiece]:
    """``transcript`` when given, else the pieces read from the request's ``key`` list (none: not a list)."""
    if transcript is not None:
        return transcript
    items = request.get(key)
    if isinstance(items, Sequence) and not isinstance(items, str):
        return transcript_pieces(items, key=key)
    return ()


def changed_fields(body: Request, sent: Request) -> dict[str, object]:
    """The fields of ``sent`` that are not the very objects ``body`` holds under their names.

    >>> messages = [{"role": "user", "content": "hi"}]
    >>> changed_fields({"model": "m", "messages": messages}, {"model": "m", "messages": [*messages]})
    {'messages': [{'role': 'user', 'content': 'hi'}]}
    """
    return {key: value for key, value in sent.items() if body.get(key) is not value}


def with_setting(request: Request, name: str, value: object) -> dict[str, object]:
    """A copy of ``request`` with the keyword argument ``name`` set to ``value``; never in place."""
    return {**request, name: value}


USER_TEXT_PARTS: Final[tuple[str, ...]] = ("text", "input_text")
"""The content part types that carry a user's text (Anthropic and Chat ``text``, Responses ``input_text``)."""


def has_text(content: object) -> bool:
    """Whether a message content holds text: a non-empty string, or a non-empty text part of a list."""
    if isinstance(content, str):
        return bool(content)
    if isinstance(content, Sequence):
        return any(field(part, "type") in USER_TEXT_PARTS and bool(field(part, "text")) for part in content)
    return False


def last_assistant(messages: Sequence[object]) -> int | None:
    """The index of the last ``assistant`` message of ``messages``; ``None``: there is none."""
    return next((i for i in range(len(messages) - 1, -1, -1) if field(messages[i], "role") == "assistant"), None)


def text_or_empty(value: object) -> str:
    """``value`` when it is a string, else ``""``."""
    return value if isinstance(value, str) else ""


def listed_field(message: object, key: str) -> list[object]:
    """A copy of the list a message holds at ``key`` (none: empty)."""
    value = field(message, key)
    return list(value) if isinstance(value, (list, tuple)) else []


def inserted(messages: Sequence[object], at: int, item: object) -> list[object]:
    """A new list with ``item`` standing at ``at``."""
    return [*messages[:at], item, *messages[at:]]


def without_listed_call(
    messages: Sequence[object],
    carrier: Carrier,
    call: WireCall,
    calls_field: str,
    plain_text: Callable[[object], object | None],
) -> list[object]:
    """A new list without ``call``'s entry of its message's ``calls_field``.

    The carrier's last call gone, its message becomes a plain assistant message of ``plain_text`` of its
    content (``None``: the message goes).
    """
    at = call.position
    message = messages[at]
    if len(carrier.calls) > 1:
        kept = [c for i, c in enumerate(listed_field(message, calls_field)) if i != call.slot]
        return [*messages[:at], replace(message, at, **{calls_field: kept}), *messages[at + 1 :]]
    return with_plain_text(messages, at, plain_text(field(message, "content")))


class ResultAfterBatch:
    """A handoff spelling whose result stands as an item of its own after the batch's results (Chat, Responses)."""

    __slots__ = ()

    def join_batch(self, messages: Sequence[object], carrier: Carrier, end: int, result: object) -> list[object]:
        """``result`` right after the batch's results."""
        del carrier  # the batch's end says where
        return inserted(messages, end, result)


def with_plain_text(messages: Sequence[object], at: int, content: object | None) -> list[object]:
    """A new list whose message at ``at`` is a plain assistant message of ``content`` (``None``: removed)."""
    if content is None:
        return [*messages[:at], *messages[at + 1 :]]
    return [*messages[:at], {"role": "assistant", "content": content}, *messages[at + 1 :]]


def kind_of(item: Item) -> str | None:
    """An item's ``type`` when it is a string (any other value names no kind)."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else None
