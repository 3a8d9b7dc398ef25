"""google-genai's ``contents``, read as the SDK sends it: the one place otel-toolturn calls a private SDK function.

Role: the law reads the ``contents`` list google-genai puts on the wire. The SDK accepts more than
a list of contents (a string, a part, a content, a dict, a list of parts) and normalises it before
it sends, with ``google.genai._transformers.t_contents``: the function its own request converters
call on ``contents``. google-genai has no public normaliser, and a second reading of its union of
shapes here could drift from the SDK's, so ``gemini_contents`` calls that private function: what the
law reads is then what the SDK would have sent. A list of contents is read as it is, without it.
Should a google-genai release move it, the calls that need it go out as written, unrecorded (the
patch's guard counts the failure), and the tests of string ``contents`` in ``tests/instrument`` fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast


def gemini_normalisable(value: object) -> bool:
    """Whether google-genai's normaliser may read ``value`` without consuming it (a list, a string, a dict, a model)."""
    return isinstance(value, (list, str, Mapping)) or callable(getattr(value, "model_dump", None))


def _is_gemini_content(item: object) -> bool:
    """A content as google-genai reads it: a ``types.Content`` or a dict with ``role`` or ``parts`` (never a part)."""
    if isinstance(item, Mapping):
        return "parts" in item or "role" in item
    from google.genai import types  # noqa: PLC0415 - the SDK is optional; only its own calls come here

    return isinstance(item, types.Content)


def gemini_contents(value: object) -> list[object] | None:
    """The ``contents`` list google-genai sends for ``value``; ``None``: the law cannot read it (sent as written).

    A non-empty list of contents is read as it is (the same list: each item keeps its spelling).
    A string, a part, a content, a dict or a list holding parts is normalised by the SDK's own
    ``t_contents`` (a new list; contents in it are the caller's objects). Anything else (a tuple,
    a generator, ``None``, an empty list) and any value the normaliser refuses goes to the SDK as
    written, so the caller meets the SDK's own outcome.
    """
    if not gemini_normalisable(value) or value == []:
        return None
    if isinstance(value, list) and all(_is_gemini_content(item) for item in value):
        return cast("list[object]", value)
    from google.genai import _transformers  # noqa: PLC0415 - optional SDK; private: see the module docstring

    try:
        return list(_transformers.t_contents(cast("Any", value)))  # a value of any shape: the SDK judges it
    except Exception:  # noqa: BLE001 - the SDK refuses it the same way when it runs
        return None
