"""Test helpers: a request body per lane, and a plain reader of SSE bytes into (event, data) frames."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from otel_toolturn import Lane

PATHS: dict[Lane, str] = {
    "anthropic.messages": "/v1/messages",
    "openai.chat_completions": "/v1/chat/completions",
    "openai.responses": "/v1/responses",
}

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
