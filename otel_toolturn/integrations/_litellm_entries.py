"""LiteLLM's entry points, wrapped so each call's records end with the call itself.

Role: the thin edge that ties a LiteLLM call's records to the call. LiteLLM's hooks start a
record per request (``_litellm_logger``); LiteLLM calls its success and failure callbacks later,
from a logging queue or a thread pool, after the call has returned or its stream has ended, and
under ``asyncio.run`` possibly only once the loop is gone. So each entry point in ``ENTRIES`` is
wrapped: while it runs, a ``CallScope`` is current and collects the call ids of the requests it
sends; when it ends, its records are taken out of the open calls (``OpenCalls.take_all``), so
LiteLLM's later callbacks find nothing to end, and ended:

- the call raised (a provider error, a cancellation): every record ends with that exception;
- a whole response: a record the provider's JSON has not already ended (``log_post_api_call``)
  ends now, its response checked when it is in the record's lane (``Entry.shape``);
- a stream (an iterator, sync or async): the last record is handed to ``LiteLLMStream``, which ends
  it on the first of exhaustion, an exception, ``close()``/``aclose()``, context exit or collection;
- earlier records of the call (a request LiteLLM sent again) end when it returns.

A call that sent nothing has no record and its result passes as it is. A call made inside
another wrapped call (LiteLLM's own retries and routes) joins the outer call's scope. Everything
here is guarded: a failure of its own is counted and the call's result is returned as LiteLLM
gave it, the record ended. LiteLLM's own exceptions reach the caller unchanged.

This module is also LiteLLM's table, the one place its vocabulary meets the lanes: which lanes each
LiteLLM provider's bodies speak (``ROUTES``, read by ``_litellm_lanes.lane_of``), the lane of the
Anthropic-native messages route, the lanes whose stream LiteLLM assembles in their own shape, and the
body builders LiteLLM serialises and signs before any hook sees the body (``BUILDERS``: there the
decision is made on the body as it is built, ``builder_wrapper``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import CoroutineType, MappingProxyType
from typing import Any, Final, cast

import wrapt

from otel_toolturn._vocab import Lane
from otel_toolturn.instrument.calls import (
    AsyncStreamProxy,
    CallRecord,
    Provider,
    ProviderName,
    StreamProxy,
    live_telemetry,
    when_collected,
)
from otel_toolturn.integrations._litellm_calls import SCOPE, CallScope, OpenCalls
from otel_toolturn.integrations._litellm_lanes import Route


@dataclass(frozen=True, kw_only=True, slots=True)
class Entry:
    """One LiteLLM entry point: where it lives, the shape of what it hands back, sync or async."""

    module: str
    name: str
    shape: Lane
    """The lane whose shape its whole response is in (a record of another lane is not checked from it)."""
    events: bool
    """Whether its stream yields that lane's own events (read by the lane's observer); else bytes."""
    is_async: bool


def _entry(module: str, name: str, shape: Lane, *, events: bool = True, is_async: bool) -> Entry:
    return Entry(module=module, name=name, shape=shape, events=events, is_async=is_async)


ENTRIES: Final[tuple[Entry, ...]] = (
    _entry("litellm", "completion", "openai.chat_completions", is_async=False),
    _entry("litellm", "acompletion", "openai.chat_completions", is_async=True),
    _entry("litellm", "responses", "openai.responses", is_async=False),
    _entry("litellm", "aresponses", "openai.responses", is_async=True),
    _entry("litellm", "anthropic_messages", "anthropic.messages", events=False, is_async=True),
    _entry("litellm.anthropic_interface.messages", "acreate", "anthropic.messages", events=False, is_async=True),
)
"""Every wrapped entry point (``litellm.anthropic.messages`` is ``litellm.anthropic_interface.messages``)."""

_OPENAI_WIRE: Final = Route(
    chat=("openai.chat_completions",),
    responses=("openai.responses", "openai.chat_completions"),
    provider="openai",
)
"""An OpenAI-compatible provider: Responses bodies (``input``), and chat bodies on both call types."""


def _gemini(provider_name: ProviderName) -> Route:
    return Route(
        chat=("gemini.generate_content",),
        responses=("gemini.generate_content",),
        provider="google_genai",
        provider_name=provider_name,
    )


ROUTES: Final[Mapping[str, Route]] = MappingProxyType(
    {
        **dict.fromkeys(("openai", "azure", "custom_openai", "hosted_vllm", "litellm_proxy"), _OPENAI_WIRE),
        "anthropic": Route(chat=("anthropic.messages",), responses=("anthropic.messages",), provider="anthropic"),
        "gemini": _gemini("gcp.gemini"),
        "vertex_ai": _gemini("gcp.vertex_ai"),
        "vertex_ai_beta": _gemini("gcp.vertex_ai"),
    }
)
"""What each LiteLLM provider (``custom_llm_provider``) sends to its pre-call hook as a dict: the Gemini
providers' REST ``generateContent`` body, named ``gcp.gemini`` or ``gcp.vertex_ai`` by the backend.
A provider in LiteLLM's own list of OpenAI-compatible providers and not here is an OpenAI wire."""


def route_of(provider: object, openai_compatible: Collection[str] = ()) -> Route | None:
    """The route of LiteLLM's provider ``provider``; ``None``: none whose bodies reach the pre-call hook readable."""
    if not isinstance(provider, str):
        return None
    route = ROUTES.get(provider)
    return route if route is not None or provider not in openai_compatible else _OPENAI_WIRE


NATIVE_MESSAGES_PROVIDER: Final = "anthropic"
NATIVE_MESSAGES_LANE: Final[Lane] = "anthropic.messages"
"""The provider and lane of the Anthropic-native messages route, read by its own pre-request hook."""

SHAPED_STREAM_LANES: Final[frozenset[Lane]] = frozenset({"openai.chat_completions", "openai.responses"})
"""Lanes whose streamed response LiteLLM assembles in the lane's own shape (checked on success)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Builder:
    """A LiteLLM method that builds a provider body, which LiteLLM serialises (and signs) before any hook sees it."""

    module: str
    owner: str
    """The class whose method it is."""
    name: str
    lane: Lane
    """The lane of the body it returns."""
    provider: Provider
    provider_name: ProviderName
    is_async: bool


def _converse(name: str, *, is_async: bool) -> Builder:
    return Builder(
        module="litellm.llms.bedrock.chat.converse_transformation",
        owner="AmazonConverseConfig",
        name=name,
        lane="bedrock.converse",
        provider="botocore",
        provider_name="aws.bedrock",
        is_async=is_async,
    )


BUILDERS: Final[tuple[Builder, ...]] = (
    _converse("_transform_request", is_async=False),
    _converse("_async_transform_request", is_async=True),
)
"""Every wrapped body builder: the Bedrock Converse body of LiteLLM's ``bedrock/`` and ``bedrock/converse/``
routes (its HTTP code signs the JSON text, so the body is decided as it is built)."""

OnBuilt = Callable[[Builder, object, object, object], None]
"""Told of each body a builder returns: ``(builder, call id, model, body)``; it may write into the body."""


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], name: str, position: int) -> object:
    return kwargs[name] if name in kwargs else (args[position] if len(args) > position else None)


def _tell(on_built: OnBuilt, builder: Builder, args: tuple[Any, ...], kwargs: dict[str, Any], body: object) -> None:
    """``on_built`` of the body, with the call id and model the builder was called with (guarded by ``on_built``)."""
    params = _argument(args, kwargs, "litellm_params", 3)
    call_id = params.get("litellm_call_id") if isinstance(params, Mapping) else None
    on_built(builder, call_id, _argument(args, kwargs, "model", 0), body)


def builder_wrapper(builder: Builder, on_built: OnBuilt) -> Callable[..., object]:
    """The wrapt wrapper of ``builder``: LiteLLM's body, handed to ``on_built`` before it is returned.

    ``_transform_request(model, messages, optional_params, litellm_params, headers)`` and its async twin:
    the call id is ``litellm_params["litellm_call_id"]``. A builder raising raises as it is, nothing told.
    """
    if builder.is_async:

        async def built_async(
            wrapped: Callable[..., Awaitable[object]], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> object:
            del instance
            body = await wrapped(*args, **kwargs)
            _tell(on_built, builder, args, kwargs, body)
            return body

        return built_async

    def built(
        wrapped: Callable[..., object], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> object:
        del instance
        body = wrapped(*args, **kwargs)
        _tell(on_built, builder, args, kwargs, body)
        return body

    return built


class LiteLLMStream(StreamProxy, AsyncStreamProxy):
    """A stream LiteLLM handed back, watched as an SDK stream is: its call's record ends once, when the stream ends.

    Ends on the first of: exhaustion, an exception from LiteLLM's iteration (the provider's end;
    a ``BaseException`` that is not an ``Exception`` is the caller's stop), ``close()``,
    ``aclose()``, context exit, or the proxy being collected (the caller's stop). With ``observed``,
    each event is fed to the record's observer on its way to the caller. LiteLLM's streams are
    their own iterators, sync or async, and so is this proxy: ``__next__``, ``__anext__`` and the
    context methods are the SDK stream proxies' own.
    """

    def __init__(self, wrapped: object, record: CallRecord, *, observed: bool) -> None:
        wrapt.ObjectProxy.__init__(self, wrapped)
        self._self_record = record
        self._self_read = None  # LiteLLM's events are the lane's own
        if observed:
            record.start_stream()
        when_collected(self, record.finish, caller_closed=True)

    def __iter__(self) -> Iterator[object]:
        return self

    def __aiter__(self) -> AsyncIterator[object]:
        return self

    def close(self) -> object:  # type: ignore[override]  # LiteLLM's streams close synchronously, as StreamProxy
        return StreamProxy.close(self)

    async def aclose(self) -> object:
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._self_record.finish(caller_closed=True)


@contextmanager
def _scoped(calls: OpenCalls) -> Iterator[CallScope]:
    """A call's scope, current (``SCOPE``) while LiteLLM runs it; a call that raises ends its open records with it.

    The exception reaches the caller unchanged (``CallRecord.finish`` never raises).
    """
    scope = CallScope()
    token = SCOPE.set(scope)
    try:
        yield scope
    except BaseException as exc:
        for record in calls.take_all(scope.call_ids):
            record.finish(exc)
        raise
    finally:
        SCOPE.reset(token)


def _returned(entry: Entry, calls: OpenCalls, scope: CallScope, result: object) -> object:
    """The call returned ``result``: end its records, or hand the last to the stream; what the caller receives."""
    records = calls.take_all(scope.call_ids)
    if not records:
        return result
    *earlier, last = records
    try:
        for record in earlier:
            record.finish()
        if isinstance(result, (Iterator, AsyncIterator)):
            return LiteLLMStream(result, last, observed=entry.events and last.lane == entry.shape)
        if last.lane == entry.shape:
            last.response(result)
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        last.telemetry.error("response", exc)
    last.finish()
    return result


def _sync_wrapper(entry: Entry, calls: OpenCalls) -> Callable[..., object]:
    def wrapper(
        wrapped: Callable[..., object], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> object:
        del instance
        if live_telemetry() is None or SCOPE.get() is not None:
            return wrapped(*args, **kwargs)
        with _scoped(calls) as scope:
            result = wrapped(*args, **kwargs)
        return _returned(entry, calls, scope, result)

    return wrapper


async def _run_async(
    entry: Entry,
    calls: OpenCalls,
    wrapped: Callable[..., Awaitable[object]],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> object:
    """An async call, once it runs: as the sync wrapper (inside another wrapped call: LiteLLM's own, as it is)."""
    if SCOPE.get() is not None:
        return await wrapped(*args, **kwargs)
    with _scoped(calls) as scope:
        result = await wrapped(*args, **kwargs)
    return _returned(entry, calls, scope, result)


def _async_wrapper(entry: Entry, calls: OpenCalls) -> Callable[..., object]:
    def wrapper(wrapped: Callable[..., Any], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        del instance
        if live_telemetry() is None:
            return wrapped(*args, **kwargs)
        call = cast("CoroutineType[Any, Any, object]", _run_async(entry, calls, wrapped, args, kwargs))
        # named as LiteLLM's own coroutine, so a caller's "never awaited" warning reads as without us
        call.__name__ = getattr(wrapped, "__name__", call.__name__)
        call.__qualname__ = getattr(wrapped, "__qualname__", call.__qualname__)
        return call

    return wrapper


def wrapper_for(entry: Entry, calls: OpenCalls) -> Callable[..., object]:
    """The wrapt wrapper of ``entry``, ending the records ``calls`` holds for each of its calls."""
    return _async_wrapper(entry, calls) if entry.is_async else _sync_wrapper(entry, calls)
