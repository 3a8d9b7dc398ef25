"""The Responses observer over hand-made streams: whole, cut, unnamed, torn, refused, substituted, looping."""

from __future__ import annotations

from typing import Final

import pytest

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import StreamEndIgnored, observer_for
from otel_toolturn.streams._truncation_cause import CAP_CLAUSE, TRANSPORT_CLAUSE
from tests.streams._drive import assert_one_truncated_drop, assert_whole_turn, both, raw_report
from tests.streams._frames import (
    Frame,
    r_args,
    r_args_done,
    r_created,
    r_end,
    r_item_added,
    r_item_done,
    r_text,
    r_tool_turn,
)

LANE: Final[Lane] = "openai.responses"
ARGS = '{"country": "France"}'


def test_whole_call_agrees_with_the_sdk_final_response() -> None:
    """A whole call: arguments, status, usage and id read; the Responses stream's final response agrees."""
    frames = r_tool_turn("call_1", "get_capital", ['{"country"', ': "France"}'], done=True, end="completed")
    frames[-1]["response"]["output"] = [r_item_done(0, "call_1", "get_capital", ARGS)["item"]]  # type: ignore[index]
    r = both(LANE, frames)
    assert [(c.call_id, c.name, dict(c.arguments)) for c in r.calls] == [
        ("call_1", "get_capital", {"country": "France"})
    ]
    assert_whole_turn(LANE, frames, r, finish="completed", response_id="resp_1")


@pytest.mark.parametrize("cut", range(len(ARGS)))
def test_arguments_cut_at_every_offset_are_never_a_call(cut: int) -> None:
    """Arguments cut at any byte with no done frame: no call, one truncated drop naming the id."""
    for end, clause in (("incomplete", CAP_CLAUSE), (None, TRANSPORT_CLAUSE), ("completed", "")):
        r = raw_report(LANE, r_tool_turn("call_1", "get_capital", [ARGS[:cut]], done=False, end=end))
        assert_one_truncated_drop(r, "call_1", clause=clause, torn=end is None)


@pytest.mark.parametrize("cut", range(1, len(ARGS)))
def test_done_frames_with_cut_arguments_are_dropped(cut: int) -> None:
    """Done frames close the call but do not make cut arguments whole."""
    r = raw_report(LANE, r_tool_turn("call_1", "f", [ARGS[:cut]], done=True, end="completed"))
    assert r.calls == ()
    assert [d.cause for d in r.drops] == ["truncated"]


def test_done_arguments_win_over_the_fragments() -> None:
    """The done frame's complete argument text is the call's, whatever the fragments said."""
    frames = [r_created(), r_item_added(0, "call_1", "f"), r_args(0, '{"a": '), r_args_done(0, '{"a": 2}'), r_end()]
    r = both(LANE, frames)
    assert [dict(c.arguments) for c in r.calls] == [{"a": 2}]


def test_no_argument_bytes_closed_is_a_no_argument_call_and_unclosed_is_cut() -> None:
    """No argument bytes: {} after a done frame; a truncated drop without one."""
    closed = both(LANE, [r_created(), r_item_added(0, "call_1", "now"), r_item_done(0, "call_1", "now", ""), r_end()])
    assert [dict(c.arguments) for c in closed.calls] == [{}]
    cut = both(LANE, [r_created(), r_item_added(0, "call_1", "now"), r_end()])
    assert [d.cause for d in cut.drops] == ["truncated"]


def test_call_with_no_name() -> None:
    """A closed call without a name is unnamed; an unclosed one is truncated."""
    closed = both(LANE, r_tool_turn("call_1", "", ['{"a": 1}'], done=True, end="completed"))
    assert [(d.cause, d.call_ids) for d in closed.drops] == [("unnamed", ("call_1",))]
    cut = both(LANE, r_tool_turn("call_1", "", ['{"a": 1}'], done=False, end="completed"))
    assert [d.cause for d in cut.drops] == ["truncated"]


def test_frame_that_is_not_json_is_a_bad_frame_drop() -> None:
    """A payload that is not JSON is counted as a bad frame."""
    frames: list[Frame | str] = [r_created(), "data that is not json", r_text("Hi"), r_end()]
    r = raw_report(LANE, frames)
    assert [(d.cause, d.count) for d in r.drops] == [("bad_frame", 1)]
    assert not r.torn


def test_no_ending_is_torn() -> None:
    """A stream with no completed, incomplete, failed or error event is torn."""
    r = both(LANE, [r_created(), r_text("Hello")])
    assert r.torn
    assert r.finish_reasons == ()


def test_content_and_a_second_ending_after_the_end_are_refused() -> None:
    """After the end, events are refused and counted; the usage of a later ending is still read."""
    frames = [r_created(), r_text("Hi"), r_end(), r_text("again"), r_end("failed", output_tokens=55)]
    r = both(LANE, frames)
    assert r.ends_ignored == StreamEndIgnored(statement="content", word="response.output_text.delta", count=2)
    assert r.finish_reasons == ("completed",)
    assert r.usage.output_tokens == 55


def test_incomplete_names_its_reason() -> None:
    """An incomplete response reports its reason as the finish word; the cap reason is the cap stop."""
    r = both(LANE, [r_created(), r_text("Hi"), r_end("incomplete", reason="max_output_tokens")])
    assert r.finish_reasons == ("max_output_tokens",)


def test_model_substitution_then_retraction() -> None:
    """The last event naming a model decides: the requested model at the end retracts."""
    retracted = both(LANE, [r_created(model="model-b"), r_end(model="model-a")])
    assert retracted.substituted_model is None
    substituted = both(LANE, [r_created(model="model-a"), r_end(model="model-b")])
    assert substituted.substituted_model == "model-b"


def test_error_event_is_an_ending() -> None:
    """An error event ends the turn; later events are refused."""
    frames: list[Frame] = [r_created(), {"type": "error", "code": "server_error", "message": "x"}, r_text("late")]
    r = raw_report(LANE, frames)
    assert not r.torn
    assert r.ends_ignored is not None
    assert r.ends_ignored.count == 1


def test_repetition_loop_is_cut() -> None:
    """Output text that loops is reported as a cut."""
    r = both(LANE, [r_created(), *[r_text("Let me try again. ") for _ in range(60)], r_end()])
    assert r.repetition.cut is not None


def test_unreadable_events_never_raise() -> None:
    """Events of shapes the observer cannot read are counted or ignored, never raised."""
    observer = observer_for(LANE, requested_model=None)
    observer.feed({"type": "response.function_call_arguments.delta", "output_index": [], "delta": "x"})
    observer.feed({"type": None})
    r = observer.finish()
    assert r.frames_unread == 1
    assert r.torn


def test_argument_frames_for_an_item_never_opened_are_judged() -> None:
    """Argument bytes for an item that was never opened: dropped (no name), or whole when a done item names it."""
    unnamed = raw_report(LANE, [r_created(), r_args(3, '{"a": 1}'), r_args_done(3, '{"a": 1}'), r_end()])
    assert [(d.cause, d.count) for d in unnamed.drops] == [("unnamed", 1)]
    cut = raw_report(LANE, [r_created(), r_args(3, '{"a": 1'), r_end()])
    assert [d.cause for d in cut.drops] == ["truncated"]
    named = raw_report(LANE, [r_created(), r_args(3, '{"a": 1}'), r_item_done(3, "call_9", "f", '{"a": 1}'), r_end()])
    assert [(c.call_id, c.name, dict(c.arguments)) for c in named.calls] == [("call_9", "f", {"a": 1})]
