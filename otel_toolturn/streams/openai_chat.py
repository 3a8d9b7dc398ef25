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

from otel_toolturn.streams._echo import echo_folded_word, note_response_model
from otel_toolturn.streams._report import StreamReport
from otel_toolturn.streams._turn import (
    ATTR_GET,
    DICT_GET,
    TEXT_BATCH,
    CallSlot,
    Getter,
    ObserverBase,
    field,
)

TURN_FINISHED: Final = frozenset({"stop", "tool_calls", "function_call"})
"""Finish reasons that say the model finished its turn (the lane's close evidence)."""
CAP_STOP: Final = "length"
_READ_ERRORS: Final = (AttributeError, TypeError, ValueError, KeyError, IndexError)


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

    def feed(self, event: object) -> None:
        """Read one chunk; never alters it, never raises.

        An event is counted once: by the text fragment it kept for the repetition poll, when it
        kept one (``_poll_texts`` counts those), else here.
        """
        if not self._errored and self._response_id is not None and not self._finish:
            # The hot path: a one-choice SDK chunk with a text or argument fragment and nothing
            # else new, nearly every chunk of a stream (the SDK's own work between two chunks
            # evicts the interpreter's state, so this path runs as few bytecodes as it can).
            # Everything it needs is read first and nothing is kept until all of it matched;
            # anything else (a dict or raw frame has no such attributes) is read the general
            # way, by ``_read``, which reads the same chunk to the same state.
            try:
                choices = event.choices  # type: ignore[attr-defined]
                if (
                    type(choices) is list
                    and len(choices) == 1
                    and event.usage is None  # type: ignore[attr-defined]
                    and event.model == self._seat.reported  # type: ignore[attr-defined]
                ):
                    choice = choices[0]
                    if choice.index == 0 and choice.finish_reason is None and 0 in self._seen:
                        delta = choice.delta
                        content = delta.content
                        tool_calls = delta.tool_calls
                        if tool_calls is None:
                            if content:
                                texts = self._texts  # ``_hold_text``, inline
                                texts.append(content)
                                if len(texts) >= TEXT_BATCH:
                                    self._poll_texts()
                            else:
                                self._events += 1
                            return
                        if (
                            not content
                            and type(tool_calls) is list
                            and len(tool_calls) == 1
                            and self._fragment(tool_calls[0])
                        ):
                            self._events += 1
                            return
            except _READ_ERRORS:
                pass
        self._events += 1
        self._read(event)

    def _fragment(self, delta_call: object) -> bool:
        """The hot path's argument fragment: kept in its call's slot (``True``) when nothing else in it is new."""
        call_index = delta_call.index  # type: ignore[attr-defined]
        if type(call_index) is not int:
            return False
        slot = self._slots[0, call_index]
        function = delta_call.function  # type: ignore[attr-defined]
        if not slot.call_id or function is None:  # with the id read, the general way skips another
            return False
        name = function.name
        if name and name != slot.name:
            return False
        part = function.arguments
        if part:
            slot.parts.append(part)  # kept as it came: ``CallSlot.text`` leaves out what is not a string
        return True

    def _read(self, event: object) -> None:
        """Read one chunk the general way: ``dict.get`` on a dict, ``getattr`` on an object."""
        try:
            cls = type(event)
            if cls is str or cls is bytes:
                event = self._decode(event)  # type: ignore[arg-type]
                if event is None:
                    return
                get = DICT_GET
            else:
                get = DICT_GET if cls is dict else ATTR_GET
            choices = get(event, "choices", None)
            if choices is None:
                if type(event) is dict and get(event, "error", None) is not None:
                    self._error(get(event, "error", None))
                    return
                if get(event, "type", None) != "chunk":
                    return
                event = get(event, "chunk", None)  # the stream helper's ChunkEvent carries the raw chunk
                choices = get(event, "choices", None)
            if not self._errored:
                model = get(event, "model", None)
                if model != self._seat.reported:
                    self._seat = note_response_model(self._seat, model, self._requested)
                if self._response_id is None:
                    response_id = get(event, "id", None)
                    if type(response_id) is str:
                        self._response_id = response_id
            if type(choices) is list:
                for choice in choices:
                    self._choice(get, choice)
            self._read_usage(get(event, "usage", None), input_key="prompt_tokens", output_key="completion_tokens")
        except _READ_ERRORS:
            self._unread += 1

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
        if index not in self._seen:
            self._seen.add(index)
        content = get(delta, "content", None)
        if content and index == 0 and type(content) is str:
            if self._texts:  # the hot path's held fragments come first
                self._poll_texts()
            self._poll.feed(content)
        tool_calls = get(delta, "tool_calls", None)
        if tool_calls and type(tool_calls) is list:
            for delta_call in tool_calls:
                self._tool_delta(get, index, delta_call)
        if reason is not None:
            if not self._finish:
                self._ledger.decide("finish", reason)
            self._finish[index] = echo_folded_word(reason)

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
