"""The simulator's streams follow the providers' recorded streams: the same event order and fields.

Reads recordings from the ``shared`` folder beside the repository; skipped, with the reason, when
that folder is absent, and failed under CI, which must read them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest
import yaml

from otel_toolturn import Lane
from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator
from tests.simulator.sim_wire import PATHS, SseFrame, frame_type, parse_sse, request_body
from tests.streams._recordings import RECORDED, present

VOLATILE: Final = frozenset({"obfuscation", "sequence_number"})
"""Fields a recording may carry that depend on the recording's age or are random padding."""

TEXT = ScriptedTurn(text="It is sunny in Paris today.")
CALL = ScriptedTurn(calls=(ScriptedCall(name="get_weather", arguments={"location": "Paris"}),))
TEXT_AND_CALL = ScriptedTurn(text=TEXT.text, calls=CALL.calls)
TWO_CALLS = ScriptedTurn(
    calls=(
        ScriptedCall(name="get_weather", arguments={"location": "Seattle"}),
        ScriptedCall(name="get_weather", arguments={"location": "San Francisco"}),
    )
)


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator() as simulator:
        yield simulator


def recorded(relative: str) -> list[SseFrame]:
    """The frames of one recording: a raw SSE file, or the first response body of a VCR cassette."""
    path = present(RECORDED / relative)
    text = path.read_text()
    if path.suffix == ".yaml":
        cassette = yaml.safe_load(text)
        text = str(cassette["interactions"][0]["response"]["body"]["string"])
    return parse_sse(text)


def simulated(sim: Simulator, lane: Lane, turn: ScriptedTurn) -> list[SseFrame]:
    sim.enqueue(turn)
    extra: dict[str, object] = {"stream": True}
    if lane == "openai.chat_completions":
        extra["stream_options"] = {"include_usage": True}
    body = request_body(lane, [{"role": "user", "content": "weather?"}], **extra)
    return parse_sse(httpx.post(sim.base_url + PATHS[lane], json=body).text)


def shape(frame: SseFrame) -> str:
    """What a frame does: its type, or for a Chat chunk what its delta carries."""
    payload = frame.payload
    if not isinstance(payload, dict) or "choices" not in payload:
        return frame_type(frame)
    choices = payload["choices"]
    if not choices:
        return "usage"
    choice = choices[0]
    if choice.get("finish_reason"):
        return "finish"
    delta = choice["delta"]
    if "role" in delta:
        return "role"
    if "tool_calls" in delta:
        return "tool_start" if "id" in delta["tool_calls"][0] else "arguments"
    return "content"


def order(frames: list[SseFrame]) -> list[str]:
    """The sequence of frame shapes with repeats collapsed (delta counts differ between recordings)."""
    return [key for key, _ in itertools.groupby(shape(f) for f in frames)]


def fields(frames: list[SseFrame]) -> dict[str, set[str]]:
    """Per frame shape, the top-level fields seen (volatile ones left out)."""
    out: dict[str, set[str]] = {}
    for frame in frames:
        if isinstance(frame.payload, dict):
            out.setdefault(shape(frame), set()).update(set(frame.payload) - VOLATILE)
    return out


@pytest.mark.parametrize(
    ("lane", "relative", "turn"),
    [
        ("anthropic.messages", "anthropic/tool_use_response.txt", TEXT_AND_CALL),
        ("anthropic.messages", "anthropic/basic_response.txt", TEXT),
        (
            "openai.chat_completions",
            "openai_chat/test_chat_completion_multiple_tools_streaming_no_content.yaml",
            TWO_CALLS,
        ),
        ("openai.responses", "openai_responses/extra_pydantic-ai_test_openai_responses_stream.yaml", CALL),
        (
            "openai.responses",
            "openai_responses/test_responses_create_streaming_captures_content_content_mode0_.yaml",
            TEXT,
        ),
    ],
)
def test_stream_matches_the_recorded_order_and_fields(
    sim: Simulator, lane: Lane, relative: str, turn: ScriptedTurn
) -> None:
    """The simulated stream has the recording's frame order and at least its fields, frame by frame."""
    real = recorded(relative)
    ours = simulated(sim, lane, turn)
    assert order(ours) == order(real)
    ours_fields = fields(ours)
    for kind, real_fields in fields(real).items():
        assert real_fields <= ours_fields[kind], kind


def test_anthropic_frames_name_their_event(sim: Simulator) -> None:
    """Like the recordings, every Anthropic frame's ``event:`` line repeats its type."""
    real = recorded("anthropic/tool_use_response.txt")
    ours = simulated(sim, "anthropic.messages", TEXT_AND_CALL)
    for frames in (real, ours):
        assert all(f.event == frame_type(f) for f in frames)


def delta_shape(frame: SseFrame) -> str:
    """An Anthropic frame's type, with the block or delta type it carries."""
    payload = frame.payload
    if not isinstance(payload, dict):
        return frame_type(frame)
    inner = payload.get("content_block") or payload.get("delta")
    kind = inner.get("type") if isinstance(inner, dict) else None
    return f"{payload.get('type')}:{kind}" if kind else str(payload.get("type"))


THINKING = {"type": "enabled", "budget_tokens": 1024}
DROP = {**THINKING, "block_binding": {"prefix_mismatch_behavior": "drop_block"}}


def test_thinking_stream_matches_the_recorded_thinking_stream(sim: Simulator) -> None:
    """A thinking reply streams as the recording does: thinking block, ping, thinking and signature deltas, text."""
    real = recorded("anthropic/openllmetry_test_anthropic_thinking_streaming_legacy.yaml")
    sim.enqueue(TEXT)
    body = request_body("anthropic.messages", [{"role": "user", "content": "weather?"}], stream=True, thinking=THINKING)
    del body["tools"]
    ours = parse_sse(httpx.post(sim.base_url + PATHS["anthropic.messages"], json=body).text)
    assert [k for k, _ in itertools.groupby(map(delta_shape, ours))] == [
        k for k, _ in itertools.groupby(map(delta_shape, real))
    ]
    starts = [f.payload for f in (real[1], ours[1]) if isinstance(f.payload, dict)]
    assert (
        starts[0]["content_block"]
        == starts[1]["content_block"]
        == {"type": "thinking", "thinking": "", "signature": ""}
    )


def by_type(frames: list[SseFrame]) -> dict[str, Any]:
    """The last JSON payload of each frame type."""
    return {frame_type(f): f.payload for f in frames if isinstance(f.payload, dict)}


def test_dropped_thinking_is_listed_where_the_recording_lists_it(sim: Simulator) -> None:
    """``input_transformations``: in ``message_start.message`` and atop ``message_delta``, entry for entry."""
    real = by_type(recorded("anthropic/input_transformations_delta_response.txt"))
    stale = {"type": "thinking", "thinking": "Earlier.", "signature": "sim1.0"}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [stale, {"type": "text", "text": "Hello."}]},
        {"role": "user", "content": "again"},
    ]
    sim.enqueue(TEXT)
    body = request_body("anthropic.messages", messages, stream=True, thinking=DROP)
    ours = by_type(parse_sse(httpx.post(sim.base_url + PATHS["anthropic.messages"], json=body).text))
    real_start, our_start = real["message_start"]["message"], ours["message_start"]["message"]
    assert set(real_start) <= set(our_start)
    assert set(real["message_delta"]) <= set(ours["message_delta"])
    assert set(real["message_delta"]["delta"]) <= set(ours["message_delta"]["delta"])
    entry = {"type": "thinking_dropped", "path": "messages.1.content.0", "reason": "prefix_binding_mismatch"}
    assert our_start["input_transformations"] == ours["message_delta"]["input_transformations"] == [entry]
    assert set(real_start["input_transformations"][0]) == set(entry)
