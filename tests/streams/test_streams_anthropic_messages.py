"""The Anthropic Messages observer over hand-made streams: whole, cut, unnamed, torn, refused, substituted, looping."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Final

import pytest

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import StreamEndIgnored, StreamReport, observer_for
from otel_toolturn.streams._repetition import RepetitionPoll
from otel_toolturn.streams._truncation_cause import CAP_CLAUSE, TRANSPORT_CLAUSE
from tests.streams._drive import (
    as_object,
    assert_one_truncated_drop,
    assert_whole_turn,
    both,
    fed,
    raw_report,
    sdk_report,
)
from tests.streams._frames import (
    Frame,
    a_block_stop,
    a_delta,
    a_error,
    a_json,
    a_start,
    a_stop,
    a_text,
    a_text_start,
    a_tool_start,
    a_tool_turn,
)

LANE: Final[Lane] = "anthropic.messages"
ARGS = '{"location": "Paris", "unit": "celsius"}'


def report(frames: list[Frame]) -> StreamReport:
    return both(LANE, frames)


def test_whole_tool_turn_agrees_with_the_sdk() -> None:
    """A whole call: its arguments parsed, stop reason, usage and id read, and the SDK's final message agrees."""
    frames = a_tool_turn(
        "toolu_1", "get_weather", ['{"location"', ': "Paris", ', '"unit": "celsius"}'], close=True, stop="tool_use"
    )
    r = report(frames)
    assert [(c.call_id, c.name, dict(c.arguments)) for c in r.calls] == [("toolu_1", "get_weather", json.loads(ARGS))]
    assert_whole_turn(LANE, frames, r, finish="tool_use", response_id="msg_1")


@pytest.mark.parametrize("cut", range(len(ARGS)))
def test_arguments_cut_at_every_offset_are_never_a_call(cut: int) -> None:
    """Arguments cut at any byte, with no block stop: no call, one truncated drop naming the id."""
    for stop, clause in (("max_tokens", CAP_CLAUSE), (None, TRANSPORT_CLAUSE), ("end_turn", "")):
        r = raw_report(LANE, a_tool_turn("toolu_1", "get_weather", [ARGS[:cut]], close=False, stop=stop))
        assert_one_truncated_drop(r, "toolu_1", clause=clause, torn=stop is None)
        assert r.model_output_invalid is not None
        assert r.model_output_invalid.cause == "truncated"
        assert r.model_output_invalid.output_limit is (stop == "max_tokens")


@pytest.mark.parametrize("cut", range(1, len(ARGS)))
def test_closed_call_with_cut_arguments_is_dropped(cut: int) -> None:
    """The block's own stop does not make cut arguments whole: still a truncated drop."""
    r = raw_report(LANE, a_tool_turn("toolu_1", "get_weather", [ARGS[:cut]], close=True, stop="tool_use"))
    assert r.calls == ()
    assert [(d.cause, d.count) for d in r.drops] == [("truncated", 1)]


def test_no_argument_bytes_closed_is_a_no_argument_call_and_unclosed_is_cut() -> None:
    """No argument bytes: a closed block is a call with {}; an unclosed one is a truncated drop."""
    closed = report(a_tool_turn("toolu_1", "now", [], close=True, stop="tool_use"))
    assert [dict(c.arguments) for c in closed.calls] == [{}]
    cut = report(a_tool_turn("toolu_1", "now", [], close=False, stop="max_tokens"))
    assert cut.calls == ()
    assert [d.cause for d in cut.drops] == ["truncated"]


def test_another_call_opening_is_no_close_evidence() -> None:
    """A second block opening does not close the first: the first, cut, is dropped; the second runs."""
    frames = [
        a_start(),
        a_tool_start(0, "toolu_1", "a"),
        a_json(0, '{"x": 1'),
        a_tool_start(1, "toolu_2", "b"),
        a_json(1, '{"y": 2}'),
        a_block_stop(1),
        a_delta("tool_use"),
        a_stop(),
    ]
    r = report(frames)
    assert [c.call_id for c in r.calls] == ["toolu_2"]
    assert [(d.cause, d.call_ids) for d in r.drops] == [("truncated", ("toolu_1",))]


def test_call_with_no_name() -> None:
    """A closed block without a name is an unnamed drop; an unclosed one is truncated."""
    closed = report(a_tool_turn("toolu_1", "", ['{"a": 1}'], close=True, stop="tool_use"))
    assert [(d.cause, d.count, d.call_ids) for d in closed.drops] == [("unnamed", 1, ("toolu_1",))]
    assert closed.model_output_invalid is not None
    assert closed.model_output_invalid.cause == "unnamed"
    cut = raw_report(LANE, a_tool_turn("toolu_1", "", ['{"a": 1}'], close=False, stop=None))
    assert [d.cause for d in cut.drops] == ["truncated"]


def test_frame_that_is_not_json_is_a_bad_frame_drop() -> None:
    """A data payload that is not JSON is counted as a bad frame; the rest of the stream still reads."""
    frames: list[Frame | str] = [*a_tool_turn("toolu_1", "f", ['{"a": 1}'], close=True, stop=None)]
    frames[3:3] = ["{not json"]
    frames += [a_delta("tool_use"), a_stop()]
    r = raw_report(LANE, frames)
    assert [c.call_id for c in r.calls] == ["toolu_1"]
    assert [(d.cause, d.count) for d in r.drops] == [("bad_frame", 1)]
    assert "stream frame was not valid JSON" in r.notes[0].text


def test_no_finish_frame_is_torn() -> None:
    """A stream that stops without a stop reason, message stop or error is torn."""
    r = report([a_start(), a_text_start(0), a_text(0, "Hello"), a_block_stop(0)])
    assert r.torn
    assert r.finish_reasons == ()
    assert r.drops == ()


def test_content_and_a_second_ending_after_the_terminal_statement_are_refused() -> None:
    """After the stop reason, content and later endings are refused and counted; the later usage is read."""
    frames = [
        *a_tool_turn("toolu_1", "f", ['{"a": 1'], close=False, stop="tool_use"),
        a_json(1, "}"),
        a_block_stop(1),
        a_text(0, "more"),
        a_delta("end_turn", output_tokens=99),
        a_stop(),
    ]
    r = report(frames)
    assert r.ends_ignored == StreamEndIgnored(statement="content", word="content_block_delta", count=5)
    assert r.finish_reasons == ("tool_use",)
    assert r.usage.output_tokens == 99
    assert r.calls == ()  # the arguments completed only after the end: the turn was frozen cut
    assert [d.cause for d in r.drops] == ["truncated"]
    assert not r.torn


def test_message_stop_alone_decides_and_a_later_stop_reason_is_refused() -> None:
    """A message stop with no stop reason is the terminal statement; a stop reason after it is refused."""
    r = report([a_start(), a_stop(), a_delta("end_turn", output_tokens=7)])
    assert not r.torn
    assert r.finish_reasons == ()
    assert r.ends_ignored == StreamEndIgnored(statement="finish", word="end_turn", count=1)
    assert r.usage.output_tokens == 7


def test_in_band_error_is_an_ending() -> None:
    """An error event ends the turn (not torn); content after it is refused."""
    r = raw_report(LANE, [a_start(), a_text_start(0), a_error(), a_text(0, "x")])
    assert not r.torn
    assert r.ends_ignored == StreamEndIgnored(statement="content", word="content_block_delta", count=1)


def test_model_substitution() -> None:
    """A stream naming another model than the requested one reports the substitution."""
    substituted = report([a_start(model="model-b"), a_delta("end_turn"), a_stop()])
    assert (substituted.response_model, substituted.substituted_model) == ("model-b", "model-b")
    same = report([a_start(model="model-a-20250101"), a_delta("end_turn"), a_stop()])
    assert (same.response_model, same.substituted_model) == ("model-a-20250101", None)


def test_a_second_message_start_is_refused_and_cannot_retract() -> None:
    """A message start after the end is refused content: it neither retracts nor substitutes."""
    r = raw_report(LANE, [a_start(model="model-b"), a_delta("end_turn"), a_stop(), a_start(model="model-a")])
    assert r.substituted_model == "model-b"
    assert r.ends_ignored == StreamEndIgnored(statement="content", word="message_start", count=1)


def test_repetition_loop_is_cut() -> None:
    """A text that loops is reported as a cut with its segment and depth."""
    frames = [a_start(), a_text_start(0), *[a_text(0, "I will check. ") for _ in range(80)], a_block_stop(0)]
    r = report([*frames, a_delta("end_turn"), a_stop()])
    assert r.repetition.cut is not None
    assert r.repetition.cut.rule == "segment_loop"
    assert r.repetition.cut.depth >= 12


def test_server_tool_blocks_are_not_client_calls() -> None:
    """A server tool block with arguments is neither a call nor a drop."""
    frames = [
        a_start(),
        a_tool_start(0, "srvtoolu_1", "web_search", kind="server_tool_use"),
        a_json(0, '{"query": "x'),
        a_delta("end_turn"),
        a_stop(),
    ]
    r = report(frames)
    assert (r.calls, r.drops) == ((), ())


def _server_result(index: int, use_id: str, kind: str = "web_search_tool_result") -> Frame:
    block = {"type": kind, "tool_use_id": use_id, "content": [] if kind != "mcp_tool_result" else "ok"}
    return {"type": "content_block_start", "index": index, "content_block": block}


def _server_turn(kind: str, *, answered: bool) -> list[Frame]:
    """A server (or MCP) tool use whose arguments are whole, then its result block when ``answered``."""
    use = a_tool_start(0, "srvtoolu_1", "web_search", kind=kind)
    result_kind = "mcp_tool_result" if kind == "mcp_tool_use" else "web_search_tool_result"
    frames = [a_start(), use, a_json(0, '{"query": "x"}'), a_block_stop(0)]
    if answered:
        frames += [_server_result(1, "srvtoolu_1", result_kind), a_block_stop(1)]
    return frames


@pytest.mark.parametrize("kind", ["server_tool_use", "mcp_tool_use"])
def test_a_server_tool_use_its_result_closes_is_neither_a_call_nor_a_drop(kind: str) -> None:
    """A server or MCP tool use answered by its result block in the stream: no client call, no drop."""
    r = raw_report(LANE, [*_server_turn(kind, answered=True), a_delta("end_turn"), a_stop()])
    assert (r.calls, r.drops, r.unfinished, r.torn) == ((), (), None, False)


@pytest.mark.parametrize("kind", ["server_tool_use", "mcp_tool_use"])
def test_a_torn_stream_that_leaves_a_server_tool_use_open_counts_it_like_an_open_call(kind: str) -> None:
    """Torn (or ended by an error) with a server or MCP use no result block closed: a truncated, unfinished drop."""
    for ending in ([], [a_error()]):
        r = raw_report(LANE, [*_server_turn(kind, answered=False), *ending])
        assert r.calls == ()
        assert [(d.cause, d.count, d.call_ids) for d in r.drops] == [("truncated", 1, ("srvtoolu_1",))]
        assert r.unfinished is not None
        assert r.unfinished.call_ids == ("srvtoolu_1",)
        assert r.torn is (not ending)


def test_a_torn_stream_after_the_server_result_has_nothing_open() -> None:
    """A stream torn after the result block started leaves no server call open."""
    r = raw_report(LANE, _server_turn("server_tool_use", answered=True))
    assert (r.drops, r.torn) == ((), True)


def test_a_pause_turn_leaves_a_server_tool_use_open_by_design() -> None:
    """``pause_turn`` with an open server tool use: the caller continues the turn, so nothing is dropped."""
    r = report([*_server_turn("server_tool_use", answered=False), a_delta("pause_turn"), a_stop()])
    assert (r.calls, r.drops, r.unfinished, r.finish_reasons) == ((), (), None, ("pause_turn",))


def test_unreadable_frame_shape_never_raises() -> None:
    """A JSON frame of a shape the observer cannot read is counted as unread, never raised."""
    observer = observer_for(LANE, requested_model=None)
    observer.feed(
        {"type": "content_block_delta", "index": [], "delta": {"type": "input_json_delta", "partial_json": "x"}}
    )
    observer.feed(["not", "an", "event"])
    observer.feed(None)
    observer.feed(b"[DONE]")
    observer.feed("[1, 2]")
    r = observer.finish()
    assert r.frames_unread == 2
    assert r.events == 5
    assert r.torn


def test_a_second_start_at_the_same_index_does_not_erase_the_first_call() -> None:
    """A block start reusing an index leaves the first, cut call judged and dropped, not silently lost."""
    frames = [
        a_start(),
        a_tool_start(0, "toolu_1", "a"),
        a_json(0, '{"x": '),
        a_tool_start(0, "toolu_2", "b"),
        a_json(0, "{}"),
        a_block_stop(0),
        a_delta("tool_use"),
        a_stop(),
    ]
    r = raw_report(LANE, frames)
    assert [c.call_id for c in r.calls] == ["toolu_2"]
    assert [(d.cause, d.call_ids) for d in r.drops] == [("truncated", ("toolu_1",))]


def frames_of_every_kind() -> list[Frame | str | bytes]:
    """A stream with each kind of frame the observer keeps, refuses, or cannot read."""
    parts = ['{"k": ', '"v"', "}"]
    return [
        a_start(),
        a_text_start(0),
        *[a_text(0, f"fragment {i}. ") for i in range(5)],
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 5}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}},
        a_block_stop(0),
        a_tool_start(1, "toolu_1", "f"),
        *[a_json(1, part) for part in parts[:2]],
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": 7}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta"}},
        a_json(9, "nowhere"),
        {"type": "content_block_delta", "index": [], "delta": {"type": "input_json_delta", "partial_json": "x"}},
        a_json(1, parts[2]),
        a_block_stop(1),
        '{"type": "ping"}',
        "not json",
        b"[1, 2]",
        a_delta("tool_use"),
        a_stop(),
        a_text(0, "after the end"),
        a_json(1, "after the end"),
    ]


def test_every_event_is_counted_once_and_read_alike_as_dicts_or_objects() -> None:
    """Fragments kept or skipped, frames refused or unreadable: one count each, one report for dicts and objects."""
    frames = frames_of_every_kind()
    before = copy.deepcopy(frames)
    as_dicts = fed(LANE, frames)
    assert frames == before
    assert as_dicts.events == len(frames)
    assert [(c.call_id, dict(c.arguments)) for c in as_dicts.calls] == [("toolu_1", {"k": "v"})]
    assert as_dicts.frames_unread == 2
    assert [(d.cause, d.count) for d in as_dicts.drops] == [("bad_frame", 1)]
    assert as_dicts.ends_ignored == StreamEndIgnored(statement="content", word="content_block_delta", count=2)
    objects = [as_object(f) if isinstance(f, dict) else f for f in frames]
    assert fed(LANE, objects) == as_dicts


def test_a_frame_object_is_never_altered() -> None:
    """Reading attribute-only frames of every kind leaves each as it was."""
    objects = [as_object(f) if isinstance(f, dict) else f for f in frames_of_every_kind()]
    before = [json.dumps(o, default=vars, sort_keys=True) if not isinstance(o, str | bytes) else o for o in objects]
    fed(LANE, objects)
    after = [json.dumps(o, default=vars, sort_keys=True) if not isinstance(o, str | bytes) else o for o in objects]
    assert after == before


def test_sdk_events_give_the_raw_report_events_included() -> None:
    """The SDK's own event objects and the raw dicts give one report, the event count included."""
    frames: list[Frame | str] = [
        a_start(),
        a_text_start(0),
        *[a_text(0, f"fragment {i}. ") for i in range(30)],
        a_block_stop(0),
        a_tool_start(1, "toolu_1", "f"),
        *[a_json(1, part) for part in ('{"a": [1, ', '2], "b"', ': "c"}')],
        a_block_stop(1),
        a_delta("tool_use"),
        a_stop(),
        a_text(0, "after the end"),
    ]
    via_sdk = sdk_report(LANE, frames)
    assert via_sdk == raw_report(LANE, frames)
    assert via_sdk.events == len(frames)
    assert [dict(c.arguments) for c in via_sdk.calls] == [{"a": [1, 2], "b": "c"}]


def test_streamed_text_reaches_the_poll_in_order() -> None:
    """The text deltas give the repetition outcome of a poll fed the same fragments: spared hits and the cut."""
    natural = [f"line {i}: fine. " for i in range(30)]
    texts = [*natural, *[f"row {i % 5} | ok | " for i in range(25)], *natural, *["I will check the file. "] * 40]
    poll = RepetitionPoll()
    for text in texts:
        poll.feed(text)
    r = report(
        [a_start(), a_text_start(0), *[a_text(0, t) for t in texts], a_block_stop(0), a_delta("end_turn"), a_stop()]
    )
    assert r.repetition == poll.report()
    assert r.repetition.spared
    assert r.repetition.cut is not None


def test_a_report_taken_mid_stream_leaves_the_rest_alone() -> None:
    """``finish`` mid-stream does not disturb the count or the text of the report taken at the end."""
    observer = observer_for(LANE, requested_model="model-a")
    frames = [a_start(), a_text_start(0), *[a_text(0, "I will check. ") for _ in range(40)]]
    for frame in frames:
        observer.feed(as_object(frame))
    first = observer.finish()
    rest = [*[a_text(0, "I will check. ") for _ in range(60)], a_block_stop(0), a_delta("end_turn"), a_stop()]
    for frame in rest:
        observer.feed(as_object(frame))
    second = observer.finish()
    assert (first.events, second.events) == (len(frames), len(frames) + len(rest))
    assert first.torn
    assert not second.torn
    whole = raw_report(LANE, frames + rest)
    assert dataclasses.replace(second, events=0) == dataclasses.replace(whole, events=0)
    assert second.repetition.cut is not None
