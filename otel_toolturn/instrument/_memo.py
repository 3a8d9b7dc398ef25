"""The transcript memo: the request path's work on a transcript, resumed where the last call left it.

Role: an agent resends its transcript on every turn, one or two messages more each time: the same
message objects, or (a framework that rebuilds its dicts from its own message types) new objects
with the same values. For the last few transcripts it saw, the memo remembers what the request
hook worked out about them: the lane's survey paused at their end (``SurveyState``), which
messages the strip rule changes and into what, the system-prompt pieces among them, and (once a
receipt asked) their digests for the prefix fingerprint (``_digests``). A new transcript whose
first messages match a remembered one costs one comparison of those messages with the snapshots
taken when they were read (at C speed) plus the rules run on its new messages only.

A transcript seen for the first time takes the pure path (``ensure_tool_turn_invariants``, the
strip rule on the view, the pieces read from the request); the memo only notes its message
objects (no snapshot: a transcript sent once costs next to nothing more). When it is resent,
longer or not, every message is read anew, as it stands then: the snapshots are taken, the rules'
findings worked out in full and the digests made; they are extended from then on. A memo belongs
to one owner (the instrumentation's options): a new owner starts it empty.

The answers are the pure functions' on the same input, never an estimate:

- the law's view is ``_law.restore_surveyed`` given the survey resumed over the new messages,
  which is the lane's survey of the whole list (``SurveyState``), so it is exactly
  ``ensure_tool_turn_invariants`` (same repairs; the caller's very objects where the law keeps
  them). A transcript whose survey asked for the whole-list reading is never resumed from;
- the strip rule (``compose.strip_framework_fields``) runs on the new messages and on the items
  the law wrote; each remembered message it changed is replaced by the stripped copy made when it
  was first read (equal to a fresh one), or, where the caller now sends another object equal to
  it, by a copy made from that object;
- the system-prompt pieces (``compose.transcript_system_pieces``) are read from the new messages
  and appended to the remembered ones. They are read from the caller's transcript, not from the
  repaired view: the law never drops, moves among themselves, changes or makes ``system`` /
  ``developer`` messages, so the texts and their order are the same (a piece's ``source`` names
  its position in the caller's list);
- the prefix fingerprint (``compose.prefix_fingerprint``) takes the remembered messages' digests
  and digests the new ones; on the law's view, the stretches it carries take the transcript's
  digests by position, and of the items it wrote only those it made are digested.

Every finding above depends on the messages' values only, so it holds for any transcript whose
messages equal the ones read. What proves a remembered message matched: the message at its
position compares equal (``==``) to the snapshot taken when it was read, a shallow copy of it in
which every list and dict value is itself copied one level. A resent object is compared with its
own snapshot, so a field set, added or removed in place, and an item appended to, removed from or
replaced in a content list, a ``tool_calls`` list or any other list or dict field, is noticed, and
the transcript is read as new; a rebuilt object is compared value for value.

What it does not notice: a change two levels down, inside an item of such a list (a content
block's or a tool call's own field set in place, e.g. ``block["id"] = ...``), or inside a nested
dict of a nested dict, as the snapshot shares those items; and a value replaced by another that
compares equal to it (``==``, e.g. ``True`` and ``1``). The prefix fingerprint keeps the digests of
the first reading for such a message (see ``_digests``).

Only plain transcripts are remembered: a list or tuple of ``dict`` messages (its new messages are
checked; a remembered one matches only what equals a dict). Anything else (typed SDK objects,
other sequences, a string input) takes the pure path, as does any transcript whose remembered
part fails the check. Nothing here raises on odd input: a failure inside the memo (a comparison
that raises, say) hands the call to the pure path, which raises what the law raises.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, cast

from otel_toolturn import _law, compose
from otel_toolturn._law import ToolTurnView
from otel_toolturn._view import Survey
from otel_toolturn._vocab import Lane
from otel_toolturn.compose import message_digest
from otel_toolturn.instrument._digests import Seen, fingerprint_from, remembered
from otel_toolturn.lanes import adapter_for

if TYPE_CHECKING:
    from otel_toolturn.compose import SystemPromptPiece

SLOTS: Final = 16
"""How many transcripts are remembered (about one per conversation running at once)."""

_TRANSCRIPT_KEY: Final[dict[Lane, str]] = {
    "anthropic.messages": "messages",
    "openai.chat_completions": "messages",
    "openai.responses": "input",
}


_COPIED: Final = (list, dict)


def _snapshot(message: dict[object, object]) -> dict[object, object]:
    """The message as it stands: a shallow copy whose list and dict values are copied one level."""
    copy = message.copy()
    for key, value in message.items():
        if type(value) in _COPIED:
            copy[key] = value.copy()  # type: ignore[attr-defined]
    return copy


class Transcript:
    """What the memo knows of one transcript (see the module docstring); shared, never changed once made."""

    __slots__ = (
        "_base",
        "_seen",
        "lane",
        "messages",
        "pieces",
        "snapshots",
        "state",
        "stripped",
        "survey",
        "surveyed",
    )

    def __init__(
        self,
        *,
        lane: Lane,
        messages: tuple[object, ...],
        snapshots: list[object] | None,
        surveyed: bool,
        survey: Survey | None,
        stripped: dict[int, object],
        pieces: tuple[SystemPromptPiece, ...] | None,
        base: Seen | None,
    ) -> None:
        self.lane = lane
        self.messages = messages
        self.snapshots = snapshots
        """Each message as the rules read it (``_snapshot``); ``None`` on a first sighting (never resumed from)."""
        self.surveyed = surveyed
        """Whether the rules' findings below were worked out (not on a first sighting: the pure path ran)."""
        self.survey = survey
        self.state = survey.state if survey is not None else None
        """The survey paused at (or, Responses, just before) the end; ``None``: surveyed anew when resent."""
        self.stripped = stripped
        """Position -> the message with its framework fields dropped, for each message that has any."""
        self.pieces = pieces
        """The transcript's system-prompt pieces (Chat, Responses); ``None``: to be read from the request."""
        self._base = base
        self._seen: Seen | None = None

    def view(self, messages: Sequence[object], *, chained: bool) -> ToolTurnView:
        """``ensure_tool_turn_invariants(messages, lane=..., chained=chained)`` (``messages``: this transcript)."""
        if not self.surveyed:
            return _law.ensure_tool_turn_invariants(messages, lane=self.lane, chained=chained)
        return _law.restore_surveyed(adapter_for(self.lane), messages, self.survey, chained=chained)

    def strip(self, messages: Sequence[object], view: ToolTurnView) -> Sequence[object]:
        """``compose.strip_framework_fields(view.messages)``: the strip rule on the law's view of ``messages``."""
        sent = view.messages
        assert not isinstance(sent, str)  # noqa: S101 - a transcript's view is a list; narrows for the type checker
        if not self.surveyed:
            return compose.strip_framework_fields(sent)
        if sent is messages:
            if not self.stripped:
                return messages
            out = list(messages)
            for position, stripped in self.stripped.items():
                out[position] = stripped
            return out
        if self.survey is not None:
            try:
                return _strip_view(sent, messages, self.survey.spans(len(messages)), self.stripped)
            except Exception:  # noqa: BLE001, S110 - not the splice it should be: the rule on the whole view decides
                pass
        return compose.strip_framework_fields(sent)

    def prefix_fingerprint(self, sent: Sequence[object], messages: Sequence[object], view: ToolTurnView) -> str:
        """``compose.prefix_fingerprint`` of every message of ``sent`` but the last.

        ``sent``: ``messages`` (this transcript), the law's ``view`` of it, or that view stripped.
        """
        seen = self._seen
        if seen is None:
            seen = self._seen = remembered(self.messages, self._base)
            self._base = None
        if sent is messages:
            return fingerprint_from(seen)
        if sent is view.messages and self.survey is not None:
            try:
                digests = _view_digests(sent, messages, self.survey.spans(len(messages)), seen)
            except Exception:  # noqa: BLE001, S110 - not the splice it should be: the digests by identity decide
                pass
            else:
                return compose.prefix_fingerprint(digests[: len(sent) - 1])
        return fingerprint_from(seen, sent)

    def seen(self) -> Seen | None:
        """The digests, when a receipt has asked for them."""
        return self._seen


def _carried(
    sent: Sequence[object], messages: Sequence[object], spans: list[tuple[int, int]]
) -> list[tuple[int, int, int]]:
    """Where the law's view ``sent`` carries ``messages`` as they stand: ``(start, stop, at)`` per stretch.

    The view is ``messages`` with each span replaced by what the law wrote for it, so the stretches
    between spans stand in the view in order (``messages[start:stop]`` at ``sent[at:]``) and the
    gaps between them are the written pieces. A written piece ends where the message after its
    span stands: that message is carried, so the law never wrote it.
    """
    total, length = len(messages), len(sent)
    carried: list[tuple[int, int, int]] = []
    at = 0
    after = 0
    for start, stop in spans:
        carried.append((after, start, at))
        at += start - after
        end = at
        if stop == total:
            end = length
        else:
            following = messages[stop]
            while sent[end] is not following:
                end += 1
        at, after = end, stop
    carried.append((after, total, at))
    if at + total - after != length:
        raise ValueError("the view is not the transcript spliced at its spans")
    return carried


def _written(carried: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The view's written pieces, as ``[start, stop)`` positions in the view, between the carried stretches."""
    return [(at + stop - start, following) for (start, stop, at), (_, _, following) in itertools.pairwise(carried)]


def _strip_view(
    sent: Sequence[object], messages: Sequence[object], spans: list[tuple[int, int]], stripped: dict[int, object]
) -> Sequence[object]:
    """The strip rule on the law's view of ``messages``: carried messages by ``stripped``, written items by the rule."""
    carried = _carried(sent, messages, spans)
    changes: dict[int, object] = {}
    for begin, end in _written(carried):
        piece = sent[begin:end]
        kept = compose.strip_framework_fields(piece)
        if kept is not piece:
            changes.update((begin + offset, item) for offset, item in enumerate(kept) if item is not piece[offset])
    for position, item in stripped.items():
        for start, stop, at in carried:
            if start <= position < stop:
                changes[at + position - start] = item
    if not changes:
        return sent
    out = list(sent)
    for index, item in changes.items():
        out[index] = item
    return out


def _view_digests(
    sent: Sequence[object], messages: Sequence[object], spans: list[tuple[int, int]], seen: Seen
) -> list[bytes]:
    """The digest of each item of the law's view ``sent``: carried stretches' from ``seen``, written items'.

    A written item that is one of the spans' own messages (the law keeps a message it moves or
    leaves as it stands) takes that message's digest; an item the law made is digested.
    """
    carried = _carried(sent, messages, spans)
    inside = {id(messages[p]): seen.digests[p] for start, stop in spans for p in range(start, stop)}
    digests: list[bytes] = []
    written = _written(carried)
    for index, (start, stop, _) in enumerate(carried):
        digests += seen.digests[start:stop]
        if index < len(written):
            begin, end = written[index]
            for item in sent[begin:end]:
                known = inside.get(id(item))
                digests.append(known if known is not None else message_digest(item))
    return digests


class TranscriptMemo:
    """The last ``slots`` transcripts seen, each extended by the next call that resends it; thread-safe."""

    def __init__(self, slots: int = SLOTS) -> None:
        self._slots = slots
        self._recent: list[Transcript] = []
        self._owner: object = None
        self._lock = threading.Lock()

    def recall(self, messages: object, *, lane: Lane, owner: object = None) -> Transcript | None:
        """What the memo knows of ``messages`` once it has read their new part; ``None``: take the pure path.

        ``owner``: whose calls these are (the instrumentation's options); a new owner starts the
        memo empty, so each ``instrument()`` begins with nothing remembered.
        """
        try:
            return self._recall(messages, lane, owner)
        except Exception:  # noqa: BLE001 - the pure path decides, and raises what the law raises
            return None

    def _recall(self, messages: object, lane: Lane, owner: object) -> Transcript | None:
        kind = type(messages)
        if kind is not list and kind is not tuple:
            return None
        assert isinstance(messages, (list, tuple))  # noqa: S101 - narrows for the type checker
        total = len(messages)
        if not total:
            return None
        if owner is not self._owner:
            with self._lock:
                self._recent, self._owner = [], owner
        match = self._match(messages, lane)
        known = len(match.messages) if match is not None else 0
        if (
            match is not None
            and known == total
            and match.surveyed
            and all(messages[p] is match.messages[p] for p in match.stripped)
        ):  # resent as it was: its findings stand as they are
            with self._lock:
                self._recent = [*(e for e in self._recent if e is not match), match]
            return match
        tail = messages[known:]
        if not all(type(m) is dict for m in tail):
            return None
        if match is None:  # a first sighting: the pure path decides this call, nothing is resumed from it
            entry = Transcript(
                lane=lane,
                messages=tuple(messages),
                snapshots=None,
                surveyed=False,
                survey=None,
                stripped={},
                pieces=None,
                base=None,
            )
        else:
            if match.surveyed and match.snapshots is not None:
                snapshots = match.snapshots
                if tail:
                    snapshots = [*snapshots, *map(_snapshot, cast("Sequence[dict[object, object]]", tail))]
            else:  # the first resend: every message is read now, as it stands now
                snapshots = list(map(_snapshot, cast("Sequence[dict[object, object]]", messages)))
            entry = _extended(match, messages, lane, snapshots)
        with self._lock:
            recent = [e for e in self._recent if e is not match]
            recent.append(entry)
            self._recent = recent[-self._slots :]
        return entry

    def _match(self, messages: list[object] | tuple[object, ...], lane: Lane) -> Transcript | None:
        """The longest remembered transcript ``messages`` begins with, message for message (see the module docstring).

        A remembered message matches the one at its position when it compares equal to its
        snapshot (a first sighting, which has none: to the message itself), at C speed, each
        comparison cut short where both are the very same object. A candidate that fails is
        forgotten: it was edited in place since, or it is another conversation's.
        """
        with self._lock:
            recent = list(self._recent)
        total = len(messages)
        first = messages[0]
        candidates = [
            e
            for e in recent
            if e.lane == lane
            and len(e.messages) <= total
            and _same(e, 0, first)
            and _same(e, len(e.messages) - 1, messages[len(e.messages) - 1])
        ]
        candidates.sort(key=lambda e: len(e.messages), reverse=True)
        for entry in candidates:
            known = len(entry.messages)
            prefix = messages[:known]
            if type(prefix) is not list:
                prefix = list(prefix)
            if prefix == (entry.snapshots if entry.snapshots is not None else list(entry.messages)):
                return entry
            with self._lock:
                self._recent = [e for e in self._recent if e is not entry]
        return None


def _same(entry: Transcript, position: int, message: object) -> bool:
    """Whether ``message`` matches ``entry``'s at ``position`` (its snapshot, or a first sighting's message)."""
    known = entry.snapshots[position] if entry.snapshots is not None else entry.messages[position]
    return known is message or known == message


def _stripped_for(messages: Sequence[object], match: Transcript) -> dict[int, object]:
    """``match``'s stripped copies, each made anew where ``messages`` holds another object (equal) at its position.

    A copy shares its fields' values with the message it was made from; an equal message that is
    another object gets its own copy, so the request carries the caller's current values.
    """
    stripped: dict[int, object] = {}
    for position, copy in match.stripped.items():
        message = messages[position]
        if message is match.messages[position]:
            stripped[position] = copy
        else:
            stripped[position] = compose.strip_framework_fields([message])[0]
    return stripped


def _extended(
    match: Transcript, messages: list[object] | tuple[object, ...], lane: Lane, snapshots: list[object]
) -> Transcript:
    """``messages``' entry from ``match``, the entry of their first messages: the rules run on what it has not read."""
    known = len(match.messages) if match.surveyed else 0
    if known == len(messages):
        survey = match.survey  # resent as it was: nothing new to survey
    else:
        survey = adapter_for(lane).survey(messages, match.state if match.surveyed else None)
    unread = messages[known:]
    kept = compose.strip_framework_fields(unread)
    stripped = _stripped_for(messages, match) if match.surveyed else {}
    if kept is not unread:
        stripped.update((known + offset, item) for offset, item in enumerate(kept) if item is not unread[offset])
    pieces: tuple[SystemPromptPiece, ...] = (match.pieces or ()) if match.surveyed else ()
    if lane != "anthropic.messages" and unread:
        pieces += tuple(compose.transcript_system_pieces(unread, key=_TRANSCRIPT_KEY[lane], start=known))
    return Transcript(
        lane=lane,
        messages=tuple(messages),
        snapshots=snapshots,
        surveyed=True,
        survey=survey,
        stripped=stripped,
        pieces=pieces,
        base=(match.seen() or match._base) if match.surveyed else None,
    )
