"""The stream-end ledger: the first terminal statement decides the turn.

One ordering rule for the three lanes: the first ending — a finish or stop reason, a message
stop, an in-band error — decides the turn. After it the turn is frozen: only the usage trailer
is read, and every later ending or content frame is refused and counted here, with the first
refused frame's kind and its word (``provider_word``).
"""

from __future__ import annotations

from otel_toolturn.streams._provider_word import provider_word
from otel_toolturn.streams._report import EndStatement, StreamEndIgnored


class StreamEndLedger:
    """Records a stream's terminal statement and everything refused after it.

    ``decide(statement, word)`` is called for every ending the lane reads: the first one decides
    (returns ``True``; ``decided`` holds its kind and word); any later one is refused and counted
    (returns ``False``). ``note(statement, word)`` counts a refused frame directly (a content frame
    after the end). ``ignored`` is the record: the first refused frame's kind and word (``provider_word``),
    and how many were refused; ``None`` when nothing was.
    """

    __slots__ = ("_count", "_first", "decided")

    def __init__(self) -> None:
        self.decided: tuple[EndStatement, str] | None = None
        self._first: tuple[EndStatement, str] | None = None
        self._count = 0

    def decide(self, statement: EndStatement, word: object) -> bool:
        """Offer an ending: the first decides (``True``); a later one is refused and counted (``False``)."""
        if self.decided is None:
            self.decided = (statement, provider_word(word))
            return True
        self.note(statement, word)
        return False

    def note(self, statement: EndStatement, word: object) -> None:
        """Count one frame refused after the terminal statement."""
        if self._first is None:
            self._first = (statement, provider_word(word))
        self._count += 1

    @property
    def ignored(self) -> StreamEndIgnored | None:
        """The refused frames: the first one's kind and word, and how many came."""
        if self._first is None:
            return None
        statement, word = self._first
        return StreamEndIgnored(statement=statement, word=word, count=self._count)
