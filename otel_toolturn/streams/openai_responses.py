"""The Responses stream observer: a pure reducer over ``ResponseStreamEvent`` frames.

Reads each event (the SDK's own object or the raw SSE JSON as a dict; a raw ``data:`` string or
bytes is decoded here and counted as ``bad_frame`` when it is not JSON) and never alters it.
Calls are keyed by ``output_index``. What it reads:

- ``response.created`` / ``response.in_progress`` / ``response.queued``: response id and model;
- ``response.output_item.added`` of type ``function_call``: a call slot (``call_id``, ``name``);
  of a call the agent runs (``local_shell_call``, ``shell_call``, ``apply_patch_call``,
  ``computer_call``: the lane's ``REQUEST_FIELDS``): a call slot named by its type, whose arguments
  are the object the item asks with (``action``, ``operation``), read from the ``.done`` item;
  ``response.function_call_arguments.delta``: its argument fragments (argument frames for an item
  that was never opened make a slot with no name, judged like any other);
  ``response.output_text.delta``: the repetition poll;
- ``response.function_call_arguments.done`` and ``response.output_item.done``: the close
  evidence for that item — the only evidence this lane has — with the complete argument text,
  which wins over the fragments (a call the agent runs: its request object). A stream torn with
  one of these calls open drops it as ``truncated``, as it drops an open function call;
- ``response.completed`` / ``response.incomplete`` / ``response.failed``: an ending with the
  status (``incomplete``: its reason, e.g. ``max_output_tokens``), model, id and usage;
  ``error``: an ending.

The first ending decides; after it every other event is refused and counted (``content``, or
the ending's kind), while the usage a later ending carries is still read. No ending: torn.
Free-form ``custom_tool_call`` items are not JSON-argument calls and are not judged here.
"""

from __future__ import annotations

from typing import Final

from otel_toolturn.lanes.openai_responses import REQUEST_FIELDS
from otel_toolturn.streams._frame import Getter, field, int_or_none
from otel_toolturn.streams._model_check import note_response_model
from otel_toolturn.streams._observer_base import IndexedCallsObserver
from otel_toolturn.streams._provider_word import provider_word
from otel_toolturn.streams._report import StreamReport, Usage
from otel_toolturn.streams._tool_calls import CallSlot

ENDINGS: Final = frozenset({"response.completed", "response.incomplete", "response.failed"})
CAP_STOP: Final = "max_output_tokens"
_OPENING: Final = frozenset({"response.created", "response.in_progress", "response.queued"})


def _closed(slot: CallSlot) -> bool:
    return slot.closed


def _request(slot: CallSlot, item: object, item_type: object) -> None:
    """A call the agent runs: named by its item type, its arguments the object it asks with (when it is one)."""
    slot.name = slot.name or str(item_type)
    request = field(item, REQUEST_FIELDS[item_type])
    if isinstance(request, dict):
        slot.initial = dict(request)
    elif request is not None:
        model_dump = getattr(request, "model_dump", None)
        dumped = model_dump(mode="json", exclude_unset=True) if callable(model_dump) else None
        if isinstance(dumped, dict):
            slot.initial = dumped


def finish_word(response: object) -> str:
    """Return a final response's finish word: its status, or for ``incomplete`` the reason it gives."""
    status = field(response, "status")
    if status == "incomplete":
        reason = field(field(response, "incomplete_details"), "reason")
        if reason is not None:
            return provider_word(reason)
    return provider_word(status)


class OpenAIResponsesObserver(IndexedCallsObserver):
    """Observes one Responses stream; ``finish()`` gives its ``StreamReport``."""

    __slots__ = ("_finish",)

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None = None) -> None:
        super().__init__(requested_model=requested_model, max_output_tokens=max_output_tokens)
        self._finish: str | None = None

    def _read_fields(self, event: object, get: Getter) -> None:
        kind = get(event, "type", None)
        if kind == "response.output_text.delta":
            if self._ended:
                self._ledger.note("content", kind)
                return
            delta = get(event, "delta", None)
            if type(delta) is str:
                self._poll.feed(delta)
        elif kind == "response.function_call_arguments.delta":
            if self._ended:
                self._ledger.note("content", kind)
                return
            index = get(event, "output_index", None)
            slot = self._slots.get(index) or self._unopened(index)
            delta = get(event, "delta", None)
            if type(delta) is str:
                slot.parts.append(delta)
        else:
            self._read_other(kind, event)

    def _read_other(self, kind: object, event: object) -> None:
        if kind in ENDINGS:
            self._ending(event)
            return
        if kind == "error":
            if self._ledger.decide("error", field(event, "code")):
                self._ended = True
            return
        if self._ended:
            if type(kind) is str:
                self._ledger.note("content", kind)
            return
        if kind == "response.function_call_arguments.done":
            index = field(event, "output_index")
            slot = self._slots.get(index) or self._unopened(index)
            self._close(slot, field(event, "arguments"), field(event, "name"), None)
        elif kind == "response.output_item.added":
            self._open(event)
        elif kind == "response.output_item.done":
            item = field(event, "item")
            item_type = field(item, "type")
            if item_type == "function_call" or item_type in REQUEST_FIELDS:
                index = field(event, "output_index")
                closing = self._slots.get(index) or self._unopened(index)
                if item_type != "function_call":
                    _request(closing, item, item_type)
                self._close(closing, field(item, "arguments"), field(item, "name"), field(item, "call_id"))
        elif kind in _OPENING:
            self._response(field(event, "response"))

    def _open(self, event: object) -> None:
        item = field(event, "item")
        item_type = field(item, "type")
        if item_type != "function_call" and item_type not in REQUEST_FIELDS:
            return
        index = field(event, "output_index")
        call_id, name = field(item, "call_id"), field(item, "name")
        slot = CallSlot(
            index=index if type(index) is int else len(self._slots),
            call_id=call_id if type(call_id) is str else "",
            name=name if type(name) is str else "",
        )
        if item_type != "function_call":
            _request(slot, item, item_type)
        self._place(index, slot)

    def _unopened(self, index: object) -> CallSlot:
        """A slot for argument frames whose ``output_item.added`` never came: no name unless a done frame gives one."""
        slot = CallSlot(index=index if type(index) is int else len(self._slots))
        self._slots[index] = slot
        return slot

    @staticmethod
    def _close(slot: CallSlot, arguments: object, name: object, call_id: object) -> None:
        slot.closed = True
        if type(arguments) is str:
            slot.final = arguments
        if not slot.name and type(name) is str:
            slot.name = name
        if not slot.call_id and type(call_id) is str:
            slot.call_id = call_id

    def _response(self, response: object) -> None:
        response_id = field(response, "id")
        if type(response_id) is str:
            self._response_id = response_id
        self._model = note_response_model(self._model, field(response, "model"), self._requested)

    def _ending(self, event: object) -> None:
        response = field(event, "response")
        if self._ledger.decide("finish", finish_word(response)):
            self._ended = True
            self._finish = finish_word(response)
            self._response(response)
        self._take_usage(usage_of(field(response, "usage")))

    def finish(self) -> StreamReport:
        """Return the report of everything fed so far; calling it again returns an equal report."""
        return self._ended_once_report(
            self._every_slot(),
            _closed,
            word=self._finish,
            cap_word=CAP_STOP,
        )


def usage_of(usage: object) -> Usage:
    """The token counts of one Responses ``usage`` record.

    ``input_tokens`` (cached ones included), ``output_tokens`` and ``input_tokens_details.cached_tokens``.
    """
    return Usage(
        input_tokens=int_or_none(field(usage, "input_tokens")),
        output_tokens=int_or_none(field(usage, "output_tokens")),
        cache_read_input_tokens=int_or_none(field(field(usage, "input_tokens_details"), "cached_tokens")),
    )
