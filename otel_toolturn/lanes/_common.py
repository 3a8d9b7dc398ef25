"""Pieces the lane adapters share: reading ids, folding result contents, deriving ids."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypeGuard

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._view import SECOND_RESULT_SEPARATOR, TakenIds, field, is_interrupted_text

_ANTHROPIC_ID = re.compile(r"[^A-Za-z0-9_-]")


def call_id_of(obj: object, key: str, position: int, what: str) -> str:
    """The id a call carries under ``key``; a call without a readable id is rejected, naming where."""
    value = field(obj, key)
    if isinstance(value, str) and value:
        return value
    raise ToolTurnInputError(
        f"a {what} needs a non-empty string {key!r}, got {describe(value)}",
        position=position,
    )


def describe(value: object) -> str:
    """What arrived, by type and size, never by content (errors are logged, and content is off by default)."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return f"a string of {len(value)} characters" if value else "an empty string"
    if isinstance(value, (list, tuple, dict)):
        size = len(value)
        unit = "key" if isinstance(value, dict) else "item"
        return f"a {type(value).__name__} of {size} {unit}{'' if size == 1 else 's'}"
    return f"a value of type {type(value).__name__!r}"


def nonempty_str(value: object) -> str | None:
    """``value`` when it is a non-empty string (``None``: anything else)."""
    return value if isinstance(value, str) and value else None


def result_id_of(obj: object, key: str) -> str | None:
    """The call id a result answers, or ``None`` when it cannot be read (the result then answers nothing)."""
    return nonempty_str(field(obj, key))


def text_of(content: object, part_text_key: str = "text") -> str | None:
    """The plain text of a result content: the string itself, or the one text part of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and len(content) == 1:
        text = field(content[0], part_text_key)
        return text if isinstance(text, str) else None
    return None


def interrupted(content: object) -> bool:
    """Whether a result's content is an interrupted close."""
    text = text_of(content)
    return text is not None and is_interrupted_text(text)


def fold_contents(contents: Sequence[object], text_part: Callable[[str], object]) -> object:
    """Every byte of ``contents`` (first first) as one content, ``SECOND_RESULT_SEPARATOR`` between each.

    All strings ⇒ one string joined by the separator on a line of its own. Any list ⇒ one list: each content's
    parts (a string becomes one text part; an empty one none), a separator part between two.
    """
    pieces = [c if c is not None else "" for c in contents]
    if all(isinstance(c, str) for c in pieces):
        return f"\n{SECOND_RESULT_SEPARATOR}\n".join(str(c) for c in pieces)
    parts: list[object] = []
    for number, content in enumerate(pieces):
        if number:
            parts.append(text_part(SECOND_RESULT_SEPARATOR))
        if isinstance(content, str):
            if content:
                parts.append(text_part(content))
        elif isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
            parts.extend(content)
        else:
            parts.append(content)
    return parts


def json_text(value: object) -> str:
    """``value`` as text: a non-empty string as it is; anything else as JSON (SDK objects through ``model_dump``)."""
    if isinstance(value, str) and value:
        return value

    def plain(obj: object) -> object:
        model_dump = getattr(obj, "model_dump", None)
        return model_dump(mode="json") if callable(model_dump) else str(obj)

    return json.dumps(value, ensure_ascii=False, default=plain)


def delivered_parts(heading: str, content: object, holds: frozenset[str], text_type: str) -> list[object]:
    """A result delivered where it stands, as the parts of a user message: ``heading``, then every byte of ``content``.

    A string content (or none) shares the heading's text part. A list's parts, or one other value as
    one part, follow: a part of a type in ``holds`` as it is (a ``text_type`` part only with non-empty
    text), any other (a result or a call nested in the result, an empty text, a value that is no
    part) as a text part holding its ``json_text``. So the parts are valid where they stand, and
    nothing the result held stands there as a result or a call of its own.

    >>> delivered_parts("[late]", [{"type": "tool_result", "tool_use_id": "c1"}], frozenset({"text"}), "text")[1]
    {'type': 'text', 'text': '{"type": "tool_result", "tool_use_id": "c1"}'}
    """
    if content is None or isinstance(content, str):
        return [{"type": text_type, "text": f"{heading}\n{content}" if content else heading}]
    parts: list[object] = [{"type": text_type, "text": heading}]
    for part in content if is_list(content) else (content,):
        kind = field(part, "type")
        text = field(part, "text")
        if isinstance(kind, str) and kind in holds and (kind != text_type or (isinstance(text, str) and text)):
            parts.append(part)
        else:
            parts.append({"type": text_type, "text": json_text(part)})
    return parts


def derive_id(call_id: str, taken: TakenIds, *, pattern_safe: bool, limit: int | None = None) -> str:
    """A free id for ``call_id``: ``<id>_<n>`` with the smallest ``n >= 2`` not in ``taken``.

    ``pattern_safe``: characters outside ``^[a-zA-Z0-9_-]+$`` become ``_``. ``limit``: the longest id the
    API accepts; the id is cut to fit, ahead of its ``_<n>``. An id that changes by either is taken as it
    is when it is free. The search resumes where the last one for the same id stopped (``TakenIds``).

    >>> derive_id("c" * 70, TakenIds(), pattern_safe=False, limit=64) == "c" * 64
    True
    >>> taken = TakenIds()
    >>> taken.update(["c" * 64, "c" * 62 + "_2"])
    >>> derive_id("c" * 64, taken, pattern_safe=False, limit=64) == "c" * 62 + "_3"
    True
    """
    base = _ANTHROPIC_ID.sub("_", call_id) if pattern_safe else call_id
    whole = base if limit is None else base[:limit]
    if whole != call_id and whole not in taken:
        return whole
    number = taken.resume.get(base, 2)
    while True:
        suffix = f"_{number}"
        candidate = (base if limit is None else base[: limit - len(suffix)]) + suffix
        number += 1
        if candidate not in taken:
            taken.resume[base] = number
            return candidate


def fits_anthropic_ids(call_ids: Sequence[str]) -> bool:
    """Whether every one of ``call_ids`` (each non-empty) matches Anthropic's tool id pattern ``^[a-zA-Z0-9_-]+$``.

    The pattern is a class of characters, so it is checked once, over the ids joined; an ASCII
    identifier (``toolu_01A…``, the usual id) fits without the pattern being run.

    >>> [fits_anthropic_ids([i]) for i in ("toolu_01A", "call-7", "9x", "functions.lookup:0", "tool_é")]
    [True, True, True, False, False]
    >>> fits_anthropic_ids(["toolu_01A", "call-7"]), fits_anthropic_ids(["toolu_01A", "a.b"])
    (True, False)
    """
    joined = "".join(call_ids)
    return (joined.isascii() and joined.isidentifier()) or _ANTHROPIC_ID.search(joined) is None


def role_of(message: object) -> object:
    """A message's role, from a dict or a typed object."""
    if type(message) is dict:
        return message.get("role")
    if isinstance(message, Mapping):
        return message.get("role")
    return getattr(message, "role", None)


def is_list(value: object) -> TypeGuard[list[object] | tuple[object, ...]]:
    """A wire list (a list or tuple, never a string)."""
    return type(value) is list or isinstance(value, (list, tuple))
