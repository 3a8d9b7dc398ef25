"""The Anthropic Messages stream observer: a pure reducer over ``RawMessageStreamEvent`` frames.

Reads each event (the SDK's own event object or the raw SSE JSON as a dict; a raw ``data:``
string or bytes is decoded here and counted as ``bad_frame`` when it is not JSON) and never
alters it. What it reads:

- ``message_start``: response id, model (``note_response_model``), usage, and the message's
  ``input_transformations`` (what the provider changed in the request, e.g. thinking blocks it
  dropped: ``input_transformations_of``);
- ``content_block_start`` of type ``tool_use``: a call slot (a second start at the same index does
  not erase the first call, which is judged like any other); of type ``server_tool_use`` or
  ``mcp_tool_use``: a call the server runs, not a client call, open until a result block
  (``web_search_tool_result``, …, ``mcp_tool_result``) starts with its id. A stream that ends
  with no stop reason (torn, or an ``error``) while one is open counts it like an open function
  call: a ``truncated`` drop naming its id, unfinished. A ``pause_turn`` stop leaves it open by
  design (the caller sends the turn back to be continued); ``text_delta``: the repetition poll;
  ``input_json_delta``: the call's argument fragments; ``content_block_stop``: the close
  evidence for that block — the only one this lane has;
- ``message_delta``: the stop reason (an ending), the cumulative usage and its own
  ``input_transformations`` (added to those of ``message_start``; an entry listed in both is
  reported once, an empty list adds nothing); ``message_stop``: the expected close after a stop
  reason, or an ending by itself; ``error``: an ending.

The first ending decides (``StreamEndLedger``); after it content frames and further endings are
refused and counted, the usage and ``input_transformations`` of a ``message_delta`` are still
read. No ending at all: torn.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from otel_toolturn.lanes.anthropic_messages import server_family
from otel_toolturn.streams._frame import Getter, field, int_or_none
from otel_toolturn.streams._model_check import note_response_model
from otel_toolturn.streams._observer_base import IndexedCallsObserver
from otel_toolturn.streams._provider_word import provider_word
from otel_toolturn.streams._report import InputTransformation, StreamReport, Usage
from otel_toolturn.streams._tool_calls import CallSlot

CAP_STOP: Final = "max_tokens"


def _closed(slot: CallSlot) -> bool:
    return slot.closed


def _text(value: object) -> str:
    return value if type(value) is str else ""


def usage_of(usage: object) -> Usage:
    """The token counts of one Anthropic ``usage`` record (a ``Message``'s, ``message_start``'s or ``message_delta``'s).

    Input tokens are ``input_tokens`` plus ``cache_read_input_tokens`` and ``cache_creation_input_tokens``
    (Anthropic counts the cached part apart; the GenAI conventions count every input token).
    """
    uncached = int_or_none(field(usage, "input_tokens"))
    read = int_or_none(field(usage, "cache_read_input_tokens"))
    created = int_or_none(field(usage, "cache_creation_input_tokens"))
    return Usage(
        input_tokens=None if uncached is None else uncached + (read or 0) + (created or 0),
        output_tokens=int_or_none(field(usage, "output_tokens")),
        cache_read_input_tokens=read,
        cache_creation_input_tokens=created,
    )


def input_transformations_of(carrier: object) -> tuple[InputTransformation, ...]:
    """The ``input_transformations`` a message or ``message_delta`` carries, in order (``()`` when absent).

    ``carrier`` is the SDK's object or the raw JSON dict; an SDK model that does not declare the
    field keeps it as an extra field, which its attribute access reads all the same. Each entry
    (a JSON object or an object with attributes) gives its ``type``, ``reason`` and ``path`` as
    sent; an entry that is neither, and a value that is not a list, are left out.
    """
    entries = field(carrier, "input_transformations")
    if type(entries) is not list:
        return ()
    found: list[InputTransformation] = []
    for entry in entries:
        if type(entry) is not dict and not hasattr(entry, "type"):
            continue
        found.append(
            InputTransformation(
                type=_text(field(entry, "type")),
                reason=_text(field(entry, "reason")),
                path=_text(field(entry, "path")),
            )
        )
    return tuple(found)


class AnthropicMessagesObserver(IndexedCallsObserver):
    """Observes one Anthropic Messages stream; ``finish()`` gives its ``StreamReport``."""

    __slots__ = ("_server", "_stop", "_stop_closed", "_transformations")

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None = None) -> None:
        super().__init__(requested_model=requested_model, max_output_tokens=max_output_tokens)
        self._server: dict[str, None] = {}
        """The ids of the server and MCP tool uses no result block has closed yet, in order."""
        self._stop: str | None = None
        self._stop_closed = False
        self._transformations: dict[InputTransformation, None] = {}

    def _read_fields(self, event: object, get: Getter) -> None:
        kind = get(event, "type", None)
        if kind != "content_block_delta":
            self._read_other(kind, event)
        elif self._ended:
            self._ledger.note("content", kind)
        else:
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
        kind = field(block, "type")
        if kind != "tool_use":
            which = server_family(kind)
            if which is not None:
                self._server_block(kind, block)
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
        self._place(index, slot)

    def _server_block(self, kind: object, block: object) -> None:
        """A server or MCP tool use opens a call the server runs; its result block closes it."""
        if kind in ("server_tool_use", "mcp_tool_use"):
            use_id = field(block, "id")
            self._server[use_id if type(use_id) is str else ""] = None
        else:
            self._server.pop(_text(field(block, "tool_use_id")), None)

    def _message_start(self, event: object) -> None:
        message = field(event, "message")
        response_id = field(message, "id")
        if type(response_id) is str:
            self._response_id = response_id
        self._model = note_response_model(self._model, field(message, "model"), self._requested)
        self._take_usage(usage_of(field(message, "usage")))
        self._note_transformations(message)

    def _note_transformations(self, carrier: object) -> None:
        """Keep the carrier's input transformations, each once (``dict`` keys keep the first order)."""
        for transformation in input_transformations_of(carrier):
            self._transformations[transformation] = None

    def _message_delta(self, event: object) -> None:
        stop = field(field(event, "delta"), "stop_reason")
        if stop is not None and self._ledger.decide("finish", stop):
            self._ended = True
            self._stop = provider_word(stop)
        self._take_usage(usage_of(field(event, "usage")))
        self._note_transformations(event)

    def finish(self) -> StreamReport:
        """Return the report of everything fed so far; calling it again returns an equal report."""
        report = self._ended_once_report(
            self._every_slot(),
            _closed,
            word=self._stop,
            cap_word=CAP_STOP,
            server_open=tuple(self._server) if self._stop is None else (),
        )
        if not self._transformations:
            return report
        return dataclasses.replace(report, input_transformations=tuple(self._transformations))
