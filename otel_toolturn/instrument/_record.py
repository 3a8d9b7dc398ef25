"""One provider call's telemetry: its span, what the request hook decided, what the response told.

Role: the recording half's call record: the span's life. ``CallRecord`` owns, adopts or waits for
the call's span, makes it current while the request is sent, feeds a stream's observer, and decides
where what is recorded goes (held for our own span's end, or set on another owner's span at once).
What a request's ``Decision`` and ``Receipt`` turn into is ``_request_telemetry``'s; what a response's
``StreamReport`` (from the stream observers, never decided here) turns into is
``_response_telemetry``'s: both emit through the record's ``CallSink``. ``finish`` ends the call
exactly once, whichever path gets there first: the response read, the stream exhausted,
``break``/``close()``/context exit, an exception, or the stream being collected unread.

The span: one GenAI inference span ``chat {model}`` (CLIENT) per call, made current while the
request is sent. The patches make a call's record only when the SDK sends it (``_pending``), in
the context of the call, so a call never sent has no record at all. Never a second span for the
same call:

- another GenAI instrumentation's span current at the call: the attributes and events go onto
  it, and ending it is left to its owner; once a stream's first event passed, its ``end`` waits
  for ``finish`` (``_hold_their_end``), since its stream wrapper may end it before the stream's
  end reaches us;
- the SDK's own call span (the anthropic SDK starts one inside the request when its client has a
  tracer): the record adopts it (``adopt``) and holds the SDK's ``end`` until the response is
  recorded (``held_end``). A record made ``deferred`` waits for that span, buffering what it
  records; one whose SDK span never came starts its own, dated from the call's start.

The cost of one record is OpenTelemetry's own work, called as few times as the contract allows:
our own span's attributes are given at its start and, the rest, in one ``set_attributes`` just
before it ends (another owner's span gets them at once, since its owner ends it); each counter
gets one point per distinct attribute set of the call (e.g. 14 repairs of one form: one ``add``
of 14); the attribute sets come prebuilt (``Labels``); the span's context is built once.
"""

from __future__ import annotations

import threading
import time
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol, cast

import wrapt
from opentelemetry import context as context_api
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

import otel_toolturn.streams
from otel_toolturn._vocab import Lane, ReplyFormat
from otel_toolturn.instrument import _others as others
from otel_toolturn.instrument import names
from otel_toolturn.instrument._config import NAMES_OF, REPLY_FORMAT_OF, Provider, ProviderName
from otel_toolturn.instrument._request import Decision, Receipt
from otel_toolturn.instrument._request_telemetry import record_request
from otel_toolturn.instrument._response_telemetry import record_report, response_attributes, usage_tokens
from otel_toolturn.instrument._telemetry import Attributes, CallSink, Telemetry
from otel_toolturn.streams import StreamObserver, StreamReport, closed_by_caller


class _ObserverFor(Protocol):
    def __call__(
        self, lane: Lane, *, requested_model: str | None, reply_format: ReplyFormat | None = None
    ) -> StreamObserver: ...


class _CheckResponse(Protocol):
    def __call__(
        self,
        lane: Lane,
        response: object,
        *,
        requested_model: str | None,
        reply_format: ReplyFormat | None = None,
    ) -> StreamReport: ...


def _observer_for() -> _ObserverFor | None:
    """The stream observers' factory, when the streams package provides it (read at each call)."""
    return cast("_ObserverFor | None", getattr(otel_toolturn.streams, "observer_for", None))


def _check_response() -> _CheckResponse | None:
    """The whole-response check, when the streams package provides it (read at each call)."""
    return cast("_CheckResponse | None", getattr(otel_toolturn.streams, "check_response", None))


class CallRecord:
    """The telemetry of one call (see the module docstring); ``finish`` is idempotent and thread-safe."""

    __slots__ = (
        "_chunk_gaps",
        "_context",
        "_finished",
        "_finishing",
        "_first_chunk_ns",
        "_held",
        "_labels",
        "_last_chunk_ns",
        "_lock",
        "_pending",
        "_response_model",
        "_server_address",
        "_server_port",
        "_shadowed",
        "_start_ns",
        "_stashed_end",
        "_theirs",
        "_tokens",
        "lane",
        "observer",
        "owns_span",
        "provider",
        "provider_name",
        "requested_model",
        "span",
        "telemetry",
    )

    def __init__(
        self,
        telemetry: Telemetry,
        *,
        lane: Lane,
        provider: Provider,
        requested_model: str | None,
        server_address: str | None,
        server_port: int | None = None,
        provider_name: ProviderName | None = None,
        defer_span: bool = False,
        started_ns: int | None = None,
        other_span: Span | None = None,
    ) -> None:
        self.telemetry = telemetry
        self.lane = lane
        self.provider = provider
        self.provider_name: ProviderName = provider_name or NAMES_OF[provider][0]
        """The call's ``gen_ai.provider.name`` (default: the provider's first, ``NAMES_OF``)."""
        self.requested_model = requested_model
        self._server_address = server_address
        self._server_port = server_port
        self._response_model: str | None = None
        self._first_chunk_ns = 0
        """When the first streamed event reached the caller (0: none yet, or not a stream)."""
        self._last_chunk_ns = 0
        self._chunk_gaps = array("d")
        """Each later streamed event's time from the one before it, in seconds: recorded at the call's end."""
        self._tokens: list[tuple[str, int]] = []
        """The response's input and output tokens, for the conventions' token metric."""
        self._labels = telemetry.labels(lane, self.provider_name)
        self._lock = threading.Lock()
        self._finishing = False
        self._finished = False
        self.observer: StreamObserver | None = None
        """The stream's observer while it is fed (``None``: not a stream, finished, or it failed)."""
        self.span: Span | None = None
        self.owns_span = False
        self._context: Context | None = None
        self._held: dict[str, AttributeValue] | None = {}
        """Attributes for a span of ours (or one still to come), set in one call just before it ends."""
        self._pending: list[tuple[str, Attributes]] | None = [] if defer_span else None
        self._stashed_end: tuple[Span, int | None] | None = None
        self._theirs: Span | None = None
        """Another instrumentation's span this call records onto (``_hold_their_end``)."""
        self._shadowed = False
        """Whether that span's ``end`` is shadowed until ``finish`` (``_hold_their_end``)."""
        self._start_ns = started_ns or (time.time_ns() if defer_span else 0)
        """When the call started (0: when our span starts); our own span is dated from it."""
        if defer_span:
            return
        adopted = other_span if other_span is not None else others.current()
        if adopted is not None:
            self.span = adopted
            self._held = None
            self._theirs = adopted
            self.telemetry.set_attributes(adopted, {names.LANE: lane, names.MODE: telemetry.options.mode})
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

    def span_context(self) -> Context:
        """The context with this call's span current (built once per span)."""
        context = self._context
        if context is None:
            context = self._context = trace.set_span_in_context(cast("Span", self.span))
        return context

    def _own_span(self) -> None:
        """Start otel-toolturn's own inference span (from the call's start), replaying anything pending."""
        pending, self._pending = self._pending or [], None
        model = self.requested_model
        operation = names.OPERATION_OF[self.lane]
        attributes = self._call_attributes()
        attributes[names.LANE] = self.lane
        attributes[names.MODE] = self.telemetry.options.mode
        if not self._start_ns:
            self._start_ns = time.time_ns()
        try:
            self.span = self.telemetry.tracer.start_span(
                f"{operation} {model}" if model else operation,
                kind=SpanKind.CLIENT,
                start_time=self._start_ns or None,
                attributes=attributes,
            )
            self._context = None
            self.owns_span = True
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("span", exc)
        self._replay(pending)

    def _call_attributes(self) -> dict[str, AttributeValue]:
        """The conventions' attributes that name the call: operation, provider, model, server address and port."""
        attributes: dict[str, AttributeValue] = {
            names.GEN_AI_OPERATION_NAME: names.OPERATION_OF[self.lane],
            names.PROVIDER: self.provider_name,
        }
        if self.requested_model:
            attributes[names.GEN_AI_REQUEST_MODEL] = self.requested_model
        if self._server_address:
            attributes[names.SERVER_ADDRESS] = self._server_address
            if self._server_port is not None:
                attributes[names.SERVER_PORT] = self._server_port
        return attributes

    def adopt(self, span: Span) -> Span:
        """The SDK started its own call span for this call: record onto it; its end waits for ``finish``.

        Returns the span the SDK should use: a proxy whose ``end`` is held until this call has
        recorded its response, so the events land before the span ends (ended once, by its owner).
        """
        pending, self._pending = self._pending or [], None
        held, self._held = self._held or {}, None
        self.span = span
        self._context = None
        self.telemetry.set_attributes(span, {names.LANE: self.lane, names.MODE: self.telemetry.options.mode, **held})
        self._replay(pending)
        return held_end(span, self)

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
            self._events(name, (attributes,))

    def _events(self, name: str, batch: Sequence[Attributes]) -> None:
        """One event per attribute set of ``batch`` (held while the record waits for the SDK's span)."""
        if self._pending is not None:
            self._pending.extend((name, attributes) for attributes in batch)
            return
        span = self.span
        tel = self.telemetry
        tel.events(span, name, batch, self.span_context() if span is not None and tel.logs else None)

    def _sink(self) -> CallSink:
        """Where this call's request and response telemetry goes, as its span stands now."""
        return CallSink(
            telemetry=self.telemetry,
            lane=self.lane,
            labels=self._labels,
            events=self._events,
            own_span=self.owns_span or self._pending is not None,
        )

    def _attributes(self) -> dict[str, AttributeValue]:
        """The dict a recording fills with span attributes: the held ones of our own span, else a new one."""
        return {} if self._held is None else self._held

    def _set_attributes(self, attributes: dict[str, AttributeValue]) -> None:
        """Set ``attributes`` filled by a recording on the span now, unless they are held for our own span's end."""
        if attributes is not self._held:
            self.telemetry.set_attributes(self.span, attributes)

    @contextmanager
    def current(self) -> Iterator[None]:
        """While the request is sent: make this call's own span the current span (if it has one)."""
        if self.span is None or not self.owns_span:
            yield
            return
        token = context_api.attach(self.span_context())
        try:
            yield
        finally:
            context_api.detach(token)

    # --- request ---------------------------------------------------------------------------------
    def request(self, decision: Decision, receipt: Receipt) -> None:
        """Record what the request hook decided and what went out (``_request_telemetry``)."""
        attributes = self._attributes()
        record_request(self._sink(), decision, receipt, attributes)
        self._set_attributes(attributes)

    # --- response --------------------------------------------------------------------------------
    def response(self, response: object) -> None:
        """A whole (not streamed) response arrived: check it, record it, finish."""
        if self._held is not None:
            self._held.setdefault(names.GEN_AI_REQUEST_STREAM, False)
        try:
            check = _check_response()
            if check is not None:
                own = REPLY_FORMAT_OF.get(self.provider)
                self.report(
                    check(self.lane, response, requested_model=self.requested_model, reply_format=own)
                    if own is not None
                    else check(self.lane, response, requested_model=self.requested_model)
                )
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("response", exc)
        self.finish()

    def start_stream(self) -> None:
        """A streamed response begins: get this lane's observer (none when unavailable)."""
        if self._held is not None:
            self._held[names.GEN_AI_REQUEST_STREAM] = True
        try:
            observer_for = _observer_for()
            if observer_for is not None:
                own = REPLY_FORMAT_OF.get(self.provider)
                self.observer = (
                    observer_for(self.lane, requested_model=self.requested_model, reply_format=own)
                    if own is not None
                    else observer_for(self.lane, requested_model=self.requested_model)
                )
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("stream", exc)

    def _hold_their_end(self) -> None:
        """Have another instrumentation's span wait for ``finish`` to end, as the SDK's own span does (``hold_end``).

        Its stream wrapper may stand beneath ours and end its span before the stream's end reaches us;
        what that end tells (torn, drops, the ignored end) is set on the span first. Held from the
        stream's first event on, so a stream never read through us (a wrapper that reads the response
        itself) never holds it. Its ``end`` is shadowed on the span itself (its ``__dict__``; a span
        without one is left as it is, its stream's end then counted and logged only) until ``finish``
        takes the shadow off again.
        """
        span = self._theirs
        if span is None or self._shadowed:
            return
        try:
            if not span.is_recording():
                return
            owner_end = type(span).end

            def end(end_time: int | None = None) -> None:
                if not self.hold_end(span, end_time):
                    owner_end(span, end_time)

            vars(span)["end"] = end
            self._shadowed = True
        except TypeError:  # a span without ``__dict__``: nothing to shadow it on
            return
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("span", exc)

    def feed(self, event: object) -> None:
        """One streamed event passed to the caller: hand it to the observer (guarded).

        An observer that raises is dropped (the stream passes through) and the error counted.
        """
        now = time.time_ns()
        last, self._last_chunk_ns = self._last_chunk_ns, now
        if last:
            self._chunk_gaps.append(max(0, now - last) / 1e9)
        else:
            self._first_chunk_ns = now
            self._hold_their_end()
        observer = self.observer
        if observer is None:
            return
        try:
            observer.feed(event)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            if self.observer is observer:
                self.observer = None
            self.telemetry.error("stream", exc)

    def report(self, report: StreamReport) -> None:
        """Record one response's report: its span attributes, then its events and points (``_response_telemetry``)."""
        sink = self._sink()
        if sink.own_span:
            self._tokens = usage_tokens(report.usage)
            if report.response_model is not None:
                self._response_model = report.response_model
        attributes = self._attributes()
        response_attributes(report, attributes, own_span=sink.own_span)
        self._set_attributes(attributes)
        record_report(sink, report, requested_model=self.requested_model)

    # --- the end ---------------------------------------------------------------------------------
    def finish(self, error: BaseException | None = None, *, caller_closed: bool = False) -> None:
        """End the call once: close the stream's report (if any), record the error, end the span.

        ``caller_closed``: the caller stopped reading (``close()``, context exit, collection,
        cancellation), not the provider's stream ending; a stream without its final frame then
        reads as closed early, never torn (``streams.closed_by_caller``).

        A record still waiting for the SDK's span starts its own now, so nothing recorded is lost.
        Our own span gets its held attributes in one call, then ends. A held SDK span end is
        released last, after everything is recorded on it.
        """
        with self._lock:
            if self._finishing:
                return
            self._finishing = True
            observer, self.observer = self.observer, None
        if observer is not None:
            self._report_stream(observer, caller_closed=caller_closed)
        if self._pending is not None:
            self._own_span()
        with self._lock:
            self._finished = True
            held, self._stashed_end = self._stashed_end, None
        if self._shadowed and self._theirs is not None:
            vars(self._theirs).pop("end", None)  # the owner's own ``end`` again
        span = self.span
        if span is not None and self.owns_span:
            self._last_attributes(span, error)
            self._client_metrics(error)
        try:
            if span is not None and self.owns_span:
                if error is not None:
                    span.set_status(Status(StatusCode.ERROR))
                span.end()
            if held is not None:
                held[0].end(held[1])
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("span", exc)

    def _report_stream(self, observer: StreamObserver, *, caller_closed: bool) -> None:
        """Record the report of the stream ``observer`` watched (guarded); see ``finish`` for ``caller_closed``."""
        try:
            report = observer.finish()
            self.report(closed_by_caller(report) if caller_closed else report)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            self.telemetry.error("stream", exc)

    def _last_attributes(self, span: Span, error: BaseException | None) -> None:
        """Our own span's held attributes, its time to first chunk and its error type, set in one call."""
        attributes = self._held
        if self._first_chunk_ns and attributes is not None:
            seconds = max(0, self._first_chunk_ns - self._start_ns) / 1e9
            attributes[names.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = seconds
        if error is not None:
            attributes = {**(attributes or {}), names.ERROR_TYPE: type(error).__qualname__}
        if attributes:
            self.telemetry.set_attributes(span, attributes)

    def _client_metrics(self, error: BaseException | None) -> None:
        """The conventions' client metrics for a call on a span of our own: its duration, its tokens, a stream's times.

        A stream's chunk times are recorded here, with the duration's attributes (the response's model, an error's
        type), as the conventions ask; the stream itself only notes each one.
        """
        attributes = self._call_attributes()
        if self._response_model is not None:
            attributes[names.GEN_AI_RESPONSE_MODEL] = self._response_model
        if error is not None:
            attributes[names.ERROR_TYPE] = type(error).__qualname__
        seconds = max(0, time.time_ns() - self._start_ns) / 1e9
        self.telemetry.client_call(seconds, self._tokens, attributes)
        if self._first_chunk_ns:
            first = max(0, self._first_chunk_ns - self._start_ns) / 1e9
            self.telemetry.chunk_times(first, self._chunk_gaps, attributes)


class EndHolder(Protocol):
    """What holds an SDK span's ``end``: ``hold_end`` says whether it keeps it (``False``: end now)."""

    def hold_end(self, span: Span, end_time: int | None) -> bool: ...


def held_end(span: Span, holder: EndHolder) -> Span:
    """``span`` as handed back to the SDK: its ``end`` goes to ``holder`` first (see ``CallRecord.hold_end``)."""
    return cast("Span", _HeldEndSpan(span, holder))


class _HeldEndSpan(wrapt.ObjectProxy[Span]):
    """The SDK's own call span, handed back to the SDK: its ``end`` waits for the call's ``finish``."""

    def __init__(self, span: Span, holder: EndHolder) -> None:
        super().__init__(span)
        self._self_holder = holder

    def end(self, end_time: int | None = None) -> None:
        if not self._self_holder.hold_end(self.__wrapped__, end_time):
            self.__wrapped__.end(end_time)
