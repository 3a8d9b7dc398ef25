"""The floor of any GenAI instrumentation: one inference span and two metric points per call, nothing else.

``SpanOnly`` wraps ``chat.completions.create`` (OpenAI, and the groq SDK's own), ``messages.create`` (Anthropic),
``models.generate_content`` (google-genai), the async ``beta.messages.create`` (Anthropic; the
method pydantic-ai calls) and botocore's ``BaseClient._make_api_call`` for bedrock-runtime's
``Converse`` (every other operation passes through untouched) with what every instrumentation of the GenAI conventions
records on a call: a CLIENT span named ``chat {model}`` with the request attributes, made current
around the SDK call, the response's
model, id and token usage set on it, and one counter and one duration histogram point. It reads
nothing of the request body and checks nothing. ``bench.overhead`` runs it as one more variant,
so the cost of the OpenTelemetry SDK's own span and metric points on this machine stands next to
what each instrumentation costs in all. A streamed call's span ends when ``create`` returns (the
stream is not followed).
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anthropic.resources.beta.messages.messages
import anthropic.resources.messages
import botocore.client
import google.genai.models
import groq.resources.chat.completions
import openai.resources.chat.completions
import wrapt
from opentelemetry import metrics, trace

_TARGETS: tuple[tuple[type[Any], str, str], ...] = (
    (openai.resources.chat.completions.Completions, "create", "openai"),
    (anthropic.resources.messages.Messages, "create", "anthropic"),
    (google.genai.models.Models, "generate_content", "gcp.gemini"),
    (groq.resources.chat.completions.Completions, "create", "groq"),
)
"""Each SDK's sync call method: its class, the method's name, and ``gen_ai.provider.name``."""
_ASYNC_TARGETS: tuple[tuple[type[Any], str, str], ...] = (
    (anthropic.resources.beta.messages.messages.AsyncMessages, "create", "anthropic"),
)
"""The async call methods wrapped, as in ``_TARGETS``."""
_Args = tuple[object, ...]
_Kwargs = dict[str, object]


def _response_attributes(result: object) -> dict[str, str | int]:
    """The response model, id and token usage, as each SDK names them (google-genai: ``model_version``, ...)."""
    usage = getattr(result, "usage", None)
    if usage is not None:
        model, response_id = getattr(result, "model", ""), getattr(result, "id", "")
        prompt = getattr(usage, "input_tokens", None) or getattr(usage, "prompt_tokens", 0)  # Chat: prompt_tokens
        completion = getattr(usage, "output_tokens", None) or getattr(usage, "completion_tokens", 0)
    else:
        usage = getattr(result, "usage_metadata", None)
        model, response_id = getattr(result, "model_version", ""), getattr(result, "response_id", "")
        prompt, completion = getattr(usage, "prompt_token_count", 0), getattr(usage, "candidates_token_count", 0)
    return {
        "gen_ai.response.model": str(model or ""),
        "gen_ai.response.id": str(response_id or ""),
        "gen_ai.usage.input_tokens": int(prompt or 0),
        "gen_ai.usage.output_tokens": int(completion or 0),
    }


def _answered(span: trace.Span, result: object) -> object:
    """``result``, its response attributes set on the call's ``span`` first."""
    span.set_attributes(_response_attributes(result))
    return result


def _converse_attributes(result: object) -> dict[str, str | int]:
    """A Converse response's token usage (its ``usage``; Converse names no response model or id)."""
    usage = result.get("usage") if isinstance(result, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    return {
        "gen_ai.usage.input_tokens": int(usage.get("inputTokens") or 0),
        "gen_ai.usage.output_tokens": int(usage.get("outputTokens") or 0),
    }


def _is_converse(instance: object, args: tuple[object, ...]) -> bool:
    """Whether a ``_make_api_call(operation_name, api_params)`` is bedrock-runtime's ``Converse``."""
    service = getattr(getattr(getattr(instance, "meta", None), "service_model", None), "service_name", None)
    return len(args) == 2 and args[0] == "Converse" and service == "bedrock-runtime"


class SpanOnly:
    """``instrument()`` / ``uninstrument()`` as a ``BaseInstrumentor`` has them, for the floor (see the module)."""

    def __init__(self) -> None:
        self._originals: list[tuple[type[Any], str, Any]] = []

    def instrument(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        """Wrap each SDK's call method (a no-op when already done); the global providers unless given."""
        if self._originals:
            return
        tracer = trace.get_tracer("bench.floor", tracer_provider=tracer_provider)
        meter = metrics.get_meter("bench.floor", meter_provider=meter_provider)
        requests = meter.create_counter("bench.floor.requests", unit="{request}", description="Calls seen.")
        duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="Duration of the call."
        )

        @contextlib.contextmanager
        def recorded(provider: str, model: object) -> Iterator[trace.Span]:
            """The call's span, current while the SDK call runs; the two metric points once it ends."""
            labels = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": provider}
            started = time.perf_counter()
            with tracer.start_as_current_span(
                f"chat {model}",
                kind=trace.SpanKind.CLIENT,
                attributes={**labels, "gen_ai.request.model": str(model), "server.address": "h"},
            ) as span:
                yield span
            requests.add(1, labels)
            duration.record(time.perf_counter() - started, labels)

        def call(
            provider: str, wrapped: Callable[..., object], _instance: object, args: _Args, kwargs: _Kwargs
        ) -> object:
            with recorded(provider, kwargs.get("model")) as span:
                return _answered(span, wrapped(*args, **kwargs))

        async def async_call(
            provider: str, wrapped: Callable[..., Awaitable[object]], _instance: object, args: _Args, kwargs: _Kwargs
        ) -> object:
            with recorded(provider, kwargs.get("model")) as span:
                return _answered(span, await wrapped(*args, **kwargs))

        for owner, method, provider in _TARGETS:
            self._wrap(owner, method, functools.partial(call, provider))
        for owner, method, provider in _ASYNC_TARGETS:
            self._wrap(owner, method, functools.partial(async_call, provider))

        def converse_wrapper(
            wrapped: Callable[..., object], instance: object, args: tuple[object, ...], kwargs: dict[str, object]
        ) -> object:
            if not _is_converse(instance, args):
                return wrapped(*args, **kwargs)
            params = args[1]
            model = params.get("modelId") if isinstance(params, dict) else None
            with recorded("aws.bedrock", model) as span:
                result = wrapped(*args, **kwargs)
                span.set_attributes(_converse_attributes(result))
            return result

        self._wrap(botocore.client.BaseClient, "_make_api_call", converse_wrapper)

    def _wrap(self, owner: type[Any], method: str, wrapper: Callable[..., object]) -> None:
        """Wrap ``owner.method``, keeping the original for ``uninstrument``."""
        self._originals.append((owner, method, owner.__dict__[method]))
        wrapt.wrap_function_wrapper(owner, method, wrapper)

    def uninstrument(self) -> None:
        """Put each SDK's own call method back."""
        for owner, method, original in self._originals:
            setattr(owner, method, original)
        self._originals = []
