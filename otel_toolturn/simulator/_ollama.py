"""Ollama's native chat as the simulator speaks it (``POST /api/chat``): Chat-shaped messages, Ollama's reply.

The request's ``messages`` are judged in the ``ollama`` dialect of the Chat lane (calls without ids,
``tool`` messages answering by ``tool_name`` and order). Ollama itself refuses no tool turn; the simulator
refuses the ones the law restores, as a strict server would, so a test can tell what reached the model.

Plain reply (https://github.com/ollama/ollama/blob/main/docs/api.md, "Generate a chat completion"):
``{"model", "created_at", "message": {"role": "assistant", "content", "tool_calls"?}, "done": true,
"done_reason", "total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration",
"eval_count", "eval_duration"}``; each call ``{"function": {"name", "arguments": {...}}}``, its arguments an
object and no id. ``done_reason`` is ``stop``, or ``length`` when a token cap cut the reply: the server parses
a call only once whole, so a cut reply carries no call.

Stream (``"stream": true``): newline-delimited JSON objects (``application/x-ndjson``), each the reply's shape
with ``done: false`` and a piece of ``message.content`` or a call (each call whole, in its own line), then one
``done: true`` line with ``done_reason`` and the counts, its ``message.content`` empty.

Errors: HTTP 400 with ``{"error": "<words>"}``; the SDK raises its ``ResponseError`` with the words and the
status code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final

from otel_toolturn.simulator._cache import PromptUsage
from otel_toolturn.simulator._chat import chat_wire
from otel_toolturn.simulator._frames import Frame, FrameRole, apply_misbehaviours, pieces
from otel_toolturn.simulator._script import Misbehaviour, ScriptedTurn, token_estimate
from otel_toolturn.simulator._wire import Json, NewId

PATH: Final = "/api/chat"
NDJSON_CONTENT_TYPE: Final = "application/x-ndjson"
CREATED_AT: Final = "2025-01-01T00:00:00.000000Z"
"""The ``created_at`` of every reply (the simulator keeps no clock)."""


def reply_body(
    turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool, prompt: PromptUsage
) -> Json:
    """Ollama's chat reply answering ``request`` with ``turn`` (``cut``: a token cap left no call whole)."""
    del new_id  # Ollama's replies and calls carry no ids
    message: Json = {"role": "assistant", "content": turn.text}
    calls = [{"function": {"name": call.name, "arguments": dict(call.arguments)}} for call in turn.calls]
    if calls and not cut:
        message["tool_calls"] = calls
    output = token_estimate(message)
    return {
        "model": request.get("model"),
        "created_at": CREATED_AT,
        "message": message,
        "done": True,
        "done_reason": "length" if cut else "stop",
        "total_duration": 0,
        "load_duration": 0,
        "prompt_eval_count": prompt.tokens,
        "prompt_eval_duration": 0,
        "eval_count": output,
        "eval_duration": 0,
    }


def _line(reply: Mapping[str, object], message: Json, role: FrameRole) -> Frame:
    return Frame(
        data={"model": reply.get("model"), "created_at": CREATED_AT, "message": message, "done": False}, role=role
    )


def reply_frames(
    reply: Mapping[str, object], *, request: Mapping[str, object], misbehaviours: Sequence[Misbehaviour]
) -> list[Frame]:
    """``reply`` as Ollama's NDJSON stream: content pieces, each call whole, then the ``done`` line."""
    del request  # nothing in the request changes the lines
    raw = reply.get("message")
    message: Mapping[str, object] = raw if isinstance(raw, Mapping) else {}
    frames = [
        _line(reply, {"role": "assistant", "content": piece}, "head" if not k else "content")
        for k, piece in enumerate(pieces(str(message.get("content") or ""), 3))
    ]
    calls = message.get("tool_calls")
    frames.extend(
        _line(reply, {"role": "assistant", "content": "", "tool_calls": [call]}, "arguments")
        for call in (calls if isinstance(calls, list) else [])
    )
    last = {**reply, "message": {"role": "assistant", "content": ""}}
    frames.append(Frame(data=last, role="finish"))
    after_end = [
        _line(reply, {"role": "assistant", "content": " late"}, "content"),
        Frame(data={**last, "done_reason": "stop"}, role="finish"),
    ]
    return apply_misbehaviours(frames, misbehaviours, after_end=after_end, bad_frame_event=None)


def encode_line(frame: Frame) -> bytes:
    """One NDJSON line: the frame's JSON object (or raw text), then a newline."""
    data = frame.data if isinstance(frame.data, str) else json.dumps(frame.data, separators=(",", ":"))
    return f"{data}\n".encode()


def error_body(message: str) -> Json:
    """Ollama's error body."""
    return {"error": message}


WIRE = chat_wire(
    PATH,
    dialect="ollama",
    reply_body=reply_body,
    reply_frames=reply_frames,
    error_body=error_body,
    stream_content_type=NDJSON_CONTENT_TYPE,
    encode_frame=encode_line,
)
