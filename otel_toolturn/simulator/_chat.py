"""OpenAI Chat Completions as the simulator speaks it (``POST /v1/chat/completions``; ``SUFFIX`` says which others).

Plain reply: a ``chat.completion`` with one choice whose message carries the text (or ``null``)
and the ``tool_calls``; ``finish_reason`` ``tool_calls``, ``stop``, or ``length`` when the first
call's argument text was cut (later calls are left out). ``usage.prompt_tokens`` is the prompt's
estimate, ``usage.prompt_tokens_details.cached_tokens`` the part served from cache (``_cache``).

Stream, in the provider's order: a first chunk with the role; text chunks; per call a chunk with
its index, id, name and empty arguments, then argument chunks by index; a chunk with an empty
delta and the finish reason; the usage chunk (empty ``choices``) when the request asked for it with
``stream_options.include_usage``; ``data: [DONE]``. No ``event:`` lines.

Errors: ``{"error": {"message": …, "type": "invalid_request_error", "param": "messages", "code": null}}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Final, TypedDict

from otel_toolturn._vocab import Dialect
from otel_toolturn.simulator._cache import PromptUsage
from otel_toolturn.simulator._frames import Frame, FrameRole, apply_misbehaviours, pieces
from otel_toolturn.simulator._script import Misbehaviour, ScriptedTurn, token_estimate
from otel_toolturn.simulator._wire import SSE_CONTENT_TYPE, Json, NewId, ReplyBody, ReplyFrames, Wire, admit_all

CREATED: Final = 1_767_225_600
"""The fixed ``created`` stamp of every reply (replies do not depend on the clock)."""


def tool_calls(turn: ScriptedTurn, *, new_id: NewId, cut: bool) -> list[Json]:
    """The turn's calls as Chat's ``tool_calls`` (``cut``: only the first, its argument text cut in half)."""
    calls: list[Json] = []
    for call in turn.calls:
        arguments = json.dumps(dict(call.arguments))
        if cut:
            arguments = arguments[: len(arguments) // 2]
        calls.append(
            {
                "id": call.call_id or new_id("call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": arguments},
            }
        )
        if cut:
            break
    return calls


def reply_body(
    turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool, prompt: PromptUsage
) -> Json:
    """Build the ``chat.completion`` object answering ``request`` with ``turn``."""
    reply_id = new_id("chatcmpl-")
    calls = tool_calls(turn, new_id=new_id, cut=cut)
    message: Json = {"role": "assistant", "content": turn.text or None, "refusal": None}
    if calls:
        message["tool_calls"] = calls
    completion = token_estimate(message)
    return {
        "id": reply_id,
        "object": "chat.completion",
        "created": CREATED,
        "model": turn.model or str(request.get("model", "")),
        "system_fingerprint": None,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "length" if cut else ("tool_calls" if calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt.tokens,
            "completion_tokens": completion,
            "total_tokens": prompt.tokens + completion,
            "prompt_tokens_details": {"cached_tokens": prompt.cached},
        },
    }


def reply_frames(
    reply: Mapping[str, object],
    *,
    request: Mapping[str, object],
    misbehaviours: Sequence[Misbehaviour],
    whole_calls: bool = False,
) -> list[Frame]:
    """``reply`` as the chunk stream; ``whole_calls``: each tool call whole in one chunk (Mistral's), not in pieces."""
    options = request.get("stream_options")
    with_usage = isinstance(options, Mapping) and options.get("include_usage") is True
    choice = _first_choice(reply)
    message = choice.get("message")
    message = message if isinstance(message, Mapping) else {}
    text = message.get("content")

    def envelope(choices: list[Json], usage: object) -> Json:
        data: Json = {
            "id": reply.get("id"),
            "object": "chat.completion.chunk",
            "created": reply.get("created"),
            "model": reply.get("model"),
            "system_fingerprint": None,
            "choices": choices,
        }
        if with_usage:
            data["usage"] = usage
        return data

    def chunk(delta: Json, role: FrameRole, finish: object = None) -> Frame:
        choices: list[Json] = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        return Frame(data=envelope(choices, None), role=role)

    frames = [chunk({"role": "assistant", "content": "" if text else None, "refusal": None}, "head")]
    frames.extend(chunk({"content": p}, "content") for p in pieces(str(text or ""), 3))
    calls = message.get("tool_calls")
    for index, call in enumerate(calls if isinstance(calls, list) else []):
        function = call.get("function", {}) if isinstance(call, Mapping) else {}
        opened = dict(function) if whole_calls else {**function, "arguments": ""}
        frames.append(
            chunk(
                {"tool_calls": [{"index": index, "id": call["id"], "type": "function", "function": opened}]},
                "content",
            )
        )
        frames.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}, "arguments")
            for p in ([] if whole_calls else pieces(str(function.get("arguments", "")), 4))
        )
    frames.append(chunk({}, "finish", choice.get("finish_reason")))
    if with_usage:
        frames.append(Frame(data=envelope([], reply.get("usage")), role="trailer"))
    frames.append(Frame(data="[DONE]", role="done"))
    after_end = [chunk({"content": " late"}, "content"), chunk({}, "finish", "stop")]
    return apply_misbehaviours(frames, misbehaviours, after_end=after_end, bad_frame_event=None)


class ErrorDetail(TypedDict):
    """The ``error`` member of OpenAI's error body."""

    message: str
    type: str
    param: str | None
    code: str | None


class ErrorBody(TypedDict):
    """OpenAI's error body, as its API sends it with a 4xx status."""

    error: ErrorDetail


def error_body(message: str) -> ErrorBody:
    """OpenAI's error body for an invalid Chat Completions request."""
    return {"error": {"message": message, "type": "invalid_request_error", "param": "messages", "code": None}}


def _first_choice(reply: Mapping[str, object]) -> Mapping[str, object]:
    choices = reply.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        return choices[0]
    return {}


SUFFIX: Final = "/chat/completions"
"""The end of every path served, under any prefix: OpenAI's ``/v1/chat/completions``; Groq's
``/openai/v1/…``; the Hugging Face router's ``/v1/…`` and its per-provider ``/{provider}/v1/…`` and
``/hf-inference/models/{model}/v1/…``; an Azure AI inference endpoint's ``/chat/completions`` (serverless)
and ``/models/chat/completions`` (Foundry), with its ``api-version`` in the query."""


def route(path: str) -> Mapping[str, object] | None:
    """The Chat lane serves each path ending in ``SUFFIX``; none carries a request field (``None``: not this lane's)."""
    return {} if path.endswith(SUFFIX) else None


def chat_wire(
    path: str,
    *,
    reply_body: ReplyBody,
    reply_frames: ReplyFrames,
    error_body: Callable[[str], Mapping[str, object]],
    dialect: Dialect | None = None,
    route: Callable[[str], Mapping[str, object] | None] | None = None,
    stream_content_type: str = SSE_CONTENT_TYPE,
    encode_frame: Callable[[Frame], bytes] = Frame.encode,
) -> Wire:
    """A wire whose requests are Chat Completions' ``messages`` (tools ahead of them), judged in ``dialect``."""
    return Wire(
        lane="openai.chat_completions",
        dialect=dialect,
        path=path,
        transcript_field="messages",
        head_fields=("tools",),
        admit=admit_all,
        reply_body=reply_body,
        reply_frames=reply_frames,
        error_body=error_body,
        route=route,
        stream_content_type=stream_content_type,
        encode_frame=encode_frame,
    )


WIRE = chat_wire(
    "/v1/chat/completions", reply_body=reply_body, reply_frames=reply_frames, error_body=error_body, route=route
)
