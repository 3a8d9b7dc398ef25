"""The instrumentation: one ``init()`` patches the OpenAI, Anthropic and google-genai SDKs, repairs inline, records.

The only place that imports an SDK or OpenTelemetry. Public here:

- ``init(...)``: idempotent; resolves the options (keyword, then ``OTEL_TOOLTURN_*``, then the
  default), sets up OpenTelemetry SDK providers from the standard ``OTEL_*`` variables for the
  signals the application configured none for (a logger provider only along with a tracer
  provider: ``_setup.to_create``), and instruments. A second call is a no-op.
- ``shutdown()``: flushes every provider, removes the patches, and shuts down the providers
  ``init`` created (never the application's own).
- ``withhold_tools(reason)``: a scope whose calls go out with tools withheld.
- ``ToolTurnInstrumentor``: the ``BaseInstrumentor`` behind ``init``, registered under the
  ``opentelemetry_instrumentor`` entry point so ``opentelemetry-instrument python app.py`` works.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Sequence
from typing import Any

from opentelemetry._logs import LoggerProvider
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from otel_toolturn.instrument import _others as others
from otel_toolturn.instrument import names
from otel_toolturn.instrument._config import Mode, Options, Provider, resolve_options
from otel_toolturn.instrument._litellm_watch import unwatch_litellm, watch_litellm
from otel_toolturn.instrument._patches import STATE, patch, unpatch
from otel_toolturn.instrument._setup import Owned, close, configure_missing, flush
from otel_toolturn.instrument._telemetry import Telemetry
from otel_toolturn.instrument._withhold import withhold_tools

__all__ = ["Mode", "Options", "Provider", "ToolTurnInstrumentor", "init", "shutdown", "withhold_tools"]


class ToolTurnInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Patches the importable provider SDKs (see ``_patches.TARGETS``); ``uninstrument`` restores them.

    ``instrument()`` takes ``options`` (an ``Options``) or the keyword options of ``init``, and
    ``tracer_provider`` / ``meter_provider`` / ``logger_provider``; without them it uses the
    global providers and the environment.
    """

    def instrumentation_dependencies(self) -> Collection[str]:
        """None required: each provider SDK is patched only when it imports."""
        return ()

    def _instrument(self, **kwargs: Any) -> None:  # noqa: ANN401 - BaseInstrumentor's own signature
        options = kwargs.get("options")
        if not isinstance(options, Options):
            options = resolve_options(
                mode=kwargs.get("mode"),
                capture_content=kwargs.get("capture_content"),
                providers=kwargs.get("providers"),
                max_tool_rounds=kwargs.get("max_tool_rounds"),
                handoff_tools=kwargs.get("handoff_tools"),
                environ=os.environ,
            )
        telemetry = Telemetry(
            options=options,
            tracer_provider=kwargs.get("tracer_provider"),
            meter_provider=kwargs.get("meter_provider"),
            logger_provider=kwargs.get("logger_provider"),
        )
        patch(telemetry)
        if "litellm" in options.providers:
            watch_litellm()
        others.watch(telemetry.tracer_provider)

    def _uninstrument(self, **kwargs: Any) -> None:  # noqa: ANN401 - BaseInstrumentor's own signature
        del kwargs
        unpatch()
        unwatch_litellm()
        others.unwatch()


_LOCK = threading.Lock()
_OWNED: list[Owned] = []


def _count_export_error(stage: names.ErrorStage, exc: BaseException) -> None:
    """Count an error of an exporter ``init`` created, into the live instrumentation (if any)."""
    telemetry = STATE.telemetry
    if telemetry is not None:
        telemetry.error(stage, exc)


def init(
    *,
    mode: Mode | None = None,
    capture_content: bool | None = None,
    providers: Sequence[Provider] | None = None,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    logger_provider: LoggerProvider | None = None,
    max_tool_rounds: int | None = None,
    handoff_tools: Sequence[str] | None = None,
) -> None:
    """Instrument the provider SDKs once; a second call changes nothing.

    ``mode``: ``"repair"`` (default; send the repaired view) or ``"observe"`` (send the caller's
    request, report the would-be repairs). ``capture_content``: record the joined system prompt
    (off by default; also ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``).
    ``providers``: which SDKs to patch (``openai``, ``anthropic``, ``google_genai``, ``litellm``; default:
    every supported one that imports).
    ``max_tool_rounds``: ask for a wrap-up (tools withheld) once the consecutive tool rounds since
    the last user text reach it. ``handoff_tools``: tool names or glob patterns whose calls are
    handoffs. Providers: the given ones, else the application's global ones, else created from
    the ``OTEL_*`` variables; a logger provider is created only when the tracer provider is too,
    so an application with its own tracer provider gets the events as span events on it (and as
    log records only on a logger provider of its own).
    """
    with _LOCK:
        instrumentor = ToolTurnInstrumentor()
        if instrumentor.is_instrumented_by_opentelemetry:
            return
        options = resolve_options(
            mode=mode,
            capture_content=capture_content,
            providers=providers,
            max_tool_rounds=max_tool_rounds,
            handoff_tools=handoff_tools,
            environ=os.environ,
        )
        if tracer_provider is None or meter_provider is None or logger_provider is None:
            _OWNED.append(
                configure_missing(
                    os.environ,
                    traces=tracer_provider is None,
                    metrics_=meter_provider is None,
                    logs=logger_provider is None,
                    on_error=_count_export_error,
                )
            )
        instrumentor.instrument(
            options=options,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            logger_provider=logger_provider,
        )


def shutdown() -> None:
    """Flush every provider, remove the patches, and shut down the providers ``init`` created.

    The flush comes first, while the instrumentation still counts: an exporter that fails or
    hangs during it is counted, and the providers ``init`` created export that count as they
    shut down. Never raises.
    """
    with _LOCK:
        instrumentor = ToolTurnInstrumentor()
        instrumented = instrumentor.is_instrumented_by_opentelemetry
        owned = list(_OWNED)
        _OWNED.clear()
        if instrumented or owned:
            flush(_count_export_error)
        if instrumented:
            instrumentor.uninstrument()
        for mine in owned:
            close(mine)
