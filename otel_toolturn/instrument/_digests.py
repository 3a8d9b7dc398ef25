"""Message digests, reused across the turns of a conversation so telemetry stays cheap.

Role: a telemetry cache, never a decision: the wire request is computed from the transcript as it
stands at each call (``_request``); this cache only serves the digests (``compose.message_digest``)
that the prefix fingerprint and the conversation state (``_conversation``) are made of.

An agent resends the same message objects on every turn, one or two more each time. The cache
remembers the last ``SLOTS`` caller transcripts it digested: their message objects and each
message's digest. A new transcript whose leading messages are the very same objects, in order,
takes their digests and digests only the messages after them: a transcript seen before costs one
identity comparison per message plus the digests of its new messages. The new transcript's entry
takes the place of the one it was found from (here, or by value below), so a conversation holds one
slot, and the message objects of a framework's earlier requests are not kept alive by the cache.

A list derived from the caller's transcript (the law's view, the strip rule's copies) is digested
from it: the view is read as runs of the caller's objects, in order (the law carries untouched
stretches as they stand); each run takes its digests from the caller's, matched by identity; a
message the view made (a closing result, a stripped copy) is digested anew, and one the view left
out or moved is stepped over. Derived lists are not remembered, so they never push the callers'
transcripts out.

A framework that rebuilds its message dicts on every call resends the same values as new objects.
When a transcript would leave more than ``FEW`` messages to digest, it is also read by value: the
longest remembered transcript with its first message's digest and no longer than it is the
candidate, and the new transcript's canonical JSON (``compose.canonical_json_array``, one encoder
call) is checked to start with the candidate's, by the SHA-256 of those leading bytes. When it
does, each of its leading messages has the canonical JSON of the candidate's message at its
place, so it takes the candidate's digests and digests only the messages after them. When it does
not, the same is checked of the candidate without its last message: a framework that changed the
last message it sent — merged the next user message into it (pydantic-ai and LangChain on
Anthropic, where user turns alternate with the model's), or moved a cache mark off it — resends
every message but that one with the same value. A remembered transcript keeps both SHA-256 states
(of its canonical JSON array without the closing bracket, and of that array without its last
message), taken once first asked for and carried on to the transcripts extending it.

Every digest is ``compose.message_digest`` of the message it names (the same bytes whichever path
computed it), reused only for the very object it was computed from or for a message whose
canonical JSON was checked equal to that object's.

What it does not notice: a message object mutated in place after it was first digested keeps its
first digest (a message replaced by a new object, even an equal one, is digested again). So the
fingerprint and the conversation telemetry of a transcript edited in place may be stale; the
request sent never is.
"""

from __future__ import annotations

import hashlib
import operator
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, count, islice
from typing import TYPE_CHECKING, Final

from otel_toolturn.compose import canonical_json, canonical_json_array, message_digest, prefix_fingerprint

if TYPE_CHECKING:
    from hashlib import _Hash

SLOTS: Final = 16
"""How many caller transcripts are remembered (about one per conversation running at once)."""

LOOKAHEAD: Final = 8
"""How far ahead in the caller's transcript a view's message is looked for when a run ends."""


FEW: Final = 16
"""Past this many messages left to digest, a transcript is also read by value (see the module docstring)."""

_EXTENDING: Final = threading.Lock()
"""Held while a digest list is extended in place (see ``RememberedTranscript.digests``)."""


@dataclass(frozen=True, slots=True)
class Written:
    """A transcript's canonical JSON array without its closing bracket: its SHA-256 state, length and digest."""

    state: _Hash
    """Never updated: a longer transcript's state continues from a copy."""
    size: int
    digest: bytes

    @classmethod
    def of(cls, text: bytes | memoryview, *, after: Written | None = None) -> Written:
        """``after``'s text followed by ``text`` (``None``: ``text`` alone)."""
        state = hashlib.sha256() if after is None else after.state.copy()
        state.update(text)
        return cls(state, len(text) + (0 if after is None else after.size), state.digest())


Opened = tuple[Written, Written]
"""A transcript's canonical JSON array, open: without its last message, and whole."""


def opened(appended: bytes | memoryview, last: object, *, after: Written | None = None) -> Opened:
    """``after``'s open array followed by ``appended``, whose last item is ``last``'s canonical JSON: ``Opened``.

    ``appended``: the open array itself (``after`` ``None``), or a comma and the items that follow.
    """
    text = memoryview(appended)
    cut = len(text) - len(canonical_json(last))
    if cut and text[cut - 1] == ord(","):
        cut -= 1
    head = after if after is not None and not cut else Written.of(text[:cut], after=after)
    return head, Written.of(text[cut:], after=head)


class RememberedTranscript:
    """One remembered transcript: its messages and their digests.

    ``digests`` may run on past this transcript's messages: an entry and the longer transcripts
    extending it share one list (each new one appends, so no call copies the digests of a long
    transcript); an entry's own digests are the first ``len(messages)``.
    """

    __slots__ = ("_opened", "digests", "messages")

    def __init__(self, messages: tuple[object, ...], digests: list[bytes], written: Opened | None = None) -> None:
        self.messages = messages
        self.digests = digests
        self._opened = written

    def own(self) -> list[bytes]:
        """The digest of each of this transcript's messages, in order."""
        return self.digests[: len(self.messages)]

    def written(self, *, compute: bool = True) -> Opened | None:
        """Its canonical JSON array, open (``Opened``); taken once (``compute`` false: ``None`` until then).

        Asked only of a transcript of at least one message.
        """
        if self._opened is None and compute:
            self._opened = opened(canonical_json_array(self.messages)[:-1], self.messages[-1])
        return self._opened


def _derived_digests(messages: Sequence[object], source: RememberedTranscript) -> list[bytes]:
    """The digest of each of ``messages``, taken from ``source`` for its very objects (see the module docstring)."""
    objects, known = source.messages, source.digests
    total, known_total = len(messages), len(objects)
    out: list[bytes] = []
    at = 0  # in messages
    from_ = 0  # in the source
    while at < total:
        if from_ < known_total:
            differ = map(operator.is_not, islice(messages, at, None), islice(objects, from_, None))
            mismatch = next(compress(count(), differ), None)
            run = mismatch if mismatch is not None else min(total - at, known_total - from_)
            out += known[from_ : from_ + run]
            at += run
            from_ += run
            if at == total:
                break
        message = messages[at]
        ahead = objects[from_ + 1 : from_ + 1 + LOOKAHEAD]
        skip = next((offset for offset, seen in enumerate(ahead) if seen is message), None)
        if skip is not None:
            from_ += 1 + skip  # the source's messages before it were left out or moved
            continue
        out.append(message_digest(message))
        at += 1
    return out


def remembered(
    messages: Sequence[object], match: RememberedTranscript | None, *, first: bytes | None = None
) -> RememberedTranscript:
    """The entry of ``messages``: ``match``'s (an entry of their first messages, the very objects) extended.

    ``match`` ``None``: every message is digested (``first``: the first one's digest, when already taken).
    """
    total = len(messages)
    if match is None:
        if first is None or not total:
            return RememberedTranscript(tuple(messages), [message_digest(m) for m in messages])
        return RememberedTranscript(tuple(messages), [first, *map(message_digest, islice(messages, 1, None))])
    known = len(match.messages)
    if known == total:
        if match.messages is messages:
            return match
        return RememberedTranscript(tuple(messages), match.digests, match.written(compute=False))
    added = messages[known:]
    digests = _extended(match, known, [message_digest(m) for m in added])
    before = match.written(compute=False)
    if before is None:
        return RememberedTranscript(tuple(messages), digests)
    _, whole = before
    written = opened(b"," + canonical_json_array(added)[1:-1], added[-1], after=whole)
    return RememberedTranscript(tuple(messages), digests, written)


def equal_valued(
    messages: Sequence[object], candidate: RememberedTranscript, text: bytes
) -> RememberedTranscript | None:
    """The entry of ``messages`` from ``candidate``, if their first messages have its messages' canonical JSON.

    ``text``: ``compose.canonical_json_array(messages)``. Checked of all of ``candidate``'s messages,
    then of all but its last. ``None``: they do not.
    """
    written = candidate.written()
    assert written is not None  # noqa: S101 - computed when asked for; narrows for the type checker
    head, whole = written
    known = len(candidate.messages)
    view = memoryview(text)
    state = hashlib.sha256(view[: head.size])  # the text is hashed once: the whole array starts with the head
    if state.digest() != head.digest:
        return None
    state.update(view[head.size : whole.size])
    if text[whole.size : whole.size + 1] in (b",", b"]") and state.digest() == whole.digest:
        before, taken = whole, known
    elif text[head.size : head.size + 1] == b"," and known > 1:
        before, taken = head, known - 1
    else:
        return None
    digests = _extended(candidate, taken, [message_digest(m) for m in messages[taken:]])
    appended = view[before.size : -1]  # empty: the candidate's very messages, by value
    return RememberedTranscript(
        tuple(messages), digests, opened(appended, messages[-1], after=before) if appended else written
    )


def _extended(match: RememberedTranscript, known: int, added: list[bytes]) -> list[bytes]:
    """``match``'s first ``known`` digests, then ``added`` (a list shared with ``match`` where they end its list)."""
    if not added:
        return match.digests
    with _EXTENDING:
        digests = match.digests
        if len(digests) == known:  # they end the list: extended in place, shared with ``match``
            digests.extend(added)
            return digests
        return digests[:known] + added  # a longer transcript extended it first: this one branches off


class DigestCache:
    """The digests of recent transcripts (see the module docstring); safe to share between threads."""

    def __init__(self, slots: int = SLOTS) -> None:
        self._slots = slots
        self._recent: list[RememberedTranscript] = []
        self._lock = threading.Lock()

    def digests(self, messages: Sequence[object], *, source: Sequence[object] | None = None) -> list[bytes]:
        """``compose.message_digest`` of each of ``messages``, in order.

        ``source``: the caller's transcript when ``messages`` was derived from it (the law's view,
        stripped); its objects' digests are reused by identity.
        """
        if source is None or source is messages:
            return self._remember(messages).own()
        return _derived_digests(messages, self._remember(source))

    def prefix_fingerprint(self, messages: Sequence[object], *, source: Sequence[object] | None = None) -> str:
        """``compose.prefix_fingerprint`` of every message of ``messages`` but the last (``source``: as ``digests``)."""
        return prefix_fingerprint(self.digests(messages, source=source)[:-1])

    def _remember(self, messages: Sequence[object]) -> RememberedTranscript:
        """``messages``' entry: from the longest remembered transcript they start with, then remembered."""
        with self._lock:
            recent = list(self._recent)
        total = len(messages)
        match: RememberedTranscript | None = None
        for candidate in reversed(recent):
            seen = candidate.messages
            if (
                (match is None or len(match.messages) < len(seen))
                and 0 < len(seen) <= total
                and all(map(operator.is_, messages, seen))
            ):
                match = candidate
        entry = None
        first = None
        found: RememberedTranscript | None = None  # the transcript found by value
        known = 0 if match is None else len(match.messages)
        if total - known > FEW:
            first = message_digest(messages[0]) if match is None else match.digests[0]
            entry, found = self._by_value(messages, match, recent, first)
        if entry is None:
            entry = remembered(messages, match, first=first)
        if total:
            with self._lock:
                kept = [e for e in self._recent if e is not match and e is not found and e is not entry]
                kept.append(entry)
                self._recent = kept[-self._slots :]
        return entry

    @staticmethod
    def _by_value(
        messages: Sequence[object], match: RememberedTranscript | None, recent: list[RememberedTranscript], first: bytes
    ) -> tuple[RememberedTranscript | None, RememberedTranscript | None]:
        """``messages``' entry from the longest of ``recent`` longer than ``match`` they start with by value, and it.

        The candidate: the longest (the most recent on a tie) whose first digest is ``first`` (theirs).
        ``(None, None)``: there is none, or they do not start with it.
        """
        total = len(messages)
        known = 0 if match is None else len(match.messages)
        candidate: RememberedTranscript | None = None
        for entry in reversed(recent):  # the most recent wins a tie
            length = len(entry.messages)
            longest = candidate is None or len(candidate.messages) < length
            if longest and known < length <= total and entry.digests[0] == first:
                candidate = entry
        if candidate is None:
            return None, None
        made = equal_valued(messages, candidate, canonical_json_array(messages))
        return made, None if made is None else candidate
