"""The conversation state: what the request path remembers of each conversation, for telemetry only.

Role: tells the recording half, for one request, which of its repairs were already made on an
earlier request of the same conversation (repeats) and whether the part of the conversation the
model already answered changed since the previous request (a prefix change). It keeps digests
(``compose.message_digest``, through ``_digests``), never content, and it never decides what is
sent: the request is decided before this module is asked anything.

Which conversation a request belongs to:

- its *opening*: the lane and the digest of the transcript's first message that is not a system /
  developer message (Anthropic keeps its system prompt apart: its first message). Requests with
  the same opening are candidates; a conversation whose opening message was edited is a new one.
- among the candidates' remembered transcripts, the one sharing the longest run of messages with
  this one from the opening on (the most recent on a tie). When this transcript extends it (its
  messages from the opening on start with the remembered ones: an append-only session), that
  branch moves on to this request; otherwise (a message edited or left out, or another run that
  opened the same way) this request starts a new branch, compared with that one and carrying its
  reported repairs. An opening keeps at most ``BRANCHES`` branches, the least recently used
  replaced; two runs opening alike are told apart only as long as each extends its own branch.
- Responses requests chained to server-held state (``previous_response_id`` / ``conversation``)
  carry only their new items: they are not followed (every repair of one is new, no prefix change).

What a branch keeps: the digest of the request's *head* (the top-level pieces a provider reads
ahead of the messages: Anthropic ``system`` and ``tools``, Chat ``tools``, Responses
``instructions`` and ``tools``, google-genai ``config.system_instruction`` and ``config.tools``),
the digests of the caller's transcript and of the law's view (with framework fields stripped: what
repair mode sends), the position of the last message the model
produced in each (``compose.is_model_output``), and the keys of the repairs already reported (at
most ``MAX_REPORTED``; past that, only the latest request's).

Repeats: a repair's key is its form, its tool call ids, the digest of the caller's message that
emits its first call id (its turn; searched in transcript order, so the repairs of one request
find their turns in order), and its rank among the request's repairs with the same three. A
repair repeats when its key was reported on an earlier request of the conversation. Where each
call id of a transcript is emitted is remembered by its messages' digests (``REMEMBERED``
transcripts a lane, no message object held): a transcript whose leading messages have a
remembered one's digests, resent or rebuilt as new objects, reads only the messages after them;
a message object edited in place after it was read keeps its digest (``_digests``), and so the
call ids read then.

Prefix changes (``compare``): of the previous request, the part the model already answered is its
head and its view's messages ahead of its last model output; once this request carries the
model's answer to the previous one (a model output after the end of the previous caller
transcript), all of the previous view. Where this request's head or view differs from that part:
a prefix change at the first differing view position (``-1``: the head). Its cause is ``caller``
when the caller's own head or transcript differs from the previous one in the same part (the
caller's messages ahead of its last model output, or all of them once answered), ``repair`` when
the caller's transcript is unchanged there and only the law's view differs.

Bounded and shared: ``SLOTS`` branches in all (least recently used first out), behind one lock;
the work under it is comparisons of byte strings at C speed. A new owner (the instrumentation's
options) starts it empty.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Final

from otel_toolturn import compose
from otel_toolturn._law import ToolTurnRepair
from otel_toolturn._vocab import Lane
from otel_toolturn.instrument.names import PrefixChangeCause
from otel_toolturn.lanes import adapter_for

SLOTS: Final = 256
"""How many conversation branches are remembered in all."""

BRANCHES: Final = 4
"""How many branches one opening keeps (concurrent runs that open alike, or a caller's edits)."""

MAX_REPORTED: Final = 1024
"""How many repair keys a branch keeps; past that, only the latest request's are kept."""

WIDTH: Final = 16
"""Bytes of one message digest (``compose.message_digest``)."""

REMEMBERED: Final = 8
"""How many caller transcripts of a lane keep their messages' call ids (``_Emitted``)."""

RepairKey = tuple[str, tuple[str, ...], bytes, int]
"""A repair's identity in its conversation: form, tool call ids, its turn's digest, its rank."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Sighting:
    """What one request shows of its conversation: digests and positions, no content."""

    lane: Lane
    head: bytes
    caller: bytes
    """The caller's transcript: its messages' digests, joined (``WIDTH`` bytes each)."""
    caller_last_output: int
    """The position of the caller's last message the model produced (-1: none)."""
    opening: int
    """The position of the caller's first message that is not a system / developer message."""
    view: bytes
    """The law's view, stripped: its messages' digests, joined."""
    view_last_output: int
    keys: tuple[RepairKey, ...]
    """One per repair of the request, in order."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PrefixChange:
    """The answered part of the conversation changed: where first (view position, -1 the head) and why."""

    position: int
    cause: PrefixChangeCause


@dataclass(frozen=True, kw_only=True, slots=True)
class Findings:
    """What the conversation state tells about one request."""

    repeats: tuple[bool, ...]
    """Per repair of the request, in order: whether an earlier request of the conversation made it."""
    prefix_change: PrefixChange | None


def head_digest(request: Mapping[str, object], lane: Lane) -> bytes:
    """The digest of the request's head: its settings ahead of the messages (``LaneAdapter.head_settings``).

    Read by SDK name (``compose.request_field``: google-genai carries them in ``config``).
    """
    settings = adapter_for(lane).head_settings
    return compose.message_digest({key: compose.request_field(request, key, lane=lane) for key in settings})


def last_output(items: Sequence[object], lane: Lane) -> int:
    """The position of the last item the model produced (-1: none), read from the end."""
    for index in range(len(items) - 1, -1, -1):
        if compose.is_model_output(items[index], lane=lane):
            return index
    return -1


def opening(items: Sequence[object], lane: Lane) -> int:
    """The position of the first item that is not a system / developer message (0 when there is none)."""
    if adapter_for(lane).instructions_in_transcript:
        for index, item in enumerate(items):
            if not compose.is_instruction(item):
                return index
    return 0


def repair_keys(
    repairs: Sequence[ToolTurnRepair], messages: Sequence[object], digests: Sequence[bytes], lane: Lane
) -> tuple[RepairKey, ...]:
    """Each repair's key (see the module docstring); ``digests``: those of the caller's ``messages``.

    A repair's turn is the first message, from the previous repair's turn on, that emits its first
    call id (``_Emitted``: the messages of a remembered transcript's digests are not read again).
    """
    keys: list[RepairKey] = []
    ranks: dict[tuple[str, tuple[str, ...], bytes], int] = {}
    emitted = _Emitted.of(messages, digests, lane) if repairs else None
    cursor = 0
    for repair in repairs:
        turn = b""
        if repair.tool_call_ids and emitted is not None:
            at = emitted.first(repair.tool_call_ids[0], cursor)
            if at >= 0:
                turn, cursor = digests[at], at
        base = (repair.form, repair.tool_call_ids, turn)
        rank = ranks.get(base, 0)
        ranks[base] = rank + 1
        keys.append((*base, rank))
    return tuple(keys)


class _Emitted:
    """Where each call id of one caller transcript is emitted (``compose.emitted_call_ids``): its messages' positions.

    An agent resends its transcript on every request, one round more each time, as the same message
    objects or rebuilt as new ones (a framework). The last ``REMEMBERED`` transcripts of a lane read
    here are kept as their messages' digests (never the messages) and where each call id is emitted.
    A transcript whose leading messages have the digests of a remembered one, in order, takes those
    positions and reads only the messages after them, and replaces it: equal digests are equal
    canonical JSON, and so the same call ids.
    """

    __slots__ = ("at", "digests")

    def __init__(self, digests: tuple[bytes, ...], at: dict[str, tuple[int, ...]]) -> None:
        self.digests = digests
        self.at = at
        """Per call id, the positions of the messages that emit it, ascending."""

    @classmethod
    def of(cls, messages: Sequence[object], digests: Sequence[bytes], lane: Lane) -> _Emitted:
        """Where the call ids of ``messages`` (``digests``: theirs) are emitted, from the longest remembered start."""
        own = tuple(digests)
        with _REMEMBERING:
            recent = _REMEMBERED.setdefault(lane, [])
            taken: _Emitted | None = None
            for known in recent:
                size = len(known.digests)
                if size <= len(own) and (taken is None or size > len(taken.digests)) and own[:size] == known.digests:
                    taken = known
        start = 0 if taken is None else len(taken.digests)
        at = {} if taken is None else dict(taken.at)
        for position, ids in enumerate(map(adapter_for(lane).emitted_call_ids, islice(messages, start, None)), start):
            for call_id in ids:
                at[call_id] = (*at.get(call_id, ()), position)
        made = cls(own, at)
        with _REMEMBERING:
            if taken is not None and taken in recent:
                recent.remove(taken)  # its conversation moved on to this transcript
            recent.append(made)
            del recent[:-REMEMBERED]
        return made

    def first(self, call_id: str, start: int) -> int:
        """The position of the first message from ``start`` on that emits ``call_id`` (-1: none)."""
        positions = self.at.get(call_id, ())
        found = bisect_left(positions, start)
        return positions[found] if found < len(positions) else -1


_REMEMBERED: dict[Lane, list[_Emitted]] = {}
"""The transcripts read by ``_Emitted`` of each lane, least recent first."""

_REMEMBERING: Final = threading.Lock()
"""Held while ``_REMEMBERED`` is searched or changed (never while a message is read)."""


def first_difference(before: bytes, after: bytes, stop: int) -> int | None:
    """The first of the ``stop`` leading digests where ``after`` differs from ``before`` (``None``: none)."""
    end = stop * WIDTH
    if before[:end] == after[:end]:
        return None
    for index in range(stop):
        at = index * WIDTH
        if before[at : at + WIDTH] != after[at : at + WIDTH]:  # a shorter ``after`` differs where it ends
            return index
    return None


def _shared(before: bytes, after: bytes) -> int:
    """How many leading digests ``before`` and ``after`` share."""
    if after.startswith(before):
        return len(before) // WIDTH
    low, high = 0, min(len(before), len(after)) // WIDTH
    while low < high:
        middle = (low + high + 1) // 2
        if before[: middle * WIDTH] == after[: middle * WIDTH]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass(frozen=True, kw_only=True, slots=True)
class Previous:
    """What a branch remembers of its latest request (the other side of ``compare``)."""

    head: bytes
    caller: bytes
    caller_last_output: int
    view: bytes
    view_last_output: int


def compare(previous: Previous, current: Sighting) -> PrefixChange | None:
    """Whether ``current`` changed the part of the conversation ``previous`` had answered (module docstring)."""
    caller_total = len(previous.caller) // WIDTH
    if current.caller_last_output >= caller_total:  # the model's answer to the previous request is carried
        view_stop, caller_stop = len(previous.view) // WIDTH, caller_total
    else:
        view_stop, caller_stop = previous.view_last_output, previous.caller_last_output
        if view_stop < 0:
            return None
    if previous.head != current.head:
        return PrefixChange(position=-1, cause="caller")
    position = first_difference(previous.view, current.view, view_stop)
    if position is None:
        return None
    changed = first_difference(previous.caller, current.caller, max(caller_stop, 0)) is not None
    return PrefixChange(position=position, cause="caller" if changed else "repair")


class _Branch:
    """One line of a conversation: its latest request and the repairs already reported."""

    __slots__ = ("body", "key", "previous", "reported")

    def __init__(self, key: tuple[Lane, bytes], sighting: Sighting, reported: set[RepairKey]) -> None:
        self.key = key
        self.reported = reported
        self.previous = _previous(sighting)
        self.body = sighting.caller[sighting.opening * WIDTH :]

    def move_on(self, sighting: Sighting) -> None:
        self.previous = _previous(sighting)
        self.body = sighting.caller[sighting.opening * WIDTH :]


def _previous(sighting: Sighting) -> Previous:
    return Previous(
        head=sighting.head,
        caller=sighting.caller,
        caller_last_output=sighting.caller_last_output,
        view=sighting.view,
        view_last_output=sighting.view_last_output,
    )


class Conversations:
    """The conversation branches of recent requests (see the module docstring); thread-safe, bounded."""

    def __init__(self, slots: int = SLOTS, branches: int = BRANCHES) -> None:
        self._slots = slots
        self._branches = branches
        self._recent: OrderedDict[_Branch, None] = OrderedDict()
        self._by_opening: dict[tuple[Lane, bytes], list[_Branch]] = {}
        self._owner: object = None
        self._lock = threading.Lock()

    def follow(self, sighting: Sighting, *, owner: object = None) -> Findings:
        """The findings of the request ``sighting`` shows; its conversation moves on to it (module docstring)."""
        if not sighting.caller:
            return Findings(repeats=(False,) * len(sighting.keys), prefix_change=None)
        at = sighting.opening * WIDTH
        key = (sighting.lane, sighting.caller[at : at + WIDTH])
        body = sighting.caller[at:]
        with self._lock:
            if owner is not self._owner:
                self._recent.clear()
                self._by_opening.clear()
                self._owner = owner
            candidates = self._by_opening.setdefault(key, [])
            best: _Branch | None = None
            best_shared = -1
            for branch in reversed(candidates):  # most recent first: it wins a tie
                shared = _shared(branch.body, body)
                if shared > best_shared:
                    best, best_shared = branch, shared
            if best is None:
                change = None
                reported: set[RepairKey] = set()
            else:
                change = compare(best.previous, sighting)
                reported = best.reported
            repeats = tuple(k in reported for k in sighting.keys)
            if len(reported) + len(sighting.keys) > MAX_REPORTED:
                reported = set()
            if best is not None and body.startswith(best.body):
                best.move_on(sighting)
                best.reported = reported | set(sighting.keys)
                candidates.remove(best)
                candidates.append(best)
                self._recent.move_to_end(best)
            else:
                branch = _Branch(key, sighting, reported | set(sighting.keys))
                candidates.append(branch)
                self._recent[branch] = None
                if len(candidates) > self._branches:
                    self._forget(candidates[0])
                while len(self._recent) > self._slots:
                    self._forget(next(iter(self._recent)))
        return Findings(repeats=repeats, prefix_change=change)

    def _forget(self, branch: _Branch) -> None:
        """Drop ``branch`` (the lock is held)."""
        self._recent.pop(branch, None)
        candidates = self._by_opening.get(branch.key)
        if candidates is not None:
            candidates.remove(branch)
            if not candidates:
                del self._by_opening[branch.key]
