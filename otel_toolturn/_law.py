"""THE tool-turn law: restore the structure every provider lane requires of a tool turn, and report it.

The law works on the request view, never on the caller's transcript: the caller's list and its
items are never mutated.

For every assistant message (Responses: every run of call items) that carries tool calls:

(i)   its calls are a contiguous tail of distinct ids. A later call repeating an id the message
      already used is left out (``duplicate_call``, lossy); every block that is not a call and
      stands after the first call moves ahead of the calls, in order (``trailing_text``; Anthropic
      only, the other lanes keep text and calls apart).
(ii)  the units right after it are exactly one result per call. A result recorded later (behind a
      user message, another assistant message, another turn) is moved up (``late_result``); a second
      result for the same call is folded into the first with ``SECOND_RESULT_SEPARATOR`` between
      them (``duplicate_result``); an interrupted close stands in only for a call with no other
      result — beside a recorded result it is void, left out and reported as ``duplicate_result``
      (it carried no outcome, so nothing is lost); a call with no result at all is closed with the
      synthetic interrupted result (``missing_result``).
(iii) every result answers a call: a result with no EARLIER assistant message emitting its id (its
      call is gone, or it was recorded ahead of its call) is left out (``orphan_result``, lossy).

Attribution is positional: a result belongs to the NEAREST EARLIER turn that emitted its id, never
to a tool name. An earlier use of a reused id with no result before the next use is closed as
interrupted; every result after the last use belongs to that use. Where the API rejects a repeated
id anywhere in the request (Anthropic, Responses), the later use and its results get a derived,
deterministic id (``reused_id``, not lossy). Chat Completions keeps reused ids as they are.

Run ownership: ``prior_messages`` are the messages that stood in the transcript before the caller's
run began, by object identity. A ``missing_result`` on one of them is marked ``before_run``.

Order in a batch: results already in place keep their recorded order; moved-up results, then
synthetic closes, follow in call order. Repairs are reported per turn in transcript order (forms in
the order ``duplicate_call``, ``trailing_text``, ``reused_id``, ``late_result``,
``duplicate_result``, ``missing_result``), then one ``orphan_result`` for the whole view.

Identity and determinism: nothing to restore ⇒ the very same list object; untouched items are the
same objects; a moved result keeps its object; no hash order, no clock — the same input gives the
same output in every process.

Cost: one survey per lane scans the list once and cuts it into segments (a turn, or any other
item, with the results recorded right after it). It marks a segment dirty when something in it
breaks the law, or when a result elsewhere answers its turn. Only the dirty segments are read; the
law runs on them (a break between two spans resets adjacency, as the clean item that stood there
did) and the rest of the list is carried as slices, joined last. Dirty spans of a plain shape (every
result answers a call of the nearest turn before it, once, from an item holding only results; no
call id recurs across the spans) are read the quick way: each turn's batch is written straight out,
with no view built. Any other shape is read into the neutral view. A list whose survey finds an
item it cannot read, or (Anthropic, Responses) an id reused across turns, is read whole.

Bad input: a list that is not a sequence, or a call whose id cannot be read, raises
``ToolTurnInputError`` naming the position; a result whose id cannot be read answers nothing and
is left out as an ``orphan_result`` reported with the id ``""``. Shapes the law does not know pass
through untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._view import (
    BREAK,
    OTHER,
    RESULT,
    SECOND_RESULT_SEPARATOR,
    TURN,
    Call,
    Emitted,
    LaneAdapter,
    Survey,
    Turn,
    View,
)
from otel_toolturn._vocab import REPAIR_DROPS, Lane, RepairForm
from otel_toolturn.lanes import adapter_for

__all__ = ["SECOND_RESULT_SEPARATOR", "ToolTurnRepair", "ToolTurnView", "ensure_tool_turn_invariants"]

_TURN_FORM_ORDER: tuple[RepairForm, ...] = (
    "duplicate_call",
    "trailing_text",
    "reused_id",
    "late_result",
    "duplicate_result",
    "missing_result",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolTurnRepair:
    """One restoration: on one turn, or (``orphan_result``) on the view as a whole.

    ``tool_call_ids``: the calls concerned, in call order — every call of the message for
    ``trailing_text``; the repeated ids for ``duplicate_call`` and ``reused_id``; the ids of the
    results left out, once each, in transcript order, for ``orphan_result``; otherwise the calls
    whose result was moved up, synthesised, or folded.
    """

    form: RepairForm
    tool_call_ids: tuple[str, ...]
    before_run: bool = False

    @property
    def lossy(self) -> bool:
        """Whether this repair left recorded content out of the request."""
        return REPAIR_DROPS[self.form]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolTurnView:
    """The request view and what was restored to make it (``messages is`` the input when nothing was)."""

    messages: Sequence[object] | str
    repairs: tuple[ToolTurnRepair, ...]

    @property
    def lossy(self) -> bool:
        """Whether any repair left recorded content out of the request (a lossy projection)."""
        return any(r.lossy for r in self.repairs)


_SLOTS_SET_DIRECTLY: Final = ToolTurnRepair.__new__ is object.__new__
"""Interpreted, the frozen dataclass's keyword ``__init__`` costs three times what setting its slots
does; compiled (mypyc, see ``setup.py``), its constructor is the fast way and the only one."""


def _repair(form: RepairForm, call_ids: tuple[str, ...], *, before_run: bool = False) -> ToolTurnRepair:
    """The value ``ToolTurnRepair(form=..., tool_call_ids=..., before_run=...)``, made the fastest way.

    The request path makes one per repaired turn.
    """
    if not _SLOTS_SET_DIRECTLY:
        return ToolTurnRepair(form=form, tool_call_ids=call_ids, before_run=before_run)
    repair = object.__new__(ToolTurnRepair)
    object.__setattr__(repair, "form", form)
    object.__setattr__(repair, "tool_call_ids", call_ids)
    object.__setattr__(repair, "before_run", before_run)
    return repair


_Note = Callable[[int, RepairForm, str], None]
"""Records that ``form`` was restored for ``call_id`` on the turn at unit index ``turn_index``."""


@dataclass(slots=True)
class _Slot:
    """One call of one turn, its results (unit indices, in transcript order), and which stood in place."""

    call: Call
    turn: int
    results: list[int]
    placed: list[int]
    """The unit indices of its results that stood right after the turn."""
    new_id: str | None = None


def ensure_tool_turn_invariants(
    messages: Sequence[object] | str,
    *,
    lane: Lane,
    prior_messages: Iterable[object] | None = None,
    chained: bool = False,
) -> ToolTurnView:
    """Restore the tool-turn law on a provider-bound list (see the module docstring).

    ``messages``: Anthropic ``messages``, Chat ``messages`` or Responses ``input`` (a string input
    has no tool turns and comes back as it is). ``prior_messages``: the run's inherited messages,
    by identity. ``chained``: Responses only — the request continues server-held state
    (``previous_response_id`` / ``conversation``), so a result whose call is not in the list answers
    a call the server holds and is kept.

    >>> view = ensure_tool_turn_invariants([{"role": "user", "content": "hi"}], lane="openai.chat_completions")
    >>> view.repairs
    ()
    """
    adapter = adapter_for(lane)
    if isinstance(messages, str):
        if lane == "openai.responses":
            return ToolTurnView(messages=messages, repairs=())
        raise ToolTurnInputError(f"{lane} expects a list of messages, got a string")
    if not isinstance(messages, Sequence):
        raise ToolTurnInputError(
            f"{lane} expects a list of messages, got {type(messages).__name__!r}; "
            "materialise an iterator with list() first"
        )
    return restore_surveyed(adapter, messages, adapter.survey(messages), prior_messages, chained=chained)


def restore_surveyed(
    adapter: LaneAdapter,
    messages: Sequence[object],
    survey: Survey | None,
    prior_messages: Iterable[object] | None = None,
    *,
    chained: bool = False,
) -> ToolTurnView:
    """The law on ``messages`` given the lane's survey of them (``adapter.survey(messages)``, or an equal one).

    The one place a survey becomes a view: ``None`` reads the whole list; a survey with nothing
    dirty returns the very same list; otherwise only the dirty spans are read (the quick way when
    their shape is plain, see ``_restore_quick``).
    """
    if survey is None:
        spans = [(0, len(messages))]
    elif not survey.dirty:
        return ToolTurnView(messages=messages, repairs=())
    else:
        spans = survey.spans(len(messages))
    prior = {id(m) for m in prior_messages} if prior_messages is not None else None
    if survey is not None:
        quick = _restore_quick(adapter, messages, spans, prior, chained=chained)
        if quick is not None:
            return quick
    return _restore_read(adapter, messages, spans, prior, chained=chained)


def _restore(
    adapter: LaneAdapter,
    messages: Sequence[object],
    spans: list[tuple[int, int]],
    prior_messages: Iterable[object] | None,
    *,
    chained: bool,
) -> ToolTurnView:
    """The law on the ``spans`` of ``messages`` (the segments that need it); the rest is carried as it stands.

    Always reads the spans into the neutral view: the reading the quick one must equal.
    """
    prior = {id(m) for m in prior_messages} if prior_messages is not None else None
    return _restore_read(adapter, messages, spans, prior, chained=chained)


def _restore_quick(
    adapter: LaneAdapter,
    messages: Sequence[object],
    spans: list[tuple[int, int]],
    prior: set[int] | None,
    *,
    chained: bool,
) -> ToolTurnView | None:
    """The law on ``spans`` read the quick way (``adapter.read_quick``); ``None`` when one needs the full reading.

    Quick: every span is plain and no call id recurs in the spans, so no result answers a turn of
    another span and the only repairs are ``trailing_text``, ``late_result``, ``missing_result`` and
    ``orphan_result`` (a result ahead of a span's first turn). Gives exactly what ``_restore`` gives.
    """
    called: set[str] = set()
    repairs: list[ToolTurnRepair] = []
    orphans: list[str] = []
    pieces: list[list[object]] = []
    for start, stop in spans:
        stretch = adapter.read_quick(messages, start, stop)
        if stretch is None:
            return None
        wire: list[object] = []
        pieces.append(wire)
        lead, lead_ids, batches = stretch.lead, stretch.lead_ids, stretch.batches
        for item, answers in zip(lead, lead_ids, strict=True) if lead else ():
            if answers is None:
                wire.append(item)
                continue
            if not called.isdisjoint(answers):
                return None  # it answers a turn of an earlier span
            if not chained or None in answers:
                if chained and any(answers):
                    return None  # kept and left-out results in one item
                for answer in answers:
                    if (answer or "") not in orphans:
                        orphans.append(answer or "")
            else:
                wire.append(item)
        for batch in batches:
            call_ids = batch.call_ids
            if not called.isdisjoint(call_ids):
                return None  # an id reused across turns
            called.update(call_ids)
            answered = batch.answered
            if batch.trailing:
                repairs.append(_repair("trailing_text", tuple(call_ids)))
                refs = batch.call_refs
                wire += adapter.write_turn(
                    batch.items, batch.position, list(zip(refs, refs, strict=True)), trailing=True
                )
            elif len(answered) == len(call_ids):
                wire += batch.items
                wire += batch.placed
                wire += batch.others
                continue
            else:
                wire += batch.items
            wire += batch.placed
            if len(answered) != len(call_ids):
                late = batch.late
                results: list[tuple[object, object]] = []
                moved: list[str] = []
                missing: list[str] = []
                synthetic: list[tuple[object, object]] = []
                for number, call_id in enumerate(call_ids):
                    if call_id not in answered:
                        result = late.get(call_id)
                        if result is not None:
                            moved.append(call_id)
                            results.append(result)
                        else:
                            missing.append(call_id)
                            synthetic.append((adapter.synthesize(Call(call_id, batch.call_refs[number])), None))
                if moved:
                    repairs.append(_repair("late_result", tuple(moved)))
                if missing:
                    results += synthetic
                    before = prior is not None and any(id(item) in prior for item in batch.items)
                    repairs.append(_repair("missing_result", tuple(missing), before_run=before))
                wire += adapter.write_results(results)
            wire += batch.others
    if orphans:
        repairs.append(_repair("orphan_result", tuple(orphans)))
    if not repairs:
        return ToolTurnView(messages=messages, repairs=())
    # The list is put together last, so no collection of young objects has to walk it.
    whole: list[object] = []
    carried = 0
    for (start, stop), piece in zip(spans, pieces, strict=True):
        whole += messages[carried:start]
        whole += piece
        carried = stop
    whole += messages[carried:]
    return ToolTurnView(messages=whole, repairs=tuple(repairs))


def _restore_read(
    adapter: LaneAdapter,
    messages: Sequence[object],
    spans: list[tuple[int, int]],
    prior: set[int] | None,
    *,
    chained: bool,
) -> ToolTurnView:
    """The law on the ``spans`` of ``messages`` read whole into the view (every shape)."""
    view = adapter.read(messages, spans)
    units, kinds, ids = view.units, view.kinds, view.ids
    per_turn: dict[int, dict[RepairForm, list[str]]] = {}

    def note(turn_index: int, form: RepairForm, call_id: str) -> None:
        forms = per_turn.get(turn_index)
        if forms is None:
            forms = per_turn[turn_index] = {}
        noted = forms.get(form)
        if noted is None:
            forms[form] = [call_id]
        elif call_id not in noted:
            noted.append(call_id)

    # One pass: (i) per turn, duplicate calls then trailing blocks; (ii)/(iii) attribution of each
    # result to the nearest earlier turn that emitted its id, noting whether it stands in place.
    # A turn is "disturbed" when anything about it or its batch changes; the others, with their
    # results, are carried exactly as they stand.
    slots_of: dict[int, list[_Slot]] = {}
    owner: dict[str, _Slot] = {}
    attributed: dict[int, int] = {}  # result unit index -> the turn it answers
    answered: dict[int, int] = {}  # turn -> how many of its calls have exactly one result, in place
    disturbed: set[int] = set()
    orphans: list[str] = []
    kept_orphans: set[int] = set()
    reused: list[_Slot] = []
    adjacent = -1  # the turn whose batch is still running (only results since it), else -1
    for index, kind in enumerate(kinds):
        if kind == RESULT:
            call_id = ids[index]
            owning = owner.get(call_id) if call_id is not None else None
            if owning is not None:
                turn_index = owning.turn
                attributed[index] = turn_index
                if owning.results:
                    disturbed.add(turn_index)
                owning.results.append(index)
                if turn_index == adjacent:
                    owning.placed.append(index)
                    answered[turn_index] = answered.get(turn_index, 0) + 1
                else:
                    disturbed.add(turn_index)
            elif chained and call_id is not None:
                kept_orphans.add(index)
            elif (call_id or "") not in orphans:
                orphans.append(call_id or "")
        elif kind == TURN:
            turn = units[index]
            assert isinstance(turn, Turn)  # noqa: S101 - the kind says so; narrows for the type checker
            seen: set[str] = set()
            slots: list[_Slot] = []
            for call in turn.calls:
                call_id = call.call_id
                if call_id in seen:
                    note(index, "duplicate_call", call_id)
                    disturbed.add(index)
                    continue
                seen.add(call_id)
                slot = _Slot(call, index, [], [])
                if call_id in owner:
                    reused.append(slot)
                owner[call_id] = slot
                slots.append(slot)
            if turn.trailing:
                for slot in slots:
                    note(index, "trailing_text", slot.call.call_id)
                disturbed.add(index)
            slots_of[index] = slots
            adjacent = index
        else:
            adjacent = -1
    for index, slots in slots_of.items():
        if answered.get(index, 0) != len(slots):
            disturbed.add(index)

    # Reused ids: later uses get a derived id where the lane needs unique ids.
    if reused and adapter.unique_ids:
        taken: set[str] = set(owner)
        taken.update(i for i in ids.values() if i is not None)
        for unit in units:
            if type(unit) is Turn:
                taken.update(c.call_id for c in unit.calls)
        for slot in reused:
            slot.new_id = adapter.derive_id(slot.call.call_id, taken)
            taken.add(slot.new_id)
            note(slot.turn, "reused_id", slot.call.call_id)
            disturbed.add(slot.turn)

    repairs: list[ToolTurnRepair] = []
    out = Emitted()
    items, out_kinds, out_sources = out.items, out.kinds, out.sources
    sources = view.sources
    for index, kind in enumerate(kinds):
        if kind == OTHER:
            items.append(units[index])
            out_kinds.append(OTHER)
            out_sources.append(None)
        elif kind == RESULT:
            answers = attributed.get(index)
            if (answers is not None and answers not in disturbed) or index in kept_orphans:
                items.append(units[index])
                out_kinds.append(RESULT)
                out_sources.append(sources.get(index))
        elif index in disturbed:
            _emit_turn(adapter, view, index, slots=slots_of[index], note=note, out=out)
        elif kind == TURN:
            turn = units[index]
            assert isinstance(turn, Turn)  # noqa: S101 - the kind says so; narrows for the type checker
            items.extend(turn.items)
            out_kinds.extend([OTHER] * len(turn.items))
            out_sources.extend([None] * len(turn.items))
        else:
            items.append(units[index])
            out_kinds.append(kind)
            out_sources.append(sources.get(index))

    for index in sorted(per_turn):
        forms = per_turn[index]
        turn = units[index]
        before = prior is not None and isinstance(turn, Turn) and any(id(item) in prior for item in turn.items)
        repairs.extend(
            ToolTurnRepair(
                form=form,
                tool_call_ids=tuple(forms[form]),
                before_run=before and form == "missing_result",
            )
            for form in _TURN_FORM_ORDER
            if form in forms
        )
    if orphans:
        repairs.append(ToolTurnRepair(form="orphan_result", tool_call_ids=tuple(orphans)))
    if not repairs:
        return ToolTurnView(messages=messages, repairs=())
    return ToolTurnView(messages=_splice(messages, spans, adapter.write(out)), repairs=tuple(repairs))


def _splice(messages: Sequence[object], spans: list[tuple[int, int]], written: list[object]) -> list[object]:
    """The wire list: ``messages`` with each span replaced by its written piece (pieces are cut at ``BREAK``)."""
    if len(spans) == 1 and spans[0] == (0, len(messages)):
        return written
    wire: list[object] = []
    carried = 0
    pieces = iter(spans)
    start, stop = next(pieces)
    wire.extend(messages[carried:start])
    for item in written:
        if item is BREAK:
            carried = stop
            start, stop = next(pieces)
            wire.extend(messages[carried:start])
        else:
            wire.append(item)
    wire.extend(messages[stop:])
    return wire


def _emit_turn(
    adapter: LaneAdapter,
    view: View,
    index: int,
    *,
    slots: list[_Slot],
    note: _Note,
    out: Emitted,
) -> None:
    """Write one turn and its batch: results in place first, then moved-up ones, then synthetic closes."""
    turn = view.units[index]
    assert isinstance(turn, Turn)  # noqa: S101 - only turns reach here; narrows for the type checker
    calls = [adapter.rename_call(s.call, s.new_id) if s.new_id is not None else s.call for s in slots]
    if turn.trailing or len(slots) != len(turn.calls) or any(s.new_id is not None for s in slots):
        pairs = [(s.call.ref, c.ref) for s, c in zip(slots, calls, strict=True)]
        written = adapter.write_turn(turn.items, turn.position, pairs, trailing=turn.trailing)
    else:
        written = list(turn.items)  # its calls stand as they are: only its batch changes
    out.items.extend(written)
    out.kinds.extend([OTHER] * len(written))
    out.sources.extend([None] * len(written))
    units, sources = view.units, view.sources
    placed: list[tuple[int, object, object]] = []
    moved: list[tuple[object, object]] = []
    synthetic: list[object] = []
    for slot, call in zip(slots, calls, strict=True):
        call_id = slot.call.call_id
        results = slot.results
        if not results:
            note(index, "missing_result", call_id)
            synthetic.append(adapter.synthesize(call))
            continue
        if len(results) == 1:
            kept = results
        else:
            note(index, "duplicate_result", call_id)
            real = [r for r in results if not adapter.interrupted(units[r])]
            kept = real or results[:1]
        primary = kept[0]
        ref = units[primary]
        source = sources.get(primary)
        if len(kept) > 1:
            ref, source = adapter.fold([units[r] for r in kept]), None
        if slot.new_id is not None:
            ref, source = adapter.rename_result(ref, slot.new_id), None
        if primary in slot.placed:
            placed.append((primary, ref, source))
        else:
            note(index, "late_result", call_id)
            moved.append((ref, source))
    placed.sort(key=lambda entry: entry[0])
    for _, ref, source in placed:
        out.items.append(ref)
        out.kinds.append(RESULT)
        out.sources.append(source)
    for ref, source in moved:
        out.items.append(ref)
        out.kinds.append(RESULT)
        out.sources.append(source)
    for ref in synthetic:
        out.items.append(ref)
        out.kinds.append(RESULT)
        out.sources.append(None)
