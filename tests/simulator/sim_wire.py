"""Test helpers: a request body per lane, a plain reader of SSE bytes, the google-genai client on a simulator."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import pytest
from google import genai
from google.genai import types

from otel_toolturn import Lane

PATHS: dict[Lane, str] = {
    "anthropic.messages": "/v1/messages",
    "openai.chat_completions": "/v1/chat/completions",
    "openai.responses": "/v1/responses",
}
GEMINI_PATH: Final = "/v1beta/models/gemini-test:generateContent"
GEMINI_STREAM_PATH: Final = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"

AIOHTTP_SUBCLASS_WARNING: Final = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession from ClientSession is discouraged:DeprecationWarning"
)
"""For tests of ``client.aio``: google-genai subclasses ``aiohttp.ClientSession``, which aiohttp deprecates."""


def gemini_client(base_url: str, *, vertexai: bool = False) -> genai.Client:
    """The google-genai client on the simulator at ``base_url``: one attempt per call, no retries, no back-off."""
    options = types.HttpOptions(base_url=base_url, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(api_key="sim", vertexai=vertexai, http_options=options)


TOOL = {"name": "lookup", "description": "Look a thing up.", "parameters": {"type": "object", "properties": {}}}


def request_body(lane: Lane, messages: Sequence[object] | str, **extra: object) -> dict[str, object]:
    """A minimal valid request of ``lane`` carrying ``messages`` (Responses: as ``input``) and one tool."""
    if lane == "anthropic.messages":
        tool: dict[str, object] = {
            "name": TOOL["name"],
            "description": TOOL["description"],
            "input_schema": TOOL["parameters"],
        }
        return {"model": "claude-test", "max_tokens": 256, "messages": messages, "tools": [tool], **extra}
    if lane == "openai.chat_completions":
        return {"model": "gpt-test", "messages": messages, "tools": [{"type": "function", "function": TOOL}], **extra}
    return {"model": "gpt-test", "input": messages, "tools": [{"type": "function", **TOOL}], **extra}


@dataclass(frozen=True, kw_only=True, slots=True)
class SseFrame:
    """One frame as read back: its event name (or ``None``), its raw data, and the JSON (or ``None``)."""

    event: str | None
    data: str
    payload: object


def parse_sse(text: str) -> list[SseFrame]:
    """Split an SSE body into frames; ``payload`` is the parsed JSON, ``None`` when it is not JSON."""
    frames: list[SseFrame] = []
    for chunk in text.replace("\r\n", "\n").split("\n\n"):
        event: str | None = None
        data: list[str] = []
        for line in chunk.split("\n"):
            if line.startswith("event:"):
                event = line[len("event:") :].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:") :].strip())
        if not data:
            continue
        raw = "\n".join(data)
        try:
            payload: object = json.loads(raw)
        except ValueError:
            payload = None
        frames.append(SseFrame(event=event, data=raw, payload=payload))
    return frames


def frame_type(frame: SseFrame) -> str:
    """The frame's ``type`` field (Chat chunks have none: ``chunk``; ``[DONE]``; ``<not json>``)."""
    if frame.data == "[DONE]":
        return "[DONE]"
    if not isinstance(frame.payload, dict):
        return "<not json>"
    return str(frame.payload.get("type", "chunk"))
