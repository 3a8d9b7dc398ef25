"""The Bedrock Converse stream observer and whole-response check: pure readers of ``converse_stream`` / ``converse``.

A ``converse_stream`` event is a one-key dict naming its kind, as botocore yields it from the event
stream (``{"contentBlockDelta": {"contentBlockIndex": 0, "delta": {...}}}``); an object with the
same attributes reads the same. Never altered. What the observer reads:

- ``contentBlockStart`` whose ``start`` holds ``toolUse`` (``toolUseId``, ``name``): a call slot at
  its ``contentBlockIndex`` (a second start at the same index does not erase the first call, which
  is judged like any other);
- ``contentBlockDelta``: ``delta.text`` goes to the repetition poll; ``delta.toolUse.input`` is one
  fragment of the call's argument text (fail-closed: the fragments joined must be a JSON object);
- ``contentBlockStop``: the close evidence of the block at its index — the only one this lane has;
- ``messageStop``: the stop reason, the ending; ``metadata``: the usage (read after the ending too:
  it is the stream's trailer); an event whose kind ends in ``Exception`` (the service's in-stream
  errors, ``modelStreamErrorException`` …): an ending by itself.

The first ending decides (``StreamEndLedger``); content after it is refused and counted. No ending
at all: torn. Usage: ``inputTokens`` plus ``cacheReadInputTokens`` and ``cacheWriteInputTokens``
(the service counts the cached part apart; the GenAI conventions count every input token).

A whole ``converse`` response is read by ``_response.check_converse_response``.
"""

from __future__ import annotations

from typing import Final

from otel_toolturn.streams._frame import field, int_or_none
from otel_toolturn.streams._observer_base import READ_ERRORS, IndexedCallsObserver
from otel_toolturn.streams._provider_word import provider_word
from otel_toolturn.streams._report import StreamReport, Usage
from otel_toolturn.streams._tool_calls import CallSlot

CAP_STOP: Final = "max_tokens"
_CONTENT: Final = frozenset({"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop"})


def _closed(slot: CallSlot) -> bool:
    return slot.closed


def _str(value: object) -> str:
    return value if type(value) is str else ""


def usage_of(usage: object) -> Usage:
    """The token counts of one Converse ``usage`` record (a response's, or a stream's ``metadata``)."""
    uncached = int_or_none(field(usage, "inputTokens"))
    read = int_or_none(field(usage, "cacheReadInputTokens"))
    written = int_or_none(field(usage, "cacheWriteInputTokens"))
    return Usage(
        input_tokens=None if uncached is None else uncached + (read or 0) + (written or 0),
        output_tokens=int_or_none(field(usage, "outputTokens")),
        cache_read_input_tokens=read,
        cache_creation_input_tokens=written,
    )


def _kind_of(event: object) -> tuple[str, object]:
    """The event's kind and its body: a dict's one key, or an object's first known attribute."""
    if type(event) is dict:
        kind = next(iter(event))
        return kind, event[kind]
    for kind in (*_CONTENT, "messageStop", "metadata"):
        body = getattr(event, kind, None)
        if body is not None:
            return kind, body
    raise ValueError("no Converse stream event kind")


class BedrockConverseObserver(IndexedCallsObserver):
    """Observes one ``converse_stream`` event stream; ``finish()`` gives its ``StreamReport``."""

    __slots__ = ("_stop",)

    read_errors = (*READ_ERRORS, StopIteration)
    """An empty event dict has no kind to take (``next`` of its keys)."""

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None = None) -> None:
        super().__init__(requested_model=requested_model, max_output_tokens=max_output_tokens)
        self._stop: str | None = None

    def _read(self, event: object) -> None:
        kind, body = _kind_of(event)
        if kind == "metadata":
            self._take_usage(usage_of(field(body, "usage")))
        elif kind == "messageStop":
            stop = field(body, "stopReason")
            if self._ledger.decide("finish", stop):
                self._ended = True
                self._stop = provider_word(stop)
        elif kind.endswith("Exception"):
            if self._ledger.decide("error", kind):
                self._ended = True
        elif self._ended:
            if kind in _CONTENT:
                self._ledger.note("content", kind)
        elif kind == "contentBlockStart":
            self._open(body)
        elif kind == "contentBlockDelta":
            self._delta(body)
        elif kind == "contentBlockStop":
            slot = self._slots.get(field(body, "contentBlockIndex"))
            if slot is not None:
                slot.closed = True

    def _open(self, body: object) -> None:
        use = field(field(body, "start"), "toolUse")
        if use is None:
            return
        index = field(body, "contentBlockIndex")
        slot = CallSlot(
            index=index if type(index) is int else len(self._slots),
            call_id=_str(field(use, "toolUseId")),
            name=_str(field(use, "name")),
        )
        self._place(index, slot)

    def _delta(self, body: object) -> None:
        delta = field(body, "delta")
        text = field(delta, "text")
        if type(text) is str:
            self._poll.feed(text)
            return
        piece = field(field(delta, "toolUse"), "input")
        slot = self._slots.get(field(body, "contentBlockIndex"))
        if slot is not None and type(piece) is str:
            slot.parts.append(piece)

    def finish(self) -> StreamReport:
        """Return the report of everything fed so far; calling it again returns an equal report."""
        return self._ended_once_report(
            self._every_slot(),
            _closed,
            word=self._stop,
            cap_word=CAP_STOP,
        )
