"""Anthropic Messages as the simulator speaks it (``POST /v1/messages``).

Plain reply: a ``message`` with, when the request enables thinking, a signed ``thinking`` block
first (``_binding``; its text says what the turn does), a text block (when the turn has text), one
``server_tool_use`` block per server call (left open: ``stop_reason`` ``pause_turn``) and one
``tool_use`` block per call; ``stop_reason`` ``tool_use``, ``end_turn``, or ``max_tokens`` when
the arguments were cut (the cut call and those after it are left out: Anthropic's arguments are an
object, not text). ``usage``: ``cache_read_input_tokens`` the prompt's cached tokens (``_cache``),
``input_tokens`` the uncached rest, ``cache_creation_input_tokens`` 0 (the simulator takes no
``cache_control`` breakpoints). When thinking blocks were dropped (``drop_block``) the message
carries ``input_transformations``.

Stream, in the provider's order: ``message_start`` (the message without content, its usage, its
``input_transformations``); per block ``content_block_start``, its deltas (``thinking_delta`` then
one ``signature_delta``; ``text_delta``; ``input_json_delta`` starting with an empty piece) and
``content_block_stop``, a ``ping`` right after the first block start; then ``message_delta`` (stop
reason, output tokens, the ``input_transformations`` again) and ``message_stop``. Every frame
carries its ``event:`` name.

Admission: the prefix check of signed thinking (``_binding``), after the tool-turn rules.

Errors: ``{"type": "error", "error": {"type": "invalid_request_error", "message": …}}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Literal, TypedDict

from otel_toolturn.simulator._binding import review_binding, sign, thinking_enabled
from otel_toolturn.simulator._cache import PromptUsage
from otel_toolturn.simulator._frames import Frame, FrameRole, apply_misbehaviours, pieces
from otel_toolturn.simulator._script import Misbehaviour, ScriptedTurn, token_estimate
from otel_toolturn.simulator._wire import Admission, Json, NewId, Wire


def admit(request: Mapping[str, object]) -> Admission:
    """Run the prefix check: refuse, or admit with the invalid thinking blocks dropped and listed."""
    review = review_binding(request)
    if review.refusal is not None:
        return Admission(request=request, refusal=review.refusal)
    fields: Json = {"input_transformations": list(review.dropped)} if review.dropped else {}
    return Admission(request=review.request, reply_fields=fields, dropped=len(review.dropped))


def thinking_text(turn: ScriptedTurn) -> str:
    """The short thinking the reply to ``turn`` shows: what the turn is about to do."""
    if turn.calls:
        return "I will call " + ", ".join(call.name for call in turn.calls) + "."
    return "I will answer: " + turn.text[:40]


def reply_body(
    turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool, prompt: PromptUsage
) -> Json:
    """Build the ``message`` object answering ``request`` (as the model sees it) with ``turn``."""
    reply_id = new_id("msg_")
    content: list[Json] = []
    if thinking_enabled(request):
        messages = request.get("messages")
        signature = sign(request, messages if isinstance(messages, list) else [])
        content.append({"type": "thinking", "thinking": thinking_text(turn), "signature": signature})
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    content.extend(
        {
            "type": "server_tool_use",
            "id": call.call_id or new_id("srvtoolu_"),
            "name": call.name,
            "input": dict(call.arguments),
        }
        for call in turn.server_calls
    )
    if not cut:
        content.extend(
            {
                "type": "tool_use",
                "id": call.call_id or new_id("toolu_"),
                "name": call.name,
                "input": dict(call.arguments),
            }
            for call in turn.calls
        )
    stop_reason = "max_tokens" if cut else ("tool_use" if turn.calls else "end_turn")
    if turn.server_calls and not turn.calls:
        stop_reason = "pause_turn"
    return {
        "id": reply_id,
        "type": "message",
        "role": "assistant",
        "model": turn.model or str(request.get("model", "")),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "stop_details": None,
        "usage": {
            "input_tokens": prompt.tokens - prompt.cached,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": prompt.cached,
            "output_tokens": token_estimate(content),
        },
    }


def reply_frames(
    reply: Mapping[str, object], *, request: Mapping[str, object], misbehaviours: Sequence[Misbehaviour]
) -> list[Frame]:
    """``reply`` as the Messages event stream."""
    del request
    blocks = _blocks(reply)
    usage = reply.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    start = {**reply, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    frames = [_frame({"type": "message_start", "message": start}, "head")]
    for index, block in enumerate(blocks):
        block_frames = _block_frames(index, block)
        if index == 0:
            block_frames.insert(1, _frame({"type": "ping"}))
        frames.extend(block_frames)
    delta: Json = {
        "type": "message_delta",
        "delta": {"stop_reason": reply.get("stop_reason"), "stop_sequence": None, "stop_details": None},
        "usage": {"output_tokens": usage.get("output_tokens", 1)},
    }
    if "input_transformations" in reply:
        delta["input_transformations"] = reply["input_transformations"]
    frames.append(_frame(delta, "finish"))
    frames.append(_frame({"type": "message_stop"}, "finish"))
    late = len(blocks)
    after_end = [
        _frame({"type": "content_block_start", "index": late, "content_block": {"type": "text", "text": ""}}),
        _frame({"type": "content_block_delta", "index": late, "delta": {"type": "text_delta", "text": " late"}}),
        _frame({"type": "content_block_stop", "index": late}),
        _frame({"type": "message_stop"}, "finish"),
    ]
    return apply_misbehaviours(frames, misbehaviours, after_end=after_end, bad_frame_event="content_block_delta")


class ErrorDetail(TypedDict):
    """The ``error`` member of Anthropic's error body."""

    type: Literal["invalid_request_error"]
    message: str


class ErrorBody(TypedDict):
    """Anthropic's error body, as its API sends it with a 4xx status."""

    type: Literal["error"]
    error: ErrorDetail


def error_body(message: str) -> ErrorBody:
    """Anthropic's error body for an invalid request."""
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def _blocks(reply: Mapping[str, object]) -> list[Mapping[str, object]]:
    content = reply.get("content")
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _block_frames(index: int, block: Mapping[str, object]) -> list[Frame]:
    """``content_block_start``, the deltas and ``content_block_stop`` of one block."""
    if block.get("type") in ("tool_use", "server_tool_use"):
        opened = {**block, "input": {}}
        args = json.dumps(block.get("input", {}))
        deltas = [
            _frame(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                },
                "arguments",
            )
            for p in ["", *pieces(args, 4)]
        ]
    elif block.get("type") == "thinking":
        opened = {**block, "thinking": "", "signature": ""}
        deltas = [
            _frame({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": p}})
            for p in pieces(str(block.get("thinking", "")), 3)
        ]
        signature = {"type": "signature_delta", "signature": block.get("signature", "")}
        deltas.append(_frame({"type": "content_block_delta", "index": index, "delta": signature}))
    else:
        opened = {**block, "text": ""}
        deltas = [
            _frame({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}})
            for p in pieces(str(block.get("text", "")), 3)
        ]
    return [
        _frame({"type": "content_block_start", "index": index, "content_block": opened}),
        *deltas,
        _frame({"type": "content_block_stop", "index": index}),
    ]


def _frame(data: Json, role: FrameRole = "content") -> Frame:
    """Make a frame whose ``event:`` name is its ``type``, as Anthropic sends them."""
    return Frame(data=data, role=role, event=str(data["type"]))


WIRE = Wire(
    lane="anthropic.messages",
    path="/v1/messages",
    transcript_field="messages",
    head_fields=("system", "tools"),
    admit=admit,
    reply_body=reply_body,
    reply_frames=reply_frames,
    error_body=error_body,
)
