"""Cohere v2 chat's observer and response check: fail-closed calls, finish, usage, torn streams, the SDK's events.

Event shapes from https://docs.cohere.com/v2/docs/streaming and https://docs.cohere.com/docs/tool-use-streaming
(``message-start`` … ``tool-call-start`` / ``-delta`` / ``-end`` … ``message-end`` with ``finish_reason`` and
``usage``), as the installed ``cohere`` SDK's ``V2ChatStreamResponse`` types read them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Final

import cohere
import httpx
import pytest

from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator
from otel_toolturn.simulator._script import Misbehaviour
from otel_toolturn.streams import StreamReport, check_response, observer_for
from otel_toolturn.streams._truncation_cause import CAP_CLAUSE, TRANSPORT_CLAUSE
from tests.streams._drive import as_object, assert_one_truncated_drop

LANE: Final = "openai.chat_completions"
MODEL: Final = "command-a-03-2025"
Event = dict[str, object]


def start(response_id: str = "resp_1") -> Event:
    return {"type": "message-start", "id": response_id, "delta": {"message": {"role": "assistant"}}}


def plan(piece: str) -> Event:
    return {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": piece}}}


def call_start(index: int, call_id: str, name: str) -> Event:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    return {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": call}}}


def call_delta(index: int, piece: str) -> Event:
    return {
        "type": "tool-call-delta",
        "index": index,
        "delta": {"message": {"tool_calls": {"function": {"arguments": piece}}}},
    }


def call_end(index: int) -> Event:
    return {"type": "tool-call-end", "index": index}


def text(piece: str) -> Event:
    return {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": piece}}}}


def end(reason: str, *, error: str | None = None) -> Event:
    usage = {
        "billed_units": {"input_tokens": 9, "output_tokens": 4},
        "tokens": {"input_tokens": 10, "output_tokens": 5},
    }
    delta: Event = {"finish_reason": reason, "usage": {**usage, "cached_tokens": 2}}
    if error is not None:
        delta["error"] = error
    return {"type": "message-end", "delta": delta}


def tool_turn(parts: Sequence[str], *, close: bool, reason: str | None) -> list[Event]:
    """A plan, then one call whose arguments arrive in ``parts``; ended or not; a ``message-end`` or none."""
    events = [start(), plan("I will look "), plan("it up."), call_start(0, "call_1", "lookup")]
    events += [call_delta(0, part) for part in parts]
    if close:
        events.append(call_end(0))
    if reason is not None:
        events.append(end(reason))
    return events


def fed(events: Sequence[object]) -> StreamReport:
    """Each event fed as it is to a new Cohere observer; unaltered; ``finish`` repeatable."""
    before = copy.deepcopy(list(events))
    observer = observer_for(LANE, requested_model=MODEL, reply_format="cohere.chat")
    for event in events:
        observer.feed(event)
    report = observer.finish()
    assert observer.finish() == report, "finish() is not repeatable"
    assert list(events) == before, "the observer altered an event"
    return report


def sdk_events(events: Sequence[Event]) -> list[object]:
    """The frames as Cohere's SSE, read by the real SDK's ``chat_stream``: its own typed events."""
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()

    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}, request=request)

    http = httpx.Client(transport=httpx.MockTransport(serve))
    with cohere.ClientV2(base_url="https://api.cohere.com", api_key="k", httpx_client=http) as client:
        return list(client.chat_stream(model=MODEL, messages=[{"role": "user", "content": "go"}]))


def sdk_calls(events: Sequence[object]) -> list[tuple[str, str, object]]:
    """The calls the SDK's events spell: each start's id and name, its deltas' arguments joined and parsed."""
    calls: dict[int, list[str]] = {}
    for event in events:
        kind, index = getattr(event, "type", None), getattr(event, "index", None)
        if kind == "tool-call-start" and isinstance(index, int):
            call = event.delta.message.tool_calls  # type: ignore[attr-defined]
            calls[index] = [call.id, call.function.name, call.function.arguments or ""]
        elif kind == "tool-call-delta" and isinstance(index, int):
            calls[index][2] += event.delta.message.tool_calls.function.arguments  # type: ignore[attr-defined]
    return [(c[0], c[1], json.loads(c[2])) for _, c in sorted(calls.items())]


def test_a_whole_call_runs_with_its_arguments_and_the_usage_is_read() -> None:
    """A call ended by ``tool-call-end`` whose fragments join to an object runs; reason, usage and id are read."""
    report = fed(tool_turn(['{"key": ', '"a"}'], close=True, reason="TOOL_CALL"))
    assert [(c.call_id, c.name, dict(c.arguments)) for c in report.calls] == [("call_1", "lookup", {"key": "a"})]
    assert (report.drops, report.finish_reasons, report.torn) == ((), ("TOOL_CALL",), False)
    usage = report.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens) == (10, 5, 2)
    assert report.response_id == "resp_1"


def test_the_report_agrees_with_the_sdks_own_events() -> None:
    """Fed the SDK's typed events, the report is the raw frames' one, and its calls are what the events spell."""
    frames = [*tool_turn(['{"key": ', '"a"}'], close=True, reason=None), call_start(1, "call_2", "read")]
    frames += [call_delta(1, "{}"), call_end(1), end("TOOL_CALL")]
    events = sdk_events(frames)
    assert [type(e).__name__ for e in events][:2] == [
        "MessageStartV2ChatStreamResponse",
        "ToolPlanDeltaV2ChatStreamResponse",
    ]
    report = fed(events)
    assert report == fed(frames)
    assert [(c.call_id, c.name, dict(c.arguments)) for c in report.calls] == sdk_calls(events)
    assert report.finish_reasons == (events[-1].delta.finish_reason,)  # type: ignore[attr-defined]
    assert report.usage.input_tokens == events[-1].delta.usage.tokens.input_tokens  # type: ignore[attr-defined]


def test_attribute_only_events_read_as_dicts_do() -> None:
    """Objects without a mapping interface (``getattr`` only) give the same report as the JSON dicts."""
    frames = tool_turn(['{"key": ', '"a"}'], close=True, reason="TOOL_CALL")
    assert fed([as_object(f) for f in frames]) == fed(frames)


@pytest.mark.parametrize("parts", [['{"key": "a'], []], ids=["cut-mid-argument", "no-argument-byte"])
def test_a_stream_cut_mid_call_drops_it_and_is_torn(parts: list[str]) -> None:
    """No ``tool-call-end`` and no ``message-end``: the call never runs (fail-closed); the stream is torn."""
    report = fed(tool_turn(parts, close=False, reason=None))
    assert_one_truncated_drop(report, "call_1", clause=TRANSPORT_CLAUSE, torn=True)


def test_the_output_cap_mid_call_drops_it_and_says_so() -> None:
    """``MAX_TOKENS`` before the call's end: the call is dropped, the cap named, the stream not torn."""
    report = fed(tool_turn(['{"key": "a'], close=False, reason="MAX_TOKENS"))
    assert_one_truncated_drop(report, "call_1", clause=CAP_CLAUSE, torn=False)
    assert report.finish_reasons == ("MAX_TOKENS",)


def test_an_ended_call_whose_arguments_are_no_object_is_dropped() -> None:
    """Arguments that join to a JSON array are no call, even with its ``tool-call-end``."""
    report = fed(tool_turn(["[1, 2]"], close=True, reason="TOOL_CALL"))
    assert report.calls == ()
    assert [(d.cause, d.call_ids) for d in report.drops] == [("truncated", ("call_1",))]


def test_frames_after_the_end_are_refused_and_counted() -> None:
    """Content and a second ``message-end`` after the first are ignored, counted, the first ending kept."""
    report = fed([start(), text("Done."), end("COMPLETE"), text(" late"), end("MAX_TOKENS")])
    assert report.finish_reasons == ("COMPLETE",)
    assert report.ends_ignored is not None
    assert (report.ends_ignored.statement, report.ends_ignored.count) == ("content", 2)


def test_an_error_ending_is_an_ending_not_a_tear() -> None:
    """A ``message-end`` carrying an ``error`` ends the stream: not torn, no finish reason, the open call dropped."""
    report = fed([*tool_turn(['{"key"'], close=False, reason=None), end("ERROR", error="internal")])
    assert (report.torn, report.finish_reasons, report.calls) == (False, (), ())
    assert [d.call_ids for d in report.drops] == [("call_1",)]


def test_a_whole_response_is_checked_as_the_stream_is() -> None:
    """``check_response`` on a ``V2ChatResponse`` dict: the calls, ``MAX_TOKENS`` cutting the last one, usage."""
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"key": "a"}'}}
    cut = {"id": "call_2", "type": "function", "function": {"name": "lookup", "arguments": '{"key": "b'}}
    response = {
        "id": "resp_9",
        "finish_reason": "MAX_TOKENS",
        "message": {"role": "assistant", "tool_plan": "Look.", "tool_calls": [call, cut]},
        "usage": {"tokens": {"input_tokens": 7.0, "output_tokens": 3.0}},
    }
    report = check_response(LANE, response, requested_model=MODEL, reply_format="cohere.chat")
    assert [c.call_id for c in report.calls] == ["call_1"]
    assert [(d.cause, d.call_ids) for d in report.drops] == [("truncated", ("call_2",))]
    assert (report.finish_reasons, report.response_id) == (("MAX_TOKENS",), "resp_9")
    assert (report.usage.input_tokens, report.usage.output_tokens) == (7, 3)


@pytest.mark.parametrize(
    ("misbehaviour", "torn", "calls"), [(None, False, 1), ("no_finish", True, 1), ("cut_arguments", True, 0)]
)
def test_the_simulators_cohere_stream_through_the_real_sdk(
    misbehaviour: Misbehaviour | None, *, torn: bool, calls: int
) -> None:
    """The simulator's ``/v2/chat`` stream, read by the SDK and fed: whole, with no ``message-end``, cut mid-call."""
    misbehaviours: tuple[Misbehaviour, ...] = (misbehaviour,) if misbehaviour else ()
    turn = ScriptedTurn(
        text="Plan.", calls=(ScriptedCall(name="lookup", arguments={"key": "a"}),), misbehaviours=misbehaviours
    )
    with Simulator(turns=[turn]) as sim, cohere.ClientV2(base_url=sim.base_url, api_key="k", max_retries=0) as client:
        events = list(client.chat_stream(model=MODEL, messages=[{"role": "user", "content": "go"}]))
    report = fed(events)
    assert (report.torn, len(report.calls)) == (torn, calls)
    assert len(report.drops) == 1 - calls
