"""OpenAI Responses as the simulator speaks it (``POST /v1/responses``).

Plain reply: a ``response`` whose ``output`` holds a ``message`` item (when the turn has text) and
one ``function_call`` item per call (item id ``fc_…``, ``call_id``, ``name``, ``arguments``);
``status`` ``completed``, or ``incomplete`` with ``incomplete_details.reason`` ``max_output_tokens``
when the first call's argument text was cut (later calls are left out). ``usage.input_tokens`` is
the prompt's estimate (the items a ``previous_response_id`` brings back included),
``usage.input_tokens_details.cached_tokens`` the part served from cache (``_cache``).

Stream, in the provider's order, every frame with its ``event:`` name and a ``sequence_number``
counting from 0: ``response.created``, ``response.in_progress``; per message item
``output_item.added``, ``content_part.added``, ``output_text.delta``…, ``output_text.done``,
``content_part.done``, ``output_item.done``; per call ``output_item.added``,
``function_call_arguments.delta``…, ``function_call_arguments.done``, ``output_item.done``;
``response.completed`` with the whole response.

Errors: ``{"error": {"message": …, "type": "invalid_request_error", "param": "input", "code": null}}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from otel_toolturn.simulator._cache import PromptUsage
from otel_toolturn.simulator._chat import CREATED, ErrorBody
from otel_toolturn.simulator._frames import Frame, FrameRole, apply_misbehaviours, number_sequence, pieces
from otel_toolturn.simulator._script import Misbehaviour, ScriptedTurn, token_estimate
from otel_toolturn.simulator._wire import Json, NewId, Wire, admit_all


def reply_body(
    turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool, prompt: PromptUsage
) -> Json:
    """Build the ``response`` object answering ``request`` with ``turn``."""
    reply_id = new_id("resp_")
    output: list[Json] = []
    if turn.text:
        output.append(
            {
                "id": new_id("msg_"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": turn.text}],
            }
        )
    for call in turn.calls:
        arguments = json.dumps(dict(call.arguments))
        output.append(
            {
                "id": new_id("fc_"),
                "type": "function_call",
                "status": "incomplete" if cut else "completed",
                "arguments": arguments[: len(arguments) // 2] if cut else arguments,
                "call_id": call.call_id or new_id("call_"),
                "name": call.name,
            }
        )
        if cut:
            break
    completion = token_estimate(output)
    return {
        "id": reply_id,
        "object": "response",
        "created_at": CREATED,
        "status": "incomplete" if cut else "completed",
        "background": False,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": turn.model or str(request.get("model", "")),
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": request.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": request.get("tools", []),
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": prompt.tokens,
            "input_tokens_details": {"cached_tokens": prompt.cached},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt.tokens + completion,
        },
        "user": None,
        "metadata": {},
    }


def reply_frames(
    reply: Mapping[str, object], *, request: Mapping[str, object], misbehaviours: Sequence[Misbehaviour]
) -> list[Frame]:
    """``reply`` as the Responses event stream."""
    del request
    output = reply.get("output")
    items = [i for i in output if isinstance(i, Mapping)] if isinstance(output, list) else []
    opening = {**reply, "status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
    frames = [
        _frame({"type": "response.created", "response": opening}, "head"),
        _frame({"type": "response.in_progress", "response": opening}, "head"),
    ]
    for index, item in enumerate(items):
        frames.extend(_item_frames(index, item))
    frames.append(_frame({"type": "response.completed", "response": dict(reply)}, "finish"))
    late = {"id": "msg_late", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
    after_end = [
        _frame({"type": "response.output_item.added", "output_index": len(items), "item": late}),
        _frame(_text_event("delta", late, len(items), " late")),
        _frame({"type": "response.completed", "response": dict(reply)}, "finish"),
    ]
    edited = apply_misbehaviours(
        frames, misbehaviours, after_end=after_end, bad_frame_event="response.output_text.delta"
    )
    return number_sequence(edited)


def error_body(message: str) -> ErrorBody:
    """OpenAI's error body for an invalid Responses request."""
    return {"error": {"message": message, "type": "invalid_request_error", "param": "input", "code": None}}


def _item_frames(index: int, item: Mapping[str, object]) -> list[Frame]:
    """Make the frames that add, fill and finish one output item."""
    if item.get("type") == "function_call":
        arguments = str(item.get("arguments", ""))
        base = {"item_id": item.get("id"), "output_index": index}
        return [
            _frame(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "arguments": ""},
                }
            ),
            *(
                _frame({"type": "response.function_call_arguments.delta", **base, "delta": p}, "arguments")
                for p in pieces(arguments, 4)
            ),
            _frame({"type": "response.function_call_arguments.done", **base, "arguments": arguments}),
            _frame({"type": "response.output_item.done", "output_index": index, "item": dict(item)}),
        ]
    content = item.get("content")
    parts = [p for p in content if isinstance(p, Mapping)] if isinstance(content, list) else []
    text = "".join(str(p.get("text", "")) for p in parts)
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    where = {"item_id": item.get("id"), "output_index": index, "content_index": 0}
    return [
        _frame(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "status": "in_progress", "content": []},
            }
        ),
        _frame({"type": "response.content_part.added", **where, "part": {**part, "text": ""}}),
        *(_frame(_text_event("delta", item, index, p)) for p in pieces(text, 3)),
        _frame(_text_event("done", item, index, text)),
        _frame({"type": "response.content_part.done", **where, "part": part}),
        _frame({"type": "response.output_item.done", "output_index": index, "item": dict(item)}),
    ]


def _text_event(kind: str, item: Mapping[str, object], index: int, text: str) -> Json:
    """``response.output_text.delta`` (``delta``) or ``.done`` (``text``) for the item's first part."""
    return {
        "type": f"response.output_text.{kind}",
        "item_id": item.get("id"),
        "output_index": index,
        "content_index": 0,
        "logprobs": [],
        ("delta" if kind == "delta" else "text"): text,
    }


def _frame(data: Json, role: FrameRole = "content") -> Frame:
    return Frame(data=data, role=role, event=str(data["type"]))


WIRE = Wire(
    lane="openai.responses",
    path="/v1/responses",
    transcript_field="input",
    head_fields=("instructions", "tools"),
    admit=admit_all,
    reply_body=reply_body,
    reply_frames=reply_frames,
    error_body=error_body,
)
