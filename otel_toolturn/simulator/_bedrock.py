"""Amazon Bedrock Runtime Converse as the simulator speaks it (the model is in the path).

Routes (``route``): ``POST /model/{modelId}/converse`` and ``/model/{modelId}/converse-stream`` (the
model id percent-decoded, as botocore encodes ``:`` in it); they become the request's ``model`` and
``stream``. The body is read as botocore sends it: ``messages``, ``system``, ``toolConfig``,
``inferenceConfig``. Requests are not signed-checked: any credentials do.

Plain reply: ``output.message`` (role ``assistant``) with a ``text`` block (when the turn has text) and
one ``toolUse`` block per call (``toolUseId``, ``name``, ``input``); ``stopReason`` ``tool_use``,
``end_turn``, or ``max_tokens`` when the arguments were cut (the cut call and those after it are left
out: Converse's arguments are an object); ``usage`` (``inputTokens`` the uncached part of the prompt's
estimate, ``outputTokens``, ``totalTokens``, and ``cacheReadInputTokens`` when part of the prompt was
served from cache, ``_cache``); ``metrics.latencyMs``.

Stream (``converse-stream``): the AWS event stream binary framing (``_eventstream``), one event per
message: ``messageStart`` (``role``); a text block as ``contentBlockDelta`` text pieces then
``contentBlockStop``; a call as ``contentBlockStart`` (``start.toolUse``: id and name), its
``contentBlockDelta`` pieces of ``toolUse.input`` (the arguments' JSON text) and ``contentBlockStop``;
then ``messageStop`` (``stopReason``) and ``metadata`` (``usage``, ``metrics``). The frame misbehaviours
apply as in every lane (``_frames``); ``no_finish`` leaves out ``messageStop`` and what follows.

Errors: HTTP 400 with the header ``x-amzn-ErrorType: ValidationException:…`` and ``{"message": …}``;
botocore raises them as ``ClientError`` with the code ``ValidationException``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Final, TypedDict
from urllib.parse import unquote

from otel_toolturn.simulator._cache import PromptUsage
from otel_toolturn.simulator._eventstream import CONTENT_TYPE, encode_event
from otel_toolturn.simulator._frames import Frame, FrameRole, apply_misbehaviours, pieces
from otel_toolturn.simulator._script import Misbehaviour, ScriptedTurn, token_estimate
from otel_toolturn.simulator._wire import Json, NewId, Wire, admit_all

PATH: Final = "/model/{modelId}/converse"
"""The lane's documented path; ``route`` reads it and its streaming twin."""

ROUTE: Final = re.compile(r"/model/(?P<model>[^/]+)/(?P<method>converse|converse-stream)")

ERROR_TYPE: Final = "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"
"""The ``x-amzn-ErrorType`` header of the service's refusal of an invalid request."""

LATENCY_MS: Final = 7
"""The latency every reply reports (the simulator answers at once; a fixed value keeps replies deterministic)."""


def route(path: str) -> Mapping[str, object] | None:
    """The request fields ``path`` carries (``model``, ``stream``); ``None`` when it is not this lane's."""
    match = ROUTE.fullmatch(path)
    if match is None:
        return None
    return {"model": unquote(match["model"]), "stream": match["method"] == "converse-stream"}


def reply_body(
    turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool, prompt: PromptUsage
) -> Json:
    """Build the Converse response answering ``request`` with ``turn``."""
    del request
    content: list[Json] = []
    if turn.text:
        content.append({"text": turn.text})
    if not cut:
        content.extend(
            {
                "toolUse": {
                    "toolUseId": call.call_id or new_id("tooluse_"),
                    "name": call.name,
                    "input": dict(call.arguments),
                }
            }
            for call in turn.calls
        )
    stop_reason = "max_tokens" if cut else ("tool_use" if turn.calls else "end_turn")
    output_tokens = token_estimate(content)
    usage: Json = {
        "inputTokens": prompt.tokens - prompt.cached,
        "outputTokens": output_tokens,
        "totalTokens": prompt.tokens + output_tokens,
    }
    if prompt.cached:
        usage["cacheReadInputTokens"] = prompt.cached
        usage["cacheWriteInputTokens"] = 0
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop_reason,
        "usage": usage,
        "metrics": {"latencyMs": LATENCY_MS},
    }


def reply_frames(
    reply: Mapping[str, object], *, request: Mapping[str, object], misbehaviours: Sequence[Misbehaviour]
) -> list[Frame]:
    """``reply`` as the ``converse-stream`` events (each frame's ``event`` is its ``:event-type``)."""
    del request
    blocks = _blocks(reply)
    frames = [_frame("messageStart", {"role": "assistant"}, "head")]
    for index, block in enumerate(blocks):
        frames.extend(_block_frames(index, block))
    frames.append(_frame("messageStop", {"stopReason": reply.get("stopReason")}, "finish"))
    frames.append(_frame("metadata", {"usage": reply.get("usage"), "metrics": reply.get("metrics")}, "trailer"))
    late = len(blocks)
    after_end = [
        _frame("contentBlockDelta", {"contentBlockIndex": late, "delta": {"text": " late"}}),
        _frame("contentBlockStop", {"contentBlockIndex": late}),
        _frame("messageStop", {"stopReason": "end_turn"}, "finish"),
    ]
    return apply_misbehaviours(frames, misbehaviours, after_end=after_end, bad_frame_event="contentBlockDelta")


class ErrorBody(TypedDict):
    """The service's error body, as it sends it with HTTP 400 (the error's type rides in a header)."""

    message: str


def error_body(message: str) -> ErrorBody:
    """The service's error body for an invalid request."""
    return {"message": message}


def _blocks(reply: Mapping[str, object]) -> list[Mapping[str, object]]:
    output = reply.get("output")
    message = output.get("message") if isinstance(output, Mapping) else None
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _block_frames(index: int, block: Mapping[str, object]) -> list[Frame]:
    """The events of one content block: a call's start, deltas and stop; a text's deltas and stop."""
    use = block.get("toolUse")
    stop = _frame("contentBlockStop", {"contentBlockIndex": index})
    if isinstance(use, Mapping):
        start = {"toolUse": {"toolUseId": use.get("toolUseId"), "name": use.get("name")}}
        arguments = json.dumps(use.get("input", {}))
        deltas = [
            _frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": p}}}, "arguments")
            for p in pieces(arguments, 4)
        ]
        return [_frame("contentBlockStart", {"contentBlockIndex": index, "start": start}), *deltas, stop]
    text = str(block.get("text", ""))
    deltas = [_frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": p}}) for p in pieces(text, 3)]
    return [*deltas, stop]


def _frame(event: str, data: Json, role: FrameRole = "content") -> Frame:
    return Frame(data=data, role=role, event=event)


WIRE = Wire(
    lane="bedrock.converse",
    path=PATH,
    transcript_field="messages",
    head_fields=("system", "toolConfig"),
    admit=admit_all,
    reply_body=reply_body,
    reply_frames=reply_frames,
    error_body=error_body,
    route=route,
    error_headers={"x-amzn-ErrorType": ERROR_TYPE},
    stream_content_type=CONTENT_TYPE,
    encode_frame=encode_event,
)
