"""The Chat Completions observer over hand-made streams: whole, cut, unnamed, torn, refused, substituted, looping."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Final, cast

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
from tests.streams._frames import Frame, c_call, c_choice, c_chunk, c_tool_turn, c_usage

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
    assert_whole_turn(LANE, frames, r, finish="tool_calls", response_id="chatcmpl-1")


@pytest.mark.parametrize("cut", range(len(ARGS)))
def test_arguments_cut_at_every_offset_are_never_a_call(cut: int) -> None:
    """Arguments cut at any byte with `length` or no finish: no call, one truncated drop naming the id."""
    for finish, clause in (("length", CAP_CLAUSE), (None, TRANSPORT_CLAUSE), ("content_filter", "")):
        r = raw_report(LANE, c_tool_turn("call_a", "get_weather", [ARGS[:cut]], finish=finish))
        assert_one_truncated_drop(r, "call_a", clause=clause, torn=finish is None)


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


def text(content: str, *, model: str = "model-a") -> Frame:
    return c_chunk(c_choice(content=content), model=model)


def fragment(index: int, **fields: str) -> Frame:
    return c_chunk(c_choice(tool_calls=[c_call(index, **fields)]))


def a_stream() -> list[Frame]:
    """Role chunk, text, two calls' fragments, a finish, then usage."""
    texts = [f"word {i} of the answer; " for i in range(40)]
    return [
        c_chunk(c_choice(content="")),
        *[text(t) for t in texts],
        fragment(0, call_id="call_1", name="read", arguments=""),
        *[fragment(0, arguments=part) for part in ('{"path": ', '"a.txt"', "}")],
        fragment(1, call_id="call_2", name="grep", arguments='{"q": '),
        fragment(1, arguments='"x"}'),
        c_chunk(c_choice(finish="tool_calls")),
        c_usage(),
    ]


def test_sdk_chunks_give_the_raw_report_events_included() -> None:
    """The SDK's own chunk objects and the raw dicts give one report, the event count included."""
    frames = a_stream()
    via_sdk = sdk_report(LANE, frames)
    assert via_sdk == raw_report(LANE, frames)
    assert via_sdk.events == len(frames)
    assert [(c.call_id, dict(c.arguments)) for c in via_sdk.calls] == [
        ("call_1", {"path": "a.txt"}),
        ("call_2", {"q": "x"}),
    ]


LOOP: Final = "I will check the file. "


def test_streamed_text_reaches_the_poll_in_order() -> None:
    """A sentence said once between two halves of a loop reaches the poll in its place: it breaks the loop, no cut."""
    frames = [
        c_chunk(c_choice(content="")),
        *[text(LOOP) for _ in range(15)],
        c_chunk(c_choice(content="A sentence that is said only once. "), usage={"prompt_tokens": 1}),
        *[text(LOOP) for _ in range(15)],
        c_chunk(c_choice(finish="stop")),
    ]
    poll = RepetitionPoll()
    for fragment_text in [LOOP] * 15 + ["A sentence that is said only once. "] + [LOOP] * 15:
        poll.feed(fragment_text)
    report = sdk_report(LANE, frames)
    assert report.repetition == poll.report()
    assert report.repetition.cut is None
    assert report.repetition.spared
    unbroken = RepetitionPoll()
    for _ in range(30):
        unbroken.feed(LOOP)
    assert unbroken.report().cut is not None  # the same loop unbroken trips: the order is what the test sees
    assert report == raw_report(LANE, frames)


_FIELDS: Final = {
    "chunk": ("id", "choices", "model", "usage"),
    "choice": ("index", "delta", "finish_reason"),
    "delta": ("content", "tool_calls"),
    "call": ("index", "id", "function"),
    "function": ("name", "arguments"),
}
_INNER: Final = {"choices": "choice", "delta": "delta", "tool_calls": "call", "function": "function"}


def as_chunk_object(value: object, level: str = "chunk") -> object:
    """A chunk as attribute-only objects with every field the SDK's objects have (``None`` where unsent)."""
    if isinstance(value, list | tuple):
        return type(value)(as_chunk_object(item, level) for item in value)
    if not isinstance(value, dict):
        return value
    fields = dict.fromkeys(_FIELDS.get(level, ()))
    fields.update(value)
    return SimpleNamespace(
        **{key: as_chunk_object(item, _INNER[key]) if key in _INNER else item for key, item in fields.items()}
    )


def chunk_objects(frames: Sequence[object]) -> list[object]:
    """Each chunk as an SDK-shaped object; other frames (an in-band error dict, ``[DONE]``) as they are."""
    return [as_chunk_object(f) if isinstance(f, dict) and "choices" in f else f for f in frames]


def odd_chunks() -> list[object]:
    """Chunks of every shape the lane reads or refuses: several choices, names in parts, odd indexes and values."""
    return [
        c_chunk(c_choice(content="")),
        text("plain. "),
        text(""),
        c_chunk(c_choice(content="two choices, "), c_choice(1, content="the second")),
        c_chunk(c_choice(content="with usage"), usage={"prompt_tokens": 3, "completion_tokens": 4}),
        fragment(0, call_id="call_1", name="read", arguments='{"a": '),
        c_chunk(c_choice(content="text and a fragment", tool_calls=[c_call(0, arguments="1")])),
        fragment(0, name="read", arguments=""),
        fragment(0, name="_more", arguments=""),
        fragment(0, call_id="call_other", arguments=""),
        c_chunk(c_choice(tool_calls=[c_call(0)])),
        c_chunk(c_choice(tool_calls=[c_call(0, arguments="}"), c_call(1, call_id="call_2", name="g")])),
        fragment(2, name="h", arguments=""),
        fragment(2, call_id="call_3", arguments="{}"),
        {**fragment(0, arguments=" "), "choices": ({"index": 0, "delta": {"content": "a tuple"}},)},
        c_chunk({"index": 0, "delta": {"tool_calls": ({"index": 1, "function": {"arguments": "in a tuple"}},)}}),
        c_chunk(c_choice(tool_calls=[{"index": "0", "function": {"arguments": "x"}}])),
        c_chunk(c_choice(tool_calls=[{"index": True, "function": {"arguments": "a bool index"}}])),
        c_chunk(c_choice(tool_calls=[{"index": 5, "function": {"arguments": "nowhere"}}])),
        c_chunk(c_choice(tool_calls=[{"index": 1, "function": {"arguments": 7}}])),
        c_chunk(c_choice(content="another model"), model="model-b"),
        c_chunk(c_choice(finish="tool_calls")),
        text("after the finish"),
        fragment(1, arguments="after the finish"),
        c_usage(),
        "[DONE]",
    ]


def test_every_chunk_is_counted_once_and_read_alike_as_dicts_or_objects() -> None:
    """Dicts and SDK-shaped objects give one report: same calls, endings, refusals, usage, one count per chunk."""
    frames = odd_chunks()
    before = copy.deepcopy(frames)
    as_dicts = fed(LANE, frames)
    assert frames == before
    assert as_dicts.events == len(frames)
    assert fed(LANE, chunk_objects(frames)) == as_dicts
    assert fed(LANE, [as_object(f) for f in frames]) == as_dicts
    assert [(c.call_id, c.name) for c in as_dicts.calls] == [("call_1", "read_more"), ("call_2", "g"), ("call_3", "h")]
    assert as_dicts.ends_ignored is not None


def test_a_choice_that_never_finishes_tears_the_stream() -> None:
    """Choice 1 opens the stream and finishes, choice 0 speaks after it and never finishes: torn."""
    frames = [
        c_chunk(c_choice(1, content="the second choice")),
        *[text(f"first choice {i}. ") for i in range(5)],
        c_chunk(c_choice(1, finish="stop")),
    ]
    report = fed(LANE, chunk_objects(frames))
    assert report == fed(LANE, frames)
    assert report.torn


def loop_chunks(count: int, **choice: object) -> list[Frame]:
    return [c_chunk({"index": 0, "finish_reason": None, "delta": {"content": LOOP}, **choice}) for _ in range(count)]


def reading_cases() -> dict[str, tuple[list[object], Callable[[StreamReport], bool]]]:
    """Streams that test one clause of the lane's reading each, with the outcome that clause gives."""
    opened = [c_chunk(c_choice(content=""))]
    call = fragment(0, call_id="call_1", name="read", arguments="")
    return {
        "choices in a tuple are not read": (
            [
                *opened,
                *[{**c, "choices": tuple(cast("list[Frame]", c["choices"]))} for c in loop_chunks(40)],
                c_chunk(c_choice(finish="stop")),
            ],
            lambda r: r.repetition.cut is None,
        ),
        "a second choice's text is not polled": (
            [*opened, *loop_chunks(40, index=1), c_chunk(c_choice(finish="stop"), c_choice(1, finish="stop"))],
            lambda r: r.repetition.cut is None,
        ),
        "a second choice's fragment is its own call": (
            [
                *opened,
                call,
                c_chunk(c_choice(1, tool_calls=[c_call(0, call_id="call_2", name="grep", arguments="")])),
                c_chunk(c_choice(1, tool_calls=[c_call(0, arguments='{"q": 1}')])),
                c_chunk(c_choice(finish="tool_calls"), c_choice(1, finish="tool_calls")),
            ],
            lambda r: [(c.call_id, dict(c.arguments)) for c in r.calls] == [("call_1", {}), ("call_2", {"q": 1})],
        ),
        "text beside a fragment is polled": (
            [
                *opened,
                call,
                *[c_chunk(c_choice(content=LOOP, tool_calls=[c_call(0, arguments=" ")])) for _ in range(40)],
                c_chunk(c_choice(finish="tool_calls")),
            ],
            lambda r: r.repetition.cut is not None,
        ),
        "the last model named decides": (
            [*opened, text("hi", model="model-b"), {**c_chunk(c_choice(finish="stop")), "model": ""}],
            lambda r: r.response_model == "model-b",
        ),
        "an id first sent late is read": (
            [
                {**c_chunk(c_choice(content="")), "id": None},
                text("hi"),
                {**c_chunk(c_choice(finish="stop")), "id": None},
            ],
            lambda r: r.response_id == "chatcmpl-1",
        ),
        "after an in-band error, text is refused": (
            [*opened, {"error": {"type": "server_error"}}, text("more"), text("more")],
            lambda r: r.ends_ignored is not None and r.ends_ignored.count == 2,
        ),
    }


@pytest.mark.parametrize("name", list(reading_cases()))
def test_each_clause_of_the_reading(name: str) -> None:
    """Each case gives its stated outcome, and SDK-shaped objects give the dict report."""
    frames, outcome = reading_cases()[name]
    as_dicts = fed(LANE, frames)
    assert outcome(as_dicts)
    assert fed(LANE, chunk_objects(frames)) == as_dicts


class _Unequal:
    """A value that cannot be compared (as some array types answer ``==``)."""

    def __eq__(self, other: object) -> bool:
        raise ValueError("no truth value")

    __hash__ = object.__hash__


def test_a_chunk_that_cannot_be_read_is_counted_once_as_unread() -> None:
    """A chunk whose model cannot be compared: the observer neither raises nor counts it twice."""
    frames = [c_chunk(c_choice(content="")), text("one. ")]
    odd = as_chunk_object(text("two. "))
    odd.model = _Unequal()  # type: ignore[attr-defined]
    report = fed(LANE, [*chunk_objects(frames), odd, as_chunk_object(c_chunk(c_choice(finish="stop")))])
    assert (report.events, report.frames_unread) == (4, 1)
