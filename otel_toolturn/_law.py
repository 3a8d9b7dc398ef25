"""THE tool-turn law: restore the structure every provider lane requires of a tool turn, and report it.

The law works on the request view, never on the caller's transcript: the caller's list and its
items are never mutated. It is the one place that decides what a turn becomes; each lane
(``otel_toolturn.lanes``) only reads its wire list into the neutral view and writes the outcome back.

**Append-stable.** A session is a sequence of requests, and providers bind each request to the ones
before it: Anthropic checks every returned thinking block against the exact prefix it was produced
from (a changed earlier message is a 400, or the thinking is dropped), and every provider's prompt
cache is a prefix cache. So the view of a message depends only on the transcript up to the next
assistant message after it: once the model has answered, what it answered from is never rewritten.
The *window* of a turn is what stands after it up to the next assistant message (Responses: the next
item the model produced).

For every assistant message (Responses: every run of call items) that carries tool calls:

(i)   its calls are a contiguous tail of distinct ids. A later call repeating an id the message
      already used is left out (``duplicate_call``, lossy); every block that is not a call and
      stands after the first call moves ahead of the calls, in order (``trailing_text``; Anthropic
      only, the other lanes keep text and calls apart).
(ii)  the units right after it are exactly one result per call, taken from its window. A result
      recorded later in the window (behind a user message) is moved up (``late_result``); a second
      result for the same call in the window is folded into the first with
      ``SECOND_RESULT_SEPARATOR`` between them (``duplicate_result``); an interrupted close stands
      in only for a call with no other result — beside a recorded result it is void, left out and
      reported as ``duplicate_result`` (it carried no outcome, so nothing is lost); a call with no
      result in its window is closed with the synthetic interrupted result (``missing_result``), or,
      where its kind has no honest close (a Responses ``computer_call`` is answered only by a
      screenshot), left out with the reasoning that belonged to it (``unanswerable_call``, lossy).
(iii) a result recorded after the window (the model answered in between, over the close it was
      shown) is not moved up: the call keeps what the model saw, and the result is delivered where
      it stands as text naming the call, its content kept (``late_result_in_place``; for a call
      that already had a result the model saw, ``duplicate_result_in_place``): parts a user message
      holds stay parts, any other (a result or a call nested in the content) becomes text of its
      JSON, so a delivery never stands as a result or a call of its own. An interrupted close
      recorded there carries no outcome and is left out under the same form. Neither is lossy.
(iv)  every result answers a call: a result with no EARLIER assistant message emitting its id (its
      call is gone, or it was recorded ahead of its call) is left out (``orphan_result``, lossy).
(v)   an item the wire cannot hold where it stands and no rule places, as the lane reads it, is left
      out (Responses: an item, no call and no output, whose ``id`` repeats an earlier item's,
      ``duplicate_item``; a ``reasoning`` item with nothing after it to belong to,
      ``dangling_reasoning``; both lossy).
(vi)  what the lane's reading marks on a turn's own items or on a unit that stays where it stands is
      restored by the lane and reported (Gemini: a call step whose first call carries no thought
      signature gets the provider's placeholder, ``placeholder_signature``; text that stood after the
      function responses of its content goes ahead of them, ``text_after_results``; Responses: a call
      or output item whose ``id`` repeats an earlier item's is sent without that optional ``id``,
      ``duplicate_item_id``; none lossy; Anthropic: a server or MCP tool use with no result block in
      its assistant turn once another message follows gets the tool's error result right after it,
      ``missing_result``, and a server or MCP result with no use before it in its turn is left out,
      ``orphan_result``, lossy — see ``lanes._anthropic_server``). The Gemini forms read one content
      or one call step alone, ``duplicate_item_id`` the items before it (the first use keeps its
      id), and the Anthropic server forms the assistant turn up to the next message of another role,
      so none can change once the model has answered (a ``pause_turn`` response left open at the end
      is answered by its continuation, in the same turn). Gemini also needs a turn's results in ONE
      content: a result that opens a later content than the results right before it is not in
      place, and is moved up (``late_result``).

Responses accepts an output anywhere after its call, so there nothing moves: a run's window is what
stands after it up to the next item the model produced, as in the other lanes; a call's first output
in the window stands where it was recorded, a second one there is folded into it (a void close left
out), one recorded after the window is delivered in place as a user message as in (iii), and a call
with no output in its window is closed right after the outputs that directly follow its run — where
the model first saw the close, and where it stays on every later request.

What a run or a call step is, is the lane's reading, and it reads the list alone: consecutive call
items (Responses) or model contents holding calls (Gemini) are one turn, unless the later one repeats
a call id the turn already used, or (Gemini) opens with a signed call — the signs of a later answer.
A later answer of calls only, with nothing between it and an unanswered turn, is read as part of
that turn: the close the model saw is then taken back. That one case needs a memory of what was sent,
which the law does not keep (see the README's Limitations).

Why the other forms need no window: ``duplicate_call`` and ``trailing_text`` read the assistant
message alone; ``orphan_result`` and attribution read only what stands before a result;
``reused_id`` and ``invalid_id`` derive an id from the call's own and the ids used before it (a
later call that takes a derived id is itself renamed). None can change once the model has answered.

Attribution is positional: a result belongs to the NEAREST EARLIER turn that emitted its id, never
to a tool name. An earlier use of a reused id with no result before the next use is closed as
interrupted; every result after the last use belongs to that use. Where the API rejects a repeated
id anywhere in the request (Anthropic, Responses), the later use and its results get a derived,
deterministic id (``reused_id``, not lossy). Chat Completions keeps reused ids as they are. A call
id the API's id pattern or length refuses (Anthropic: ``functions.lookup:0``, as some OpenAI-compatible
servers write them; Chat: over 40 characters; Mistral's Chat: not nine letters and digits; Responses:
over 64) gets a derived id that fits, its
results with it (``invalid_id``, not lossy). Every id the law writes fits its lane's pattern and length.

Run ownership: ``prior_messages`` are the messages that stood in the transcript before the caller's
run began, by object identity. A ``missing_result`` on one of them is marked ``before_run``.

Order in a batch: results already in place keep their recorded order; moved-up results, then
synthetic closes, follow in call order. Repairs are reported per turn in transcript order (forms in
the order of ``_TURN_FORM_ORDER``), then one ``orphan_result`` for the whole view, then one repair
per form and kind of (v) and of the units (vi) marks (those of units left out first). A unit left out
stays a boundary: what stood before it is written as it was.

What it deliberately does not do: repair what the lane's provider accepts (a list ``validate``
passes comes back as the very same object, with no repairs); look at tool names; change a block
or item it does not repair (thinking blocks, reasoning items and item ids that do not repeat stay as
sent); remember
anything between calls — every call reads the transcript as it is.

How it runs: one pass reads the view and attributes each result to its turn (``Attribution``); then
every turn's plan is decided (``_TurnPlan``: the calls it keeps and how they are written, what stands in
place of each of its results, its batch, its repairs), all of them before anything is written; then one
writing step reads the plans alone and emits the wire list: the lane writes the units the plans place
something at or after, and each stretch between them from one clean turn to another is the wire items
themselves (``_untouched``). A list the lane reads as settled (every turn clean, every clean turn's ids
accepted) returns before any of it. A transcript too long to hold is fed to the same steps one segment
at a time (``_law_stream.LawStream``): append-stability makes each segment's view final once the next
answer starts, and what a later segment needs of the earlier ones (each call by its id, the ids taken, the
orphans, each turn's repairs) is carried.

Identity and determinism: nothing to restore ⇒ the very same list object; untouched items are the
same objects; a moved result keeps its object; no hash order, no clock — the same input gives the
same output in every process.

Bad input: a list that is not a sequence, or a call whose id cannot be read, raises
``ToolTurnInputError`` naming the position; a result whose id cannot be read answers nothing and
is left out as an ``orphan_result`` reported with the id ``""``. Shapes the law does not know pass
through untouched.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, count, pairwise
from typing import Final, TypeVar

from otel_toolturn._view import (
    CLEAN,
    OTHER,
    PART,
    REPLY,
    RESULT,
    SECOND_RESULT_SEPARATOR,
    TURN,
    Call,
    Clean,
    Emitted,
    LaneAdapter,
    Mark,
    TakenIds,
    Turn,
    UnitKind,
    View,
)
from otel_toolturn._vocab import CALL_KINDS, REPAIR_DROPS, CallKind, Dialect, Lane, RepairForm, unreachable
from otel_toolturn.lanes import adapter_for, listed

__all__ = ["SECOND_RESULT_SEPARATOR", "ToolTurnRepair", "ToolTurnView", "ensure_tool_turn_invariants"]

_V = TypeVar("_V")
"""A value a carried turn holds per call: a name, a kind, whether it was answered."""

_TURN_FORM_ORDER: tuple[RepairForm, ...] = (
    "duplicate_call",
    "trailing_text",
    "placeholder_signature",
    "reused_id",
    "invalid_id",
    "duplicate_item_id",
    "late_result",
    "duplicate_result",
    "missing_result",
    "unanswerable_call",
    "late_result_in_place",
    "duplicate_result_in_place",
    "orphan_result",
)
_REPORT_RANK: dict[tuple[RepairForm, CallKind], int] = {
    key: rank for rank, key in enumerate((form, kind) for form in _TURN_FORM_ORDER for kind in CALL_KINDS)
}
"""Where a turn's repairs of each form and kind of call stand in its report: by form, then by kind."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolTurnRepair:
    """One restoration: on one turn, or (``orphan_result``) on the view as a whole.

    ``tool_call_ids``: the calls concerned, in call order — every call of the message for
    ``trailing_text``; the repeated ids for ``duplicate_call`` and ``reused_id``; the refused ids
    (as sent) for ``invalid_id``; the call ids the items carry or answer for ``duplicate_item_id``;
    the item ids for ``duplicate_item`` and ``dangling_reasoning``; the ids of the
    results left out, once each, in transcript order, for ``orphan_result``; otherwise the calls
    whose result was moved up, synthesised, folded or delivered in place, or (``unanswerable_call``)
    that were left out. ``call_kind``: the kind of call they are (a turn's calls of two kinds give
    one repair per kind).
    """

    form: RepairForm
    tool_call_ids: tuple[str, ...]
    before_run: bool = False
    call_kind: CallKind = "function"

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


_Piece = tuple[UnitKind, object, object]
"""One unit the view writes: its kind, the unit, and (results, parts) the wire message it stands in."""

Notes = dict[tuple[RepairForm, CallKind], dict[str, None]]
"""Per form and kind of call, the ids concerned, in the order met: a dict as an ordered set."""

Reported = tuple[tuple[RepairForm, CallKind, tuple[str, ...]], ...]
"""Repairs as the view reports them: each form and kind of call with its ids, in report order."""


CARRIED = -2
"""The ``turn`` of the plan of the results delivered to carried calls: no unit index."""


class CarriedCall:
    """A call of an earlier segment of a stream (``LawStream``): what a later result for it needs, and no wire object.

    ``call_id``: its id as read (reports name it); ``written``: as the view wrote it; ``name``: its
    ``call_name``; ``kind``: its ``call_kind``; ``answered``: whether a result the model saw answers it;
    ``key``: its turn's key in the stream; ``place``: its place among its turn's calls.
    """

    __slots__ = ("answered", "call_id", "key", "kind", "name", "place", "written")

    def __init__(
        self, call_id: str, written: str, name: str, kind: CallKind, *, answered: bool, key: int, place: int
    ) -> None:
        self.call_id = call_id
        self.written = written
        self.name = name
        self.kind = kind
        self.answered = answered
        self.key = key
        self.place = place


class CarriedTurn:
    """The calls of one turn of an earlier segment of a stream, held once for the turn, not once per call.

    ``ids``: the calls' ids as read, in call order (a call's place is its index); ``written``: as the view
    wrote them (``None``: as read); ``names``, ``kinds``, ``answered``: per call, as ``CarriedCall`` has
    them, or the one value every call of the turn has. A later result for one of the calls opens it (``call``).
    """

    __slots__ = ("answered", "ids", "key", "kinds", "names", "written")

    def __init__(
        self,
        ids: tuple[str, ...],
        written: tuple[str, ...] | None,
        names: tuple[str, ...],
        kinds: tuple[CallKind, ...],
        answered: tuple[bool, ...],
        *,
        key: int,
    ) -> None:
        self.ids = ids
        self.written = written
        self.names = _one_or_each(names)
        self.kinds = _one_or_each(kinds)
        self.answered = _one_or_each(answered)
        self.key = key

    def call(self, call_id: str) -> CarriedCall:
        """The call of the turn whose id is ``call_id``, as a later result needs it."""
        place = self.ids.index(call_id)
        return CarriedCall(
            call_id,
            call_id if self.written is None else self.written[place],
            _at(self.names, place),
            _at(self.kinds, place),
            answered=_at(self.answered, place),
            key=self.key,
            place=place,
        )


def _one_or_each(values: tuple[_V, ...]) -> _V | tuple[_V, ...]:
    """The one value every call has, else ``values``."""
    return values[0] if len(set(values)) == 1 else values


def _at(values: _V | tuple[_V, ...], place: int) -> _V:
    """The value of the call at ``place``, from what ``_one_or_each`` gave."""
    return values[place] if isinstance(values, tuple) else values


Owner = dict[str, "Slot | Clean | CarriedCall | CarriedTurn"]
"""Per call id, its nearest call so far: a slot of a turn read in full, a clean turn, or a stream's carried call."""


class Slot:
    """One call of one turn, and the results attributed to it (unit indices, in transcript order).

    ``replied``: for each result, the index of the last assistant unit before it (the turn itself,
    or later). ``placed``: its results that stood right after the turn (only results between them).
    ``written``: the call as the view writes it (``call`` itself unless it got ``new_id``).
    ``answered``: whether a result the model saw answers it (``None``: not decided here).
    """

    __slots__ = ("answered", "call", "new_id", "placed", "replied", "results", "turn", "written")

    def __init__(self, call: Call, turn: int) -> None:
        self.call = call
        self.turn = turn
        self.results: list[int] = []
        self.replied: list[int] = []
        self.placed: list[int] = []
        self.new_id: str | None = None
        self.written: Call | None = None
        self.answered: bool | None = None

    @property
    def out(self) -> Call:
        """The call as the view writes it."""
        return self.written if self.written is not None else self.call


def ensure_tool_turn_invariants(
    messages: Sequence[object] | str,
    *,
    lane: Lane,
    prior_messages: Iterable[object] | None = None,
    chained: bool = False,
    dialect: Dialect | None = None,
) -> ToolTurnView:
    """Restore the tool-turn law on a provider-bound list (see the module docstring).

    ``messages``: Anthropic ``messages``, Chat ``messages``, Responses ``input`` or Gemini ``contents``
    (a string input to the last two has no tool turns and comes back as it is). ``prior_messages``:
    the run's inherited messages, by identity. ``chained``: Responses only — the request continues server-held state
    (``previous_response_id`` / ``conversation``), so a result whose call is not in the list answers
    a call the server holds and is kept. ``dialect``: the provider's variant of the lane's rules (``mistral``:
    Mistral's Chat Completions), as the client tells it; the view then fits that provider's id pattern.

    >>> view = ensure_tool_turn_invariants([{"role": "user", "content": "hi"}], lane="openai.chat_completions")
    >>> view.repairs
    ()
    """
    adapter = adapter_for(lane, dialect)
    items = listed(messages, lane=lane)
    if items is None:
        return ToolTurnView(messages=messages, repairs=())
    view = adapter.read(items)
    if _settled(view, adapter):
        return ToolTurnView(messages=messages, repairs=())
    prior = {id(m) for m in prior_messages} if prior_messages is not None else None
    reading = attributed(adapter, items, view, chained=chained)
    plan = plan_view(adapter, reading)
    return _write(adapter, reading.view, plan, items, prior)


def attributed(adapter: LaneAdapter, items: Sequence[object], view: View, *, chained: bool) -> Attribution:
    """The law's reading of ``items`` (``view``: the lane's first read of them), every clean turn it reaches in full."""
    reading = Attribution(adapter, view, chained=chained)
    full: set[int] = set()
    while reading.reached:
        # A clean turn a later unit reaches is read in full. Attribution reads a clean turn as it reads
        # the same turn in full, so the first pass finds every such turn and the second read is the last.
        full |= reading.reached
        reading = Attribution(adapter, adapter.read(items, full), chained=chained)
    return reading


def _settled(view: View, adapter: LaneAdapter) -> bool:
    """Whether the read leaves the law nothing to decide: the list is its own view.

    So it is when every turn was read clean, no result stands outside one, the lane marked and refused
    nothing, the API accepts every clean turn's call ids, and (where the API rejects a repeated id) no
    two clean turns share a call id: then no unit is attributed, reached or restored, as ``Attribution``
    would find.
    """
    if view.refused or view.marks:
        return False
    kinds = set(view.kinds)
    if TURN in kinds or RESULT in kinds:
        return False
    clean_ids = view.clean_ids
    if not adapter.fits_ids(clean_ids):
        return False
    return not adapter.unique_ids or len(set(clean_ids)) == len(clean_ids)


class Attribution:
    """The law's reading of one view, in one pass: each turn's calls, and each result to its nearest turn.

    Per turn (by unit index): its slots, what reading it restored (repeated calls left out, reused and
    refused ids derived, trailing blocks, the lane's marks: ``notes``), and whether that rewrites it
    (``rewritten``). Also the results that answer nothing (``orphans``, ``orphaned``).

    A ``Clean`` unit (a turn the lane read as clean, with its results) is carried as it is: its call ids
    take part in attribution and in the unique-id rule, and nothing is built for its calls. An id of its
    own the API refuses, a result that answers one of its calls later, or an id an earlier turn already
    used, reaches it: ``reached`` names it, and the caller reads the list again with that turn in full.
    """

    __slots__ = (
        "adapter",
        "carried",
        "notes",
        "orphaned",
        "orphans",
        "owner",
        "reached",
        "rewritten",
        "slots_of",
        "taken",
        "view",
    )

    def __init__(
        self,
        adapter: LaneAdapter,
        view: View,
        *,
        chained: bool,
        owner: Owner | None = None,
        taken: TakenIds | None = None,
    ) -> None:
        self.adapter = adapter
        self.view = view
        self.owner: Owner = {} if owner is None else owner
        """Per call id, its nearest call so far (given: the calls of a stream's earlier segments)."""
        self.taken = TakenIds() if taken is None else taken
        """The call ids of the view so far, derived ones included (given: a stream's earlier segments' too)."""
        self.carried: dict[CarriedCall, list[int]] = {}
        """The carried calls a result of this view answers, in the order first answered, with those results."""
        self.notes: dict[int, Notes] = {}
        """Per turn, what reading it restored."""
        self.slots_of: dict[int, list[Slot]] = {}
        """Per turn, in order, its calls (a repeated one left out)."""
        self.rewritten: set[int] = set()
        """The turns whose reading changed their items: a call left out or renamed, a block moved, a mark."""
        self.reached: set[int] = set()
        """The positions of the clean turns a later unit reaches: the list is read again with them in full."""
        self.orphans: dict[str, None] = {}
        """The ids of the results left out as orphans, once each, in order: a dict as an ordered set."""
        self.orphaned: list[int] = []
        """The units of the results left out as orphans."""
        self._attribute(chained=chained)

    def note(self, turn: int, form: RepairForm, call_id: str, kind: CallKind = "function") -> None:
        """Record that ``form`` was restored for ``call_id``, a call of ``kind``, on the turn at unit index ``turn``."""
        self.notes.setdefault(turn, {}).setdefault((form, kind), {})[call_id] = None

    def _attribute(self, *, chained: bool) -> None:
        """One pass: per turn, duplicate calls, trailing blocks and reused ids; each result to its nearest turn."""
        view, adapter = self.view, self.adapter
        units, ids, apart = view.units, view.ids, view.apart
        anywhere, unique, fits = adapter.results_anywhere, adapter.unique_ids, adapter.fits_ids
        refusing = not fits(view.clean_ids)  # the API refuses an id of some clean turn: each is asked
        owner, taken = self.owner, self.taken
        replied = -1  # the last assistant unit so far
        adjacent = -1  # the turn whose batch is still running (only results since it), else -1
        for index, kind in enumerate(view.kinds):
            match kind:
                case "result":
                    if index in apart:
                        adjacent = -1  # it opens a later message than the results before it: not in place
                    call_id = ids.get(index)
                    slot = None
                    if call_id is not None:
                        slot = owner.get(call_id)
                        if type(slot) is CarriedTurn:
                            slot = owner[call_id] = slot.call(call_id)  # later results reach the call opened
                    if type(slot) is Clean:
                        self.reached.add(slot.position)  # a later result answers one of its calls
                    elif type(slot) is CarriedCall:
                        self.carried.setdefault(slot, []).append(index)
                        if not anywhere and not adapter.interrupted(units[index]):
                            adjacent = -1  # delivered where it stands as text: no result any more
                    elif slot is not None:
                        assert isinstance(slot, Slot)  # noqa: S101 - the only other kind; narrows for the type checker
                        slot.results.append(index)
                        slot.replied.append(replied)
                        if slot.turn == adjacent:
                            slot.placed.append(index)
                        elif replied != slot.turn and not anywhere and not adapter.interrupted(units[index]):
                            adjacent = -1  # delivered where it stands as text: no result any more
                    elif not (chained and call_id is not None):
                        self.orphaned.append(index)
                        self.orphans[call_id or ""] = None
                case "turn":
                    turn = units[index]
                    assert isinstance(turn, Turn)  # noqa: S101 - the kind says so; narrows for the type checker
                    self._read_turn(index, turn, owner, taken)
                    replied = adjacent = index
                case "clean":
                    clean = units[index]
                    assert isinstance(clean, Clean)  # noqa: S101 - the kind says so; narrows for the type checker
                    if (refusing and not fits(clean.ids)) or (unique and not taken.isdisjoint(clean.ids)):
                        # the API refuses one of its ids, or an earlier turn used one: ``taken`` gains what
                        # the turn read in full gives it, so the next read reaches no other turn
                        self._derived(clean.ids, taken)
                        self.reached.add(clean.position)
                    elif unique:
                        taken.update(clean.ids)
                    owner.update(dict.fromkeys(clean.ids, clean))
                    replied = index
                    adjacent = -1
                case "reply":
                    replied = index
                    adjacent = -1
                case "other" | "part":
                    adjacent = -1
                case _:
                    raise unreachable(kind)

    def _derived(self, call_ids: Sequence[str], taken: TakenIds) -> list[tuple[RepairForm, str | None]] | None:
        """The unique-id rule on one turn's distinct call ids, in call order; ``taken`` gains what the turn uses.

        ``None``: every id is kept. Otherwise, per call, the form it is restored under and its derived id,
        or ``None`` for an id kept as it is; a derived id fits the API and is taken neither by the request so
        far nor by the turn's own calls. Where the API accepts a repeated id (Chat), only an id it refuses is
        derived.
        """
        fits, unique = self.adapter.fits_ids, self.adapter.unique_ids
        if (not unique or taken.isdisjoint(call_ids)) and fits(call_ids):
            taken.update(call_ids)
            return None
        brought = [call_id not in taken for call_id in call_ids]  # ids the request did not use before the turn
        taken.update(call_ids)  # no derived id takes one of the turn's own
        derived: list[tuple[RepairForm, str | None]] = []
        for call_id, new in zip(call_ids, brought, strict=True):
            form: RepairForm = "reused_id" if unique and not new else "invalid_id"
            new_id = None
            if form == "reused_id" or not fits((call_id,)):
                new_id = self.adapter.derive_id(call_id, taken)
                taken.add(new_id)
            derived.append((form, new_id))
        # an id the turn brought in but writes under a derived one is not used by the request
        taken.difference_update(
            call_id
            for call_id, new, (_, new_id) in zip(call_ids, brought, derived, strict=True)
            if new and new_id is not None
        )
        return derived

    def _read_turn(self, index: int, turn: Turn, owner: Owner, taken: TakenIds) -> None:
        """The turn's slots: repeated calls left out, reused ids derived from the ids before it, trailing noted."""
        adapter = self.adapter
        seen: set[str] = set()
        slots: list[Slot] = []
        for call in turn.calls:
            call_id = call.call_id
            if call_id in seen:
                self.note(index, "duplicate_call", call_id, adapter.call_kind(call.ref))
                continue
            seen.add(call_id)
            slot = Slot(call, index)
            owner[call_id] = slot
            slots.append(slot)
        renamed = False
        call_ids = [slot.call.call_id for slot in slots]
        if adapter.unique_ids or not adapter.fits_ids(call_ids):
            derived = self._derived(call_ids, taken)
            if derived is not None:
                renamed = True
                for slot, (form, new_id) in zip(slots, derived, strict=True):
                    if new_id is not None:
                        slot.new_id = new_id
                        slot.written = adapter.rename_call(slot.call, new_id)
                        self.note(index, form, slot.call.call_id, adapter.call_kind(slot.call.ref))
        if turn.trailing:
            for slot in slots:
                self.note(index, "trailing_text", slot.call.call_id, adapter.call_kind(slot.call.ref))
        for mark in turn.marks:
            self.note(index, mark.form, mark.call_id, mark.kind)
        if turn.trailing or turn.marks or renamed or len(slots) != len(turn.calls):
            self.rewritten.add(index)
        self.slots_of[index] = slots


@dataclass(frozen=True, kw_only=True, slots=True)
class _TurnPlan:
    """What one turn becomes, decided before anything is written.

    ``turn``: its unit index. ``calls``: when the turn is written anew (a call left out or renamed, a
    block moved, a mark), the calls it keeps as ``(read, written)`` wire objects in call order; ``None``:
    its items as they stand. ``replaced``: units of its results and what stands in each one's place
    (empty: left out). ``after``: a unit and what is written right after it — results-in-place lanes:
    the turn and its batch (results in place in recorded order, moved-up results, then closes, in call
    order); results-anywhere lanes: the last output right after the run and the closes; ``None``: nothing.
    ``repairs``: what was restored on the turn, in report order; ``decided``: the part of it the plan decided
    (the rest, reading did: ``Attribution.notes``).
    """

    turn: int
    calls: tuple[tuple[object, object], ...] | None
    replaced: tuple[tuple[int, tuple[_Piece, ...]], ...]
    after: tuple[int, tuple[_Piece, ...]] | None
    repairs: Reported
    decided: Notes


@dataclass(frozen=True, kw_only=True, slots=True)
class _Plan:
    """What the view becomes: each turn's plan in transcript order (turns left as they are have none), and the rest.

    ``left_out``: the units no turn owns that are left out (results that answer nothing, units the lane
    refused). ``orphans``: the ids of those results, once each, in order. ``marked``: what the lane refused
    or marked on units kept where they stand, per form and kind of call (those left out first).
    """

    turns: tuple[_TurnPlan, ...]
    left_out: tuple[int, ...]
    orphans: tuple[str, ...]
    marked: Reported


def plan_view(
    adapter: LaneAdapter, reading: Attribution, carried: Callable[[CarriedCall], Notes] | None = None
) -> _Plan:
    """Every turn's plan, then what no turn owns: all decided before anything is written.

    ``carried``: for a call carried from an earlier segment of a stream, where its turn's decisions are
    noted; each result this view holds for one is delivered where it stands.
    """
    view = reading.view
    turns = [
        plan
        for index, slots in reading.slots_of.items()
        if (plan := _plan_turn(adapter, reading, index, slots)) is not None
    ]
    if reading.carried:
        assert carried is not None  # noqa: S101 - only a stream carries calls, and it says where they are noted
        for call, results in reading.carried.items():
            replaced: dict[int, tuple[_Piece, ...]] = {}
            call.answered = _in_place(
                adapter,
                view,
                (call.call_id, call.written, call.name, call.kind),
                results,
                answered=call.answered,
                decided=carried(call),
                replaced=replaced,
            )
            turns.append(
                _TurnPlan(
                    turn=CARRIED, calls=None, replaced=tuple(replaced.items()), after=None, repairs=(), decided={}
                )
            )
    return _Plan(
        turns=tuple(turns),
        left_out=(*view.refused, *reading.orphaned),
        orphans=tuple(reading.orphans),
        marked=grouped_marks(_marks(view)),
    )


def _marks(view: View) -> list[Mark]:
    """What the lane refused (first) or marked on units kept where they stand, in order."""
    return [*view.refused.values(), *kept_marks(view)]


def kept_marks(view: View) -> list[Mark]:
    """What the lane marked on units kept where they stand, in order."""
    return [mark for found in view.marks.values() for mark in ((found,) if isinstance(found, Mark) else found)]


def grouped_marks(marks: Iterable[Mark]) -> Reported:
    """Marks as the view reports them: per form and kind of call, in the order first met, its ids."""
    marked: dict[tuple[RepairForm, CallKind], list[str]] = {}
    for mark in marks:
        marked.setdefault((mark.form, mark.kind), []).append(mark.call_id)
    return tuple((form, kind, tuple(ids)) for (form, kind), ids in marked.items())


def _plan_turn(adapter: LaneAdapter, reading: Attribution, index: int, slots: list[Slot]) -> _TurnPlan | None:
    """What the turn becomes: each call's kept result or its close, and where later results go.

    ``None``: the turn stays as it stands, and nothing was restored on it.
    """
    rewritten = index in reading.rewritten
    decided: Notes = {}
    replaced: dict[int, tuple[_Piece, ...]] = {}
    after: tuple[int, tuple[_Piece, ...]] | None = None
    dropped: set[int] = set()  # the slots (by place) left out: no result, and no honest close for the call
    decide = rewritten  # otherwise: unless each call is answered once, right after the turn
    if not decide:
        for slot in slots:
            if len(slot.results) != 1 or not slot.placed:
                decide = True
                break
    if decide:
        view = reading.view
        units, sources = view.units, view.sources
        anywhere = adapter.results_anywhere

        changed = rewritten
        placed: list[tuple[int, _Piece]] = []
        moved: list[_Piece] = []
        synthetic: list[_Piece] = []
        window_results: list[int] = []
        for place, slot in enumerate(slots):
            call, call_id = slot.out, slot.call.call_id
            call_kind = adapter.call_kind(slot.call.ref)
            window = [r for r, replied in zip(slot.results, slot.replied, strict=True) if replied == index]
            window_set = set(window)
            window_results.extend(window)
            answered = False
            if not window:
                close = adapter.synthesize(call)
                if close is None:
                    decided.setdefault(("unanswerable_call", call_kind), {})[call_id] = None
                    dropped.add(place)
                    rewritten = True
                else:
                    decided.setdefault(("missing_result", call_kind), {})[call_id] = None
                    synthetic.append((RESULT, close, None))
                changed = True
            else:
                kept = window
                if len(window) > 1:
                    decided.setdefault(("duplicate_result", call_kind), {})[call_id] = None
                    kept = [r for r in window if not adapter.interrupted(units[r])] or window[:1]
                    changed = True
                answered = not adapter.interrupted(units[kept[0]])
                primary = kept[0]
                piece: _Piece = (RESULT, units[primary], sources.get(primary))
                if len(kept) > 1:
                    piece = (RESULT, adapter.fold([units[r] for r in kept]), None)
                if slot.new_id is not None:
                    piece = (RESULT, adapter.rename_result(piece[1], slot.new_id), None)
                if anywhere:
                    for r in window:
                        if r != primary:
                            replaced[r] = ()
                    if piece[1] is not units[primary]:
                        replaced[primary] = (piece,)
                elif primary in slot.placed:
                    placed.append((primary, piece))
                    changed = changed or piece[1] is not units[primary]
                else:
                    decided.setdefault(("late_result", call_kind), {})[call_id] = None
                    moved.append(piece)
                    changed = True
            if len(slot.results) > len(window):
                later = [r for r in slot.results if r not in window_set]
                answered = _in_place(
                    adapter,
                    view,
                    (call_id, call.call_id, adapter.call_name(slot.call.ref), call_kind),
                    later,
                    answered=answered,
                    decided=decided,
                    replaced=replaced,
                )
            slot.answered = answered
        if anywhere:
            if synthetic:
                kinds, end = view.kinds, index
                while end + 1 < len(kinds) and kinds[end + 1] == RESULT:
                    end += 1
                after = (end, tuple(synthetic))
        elif changed:
            for r in window_results:
                replaced[r] = ()
            placed.sort(key=lambda entry: entry[0])
            after = (index, (*(piece for _, piece in placed), *moved, *synthetic))
    reported = turn_reported(reading.notes.get(index), decided)
    if not rewritten and not replaced and after is None and not reported:
        return None
    calls = (
        tuple((slot.call.ref, slot.out.ref) for place, slot in enumerate(slots) if place not in dropped)
        if rewritten
        else None
    )
    return _TurnPlan(
        turn=index, calls=calls, replaced=tuple(replaced.items()), after=after, repairs=reported, decided=decided
    )


def _in_place(
    adapter: LaneAdapter,
    view: View,
    call: tuple[str, str, str, CallKind],
    results: Sequence[int],
    *,
    answered: bool,
    decided: Notes,
    replaced: dict[int, tuple[_Piece, ...]],
) -> bool:
    """The call's ``results`` recorded after its window, each delivered where it stands; whether it is then answered.

    ``call``: its id as read (reports name it), its id as written, its ``call_name`` and its kind;
    ``answered``: whether a result the model saw answers the call before them. An interrupted close there is
    left out; any other result becomes what ``deliver`` writes (iii).
    """
    units, sources = view.units, view.sources
    call_id, written, name, call_kind = call
    for r in results:
        form: RepairForm = "duplicate_result_in_place" if answered else "late_result_in_place"
        decided.setdefault((form, call_kind), {})[call_id] = None
        if adapter.interrupted(units[r]):
            replaced[r] = ()
            continue
        kind, unit = adapter.deliver(units[r], written, name, second=answered)
        replaced[r] = ((kind, unit, sources.get(r) if kind == PART else None),)
        answered = True
    return answered


def turn_reported(read: Notes | None, decided: Notes) -> Reported:
    """A turn's repairs in report order: per form (``_TURN_FORM_ORDER``) and kind of call, its ids.

    The ids reading restored come first, then those the decision did.
    """
    if not decided:
        if read is None:
            return ()
        notes = read
    elif read is None:
        notes = decided
    else:
        notes = {key: {**read.get(key, {}), **decided.get(key, {})} for key in {**read, **decided}}
    ranked = sorted((key for key in notes if key in _REPORT_RANK), key=_REPORT_RANK.__getitem__)
    return tuple((form, kind, tuple(notes[form, kind])) for form, kind in ranked)


def _write(
    adapter: LaneAdapter, view: View, plan: _Plan, messages: Sequence[object], prior: set[int] | None
) -> ToolTurnView:
    """The repairs in report order, and the wire list the plan gives (``messages`` itself when there are none).

    Reads the plan only: nothing here decides what a turn becomes.
    """
    turns: list[tuple[Reported, bool]] = []
    for turn_plan in plan.turns:
        if not turn_plan.repairs:
            continue
        turn = view.units[turn_plan.turn]
        before = (
            prior is not None
            and isinstance(turn, Turn)
            and any(id(item) in prior for item in messages[turn.position : turn.position + len(turn.items)])
        )
        turns.append((turn_plan.repairs, before))
    repairs = repairs_in_order(turns, plan.orphans, plan.marked)
    if not repairs:
        return ToolTurnView(messages=messages, repairs=())
    placed = _Placed(plan)
    wire: list[object] = []
    start = 0
    for first, last in _untouched(view, placed):
        wire.extend(adapter.write(_emit(adapter, view, placed, messages, start=start, stop=first, more=True)))
        wire.extend(messages[_clean_at(view, first).position : _clean_at(view, last).position])
        start = last
    wire.extend(adapter.write(_emit(adapter, view, placed, messages, start=start, stop=len(view.kinds), more=False)))
    return ToolTurnView(messages=wire, repairs=repairs)


_PER_UNIT: Final = frozenset({TURN, RESULT, PART})
"""The kinds of unit whose wire items the lane's ``write`` makes: never copied as they stand (``_untouched``)."""


def _untouched(view: View, placed: _Placed) -> Iterator[tuple[int, int]]:
    """Stretches of the view written exactly as they stand, as ``(first, last)`` unit indices: both ``Clean``.

    The units from ``first`` up to (not with) ``last`` are whole wire items the plan leaves alone (items, replies
    and clean turns: no piece placed at or after one, no mark, nothing refused), so they are written as the wire
    items from ``first``'s position up to ``last``'s, and each stretch starts and ends where an answer starts:
    where every lane's ``write`` starts a new message (so a stream's segments are cut, ``_law_stream``).
    """
    kinds = view.kinds
    cleans = list(compress(count(), map(CLEAN.__eq__, kinds)))
    if len(cleans) < 2:  # a stretch runs from one clean turn to another
        return
    per_unit = set(compress(count(), map(_PER_UNIT.__contains__, kinds)))
    per_unit.update(placed.at, placed.after, placed.written, view.marks, view.refused)
    bounds = [-1, *sorted(per_unit), len(kinds)]
    for before, after in pairwise(bounds):
        low, high = bisect_right(cleans, before), bisect_left(cleans, after)
        if high - low >= 2:  # two clean turns at least: the stretch holds the first
            yield cleans[low], cleans[high - 1]


def _clean_at(view: View, index: int) -> Clean:
    clean = view.units[index]
    assert isinstance(clean, Clean)  # noqa: S101 - ``_untouched`` gives clean units only; narrows for the type checker
    return clean


def repairs_in_order(
    turns: Iterable[tuple[Reported, bool]], orphans: Sequence[str], marked: Reported
) -> tuple[ToolTurnRepair, ...]:
    """The view's repairs in report order: each turn's (with whether it was inherited), the orphans, the marks."""
    repairs = [
        ToolTurnRepair(form=form, tool_call_ids=ids, before_run=before and form == "missing_result", call_kind=kind)
        for reported, before in turns
        for form, kind, ids in reported
    ]
    if orphans:
        repairs.append(ToolTurnRepair(form="orphan_result", tool_call_ids=tuple(orphans)))
    repairs.extend(ToolTurnRepair(form=form, tool_call_ids=ids, call_kind=kind) for form, kind, ids in marked)
    return tuple(repairs)


class _Placed:
    """The plan by unit index: what stands in a unit's place (``at``), what is written after it, turns written anew."""

    __slots__ = ("after", "at", "written")

    def __init__(self, plan: _Plan) -> None:
        self.at: dict[int, tuple[_Piece, ...]] = dict.fromkeys(plan.left_out, ())
        self.after: dict[int, tuple[_Piece, ...]] = {}
        self.written: dict[int, tuple[tuple[object, object], ...]] = {}
        for turn_plan in plan.turns:
            self.at.update(turn_plan.replaced)
            if turn_plan.after is not None:
                self.after[turn_plan.after[0]] = turn_plan.after[1]
            if turn_plan.calls is not None:
                self.written[turn_plan.turn] = turn_plan.calls


def emit_view(adapter: LaneAdapter, view: View, plan: _Plan, messages: Sequence[object]) -> Emitted:
    """Every unit in order: replaced where the plan says, each followed by what the plan writes after it."""
    return _emit(adapter, view, _Placed(plan), messages, start=0, stop=len(view.kinds), more=False)


def _emit(
    adapter: LaneAdapter,
    view: View,
    placed: _Placed,
    messages: Sequence[object],
    *,
    start: int,
    stop: int,
    more: bool,
) -> Emitted:
    """``emit_view`` of the units from ``start`` up to ``stop``; ``more``: the view goes on after them."""
    units, sources, kinds = view.units, view.sources, view.kinds
    at, after, written = placed.at, placed.after, placed.written
    out = Emitted(more=more)
    items, item_kinds, item_sources = out.items, out.kinds, out.sources

    def whole(wire: Sequence[object]) -> None:
        """Whole wire items, as they are written."""
        items.extend(wire)
        item_kinds.extend([OTHER] * len(wire))
        item_sources.extend([None] * len(wire))

    for index in range(start, stop):
        kind = kinds[index]
        pieces = at.get(index) if at else None
        if pieces is not None:
            if not pieces and kind in (OTHER, REPLY):
                out.breaks.add(len(items))
            for piece_kind, item, source in pieces:
                items.append(item)
                item_kinds.append(piece_kind)
                item_sources.append(source)
        else:
            match kind:
                case "other" | "reply":
                    items.append(units[index])
                    item_kinds.append(OTHER)
                    item_sources.append(None)
                case "clean":
                    clean = units[index]
                    assert isinstance(clean, Clean)  # noqa: S101 - the kind says so; narrows for the type checker
                    whole(messages[clean.position : clean.end])
                case "turn":
                    turn = units[index]
                    assert isinstance(turn, Turn)  # noqa: S101 - the kind says so; narrows for the type checker
                    calls = written.get(index)
                    if calls is None:
                        whole(turn.items)
                    else:
                        whole(adapter.write_turn(turn.items, turn.position, calls, trailing=turn.trailing))
                case "result" | "part":
                    items.append(units[index])
                    item_kinds.append(kind)
                    item_sources.append(sources.get(index))
                case _:
                    raise unreachable(kind)
        if index in after:
            for piece_kind, item, source in after[index]:
                items.append(item)
                item_kinds.append(piece_kind)
                item_sources.append(source)
    return out
