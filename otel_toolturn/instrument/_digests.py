"""Per-message digests, reused across the turns of a conversation: the prefix fingerprint stays cheap.

Role: an agent resends the same message objects on every turn, one or two more each time. This
cache remembers the last few transcripts it digested (their message objects and digests); a new
transcript whose leading messages are the very same objects, in order, reuses their digests and
digests only the messages after them. The identity comparison runs at C speed, so a 2,000-message
transcript seen before costs a fraction of one ``json.dumps`` of it.

What it does not do: notice a message mutated in place after it was first sent (it keeps its
first digest). The fingerprint is telemetry, never a decision; a message replaced by a new object,
even an equal one, is digested again.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from typing import Final

from otel_toolturn.compose import message_digest

SLOTS: Final = 16
"""How many transcripts are remembered (about one per conversation running at once)."""


class DigestCache:
    """The digests of recent transcripts (see the module docstring); safe to share between threads."""

    def __init__(self, slots: int = SLOTS) -> None:
        self._slots = slots
        self._recent: list[tuple[tuple[object, ...], list[bytes]]] = []
        self._lock = threading.Lock()

    def digests(self, messages: Sequence[object]) -> list[bytes]:
        """The digest of each message, in order (``compose.message_digest``)."""
        with self._lock:
            recent = list(self._recent)
        reused: list[bytes] = []
        match: tuple[tuple[object, ...], list[bytes]] | None = None
        for entry in reversed(recent):
            seen = entry[0]
            if len(reused) < len(seen) <= len(messages) and all(map(operator.is_, messages, seen)):
                match, reused = entry, entry[1]
        out = reused + [message_digest(m) for m in messages[len(reused) :]]
        with self._lock:
            kept = [e for e in self._recent if e is not match]
            kept.append((tuple(messages), out))
            self._recent = kept[-self._slots :]
        return out
