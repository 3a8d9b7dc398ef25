"""Another instrumentation's GenAI inference span for the call at hand: found, so the call has one span.

Role: tell the recording whose span a call's telemetry goes on. Other GenAI instrumentations wrap
the same SDK methods, before or after otel-toolturn; whichever wraps outside, there must be one
inference span per HTTP request, and the repair on it. Two ways to find theirs:

- **current**: their span is current (the official ``opentelemetry-instrumentation-genai-*`` and
  OpenLLMetry's openai instrumentation start theirs as current) — at the call when they wrap
  outside, at the send when they wrap inside;
- **started**: their span was started and never made current (OpenLLMetry's anthropic
  instrumentation). ``GenAISpanWatch``, a span processor added to the application's SDK tracer
  provider, notes in the starting context each GenAI CLIENT span another tracer starts; the next
  call in that context takes it (``take``), once. A span taken is the one started right around
  the call: by the wrapper outside it (started just before the call), or inside it (before the send).

A GenAI inference span is a recording CLIENT span with ``gen_ai.operation.name`` or
``gen_ai.provider.name`` (or the older ``gen_ai.system``) among its attributes, and no operation
other than an inference (``chat``, ``generate_content``, ``text_completion``). otel-toolturn's own
spans are never taken. A call consumes what was noted before it, taken or not, so a span a call
did not take (another instrumentation's current one, or one still open from an earlier call) is
never taken by a later call.
"""

from __future__ import annotations

import logging
import weakref
from contextvars import ContextVar
from typing import Final

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.trace import Span, SpanKind

from otel_toolturn.instrument import names

_MARKS: Final = (names.GEN_AI_OPERATION_NAME, names.PROVIDER, "gen_ai.system")
"""Attributes, any of which makes a CLIENT span a GenAI span."""
_INFERENCE: Final = frozenset({"chat", "generate_content", "text_completion"})
"""The operations of an inference span (``gen_ai.operation.name``); a span without one counts by the others."""

_log = logging.getLogger("otel_toolturn.instrument")

_STARTED: ContextVar[Span | None] = ContextVar("otel_toolturn_other_genai_span", default=None)
"""The last GenAI CLIENT span another tracer started in this context, until a call takes it."""


def is_genai_client(span: object) -> bool:
    """Whether ``span`` is a recording GenAI inference span (CLIENT, with a GenAI attribute) of another tracer."""
    if not isinstance(span, Span) or not span.is_recording() or getattr(span, "kind", None) is not SpanKind.CLIENT:
        return False
    scope = getattr(span, "instrumentation_scope", None)
    if scope is not None and getattr(scope, "name", None) == names.INSTRUMENTATION_NAME:
        return False
    attributes = getattr(span, "attributes", None)
    if attributes is None or not any(attributes.get(key) is not None for key in _MARKS):
        return False
    operation = attributes.get(names.GEN_AI_OPERATION_NAME)
    return operation is None or operation in _INFERENCE


def current() -> Span | None:
    """The current span when it is another instrumentation's GenAI inference span."""
    span = trace.get_current_span()
    return span if is_genai_client(span) else None


def take(*, inside: bool = False) -> Span | None:
    """Another instrumentation's GenAI span for this call, or ``None``.

    At the call (``inside`` false), the span of a wrapper outside it: the current one, else the one that
    wrapper started. At the send (``inside``), the span of a wrapper inside the call: the one started since
    the call began, else the current one.
    """
    started = _STARTED.get()
    if started is not None:
        _STARTED.set(None)
        if not started.is_recording():
            started = None
    if inside and started is not None:
        return started
    return current() or started


def forget(span: Span) -> None:
    """``span`` belongs to the call at hand (the SDK's own call span): no later call takes it."""
    if _STARTED.get() is span:
        _STARTED.set(None)


class GenAISpanWatch(SpanProcessor):
    """Notes each GenAI CLIENT span another tracer starts, in the context that starts it (see the module docstring)."""

    def __init__(self) -> None:
        self.enabled = True

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """A span starts: note it when it is another's GenAI inference span (never raises)."""
        del parent_context  # the starting context is the one that matters
        try:
            if self.enabled and is_genai_client(span):
                _STARTED.set(span)
        except Exception:  # noqa: BLE001, S110 - a processor never breaks the application's span
            pass

    def on_end(self, span: ReadableSpan) -> None:
        """Nothing to do at a span's end."""

    def shutdown(self) -> None:
        """Stop noting spans."""
        self.enabled = False

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered."""
        del timeout_millis  # nothing to flush
        return True


_WATCHES: weakref.WeakKeyDictionary[object, GenAISpanWatch] = weakref.WeakKeyDictionary()
"""The watch added to each SDK tracer provider, so it is added once however often ``instrument`` runs."""


_UNCONFIGURED_SAID = [False]


def at_call(tracer_provider: object | None) -> None:
    """At each call: ``watch`` the tracer provider it records with, and say once a process when none is the SDK's.

    ``None``: the global one, as it is now. The warning is asked at the call, not at ``instrument``: under
    ``opentelemetry-instrument`` the application may set its provider after the instrumentors load.
    """
    provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
    watch(provider)
    if _UNCONFIGURED_SAID[0] or type(provider).__name__ not in {"ProxyTracerProvider", "NoOpTracerProvider"}:
        return
    _UNCONFIGURED_SAID[0] = True
    _log.warning(
        "otel-toolturn: no OpenTelemetry SDK tracer provider is set, so nothing is exported; call "
        "otel_toolturn.init(), set one up, or run under opentelemetry-instrument with opentelemetry-distro"
    )


def watch(tracer_provider: object | None) -> None:
    """Add (or re-enable) the watch on the SDK tracer provider the instrumentation records with (never raises).

    ``None``: the global one, as it is now (an application under ``opentelemetry-instrument`` sets it after
    the instrumentors load, so each call asks). A provider that is not the SDK's takes no processor: only
    the current span is then found.
    """
    try:
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        known = _WATCHES.get(provider)
        if known is not None:
            known.enabled = True
            return
        add = getattr(provider, "add_span_processor", None)
        if callable(add):
            processor = GenAISpanWatch()
            add(processor)
            _WATCHES[provider] = processor
    except Exception:  # noqa: BLE001, S110 - finding another's span is best effort; the call goes on
        pass


def unwatch() -> None:
    """Stop every watch (the SDK keeps a processor once added, so it goes inert until the next call)."""
    for processor in list(_WATCHES.values()):
        processor.enabled = False
