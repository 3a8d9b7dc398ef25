"""Hand-made provider responses (JSON and SSE) per lane, and a mock transport that keeps request bodies.

Everything the SDK clients receive in the instrumentation tests is built here: a response with
text, or with tool calls, as a whole JSON body or as a server-sent-event stream in the provider's
own event sequence, so the SDKs' own accumulators (``get_final_message`` and friends) accept it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import anthropic
import httpx2
import openai
from google import genai
from google.genai import types as genai_types

from otel_toolturn import Lane
from tests.openai_bodies import chat_envelope, response_envelope

MODEL: Final = "model-a"
KEY: Final = "sk-test-key-never-exported"


@dataclass(frozen=True)
class Call:
    call_id: str
    name: str
    arguments: str = "{}"


def _sse(events: Sequence[tuple[str | None, object]]) -> bytes:
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append(f"{head}data: {payload}\n\n")
    return "".join(out).encode()


def _anthropic_message(model: str, text: str, calls: Sequence[Call]) -> dict[str, object]:
    content: list[object] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": c.call_id, "name": c.name, "input": json.loads(c.arguments)} for c in calls]
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 7},
    }


def _anthropic_sse(model: str, text: str, calls: Sequence[Call], *, cut: bool) -> bytes:
    events: list[tuple[str | None, object]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    **_anthropic_message(model, "", ()),
                    "stop_reason": None,
                    "usage": {"input_tokens": 5, "output_tokens": 1},
                },
            },
        )
    ]
    index = 0
    if text:
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        index = 1
    for call in calls:
        block = {"type": "tool_use", "id": call.call_id, "name": call.name, "input": {}}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": call.arguments},
                },
            ),
        ]
        if not cut:
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    if not cut:
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 7},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    return _sse(events)


def _chat_json(model: str, text: str, calls: Sequence[Call]) -> dict[str, object]:
    message: dict[str, object] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls
        ]
    choice: dict[str, object] = {
        "index": 0,
        "finish_reason": "tool_calls" if calls else "stop",
        "message": message,
        "logprobs": None,
    }
    return {**chat_envelope(model, [choice]), "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}}


def _chat_sse(model: str, text: str, calls: Sequence[Call], *, cut: bool) -> bytes:
    def chunk(delta: dict[str, object], finish: str | None) -> dict[str, object]:
        return chat_envelope(
            model, [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], chunk=True
        )

    events: list[tuple[str | None, object]] = [(None, chunk({"role": "assistant", "content": ""}, None))]
    if text:
        events.append((None, chunk({"content": text}, None)))
    for index, call in enumerate(calls):
        head = {
            "index": index,
            "id": call.call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append((None, chunk({"tool_calls": [head]}, None)))
        events.append(
            (None, chunk({"tool_calls": [{"index": index, "function": {"arguments": call.arguments}}]}, None))
        )
    if not cut:
        events.append((None, chunk({}, "tool_calls" if calls else "stop")))
        events.append((None, "[DONE]"))
    return _sse(events)


def _responses_output(text: str, calls: Sequence[Call]) -> list[dict[str, object]]:
    output: list[dict[str, object]] = []
    if text:
        output.append(
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    for index, call in enumerate(calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{index}",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
                "status": "completed",
            }
        )
    return output


def _responses_json(model: str, text: str, calls: Sequence[Call], *, status: str = "completed") -> dict[str, object]:
    return {
        **response_envelope(model, status, _responses_output(text, calls) if status == "completed" else []),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 5,
            "output_tokens": 7,
            "total_tokens": 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _responses_sse(model: str, text: str, calls: Sequence[Call], *, cut: bool) -> bytes:
    events: list[tuple[str | None, object]] = []

    def add(kind: str, **data: object) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **data}))

    add("response.created", response=_responses_json(model, "", (), status="in_progress"))
    index = 0
    if text:
        item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}
        add("response.output_item.added", output_index=0, item=item)
        part = {"type": "output_text", "text": "", "annotations": []}
        add("response.content_part.added", item_id="msg_1", output_index=0, content_index=0, part=part)
        add("response.output_text.delta", item_id="msg_1", output_index=0, content_index=0, delta=text, logprobs=[])
        add("response.output_text.done", item_id="msg_1", output_index=0, content_index=0, text=text, logprobs=[])
        done_part = {"type": "output_text", "text": text, "annotations": []}
        add("response.content_part.done", item_id="msg_1", output_index=0, content_index=0, part=done_part)
        add("response.output_item.done", output_index=0, item=_responses_output(text, ())[0])
        index = 1
    for number, call in enumerate(calls):
        item_id = f"fc_{number}"
        item = {
            "type": "function_call",
            "id": item_id,
            "call_id": call.call_id,
            "name": call.name,
            "arguments": "",
            "status": "in_progress",
        }
        add("response.output_item.added", output_index=index, item=item)
        add("response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=call.arguments)
        if not cut:
            add("response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=call.arguments)
            add(
                "response.output_item.done",
                output_index=index,
                item={**item, "arguments": call.arguments, "status": "completed"},
            )
        index += 1
    if not cut:
        add("response.completed", response=_responses_json(model, text, calls))
    return _sse(events)


def _gemini_json(model: str, text: str) -> dict[str, object]:
    return {
        "candidates": [{"index": 0, "content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 7, "totalTokenCount": 12},
        "modelVersion": model,
        "responseId": "resp-1",
    }


def respond(
    lane: Lane, *, stream: bool, model: str = MODEL, text: str = "done", calls: Sequence[Call] = (), cut: bool = False
) -> httpx2.Response:
    """A provider response in ``lane``: whole JSON, or an SSE stream (``cut``: no closing frames).

    Gemini: text only, its stream one frame holding the whole response (``calls`` and ``cut`` do not apply).
    """
    if stream:
        if lane == "gemini.generate_content":
            body = _sse([(None, _gemini_json(model, text))])
        elif lane == "anthropic.messages":
            body = _anthropic_sse(model, text, calls, cut=cut)
        elif lane == "openai.chat_completions":
            body = _chat_sse(model, text, calls, cut=cut)
        else:
            body = _responses_sse(model, text, calls, cut=cut)
        return httpx2.Response(
            200, content=body, headers={"content-type": "text/event-stream", "x-request-id": "req_1"}
        )
    if lane == "gemini.generate_content":
        payload = _gemini_json(model, text)
    elif lane == "anthropic.messages":
        payload = _anthropic_message(model, text, calls)
    elif lane == "openai.chat_completions":
        payload = _chat_json(model, text, calls)
    else:
        payload = _responses_json(model, text, calls)
    return httpx2.Response(200, json=payload, headers={"x-request-id": "req_1"})


Responder = Callable[[Lane, dict[str, object]], httpx2.Response]


def _default(lane: Lane, body: dict[str, object]) -> httpx2.Response:
    return respond(lane, stream=bool(body.get("stream")))


GEMINI_BASE_URL: Final = "http://gemini.invalid"
"""The base URL the Gemini client is given (no request leaves the mock transport)."""


def lane_of(request: httpx2.Request) -> Lane:
    """The lane a request to the mock transport speaks, from its path."""
    path = request.url.path
    if path.endswith((":generateContent", ":streamGenerateContent")):
        return "gemini.generate_content"
    if path.endswith("/messages"):
        return "anthropic.messages"
    if path.endswith("/chat/completions"):
        return "openai.chat_completions"
    return "openai.responses"


@dataclass
class Wire:
    """A mock transport: keeps each request's body bytes and headers, answers with ``responder``."""

    responder: Responder = _default
    bodies: list[bytes] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = request.read()
        self.bodies.append(body)
        self.headers.append(dict(request.headers))
        lane = lane_of(request)
        loaded = json.loads(body)
        if lane == "gemini.generate_content" and request.url.path.endswith(":streamGenerateContent"):
            loaded["stream"] = True  # Gemini says it in the path, the other lanes in the body
        return self.responder(lane, loaded)

    def body(self, index: int = -1) -> dict[str, Any]:
        loaded = json.loads(self.bodies[index])
        assert isinstance(loaded, dict)
        return loaded

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    def openai(self) -> Any:
        return openai.OpenAI(api_key=KEY, http_client=httpx2.Client(transport=self.transport()), max_retries=0)

    def async_openai(self) -> Any:
        return openai.AsyncOpenAI(
            api_key=KEY, http_client=httpx2.AsyncClient(transport=self.transport()), max_retries=0
        )

    def anthropic(self, *, open_telemetry: Any = None) -> Any:
        return anthropic.Anthropic(
            api_key=KEY,
            http_client=httpx2.Client(transport=self.transport()),
            max_retries=0,
            open_telemetry=open_telemetry,
        )

    def async_anthropic(self, *, open_telemetry: Any = None) -> Any:
        return anthropic.AsyncAnthropic(
            api_key=KEY,
            http_client=httpx2.AsyncClient(transport=self.transport()),
            max_retries=0,
            open_telemetry=open_telemetry,
        )

    def gemini(self) -> genai.Client:
        """A google-genai client (Gemini API, not Vertex) whose requests reach this transport."""
        options = genai_types.HttpOptions(
            base_url=GEMINI_BASE_URL, httpx_client=httpx2.Client(transport=self.transport())
        )
        return genai.Client(api_key=KEY, http_options=options)
