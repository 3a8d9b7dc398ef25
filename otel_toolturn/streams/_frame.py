"""Reading one frame: a JSON dict, an SDK object with attributes, or a raw ``data:`` payload.

Nothing here knows a wire format beyond "a frame is a mapping or an object with attributes".
``field`` reads one key of either; an observer that reads many keys of one frame picks its
``Getter`` once (``DICT_GET`` for a dict, ``ATTR_GET`` for an object: the same call shape).
``decode_frame`` turns a raw payload into a frame, ``None`` (the Chat Completions ``[DONE]``)
or ``UNDECODABLE``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final, cast

DONE_SENTINEL: Final = "[DONE]"
"""The Chat Completions stream's closing ``data:`` payload (not JSON; not a frame)."""


def field(obj: object, key: str) -> object:
    """Read ``obj[key]`` (a JSON dict) or ``obj.key`` (an SDK object); ``None`` when absent."""
    if type(obj) is dict:
        return obj.get(key)
    return getattr(obj, key, None)


Getter = Callable[[object, str, None], object]
"""Reads one key of a frame: ``dict.get`` for JSON dicts, ``getattr`` for SDK objects (same call shape)."""
DICT_GET: Final = cast("Getter", dict.get)
ATTR_GET: Final[Getter] = getattr


def int_or_none(value: object) -> int | None:
    """``value`` when it is an ``int`` (not a ``bool``), else ``None``."""
    return value if type(value) is int else None


class Undecodable:
    """A raw frame that was not JSON (the ``bad_frame`` cause)."""

    __slots__ = ()


UNDECODABLE: Final = Undecodable()


def decode_frame(raw: str | bytes) -> object:
    """Decode a raw ``data:`` payload: JSON, ``None`` for ``[DONE]``, ``UNDECODABLE`` when not JSON."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if text.strip() == DONE_SENTINEL:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return UNDECODABLE
