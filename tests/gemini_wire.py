"""What google-genai sends for a ``contents`` list: the request body its real client posts, caught in memory.

``sent(contents)`` posts ``contents`` through ``client.models.generate_content`` to a mock transport
and returns the ``contents`` of the JSON body. ``assert_sent_whole(contents)`` checks that every part
arrives as the SDK reads that part on its own (a part of another kind inside a content is not read:
google-genai sends a dict part inside a typed ``Content`` as ``{}``), and that every typed content
dumps without a pydantic serialisation warning (pytest turns it into an error).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import httpx2
from google import genai
from google.genai import types

_REPLY: Final = {
    "candidates": [{"index": 0, "content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]
}


_BODIES: Final[list[dict[str, Any]]] = []


def _keep(request: httpx2.Request) -> httpx2.Response:
    _BODIES.append(json.loads(request.content))
    return httpx2.Response(200, json=_REPLY)


@functools.cache
def _client() -> genai.Client:
    """One client for the session (building one takes a few hundred milliseconds); its transport keeps bodies."""
    http = httpx2.Client(transport=httpx2.MockTransport(_keep))
    return genai.Client(api_key="k", http_options=types.HttpOptions(base_url="http://wire.invalid", httpx_client=http))


def sent(contents: Sequence[object]) -> list[dict[str, Any]]:
    """The ``contents`` google-genai's client puts in the request body for ``contents``."""
    _BODIES.clear()
    _client().models.generate_content(model="gemini-test", contents=list(contents))
    (body,) = _BODIES
    found: list[dict[str, Any]] = body["contents"]
    return found


def _read(part: object) -> dict[str, Any]:
    """The part as google-genai reads it on its own, as JSON (REST camelCase)."""
    typed = types.Part.model_validate(part) if isinstance(part, Mapping) else part
    assert isinstance(typed, types.Part), f"no part: {part!r}"
    dumped: dict[str, Any] = typed.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def assert_sent_whole(contents: Sequence[object]) -> list[dict[str, Any]]:
    """The sent ``contents``, checked to hold every part of ``contents`` as the SDK reads that part, in order."""
    wire = sent(contents)
    assert len(wire) == len(contents)
    for content, out in zip(contents, wire, strict=True):
        if not isinstance(content, Mapping):
            assert isinstance(content, types.Content)
            content.model_dump(mode="json", exclude_none=True)  # warns when a part is no ``Part``
        parts = content.get("parts") if isinstance(content, Mapping) else content.parts
        assert out.get("parts", []) == [_read(part) for part in parts or ()]
    return wire
