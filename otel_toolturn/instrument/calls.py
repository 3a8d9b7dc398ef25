"""The instrumentation's call pipeline, for a front end that sees calls through another library's hooks.

Role: the public seam of ``otel_toolturn.instrument`` for the library's integrations (the LiteLLM
callback and entry-point wrappers in ``otel_toolturn.integrations``), which see each call through
their library's hooks instead of the patched SDK methods, and run it through the same stages the
patched methods do. Each stage stays where it is defined; this module names what an integration may
use, so the instrumentation's private modules stay private to it:

- ``live_telemetry()``: the live instrumentation's ``Telemetry`` (``None`` while uninstrumented:
  every hook then passes through);
- the request: ``materialise`` (read the call's arguments as the SDK would), ``decide_request``
  (the law and the composed request: a ``Decision``), ``record_sent`` (the receipt of a decision as
  it goes out: call it once per request sent, which may be later than the decision), ``current_scope``
  (the ``withhold_tools`` scope of this context);
- the record: ``CallRecord`` (one call's span, metrics and events), ``server_of`` (a base URL's
  ``server.address`` and ``server.port``), ``Provider`` and ``ProviderName``;
- the stream: ``StreamProxy`` and ``AsyncStreamProxy`` (a stream watched on its way to the caller,
  its record finished once), ``when_collected`` (finish a record when its proxy is collected).

Importing it imports OpenTelemetry, never an SDK. It imports nothing of ``otel_toolturn.integrations``.
It is the library's seam, not an application's API: its names follow the instrumentation's stages.
"""

from __future__ import annotations

from otel_toolturn.instrument._config import Provider, ProviderName
from otel_toolturn.instrument._patches import STATE, server_of
from otel_toolturn.instrument._proxies import AsyncStreamProxy, StreamProxy, when_collected
from otel_toolturn.instrument._record import CallRecord
from otel_toolturn.instrument._request import Decision, decide_request, materialise, record_sent
from otel_toolturn.instrument._telemetry import Telemetry
from otel_toolturn.instrument._withhold import current_scope

__all__ = [
    "AsyncStreamProxy",
    "CallRecord",
    "Decision",
    "Provider",
    "ProviderName",
    "StreamProxy",
    "Telemetry",
    "current_scope",
    "decide_request",
    "live_telemetry",
    "materialise",
    "record_sent",
    "server_of",
    "when_collected",
]


def live_telemetry() -> Telemetry | None:
    """The live instrumentation's telemetry; ``None`` while nothing is instrumented."""
    return STATE.telemetry
