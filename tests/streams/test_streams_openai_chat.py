"""The Chat Completions observer over hand-made streams: whole, cut, unnamed, torn, refused, substituted, looping."""

from __future__ import annotations

import json
from typing import Final

import pytest

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import StreamEndIgnored, observer_for
from otel_toolturn.streams._cap import CAP_CLAUSE, TRANSPORT_CLAUSE
from tests.streams._drive import both, final_of, raw_report
from tests.streams._frames import Frame, c_call, c_choice, c_chunk, c_tool_turn, c_usage
from tests.streams._sdk import sdk_calls, sdk_finish, sdk_usage

LANE: Final[Lane] = "openai.chat_completions"
ARGS = '{"location": "Seattle, WA"}'


def parallel_calls() -> list[Frame]:
    return [
        c_chunk(c_choice(tool_calls=[c_call(0, call_id="call_a", name="get_weather", arguments="")])),
        c_chunk(c_choice(tool_calls=[c_call(0, arguments='{"location": ')])),
        c_chunk(c_choice(tool_calls=[c_call(0, arguments='"Seattle, WA"}')])),
        c_chunk(c_choice(tool_calls=[c_call(1, call_id="call_b", name="get_weather", arguments="")])),
        c_chunk(c_choice(tool_calls=[c_call(1, arguments='{"location": "Paris"}')])),
        c_chunk(c_choice(finish="tool_calls")),
        c_usage(),
    ]


def test_parallel_calls_agree_with_the_sdk_accumulator() -> None:
    """Calls by index, finish reason and the usage chunk read; ChatCompletionStreamState agrees."""
    frames = parallel_calls()
    r = both(LANE, frames)
    assert [(c.call_id, c.index, dict(c.arguments)) for c in r.calls] == [
        ("call_a", 0, {"location": "Seattle, WA"}),
        ("call_b", 1, {"location": "Paris"}),
    ]
    assert (r.drops, r.torn, r.ends_ignored, r.finish_reasons) == ((), False, None, ("tool_calls",))
    assert (r.usage.input_tokens, r.usage.output_tokens, r.response_id) == (10, 20, "chatcmpl-1")
    final = final_of(LANE, frames)
    assert [(c.call_id, c.name, dict(c.arguments)) for c in r.calls] == sdk_calls(final)
    assert r.finish_reasons == sdk_finish(final)
    assert (r.usage.input_tokens, r.usage.output_tokens) == sdk_usage(final)


@pytest.mark.parametrize("cut", range(len(ARGS)))
def test_arguments_cut_at_every_offset_are_never_a_call(cut: int) -> None:
    """Arguments cut at any byte with `length` or no finish: no call, one truncated drop naming the id."""
    for finish, clause in (("length", CAP_CLAUSE), (None, TRANSPORT_CLAUSE), ("content_filter", "")):
        r = raw_report(LANE, c_tool_turn("call_a", "get_weather", [ARGS[:cut]], finish=finish))
        assert r.calls == ()
        assert [(d.cause, d.count, d.call_ids) for d in r.drops] == [("truncated", 1, ("call_a",))]
        assert r.truncation_clause == clause
        assert r.torn is (finish is None)


@pytest.mark.parametrize("cut", range(1, len(ARGS)))
def test_finished_turn_with_cut_arguments_is_dropped(cut: int) -> None:
    """A finish that closes the call does not make cut arguments whole."""
    r = raw_report(LANE, c_tool_turn("call_a", "get_weather", [ARGS[:cut]], finish="tool_calls"))
    assert r.calls == ()
    assert [d.cause for d in r.drops] == ["truncated"]


@pytest.mark.parametrize(("finish", "arguments"), [("tool_calls", {}), ("stop", {}), ("length", None), (None, None)])
def test_no_argument_bytes_run_only_when_the_finish_closes_the_turn(
    finish: str | None, arguments: dict[str, object] | None
) -> None:
    """No argument bytes: {} only under a finish that says the model finished its turn."""
    r = raw_report(LANE, c_tool_turn("call_a", "now", [], finish=finish))
    assert [dict(c.arguments) for c in r.calls] == ([] if arguments is None else [arguments])


def test_complete_arguments_under_length_are_still_a_call() -> None:
    """Arguments that are a complete JSON object are a call whatever the finish (the object is whole)."""
    r = raw_report(LANE, c_tool_turn("call_a", "f", [ARGS], finish="length"))
    assert [dict(c.arguments) for c in r.calls] == [json.loads(ARGS)]


def test_call_with_no_name() -> None:
    """A call with no name is unnamed when the turn finished, truncated when it did not."""
    frames = [c_chunk(c_choice(tool_calls=[c_call(0, call_id="call_a", arguments='{"a": 1}')]))]
    finished = both(LANE, [*frames, c_chunk(c_choice(finish="tool_calls"))])
    assert [(d.cause, d.call_ids) for d in finished.drops] == [("unnamed", ("call_a",))]
    cut = raw_report(LANE, frames)
    assert [d.cause for d in cut.drops] == ["truncated"]


def test_frame_that_is_not_json_and_the_done_sentinel() -> None:
    """A payload that is not JSON is a bad frame; `[DONE]` is the close sentinel, not a frame."""
    frames: list[Frame | str] = [*parallel_calls()]
    frames.insert(2, "{oops")
    frames.append("[DONE]")
    r = raw_report(LANE, frames)
    assert [(d.cause, d.count) for d in r.drops] == [("bad_frame", 1)]
    assert len(r.calls) == 2


def test_no_finish_frame_is_torn() -> None:
    """A choice that never finished makes the stream torn."""
    r = both(LANE, [c_chunk(c_choice(content="Hello"))])
    assert r.torn
    assert r.finish_reasons == ()


def test_content_and_a_second_ending_after_the_finish_are_refused() -> None:
    """After the finish: content and a second finish are refused and counted; the usage chunk is read."""
    frames = [
        c_chunk(c_choice(content="Done.")),
        c_chunk(c_choice(finish="stop")),
        c_chunk(c_choice(content=" More.")),
        c_chunk(c_choice(tool_calls=[c_call(0, call_id="late", name="f", arguments="{}")])),
        c_chunk(c_choice(finish="stop")),
        c_usage(completion=77),
    ]
    r = both(LANE, frames)
    assert r.ends_ignored == StreamEndIgnored(statement="content", word="content", count=3)
    assert r.calls == ()
    assert r.usage.output_tokens == 77
    assert r.finish_reasons == ("stop",)


def test_several_choices_each_decide_for_themselves() -> None:
    """With n > 1 each choice finishes on its own; calls carry their choice; an unfinished choice tears."""
    frames = [
        c_chunk(c_choice(0, content="Hi"), c_choice(1, tool_calls=[c_call(0, call_id="c1", name="f", arguments="{}")])),
        c_chunk(c_choice(0, finish="stop")),
        c_chunk(c_choice(1, finish="tool_calls")),
        c_usage(),
    ]
    r = both(LANE, frames)
    assert [(c.call_id, c.choice) for c in r.calls] == [("c1", 1)]
    assert (r.finish_reasons, r.torn, r.ends_ignored) == (("stop", "tool_calls"), False, None)
    unfinished = both(LANE, frames[:2])
    assert unfinished.torn
    assert [c.call_id for c in unfinished.calls] == ["c1"]  # a complete object needs no close evidence


def test_model_substitution_then_retraction() -> None:
    """The last chunk naming a model decides: another model then the requested one retracts."""
    retracted = both(LANE, [c_chunk(c_choice(content="a"), model="model-b"), c_chunk(c_choice(finish="stop"))])
    assert (retracted.substituted_model, retracted.response_model) == (None, "model-a")
    substituted = both(LANE, [c_chunk(c_choice(content="a")), c_chunk(c_choice(finish="stop"), model="model-b")])
    assert substituted.substituted_model == "model-b"


def test_in_band_error_frame_is_an_ending() -> None:
    """An error object in the stream ends the turn (not torn); later content is refused."""
    frames: list[Frame] = [
        c_chunk(c_choice(content="a")),
        {"error": {"type": "server_error", "message": "boom"}},
        c_chunk(c_choice(content="b")),
    ]
    r = raw_report(LANE, frames)
    assert not r.torn
    assert r.ends_ignored == StreamEndIgnored(statement="content", word="content", count=1)


def test_repetition_loop_is_cut() -> None:
    """Content that loops is reported as a cut."""
    frames = [c_chunk(c_choice(content="na")) for _ in range(400)]
    r = both(LANE, [*frames, c_chunk(c_choice(finish="stop"))])
    assert r.repetition.cut is not None
    assert r.repetition.cut.segment == "an"


def test_unreadable_chunks_never_raise() -> None:
    """Chunks of shapes the observer cannot read are counted or ignored, never raised."""
    observer = observer_for(LANE, requested_model=None)
    observer.feed({"choices": [{"index": 0, "delta": ["not", "a", "delta"]}]})
    observer.feed({"choices": "nope"})
    observer.feed(3)
    r = observer.finish()
    assert r.frames_unread == 1
    assert r.events == 3


def test_tool_call_deltas_without_index_are_told_apart_by_id() -> None:
    """Deltas with no index: a fragment carrying an id begins the next call; id-less fragments continue it."""
    frames = [
        c_chunk(
            c_choice(tool_calls=[{"id": "call_a", "type": "function", "function": {"name": "f", "arguments": '{"a"'}}])
        ),
        c_chunk(c_choice(tool_calls=[{"function": {"arguments": ": 1}"}}])),
        c_chunk(
            c_choice(tool_calls=[{"id": "call_b", "type": "function", "function": {"name": "g", "arguments": "{}"}}])
        ),
        c_chunk(c_choice(finish="tool_calls")),
    ]
    r = raw_report(LANE, frames)
    assert [(c.call_id, c.name, dict(c.arguments)) for c in r.calls] == [("call_a", "f", {"a": 1}), ("call_b", "g", {})]
