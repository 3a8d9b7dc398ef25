"""The repetition poll: finds a degenerate loop at the tail of a response's streamed text.

The rule. Every ``POLL_EVERY`` characters the poll inspects the last ``WINDOW`` characters of
the text. It takes the last ``NEEDLE`` characters and finds their nearest earlier occurrence
within ``MAX_PERIOD`` characters; the distance is the candidate period ``p``. The depth is how
many whole copies of the last ``p`` characters stand back to back at the tail. Then:

- depth ≥ ``CUT_DEPTH`` and depth·p ≥ ``CUT_SPAN`` → degenerate: the poll trips (``cut``) and
  stops inspecting;
- depth ≥ ``SPARED_DEPTH`` and depth·p ≥ ``SPARED_SPAN`` → a spared hit: repetition within the
  allowance (a table rule, a boot banner, an indentation run), kept for telemetry only.

The rule is ``char_run`` for a period of one character, else ``segment_loop``. The segment is
read in its canonical rotation (the least rotation, for segments up to 256 characters), so one
loop polled at different phases is one segment. Spared hits are de-duplicated by rule and
segment with the loop's peak depth kept; a loop that is later cut leaves the spared list.
Natural text almost never repeats a 16-character needle, so a poll costs one ``str.rfind``
over at most ``MAX_PERIOD + NEEDLE`` characters.
"""

from __future__ import annotations

from typing import Final

from otel_toolturn.streams._report import RepetitionEvent, RepetitionReport

POLL_EVERY: Final = 64
WINDOW: Final = 4096
NEEDLE: Final = 16
MAX_PERIOD: Final = 512
RECENT: Final = MAX_PERIOD + NEEDLE
CUT_DEPTH: Final = 12
CUT_SPAN: Final = 480
SPARED_DEPTH: Final = 4
SPARED_SPAN: Final = 64
SEGMENT_SHOWN: Final = 80
_ROTATE_UP_TO: Final = 256


def _canonical(segment: str) -> str:
    if len(segment) > _ROTATE_UP_TO:
        return segment
    return min(segment[i:] + segment[:i] for i in range(len(segment)))


def tail_loop(text: str) -> tuple[int, int]:
    """Return the tail's candidate period and depth ``(p, depth)``; ``(0, 0)`` when the needle does not recur."""
    n = len(text)
    start = max(0, n - WINDOW)
    if n - start < 2 * NEEDLE:
        return 0, 0
    previous = text.rfind(text[n - NEEDLE :], max(start, n - NEEDLE - MAX_PERIOD), n - 1)
    if previous < 0:
        return 0, 0
    period = n - NEEDLE - previous
    last = text[n - period :]
    depth = 1
    while n - (depth + 1) * period >= start and text[n - (depth + 1) * period : n - depth * period] == last:
        depth += 1
    return period, depth


class RepetitionPoll:
    """Repetition telemetry for ONE stream: the cut event and the allowance-spared hits.

    ``feed(delta)`` takes streamed text one fragment at a time and polls every ``POLL_EVERY``
    characters; ``poll(text)`` inspects accumulated text directly. Both return whether the text
    is degenerate (the caller decides what to do about it: an observer only reports).
    """

    __slots__ = ("_cut", "_history", "_history_chars", "_pending", "_pending_chars", "_recent", "_spared")

    def __init__(self) -> None:
        self._pending: list[str] = []
        self._pending_chars = 0
        self._recent = ""
        self._history: list[str] = []
        self._history_chars = 0
        self._cut: RepetitionEvent | None = None
        self._spared: dict[tuple[str, str], RepetitionEvent] = {}

    def feed(self, delta: str) -> bool:
        """Append one text fragment; poll once ``POLL_EVERY`` characters arrived since the last poll.

        Returns whether the text is degenerate (once tripped, every later fragment returns ``True``).
        """
        if self._cut is not None:
            return True
        self._pending.append(delta)
        self._pending_chars += len(delta)
        if self._pending_chars < POLL_EVERY:
            return False
        return self._advance()

    def _advance(self) -> bool:
        """Poll the text that arrived since the last poll.

        Keeps the last ``WINDOW``-odd characters as chunks and, apart, the last ``RECENT``
        characters, where the needle's recurrence is looked for first: when it does not recur
        there, ``poll`` would find no loop, and the window is not joined at all.
        """
        arrived = "".join(self._pending)
        self._pending.clear()
        self._pending_chars = 0
        self._history.append(arrived)
        self._history_chars += len(arrived)
        if self._history_chars > 2 * WINDOW:
            self._history = ["".join(self._history)[-WINDOW:]]
            self._history_chars = WINDOW
        recent = (self._recent + arrived)[-RECENT:]
        self._recent = recent
        if len(recent) < 2 * NEEDLE or recent.rfind(recent[-NEEDLE:], 0, len(recent) - 1) < 0:
            return False
        return self.poll("".join(self._history))

    def poll(self, text: str) -> bool:
        """Inspect the accumulated text; returns whether it is degenerate (once tripped, stays tripped)."""
        if self._cut is not None:
            return True
        period, depth = tail_loop(text)
        span = period * depth
        if depth < SPARED_DEPTH or span < SPARED_SPAN:
            return False
        rule = "char_run" if period == 1 else "segment_loop"
        segment = _canonical(text[-period:])[:SEGMENT_SHOWN]
        key = (rule, segment)
        if depth >= CUT_DEPTH and span >= CUT_SPAN:
            self._cut = RepetitionEvent(rule=rule, segment=segment, depth=depth)
            self._spared.pop(key, None)
            return True
        seen = self._spared.get(key)
        if seen is None or depth > seen.depth:
            self._spared[key] = RepetitionEvent(rule=rule, segment=segment, depth=depth)
        return False

    @property
    def cut(self) -> RepetitionEvent | None:
        """The cut event, once a poll tripped."""
        return self._cut

    @property
    def spared(self) -> tuple[RepetitionEvent, ...]:
        """Allowance-spared hits, de-duplicated by rule and segment, peak depth kept, first-seen order."""
        return tuple(self._spared.values())

    def report(self) -> RepetitionReport:
        """Return the poll's outcome, polling any text that arrived since the last poll first."""
        if self._pending and self._cut is None:
            self._advance()
        return RepetitionReport(cut=self._cut, spared=self.spared)
