"""A turn's drop notes: for each cause of dropped content, how many, and the sentence the model reads.

``turn_notes_of`` words a turn's stream drops, one note per drop with a positive count, so the
sentence a model would read and the account a person reads (``StreamReport.drops``) come from
one list. One wording for the three lanes.
"""

from __future__ import annotations

from collections.abc import Sequence

from otel_toolturn._vocab import StreamDropCause
from otel_toolturn.streams._report import StreamDrop, TurnNote


def _calls(count: int) -> str:
    return "1 tool call was" if count == 1 else f"{count} tool calls were"


def note_text(cause: StreamDropCause, count: int, clause: str = "") -> str:
    """Return the sentence the model reads for ``count`` drops of ``cause``.

    ``clause`` (``truncation_cause_clause``) is worded into the ``truncated`` sentence only.
    """
    if cause == "truncated":
        return f"{_calls(count)} dropped: the arguments were not valid JSON{clause}. Issue them again."
    if cause == "unnamed":
        return f"{_calls(count)} dropped: no tool name arrived. Issue them again."
    frames = "1 stream frame was" if count == 1 else f"{count} stream frames were"
    return f"{frames} not valid JSON and dropped; this response may be missing content."


def turn_notes_of(drops: Sequence[StreamDrop], *, clause: str = "") -> tuple[TurnNote, ...]:
    """One note per drop with a positive count, in the order given."""
    return tuple(
        TurnNote(cause=drop.cause, count=drop.count, text=note_text(drop.cause, drop.count, clause))
        for drop in drops
        if drop.count > 0
    )
