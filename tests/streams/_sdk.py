"""The real SDK clients over a mock transport serving recorded bytes (test support; no network).

google-genai has no stream accumulator: its chunks are compared with the raw frames directly.
"""

from __future__ import annotations

import json
from typing import Final

import anthropic
import httpx
import httpx2
import openai
from anthropic.types import Message, MessageParam
from google import genai
from google.genai import types as genai_types
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from openai.types.responses import Response

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import StreamReport, Usage, observer_for

KEY: Final = "test-key"
SDK_MODEL: Final = "test-model"
"""The model the SDK call names (the transport ignores it); the observer gets the recorded one."""
PROMPT: Final = "hi"


def _http(body: bytes, content_type: str) -> httpx2.Client:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": content_type}, content=body)

    return httpx2.Client(transport=httpx2.MockTransport(handler))


def anthropic_client(body: bytes, content_type: str = "text/event-stream") -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, http_client=_http(body, content_type), max_retries=0)


def openai_client(body: bytes, content_type: str = "text/event-stream") -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY, http_client=_http(body, content_type), max_retries=0)


def gemini_client(body: bytes, content_type: str = "text/event-stream") -> genai.Client:
    """The real google-genai client whose every request answers ``body`` (the SDK sends through ``httpx``)."""

    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, content=body)

    http = httpx.Client(transport=httpx.MockTransport(handler))
    return genai.Client(api_key=KEY, http_options=genai_types.HttpOptions(httpx_client=http))


def gemini_async_client(body: bytes) -> genai.Client:
    """As ``gemini_client``, for the SDK's ``client.aio`` surface."""

    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return genai.Client(api_key=KEY, http_options=genai_types.HttpOptions(httpx_async_client=http))


def gemini_response(body: bytes) -> genai_types.GenerateContentResponse:
    """The SDK's own ``GenerateContentResponse`` over a non-streamed ``body``."""
    return gemini_client(body, "application/json").models.generate_content(model=SDK_MODEL, contents=PROMPT)


ANTHROPIC_MESSAGES: Final[list[MessageParam]] = [{"role": "user", "content": PROMPT}]
CHAT_MESSAGES: Final[list[ChatCompletionMessageParam]] = [{"role": "user", "content": PROMPT}]


def sdk_events(lane: Lane, body: bytes) -> list[object]:
    """The event objects the SDK's plain ``stream=True`` iteration yields over ``body`` (no accumulator)."""
    if lane == "anthropic.messages":
        client = anthropic_client(body)
        return list(client.messages.create(model=SDK_MODEL, max_tokens=1024, messages=ANTHROPIC_MESSAGES, stream=True))
    if lane == "openai.chat_completions":
        chat = openai_client(body).chat.completions
        return list(chat.create(model=SDK_MODEL, messages=CHAT_MESSAGES, stream=True))
    if lane == "gemini.generate_content":
        return list(gemini_client(body).models.generate_content_stream(model=SDK_MODEL, contents=PROMPT))
    return list(openai_client(body).responses.create(model=SDK_MODEL, input=PROMPT, stream=True))


def helper_events(lane: Lane, body: bytes) -> list[object]:
    """Every event the SDK's stream helper yields over ``body``, its own events and wrappers included.

    The helpers: ``messages.stream()``, ``chat.completions.stream()``, ``responses.stream()``.
    """
    if lane == "anthropic.messages":
        with anthropic_client(body).messages.stream(model=SDK_MODEL, max_tokens=1024, messages=ANTHROPIC_MESSAGES) as s:
            return list(s)
    if lane == "openai.chat_completions":
        with openai_client(body).chat.completions.stream(model=SDK_MODEL, messages=CHAT_MESSAGES) as c:
            return list(c)
    with openai_client(body).responses.stream(model=SDK_MODEL, input=PROMPT) as r:
        return list(r)


SDK_FAILURES: Final = (
    ValueError,
    RuntimeError,
    IndexError,
    AttributeError,
    TypeError,
    anthropic.APIError,
    openai.APIError,
)


def sdk_final(lane: Lane, body: bytes) -> object:
    """The SDK's own accumulated final result over ``body``, or the exception its accumulator raised.

    Anthropic: ``MessageStream.get_final_message()``; Chat Completions: ``ChatCompletionStreamState``
    fed every chunk; Responses: the Responses stream's ``get_final_response()``.
    """
    try:
        if lane == "anthropic.messages":
            messages = anthropic_client(body).messages
            with messages.stream(model=SDK_MODEL, max_tokens=1024, messages=ANTHROPIC_MESSAGES) as s:
                return s.get_final_message()
        if lane == "openai.chat_completions":
            state: ChatCompletionStreamState[object] = ChatCompletionStreamState()
            chat = openai_client(body).chat.completions
            for chunk in chat.create(model=SDK_MODEL, messages=CHAT_MESSAGES, stream=True):
                state.handle_chunk(chunk)
            return state.get_final_completion()
        with openai_client(body).responses.stream(model=SDK_MODEL, input=PROMPT) as r:
            return r.get_final_response()
    except SDK_FAILURES as error:
        return error


def report_of(lane: Lane, events: list[object], requested_model: str | None) -> StreamReport:
    """Feed ``events`` one at a time to a fresh observer of ``lane``; its report."""
    observer = observer_for(lane, requested_model=requested_model)
    for event in events:
        observer.feed(event)
    return observer.finish()


def anthropic_message(body: bytes) -> Message:
    client = anthropic_client(body, "application/json")
    return client.messages.create(model=SDK_MODEL, max_tokens=1024, messages=ANTHROPIC_MESSAGES)


def chat_completion(body: bytes) -> ChatCompletion:
    return openai_client(body, "application/json").chat.completions.create(model=SDK_MODEL, messages=CHAT_MESSAGES)


def responses_response(body: bytes) -> Response:
    return openai_client(body, "application/json").responses.create(model=SDK_MODEL, input=PROMPT)


def sdk_calls(final: object) -> list[tuple[str, str, object]]:
    """The SDK's own final result's calls as ``(id, name, arguments)`` (arguments parsed from JSON text)."""
    if isinstance(final, Message):
        return [(b.id, b.name, b.input) for b in final.content if b.type == "tool_use"]
    if isinstance(final, ChatCompletion):
        return [
            (call.id, call.function.name, json.loads(call.function.arguments))
            for choice in sorted(final.choices, key=lambda c: c.index)
            for call in choice.message.tool_calls or []
            if call.type == "function"
        ]
    if isinstance(final, Response):
        return [(i.call_id, i.name, json.loads(i.arguments)) for i in final.output if i.type == "function_call"]
    raise TypeError(f"not an SDK final result: {type(final)!r}")


def sdk_finish(final: object) -> tuple[str, ...]:
    """The SDK's own final result's stop / finish reasons, as the report spells them."""
    if isinstance(final, Message):
        return (final.stop_reason,) if final.stop_reason else ()
    if isinstance(final, ChatCompletion):
        return tuple(c.finish_reason for c in sorted(final.choices, key=lambda c: c.index) if c.finish_reason)
    if isinstance(final, Response):
        if final.status == "incomplete" and final.incomplete_details and final.incomplete_details.reason:
            return (final.incomplete_details.reason,)
        return (final.status,) if final.status else ()
    raise TypeError(f"not an SDK final result: {type(final)!r}")


def sdk_usage(final: object) -> Usage:
    """The SDK's own final result's token counts, as the GenAI conventions count them.

    Anthropic's input is its ``input_tokens`` plus the cache's read and written tokens, which it states apart.
    """
    if isinstance(final, Message):
        usage = final.usage
        read, created = usage.cache_read_input_tokens, usage.cache_creation_input_tokens
        return Usage(
            input_tokens=usage.input_tokens + (read or 0) + (created or 0),
            output_tokens=usage.output_tokens,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=created,
        )
    if isinstance(final, ChatCompletion):
        if final.usage is None:
            return Usage()
        details = final.usage.prompt_tokens_details
        return Usage(
            input_tokens=final.usage.prompt_tokens,
            output_tokens=final.usage.completion_tokens,
            cache_read_input_tokens=details.cached_tokens if details is not None else None,
        )
    if isinstance(final, Response):
        if final.usage is None:
            return Usage()
        input_details = final.usage.input_tokens_details
        return Usage(
            input_tokens=final.usage.input_tokens,
            output_tokens=final.usage.output_tokens,
            cache_read_input_tokens=input_details.cached_tokens if input_details is not None else None,
        )
    raise TypeError(f"not an SDK final result: {type(final)!r}")
