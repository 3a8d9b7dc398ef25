"""What every lane's stream observer keeps, and the steps they share: decoding, usage, the report.

A lane's observer (``anthropic_messages``, ``openai_chat``, ``openai_responses``, ``gemini``,
``bedrock_converse``) subclasses ``ObserverBase``: ``feed`` counts the event and hands it to the
lane's ``_read``, which reads it once, the one way its lane defines (by default: the event opened
by ``_opened``, then its fields read by the lane's ``_read_fields``), and keeps the facts here
(the ledger, the repetition poll, the reported model, the response id, the token counts, the
frames it could not read); its ``finish`` hands its call slots, endings
and cap stop to ``_report``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar

from otel_toolturn.streams._frame import ATTR_GET, DICT_GET, UNDECODABLE, Getter, decode_frame
from otel_toolturn.streams._ledger import StreamEndLedger
from otel_toolturn.streams._model_check import ReportedModel
from otel_toolturn.streams._repetition import RepetitionPoll
from otel_toolturn.streams._report import StreamReport, Usage
from otel_toolturn.streams._settle import settle
from otel_toolturn.streams._tool_calls import CallSlot
from otel_toolturn.streams._truncation_cause import OutputCapFacts

READ_ERRORS: tuple[type[Exception], ...] = (AttributeError, TypeError, ValueError, KeyError, IndexError)
"""What reading an event of an unexpected shape raises: the event is counted as unread."""


class ObserverBase:
    """The state every lane's observer keeps (see the module docstring)."""

    read_errors: ClassVar[tuple[type[Exception], ...]] = READ_ERRORS
    """What the lane's ``_read`` may raise on an event of an unexpected shape."""

    __slots__ = (
        "_bad",
        "_events",
        "_ledger",
        "_max_output_tokens",
        "_model",
        "_poll",
        "_requested",
        "_response_id",
        "_unread",
        "_usage",
    )

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None) -> None:
        self._requested = requested_model
        self._max_output_tokens = max_output_tokens
        self._ledger = StreamEndLedger()
        self._poll = RepetitionPoll()
        self._model = ReportedModel()
        self._response_id: str | None = None
        self._usage = Usage()
        self._events = 0
        self._bad = 0
        self._unread = 0

    def feed(self, event: object) -> None:
        """Read one event (the lane's ``_read``); never alters it, never raises: one it cannot read is counted."""
        self._events += 1
        try:
            self._read(event)
        except self.read_errors:
            self._unread += 1

    def _read(self, event: object) -> None:
        """Read one event, the lane's way; may raise one of ``read_errors`` on an unexpected shape.

        By default the event is opened (``_opened``) and, unless a raw frame held nothing, its fields are
        read by ``_read_fields``.
        """
        opened = self._opened(event)
        if opened is not None:
            self._read_fields(*opened)

    def _read_fields(self, event: object, get: Getter) -> None:
        """Read one opened event's fields with ``get``; may raise one of ``read_errors`` on an unexpected shape."""
        raise NotImplementedError

    def _opened(self, event: object) -> tuple[object, Getter] | None:
        """The event to read and how to read its fields: a dict, a decoded raw frame, or an SDK object.

        ``None`` when a raw frame holds nothing to read (see ``_decode``).
        """
        cls = type(event)
        if cls is dict:
            return event, DICT_GET
        if cls is str or cls is bytes:
            decoded = self._decode(event)  # type: ignore[arg-type]
            return None if decoded is None else (decoded, DICT_GET)
        return event, ATTR_GET

    def _decode(self, raw: str | bytes) -> object:
        """A raw ``data:`` payload as a dict to read; ``None`` when there is nothing to read.

        ``[DONE]`` reads as nothing; a frame that is not JSON is counted as ``bad_frame``, JSON that
        is not an object as unread.
        """
        decoded = decode_frame(raw)
        if decoded is None:
            return None
        if decoded is UNDECODABLE:
            self._bad += 1
            return None
        if type(decoded) is not dict:
            self._unread += 1
            return None
        return decoded

    def _take_usage(self, usage: Usage) -> None:
        """Take the counts a usage record states (the lane's ``usage_of``); a count it does not state is kept."""
        self._usage = self._usage.updated(usage)

    def _ended_once_report(
        self,
        slots: Iterable[CallSlot],
        closed_of: Callable[[CallSlot], bool],
        *,
        word: str | None,
        cap_word: str,
        server_open: tuple[str, ...] = (),
    ) -> StreamReport:
        """The report of a stream ended once at most (``word``: its finish word); torn when nothing ended it."""
        return self._report(
            slots=slots,
            closed_of=closed_of,
            finish_reasons=(word,) if word is not None else (),
            cap_stop=word == cap_word,
            torn=self._ledger.decided is None,
            server_open=server_open,
        )

    def _report(
        self,
        *,
        slots: Iterable[CallSlot],
        closed_of: Callable[[CallSlot], bool],
        finish_reasons: tuple[str, ...],
        cap_stop: bool,
        torn: bool,
        withheld_calls: int = 0,
        server_open: tuple[str, ...] = (),
    ) -> StreamReport:
        """The report of everything fed so far, from the lane's calls, endings, cap stop and withheld calls.

        ``server_open``: the ids of the calls the server runs (Anthropic server and MCP tools) that the
        stream left open, each counted as an open cut call.
        """
        return settle(
            slots=slots,
            closed_of=closed_of,
            ledger=self._ledger,
            torn=torn,
            finish_reasons=finish_reasons,
            response_id=self._response_id,
            requested_model=self._requested,
            model=self._model,
            cap=OutputCapFacts(
                cap_stop=cap_stop, output_tokens=self._usage.output_tokens, cap_tokens=self._max_output_tokens
            ),
            repetition=self._poll.report(),
            usage=self._usage,
            bad_frames=self._bad,
            frames_unread=self._unread,
            events=self._events,
            withheld_calls=withheld_calls,
            server_open=server_open,
        )


class IndexedCallsObserver(ObserverBase):
    """An observer whose calls open at an index of the stream (a content block, an output item, a call index).

    A second call opened at an index does not erase the first: that one is kept and judged like any
    other (``_every_slot``). ``_ended``: the lane's ending was read.
    """

    __slots__ = ("_ended", "_replaced", "_slots")

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None) -> None:
        super().__init__(requested_model=requested_model, max_output_tokens=max_output_tokens)
        self._slots: dict[object, CallSlot] = {}
        self._replaced: list[CallSlot] = []
        self._ended = False

    def _place(self, index: object, slot: CallSlot) -> None:
        """``slot`` opened at ``index``; a call opened there before is kept."""
        replaced = self._slots.get(index)
        if replaced is not None:
            self._replaced.append(replaced)
        self._slots[index] = slot

    def _every_slot(self) -> list[CallSlot]:
        """Every call opened, in order: those opened over again first, then one per index."""
        return [*self._replaced, *self._slots.values()]
