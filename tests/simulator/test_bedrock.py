"""The simulator's Bedrock Converse and Anthropic invoke lanes: real boto3 reads its replies, refusals, streams."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from botocore.exceptions import ClientError

from otel_toolturn import validate
from otel_toolturn.simulator import DEFAULT_ANSWER, ScriptedCall, ScriptedTurn, Simulator
from otel_toolturn.simulator._bedrock import route
from otel_toolturn.simulator._bedrock_invoke import route as invoke_route
from otel_toolturn.simulator._eventstream import encode_message
from tests.bedrock_wire import BROKEN, MODEL, TOOL_CONFIG, assistant, bedrock_client, result, text, use, user

TWO_CALLS = ScriptedTurn(
    text="Looking both up.",
    calls=(
        ScriptedCall(name="lookup", arguments={"key": "alpha", "depth": 2}),
        ScriptedCall(name="lookup", arguments={"key": "beta"}, call_id="tooluse_fixed"),
    ),
)


def events(sim: Simulator, turn: ScriptedTurn, **kwargs: Any) -> list[dict[str, Any]]:
    """Every event of one ``converse_stream`` call answered by ``turn``."""
    sim.enqueue(turn)
    response = bedrock_client(sim.base_url).converse_stream(
        modelId=MODEL, messages=[user(text("Look up alpha and beta."))], **kwargs
    )
    return list(response["stream"])


def test_route_reads_the_model_and_the_method() -> None:
    """The percent-encoded model id is decoded; ``converse-stream`` streams; other paths are not ours."""
    assert route("/model/a.b-v1%3A0/converse") == {"model": "a.b-v1:0", "stream": False}
    assert route("/model/m/converse-stream") == {"model": "m", "stream": True}
    assert route("/model/m/invoke") is None


def test_event_stream_messages_are_read_by_botocores_own_parser() -> None:
    """``encode_message`` writes prelude, headers, payload and both CRCs as botocore's ``EventStreamBuffer`` reads."""
    buffer = EventStreamBuffer()
    headers = {":event-type": "messageStop", ":content-type": "application/json", ":message-type": "event"}
    payload = b'{"stopReason":"end_turn"}'
    whole = encode_message(headers, payload) + encode_message(headers, b"{}")
    buffer.add_data(whole[:7])
    assert list(buffer) == []
    buffer.add_data(whole[7:])
    first, second = list(buffer)
    assert first.headers == headers
    assert first.payload == payload
    assert second.payload == b"{}"


def test_a_plain_reply_is_a_converse_response(sim: Simulator) -> None:
    """``converse`` answers ``output.message``, ``stopReason``, ``usage`` and ``metrics`` as botocore parses them."""
    sim.enqueue(TWO_CALLS)
    response = bedrock_client(sim.base_url).converse(modelId=MODEL, messages=[user(text("Look up alpha and beta."))])
    message = response["output"]["message"]
    assert message["role"] == "assistant"
    assert message["content"][0] == {"text": "Looking both up."}
    assert message["content"][1]["toolUse"]["input"] == {"key": "alpha", "depth": 2}
    assert message["content"][2]["toolUse"]["toolUseId"] == "tooluse_fixed"
    assert response["stopReason"] == "tool_use"
    usage = response["usage"]
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
    assert response["metrics"]["latencyMs"] >= 0
    (request,) = sim.requests
    assert (request.path, request.lane, request.status) == (
        f"/model/{MODEL.replace(':', '%3A')}/converse",
        "bedrock.converse",
        200,
    )


def test_the_default_turn_calls_the_first_tool_and_answers_its_result(sim: Simulator) -> None:
    """With nothing scripted: a call to the first ``toolSpec`` after user text, the default answer after a result."""
    client = bedrock_client(sim.base_url)
    first = client.converse(modelId=MODEL, messages=[user(text("Go."))], toolConfig=TOOL_CONFIG)
    (block,) = first["output"]["message"]["content"]
    call_id = block["toolUse"]["toolUseId"]
    assert block["toolUse"]["name"] == "lookup"
    history = [user(text("Go.")), first["output"]["message"], user(result(call_id))]
    second = client.converse(modelId=MODEL, messages=history, toolConfig=TOOL_CONFIG)
    assert second["output"]["message"]["content"] == [{"text": DEFAULT_ANSWER}]
    assert second["stopReason"] == "end_turn"


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_history_is_refused_as_the_service_does(sim: Simulator, name: str) -> None:
    """A broken history earns HTTP 400, ``ValidationException`` and the first violation in ``validate``'s words."""
    messages = list(BROKEN[name])
    with pytest.raises(ClientError) as refused:
        bedrock_client(sim.base_url).converse(modelId=MODEL, messages=messages)
    error = refused.value.response
    assert error["Error"]["Code"] == "ValidationException"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error["Error"]["Message"] == validate(messages, lane="bedrock.converse")[0].message
    assert sim.summary("bedrock.converse").refused == 1


def test_two_user_messages_in_a_row_are_refused(sim: Simulator) -> None:
    """Consecutive messages of one role are refused (the service never combines them)."""
    messages = [user(text("a")), assistant(use("tooluse_1")), user(result("tooluse_1")), user(text("b"))]
    with pytest.raises(ClientError, match="must alternate between user and assistant roles"):
        bedrock_client(sim.base_url).converse(modelId=MODEL, messages=messages)


def test_a_streamed_reply_is_the_converse_stream_events(sim: Simulator) -> None:
    """``converse_stream``: messageStart, text deltas, a call's start / input pieces / stop, messageStop, metadata."""
    seen = events(sim, TWO_CALLS)
    kinds = [next(iter(event)) for event in seen]
    assert kinds[0] == "messageStart"
    assert kinds[-2:] == ["messageStop", "metadata"]
    texts = "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in seen if "contentBlockDelta" in e)
    assert texts == "Looking both up."
    starts = [e["contentBlockStart"] for e in seen if "contentBlockStart" in e]
    assert [s["start"]["toolUse"]["name"] for s in starts] == ["lookup", "lookup"]
    for start in starts:
        index = start["contentBlockIndex"]
        pieces = [
            e["contentBlockDelta"]["delta"]["toolUse"]["input"]
            for e in seen
            if "contentBlockDelta" in e and e["contentBlockDelta"]["contentBlockIndex"] == index
        ]
        assert len(pieces) > 1
        assert json.loads("".join(pieces))["key"] in {"alpha", "beta"}
    assert seen[-2]["messageStop"]["stopReason"] == "tool_use"
    assert seen[-1]["metadata"]["usage"]["outputTokens"] > 0


def test_no_finish_leaves_out_message_stop_and_metadata(sim: Simulator) -> None:
    """``no_finish``: the stream ends without ``messageStop`` (and the ``metadata`` after it)."""
    seen = events(sim, ScriptedTurn(text="Half an answer", misbehaviours=("no_finish",)))
    kinds = {next(iter(event)) for event in seen}
    assert "messageStop" not in kinds
    assert "metadata" not in kinds


def test_cut_arguments_stops_mid_arguments(sim: Simulator) -> None:
    """``cut_arguments`` streamed: the first call's input pieces stop half-way and nothing follows."""
    call = ScriptedCall(name="lookup", arguments={"key": "a long value to cut"})
    seen = events(sim, ScriptedTurn(calls=(call,), misbehaviours=("cut_arguments",)))
    assert "contentBlockDelta" in seen[-1]
    with pytest.raises(json.JSONDecodeError):
        json.loads(
            "".join(e["contentBlockDelta"]["delta"]["toolUse"]["input"] for e in seen if "contentBlockDelta" in e)
        )


def test_cut_arguments_plain_leaves_the_call_out_on_max_tokens(sim: Simulator) -> None:
    """``cut_arguments`` plain: the call is left out (its arguments are an object); stop reason ``max_tokens``."""
    sim.enqueue(ScriptedTurn(text="Let me", calls=(ScriptedCall(name="lookup"),), misbehaviours=("cut_arguments",)))
    response = bedrock_client(sim.base_url).converse(modelId=MODEL, messages=[user(text("Go."))])
    assert response["output"]["message"]["content"] == [{"text": "Let me"}]
    assert response["stopReason"] == "max_tokens"


def test_a_repeated_prompt_reports_cached_tokens(sim: Simulator) -> None:
    """A prompt sent again is served from the simulator's prefix cache: ``cacheReadInputTokens`` in the usage."""
    client = bedrock_client(sim.base_url)
    messages = [user(text("Same question."))]
    client.converse(modelId=MODEL, messages=messages)
    again = client.converse(modelId=MODEL, messages=messages)
    assert again["usage"]["cacheReadInputTokens"] > 0
    assert sim.summary("bedrock.converse").cached_tokens == again["usage"]["cacheReadInputTokens"]


def invoke_body(messages: list[dict[str, object]]) -> bytes:
    """An InvokeModel body in Anthropic Messages JSON."""
    return json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": messages}).encode()


def test_invoke_route_reads_the_model_and_the_method() -> None:
    """``invoke`` and ``invoke-with-response-stream`` are the invoke lane's; Converse paths are not."""
    assert invoke_route("/model/a.b-v1%3A0/invoke") == {"model": "a.b-v1:0", "stream": False}
    assert invoke_route("/model/m/invoke-with-response-stream") == {"model": "m", "stream": True}
    assert invoke_route("/model/m/converse") is None


def test_invoke_model_answers_an_anthropic_message(sim: Simulator) -> None:
    """``invoke_model`` with an Anthropic body: the Anthropic lane's message in the body, the model from the path."""
    sim.enqueue(TWO_CALLS)
    response = bedrock_client(sim.base_url).invoke_model(
        modelId=MODEL, body=invoke_body([{"role": "user", "content": "Look up alpha and beta."}])
    )
    message = json.loads(response["body"].read())
    assert (message["type"], message["model"], message["stop_reason"]) == ("message", MODEL, "tool_use")
    assert [block["type"] for block in message["content"]] == ["text", "tool_use", "tool_use"]
    (request,) = sim.requests
    assert (request.lane, request.status) == ("anthropic.messages", 200)


def test_invoke_with_response_stream_carries_anthropic_events_in_chunks(sim: Simulator) -> None:
    """Each Anthropic event arrives as one ``chunk`` whose ``bytes`` botocore decodes to the event's JSON."""
    sim.enqueue(TWO_CALLS)
    response = bedrock_client(sim.base_url).invoke_model_with_response_stream(
        modelId=MODEL, body=invoke_body([{"role": "user", "content": "Look up alpha and beta."}])
    )
    events = [json.loads(event["chunk"]["bytes"]) for event in response["body"]]
    assert events[0]["type"] == "message_start"
    assert events[-1]["type"] == "message_stop"
    assert sum(event["type"] == "content_block_start" for event in events) == 3


@pytest.mark.parametrize("streamed", [False, True])
def test_invoke_model_refuses_a_broken_history_as_the_service_does(sim: Simulator, streamed: bool) -> None:
    """A call without its result: HTTP 400 ``ValidationException`` in the Anthropic API's words, plain and streamed."""
    messages: list[dict[str, object]] = [
        {"role": "user", "content": "Read a."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "read", "input": {}}]},
        {"role": "user", "content": "Go on."},
    ]
    client = bedrock_client(sim.base_url)
    call = client.invoke_model_with_response_stream if streamed else client.invoke_model
    with pytest.raises(ClientError, match="tool_use` ids were found without `tool_result` blocks") as refused:
        call(modelId=MODEL, body=invoke_body(messages))
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert [r.status for r in sim.requests] == [400]
