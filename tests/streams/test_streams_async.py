"""The observers read the async clients' events exactly as the sync ones (same report per lane)."""

from __future__ import annotations

import dataclasses

import anthropic
import httpx2
import openai
import pytest

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import OBSERVED_LANES
from tests.streams._drive import raw_report
from tests.streams._frames import Frame, a_tool_turn, c_tool_turn, g_call, g_tool_turn, r_tool_turn, sse_bytes
from tests.streams._sdk import (
    ANTHROPIC_MESSAGES,
    CHAT_MESSAGES,
    KEY,
    PROMPT,
    SDK_MODEL,
    gemini_async_client,
    report_of,
)

TURNS: dict[Lane, list[Frame]] = {
    "anthropic.messages": a_tool_turn("id_1", "f", ['{"a": ', "1"], close=False, stop="max_tokens"),
    "openai.chat_completions": c_tool_turn("id_1", "f", ['{"a": ', "1}"], finish="tool_calls"),
    "openai.responses": r_tool_turn("id_1", "f", ['{"a": ', "1}"], done=True, end="completed"),
    "gemini.generate_content": g_tool_turn(g_call("f", {"a": 1}, call_id="id_1"), finish="MAX_TOKENS"),
}


def async_http(body: bytes) -> httpx2.AsyncClient:
    def handler(_request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


async def async_events(lane: Lane, body: bytes) -> list[object]:
    events: list[object] = []
    if lane == "anthropic.messages":
        a = anthropic.AsyncAnthropic(api_key=KEY, http_client=async_http(body), max_retries=0)
        stream = await a.messages.create(model=SDK_MODEL, max_tokens=1024, messages=ANTHROPIC_MESSAGES, stream=True)
        events.extend([event async for event in stream])
        return events
    if lane == "gemini.generate_content":
        pending = gemini_async_client(body).aio.models.generate_content_stream(model=SDK_MODEL, contents=PROMPT)
        events.extend([chunk async for chunk in await pending])
        return events
    o = openai.AsyncOpenAI(api_key=KEY, http_client=async_http(body), max_retries=0)
    if lane == "openai.chat_completions":
        chunks = await o.chat.completions.create(model=SDK_MODEL, messages=CHAT_MESSAGES, stream=True)
        events.extend([chunk async for chunk in chunks])
        return events
    responses = await o.responses.create(model=SDK_MODEL, input=PROMPT, stream=True)
    events.extend([event async for event in responses])
    return events


ASYNC_LANES: tuple[Lane, ...] = tuple(lane for lane in OBSERVED_LANES if lane != "bedrock.converse")
"""The lanes whose SDK has an async client (boto3 has none)."""


@pytest.mark.parametrize("lane", ASYNC_LANES)
async def test_async_stream_gives_the_raw_report(lane: Lane) -> None:
    """Events from the async client's stream give the same report as the raw frames."""
    frames = TURNS[lane]
    report = report_of(lane, await async_events(lane, sse_bytes(lane, frames)), "model-a")
    assert dataclasses.replace(report, events=0) == dataclasses.replace(raw_report(lane, frames), events=0)
    assert report.calls or report.drops
