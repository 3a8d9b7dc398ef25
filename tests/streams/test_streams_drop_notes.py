"""A turn's drop notes: one note per drop with a positive count, each cause worded, the cap clause in place."""

from __future__ import annotations

from otel_toolturn._vocab import STREAM_DROP_CAUSES
from otel_toolturn.streams import StreamDrop, TurnNote
from otel_toolturn.streams._drop_notes import turn_notes_of
from otel_toolturn.streams._truncation_cause import CAP_CLAUSE

NOTES = turn_notes_of(
    [
        StreamDrop(cause="truncated", count=2),
        StreamDrop(cause="unnamed", count=1),
        StreamDrop(cause="bad_frame", count=0),
    ],
    clause=CAP_CLAUSE,
)


def test_turn_notes_word_each_drop_with_a_positive_count() -> None:
    """One note per drop with a positive count, the cap clause worded into the truncated sentence."""
    assert [(n.cause, n.count) for n in NOTES] == [("truncated", 2), ("unnamed", 1)]
    assert "2 tool calls were dropped" in NOTES[0].text
    assert CAP_CLAUSE in NOTES[0].text
    assert "1 tool call was dropped" in NOTES[1].text
    assert CAP_CLAUSE not in NOTES[1].text


def test_every_drop_cause_has_a_note() -> None:
    """Each cause of the closed set is worded, and differently."""
    notes = turn_notes_of([StreamDrop(cause=c, count=1) for c in STREAM_DROP_CAUSES])
    assert [n.cause for n in notes] == list(STREAM_DROP_CAUSES)
    assert all(isinstance(n, TurnNote) and n.count == 1 for n in notes)
    assert len({n.text for n in notes}) == len(STREAM_DROP_CAUSES)


def test_a_bad_frame_note_counts_frames_not_calls() -> None:
    """The bad-frame sentence speaks of stream frames, in the singular and the plural."""
    one, two = (
        turn_notes_of([StreamDrop(cause="bad_frame", count=1)]),
        turn_notes_of([StreamDrop(cause="bad_frame", count=2)]),
    )
    assert one[0].text.startswith("1 stream frame was not valid JSON")
    assert two[0].text.startswith("2 stream frames were not valid JSON")
