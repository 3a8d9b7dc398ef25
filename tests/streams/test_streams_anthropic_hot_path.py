"""The Anthropic observer's hot path: the same report as the general reading, every event counted once.

The observer reads fragment frames of the SDK's objects with plain attribute access, holds text
for the repetition poll in batches and counts an event by the fragment it kept. None of that may
show in the report: these tests feed the same stream as SDK objects, as attribute-only objects
and as raw dicts, across the batch boundary, with frames the hot path cannot read.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Final

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import RepetitionPoll, observer_for
from otel_toolturn.streams._turn import TEXT_BATCH
from tests.streams._drive import as_object, both, fed, raw_report, sdk_report
from tests.streams._frames import (
    Frame,
    a_block_stop,
    a_delta,
    a_json,
    a_start,
    a_stop,
    a_text,
    a_text_start,
    a_tool_start,
)

LANE: Final[Lane] = "anthropic.messages"


def looping_text(fragments: int) -> list[str]:
    """Natural text, then a loop that starts before the first batch boundary and runs past the second."""
    lead = [f"word {i} of the lead; " for i in range(TEXT_BATCH - 40)]
    loop = ["I will check the file. " for _ in range(fragments - len(lead))]
    return lead + loop


def test_text_across_batches_reaches_the_poll_as_if_fed_one_by_one() -> None:
    """Held text gives the very repetition result of a poll fed fragment by fragment, batch boundaries included."""
    for count in (TEXT_BATCH - 1, TEXT_BATCH, TEXT_BATCH + 1, 2 * TEXT_BATCH + 37):
        texts = looping_text(count)
        poll = RepetitionPoll()
        for text in texts:
            poll.feed(text)
        frames = [a_start(), a_text_start(0), *[a_text(0, t) for t in texts], a_block_stop(0), a_delta("end_turn")]
        r = both(LANE, [*frames, a_stop()])
        assert r.repetition == poll.report()
        assert r.events == len(frames) + 1


def test_spared_hits_across_batches_match_a_direct_poll() -> None:
    """Short loops spared by the allowance, on both sides of a batch boundary, are the direct poll's."""
    texts = [f"row {i % 5} | ok | " if (i // 60) % 2 else f"line {i}: fine. " for i in range(3 * TEXT_BATCH)]
    poll = RepetitionPoll()
    for text in texts:
        poll.feed(text)
    frames = [a_start(), a_text_start(0), *[a_text(0, t) for t in texts], a_block_stop(0), a_delta("end_turn")]
    r = both(LANE, [*frames, a_stop()])
    assert r.repetition == poll.report()


def frames_of_every_kind() -> list[Frame | str | bytes]:
    """A stream with each kind of frame the hot path takes, passes on, or cannot read."""
    parts = ['{"k": ', '"v"', "}"]
    return [
        a_start(),
        a_text_start(0),
        *[a_text(0, f"fragment {i}. ") for i in range(TEXT_BATCH + 3)],
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


def test_every_event_is_counted_once_whatever_path_read_it() -> None:
    """Fragments kept, fragments refused, unreadable frames: each event counts once, read as dicts or objects."""
    frames = frames_of_every_kind()
    before = copy.deepcopy(frames)
    as_dicts = fed(LANE, frames)
    assert frames == before
    assert as_dicts.events == len(frames)
    assert [(c.call_id, dict(c.arguments)) for c in as_dicts.calls] == [("toolu_1", {"k": "v"})]
    assert as_dicts.frames_unread == 2
    assert as_dicts.ends_ignored is not None
    assert (as_dicts.ends_ignored.word, as_dicts.ends_ignored.count) == ("content_block_delta", 2)
    objects = [as_object(f) if isinstance(f, dict) else f for f in frames]
    assert fed(LANE, objects) == as_dicts


def test_sdk_objects_give_the_dict_report() -> None:
    """The SDK's own event objects (the hot path) and the raw dicts (the general reading) agree, events included."""
    frames: list[Frame | str] = [
        a_start(),
        a_text_start(0),
        *[a_text(0, f"fragment {i}. ") for i in range(2 * TEXT_BATCH + 5)],
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


def test_feeding_after_finish_keeps_counting() -> None:
    """A report taken mid-stream does not disturb the count or the text of the next one."""
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
    whole = raw_report(LANE, frames + rest)
    assert dataclasses.replace(second, events=0) == dataclasses.replace(whole, events=0)
    assert second.repetition.cut is not None


def test_a_frame_object_is_never_altered() -> None:
    """Reading an attribute-only frame leaves it as it was."""
    frames = frames_of_every_kind()
    objects = [as_object(f) if isinstance(f, dict) else f for f in frames]
    before = [json.dumps(o, default=vars, sort_keys=True) if not isinstance(o, str | bytes) else o for o in objects]
    fed(LANE, objects)
    after = [json.dumps(o, default=vars, sort_keys=True) if not isinstance(o, str | bytes) else o for o in objects]
    assert after == before
