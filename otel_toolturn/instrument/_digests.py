"""Message digests, reused across the turns of a conversation so telemetry stays cheap.

Role: a telemetry cache, never a decision: the wire request is computed from the transcript as it
stands at each call (``_request``); this cache only serves the digests (``compose.message_digest``)
that the prefix fingerprint and the conversation state (``_conversation``) are made of.

An agent resends the same message objects on every turn, one or two more each time. The cache
remembers the last ``SLOTS`` caller transcripts it digested: their message objects and each
message's digest. A new transcript whose leading messages are the very same objects, in order,
takes their digests and digests only the messages after them: a transcript seen before costs one
identity comparison per message plus the digests of its new messages.

A list derived from the caller's transcript (the law's view, the strip rule's copies) is digested
from it: the view is read as runs of the caller's objects, in order (the law carries untouched
stretches as they stand); each run takes its digests from the caller's, matched by identity; a
message the view made (a closing result, a stripped copy) is digested anew, and one the view left
out or moved is stepped over. Derived lists are not remembered, so they never push the callers'
transcripts out.

Every digest is ``compose.message_digest`` of the message it names (the same bytes whichever path
computed it), reused only for the very object it was computed from.

What it does not notice: a message object mutated in place after it was first digested keeps its
first digest (a message replaced by a new object, even an equal one, is digested again). So the
fingerprint and the conversation telemetry of a transcript edited in place may be stale; the
request sent never is.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from itertools import compress, count, islice
from typing import Final

from otel_toolturn.compose import message_digest, prefix_fingerprint

SLOTS: Final = 16
"""How many caller transcripts are remembered (about one per conversation running at once)."""

LOOKAHEAD: Final = 8
"""How far ahead in the caller's transcript a view's message is looked for when a run ends."""


_EXTENDING: Final = threading.Lock()
"""Held while a digest list is extended in place (see ``RememberedTranscript.digests``)."""


class RememberedTranscript:
    """One remembered transcript: its messages and their digests.

    ``digests`` may run on past this transcript's messages: an entry and the longer transcripts
    extending it share one list (each new one appends, so no call copies the digests of a long
    transcript); an entry's own digests are the first ``len(messages)``.
    """

    __slots__ = ("digests", "messages")

    def __init__(self, messages: tuple[object, ...], digests: list[bytes]) -> None:
        self.messages = messages
        self.digests = digests

    def own(self) -> list[bytes]:
        """The digest of each of this transcript's messages, in order."""
        return self.digests[: len(self.messages)]


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


def remembered(messages: Sequence[object], match: RememberedTranscript | None) -> RememberedTranscript:
    """The entry of ``messages``: ``match``'s (an entry of their first messages, the very objects) extended.

    ``match`` ``None``: every message is digested.
    """
    total = len(messages)
    if match is None:
        return RememberedTranscript(tuple(messages), [message_digest(m) for m in messages])
    known = len(match.messages)
    if known == total:
        return match if match.messages is messages else RememberedTranscript(tuple(messages), match.digests)
    added = [message_digest(m) for m in messages[known:]]
    with _EXTENDING:
        digests = match.digests
        if len(digests) == known:  # they end the list: extended in place, shared with ``match``
            digests.extend(added)
        else:  # a longer transcript extended it first: this one branches off
            digests = digests[:known] + added
    return RememberedTranscript(tuple(messages), digests)


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
        entry = remembered(messages, match)
        if total:
            with self._lock:
                kept = [e for e in self._recent if e is not match and e is not entry]
                kept.append(entry)
                self._recent = kept[-self._slots :]
        return entry
