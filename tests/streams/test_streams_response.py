"""The non-streamed checks, per lane: arguments that are not an object, calls without a name, substitution."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from otel_toolturn import UnknownLaneError
from otel_toolturn._vocab import LANES, Lane
from otel_toolturn.streams import OBSERVED_LANES, StreamObserver, StreamReport, check_response, observer_for
from otel_toolturn.streams._truncation_cause import CAP_CLAUSE
from tests.openai_bodies import chat_envelope, response_envelope
from tests.streams._drive import raw_report
from tests.streams._frames import Frame, a_tool_turn, c_tool_turn, r_tool_turn, sse_bytes
from tests.streams._sdk import anthropic_message, chat_completion, helper_events, report_of, responses_response

Body = dict[str, object]


def anthropic_body(blocks: list[Body], *, stop: str = "tool_use", model: str = "model-a") -> Body:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 20},
    }


def tool_use(call_id: str, name: str, arguments: object) -> Body:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def chat_body(calls: list[Body], *, finish: str = "tool_calls", model: str = "model-a") -> Body:
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
    return {
        **chat_envelope(model, [choice]),
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    }


def chat_call(call_id: str, name: str | None, arguments: str) -> Body:
    function: Body = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    return {"id": call_id, "type": "function", "function": function}


def responses_body(items: list[Body], *, status: str = "completed", model: str = "model-a") -> Body:
    return {
        **response_envelope(model, status, items),
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30},
    }


def function_call(call_id: str, name: str, arguments: str, status: str = "completed") -> Body:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


SDK_OF = {
    "anthropic.messages": anthropic_message,
    "openai.chat_completions": chat_completion,
    "openai.responses": responses_response,
}


def check(lane: Lane, body: Body, *, requested: str = "model-a") -> StreamReport:
    """The report from the raw dict, after checking the SDK's own object gives the same and nothing was altered."""
    before = copy.deepcopy(body)
    from_raw = check_response(lane, body, requested_model=requested)
    assert body == before
    sdk_object = SDK_OF[lane](json.dumps(body).encode())
    assert check_response(lane, sdk_object, requested_model=requested) == from_raw
    return from_raw


def test_anthropic_message_calls_and_drops() -> None:
    """Whole calls run; a nameless call is unnamed; arguments that are not an object are truncated."""
    body = anthropic_body(
        [
            {"type": "text", "text": "Working."},
            tool_use("toolu_1", "get_weather", {"city": "Paris"}),
            tool_use("toolu_2", "", {"a": 1}),
            tool_use("toolu_3", "f", [1, 2]),
            tool_use("toolu_4", "g", '{"as": "text"}'),
        ]
    )
    r = check("anthropic.messages", body)
    assert [(c.call_id, dict(c.arguments)) for c in r.calls] == [
        ("toolu_1", {"city": "Paris"}),
        ("toolu_4", {"as": "text"}),
    ]
    assert [(d.cause, d.call_ids) for d in r.drops] == [("truncated", ("toolu_3",)), ("unnamed", ("toolu_2",))]
    assert (r.finish_reasons, r.response_id, r.usage.output_tokens, r.torn) == (("tool_use",), "msg_1", 20, False)


def test_anthropic_last_call_of_a_capped_message_is_not_closed() -> None:
    """Under max_tokens the last block was cut by the cap: an empty input there is a truncated drop."""
    r = check(
        "anthropic.messages",
        anthropic_body([tool_use("toolu_1", "f", {}), tool_use("toolu_2", "g", {})], stop="max_tokens"),
    )
    assert [c.call_id for c in r.calls] == ["toolu_1"]
    assert [(d.cause, d.call_ids) for d in r.drops] == [("truncated", ("toolu_2",))]
    assert r.truncation_clause == CAP_CLAUSE


def test_chat_completion_calls_and_drops() -> None:
    """Chat: cut arguments, a top-level array and a missing name are dropped; substitution is reported."""
    body = chat_body(
        [
            chat_call("call_1", "f", '{"a": 1}'),
            chat_call("call_2", "f", '{"a": '),
            chat_call("call_3", "f", "[1]"),
            chat_call("call_4", None, "{}"),
        ],
        model="model-b",
    )
    r = check("openai.chat_completions", body)
    assert [c.call_id for c in r.calls] == ["call_1"]
    assert [(d.cause, d.count, d.call_ids) for d in r.drops] == [
        ("truncated", 2, ("call_2", "call_3")),
        ("unnamed", 1, ("call_4",)),
    ]
    assert r.substituted_model == "model-b"
    assert (r.usage.input_tokens, r.usage.output_tokens) == (10, 20)


def test_chat_completion_empty_arguments_need_a_finished_turn() -> None:
    """Chat: empty arguments are {} under tool_calls, a truncated drop under length."""
    assert [
        dict(c.arguments) for c in check("openai.chat_completions", chat_body([chat_call("c", "f", "")])).calls
    ] == [{}]
    capped = check("openai.chat_completions", chat_body([chat_call("c", "f", "")], finish="length"))
    assert [d.cause for d in capped.drops] == ["truncated"]


def test_responses_response_calls_and_drops() -> None:
    """Responses: whole calls run; cut arguments, an unfinished item and a missing name are dropped."""
    body = responses_body(
        [
            function_call("call_1", "f", '{"a": 1}'),
            function_call("call_2", "f", '{"a'),
            function_call("call_3", "f", "", status="incomplete"),
            function_call("call_4", "", "{}"),
        ]
    )
    r = check("openai.responses", body, requested="model-a")
    assert [c.call_id for c in r.calls] == ["call_1"]
    assert [(d.cause, d.call_ids) for d in r.drops] == [("truncated", ("call_2", "call_3")), ("unnamed", ("call_4",))]
    assert (r.finish_reasons, r.response_id, r.substituted_model) == (("completed",), "resp_1", None)


def test_responses_incomplete_names_the_cap() -> None:
    """An incomplete response stopped by the cap names it in the clause of its dropped call."""
    r = check("openai.responses", responses_body([function_call("c", "f", '{"a')], status="incomplete"))
    assert r.finish_reasons == ("max_output_tokens",)
    assert r.truncation_clause == CAP_CLAUSE


@pytest.mark.parametrize("lane", OBSERVED_LANES)
def test_unreadable_responses_never_raise(lane: Lane) -> None:
    """A response of no known shape gives an empty report, never an exception."""
    for response in (None, {}, {"content": 3, "choices": "x", "output": None}, "text"):
        r = check_response(lane, response, requested_model=None)
        assert (r.calls, r.drops, r.torn) == ((), (), False)


def test_every_lane_is_observed() -> None:
    """Every lane of ``LANES`` has a stream observer and a response check."""
    assert OBSERVED_LANES == LANES


@pytest.mark.parametrize("lane", OBSERVED_LANES)
def test_observer_for_gives_a_fresh_observer_per_lane(lane: Lane) -> None:
    """Each lane has an observer that satisfies the protocol; two calls never share state."""
    first: StreamObserver = observer_for(lane, requested_model="m")
    second = observer_for(lane, requested_model="m")
    assert first is not second
    first.feed({"type": "x"})
    assert (first.finish().events, second.finish().events) == (1, 0)


def test_unknown_lane_is_a_typed_error() -> None:
    """A lane outside the closed set raises UnknownLaneError naming it."""
    with pytest.raises(UnknownLaneError, match="mistral"):
        observer_for("mistral.chat", requested_model=None)  # type: ignore[arg-type]
    with pytest.raises(UnknownLaneError, match="mistral"):
        check_response("mistral.chat", {}, requested_model=None)  # type: ignore[arg-type]


HELPER_TURNS: dict[Lane, list[Frame]] = {  # google-genai has no stream helper
    "anthropic.messages": a_tool_turn("id_1", "f", ['{"a": ', "1}"], close=True, stop="tool_use"),
    "openai.chat_completions": c_tool_turn("id_1", "f", ['{"a": ', "1}"], finish="tool_calls"),
    "openai.responses": r_tool_turn("id_1", "f", ['{"a": ', "1}"], done=True, end="completed"),
}


@pytest.mark.parametrize("lane", tuple(HELPER_TURNS))
def test_the_stream_helpers_events_give_the_same_report(lane: Lane) -> None:
    """Fed every event of the SDK's stream helper (wrappers and its own events included), the report is the raw one."""
    frames = HELPER_TURNS[lane]
    events = helper_events(lane, sse_bytes(lane, frames))
    assert len(events) >= len(frames)
    from_helper = report_of(lane, events, "model-a")
    assert [dict(c.arguments) for c in from_helper.calls] == [{"a": 1}]
    raw = raw_report(lane, frames)
    assert dataclasses.replace(from_helper, events=0) == dataclasses.replace(raw, events=0)
