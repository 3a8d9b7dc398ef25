"""The floor of any OpenTelemetry callback in the LiteLLM proxy: the SDK set up, one span and two metric points a call.

Name ``callback`` in a proxy's ``config.yaml`` (``litellm_settings: callbacks:
bench._proxy_floor.callback``) in place of otel-toolturn's. Importing this module sets up the
OpenTelemetry SDK providers from the ``OTEL_*`` variables exactly as otel-toolturn's entry point
does (``configure_missing``), so the proxy's own frameworks trace and measure themselves as they
do beside otel-toolturn; ``callback`` records, for each successful call, a CLIENT span named
``chat {model}`` over the call's start and end and one counter and one duration histogram point,
and reads nothing of the request. ``bench.gateway`` runs a proxy with it as the ``SDK only`` side.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any, Final

from litellm.integrations.custom_logger import CustomLogger
from opentelemetry import metrics, trace

from otel_toolturn.instrument._setup import configure_missing

configure_missing(os.environ)
_TRACER: Final = trace.get_tracer("bench.proxy_floor")
_METER: Final = metrics.get_meter("bench.proxy_floor")
_REQUESTS: Final = _METER.create_counter("bench.floor.requests", unit="{request}", description="Calls seen.")
_DURATION: Final = _METER.create_histogram(
    "gen_ai.client.operation.duration", unit="s", description="Duration of the call."
)


def _ns(moment: datetime) -> int:
    return int(moment.timestamp() * 1e9)


class Floor(CustomLogger):
    """A span and two metric points per successful call (see the module docstring)."""

    async def async_log_success_event(
        self, kwargs: dict[str, Any], response_obj: object, start_time: datetime, end_time: datetime
    ) -> None:
        """Record the call that just ended."""
        del response_obj
        model = kwargs.get("model")
        labels = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic"}
        span = _TRACER.start_span(
            f"chat {model}",
            kind=trace.SpanKind.CLIENT,
            start_time=_ns(start_time),
            attributes={**labels, "gen_ai.request.model": str(model)},
        )
        span.end(end_time=_ns(end_time))
        _REQUESTS.add(1, labels)
        _DURATION.record((end_time - start_time).total_seconds(), labels)


callback: Final = Floor()
