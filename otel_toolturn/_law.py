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
from otel_toolturn._view import SECOND_RESULT_SEPARATOR, Call, LaneAdapter, Result, Turn
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
    """One call of one turn, the results attributed to it in transcript order, and which stood in place."""

    call: Call
    turn: int
    results: list[Result]
    placed: dict[int, int]
    """``id(result)`` → its unit index, for the results standing right after the turn."""
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

    # One pass: (i) per turn, duplicate calls then trailing blocks; (ii)/(iii) attribution of each
    # result to the nearest earlier turn that emitted its id, noting whether it stands in place.
    slots_of: dict[int, list[_Slot]] = {}
    owner: dict[str, _Slot] = {}
    orphans: list[str] = []
    kept_orphans: set[int] = set()
    reused: list[_Slot] = []
    adjacent = -1  # the turn whose batch is still running (only results since it), else -1
    for index, unit in enumerate(units):
        if type(unit) is Turn:
            seen: set[str] = set()
            slots: list[_Slot] = []
            for call in unit.calls:
                call_id = call.call_id
                if call_id in seen:
                    note(index, "duplicate_call", call_id)
                    continue
                seen.add(call_id)
                slot = _Slot(call=call, turn=index, results=[], placed={})
                if call_id in owner:
                    reused.append(slot)
                owner[call_id] = slot
                slots.append(slot)
            if adapter.has_trailing(unit):
                for slot in slots:
                    note(index, "trailing_text", slot.call.call_id)
            slots_of[index] = slots
            adjacent = index
        elif type(unit) is Result:
            owning = owner.get(unit.call_id) if unit.call_id is not None else None
            if owning is not None:
                owning.results.append(unit)
                if owning.turn == adjacent:
                    owning.placed[id(unit)] = index
            elif chained and unit.call_id is not None:
                kept_orphans.add(index)
            elif (unit.call_id or "") not in orphans:
                orphans.append(unit.call_id or "")
        else:
            adjacent = -1

    # Reused ids: later uses get a derived id where the lane needs unique ids.
    if reused and adapter.unique_ids:
        taken: set[str] = set(owner)
        for unit in units:
            if type(unit) is Turn:
                taken.update(c.call_id for c in unit.calls)
            elif type(unit) is Result and unit.call_id is not None:
                taken.add(unit.call_id)
        for slot in reused:
            slot.new_id = adapter.derive_id(slot.call.call_id, taken)
            taken.add(slot.new_id)
            note(slot.turn, "reused_id", slot.call.call_id)

    out: list[object] = []
    for index, unit in enumerate(units):
        if type(unit) is Turn:
            _emit_turn(adapter, index, unit, slots=slots_of[index], note=note, out=out)
        elif type(unit) is not Result or index in kept_orphans:
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
    note: _Note,
    out: list[object],
) -> None:
    """Write one turn and its batch: results in place first, then moved-up ones, then synthetic closes."""
    calls = [adapter.rename_call(s.call, s.new_id) if s.new_id is not None else s.call for s in slots]
    out.extend(adapter.write_turn(turn, [(s.call, c) for s, c in zip(slots, calls, strict=True)]))
    placed: list[tuple[int, Result]] = []
    moved: list[Result] = []
    synthetic: list[Result] = []
    for slot, call in zip(slots, calls, strict=True):
        call_id = slot.call.call_id
        results = slot.results
        if not results:
            note(index, "missing_result", call_id)
            ref = adapter.synthesize(call)
            synthetic.append(Result(turn.position, call.call_id, ref, None))
            continue
        if len(results) == 1:
            kept = results
        else:
            note(index, "duplicate_result", call_id)
            real = [r for r in results if not adapter.interrupted(r)]
            kept = real or results[:1]
        primary = kept[0]
        result = primary
        if len(kept) > 1:
            result = Result(primary.position, primary.call_id, adapter.fold([r.ref for r in kept]), None)
        if slot.new_id is not None:
            result = Result(result.position, slot.new_id, adapter.rename_result(result, slot.new_id), None)
        at = slot.placed.get(id(primary))
        if at is not None:
            placed.append((at, result))
        else:
            note(index, "late_result", call_id)
            moved.append(result)
    placed.sort(key=lambda pair: pair[0])
    out.extend(r for _, r in placed)
    out.extend(moved)
    out.extend(synthetic)
