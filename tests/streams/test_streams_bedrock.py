"""The Bedrock Converse observer and response check: fail-closed arguments, torn streams, usage, boto3's own events."""

from __future__ import annotations

import json
from typing import Final

from hypothesis import given, settings
from hypothesis import strategies as st

from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator
from otel_toolturn.streams import check_response
from tests.bedrock_wire import MODEL, bedrock_client, text, user
from tests.streams._drive import as_object, fed, raw_report
from tests.streams.test_streams_properties import arguments, split

LANE: Final = "bedrock.converse"
Event = dict[str, object]


def start() -> Event:
    return {"messageStart": {"role": "assistant"}}


def tool_start(index: int, call_id: str, name: str) -> Event:
    return {
        "contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": call_id, "name": name}}}
    }


def tool_input(index: int, piece: str) -> Event:
    return {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}}


def text_delta(index: int, piece: str) -> Event:
    return {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": piece}}}


def block_stop(index: int) -> Event:
    return {"contentBlockStop": {"contentBlockIndex": index}}


def message_stop(reason: str) -> Event:
    return {"messageStop": {"stopReason": reason}}


def metadata(input_tokens: int = 10, output_tokens: int = 5, cache_read: int | None = None) -> Event:
    usage: dict[str, int] = {"inputTokens": input_tokens, "outputTokens": output_tokens}
    usage["totalTokens"] = input_tokens + output_tokens + (cache_read or 0)
    if cache_read is not None:
        usage["cacheReadInputTokens"] = cache_read
    return {"metadata": {"usage": usage, "metrics": {"latencyMs": 3}}}


def tool_turn(parts: list[str], *, close: bool, stop: str | None) -> list[Event]:
    """A text block, then one call whose input arrives in ``parts``; closed or not; a stop reason or none."""
    events = [start(), text_delta(0, "Looking."), block_stop(0), tool_start(1, "tooluse_1", "lookup")]
    events += [tool_input(1, part) for part in parts]
    if close:
        events.append(block_stop(1))
    if stop is not None:
        events += [message_stop(stop), metadata()]
    return events


def test_a_whole_call_runs_with_its_arguments_and_the_usage_is_read() -> None:
    """A closed call whose input pieces join to an object is a call; stop reason and usage are on the report."""
    report = raw_report(LANE, tool_turn(['{"key": ', '"a"}'], close=True, stop="tool_use"))
    assert [(c.call_id, c.name, dict(c.arguments)) for c in report.calls] == [("tooluse_1", "lookup", {"key": "a"})]
    assert report.drops == ()
    assert report.finish_reasons == ("tool_use",)
    assert (report.usage.input_tokens, report.usage.output_tokens) == (10, 5)
    assert not report.torn


def test_cached_input_tokens_count_as_input() -> None:
    """``cacheReadInputTokens`` is added to ``inputTokens`` (every input token) and reported apart too."""
    report = raw_report(
        LANE, [start(), text_delta(0, "hi"), block_stop(0), message_stop("end_turn"), metadata(4, 2, 6)]
    )
    assert (report.usage.input_tokens, report.usage.cache_read_input_tokens) == (10, 6)


def test_no_message_stop_is_torn_and_an_open_call_is_dropped() -> None:
    """A stream that ends without ``messageStop`` is torn; its call, never closed, is a ``truncated`` drop."""
    report = raw_report(LANE, tool_turn(['{"key": '], close=False, stop=None))
    assert report.torn
    assert report.calls == ()
    assert [(d.cause, d.call_ids) for d in report.drops] == [("truncated", ("tooluse_1",))]


def test_content_after_message_stop_is_refused_and_counted() -> None:
    """Content after the ending and a second ``messageStop`` are counted as ignored; the metadata trailer is read."""
    events = [*tool_turn(["{}"], close=True, stop="tool_use"), text_delta(2, " late"), message_stop("end_turn")]
    report = raw_report(LANE, events)
    assert report.ends_ignored is not None
    assert (report.ends_ignored.statement, report.ends_ignored.count) == ("content", 2)
    assert report.finish_reasons == ("tool_use",)


def test_an_in_stream_exception_ends_the_stream() -> None:
    """An event of the service's ``…Exception`` kinds is an ending: not torn, the open call dropped."""
    error: Event = {"modelStreamErrorException": {"message": "boom"}}
    events = [*tool_turn(['{"k'], close=False, stop=None), error]
    report = raw_report(LANE, events)
    assert not report.torn
    assert report.calls == ()


def test_attribute_events_read_as_dicts() -> None:
    """Events as objects with attributes give the same report as the dicts."""
    events = tool_turn(['{"key": ', '"a"}'], close=True, stop="tool_use")
    assert fed(LANE, [as_object(e) for e in events]) == raw_report(LANE, events)


@settings(max_examples=100, deadline=None)
@given(args=arguments, cut=st.integers(min_value=0), cuts=st.lists(st.integers(min_value=0), max_size=6))
def test_a_cut_call_never_runs(args: dict[str, object], cut: int, cuts: list[int]) -> None:
    """Any proper prefix of the input, in any chunking, left open under ``max_tokens`` or torn: a truncated drop."""
    whole = json.dumps(args)
    prefix = whole[: cut % len(whole)]
    for stop in ("max_tokens", None):
        report = raw_report(LANE, tool_turn(split(prefix, cuts), close=False, stop=stop))
        assert report.calls == ()
        assert [(d.cause, d.call_ids) for d in report.drops] == [("truncated", ("tooluse_1",))]


@settings(max_examples=100, deadline=None)
@given(args=arguments, cuts=st.lists(st.integers(min_value=0), max_size=6))
def test_a_whole_call_runs_with_its_exact_arguments(args: dict[str, object], cuts: list[int]) -> None:
    """The whole input, in any chunking, closed: one call whose arguments equal the original object."""
    report = raw_report(LANE, tool_turn(split(json.dumps(args), cuts), close=True, stop="tool_use"))
    assert report.drops == ()
    assert [dict(c.arguments) for c in report.calls] == [json.loads(json.dumps(args))]


def test_a_whole_response_is_checked() -> None:
    """``check_response``: the ``toolUse`` blocks are calls, the stop reason and usage are read."""
    response = {
        "output": {"message": {"role": "assistant", "content": [{"text": "ok"}, tool_block("tooluse_9", {"a": 1})]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
        "metrics": {"latencyMs": 1},
    }
    report = check_response(LANE, response, requested_model=MODEL)
    assert [(c.call_id, dict(c.arguments)) for c in report.calls] == [("tooluse_9", {"a": 1})]
    assert report.finish_reasons == ("tool_use",)
    assert (report.usage.input_tokens, report.usage.output_tokens) == (3, 4)


def test_a_whole_response_cut_by_the_cap_drops_its_last_call() -> None:
    """Under ``max_tokens`` the last block, a call, is not closed: a truncated drop, never a call."""
    response = {"output": {"message": {"content": [tool_block("tooluse_9", {})]}}, "stopReason": "max_tokens"}
    report = check_response(LANE, response, requested_model=MODEL)
    assert report.calls == ()
    assert [d.cause for d in report.drops] == ["truncated"]


def tool_block(call_id: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"toolUse": {"toolUseId": call_id, "name": "lookup", "input": arguments}}


def test_boto3s_own_events_from_the_simulator_give_the_report(sim: Simulator) -> None:
    """The events boto3 parses from the simulator's event stream give the calls, the stop reason and the usage."""
    sim.enqueue(ScriptedTurn(text="Looking.", calls=(ScriptedCall(name="lookup", arguments={"key": "a"}),)))
    stream = bedrock_client(sim.base_url).converse_stream(modelId=MODEL, messages=[user(text("Go."))])
    report = fed(LANE, list(stream["stream"]))
    assert [(c.name, dict(c.arguments)) for c in report.calls] == [("lookup", {"key": "a"})]
    assert report.finish_reasons == ("tool_use",)
    assert report.usage.output_tokens is not None
    assert not report.torn
