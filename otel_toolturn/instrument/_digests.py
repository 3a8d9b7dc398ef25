"""Prefix fingerprints, reused across the turns of a conversation so they stay cheap.

Role: an agent resends the same message objects on every turn, one or two more each time. This
cache remembers the last few transcripts it fingerprinted: their message objects, each message's
digest (``compose.message_digest``) and the SHA-256 state over the digests of all but the last.
A new transcript whose leading messages are the very same objects, in order, reuses that state
and digests only the messages after them, so the cost of a transcript seen before is one identity
comparison (at C speed) plus the new messages, never a pass over all of it in Python.

A request whose messages are not the caller's list (the law's repaired view, or the strip rule's
copies) is fingerprinted from the caller's transcript, which is remembered as above. The view is
read as runs of the caller's objects, in order (the law carries untouched stretches as they
stand): each run takes its digests from the caller's, matched by identity at C speed; between
runs, a message the view made (a closing result, a stripped copy) is digested anew, and one the
view left out or moved is stepped over. The repaired transcripts themselves are not remembered, so
they never push the callers' out.

The value is always ``compose.prefix_fingerprint`` of ``compose.message_digest`` of every message
but the last (the same text whichever path computed it): a digest is reused only for the very
object it was computed from.

What it does not do: notice a message mutated in place after it was first sent (it keeps its
first digest). The fingerprint is telemetry, never a decision; a message replaced by a new object,
even an equal one, is digested again.

``remembered`` and ``fingerprint_from`` are the cache's two steps without its search: the
transcript memo (``_memo``), which matches transcripts itself (and checks their messages
unchanged), keeps its entries' digests with them. ``DigestCache`` serves the transcripts the memo
does not take.
"""

from __future__ import annotations

import hashlib
import operator
import threading
from collections.abc import Sequence
from itertools import compress, count, islice
from typing import TYPE_CHECKING, Final

from otel_toolturn.compose import FINGERPRINT_LENGTH, message_digest, prefix_fingerprint

if TYPE_CHECKING:
    from hashlib import _Hash

SLOTS: Final = 16
"""How many transcripts are remembered (about one per conversation running at once)."""

LOOKAHEAD: Final = 8
"""How far ahead in the caller's transcript a view's message is looked for when a run ends."""


_EXTENDING: Final = threading.Lock()
"""Held while a digest list is extended in place (see ``Seen.digests``)."""


class Seen:
    """One remembered transcript: its messages, their digests, the hash over all digests but the last.

    ``digests`` may run on past this transcript's messages: an entry and the longer transcripts
    extending it share one list (each new one appends, so no call copies the digests of a long
    transcript); an entry's own digests are the first ``len(messages)``.
    """

    __slots__ = ("digests", "messages", "prefix")

    def __init__(self, messages: tuple[object, ...], digests: list[bytes], prefix: _Hash) -> None:
        self.messages = messages
        self.digests = digests
        self.prefix = prefix


def _derived_digests(messages: Sequence[object], source: Seen) -> list[bytes]:
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


def remembered(messages: Sequence[object], match: Seen | None) -> Seen:
    """The entry of ``messages``: ``match``'s (an entry of their first messages) extended.

    ``match`` ``None``: every message is digested. The caller has checked that ``match``'s messages
    are ``messages``' first ones: the very objects, or (the transcript memo) messages equal to them,
    whose digests are the same; the entry names ``messages``' own objects either way.
    """
    total = len(messages)
    if match is None:
        digests = [message_digest(m) for m in messages]
        return Seen(tuple(messages), digests, hashlib.sha256(b"".join(digests[:-1])))
    known = len(match.messages)
    if known == total:
        return match if match.messages is messages else Seen(tuple(messages), match.digests, match.prefix)
    added = [message_digest(m) for m in messages[known:]]
    with _EXTENDING:
        digests = match.digests
        if len(digests) == known:  # they end the list: extended in place, shared with ``match``
            digests.extend(added)
        else:  # a longer transcript extended it first: this one branches off
            digests = digests[:known] + added
    prefix = match.prefix.copy()
    prefix.update(b"".join(digests[known - 1 : total - 1]))
    return Seen(tuple(messages), digests, prefix)


def fingerprint_from(source: Seen, derived: Sequence[object] | None = None) -> str:
    """``compose.prefix_fingerprint`` of every message but the last of ``source``'s transcript, or of ``derived``.

    ``derived``: a list made from that transcript (the law's view, stripped); its messages that are
    the transcript's very objects take their digests from ``source``.
    """
    if derived is None:
        return source.prefix.hexdigest()[:FINGERPRINT_LENGTH]
    return prefix_fingerprint(_derived_digests(derived[:-1], source))


class DigestCache:
    """The digests of recent transcripts (see the module docstring); safe to share between threads."""

    def __init__(self, slots: int = SLOTS) -> None:
        self._slots = slots
        self._recent: list[Seen] = []
        self._lock = threading.Lock()

    def prefix_fingerprint(self, messages: Sequence[object], *, source: Sequence[object] | None = None) -> str:
        """``compose.prefix_fingerprint`` of every message of ``messages`` but the last.

        ``source``: the caller's transcript when ``messages`` was derived from it (the law's view,
        stripped); its objects' digests are reused by identity.
        """
        if source is None or source is messages:
            return fingerprint_from(self._remember(messages))
        return fingerprint_from(self._remember(source), messages)

    def _remember(self, messages: Sequence[object]) -> Seen:
        """``messages``' entry: from the longest remembered transcript they start with, then remembered."""
        with self._lock:
            recent = list(self._recent)
        total = len(messages)
        match: Seen | None = None
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
