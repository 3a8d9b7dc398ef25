"""The floor of any GenAI instrumentation: one inference span and two metric points per call, nothing else.

``SpanOnly`` wraps ``chat.completions.create`` (OpenAI) and ``messages.create`` (Anthropic) with
what every instrumentation of the GenAI conventions records on a call: a CLIENT span named
``chat {model}`` with the request attributes, made current around the SDK call, the response's
model, id and token usage set on it, and one counter and one duration histogram point. It reads
nothing of the request body and checks nothing. ``bench.overhead`` runs it as one more variant,
so the cost of the OpenTelemetry SDK's own span and metric points on this machine stands next to
what each instrumentation costs in all. A streamed call's span ends when ``create`` returns (the
stream is not followed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anthropic.resources.messages
import openai.resources.chat.completions
import wrapt
from opentelemetry import metrics, trace

_TARGETS: tuple[tuple[type[Any], str], ...] = (
    (openai.resources.chat.completions.Completions, "openai"),
    (anthropic.resources.messages.Messages, "anthropic"),
)


class SpanOnly:
    """``instrument()`` / ``uninstrument()`` as a ``BaseInstrumentor`` has them, for the floor (see the module)."""

    def __init__(self) -> None:
        self._originals: list[tuple[type[Any], Any]] = []

    def instrument(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        """Wrap both SDKs' ``create`` (a no-op when already done); the global providers unless given."""
        if self._originals:
            return
        tracer = trace.get_tracer("bench.floor", tracer_provider=tracer_provider)
        meter = metrics.get_meter("bench.floor", meter_provider=meter_provider)
        requests = meter.create_counter("bench.floor.requests", unit="{request}", description="Calls seen.")
        duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="Duration of the call."
        )
        for owner, provider in _TARGETS:

            def wrapper(
                wrapped: Callable[..., object],
                _instance: object,
                args: tuple[object, ...],
                kwargs: dict[str, object],
                provider: str = provider,
            ) -> object:
                model = kwargs.get("model")
                labels = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider}
                started = time.perf_counter()
                with tracer.start_as_current_span(
                    f"chat {model}",
                    kind=trace.SpanKind.CLIENT,
                    attributes={**labels, "gen_ai.request.model": str(model), "server.address": "h"},
                ) as span:
                    result = wrapped(*args, **kwargs)
                    usage = getattr(result, "usage", None)
                    span.set_attributes(
                        {
                            "gen_ai.response.model": str(getattr(result, "model", "")),
                            "gen_ai.response.id": str(getattr(result, "id", "")),
                            "gen_ai.usage.input_tokens": int(getattr(usage, "input_tokens", 0) or 0),
                            "gen_ai.usage.output_tokens": int(getattr(usage, "output_tokens", 0) or 0),
                        }
                    )
                requests.add(1, labels)
                duration.record(time.perf_counter() - started, labels)
                return result

            self._originals.append((owner, owner.__dict__["create"]))
            wrapt.wrap_function_wrapper(owner, "create", wrapper)

    def uninstrument(self) -> None:
        """Put both SDKs' own ``create`` back."""
        for owner, original in self._originals:
            setattr(owner, "create", original)  # noqa: B010 - the attribute is the patched method, named once
        self._originals = []
