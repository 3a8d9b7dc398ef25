"""Ollama's native chat stream observer and whole-response check: pure readers of ``/api/chat`` replies.

Ollama's SDK (``ollama.Client.chat``) takes a Chat-shaped request (the ``ollama`` dialect of the Chat lane
reads it) and answers in Ollama's own format (https://github.com/ollama/ollama/blob/main/docs/api.md): one
object, or streamed, NDJSON lines of the same shape. A line is the SDK's ``ChatResponse``, its JSON as a dict,
or its raw text; never altered. What the observer reads:

- ``message.content``: text, to the repetition poll (``message.thinking`` is not);
- ``message.tool_calls``: each call whole (the server parses a call before it sends it), its
  ``function.arguments`` an object: closed as it arrives (an arguments value that is no object is judged so);
- ``done: true``: the ending, ``done_reason`` (``stop``, ``length``, ``load``, ``unload``), and the counts
  ``prompt_eval_count`` (input) and ``eval_count`` (output).

The first ``done`` line decides (``StreamEndLedger``); content after it is refused and counted. No ``done``
line: torn. Ollama names the model it ran, but as the local tag the caller asked for, so no substitution is
judged.

``check_ollama_chat_response`` reads a whole reply the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from otel_toolturn.streams._frame import Getter, field
from otel_toolturn.streams._observer_base import ObserverBase
from otel_toolturn.streams._provider_word import provider_word
from otel_toolturn.streams._report import StreamReport, Usage
from otel_toolturn.streams._tool_calls import NOT_AN_OBJECT, CallSlot

CAP_STOP: Final = "length"


def _closed(slot: CallSlot) -> bool:
    return slot.closed


def _count(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


def usage_of(line: object) -> Usage:
    """The token counts a ``done`` line (or a whole reply) states."""
    return Usage(input_tokens=_count(field(line, "prompt_eval_count")), output_tokens=_count(field(line, "eval_count")))


def slot_of(call: object, index: int) -> CallSlot:
    """One whole call of ``message.tool_calls``, closed: its name, and its arguments object (or that it is none)."""
    function = field(call, "function")
    name = field(function, "name")
    call_id = field(call, "id")
    slot = CallSlot(
        index=index, call_id=call_id if type(call_id) is str else "", name=name if type(name) is str else ""
    )
    arguments = field(function, "arguments")
    if isinstance(arguments, Mapping):
        slot.final = json.dumps(dict(arguments), default=str)
    elif arguments is not None:
        slot.final = NOT_AN_OBJECT
    slot.closed = True
    return slot


class OllamaChatObserver(ObserverBase):
    """Observes one Ollama ``chat(stream=True)``; ``finish()`` gives its ``StreamReport``."""

    __slots__ = ("_ended", "_finish", "_slots")

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None = None) -> None:
        super().__init__(requested_model=requested_model, max_output_tokens=max_output_tokens)
        self._slots: list[CallSlot] = []
        self._ended = False
        self._finish: str | None = None

    def _read_fields(self, event: object, get: Getter) -> None:
        message = get(event, "message", None)
        text = field(message, "content")
        calls = field(message, "tool_calls")
        if self._ended:
            if text or calls:
                self._ledger.note("content", "message")
            return
        if type(text) is str and text:
            self._poll.feed(text)
        for call in calls if isinstance(calls, (list, tuple)) else ():
            self._slots.append(slot_of(call, len(self._slots)))
        if get(event, "done", None) is True:
            self._take_usage(usage_of(event))
            reason = get(event, "done_reason", None)
            if self._ledger.decide("finish", reason):
                self._ended = True
                if type(reason) is str:
                    self._finish = provider_word(reason)

    def finish(self) -> StreamReport:
        """Return the report of everything fed so far; calling it again returns an equal report."""
        return self._ended_once_report(
            self._slots,
            _closed,
            word=self._finish,
            cap_word=CAP_STOP,
        )
