"""The turn core the three lane observers share: call slots, frame reading, and the settling.

A lane observer reads its wire into ``CallSlot`` values and a few scalars; ``settle`` judges
every slot with the seed-001 rules and builds the one ``StreamReport``. Nothing here knows a
wire format beyond "a frame is a mapping or an object with attributes".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from types import MappingProxyType
from typing import Final, cast

from otel_toolturn.streams._args import name_missing_cause, parse_streamed_tool_args
from otel_toolturn.streams._cap import TurnCapFacts, model_output_invalid_of, truncation_cause_clause
from otel_toolturn.streams._echo import EMPTY_SEAT, ModelSeat
from otel_toolturn.streams._ledger import StreamEndLedger
from otel_toolturn.streams._notes import turn_notes_of
from otel_toolturn.streams._repetition import RepetitionPoll
from otel_toolturn.streams._report import (
    RepetitionReport,
    StreamDrop,
    StreamedCall,
    StreamReport,
    Usage,
)

DONE_SENTINEL: Final = "[DONE]"
"""The Chat Completions stream's closing ``data:`` payload (not JSON; not a frame)."""


def field(obj: object, key: str) -> object:
    """Read ``obj[key]`` (a JSON dict) or ``obj.key`` (an SDK object); ``None`` when absent."""
    if type(obj) is dict:
        return obj.get(key)
    return getattr(obj, key, None)


Getter = Callable[[object, str, None], object]
"""Reads one key of a frame: ``dict.get`` for JSON dicts, ``getattr`` for SDK objects (same call shape)."""
DICT_GET: Final = cast("Getter", dict.get)
ATTR_GET: Final[Getter] = getattr


def int_or_none(value: object) -> int | None:
    """``value`` when it is an ``int`` (not a ``bool``), else ``None``."""
    return value if type(value) is int else None


class Undecodable:
    """A raw frame that was not JSON (the ``bad_frame`` cause)."""

    __slots__ = ()


UNDECODABLE: Final = Undecodable()


def decode_frame(raw: str | bytes) -> object:
    """Decode a raw ``data:`` payload: JSON, ``None`` for ``[DONE]``, ``UNDECODABLE`` when not JSON."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if text.strip() == DONE_SENTINEL:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return UNDECODABLE


class CallSlot:
    """One streamed tool call as the wire built it: identity, name, argument fragments, close evidence.

    ``parts`` are the argument fragments as the frames carried them (a fragment that is not a
    string is left out of the text); ``final`` is the complete argument text a done frame stated
    (it wins over the fragments); ``initial`` is an arguments object the call's opening frame
    already carried.
    """

    __slots__ = ("call_id", "choice", "closed", "final", "index", "initial", "name", "parts")

    def __init__(self, *, index: int, choice: int = 0, call_id: str = "", name: str = "") -> None:
        self.index = index
        self.choice = choice
        self.call_id = call_id
        self.name = name
        self.parts: list[object] = []
        self.closed = False
        self.final: str | None = None
        self.initial: dict[str, object] | None = None

    def text(self) -> str:
        """Return the whole argument text: the done frame's, else the string fragments joined."""
        if self.final is not None:
            return self.final
        return "".join([part for part in self.parts if type(part) is str])


def judge(slot: CallSlot, *, closed: bool) -> StreamedCall | StreamDrop:
    """One slot's verdict: a whole call, or a one-call drop with its cause.

    The name is judged first (``name_missing_cause``), then the arguments
    (``parse_streamed_tool_args``). An opening frame's arguments object stands for a call whose
    wire sent no argument text, under the same ``closed`` evidence.
    """
    ids = (slot.call_id,) if slot.call_id else ()
    if not slot.name:
        return StreamDrop(cause=name_missing_cause(closed=closed), count=1, call_ids=ids)
    text = slot.text()
    if not text and slot.initial is not None:
        arguments = dict(slot.initial) if closed else None
    else:
        arguments = parse_streamed_tool_args(text, closed=closed)
    if arguments is None:
        return StreamDrop(cause="truncated", count=1, call_ids=ids)
    return StreamedCall(
        call_id=slot.call_id,
        name=slot.name,
        arguments=MappingProxyType(arguments),
        index=slot.index,
        choice=slot.choice,
    )


def settle(
    *,
    slots: Iterable[CallSlot],
    closed_of: Callable[[CallSlot], bool],
    ledger: StreamEndLedger,
    torn: bool,
    finish_reasons: tuple[str, ...],
    response_id: str | None,
    requested_model: str | None,
    seat: ModelSeat,
    cap: TurnCapFacts,
    repetition: RepetitionReport,
    usage: Usage,
    bad_frames: int,
    frames_unread: int,
    events: int,
) -> StreamReport:
    """Judge every slot and build the report (pure: reads the slots, never alters them)."""
    calls: list[StreamedCall] = []
    cut: list[str] = []
    unnamed: list[str] = []
    truncated_count = unnamed_count = 0
    for slot in sorted(slots, key=lambda s: (s.choice, s.index)):
        verdict = judge(slot, closed=closed_of(slot))
        if isinstance(verdict, StreamedCall):
            calls.append(verdict)
        elif verdict.cause == "truncated":
            truncated_count += 1
            cut.extend(verdict.call_ids)
        else:
            unnamed_count += 1
            unnamed.extend(verdict.call_ids)
    drops: list[StreamDrop] = []
    if truncated_count:
        drops.append(StreamDrop(cause="truncated", count=truncated_count, call_ids=tuple(cut)))
    if unnamed_count:
        drops.append(StreamDrop(cause="unnamed", count=unnamed_count, call_ids=tuple(unnamed)))
    if bad_frames:
        drops.append(StreamDrop(cause="bad_frame", count=bad_frames))
    clause = truncation_cause_clause(cap, terminal_frame_seen=ledger.decided is not None) if truncated_count else ""
    return StreamReport(
        calls=tuple(calls),
        drops=tuple(drops),
        ends_ignored=ledger.ignored,
        torn=torn,
        finish_reasons=finish_reasons,
        response_id=response_id,
        requested_model=requested_model,
        response_model=seat.reported,
        substituted_model=seat.substituted,
        echo_dropped=int(seat.echo_dropped),
        truncation_clause=clause,
        repetition=repetition,
        usage=usage,
        events=events,
        notes=turn_notes_of(drops, clause=clause),
        model_output_invalid=model_output_invalid_of(truncated=truncated_count, unnamed=unnamed_count, cap=cap),
        frames_unread=frames_unread,
    )


TEXT_BATCH: Final = 256
"""How many streamed text fragments an observer holds before it hands them to its repetition poll."""


class ObserverBase:
    """The state every lane's observer keeps, and the one reading of an incoming event.

    Each lane's ``feed`` reads a dict with ``dict.get`` and an SDK object with ``getattr``; a raw
    ``data:`` string or bytes goes through ``_decode`` first. (The type dispatch stays inline in
    ``feed``: it runs once per event, on the hot path.) A lane may hold its streamed text for the
    repetition poll and hand it over in batches (``_hold_text``, ``_poll_texts``); ``_report``
    hands over what is still held.
    """

    __slots__ = (
        "_bad",
        "_events",
        "_input_tokens",
        "_ledger",
        "_max_output_tokens",
        "_output_tokens",
        "_poll",
        "_requested",
        "_response_id",
        "_seat",
        "_texts",
        "_unread",
    )

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None) -> None:
        self._requested = requested_model
        self._max_output_tokens = max_output_tokens
        self._ledger = StreamEndLedger()
        self._poll = RepetitionPoll()
        self._texts: list[object] = []
        self._seat: ModelSeat = EMPTY_SEAT
        self._response_id: str | None = None
        self._input_tokens: int | None = None
        self._output_tokens: int | None = None
        self._events = 0
        self._bad = 0
        self._unread = 0

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

    def _hold_text(self, text: object) -> None:
        """Keep one streamed text fragment for the repetition poll (``_poll_texts`` hands it over)."""
        texts = self._texts
        texts.append(text)
        if len(texts) >= TEXT_BATCH:
            self._poll_texts()

    def _poll_texts(self) -> None:
        """Hand the held text fragments (the ``str`` ones) to the repetition poll, in order; count their events.

        Fragments are held and handed over in batches rather than one at a time: the poll sees
        the very same fragments in the same order, and only the report reads its outcome, so
        the report is the same; but its polls then run back to back (with the interpreter and
        caches warm), not interleaved with the SDK's own work on every event, where the same
        instructions cost several times more. A held fragment stands for its event, which is
        counted here (``_hold_text`` does not count it).
        """
        texts = self._texts
        self._poll.feed_many(texts)
        self._events += len(texts)
        texts.clear()

    def _read_usage(self, usage: object, *, input_key: str, output_key: str) -> None:
        """Take the provider's token counts from a usage record; a count it does not state is kept."""
        if usage is None:
            return
        input_tokens = int_or_none(field(usage, input_key))
        if input_tokens is not None:
            self._input_tokens = input_tokens
        output_tokens = int_or_none(field(usage, output_key))
        if output_tokens is not None:
            self._output_tokens = output_tokens

    def _report(
        self,
        *,
        slots: Iterable[CallSlot],
        closed_of: Callable[[CallSlot], bool],
        finish_reasons: tuple[str, ...],
        cap_stop: bool,
        torn: bool,
        kept: int = 0,
    ) -> StreamReport:
        """The report of everything fed so far, from the lane's calls, endings and cap stop.

        ``kept``: events a lane did not count as they came, because a fragment it kept (in a call
        slot) stands for each.
        """
        self._poll_texts()
        return settle(
            slots=slots,
            closed_of=closed_of,
            ledger=self._ledger,
            torn=torn,
            finish_reasons=finish_reasons,
            response_id=self._response_id,
            requested_model=self._requested,
            seat=self._seat,
            cap=TurnCapFacts(cap_stop=cap_stop, output_tokens=self._output_tokens, cap_tokens=self._max_output_tokens),
            repetition=self._poll.report(),
            usage=Usage(input_tokens=self._input_tokens, output_tokens=self._output_tokens),
            bad_frames=self._bad,
            frames_unread=self._unread,
            events=self._events + kept,
        )
