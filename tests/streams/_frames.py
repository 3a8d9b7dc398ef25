"""Hand-made stream frames per lane, as the raw SSE JSON the providers send (test data as code).

Each lane has small builders for its frames and ``sse_bytes`` to serialise a list of frames into
the body a provider would send, so the same stream can be fed raw or through the real SDK.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from otel_toolturn._vocab import Lane
from tests.openai_bodies import chat_envelope, response_envelope

Frame = dict[str, object]
MODEL = "model-a"


def sse_bytes(lane: Lane, frames: Sequence[Frame | str]) -> bytes:
    """The SSE body of ``frames`` (a ``str`` frame is sent as its raw data); Chat ends with ``[DONE]``."""
    out: list[str] = []
    for frame in frames:
        data = frame if isinstance(frame, str) else json.dumps(frame)
        kind = None if isinstance(frame, str) else frame.get("type")
        if lane == "anthropic.messages" and isinstance(kind, str):
            out.append(f"event: {kind}\n")
        out.append(f"data: {data}\n\n")
    if lane == "openai.chat_completions":
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


# --- anthropic.messages -----------------------------------------------------------------------


def a_start(model: str = MODEL, input_tokens: int = 10, *, transformations: list[Frame] | None = None) -> Frame:
    """A ``message_start``; ``transformations``: its message's ``input_transformations`` (absent when ``None``)."""
    message: Frame = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    if transformations is not None:
        message["input_transformations"] = transformations
    return {"type": "message_start", "message": message}


def a_text_start(index: int) -> Frame:
    return {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}


def a_text(index: int, text: str) -> Frame:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}


def a_tool_start(index: int, call_id: str, name: str, kind: str = "tool_use") -> Frame:
    block = {"type": kind, "id": call_id, "name": name, "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def a_json(index: int, part: str) -> Frame:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": part}}


def a_block_stop(index: int) -> Frame:
    return {"type": "content_block_stop", "index": index}


def a_delta(stop_reason: str | None, output_tokens: int = 20, *, transformations: list[Frame] | None = None) -> Frame:
    """A ``message_delta``; ``transformations``: its ``input_transformations`` (absent when ``None``)."""
    frame: Frame = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }
    if transformations is not None:
        frame["input_transformations"] = transformations
    return frame


def a_dropped(path: str, reason: str = "prefix_binding_mismatch", kind: str = "thinking_dropped") -> Frame:
    """One ``input_transformations`` entry: a thinking block the provider dropped."""
    return {"type": kind, "path": path, "reason": reason}


def a_stop() -> Frame:
    return {"type": "message_stop"}


def a_error(kind: str = "overloaded_error") -> Frame:
    return {"type": "error", "error": {"type": kind, "message": "Overloaded"}}


def a_tool_turn(call_id: str, name: str, parts: Sequence[str], *, close: bool, stop: str | None) -> list[Frame]:
    """A turn with a text block and one call whose arguments arrive in ``parts``."""
    frames = [a_start(), a_text_start(0), a_text(0, "Looking."), a_block_stop(0), a_tool_start(1, call_id, name)]
    frames += [a_json(1, part) for part in parts]
    if close:
        frames.append(a_block_stop(1))
    if stop is not None:
        frames += [a_delta(stop), a_stop()]
    return frames


# --- openai.chat_completions ------------------------------------------------------------------


def c_chunk(*choices: Frame, model: str = MODEL, usage: Frame | None = None) -> Frame:
    return {**chat_envelope(model, list(choices), chunk=True), "usage": usage}


def c_choice(
    index: int = 0,
    *,
    content: str | None = None,
    tool_calls: list[Frame] | None = None,
    finish: str | None = None,
) -> Frame:
    delta: Frame = {}
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    return {"index": index, "delta": delta, "finish_reason": finish}


def c_call(index: int, *, call_id: str | None = None, name: str | None = None, arguments: str | None = None) -> Frame:
    call: Frame = {"index": index}
    function: Frame = {}
    if call_id is not None:
        call["id"] = call_id
        call["type"] = "function"
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    if function:
        call["function"] = function
    return call


def c_usage(prompt: int = 10, completion: int = 20) -> Frame:
    return c_chunk(
        usage={"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    )


def c_tool_turn(call_id: str, name: str, parts: Sequence[str], *, finish: str | None) -> list[Frame]:
    """A turn with one call whose arguments arrive in ``parts``, then ``finish`` (if any) and usage."""
    frames = [c_chunk(c_choice(tool_calls=[c_call(0, call_id=call_id, name=name, arguments="")]))]
    frames += [c_chunk(c_choice(tool_calls=[c_call(0, arguments=part)])) for part in parts]
    if finish is not None:
        frames += [c_chunk(c_choice(finish=finish)), c_usage()]
    return frames


# --- openai.responses -------------------------------------------------------------------------


def _response(status: str, model: str, usage: Frame | None, reason: str | None = None) -> Frame:
    return {
        **response_envelope(model, status, []),
        "incomplete_details": {"reason": reason} if reason else None,
        "usage": usage,
    }


def r_created(model: str = MODEL) -> Frame:
    return {"type": "response.created", "sequence_number": 0, "response": _response("in_progress", model, None)}


def r_item_added(output_index: int, call_id: str, name: str) -> Frame:
    item = {"type": "function_call", "id": f"fc_{output_index}", "call_id": call_id, "name": name, "arguments": ""}
    return {"type": "response.output_item.added", "output_index": output_index, "item": item}


def r_args(output_index: int, delta: str) -> Frame:
    return {
        "type": "response.function_call_arguments.delta",
        "item_id": f"fc_{output_index}",
        "output_index": output_index,
        "delta": delta,
    }


def r_args_done(output_index: int, arguments: str) -> Frame:
    return {
        "type": "response.function_call_arguments.done",
        "item_id": f"fc_{output_index}",
        "output_index": output_index,
        "arguments": arguments,
    }


def r_item_done(output_index: int, call_id: str, name: str, arguments: str) -> Frame:
    item = {
        "type": "function_call",
        "id": f"fc_{output_index}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }
    return {"type": "response.output_item.done", "output_index": output_index, "item": item}


def r_text(delta: str) -> Frame:
    return {
        "type": "response.output_text.delta",
        "item_id": "msg_1",
        "output_index": 0,
        "content_index": 0,
        "delta": delta,
    }


def r_end(
    status: str = "completed", *, model: str = MODEL, reason: str | None = None, output_tokens: int = 20
) -> Frame:
    usage: Frame = {"input_tokens": 10, "output_tokens": output_tokens, "total_tokens": 10 + output_tokens}
    kind = {"completed": "response.completed", "incomplete": "response.incomplete", "failed": "response.failed"}[status]
    return {"type": kind, "response": _response(status, model, usage, reason)}


def r_tool_turn(call_id: str, name: str, parts: Sequence[str], *, done: bool, end: str | None) -> list[Frame]:
    """A turn with one call whose arguments arrive in ``parts``; ``done`` sends both done frames."""
    frames = [r_created(), r_item_added(0, call_id, name)]
    frames += [r_args(0, part) for part in parts]
    if done:
        text = "".join(parts)
        frames += [r_args_done(0, text), r_item_done(0, call_id, name, text)]
    if end is not None:
        frames.append(r_end(end, reason="max_output_tokens" if end == "incomplete" else None))
    return frames


# --- gemini.generate_content ------------------------------------------------------------------


def g_call(
    name: str | None, args: Frame | None = None, *, call_id: str | None = None, signature: str | None = None
) -> Frame:
    """A ``functionCall`` part (REST spelling); ``signature``: its ``thoughtSignature``."""
    call: Frame = {}
    if name is not None:
        call["name"] = name
    if args is not None:
        call["args"] = args
    if call_id is not None:
        call["id"] = call_id
    part: Frame = {"functionCall": call}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def g_text(text: str, *, thought: bool = False) -> Frame:
    return {"text": text, "thought": True} if thought else {"text": text}


def g_chunk(
    *parts: Frame,
    finish: str | int | None = None,
    model: str = MODEL,
    usage: Frame | None = None,
    index: int = 0,
) -> Frame:
    """One ``GenerateContentResponse`` chunk of one candidate (REST spelling), usage 10 in / 20 out by default."""
    candidate: Frame = {"content": {"role": "model", "parts": list(parts)}, "index": index}
    if finish is not None:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 20, "totalTokenCount": 30}
        if usage is None
        else usage,
        "modelVersion": model,
        "responseId": "resp-g1",
    }


def g_tool_turn(*calls: Frame, finish: str | None) -> list[Frame]:
    """A turn with a text chunk, then one chunk per call, the last carrying ``finish`` (if any)."""
    frames = [g_chunk(g_text("Looking."))]
    frames += [g_chunk(call) for call in calls[:-1]]
    frames.append(g_chunk(calls[-1], finish=finish))
    return frames


def snake(value: object) -> object:
    """A REST (camelCase) frame in the SDK's snake_case dict spelling (call arguments kept as they are)."""
    if isinstance(value, dict):
        return {
            re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower(): item if key == "args" else snake(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [snake(item) for item in value]
    return value
