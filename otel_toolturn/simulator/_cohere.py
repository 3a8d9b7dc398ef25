"""Cohere's v2 chat as the simulator speaks it (``POST /v2/chat``): a Chat request, Cohere's own reply.

The request is Chat-shaped (``messages`` with ``tool_calls`` and ``tool`` messages), so the Chat
lane's rules judge it; the reply and the stream are Cohere's
(https://docs.cohere.com/reference/chat, https://docs.cohere.com/v2/docs/streaming,
https://docs.cohere.com/docs/tool-use-streaming).

Plain reply: ``{"id", "finish_reason", "message", "usage"}``; the message carries the text as one
``text`` content part, or, with calls, as its ``tool_plan`` beside ``tool_calls`` (``id``,
``type: "function"``, ``function: {name, arguments}``); ``finish_reason`` ``TOOL_CALL``, ``COMPLETE``,
or ``MAX_TOKENS`` when the first call's argument text was cut (later calls left out). ``usage``:
``billed_units`` and ``tokens`` (the prompt's estimate in, the reply's out) and ``cached_tokens``
(the part served from cache, ``_cache``).

Stream, in the provider's order, each frame an ``event:`` named by its ``type``: ``message-start``;
with calls, ``tool-plan-delta`` pieces, then per call ``tool-call-start`` (id, name, empty
arguments), ``tool-call-delta`` argument pieces and ``tool-call-end``; without, ``content-start``,
``content-delta`` pieces and ``content-end``; ``message-end`` with the finish reason and usage.

Errors: ``{"id": …, "message": "invalid request: …"}``, judged in the ``cohere`` dialect of the Chat lane
(``lanes.cohere_chat``) — Cohere's words for a missing tool result are the Chat lane's, after
``invalid request: `` (oracle/langchain-oracle#10 quotes Command A's: "invalid
request: An assistant message with 'tool_calls' must be followed by tool messages responding to each
'tool_call_id'. The following tool_call_ids did not have response messages: …"); the SDK raises its
``BadRequestError`` with this body.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from otel_toolturn.lanes import cohere_chat
from otel_toolturn.simulator._cache import PromptUsage
from otel_toolturn.simulator._chat import chat_wire, tool_calls
from otel_toolturn.simulator._frames import Frame, FrameRole, apply_misbehaviours, pieces
from otel_toolturn.simulator._script import Misbehaviour, ScriptedTurn, token_estimate
from otel_toolturn.simulator._wire import Json, NewId

PATH: Final = "/v2/chat"
ERROR_PREFIX: Final = cohere_chat.ERROR_PREFIX


def reply_body(
    turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool, prompt: PromptUsage
) -> Json:
    """Build the v2 chat response answering ``request`` with ``turn``."""
    del request  # the reply names no model
    calls = tool_calls(turn, new_id=new_id, cut=cut)
    message: Json = {"role": "assistant"}
    if calls:
        if turn.text:
            message["tool_plan"] = turn.text
        message["tool_calls"] = calls
    elif turn.text:
        message["content"] = [{"type": "text", "text": turn.text}]
    output = token_estimate(message)
    return {
        "id": new_id("cohere-"),
        "finish_reason": "MAX_TOKENS" if cut else ("TOOL_CALL" if calls else "COMPLETE"),
        "message": message,
        "usage": {
            "billed_units": {"input_tokens": prompt.tokens, "output_tokens": output},
            "tokens": {"input_tokens": prompt.tokens, "output_tokens": output},
            "cached_tokens": prompt.cached,
        },
    }


def _frame(data: Json, role: FrameRole) -> Frame:
    return Frame(data=data, role=role, event=str(data["type"]))


def reply_frames(
    reply: Mapping[str, object], *, request: Mapping[str, object], misbehaviours: Sequence[Misbehaviour]
) -> list[Frame]:
    """``reply`` as the v2 chat event stream."""
    del request  # nothing in the request changes the events
    raw = reply.get("message")
    message: Mapping[str, object] = raw if isinstance(raw, Mapping) else {}
    opened = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    frames = [_frame({"type": "message-start", "id": reply.get("id"), "delta": {"message": opened}}, "head")]
    calls = message.get("tool_calls")
    listed = calls if isinstance(calls, list) else []
    plan = pieces(str(message.get("tool_plan") or ""), 3)
    frames.extend(_frame({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": p}}}, "content") for p in plan)
    for index, call in enumerate(listed):
        function = call.get("function", {}) if isinstance(call, Mapping) else {}
        start = {**call, "function": {**function, "arguments": ""}}
        frames.append(
            _frame({"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": start}}}, "content")
        )
        for piece in pieces(str(function.get("arguments", "")), 4):
            fragment: Json = {"message": {"tool_calls": {"function": {"arguments": piece}}}}
            frames.append(_frame({"type": "tool-call-delta", "index": index, "delta": fragment}, "arguments"))
        frames.append(_frame({"type": "tool-call-end", "index": index}, "content"))
    content = message.get("content")
    texts = [str(p.get("text", "")) for p in content if isinstance(p, Mapping)] if isinstance(content, list) else []
    if texts:
        opening: Json = {"message": {"content": {"type": "text", "text": ""}}}
        frames.append(_frame({"type": "content-start", "index": 0, "delta": opening}, "content"))
        for piece in pieces("".join(texts), 3):
            text: Json = {"message": {"content": {"text": piece}}}
            frames.append(_frame({"type": "content-delta", "index": 0, "delta": text}, "content"))
        frames.append(_frame({"type": "content-end", "index": 0}, "content"))
    end = {"finish_reason": reply.get("finish_reason"), "usage": reply.get("usage")}
    frames.append(_frame({"type": "message-end", "delta": end}, "finish"))
    late = {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": " late"}}}}
    after_end = [
        _frame(late, "content"),
        _frame({"type": "message-end", "delta": {"finish_reason": "COMPLETE"}}, "finish"),
    ]
    return apply_misbehaviours(frames, misbehaviours, after_end=after_end, bad_frame_event="content-delta")


def error_body(message: str) -> Json:
    """Cohere's 400 body for an invalid chat request (``message``: the dialect's words, ``invalid request: …``)."""
    return {"id": "invalid-request", "message": message if message.startswith(ERROR_PREFIX) else ERROR_PREFIX + message}


WIRE = chat_wire(PATH, dialect="cohere", reply_body=reply_body, reply_frames=reply_frames, error_body=error_body)
