"""One provider call's telemetry: its span, what the request hook decided, what the response told.

Role: the recording half. Reads a ``PreparedRequest`` and a ``StreamReport`` (from the stream
observers, never decided here) and emits the contract's span attributes, events and metric
points. ``finish`` ends the call exactly once, whichever path gets there first: the response
read, the stream exhausted, ``break``/``close()``/context exit, an exception, or the stream
being collected unread.

The span: one GenAI inference span ``chat {model}`` (CLIENT) per call, made current while the
request is sent. Never a second span for the same call:

- another GenAI instrumentation's span current at the call: the attributes and events go onto
  it, and ending it is left to its owner;
- the SDK's own call span (the anthropic SDK starts one inside the request when its client has a
  tracer): the record waits (``deferred``, buffering what it records), adopts that span when the
  SDK starts it (``adopt``), and holds the SDK's ``end`` until the response is recorded; a record
  whose SDK span never came starts its own, dated from the call's start.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from fnmatch import fnmatchcase
from types import ModuleType
from typing import Protocol, cast

import wrapt
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from otel_toolturn._vocab import Lane
from otel_toolturn.instrument import names
from otel_toolturn.instrument._config import Provider
from otel_toolturn.instrument._request import PreparedRequest
from otel_toolturn.instrument._telemetry import Attributes, Telemetry
from otel_toolturn.streams._report import StreamedCall, StreamObserver, StreamReport


class _ObserverFor(Protocol):
    def __call__(self, lane: Lane, *, requested_model: str | None) -> StreamObserver: ...


class _CheckResponse(Protocol):
    def __call__(self, lane: Lane, response: object, *, requested_model: str | None) -> StreamReport: ...


_STREAMS: list[ModuleType] = []


def _streams_api() -> tuple[_ObserverFor | None, _CheckResponse | None]:
    """The stream observers' entry points, when the streams package provides them (read at each call)."""
    if not _STREAMS:
        _STREAMS.append(importlib.import_module("otel_toolturn.streams"))
    module = _STREAMS[0]
    return (
        cast("_ObserverFor | None", getattr(module, "observer_for", None)),
        cast("_CheckResponse | None", getattr(module, "check_response", None)),
    )


def current_genai_span() -> Span | None:
    """The current span when it is another instrumentation's GenAI inference span (CLIENT, recording)."""
    span = trace.get_current_span()
    if not span.is_recording() or getattr(span, "kind", None) is not SpanKind.CLIENT:
        return None
    attributes = getattr(span, "attributes", None)
    if attributes is None or attributes.get(names.GEN_AI_OPERATION_NAME) is None:
        return None
    return span


_ADOPTING: ContextVar[CallRecord | None] = ContextVar("otel_toolturn_adopting", default=None)


def adopting_record() -> CallRecord | None:
    """The call whose request is being sent in this context and waits for the SDK's own span."""
    record = _ADOPTING.get()
    return record if record is not None and record.deferred else None


class CallRecord:
    """The telemetry of one call (see the module docstring); ``finish`` is idempotent and thread-safe."""

    def __init__(
        self,
        telemetry: Telemetry,
        *,
        lane: Lane,
        provider: Provider,
        requested_model: str | None,
        server_address: str | None,
        defer_span: bool = False,
    ) -> None:
        self.telemetry = telemetry
        self.lane = lane
        self.provider = provider
        self.requested_model = requested_model
        self._server_address = server_address
        self._labels = {names.LANE: lane, names.PROVIDER: provider}
        self._lock = threading.Lock()
        self._finishing = False
        self._finished = False
        self._observer: StreamObserver | None = None
        self._start_ns = time.time_ns()
        self.span: Span | None = None
        self._owns_span = False
        self._pending: list[tuple[str, Attributes]] | None = [] if defer_span else None
        self._stashed_end: tuple[Span, int | None] | None = None
        if defer_span:
            return
        adopted = current_genai_span()
        if adopted is not None:
            self.span = adopted
            self._attributes({names.LANE: lane, names.MODE: telemetry.options.mode})
        else:
            self._own_span()

    @property
    def deferred(self) -> bool:
        """Whether this record waits for the SDK's own call span (see ``adopt``)."""
        return self._pending is not None

    @property
    def recording(self) -> bool:
        """Whether span attributes would be kept (a deferred record will have a span to keep them)."""
        return self._pending is not None or (self.span is not None and self.span.is_recording())

    def _own_span(self) -> None:
        """Start otel-toolturn's own inference span (from the call's start), replaying anything pending."""
        pending, self._pending = self._pending or [], None
        operation = names.OPERATION_CHAT
        model = self.requested_model
        try:
            self.span = self.telemetry.tracer.start_span(
                f"{operation} {model}" if model else operation,
                kind=SpanKind.CLIENT,
                start_time=self._start_ns,
                attributes={
                    names.GEN_AI_OPERATION_NAME: operation,
                    names.PROVIDER: self.provider,
                    **({names.GEN_AI_REQUEST_MODEL: model} if model else {}),
                    **({names.SERVER_ADDRESS: self._server_address} if self._server_address else {}),
                    names.LANE: self.lane,
                    names.MODE: self.telemetry.options.mode,
                },
            )
            self._owns_span = True
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("span", exc)
        self._replay(pending)

    def adopt(self, span: Span) -> Span:
        """The SDK started its own call span for this call: record onto it; its end waits for ``finish``.

        Returns the span the SDK should use: a proxy whose ``end`` is held until this call has
        recorded its response, so the events land before the span ends (ended once, by its owner).
        """
        pending, self._pending = self._pending or [], None
        self.span = span
        self._attributes({names.LANE: self.lane, names.MODE: self.telemetry.options.mode})
        self._replay(pending)
        return cast("Span", _HeldEndSpan(span, self))

    def hold_end(self, span: Span, end_time: int | None) -> bool:
        """Called by the SDK span's ``end``: hold it until ``finish`` (``False``: already finished, end now)."""
        with self._lock:
            if self._finished:
                return False
            if self._stashed_end is None:
                self._stashed_end = (span, end_time)
            return True

    def _replay(self, pending: list[tuple[str, Attributes]]) -> None:
        for name, attributes in pending:
            if name:
                self.telemetry.event(self.span, name, attributes)
            else:
                self.telemetry.set_attributes(self.span, attributes)

    def _event(self, name: str, attributes: Attributes) -> None:
        if self._pending is not None:
            self._pending.append((name, attributes))
        else:
            self.telemetry.event(self.span, name, attributes)

    def _attributes(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        present = {k: v for k, v in attributes.items() if v is not None}
        if self._pending is not None:
            self._pending.append(("", present))
        else:
            self.telemetry.set_attributes(self.span, present)

    @contextmanager
    def current(self) -> Iterator[None]:
        """While the request is sent: make this call's own span current, or wait for the SDK's span.

        A deferred record is offered, through a context variable, to the SDK's span hook
        (``adopting_record``); a record with its own span makes it the current span.
        """
        if self._pending is not None:
            token = _ADOPTING.set(self)
            try:
                yield
            finally:
                _ADOPTING.reset(token)
            return
        if self.span is None or not self._owns_span:
            yield
            return
        with trace.use_span(self.span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
            yield

    # --- request ---------------------------------------------------------------------------------
    def request(self, prepared: PreparedRequest) -> None:
        """Record what the request hook decided: repairs, tools withheld, the receipt."""
        tel = self.telemetry
        tel.add(names.REQUESTS, 1, {**self._labels, names.MODE: tel.options.mode})
        attributes: dict[str, AttributeValue | None] = {}
        view = prepared.view
        if view is not None:
            tel.law_duration(prepared.law_seconds, self._labels)
            forms: list[str] = []
            for repair in view.repairs:
                if repair.form not in forms:
                    forms.append(repair.form)
                self._event(
                    names.EVENT_REPAIR,
                    {
                        names.REPAIR_FORM: repair.form,
                        names.REPAIR_TOOL_CALL_IDS: repair.tool_call_ids,
                        names.REPAIR_LOSSY: repair.lossy,
                        names.REPAIR_BEFORE_RUN: repair.before_run,
                        names.LANE: self.lane,
                    },
                )
                tel.add(
                    names.REPAIRS,
                    1,
                    {**self._labels, names.REPAIR_FORM: repair.form, names.REPAIR_LOSSY: repair.lossy},
                )
            if view.lossy:
                tel.add(names.LOSSY_PROJECTIONS, 1, self._labels)
            attributes[names.REPAIRS_COUNT] = len(view.repairs)
            attributes[names.REPAIRS_FORMS] = tuple(forms)
            attributes[names.REPAIRS_LOSSY] = view.lossy
        if prepared.withheld is not None:
            self._event(
                names.EVENT_TOOLS_WITHHELD,
                {
                    names.TOOLS_WITHHELD_REASON: prepared.withheld,
                    names.TOOLS_WITHHELD_APPLIED: prepared.withheld_applied,
                    names.LANE: self.lane,
                },
            )
            tel.add(names.TOOLS_WITHHELD, 1, {**self._labels, names.TOOLS_WITHHELD_REASON: prepared.withheld})
        attributes[names.FINGERPRINT_SYSTEM] = prepared.system_fingerprints or None
        attributes[names.FINGERPRINT_TOOLS] = prepared.tools_fingerprint
        attributes[names.FINGERPRINT_PREFIX] = prepared.prefix_fingerprint
        attributes[names.MAX_TOOL_ROUNDS_SEEN] = prepared.tool_rounds if tel.options.max_tool_rounds else None
        attributes[names.SYSTEM_PROMPT] = prepared.system_prompt or None
        self._attributes(attributes)

    # --- response --------------------------------------------------------------------------------
    def response(self, response: object) -> None:
        """A whole (not streamed) response arrived: check it, record it, finish."""
        try:
            _, check = _streams_api()
            if check is not None:
                self.report(check(self.lane, response, requested_model=self.requested_model))
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("response", exc)
        self.finish()

    def start_stream(self) -> None:
        """A streamed response begins: get this lane's observer (none when unavailable)."""
        try:
            observer_for, _ = _streams_api()
            if observer_for is not None:
                self._observer = observer_for(self.lane, requested_model=self.requested_model)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("stream", exc)

    def feed(self, event: object) -> None:
        """One streamed event passed to the caller: hand it to the observer (guarded)."""
        observer = self._observer
        if observer is None:
            return
        try:
            observer.feed(event)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self._observer = None
            self.telemetry.error("stream", exc)

    def report(self, report: StreamReport) -> None:
        """Record one response's report: GenAI response attributes, drops, ends, substitutions."""
        tel = self.telemetry
        attributes: dict[str, AttributeValue | None] = {
            names.GEN_AI_RESPONSE_ID: report.response_id,
            names.GEN_AI_RESPONSE_FINISH_REASONS: report.finish_reasons or None,
            names.GEN_AI_USAGE_INPUT_TOKENS: report.usage.input_tokens,
            names.GEN_AI_USAGE_OUTPUT_TOKENS: report.usage.output_tokens,
        }
        if self._owns_span or self._pending is not None:
            attributes[names.GEN_AI_RESPONSE_MODEL] = report.response_model
        else:
            attributes = {}
        attributes[names.STREAM_TORN] = report.torn or None
        self._attributes(attributes)
        for drop in report.drops:
            self._event(
                names.EVENT_STREAM_DROP,
                {
                    names.STREAM_DROP_CAUSE: drop.cause,
                    names.STREAM_DROP_COUNT: drop.count,
                    names.STREAM_DROP_IDS: drop.call_ids,
                    names.LANE: self.lane,
                },
            )
            tel.add(names.STREAM_DROPS, drop.count, {**self._labels, names.STREAM_DROP_CAUSE: drop.cause})
        ignored = report.ends_ignored
        if ignored is not None:
            self._event(
                names.EVENT_STREAM_END_IGNORED,
                {
                    names.STREAM_END_STATEMENT: ignored.statement,
                    names.STREAM_END_WORD: ignored.word,
                    names.STREAM_END_COUNT: ignored.count,
                    names.LANE: self.lane,
                },
            )
            tel.add(
                names.STREAM_ENDS_IGNORED,
                ignored.count,
                {**self._labels, names.STREAM_END_STATEMENT: ignored.statement},
            )
        if report.torn:
            self._event(names.EVENT_STREAM_TORN, {names.LANE: self.lane})
            tel.add(names.STREAM_TORN_COUNT, 1, self._labels)
        if report.substituted_model is not None:
            self._event(
                names.EVENT_RESPONSE_MODEL,
                {
                    names.RESPONSE_MODEL_REQUESTED: report.requested_model or self.requested_model or "",
                    names.RESPONSE_MODEL_REPORTED: report.substituted_model,
                    names.LANE: self.lane,
                },
            )
            tel.add(names.MODEL_SUBSTITUTIONS, 1, self._labels)
        repetition = report.repetition
        hits = ([(repetition.cut, True)] if repetition.cut is not None else []) + [
            (hit, False) for hit in repetition.spared
        ]
        for hit, cut in hits:
            self._event(
                names.EVENT_REPETITION,
                {
                    names.REPETITION_RULE: hit.rule,
                    names.REPETITION_DEPTH: hit.depth,
                    names.REPETITION_CUT: cut,
                    names.LANE: self.lane,
                },
            )
        self.calls_seen(report.calls)

    def calls_seen(self, calls: tuple[StreamedCall, ...]) -> None:
        """The hook point where a response's whole calls are seen: handoff events are emitted here.

        A call whose name matches a ``handoff_tools`` pattern (a name or a glob) is a handoff call:
        each gives a ``toolturn.handoff`` event and counter point. A response with more than one
        gives, before those, one ``toolturn.handoff.refused`` event and counter point.
        """
        patterns = self.telemetry.options.handoff_tools
        if not patterns or not calls:
            return
        try:
            handoffs = [c for c in calls if any(fnmatchcase(c.name, p) for p in patterns)]
            if len(handoffs) > 1:
                self._event(
                    names.EVENT_HANDOFF_REFUSED,
                    {
                        names.HANDOFF_COUNT: len(handoffs),
                        names.HANDOFF_TOOL: tuple(c.name for c in handoffs),
                        names.HANDOFF_CALL_ID: tuple(c.call_id for c in handoffs),
                        names.LANE: self.lane,
                    },
                )
                self.telemetry.add(names.HANDOFFS_REFUSED, 1, self._labels)
            for call in handoffs:
                self._event(
                    names.EVENT_HANDOFF,
                    {
                        names.HANDOFF_TOOL: call.name,
                        names.HANDOFF_CALL_ID: call.call_id,
                        names.LANE: self.lane,
                    },
                )
                self.telemetry.add(names.HANDOFFS, 1, {**self._labels, names.HANDOFF_TOOL: call.name})
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("handoff", exc)

    # --- the end ---------------------------------------------------------------------------------
    def finish(self, error: BaseException | None = None) -> None:
        """End the call once: close the stream's report (if any), record the error, end the span.

        A record still waiting for the SDK's span starts its own now, so nothing recorded is lost.
        A held SDK span end is released last, after everything is recorded on it.
        """
        with self._lock:
            if self._finishing:
                return
            self._finishing = True
            observer, self._observer = self._observer, None
        try:
            if observer is not None:
                self.report(observer.finish())
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("stream", exc)
        if self._pending is not None:
            self._own_span()
        with self._lock:
            self._finished = True
            held, self._stashed_end = self._stashed_end, None
        span = self.span
        try:
            if span is not None and self._owns_span:
                if error is not None:
                    span.set_attribute(names.ERROR_TYPE, type(error).__qualname__)
                    span.set_status(Status(StatusCode.ERROR))
                span.end()
            if held is not None:
                held[0].end(held[1])
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("span", exc)


class _HeldEndSpan(wrapt.ObjectProxy[Span]):
    """The SDK's own call span, handed back to the SDK: its ``end`` waits for the call's ``finish``."""

    def __init__(self, span: Span, record: CallRecord) -> None:
        super().__init__(span)
        self._self_record = record

    def end(self, end_time: int | None = None) -> None:
        if not self._self_record.hold_end(self.__wrapped__, end_time):
            self.__wrapped__.end(end_time)
