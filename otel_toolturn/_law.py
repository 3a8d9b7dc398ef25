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

Bad input: a list that is not a sequence, or a call whose id cannot be read, raises
``ToolTurnInputError`` naming the position; a result whose id cannot be read answers nothing and
is left out as an ``orphan_result`` reported with the id ``""``. Shapes the law does not know pass
through untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._view import SECOND_RESULT_SEPARATOR, Call, LaneAdapter, Other, OutUnit, Result, Turn
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


_Note = Callable[[int, RepairForm, str], None]
"""Records that ``form`` was restored for ``call_id`` on the turn at unit index ``turn_index``."""


@dataclass(slots=True)
class _Slot:
    """One call of one turn and the results attributed to it, in transcript order."""

    call: Call
    results: list[Result]


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
    if not chained and adapter.is_clean(messages):
        return ToolTurnView(messages=messages, repairs=())
    return _restore(adapter, messages, prior_messages, chained=chained)


def _restore(
    adapter: LaneAdapter,
    messages: Sequence[object],
    prior_messages: Iterable[object] | None,
    *,
    chained: bool,
) -> ToolTurnView:
    units = adapter.read(messages)
    prior = {id(m) for m in prior_messages} if prior_messages is not None else None
    per_turn: dict[int, dict[RepairForm, list[str]]] = {}

    def note(turn_index: int, form: RepairForm, call_id: str) -> None:
        ids = per_turn.setdefault(turn_index, {}).setdefault(form, [])
        if call_id not in ids:
            ids.append(call_id)

    # (i) per turn: duplicate calls, then trailing blocks; slots in call order.
    slots_of: dict[int, list[_Slot]] = {}
    for index, unit in enumerate(units):
        if type(unit) is not Turn:
            continue
        seen: dict[str, None] = {}
        slots: list[_Slot] = []
        for call in unit.calls:
            if call.call_id in seen:
                note(index, "duplicate_call", call.call_id)
                continue
            seen[call.call_id] = None
            slots.append(_Slot(call=call, results=[]))
        if adapter.has_trailing(unit):
            for slot in slots:
                note(index, "trailing_text", slot.call.call_id)
        slots_of[index] = slots

    # (ii)/(iii) attribution: the nearest earlier turn that emitted the id.
    owner: dict[str, _Slot] = {}
    owner_turn: dict[int, int] = {}
    orphans: list[str] = []
    kept_orphans: set[int] = set()
    for index, unit in enumerate(units):
        if type(unit) is Turn:
            for slot in slots_of[index]:
                owner[slot.call.call_id] = slot
                owner_turn[id(slot)] = index
        elif type(unit) is Result:
            slot_for = owner.get(unit.call_id) if unit.call_id is not None else None
            if slot_for is not None:
                slot_for.results.append(unit)
            elif chained and unit.call_id is not None:
                kept_orphans.add(index)
            elif (unit.call_id or "") not in orphans:
                orphans.append(unit.call_id or "")

    # Reused ids: later uses get a derived id where the lane needs unique ids.
    renamed: dict[int, str] = {}
    if adapter.unique_ids:
        taken: set[str] = set()
        for unit in units:
            if type(unit) is Turn:
                taken.update(c.call_id for c in unit.calls)
            elif type(unit) is Result and unit.call_id is not None:
                taken.add(unit.call_id)
        used: set[str] = set()
        for index, unit in enumerate(units):
            if type(unit) is not Turn:
                continue
            for slot in slots_of[index]:
                if slot.call.call_id in used:
                    new_id = adapter.derive_id(slot.call.call_id, taken)
                    taken.add(new_id)
                    note(index, "reused_id", slot.call.call_id)
                    renamed[id(slot)] = new_id
                else:
                    used.add(slot.call.call_id)

    # The batch of each turn: which results stand in place right after it (with their unit index).
    in_place: dict[int, int] = {}
    for index, unit in enumerate(units):
        if type(unit) is not Turn:
            continue
        mine = {id(r) for s in slots_of[index] for r in s.results}
        follower = index + 1
        while follower < len(units) and type(units[follower]) is Result:
            if id(units[follower]) in mine:
                in_place[id(units[follower])] = follower
            follower += 1

    out: list[OutUnit] = []
    for index, unit in enumerate(units):
        if isinstance(unit, Turn):
            _emit_turn(
                adapter,
                index,
                unit,
                slots=slots_of[index],
                renamed=renamed,
                in_place=in_place,
                note=note,
                out=out,
            )
        elif not isinstance(unit, Result) or index in kept_orphans:
            out.append(unit)

    repairs: list[ToolTurnRepair] = []
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
    return ToolTurnView(messages=adapter.write(out, messages), repairs=tuple(repairs))


def _emit_turn(
    adapter: LaneAdapter,
    index: int,
    turn: Turn,
    *,
    slots: list[_Slot],
    renamed: dict[int, str],
    in_place: dict[int, int],
    note: _Note,
    out: list[OutUnit],
) -> None:
    """Write one turn and its batch: results in place first, then moved-up ones, then synthetic closes."""
    calls = [adapter.rename_call(s.call, renamed[id(s)]) if id(s) in renamed else s.call for s in slots]
    out.extend(
        Other(position=turn.position, ref=item, source=item)
        for item in adapter.write_turn(turn, [(s.call, c) for s, c in zip(slots, calls, strict=True)])
    )
    placed: list[tuple[int, Result]] = []
    moved: list[Result] = []
    synthetic: list[Result] = []
    for slot, call in zip(slots, calls, strict=True):
        call_id = slot.call.call_id
        real = [r for r in slot.results if not r.interrupted]
        closes = [r for r in slot.results if r.interrupted]
        if not slot.results:
            note(index, "missing_result", call_id)
            ref = adapter.synthesize(call)
            synthetic.append(
                Result(position=turn.position, call_id=call.call_id, ref=ref, source=None, interrupted=True)
            )
            continue
        kept = real if real else closes[:1]
        primary = kept[0]
        if len(slot.results) > 1:
            note(index, "duplicate_result", call_id)
        ref = adapter.fold([r.ref for r in kept]) if len(kept) > 1 else primary.ref
        result = primary
        if ref is not primary.ref:
            result = Result(position=primary.position, call_id=primary.call_id, ref=ref, source=None, interrupted=False)
        if id(slot) in renamed:
            result = Result(
                position=result.position,
                call_id=call.call_id,
                ref=adapter.rename_result(result, call.call_id),
                source=None,
                interrupted=result.interrupted,
            )
        if id(primary) in in_place:
            placed.append((in_place[id(primary)], result))
        else:
            note(index, "late_result", call_id)
            moved.append(result)
    placed.sort(key=lambda pair: pair[0])
    out.extend(r for _, r in placed)
    out.extend(moved)
    out.extend(synthetic)
