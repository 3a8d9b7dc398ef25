"""A call decided but not yet sent: its record is made when the SDK's HTTP send begins.

Role: the seam between the request hook's decision and the recording. A patched call decides at
once what it sends (``_request.decide_request``: the law runs before the SDK call, since it
decides the request), then runs the SDK with its ``PendingCall`` current (``sending``). Nothing
is recorded until the SDK sends: the send hook (``_patches``) calls ``sent``, which the first
time makes the call's ``CallRecord`` in the context the call was made in and gives it; its span is
then current for that send. Every later send of the same call (the SDK's own retries) gets the
same record. Once that first send has returned or raised (the transport has the request), the
send hook calls ``handed_over``, which records the request (``_request.record_sent``: the receipt
and the conversation's findings; then the counts and events): their digests serve telemetry only
and never delay the request.

So a call the SDK refuses before any HTTP request goes out (its own check of the arguments, a
body it cannot encode, a middleware's answer without a request) and a manager never entered
start no span and count nothing; the SDK's exception reaches the caller unchanged.

The SDK's own call span (the anthropic SDK starts one before it sends, when its client has a
tracer) is kept by ``keep_sdk_span`` when no other GenAI span was current at the call; the record
made at the send records onto it (``CallRecord.adopt``). Its ``end`` is held until the record
finishes; a call never sent lets the SDK end it at once, with nothing of ours on it.

A call of an SDK that sends other HTTP requests of its own while the call runs (huggingface_hub looks
a model's providers up on the Hub first) is ``gated``: a send is its request only inside the SDK's
method that sends it (``request_gate``, the gate target of ``_patches``); every other send passes by.
A call of an SDK whose client and whose credential send through the same method (azure-core's pipelines:
a ``TokenCredential`` fetches its token through a pipeline of its own while the call runs) names its
``sender``, the one object whose sends are its request (its pipeline's transport runner); a send of any
other passes by.

One call is sent from one thread or task at a time (the SDK's attempts follow one another), so
``sent`` takes no lock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from opentelemetry import context as context_api
from opentelemetry.trace import Span

from otel_toolturn._vocab import Lane
from otel_toolturn.instrument import _others as others
from otel_toolturn.instrument._config import Provider, ProviderName
from otel_toolturn.instrument._record import CallRecord, held_end
from otel_toolturn.instrument._request import Decision, record_sent
from otel_toolturn.instrument._telemetry import Telemetry

PENDING: ContextVar[PendingCall | None] = ContextVar("otel_toolturn_pending", default=None)
"""The call whose SDK request is running in this context and has not been recorded yet."""


_GATE_OPEN: ContextVar[bool] = ContextVar("otel_toolturn_gate_open", default=False)
"""Whether the SDK's method that sends a gated call's request is running in this context."""


@contextmanager
def request_gate() -> Iterator[None]:
    """While the SDK's request method runs: a gated call's sends are its request (see the module docstring)."""
    token = _GATE_OPEN.set(True)
    try:
        yield
    finally:
        _GATE_OPEN.reset(token)


class PendingCall:
    """One call's decision, waiting for the SDK to send it (see the module docstring)."""

    __slots__ = (
        "_adopts",
        "_caller_kwargs",
        "_context",
        "_decided",
        "_gated",
        "_handed_over",
        "_other_span",
        "_sdk_span",
        "_sender",
        "_sent",
        "_server",
        "_started_ns",
        "lane",
        "provider",
        "provider_name",
        "record",
        "telemetry",
    )

    def __init__(
        self,
        telemetry: Telemetry,
        *,
        lane: Lane,
        provider: Provider,
        decided: Decision,
        caller_kwargs: dict[str, object],
        server: tuple[str | None, int | None],
        provider_name: ProviderName | None = None,
        gated: bool = False,
        sender: object | None = None,
    ) -> None:
        self.telemetry = telemetry
        self._gated = gated
        self._sender = sender
        self.lane = lane
        self.provider = provider
        self.provider_name = provider_name
        self._decided = decided
        self._caller_kwargs = caller_kwargs
        self._server = server
        self._context = context_api.get_current()
        others.at_call(telemetry.tracer_provider)
        self._other_span = others.take()
        self._adopts = self._other_span is None
        self._started_ns = time.time_ns()
        self._sdk_span: Span | None = None
        self._sent = False
        self._handed_over = False
        self.record: CallRecord | None = None
        """The call's record once the SDK has sent it (``None``: not sent, or its telemetry failed)."""

    @property
    def kwargs(self) -> dict[str, object]:
        """The keyword arguments the SDK is called with (the decision)."""
        return self._decided.kwargs

    def sends_here(self, sender: object) -> bool:
        """Whether ``sender``'s HTTP send in this context is this call's request.

        A gated call: only inside its gate; a call that names its ``sender``: only that one's sends.
        """
        if self._sender is not None and sender is not self._sender:
            return False
        return not self._gated or _GATE_OPEN.get()

    @contextmanager
    def sending(self) -> Iterator[None]:
        """While the SDK runs this call (its method, or a manager's entry): the call is ``PENDING``."""
        token = PENDING.set(self)
        try:
            yield
        finally:
            PENDING.reset(token)

    def sent(self) -> CallRecord | None:
        """The SDK sends this call: its record, made and the request recorded on the first send.

        ``None``: the record could not be made (counted; the call goes on uninstrumented).
        """
        if self._sent:
            return self.record
        self._sent = True
        telemetry = self.telemetry
        model = self._caller_kwargs.get("model")
        sdk_span = self._sdk_span
        other_span = self._other_span
        if other_span is None and sdk_span is None:
            other_span = others.take(inside=True)  # another instrumentation's span, started inside this call
        token = context_api.attach(self._context)
        try:
            record = CallRecord(
                telemetry,
                defer_span=sdk_span is not None,
                lane=self.lane,
                provider=self.provider,
                provider_name=self.provider_name,
                requested_model=model if isinstance(model, str) else None,
                server_address=self._server[0],
                server_port=self._server[1],
                started_ns=self._started_ns,
                other_span=other_span,
            )
            if sdk_span is not None:
                record.adopt(sdk_span)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            telemetry.error("span", exc)
            return None
        finally:
            context_api.detach(token)
        self.record = record
        return record

    def handed_over(self) -> None:
        """The SDK's first send of this call has returned or raised: the request is recorded, once.

        The receipt's digests and the conversation's findings serve telemetry only, so they are
        computed here, after the transport has the request, never between the call and the send.
        """
        record = self.record
        if record is None or self._handed_over:
            return
        self._handed_over = True
        telemetry = self.telemetry
        receipt = record_sent(self._decided, lane=self.lane, options=telemetry.options, receipt=record.recording)
        try:
            record.request(self._decided, receipt)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            telemetry.error("request", exc)

    def keep_sdk_span(self, span: Span) -> Span:
        """The SDK started its own call span for this call: the span the SDK should use (see the module docstring)."""
        others.forget(span)  # the SDK's own span is this call's, never a later call's
        if not self._adopts or self._sent or self._sdk_span is not None:
            return span
        self._sdk_span = span
        return held_end(span, self)

    def hold_end(self, span: Span, end_time: int | None) -> bool:
        """The SDK ends its span: held by the record until it finishes (``False``: never sent, end now)."""
        record = self.record
        return record is not None and record.hold_end(span, end_time)

    def failed(self, error: BaseException) -> None:
        """The SDK raised ``error``: a call it sent ends its record with it; a call never sent records nothing."""
        self.handed_over()
        record = self.record
        if record is not None:
            record.finish(error)

    def finish(self) -> None:
        """The call is over (a manager's exit: the caller's stop): its record, if it was sent, ends."""
        self.handed_over()
        record = self.record
        if record is not None:
            record.finish(caller_closed=True)
