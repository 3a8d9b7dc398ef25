"""The prompt cache's share of a request, as the provider stated it, on the inference span in every lane."""

from __future__ import annotations

from typing import Any, Final

import anthropic
import httpx2
import openai
import pytest
from openai.types.responses import ResponseCompletedEvent
from opentelemetry.sdk.trace import ReadableSpan

from otel_toolturn import Lane
from otel_toolturn.instrument import names
from otel_toolturn.simulator import Simulator
from tests.instrument.conftest import Instrument
from tests.instrument.wire import MODEL
from tests.simulator.sim_wire import gemini_client

LANES: Final[tuple[Lane, ...]] = (
    "anthropic.messages",
    "openai.chat_completions",
    "openai.responses",
    "gemini.generate_content",
)
QUESTION: Final = "Please look into the logs of the service and say what failed. " * 20
"""Long enough that the first request's prompt is a cacheable prefix of the second's."""


def _attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _history(lane: Lane, turns: int) -> list[dict[str, Any]]:
    """A conversation of ``turns`` questions and answers, then one more question, in the lane's spelling."""
    out: list[dict[str, Any]] = []
    for turn in range(turns):
        if lane == "gemini.generate_content":
            out += [
                {"role": "user", "parts": [{"text": f"{QUESTION} ({turn})"}]},
                {"role": "model", "parts": [{"text": f"Answer {turn}."}]},
            ]
        else:
            out += [
                {"role": "user", "content": f"{QUESTION} ({turn})"},
                {"role": "assistant", "content": f"Answer {turn}."},
            ]
    if lane == "gemini.generate_content":
        return [*out, {"role": "user", "parts": [{"text": "And now?"}]}]
    return [*out, {"role": "user", "content": "And now?"}]


def _send(sim: Simulator, lane: Lane, history: Any, *, stream: bool) -> dict[str, int | None]:
    """One call through the lane's real SDK; the usage its own response (or final chunk) states."""
    if lane == "anthropic.messages":
        client = anthropic.Anthropic(base_url=sim.base_url, api_key="k", max_retries=0)
        if stream:
            with client.messages.stream(model="m", max_tokens=64, messages=history) as events:
                usage = events.get_final_message().usage
        else:
            usage = client.messages.create(model="m", max_tokens=64, messages=history).usage
        read, created = usage.cache_read_input_tokens, usage.cache_creation_input_tokens
        return {"input": usage.input_tokens + (read or 0) + (created or 0), "read": read, "created": created}
    if lane == "gemini.generate_content":
        gemini = gemini_client(sim.base_url)
        if stream:
            *_, last = gemini.models.generate_content_stream(model="gemini-3-pro", contents=history)
        else:
            last = gemini.models.generate_content(model="gemini-3-pro", contents=history)
        metadata = last.usage_metadata
        assert metadata is not None
        return {"input": metadata.prompt_token_count, "read": metadata.cached_content_token_count, "created": None}
    chat = openai.OpenAI(base_url=sim.openai_base_url, api_key="k", max_retries=0)
    if lane == "openai.chat_completions":
        if stream:
            chunks = chat.chat.completions.create(
                model="m",
                messages=history,
                stream=True,
                stream_options={"include_usage": True},
            )
            completion_usage = [c.usage for c in chunks if c.usage is not None][-1]
        else:
            reply = chat.chat.completions.create(model="m", messages=history)
            assert reply.usage is not None
            completion_usage = reply.usage
        details = completion_usage.prompt_tokens_details
        assert details is not None
        return {"input": completion_usage.prompt_tokens, "read": details.cached_tokens, "created": None}
    if stream:
        frames = chat.responses.create(model="m", input=history, stream=True)
        response = [e.response for e in frames if isinstance(e, ResponseCompletedEvent)][-1]
    else:
        response = chat.responses.create(model="m", input=history)
    assert response.usage is not None
    return {
        "input": response.usage.input_tokens,
        "read": response.usage.input_tokens_details.cached_tokens,
        "created": None,
    }


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("lane", LANES)
def test_a_request_that_extends_the_last_records_the_cached_share_the_provider_stated(
    sim: Simulator, instrument: Instrument, lane: Lane, stream: bool
) -> None:
    """The second request's span: cache-read tokens as the response states them (> 0), inside the input tokens."""
    otel = instrument()
    _send(sim, lane, _history(lane, 3), stream=stream)
    stated = _send(sim, lane, _history(lane, 4), stream=stream)
    first, second = (_attributes(span) for span in otel.call_spans())
    assert stated["read"]
    assert second[names.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == stated["read"]
    assert second[names.GEN_AI_USAGE_INPUT_TOKENS] == stated["input"]
    assert second[names.GEN_AI_USAGE_INPUT_TOKENS] > second[names.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]
    assert first.get(names.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, 0) < stated["read"]
    if stated["created"] is None:
        assert names.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS not in second
    else:
        assert second[names.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == stated["created"]


def test_anthropic_input_tokens_count_the_cache_the_provider_states_apart(instrument: Instrument) -> None:
    """Anthropic: input tokens are ``input_tokens`` plus the cache's read and written tokens, each also on its own."""
    body = (
        b'{"id":"msg_1","type":"message","role":"assistant","model":"' + MODEL.encode() + b'",'
        b'"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,'
        b'"usage":{"input_tokens":25,"cache_read_input_tokens":70,"cache_creation_input_tokens":5,"output_tokens":3}}'
    )
    otel = instrument()
    client = anthropic.Anthropic(
        api_key="k",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(lambda _r: httpx2.Response(200, content=body))),
    )
    client.messages.create(model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    (span,) = otel.call_spans()
    attributes = _attributes(span)
    recorded = {
        key: attributes[key]
        for key in (
            names.GEN_AI_USAGE_INPUT_TOKENS,
            names.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
            names.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
            names.GEN_AI_USAGE_OUTPUT_TOKENS,
        )
    }
    assert recorded == {
        names.GEN_AI_USAGE_INPUT_TOKENS: 100,
        names.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: 70,
        names.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: 5,
        names.GEN_AI_USAGE_OUTPUT_TOKENS: 3,
    }
