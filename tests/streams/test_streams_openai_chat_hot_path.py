"""The Chat Completions observer's hot path: the same report as the general reading, every chunk counted once.

The observer reads a one-choice SDK chunk carrying a text or argument fragment with plain
attribute access, holds the text for the repetition poll in batches and counts the chunk by the
fragment it kept. None of that may show in the report: these tests feed the same stream as SDK
objects, as attribute-only objects and as raw dicts, across the batch boundary, with chunks the
hot path must leave to the general reading.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Final, cast

import pytest

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import RepetitionPoll, StreamReport
from otel_toolturn.streams._turn import TEXT_BATCH
from tests.streams._drive import as_object, fed, raw_report, sdk_report
from tests.streams._frames import Frame, c_call, c_choice, c_chunk, c_usage

LANE: Final[Lane] = "openai.chat_completions"


def text(content: str, *, model: str = "model-a") -> Frame:
    return c_chunk(c_choice(content=content), model=model)


def fragment(index: int, **fields: str) -> Frame:
    return c_chunk(c_choice(tool_calls=[c_call(index, **fields)]))


def a_stream() -> list[Frame]:
    """Role chunk, text over two batch boundaries, two calls' fragments, a finish, then usage."""
    texts = [f"word {i} of the answer; " for i in range(2 * TEXT_BATCH + 9)]
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


def test_sdk_chunks_give_the_dict_report() -> None:
    """The SDK's own chunk objects (the hot path) and the raw dicts (the general reading) agree, events included."""
    frames = a_stream()
    via_sdk = sdk_report(LANE, frames)
    assert via_sdk == raw_report(LANE, frames)
    assert via_sdk.events == len(frames)
    assert [(c.call_id, dict(c.arguments)) for c in via_sdk.calls] == [
        ("call_1", {"path": "a.txt"}),
        ("call_2", {"q": "x"}),
    ]


LOOP: Final = "I will check the file. "


def test_general_text_between_held_text_keeps_its_place() -> None:
    """A text read the general way between held ones reaches the poll in its place: it breaks the loop, no cut."""
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
    unbroken.feed_many([LOOP] * 30)
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
    """A chunk as attribute-only objects with every field the SDK's objects have (``None`` where unsent).

    Unlike a bare namespace, this reaches the hot path, so each odd value below is put to it.
    """
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


def chunks_the_hot_path_leaves() -> list[object]:
    """Chunks that look almost like the hot path's and are not: each must be read the general way."""
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


def test_every_chunk_is_counted_once_whatever_path_read_it() -> None:
    """Dicts and SDK-shaped objects give one report: same calls, endings, refusals, usage, one count per chunk."""
    frames = chunks_the_hot_path_leaves()
    before = copy.deepcopy(frames)
    as_dicts = fed(LANE, frames)
    assert frames == before
    assert as_dicts.events == len(frames)
    assert fed(LANE, chunk_objects(frames)) == as_dicts
    assert fed(LANE, [as_object(f) for f in frames]) == as_dicts
    assert [(c.call_id, c.name) for c in as_dicts.calls] == [("call_1", "read_more"), ("call_2", "g"), ("call_3", "h")]
    assert as_dicts.ends_ignored is not None


def test_a_choice_first_seen_on_the_hot_path_still_counts_as_unfinished() -> None:
    """Choice 1 opens the stream, choice 0 speaks only in hot-path chunks and never finishes: torn."""
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


def streams_the_hot_path_defers() -> dict[str, tuple[list[object], Callable[[StreamReport], bool]]]:
    """Streams whose outcome only the general reading gets right, each with what that outcome is."""
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


@pytest.mark.parametrize("name", list(streams_the_hot_path_defers()))
def test_what_the_hot_path_defers_reads_as_the_general_way(name: str) -> None:
    """SDK-shaped objects give the dict report on a stream whose outcome needs the general reading."""
    frames, outcome = streams_the_hot_path_defers()[name]
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
