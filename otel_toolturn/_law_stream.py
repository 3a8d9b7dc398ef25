"""The law over a transcript read one segment at a time, holding only what later segments need of earlier ones.

``LawStream`` is the one law (``_law``) fed a transcript in pieces: each piece comes out as the law's view
of it, and the repairs come at the end. Concatenated, the pieces are ``ensure_tool_turn_invariants`` of
the whole list, and the repairs are its repairs, in its order.

Where a transcript may be cut (``cut_here``): before an item the model produced whose predecessor it did
not produce — the start of an answer. The law is append-stable, so the view of what stands before such a
point is final once the point is reached: every window (what a turn may still take results from) ends
there, and a later result for an earlier call is delivered where it stands.

What a stream holds of the segments already written, bounded by the calls, never by their content:

- per turn, its calls' ids as read and as written, their names and kinds, whether a result the model saw
  answers each, and the turn's key: a turn of one call as its ``CarriedCall``, a turn of more as one
  ``CarriedTurn`` (one value where its calls share it), which a later result for one of them opens as
  that call's ``CarriedCall``; per call id, the turn of its nearest call. A later result is delivered
  where it stands under the call's name. Never a call's wire object;
- the call ids taken so far, with the resume counters of derived ids;
- the ids of the results left out as orphans, and the lane's marks, for the one report of each;
- the decisions noted on each turn that has any, laid flat (a later delivery adds to its turn's report);
- what the lane's reading carries across a cut (Responses: the item ids so far; Gemini: whether a user
  turn has stood yet).

Every turn is read in full (``_law`` reads a clean turn as one unit only when it holds the whole list:
a later segment may still answer one of its calls).
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._law import (
    CARRIED,
    Attribution,
    CarriedCall,
    CarriedTurn,
    Notes,
    Owner,
    Reported,
    ToolTurnRepair,
    emit_view,
    grouped_marks,
    kept_marks,
    plan_view,
    repairs_in_order,
    turn_reported,
)
from otel_toolturn._view import Mark, TakenIds
from otel_toolturn._vocab import CallKind, Dialect, Lane, RepairForm
from otel_toolturn.lanes import adapter_for

__all__ = ["LawStream", "cut_here"]


class _Every(Container[int]):
    """Every position: each turn is read in full."""

    def __contains__(self, item: object) -> bool:
        return True


_EVERY = _Every()


def cut_here(previous: object, item: object, *, lane: Lane) -> bool:
    """Whether a transcript may be cut between ``previous`` and ``item``: the model produced ``item``, not ``previous``.

    >>> cut_here({"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}, lane="anthropic.messages")
    True
    """
    adapter = adapter_for(lane)
    return adapter.is_model_output(item) and not adapter.is_model_output(previous)


@dataclass(slots=True)
class _TurnNotes:
    """What was restored on one turn: by reading, and by decisions (those of later segments added as they come)."""

    read: Notes | None
    decided: Notes
    places: dict[str, int]
    """The turn's call ids by their place in it: a form's ids are reported in call order."""

    def reported(self) -> Reported:
        """The turn's repairs as the law reports them: reading's, then the decisions' (each form's in call order)."""
        decided = {
            key: dict(sorted(ids.items(), key=lambda kv: self.places[kv[0]])) for key, ids in self.decided.items()
        }
        return turn_reported(self.read, decided)

    def held(self) -> _Held:
        """These notes laid flat, to be held between segments."""
        read = (
            ()
            if self.read is None
            else tuple(
                part for (form, kind), ids in self.read.items() for call_id in ids for part in (form, kind, call_id)
            )
        )
        decided = tuple(
            part
            for (form, kind), ids in self.decided.items()
            for call_id in ids
            for part in (form, kind, call_id, self.places[call_id])
        )
        return _Held(read, decided)


class _Held(NamedTuple):
    """A turn's notes held between segments as two flat tuples: a few objects a turn, not a dict per form.

    ``read``: form, kind of call and id, per id reading restored, in the order noted (empty: reading
    restored none). ``decided``: form, kind of call, id and the call's place in its turn, per id a
    decision restored, in the order noted.
    """

    read: tuple[str, ...]
    decided: tuple[str | int, ...]

    def opened(self) -> _TurnNotes:
        """The notes as they were noted, to be added to or reported."""
        decided: Notes = {}
        places: dict[str, int] = {}
        for at in range(0, len(self.decided), 4):
            form, kind, call_id, place = self.decided[at : at + 4]  # as ``_TurnNotes.held`` laid them
            decided.setdefault((cast("RepairForm", form), cast("CallKind", kind)), {})[cast("str", call_id)] = None
            places[cast("str", call_id)] = cast("int", place)
        return _TurnNotes(read=_read_notes(self.read), decided=decided, places=places)


def _read_notes(read: tuple[str, ...]) -> Notes | None:
    """Reading's notes of a turn, from ``_Held.read`` (``None``: reading restored nothing)."""
    if not read:
        return None
    notes: Notes = {}
    for at in range(0, len(read), 3):
        form, kind, call_id = read[at : at + 3]
        notes.setdefault((cast("RepairForm", form), cast("CallKind", kind)), {})[call_id] = None
    return notes


class LawStream:
    """The law fed one segment at a time (see the module docstring): ``feed`` each in order, then ``close``."""

    __slots__ = (
        "_adapter",
        "_chained",
        "_fed",
        "_marked",
        "_names",
        "_opened",
        "_orphans",
        "_owner",
        "_refused",
        "_state",
        "_taken",
        "_turns",
        "_units",
    )

    def __init__(self, lane: Lane, *, chained: bool = False, dialect: Dialect | None = None) -> None:
        self._adapter = adapter_for(lane, dialect)
        self._chained = chained
        self._owner: Owner = {}
        """Per call id, its nearest call so far: its turn carried once its segment is written."""
        self._names: dict[str, str] = {}
        """The carried calls' names, each held once."""
        self._taken = TakenIds()
        self._orphans: dict[str, None] = {}
        self._refused: list[Mark] = []
        self._marked: list[Mark] = []
        self._turns: dict[int, _Held] = {}
        """What was restored on each turn that has anything, by the turn's key (its unit index in the whole view)."""
        self._opened: dict[int, _TurnNotes] = {}
        """The held turns a segment's decisions add to, opened while it is planned and held again after."""
        self._units = 0
        """The units of the segments already written: the key of this segment's first unit."""
        self._fed = 0
        """The items of the segments already written."""
        self._state: dict[str, object] = {}
        """What the lane's reading carries across a cut (``LaneAdapter.read``'s ``state``)."""

    def feed(self, items: Sequence[object], *, last: bool) -> list[object]:
        """The view of ``items``, the next segment (cut where ``cut_here`` allows); ``last``: the transcript ends.

        An item the law cannot read is named by its position in the whole transcript, as the law on the
        whole list names it.
        """
        try:
            out = self._view_of(items, last=last)
        except ToolTurnInputError as error:
            raise error.moved(self._fed) from None
        self._fed += len(items)
        return out

    def _view_of(self, items: Sequence[object], *, last: bool) -> list[object]:
        adapter = self._adapter
        view = adapter.read(items, _EVERY, state=self._state)
        reading = Attribution(adapter, view, chained=self._chained, owner=self._owner, taken=self._taken)
        plan = plan_view(adapter, reading, self._carried_notes)
        base = self._units
        for turn_plan in plan.turns:
            if turn_plan.turn == CARRIED:
                continue
            notes = reading.notes.get(turn_plan.turn)
            if notes or turn_plan.decided:
                self._turns[base + turn_plan.turn] = _TurnNotes(
                    read=notes, decided=turn_plan.decided, places=self._places_of(reading, turn_plan.turn)
                ).held()
        for key, opened in self._opened.items():
            self._turns[key] = opened.held()
        self._opened.clear()
        self._orphans.update(reading.orphans)
        self._refused.extend(view.refused.values())
        self._marked.extend(kept_marks(view))
        self._carry(reading, base)
        self._units = base + len(view.units)
        out = emit_view(adapter, view, plan, items)
        out.more = not last
        return adapter.write(out)

    def _carry(self, reading: Attribution, base: int) -> None:
        """Each turn of the segment carried (keyed from ``base``) under the ids no later call of it took.

        A turn of one call is carried as its ``CarriedCall``, a turn of more as one ``CarriedTurn``.
        """
        adapter, owner, names, units = self._adapter, self._owner, self._names, reading.view.units
        for index, slots in reading.slots_of.items():
            ids = tuple(slot.call.call_id for slot in slots)
            written = tuple(slot.out.call_id for slot in slots)
            read_names = [adapter.call_name(slot.call.ref) for slot in slots]
            called = tuple(names.setdefault(name, name) for name in read_names)  # each name held once
            kinds = tuple(adapter.call_kind(slot.call.ref) for slot in slots)
            answered = tuple(
                # None: its turn stood as it was, answered once right after it
                not adapter.interrupted(units[slot.results[0]]) if slot.answered is None else slot.answered
                for slot in slots
            )
            key = base + index
            carried = (
                CarriedCall(ids[0], written[0], called[0], kinds[0], answered=answered[0], key=key, place=0)
                if len(slots) == 1
                else CarriedTurn(ids, None if written == ids else written, called, kinds, answered, key=key)
            )
            for slot in slots:
                if owner.get(slot.call.call_id) is slot:  # else a later call of the segment took its id
                    owner[slot.call.call_id] = carried

    @staticmethod
    def _places_of(reading: Attribution, turn: int) -> dict[str, int]:
        """The turn's call ids by their place in it."""
        return {slot.call.call_id: place for place, slot in enumerate(reading.slots_of[turn])}

    def _carried_notes(self, call: CarriedCall) -> Notes:
        """Where the decisions on a carried call are noted: its turn's (made when it had none)."""
        notes = self._opened.get(call.key)
        if notes is None:
            held = self._turns.get(call.key)
            notes = _TurnNotes(read=None, decided={}, places={}) if held is None else held.opened()
            self._opened[call.key] = notes
        notes.places[call.call_id] = call.place
        return notes.decided

    def close(self) -> tuple[ToolTurnRepair, ...]:
        """The repairs of the whole transcript, in the law's report order; the stream is spent.

        What only later segments needed (each call's nearest turn, the ids taken, the names, what the
        lane's reading carried) is let go first, and each turn's notes as its repairs are made, so the
        notes and the repairs are not both held whole.
        """
        self._owner.clear()
        self._names.clear()
        self._state.clear()
        self._taken.clear()
        self._taken.resume.clear()
        held = self._turns

        def reported() -> Iterator[tuple[Reported, bool]]:
            for key in sorted(held):
                yield held.pop(key).opened().reported(), False

        return repairs_in_order(reported(), tuple(self._orphans), grouped_marks([*self._refused, *self._marked]))
