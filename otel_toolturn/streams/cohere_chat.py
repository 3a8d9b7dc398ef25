"""Cohere v2 chat's stream observer and whole-response check: pure readers of ``chat_stream`` / ``chat``.

Cohere's v2 chat takes a Chat-shaped request (the Chat lane reads it) and answers in its own
format. A stream event is an object with a ``type`` (the SDK's ``V2ChatStreamResponse`` members,
the raw SSE JSON as a dict, or its raw ``data:`` text); never altered. What the observer reads
(https://docs.cohere.com/v2/docs/streaming, https://docs.cohere.com/docs/tool-use-streaming):

- ``message-start``: the response ``id``;
- ``content-delta``: ``delta.message.content.text`` goes to the repetition poll (``thinking`` does not);
- ``tool-call-start``: a call slot at its ``index``, with ``delta.message.tool_calls``'s ``id``,
  ``function.name`` and any first ``function.arguments`` (a second start at the same index does
  not erase the first call, which is judged like any other);
- ``tool-call-delta``: one fragment of the call's argument text, ``delta.message.tool_calls.function.arguments``
  (fail-closed: the fragments joined must be a JSON object);
- ``tool-call-end``: the close evidence of the call at its index — the only one this format has;
- ``message-end``: the ending, ``delta.finish_reason`` (``COMPLETE``, ``TOOL_CALL``, ``MAX_TOKENS``,
  ``STOP_SEQUENCE``, ``ERROR``, ``TIMEOUT``; an ``error`` text there makes it an error ending),
  and ``delta.usage``;
- ``tool-plan-delta``, ``content-start``, ``content-end``, citations and ``debug``: nothing to judge.

The first ending decides (``StreamEndLedger``); content after it is refused and counted. No
``message-end``: torn. Usage: ``tokens.input_tokens`` and ``tokens.output_tokens`` (the counts the
model saw and wrote; ``billed_units`` are billing's), ``cached_tokens`` as the input read from cache.
The format names no model, so no substitution is judged.

``check_cohere_chat_response`` reads a whole ``chat`` response (``V2ChatResponse`` or its JSON) the
same way: every call of ``message.tool_calls`` is closed, except the last of a response the output
cap stopped (``MAX_TOKENS``).
"""

from __future__ import annotations

from typing import Final

from otel_toolturn.streams._frame import Getter, field
from otel_toolturn.streams._observer_base import IndexedCallsObserver
from otel_toolturn.streams._provider_word import provider_word
from otel_toolturn.streams._report import StreamReport, Usage
from otel_toolturn.streams._tool_calls import CallSlot

CAP_STOP: Final = "MAX_TOKENS"
_CONTENT: Final = frozenset({"content-start", "content-delta", "content-end", "tool-plan-delta"})
_CALLS: Final = frozenset({"tool-call-start", "tool-call-delta", "tool-call-end"})


def _closed(slot: CallSlot) -> bool:
    return slot.closed


def _str(value: object) -> str:
    return value if type(value) is str else ""


def _count(value: object) -> int | None:
    """A token count: an ``int``, or a whole non-negative ``float`` (the SDK types counts as floats)."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer() and value >= 0:
        return int(value)
    return None


def usage_of(usage: object) -> Usage:
    """The token counts of one Cohere ``usage`` record (a response's, or ``message-end``'s)."""
    tokens = field(usage, "tokens")
    return Usage(
        input_tokens=_count(field(tokens, "input_tokens")),
        output_tokens=_count(field(tokens, "output_tokens")),
        cache_read_input_tokens=_count(field(usage, "cached_tokens")),
    )


class CohereChatObserver(IndexedCallsObserver):
    """Observes one Cohere v2 ``chat_stream``; ``finish()`` gives its ``StreamReport``."""

    __slots__ = ("_finish",)

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None = None) -> None:
        super().__init__(requested_model=requested_model, max_output_tokens=max_output_tokens)
        self._finish: str | None = None

    def _read_fields(self, event: object, get: Getter) -> None:
        kind = get(event, "type", None)
        delta = get(event, "delta", None)
        if kind == "message-end":
            self._end(delta)
        elif self._ended:
            if kind in _CONTENT or kind in _CALLS:
                self._ledger.note("content", kind)
        elif kind == "message-start":
            response_id = get(event, "id", None)
            if self._response_id is None and type(response_id) is str:
                self._response_id = response_id
        elif kind == "content-delta":
            text = field(field(field(delta, "message"), "content"), "text")
            if type(text) is str:
                self._poll.feed(text)
        elif kind in _CALLS:
            self._call_event(kind, get(event, "index", None), field(field(delta, "message"), "tool_calls"))

    def _call_event(self, kind: object, index: object, call: object) -> None:
        """A ``tool-call-*`` event's part: a call opened, one argument fragment, or the call's close."""
        if kind == "tool-call-start":
            self._open(index, call)
            return
        slot = self._slots.get(index)
        if slot is None:
            return
        if kind == "tool-call-end":
            slot.closed = True
            return
        piece = field(field(call, "function"), "arguments")
        if type(piece) is str:
            slot.parts.append(piece)

    def _end(self, delta: object) -> None:
        usage = field(delta, "usage")
        if usage is not None:
            self._take_usage(usage_of(usage))
        reason = field(delta, "finish_reason")
        if field(delta, "error"):
            if self._ledger.decide("error", reason or "error"):
                self._ended = True
        elif self._ledger.decide("finish", reason):
            self._ended = True
            if reason is not None:
                self._finish = provider_word(reason)

    def _open(self, index: object, call: object) -> None:
        function = field(call, "function")
        slot = CallSlot(
            index=index if type(index) is int else len(self._slots),
            call_id=_str(field(call, "id")),
            name=_str(field(function, "name")),
        )
        first = field(function, "arguments")
        if type(first) is str and first:
            slot.parts.append(first)
        self._place(index, slot)

    def finish(self) -> StreamReport:
        """Return the report of everything fed so far; calling it again returns an equal report."""
        return self._ended_once_report(
            self._every_slot(),
            _closed,
            word=self._finish,
            cap_word=CAP_STOP,
        )
