"""The simulator over HTTP: the real SDKs read its replies, it misbehaves on demand, it records requests."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai
import pytest

from otel_toolturn import Lane
from otel_toolturn.simulator import DEFAULT_ANSWER, ScriptedCall, ScriptedTurn, Simulator
from tests.simulator.sim_wire import PATHS, SseFrame, frame_type, parse_sse, request_body

LANES: tuple[Lane, ...] = ("anthropic.messages", "openai.chat_completions", "openai.responses")
TWO_CALLS = ScriptedTurn(
    text="Looking both up.",
    calls=(
        ScriptedCall(name="lookup", arguments={"key": "alpha", "depth": 2}),
        ScriptedCall(name="lookup", arguments={"key": "beta"}, call_id="call_fixed_beta"),
    ),
)
ONE_CALL = ScriptedTurn(calls=(ScriptedCall(name="lookup", arguments={"key": "a value long enough to cut"}),))
USER = "look these up"


def stream_frames(sim: Simulator, lane: Lane, turn: ScriptedTurn) -> list[SseFrame]:
    """Queue ``turn``, send one streamed request of ``lane`` and read the raw frames back."""
    sim.enqueue(turn)
    extra: dict[str, object] = {"stream": True}
    if lane == "openai.chat_completions":
        extra["stream_options"] = {"include_usage": True}
    messages = USER if lane == "openai.responses" else [{"role": "user", "content": USER}]
    response = httpx.post(sim.base_url + PATHS[lane], json=request_body(lane, messages, **extra))
    assert response.status_code == 200
    return parse_sse(response.text)


# --- the SDKs read every reply ----------------------------------------------------------------------
def test_anthropic_sdk_reads_plain_and_streamed_replies(sim: Simulator, a_client: anthropic.Anthropic) -> None:
    """The anthropic SDK parses the plain message and accumulates the stream into the same content."""
    client = a_client
    sim.enqueue(TWO_CALLS, TWO_CALLS)
    messages: list[anthropic.types.MessageParam] = [{"role": "user", "content": USER}]
    plain = client.messages.create(model="claude-test", max_tokens=64, messages=messages)
    with client.messages.stream(model="claude-test", max_tokens=64, messages=messages) as stream:
        streamed = stream.get_final_message()
    for message in (plain, streamed):
        assert message.stop_reason == "tool_use"
        assert message.model == "claude-test"
        text, first, second = message.content
        assert text.type == "text"
        assert text.text == "Looking both up."
        assert first.type == "tool_use"
        assert first.input == {"key": "alpha", "depth": 2}
        assert second.type == "tool_use"
        assert second.id == "call_fixed_beta"
        assert second.input == {"key": "beta"}


def test_a_paused_server_tool_turn_is_read_by_the_sdk_and_refused_once_the_user_moves_on(
    sim: Simulator, a_client: anthropic.Anthropic
) -> None:
    """Server calls: ``pause_turn`` with the use open (plain and streamed); sent back, then left behind a user turn.

    The paused reply sent back as it is, is accepted; the same reply with a user message after it is
    refused in the API's words.
    """
    paused = ScriptedTurn(text="Searching.", server_calls=(ScriptedCall(name="web_search", arguments={"query": "x"}),))
    sim.enqueue(paused, paused)
    messages: list[anthropic.types.MessageParam] = [{"role": "user", "content": USER}]
    plain = a_client.messages.create(model="claude-test", max_tokens=64, messages=messages)
    with a_client.messages.stream(model="claude-test", max_tokens=64, messages=messages) as stream:
        streamed = stream.get_final_message()
    for message in (plain, streamed):
        assert message.stop_reason == "pause_turn"
        text, use = message.content
        assert (text.type, use.type) == ("text", "server_tool_use")
        assert use.type == "server_tool_use"
        assert use.input == {"query": "x"}
    sent_back: list[anthropic.types.MessageParam] = [*messages, {"role": "assistant", "content": plain.content}]
    assert a_client.messages.create(model="claude-test", max_tokens=64, messages=sent_back).stop_reason
    with pytest.raises(anthropic.BadRequestError, match="was found without a corresponding `web_search_tool_result`"):
        a_client.messages.create(
            model="claude-test", max_tokens=64, messages=[*sent_back, {"role": "user", "content": "never mind"}]
        )


def test_chat_sdk_reads_plain_and_streamed_replies_with_the_usage_chunk(
    sim: Simulator, o_client: openai.OpenAI
) -> None:
    """The openai SDK parses the chat completion and accumulates the chunks, usage chunk included."""
    client = o_client
    sim.enqueue(TWO_CALLS, TWO_CALLS)
    plain = client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": USER}])
    with client.chat.completions.stream(
        model="gpt-test", messages=[{"role": "user", "content": USER}], stream_options={"include_usage": True}
    ) as stream:
        streamed = stream.get_final_completion()
    for completion in (plain, streamed):
        choice = completion.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert choice.message.content == "Looking both up."
        calls = choice.message.tool_calls or []
        arguments = [json.loads(c.function.arguments) for c in calls if c.type == "function"]
        assert arguments == [{"key": "alpha", "depth": 2}, {"key": "beta"}]
        assert calls[1].id == "call_fixed_beta"
        assert completion.usage is not None
        assert completion.usage.total_tokens > 0


def test_responses_sdk_reads_plain_and_streamed_replies(sim: Simulator, o_client: openai.OpenAI) -> None:
    """The openai SDK parses the response and its stream helper rebuilds the same output."""
    client = o_client
    sim.enqueue(TWO_CALLS, TWO_CALLS)
    plain = client.responses.create(model="gpt-test", input=USER)
    with client.responses.stream(model="gpt-test", input=USER) as stream:
        streamed = stream.get_final_response()
    for response in (plain, streamed):
        assert response.status == "completed"
        assert response.output_text == "Looking both up."
        calls = [item for item in response.output if item.type == "function_call"]
        assert [json.loads(c.arguments) for c in calls] == [{"key": "alpha", "depth": 2}, {"key": "beta"}]
        assert calls[1].call_id == "call_fixed_beta"
        assert (calls[0].id or "").startswith("fc_")


def test_responses_stream_numbers_every_frame_in_order(sim: Simulator) -> None:
    """Every Responses frame carries ``sequence_number`` 0, 1, 2, … and its ``event:`` name is its type."""
    frames = stream_frames(sim, "openai.responses", TWO_CALLS)
    numbers = [f.payload["sequence_number"] for f in frames if isinstance(f.payload, dict)]
    assert numbers == list(range(len(frames)))
    assert all(f.event == frame_type(f) for f in frames)


def test_chat_usage_chunk_only_when_asked(sim: Simulator) -> None:
    """The usage chunk (empty ``choices``) comes only with ``stream_options.include_usage``."""
    asked = stream_frames(sim, "openai.chat_completions", ONE_CALL)
    sim.enqueue(ONE_CALL)
    body = request_body("openai.chat_completions", [{"role": "user", "content": USER}], stream=True)
    unasked = parse_sse(httpx.post(sim.openai_base_url + "/chat/completions", json=body).text)
    usage_chunks = [f for f in asked if isinstance(f.payload, dict) and f.payload.get("choices") == []]
    assert len(usage_chunks) == 1
    assert all(not (isinstance(f.payload, dict) and f.payload.get("choices") == []) for f in unasked)
    assert asked[-1].data == unasked[-1].data == "[DONE]"


# --- scripted and default turns ---------------------------------------------------------------------
def test_default_turn_calls_the_first_tool_then_answers(sim: Simulator, o_client: openai.OpenAI) -> None:
    """With nothing scripted: user text earns a call to the first declared tool, its result a text answer."""
    client = o_client
    tools: list[openai.types.chat.ChatCompletionToolParam] = [
        {"type": "function", "function": {"name": "first_tool", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "second_tool", "parameters": {"type": "object"}}},
    ]
    first = client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": USER}], tools=tools)
    calls = first.choices[0].message.tool_calls or []
    assert [c.function.name for c in calls if c.type == "function"] == ["first_tool"]
    second = client.chat.completions.create(
        model="gpt-test",
        messages=[
            {"role": "user", "content": USER},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": calls[0].id, "type": "function", "function": {"name": "first_tool", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": calls[0].id, "content": "found"},
        ],
        tools=tools,
    )
    assert second.choices[0].message.content == DEFAULT_ANSWER
    assert second.choices[0].finish_reason == "stop"


def test_substituted_model_is_reported(sim: Simulator, a_client: anthropic.Anthropic) -> None:
    """A turn scripted with another model reports that model instead of the requested one."""
    sim.enqueue(ScriptedTurn(text="hi", model="claude-other"))
    message = a_client.messages.create(model="claude-test", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    assert message.model == "claude-other"


def test_rejected_request_takes_no_turn_and_every_request_is_recorded(sim: Simulator, o_client: openai.OpenAI) -> None:
    """A 400 leaves the scripted queue alone; each request is recorded with its body, status and error."""
    sim.enqueue(ScriptedTurn(text="scripted"))
    broken = [{"role": "tool", "tool_call_id": "call_x", "content": "orphan"}, {"role": "user", "content": "hi"}]
    refused = httpx.post(
        sim.openai_base_url + "/chat/completions", json=request_body("openai.chat_completions", broken)
    )
    assert refused.status_code == 400
    assert sim.pending_turns == 1
    served = o_client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
    assert served.choices[0].message.content == "scripted"
    assert sim.pending_turns == 0
    first, second = sim.requests
    assert (first.status, first.lane, second.status, second.error) == (400, "openai.chat_completions", 200, None)
    assert first.error is not None
    assert "preceeding message with 'tool_calls'" in first.error
    assert isinstance(first.body, dict)
    assert first.body["messages"] == broken


# --- misbehaviours, per lane --------------------------------------------------------------------------
TERMINAL: dict[Lane, frozenset[str]] = {
    "anthropic.messages": frozenset({"message_delta", "message_stop"}),
    "openai.chat_completions": frozenset({"finish"}),
    "openai.responses": frozenset({"response.completed"}),
}


def kind(frame: SseFrame) -> str:
    """The frame's type; a Chat chunk with a finish reason is ``finish``, one with no choices ``usage``."""
    if isinstance(frame.payload, dict) and frame.payload.get("object") == "chat.completion.chunk":
        choices = frame.payload.get("choices")
        if choices == []:
            return "usage"
        if isinstance(choices, list) and choices[0].get("finish_reason"):
            return "finish"
    return frame_type(frame)


def argument_text(lane: Lane, frames: list[SseFrame]) -> str:
    """The argument text of the first call, joined from its delta frames."""
    out: list[str] = []
    for frame in frames:
        payload = frame.payload
        if not isinstance(payload, dict):
            continue
        if lane == "anthropic.messages" and payload.get("type") == "content_block_delta":
            out.append(str(payload["delta"].get("partial_json", "")))
        elif lane == "openai.responses" and payload.get("type") == "response.function_call_arguments.delta":
            out.append(str(payload["delta"]))
        elif lane == "openai.chat_completions" and payload.get("choices"):
            calls = payload["choices"][0]["delta"].get("tool_calls", [])
            out.extend(str(call["function"].get("arguments", "")) for call in calls)
    return "".join(out)


@pytest.mark.parametrize("lane", LANES)
def test_well_formed_stream_ends_once(sim: Simulator, lane: Lane) -> None:
    """Without misbehaviours every frame is JSON (or ``[DONE]``), arguments are whole, and nothing follows the end."""
    frames = stream_frames(sim, lane, ONE_CALL)
    assert all(f.payload is not None or f.data == "[DONE]" for f in frames)
    assert json.loads(argument_text(lane, frames)) == {"key": "a value long enough to cut"}
    kinds = [kind(f) for f in frames]
    last_terminal = max(i for i, k in enumerate(kinds) if k in TERMINAL[lane])
    assert all(k in ("usage", "[DONE]") for k in kinds[last_terminal + 1 :])
    assert sum(k in TERMINAL[lane] for k in kinds) == (2 if lane == "anthropic.messages" else 1)


@pytest.mark.parametrize("lane", LANES)
def test_cut_arguments_ends_the_stream_mid_arguments(sim: Simulator, lane: Lane) -> None:
    """``cut_arguments``: the argument text is a strict, unreadable prefix and no terminal frame follows."""
    frames = stream_frames(sim, lane, ScriptedTurn(calls=ONE_CALL.calls, misbehaviours=("cut_arguments",)))
    whole = json.dumps({"key": "a value long enough to cut"})
    cut = argument_text(lane, frames)
    assert whole.startswith(cut)
    assert len(cut) < len(whole)
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut)
    assert not any(kind(f) in TERMINAL[lane] for f in frames)
    assert frames[-1].data != "[DONE]"


@pytest.mark.parametrize("lane", LANES)
def test_no_finish_leaves_out_the_terminal_frames(sim: Simulator, lane: Lane) -> None:
    """``no_finish``: the whole content arrives, then the stream stops without its terminal frames."""
    frames = stream_frames(sim, lane, ScriptedTurn(calls=ONE_CALL.calls, misbehaviours=("no_finish",)))
    assert json.loads(argument_text(lane, frames)) == {"key": "a value long enough to cut"}
    assert not any(kind(f) in TERMINAL[lane] for f in frames)
    assert all(f.data != "[DONE]" for f in frames)


FINAL: dict[Lane, str] = {
    "anthropic.messages": "message_stop",
    "openai.chat_completions": "finish",
    "openai.responses": "response.completed",
}


@pytest.mark.parametrize("lane", LANES)
def test_frames_after_end_sends_content_and_a_second_ending(sim: Simulator, lane: Lane) -> None:
    """``frames_after_end``: after the first ending come a content frame and a second ending."""
    frames = stream_frames(sim, lane, ScriptedTurn(calls=ONE_CALL.calls, misbehaviours=("frames_after_end",)))
    kinds = [kind(f) for f in frames]
    after = kinds[kinds.index(FINAL[lane]) + 1 :]
    assert FINAL[lane] in after
    assert any(k not in TERMINAL[lane] and k not in ("[DONE]", "usage") for k in after)


@pytest.mark.parametrize("lane", LANES)
def test_bad_frame_sends_one_non_json_data_line(sim: Simulator, lane: Lane) -> None:
    """``bad_frame``: exactly one ``data:`` line is not JSON, and the rest of the stream still comes."""
    frames = stream_frames(sim, lane, ScriptedTurn(text="hello there", misbehaviours=("bad_frame",)))
    unreadable = [f for f in frames if f.payload is None and f.data != "[DONE]"]
    assert len(unreadable) == 1
    if lane != "openai.chat_completions":
        assert unreadable[0].event is not None
    assert any(kind(f) in TERMINAL[lane] for f in frames)


def test_bad_frame_makes_the_sdk_raise(sim: Simulator, o_client: openai.OpenAI) -> None:
    """A real SDK iterating a stream with a non-JSON frame raises on it, as it would against a provider."""
    sim.enqueue(ScriptedTurn(text="hello there", misbehaviours=("bad_frame",)))
    stream = o_client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    with pytest.raises(json.JSONDecodeError):
        list(stream)


def test_plain_reply_with_cut_arguments_says_the_cap_cut_it(sim: Simulator, o_client: openai.OpenAI) -> None:
    """Plain JSON and ``cut_arguments``: Chat carries a cut argument text with ``finish_reason`` ``length``."""
    sim.enqueue(ScriptedTurn(calls=ONE_CALL.calls, misbehaviours=("cut_arguments",)))
    completion = o_client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "hi"}])
    choice = completion.choices[0]
    assert choice.finish_reason == "length"
    calls = choice.message.tool_calls or []
    assert calls[0].type == "function"
    with pytest.raises(json.JSONDecodeError):
        json.loads(calls[0].function.arguments)


# --- requests the simulator cannot serve ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("lane", "field", "words"),
    [
        ("anthropic.messages", "messages", "messages: Field required"),
        ("openai.chat_completions", "messages", "Missing required parameter: 'messages'."),
        ("openai.responses", "input", "Missing required parameter: 'input'."),
    ],
)
def test_missing_transcript_field_is_refused_in_the_providers_words(
    sim: Simulator, lane: Lane, field: str, words: str
) -> None:
    """A request without its transcript field gets a 400 with the provider's wording."""
    body = request_body(lane, [])
    del body[field]
    response = httpx.post(sim.base_url + PATHS[lane], json=body)
    assert response.status_code == 400
    assert words in response.text


def test_body_that_is_not_json_is_refused(sim: Simulator) -> None:
    """A body that is not a JSON object gets a 400 (and is recorded as received)."""
    response = httpx.post(sim.base_url + "/v1/messages", content=b"{not json")
    assert response.status_code == 400
    assert sim.requests[-1].body == "{not json"


def test_unknown_previous_response_is_refused(sim: Simulator) -> None:
    """A ``previous_response_id`` the simulator never issued gets a 400 naming it."""
    body = request_body("openai.responses", "hi", previous_response_id="resp_unknown")
    response = httpx.post(sim.openai_base_url + "/responses", json=body)
    assert response.status_code == 400
    assert "resp_unknown" in response.json()["error"]["message"]


def test_unknown_path_is_404(sim: Simulator) -> None:
    """A path outside the three lanes is answered 404."""
    response = httpx.post(sim.base_url + "/v1/embeddings", json={})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_url"
    assert sim.requests[-1].lane is None


def test_stopped_simulator_has_no_url() -> None:
    """Outside its ``with`` block the simulator serves nothing and says so."""
    with Simulator() as simulator:
        url = simulator.base_url
    with pytest.raises(RuntimeError, match="not serving"):
        _ = simulator.base_url
    with pytest.raises(httpx.ConnectError):
        httpx.post(url + "/v1/messages", json={})


async def test_async_clients_read_the_streams_too(sim: Simulator) -> None:
    """The async SDK clients read the simulator's streams as the sync ones do."""
    sim.enqueue(TWO_CALLS, TWO_CALLS)
    messages: list[anthropic.types.MessageParam] = [{"role": "user", "content": USER}]
    async with (
        anthropic.AsyncAnthropic(base_url=sim.base_url, api_key="test-key", max_retries=0) as a_client,
        a_client.messages.stream(model="claude-test", max_tokens=64, messages=messages) as stream,
    ):
        message = await stream.get_final_message()
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]
    async with (
        openai.AsyncOpenAI(base_url=sim.openai_base_url, api_key="test-key", max_retries=0) as o_client,
        o_client.responses.stream(model="gpt-test", input=USER) as events,
    ):
        response = await events.get_final_response()
    assert [item.type for item in response.output] == ["message", "function_call", "function_call"]
