"""The neutral view the law reads: a wire list cut into turns, results and other units.

A lane adapter (``otel_toolturn.lanes``) reads its wire list into this view and writes the law's
outcome back. The view knows no wire format; the law knows no lane.

- a turn (``Turn``): one assistant message (Responses: one run of call items) that emits calls;
- a result: one recorded result (an Anthropic ``tool_result`` block, a Chat ``tool`` message, a
  Responses ``function_call_output`` item), with the call id it answers;
- a part: the non-result blocks of an Anthropic user message that also held results;
- anything else, carried untouched as the wire item itself.

Before reading, the adapter's survey (``Survey``) tells which segments of the list need the law, so
that only those spans are read; a ``BREAK`` unit stands between two spans.

Also here, because every lane needs them: the interrupted-close texts, and ``field`` / ``replace``,
which read and copy both plain dicts and the SDKs' own typed objects without mutating either.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._vocab import Lane

INTERRUPTED_RESULT_TEXT: Final = (
    "[tool call interrupted: no result was recorded, so its outcome is unknown. "
    "Verify its effect before relying on it or calling it again.]"
)
"""The synthetic interrupted result the law adds for a call that has no recorded result."""

KNOWN_INTERRUPTED_TEXTS: Final[tuple[str, ...]] = (
    INTERRUPTED_RESULT_TEXT,
    "[Tool result missing due to internal error]",
    "[Request interrupted by user for tool use]",
)
"""Texts recognised as an interrupted close: ours, and the ones other frameworks write."""

SECOND_RESULT_SEPARATOR: Final = "[another result was recorded for this same call:]"
"""The text standing between two results recorded for one call when the view folds them into one."""


def is_interrupted_text(text: str) -> bool:
    """Whether ``text`` is a recorded interrupted close (says only that no outcome was recorded)."""
    return text.strip() in KNOWN_INTERRUPTED_TEXTS


def field(obj: object, name: str) -> object:
    """Read ``name`` from a dict or a typed SDK object; ``None`` when absent."""
    if type(obj) is dict:
        return obj.get(name)
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def replace(obj: object, position: int | None = None, **updates: object) -> object:
    """A copy of ``obj`` with ``updates`` applied; ``obj`` itself is never mutated.

    Dicts are copied shallowly; pydantic models through ``model_copy``; dataclasses through
    ``dataclasses.replace``. Anything else cannot be copied faithfully and is rejected.
    """
    if isinstance(obj, Mapping):
        return {**obj, **updates}
    model_copy = getattr(obj, "model_copy", None)
    if callable(model_copy):
        return model_copy(update=updates)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **updates)
    raise ToolTurnInputError(
        f"cannot copy an item of type {type(obj).__name__!r} to repair it; "
        "expected a dict, a pydantic model or a dataclass",
        position=position,
    )


class Call:
    """One client tool call: its id and the wire object carrying it.

    A plain class, not a dataclass, as ``Batch``: the request path makes one per synthetic result.
    """

    __slots__ = ("call_id", "ref")

    def __init__(self, call_id: str, ref: object) -> None:
        self.call_id = call_id
        self.ref = ref

    def __repr__(self) -> str:
        return f"Call(call_id={self.call_id!r}, ref={self.ref!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Call) and (self.call_id, self.ref) == (other.call_id, other.ref)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value, as a dataclass is


@dataclass(slots=True)
class Turn:
    """An assistant message (or Responses run of call items) that emits calls, in call order."""

    position: int
    calls: list[Call]
    items: tuple[object, ...]
    """The wire items the turn was read from (one message, or the Responses run)."""
    trailing: bool = False
    """Whether a non-call block stands after the first call (Anthropic; the other lanes keep them apart)."""


OTHER: Final = 0
"""A unit carried untouched: the wire item itself."""
TURN: Final = 1
"""A unit that is a ``Turn``."""
RESULT: Final = 2
"""A unit that is one recorded result's wire object (a block, a message or an item)."""
PART: Final = 3
"""A unit that is a run of a message's non-result blocks (Anthropic), as a tuple."""


@dataclass(slots=True)
class View:
    """A wire list cut into units, as parallel lists, so an untouched item costs two appends.

    ``units[i]`` is read by ``kinds[i]``: the wire item (``OTHER``), a ``Turn`` (``TURN``), a
    result's wire object (``RESULT``), or a tuple of blocks (``PART``). For a result, ``ids[i]`` is
    the call id it answers (``None``: unreadable); for a result or a part, ``sources[i]`` is the wire
    message it stands in.
    """

    units: list[object] = dataclasses.field(default_factory=list)
    kinds: list[int] = dataclasses.field(default_factory=list)
    ids: dict[int, str | None] = dataclasses.field(default_factory=dict)
    sources: dict[int, object] = dataclasses.field(default_factory=dict)


BREAK: Final = object()
"""Stands between two spans of a partial view (an ``OTHER`` unit): the wire list goes on elsewhere."""


@dataclass(slots=True)
class Survey:
    """What one fast scan of a wire list found: where its segments begin and which need the law.

    A segment is a turn (or any other item that is not a result) with the results recorded right
    after it. The law never moves anything across segments it does not read, so a segment with
    nothing to restore, and no result anywhere that answers it, is carried as it stands.
    """

    bounds: list[int] = dataclasses.field(default_factory=list)
    """The positions where a segment begins, ascending (position 0 may be left implicit)."""
    dirty: set[int] = dataclasses.field(default_factory=set)
    """The first positions of the segments the law must read; empty when it would restore nothing."""
    state: SurveyState | None = None
    """The scan paused where a survey of a longer list beginning with the same items may resume."""

    def spans(self, count: int) -> list[tuple[int, int]]:
        """The dirty segments as ``[start, stop)`` positions, ascending, touching ones merged."""
        bounds = self.bounds
        spans: list[tuple[int, int]] = []
        for start in sorted(self.dirty):
            after = bisect_right(bounds, start)
            stop = bounds[after] if after < len(bounds) else count
            if spans and spans[-1][1] == start:
                spans[-1] = (spans[-1][0], stop)
            else:
                spans.append((start, stop))
        return spans


@dataclass(slots=True)
class SurveyState:
    """A lane's survey paused before item ``position``: everything its scan carries from one item to the next.

    Resuming a survey from the state of a scan of ``messages[:position]`` over a list that begins
    with those very items, unchanged, gives the survey of the whole list. A state never changes
    once a survey has returned it (its survey shares its lists); resuming works on a ``copy``.
    """

    position: int = 0
    """How many leading items the scan has read."""
    bounds: list[int] = dataclasses.field(default_factory=list)
    """The segments begun so far (``Survey.bounds``)."""
    dirty: set[int] = dataclasses.field(default_factory=set)
    """The segments found dirty so far (``Survey.dirty``, before the last batch is settled)."""
    owner: dict[str, int] = dataclasses.field(default_factory=dict)
    """Call id -> the segment of the turn that emitted it."""
    pending: list[str] = dataclasses.field(default_factory=list)
    """The calls of the current segment's turn still waiting for their result, in call order."""
    segment: int = 0
    """The first position of the current segment."""
    running: bool = False
    """Responses: whether the item before ``position`` belongs to a run of calls."""

    def copy(self) -> SurveyState:
        """A state equal to this one that shares none of its containers."""
        return SurveyState(
            position=self.position,
            bounds=list(self.bounds),
            dirty=set(self.dirty),
            owner=dict(self.owner),
            pending=list(self.pending),
            segment=self.segment,
            running=self.running,
        )


@dataclass(slots=True)
class Emitted:
    """The law's output, as parallel lists: each item, its kind, and (results, parts) its source message.

    A turn is emitted as its written wire items (``OTHER``); a result the law made or changed has
    the source ``None``.
    """

    items: list[object] = dataclasses.field(default_factory=list)
    kinds: list[int] = dataclasses.field(default_factory=list)
    sources: list[object] = dataclasses.field(default_factory=list)


class Batch:
    """One turn of a span read the quick way, with everything recorded after it up to the next turn.

    Only a plain shape reads this way: every result answers a call of this turn, once; a wire item
    that holds results holds nothing else. A plain class with its own ``__init__``, not a dataclass:
    the request path makes one per turn of every span it repairs, and compiled (``_native``) a
    class's own ``__init__`` is native code where a dataclass's generated one stays interpreted.
    """

    __slots__ = ("answered", "call_ids", "call_refs", "items", "late", "others", "placed", "position", "trailing")

    def __init__(  # noqa: PLR0917 - positional: each lane's quick reading makes one per turn
        self,
        position: int,
        items: tuple[object, ...],
        call_ids: list[str],
        call_refs: list[object],
        trailing: bool,  # noqa: FBT001 - positional, as every lane's reading makes one
        placed: list[object],
        answered: list[str],
        late: dict[str, tuple[object, object]],
        others: list[object],
    ) -> None:
        self.position = position
        self.items = items
        """The turn's wire items."""
        self.call_ids = call_ids
        self.call_refs = call_refs
        """The wire object of each call, in call order."""
        self.trailing = trailing
        self.placed = placed
        """The wire items that stood right after the turn and hold its results, whole, in order."""
        self.answered = answered
        """The call ids those items answer."""
        self.late = late
        """Call id -> (result wire object, the item it stood in), for each result recorded after another item."""
        self.others = others
        """The other wire items after the turn, in order (the items holding late results left out)."""

    def answer(self, call_id: object, result: object, source: object) -> bool:
        """Note a result recorded after this turn: in place while no other item stood between, else late.

        ``source``: the wire item the result stands in (``None`` when it is that item). ``False``:
        it answers no call of this turn, or one already answered — not a plain shape.
        """
        if type(call_id) is not str or call_id not in self.call_ids or call_id in self.answered or call_id in self.late:
            return False
        if self.others:
            self.late[call_id] = (result, source)
        else:
            self.answered.append(call_id)
        return True


class Stretch:
    """A span read the quick way, and the one rule for where each wire item of it goes.

    ``lead``: the items ahead of its first turn, with ``lead_ids`` the result ids each holds
    (``None``: it holds none; an unreadable id is ``None`` in the list); ``batches``: its turns,
    each with what was recorded after it. The lanes' ``read_quick`` say what an item is; this says
    where it goes.
    """

    __slots__ = ("batches", "lead", "lead_ids")

    def __init__(self) -> None:
        self.lead: list[object] = []
        self.lead_ids: list[list[str | None] | None] = []
        self.batches: list[Batch] = []

    def turn(self, batch: Batch) -> None:
        """A turn: the items after it are its batch's."""
        self.batches.append(batch)

    def other(self, item: object) -> None:
        """An item that holds no result."""
        if self.batches:
            self.batches[-1].others.append(item)
        else:
            self.lead.append(item)
            self.lead_ids.append(None)

    def results(self, item: object, answers: Sequence[tuple[object, object]]) -> bool:
        """An item that holds results only, as ``(call id, result wire object)``; the item itself may be the one result.

        ``False``: one of them answers no call of the nearest turn, or one already answered — not a plain shape.
        """
        if not self.batches:
            self.lead.append(item)
            self.lead_ids.append([call_id if type(call_id) is str and call_id else None for call_id, _ in answers])
            return True
        batch = self.batches[-1]
        for call_id, result in answers:
            if not batch.answer(call_id, result, None if result is item else item):
                return False
        if not batch.others:
            batch.placed.append(item)
        return True


class LaneAdapter(Protocol):
    """One wire lane's reading and writing of the view: the only place its spelling lives."""

    lane: Lane
    unique_ids: bool
    """Whether the API rejects a call id repeated anywhere in the request (reused ids get derived ids)."""

    def survey(self, messages: Sequence[object], state: SurveyState | None = None) -> Survey | None:
        """One fast scan: the segments and which of them need the law (none: it would restore nothing).

        ``None`` when the list needs the whole-list reading: an item it cannot read, or (where ids
        must be unique) an id reused across turns, whose derived id must be checked against every id.
        """

    def read(self, messages: Sequence[object], spans: Sequence[tuple[int, int]]) -> View:
        """Cut the ``[start, stop)`` spans of the wire list into units, in order, a ``BREAK`` between spans."""

    def read_quick(self, messages: Sequence[object], start: int, stop: int) -> Stretch | None:
        """The ``[start, stop)`` span as turns with what follows each (``Batch``); ``None`` unless its shape is plain.

        Plain: every item a dict the lane knows; every result, with a readable id, answers a call of
        the nearest turn before it in the span, once (or stands ahead of the span's first turn); an
        item holding results holds nothing else; no turn repeats a call id.
        """

    def interrupted(self, result: object) -> bool:
        """Whether the result is an interrupted close (it says only that no outcome was recorded)."""

    def write_turn(
        self, items: tuple[object, ...], position: int, calls: Sequence[tuple[object, object]], *, trailing: bool
    ) -> list[object]:
        """The turn's wire ``items`` holding exactly the kept calls, as ``(read, written)`` wire objects in call order.

        ``position``: where the turn stands; ``trailing``: whether a non-call block stands after its first
        call. Non-call blocks go ahead of the calls; items are the originals where nothing changed.
        """

    def write_results(self, results: Sequence[tuple[object, object]]) -> list[object]:
        """The wire items carrying ``results``, in order, each as ``(result, the wire item it stood in or None)``.

        An item whose results are all there, alone and in order, is that item itself.
        """

    def rename_call(self, call: Call, new_id: str) -> Call:
        """A copy of the call carrying ``new_id``."""

    def rename_result(self, result: object, new_id: str) -> object:
        """A copy of the result's wire object answering ``new_id``."""

    def derive_id(self, call_id: str, taken: set[str]) -> str:
        """A deterministic id for a later reuse of ``call_id`` that fits the lane and is not in ``taken``."""

    def synthesize(self, call: Call) -> object:
        """The interrupted result for a call with none."""

    def fold(self, results: Sequence[object]) -> object:
        """One result holding every byte of ``results`` (first first), joined by the separator."""

    def write(self, out: Emitted) -> list[object]:
        """The wire list for the law's output."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Violation:
    """One provider rule a wire list breaks: where, which rule, and the provider's own words."""

    position: int
    rule: str
    message: str
