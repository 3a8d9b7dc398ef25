"""The Anthropic Messages stream observer: a pure reducer over ``RawMessageStreamEvent`` frames.

Reads each event (the SDK's own event object or the raw SSE JSON as a dict; a raw ``data:``
string or bytes is decoded here and counted as ``bad_frame`` when it is not JSON) and never
alters it. What it reads:

- ``message_start``: response id, model (``note_response_model``), usage;
- ``content_block_start`` of type ``tool_use``: a call slot (``server_tool_use`` and other
  server-side blocks are not client calls; a second start at the same index does not erase the
  first call, which is judged like any other); ``text_delta``: the repetition poll;
  ``input_json_delta``: the call's argument fragments; ``content_block_stop``: the close
  evidence for that block — the only one this lane has;
- ``message_delta``: the stop reason (an ending) and the cumulative usage; ``message_stop``: the
  expected close after a stop reason, or an ending by itself; ``error``: an ending.

The first ending decides (``StreamEndLedger``); after it content frames and further endings are
refused and counted, the usage of a ``message_delta`` is still read. No ending at all: torn.
"""

from __future__ import annotations

from typing import Final

from otel_toolturn.streams._echo import echo_folded_word, note_response_model
from otel_toolturn.streams._report import StreamReport
from otel_toolturn.streams._turn import (
    ATTR_GET,
    DICT_GET,
    CallSlot,
    ObserverBase,
    field,
    int_or_none,
)

CAP_STOP: Final = "max_tokens"
_READ_ERRORS: Final = (AttributeError, TypeError, ValueError, KeyError, IndexError)


def _closed(slot: CallSlot) -> bool:
    return slot.closed


class AnthropicMessagesObserver(ObserverBase):
    """Observes one Anthropic Messages stream; ``finish()`` gives its ``StreamReport``."""

    __slots__ = (
        "_ended",
        "_replaced",
        "_slots",
        "_stop",
        "_stop_closed",
    )

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None = None) -> None:
        super().__init__(requested_model=requested_model, max_output_tokens=max_output_tokens)
        self._slots: dict[object, CallSlot] = {}
        self._replaced: list[CallSlot] = []
        self._ended = False
        self._stop: str | None = None
        self._stop_closed = False

    def feed(self, event: object) -> None:
        """Read one event; never alters it, never raises."""
        self._events += 1
        try:
            if type(event) is not dict and not self._ended:
                # The hot path: a text or argument fragment of an SDK event object, read with plain
                # attribute access (cheaper than ``getattr`` with a default, on pydantic objects
                # above all). An object without one of these attributes raises ``AttributeError``
                # before anything is kept, and the general reading below reads it again.
                try:
                    if event.type == "content_block_delta":  # type: ignore[attr-defined]
                        delta = event.delta  # type: ignore[attr-defined]
                        delta_kind = delta.type
                        if delta_kind == "text_delta":
                            text = delta.text
                            if type(text) is str:
                                self._poll.feed(text)
                            return
                        if delta_kind == "input_json_delta":
                            slot = self._slots.get(event.index)  # type: ignore[attr-defined]
                            part = delta.partial_json
                            if slot is not None and type(part) is str:
                                slot.parts.append(part)
                            return
                except AttributeError:
                    pass
            self._read(event)
        except _READ_ERRORS:
            self._unread += 1

    def _read(self, event: object) -> None:
        """Read one event the general way: ``dict.get`` on a dict, ``getattr`` (absent: ``None``) on anything else."""
        cls = type(event)
        if cls is str or cls is bytes:
            event = self._decode(event)  # type: ignore[arg-type]
            if event is None:
                return
            get = DICT_GET
        else:
            get = DICT_GET if cls is dict else ATTR_GET
        kind = get(event, "type", None)
        if kind == "content_block_delta":
            if self._ended:
                self._ledger.note("content", kind)
                return
            delta = get(event, "delta", None)
            delta_kind = get(delta, "type", None)
            if delta_kind == "text_delta":
                text = get(delta, "text", None)
                if type(text) is str:
                    self._poll.feed(text)
            elif delta_kind == "input_json_delta":
                slot = self._slots.get(get(event, "index", None))
                part = get(delta, "partial_json", None)
                if slot is not None and type(part) is str:
                    slot.parts.append(part)
        else:
            self._read_other(kind, event)

    def _read_other(self, kind: object, event: object) -> None:
        if kind == "content_block_start":
            if self._ended:
                self._ledger.note("content", kind)
                return
            self._open(event)
        elif kind == "content_block_stop":
            if self._ended:
                self._ledger.note("content", kind)
                return
            slot = self._slots.get(field(event, "index"))
            if slot is not None:
                slot.closed = True
        elif kind == "message_delta":
            self._message_delta(event)
        elif kind == "message_stop":
            if self._stop is not None and not self._stop_closed:
                self._stop_closed = True
            elif self._ledger.decide("message_stop", kind):
                self._ended = True
        elif kind == "message_start":
            if self._ended:
                self._ledger.note("content", kind)
                return
            self._message_start(event)
        elif kind == "error":
            error = field(event, "error")
            if self._ledger.decide("error", field(error, "type")):
                self._ended = True

    def _open(self, event: object) -> None:
        block = field(event, "content_block")
        if field(block, "type") != "tool_use":
            return
        index = field(event, "index")
        call_id, name, initial = field(block, "id"), field(block, "name"), field(block, "input")
        slot = CallSlot(
            index=index if type(index) is int else len(self._slots),
            call_id=call_id if type(call_id) is str else "",
            name=name if type(name) is str else "",
        )
        if isinstance(initial, dict) and initial:
            slot.initial = dict(initial)
        replaced = self._slots.get(index)
        if replaced is not None:
            self._replaced.append(replaced)
        self._slots[index] = slot

    def _message_start(self, event: object) -> None:
        message = field(event, "message")
        response_id = field(message, "id")
        if type(response_id) is str:
            self._response_id = response_id
        self._seat = note_response_model(self._seat, field(message, "model"), self._requested)
        usage = field(message, "usage")
        if usage is not None:
            self._input_tokens = int_or_none(field(usage, "input_tokens"))
            self._output_tokens = int_or_none(field(usage, "output_tokens"))

    def _message_delta(self, event: object) -> None:
        stop = field(field(event, "delta"), "stop_reason")
        if stop is not None and self._ledger.decide("finish", stop):
            self._ended = True
            self._stop = echo_folded_word(stop)
        self._read_usage(field(event, "usage"), input_key="input_tokens", output_key="output_tokens")

    def finish(self) -> StreamReport:
        """Return the report of everything fed so far; calling it again returns an equal report."""
        return self._report(
            slots=[*self._replaced, *self._slots.values()],
            closed_of=_closed,
            finish_reasons=(self._stop,) if self._stop is not None else (),
            cap_stop=self._stop == CAP_STOP,
            torn=self._ledger.decided is None,
        )
