"""A turn's drop notes: the sentence the model reads and the person's account, from one list.

``turn_notes_of`` words a turn's stream drops; ``place_turn_notes`` puts the notes in the turn's
content and returns the same list as the turn's stream drops; ``stamp_stream_drops`` and
``stream_drops_of`` write and read those drops on a message. One rule for the three lanes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, TypeVar

from otel_toolturn._vocab import STREAM_DROP_CAUSES, StreamDropCause
from otel_toolturn.streams._report import StreamDrop, TurnNote

B = TypeVar("B")

DIAGNOSTICS_KEY: Final = "toolturn_diagnostics"
"""The message field that carries stamped diagnostics (library-only: stripped before the wire)."""
STREAM_DROP_KIND: Final = "stream_drop"


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


def place_turn_notes(
    content: list[B],
    notes: Sequence[TurnNote],
    *,
    is_call: Callable[[B], bool],
    note_block: Callable[[str], B],
) -> tuple[list[B], tuple[StreamDrop, ...]]:
    """Place a turn's notes in its content; return the new content and the turn's stream drops.

    The notes go AHEAD of the first tool call, in order, or at the end of a turn that has none:
    no block may follow the calls (the Anthropic Messages API rejects a ``tool_use`` followed by
    anything but another ``tool_use``). Every dropped call and dropped frame is stated, also when
    text survived and no call did; a partial batch keeps its valid calls. The drops returned are
    the same list, so the model's sentence and the person's line come from one source.

    ``content`` is never altered: with no notes it is returned as is, otherwise a new list.
    ``note_block`` builds the lane's text block for one sentence; ``is_call`` says which blocks
    are calls.
    """
    if not notes:
        return content, ()
    blocks = [note_block(note.text) for note in notes]
    first_call = next((i for i, block in enumerate(content) if is_call(block)), len(content))
    placed = [*content[:first_call], *blocks, *content[first_call:]]
    return placed, tuple(StreamDrop(cause=note.cause, count=note.count) for note in notes)


def stamp_stream_drops(message: Mapping[str, object], drops: Sequence[StreamDrop]) -> Mapping[str, object]:
    """Return a copy of ``message`` carrying ``drops`` as its stream drops; ``message`` itself when none.

    Drops with no positive count are left out. Earlier stream-drop entries are replaced; other
    diagnostics under ``DIAGNOSTICS_KEY`` are kept. ``message`` is never altered.
    """
    entries = [
        {"kind": STREAM_DROP_KIND, "cause": d.cause, "count": d.count, "tool_call_ids": list(d.call_ids)}
        for d in drops
        if d.count > 0
    ]
    if not entries:
        return message
    kept = [e for e in _diagnostics(message) if not (isinstance(e, Mapping) and e.get("kind") == STREAM_DROP_KIND)]
    return {**message, DIAGNOSTICS_KEY: [*kept, *entries]}


def _diagnostics(message: object) -> Sequence[object]:
    raw = message.get(DIAGNOSTICS_KEY) if isinstance(message, Mapping) else getattr(message, DIAGNOSTICS_KEY, None)
    return raw if isinstance(raw, (list, tuple)) else ()


def stream_drops_of(message: object) -> tuple[StreamDrop, ...]:
    """Return the stream drops a message reports, read defensively.

    A message is not trusted to be well-formed: an entry counts only as a mapping with kind
    ``stream_drop``, a cause from the closed set and a positive integer count (``bool`` is not an
    integer here); ``tool_call_ids`` is kept only when it is a list of strings. Anything else
    reads as no drop. Never raises.
    """
    drops: list[StreamDrop] = []
    for entry in _diagnostics(message):
        if not isinstance(entry, Mapping) or entry.get("kind") != STREAM_DROP_KIND:
            continue
        cause, count = entry.get("cause"), entry.get("count")
        if cause not in STREAM_DROP_CAUSES or type(count) is not int or count <= 0:
            continue
        ids = entry.get("tool_call_ids")
        call_ids = tuple(ids) if isinstance(ids, list) and all(type(i) is str for i in ids) else ()
        drops.append(StreamDrop(cause=_cause(cause), count=count, call_ids=call_ids))
    return tuple(drops)


def _cause(word: object) -> StreamDropCause:
    for cause in STREAM_DROP_CAUSES:
        if cause == word:
            return cause
    raise AssertionError(word)  # unreachable: callers check membership first
