"""The Chat Completions stream observer: a pure reducer over ``ChatCompletionChunk`` frames.

Reads each chunk (the SDK's own object or the raw SSE JSON as a dict; a raw ``data:`` string or
bytes is decoded here, ``[DONE]`` is the close sentinel, anything else that is not JSON counts as
``bad_frame``) and never alters it. The ``chat.completions.stream()`` helper's events may be fed
as they are: its ``chunk`` events carry the raw chunk, which is read; its other events repeat what
the chunks said and are skipped. What it reads:

- every choice by its ``index`` (several choices with ``n > 1``): ``delta.content`` (choice 0
  feeds the repetition poll), ``delta.tool_calls`` by their ``index`` — the id (the first one
  sent), the name (fragments joined; a whole name repeated on later chunks is read once) and
  the argument fragments — and ``finish_reason``; tool-call deltas without an ``index`` (some
  compatible servers) are told apart by their ids: a fragment with an id begins the next call;
- ``model`` and ``id`` of each chunk; ``usage`` from the usage chunk (``choices`` empty);
- an in-band ``error`` object: an ending for every choice.

Close evidence: this lane has no per-call close frame. A call is closed only when its choice's
finish reason says the model finished its turn (``TURN_FINISHED``) — not ``length``, not
``content_filter``, not a missing finish.

Each choice's first finish reason decides that choice; the stream's first ending is the
ledger's decision. After a choice finished, its content and tool-call deltas and a second
finish reason are refused and counted; the usage chunk is always read. A choice that never
finished (or a stream with no choice and no error): torn.
"""

from __future__ import annotations

from typing import Final

from otel_toolturn.streams._frame import ATTR_GET, DICT_GET, Getter, field, int_or_none
from otel_toolturn.streams._model_check import note_response_model
from otel_toolturn.streams._observer_base import ObserverBase
from otel_toolturn.streams._provider_word import provider_word
from otel_toolturn.streams._report import StreamReport, Usage
from otel_toolturn.streams._tool_calls import CallSlot

TURN_FINISHED: Final = frozenset({"stop", "tool_calls", "function_call"})
"""Finish reasons that say the model finished its turn (the lane's close evidence)."""
CAP_STOP: Final = "length"


class OpenAIChatObserver(ObserverBase):
    """Observes one Chat Completions stream; ``finish()`` gives its ``StreamReport``."""

    __slots__ = (
        "_errored",
        "_finish",
        "_seen",
        "_slots",
        "_unindexed",
    )

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None = None) -> None:
        super().__init__(requested_model=requested_model, max_output_tokens=max_output_tokens)
        self._slots: dict[tuple[int, object], CallSlot] = {}
        self._unindexed = 0
        self._finish: dict[int, str] = {}
        self._seen: set[int] = set()
        self._errored = False

    def _read_fields(self, event: object, get: Getter) -> None:
        choices = get(event, "choices", None)
        if choices is None:
            if get is DICT_GET and get(event, "error", None) is not None:
                self._error(get(event, "error", None))
                return
            if get(event, "type", None) != "chunk":
                return
            event = get(event, "chunk", None)  # the stream helper's ChunkEvent carries the raw chunk
            get = DICT_GET if type(event) is dict else ATTR_GET
            choices = get(event, "choices", None)
        if not self._errored:
            model = get(event, "model", None)
            if model != self._model.name:
                self._model = note_response_model(self._model, model, self._requested)
            if self._response_id is None:
                response_id = get(event, "id", None)
                if type(response_id) is str:
                    self._response_id = response_id
        if type(choices) is list:
            for choice in choices:
                self._choice(get, choice)
        usage = get(event, "usage", None)
        if usage is not None:
            self._take_usage(usage_of(usage))

    def _error(self, error: object) -> None:
        word = field(error, "type") or field(error, "code")
        if self._ledger.decide("error", word):
            self._errored = True

    def _choice(self, get: Getter, choice: object) -> None:
        index = get(choice, "index", None)
        if type(index) is not int:
            index = 0
        delta = get(choice, "delta", None)
        reason = get(choice, "finish_reason", None)
        if self._errored or index in self._finish:
            self._refuse(get, delta, reason)
            return
        self._seen.add(index)
        content = get(delta, "content", None)
        if content and index == 0 and type(content) is str:
            self._poll.feed(content)
        tool_calls = get(delta, "tool_calls", None)
        if tool_calls and type(tool_calls) is list:
            for delta_call in tool_calls:
                self._tool_delta(get, index, delta_call)
        if reason is not None:
            if not self._finish:
                self._ledger.decide("finish", reason)
            self._finish[index] = provider_word(reason)

    def _refuse(self, get: Getter, delta: object, reason: object) -> None:
        if get(delta, "content", None):
            self._ledger.note("content", "content")
        if get(delta, "tool_calls", None):
            self._ledger.note("content", "tool_calls")
        if reason is not None:
            self._ledger.note("finish", reason)

    def _tool_delta(self, get: Getter, choice: int, delta_call: object) -> None:
        call_index = get(delta_call, "index", None)
        if type(call_index) is not int:  # no index: a fragment carrying an id begins the next call
            if get(delta_call, "id", None):
                self._unindexed += 1
            call_index = ("unindexed", self._unindexed)
        key = (choice, call_index)
        slot = self._slots.get(key)
        if slot is None:
            slot = CallSlot(index=call_index if type(call_index) is int else len(self._slots), choice=choice)
            self._slots[key] = slot
        if not slot.call_id:
            call_id = get(delta_call, "id", None)
            if type(call_id) is str:
                slot.call_id = call_id
        function = get(delta_call, "function", None)
        if function is None:
            return
        name = get(function, "name", None)
        if name and type(name) is str and name != slot.name:
            slot.name += name
        part = get(function, "arguments", None)
        if part and type(part) is str:
            slot.parts.append(part)

    def _closed(self, slot: CallSlot) -> bool:
        return self._finish.get(slot.choice) in TURN_FINISHED

    def finish(self) -> StreamReport:
        """Return the report of everything fed so far; calling it again returns an equal report."""
        reasons = tuple(self._finish[i] for i in sorted(self._finish))
        torn = not self._errored and (not self._seen or any(i not in self._finish for i in self._seen))
        return self._report(
            slots=self._slots.values(),
            closed_of=self._closed,
            finish_reasons=reasons,
            cap_stop=CAP_STOP in reasons,
            torn=torn,
        )


def usage_of(usage: object) -> Usage:
    """The token counts of one Chat ``usage`` record.

    ``prompt_tokens`` (cached ones included), ``completion_tokens`` and ``prompt_tokens_details.cached_tokens``.
    """
    return Usage(
        input_tokens=int_or_none(field(usage, "prompt_tokens")),
        output_tokens=int_or_none(field(usage, "completion_tokens")),
        cache_read_input_tokens=int_or_none(field(field(usage, "prompt_tokens_details"), "cached_tokens")),
    )
