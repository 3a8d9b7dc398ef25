"""What is patched, from one table that ``instrument`` and ``uninstrument`` both read.

Role: the thin edge between the SDKs and the core. Each wrapper is ``(wrapped, instance, args,
kwargs)``; it converts the call's keyword arguments (``_request``), records (``_record``) and
hands back what the SDK returned, watched (``_proxies``). It never decides a repair or a stream
verdict itself.

The table (``TARGETS``) patches resource methods; the helpers route through them:

- openai ``chat.completions.create`` (plain, ``stream=True``; ``with_raw_response`` and
  ``with_streaming_response`` call it), ``chat.completions.stream()`` (calls ``create``),
  ``chat.completions.parse()`` (its own request: patched); ``responses.create`` / ``.stream()``
  (calls ``create``) / ``.parse()`` (patched). Sync and async.
- anthropic ``messages.create`` (plain and ``stream=True``), ``messages.stream()`` and
  ``messages.parse()`` (each its own request: patched), and the ``beta.messages`` equivalents.

Never breaking the host call: everything otel-toolturn does around the SDK call is guarded; on
any failure it is counted, logged at debug, and the call proceeds as uninstrumented. The SDK's
own exceptions reach the caller unchanged. A call made inside another patched call (a helper
that calls ``create``) is not recorded twice. A wrapper whose instrumentation was removed while
a bound copy of it was still held passes straight through.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

import wrapt
from opentelemetry.trace import Span

from otel_toolturn._vocab import Lane
from otel_toolturn.instrument._config import Provider
from otel_toolturn.instrument._proxies import ResultTypes, StreamManagerProxy, watch
from otel_toolturn.instrument._record import CallRecord, adopting_record, current_genai_span
from otel_toolturn.instrument._request import materialise, prepare_request
from otel_toolturn.instrument._telemetry import Telemetry
from otel_toolturn.instrument._withhold import current_scope

Kind = Literal["call", "stream_manager", "sdk_span"]
"""``call``: returns the response (or a stream, or a raw response). ``stream_manager``: returns a
manager. ``sdk_span``: a module function of the SDK that starts its own call span (``owner`` empty)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Target:
    """One patched method: where it lives, which lane it speaks, what it returns, sync or async."""

    provider: Provider
    module: str
    owner: str
    method: str
    lane: Lane
    kind: Kind
    is_async: bool


def _targets(
    provider: Provider,
    module: str,
    owners: tuple[str, str],
    lane: Lane,
    methods: Mapping[str, Kind],
) -> tuple[Target, ...]:
    """One target per method, for the sync owner and the async owner (in that order)."""
    return tuple(
        Target(
            provider=provider,
            module=module,
            owner=owner,
            method=method,
            lane=lane,
            kind=kind,
            is_async=is_async and kind == "call",
        )
        for method, kind in methods.items()
        for owner, is_async in zip(owners, (False, True), strict=True)
    )


_CALLS: Final[Mapping[str, Kind]] = {"create": "call", "parse": "call"}
_ANTHROPIC: Final[Mapping[str, Kind]] = {"create": "call", "parse": "call", "stream": "stream_manager"}

TARGETS: Final[tuple[Target, ...]] = (
    *_targets(
        "openai",
        "openai.resources.chat.completions.completions",
        ("Completions", "AsyncCompletions"),
        "openai.chat_completions",
        _CALLS,
    ),
    *_targets(
        "openai", "openai.resources.responses.responses", ("Responses", "AsyncResponses"), "openai.responses", _CALLS
    ),
    *_targets(
        "anthropic",
        "anthropic.resources.messages.messages",
        ("Messages", "AsyncMessages"),
        "anthropic.messages",
        _ANTHROPIC,
    ),
    *_targets(
        "anthropic",
        "anthropic.resources.beta.messages.messages",
        ("Messages", "AsyncMessages"),
        "anthropic.messages",
        _ANTHROPIC,
    ),
    Target(
        provider="anthropic",
        module="anthropic._base_client",
        owner="",
        method="start_api_call_span",
        lane="anthropic.messages",
        kind="sdk_span",
        is_async=False,
    ),
)
"""Every patched method. ``instrument`` patches each one whose module imports; ``uninstrument`` restores them."""


def result_types(provider: Provider) -> ResultTypes:
    """The classes ``provider``'s SDK returns for streams and raw responses."""
    if provider == "openai":
        sdk = importlib.import_module("openai")
        legacy = importlib.import_module("openai._legacy_response")
        response = importlib.import_module("openai._response")
        return ResultTypes(
            streams=(sdk.Stream,),
            async_streams=(sdk.AsyncStream,),
            raw=(legacy.LegacyAPIResponse, response.APIResponse, response.AsyncAPIResponse),
        )
    sdk = importlib.import_module("anthropic")
    response = importlib.import_module("anthropic._response")
    return ResultTypes(
        streams=(sdk.Stream,),
        async_streams=(sdk.AsyncStream,),
        raw=(response.APIResponse, response.AsyncAPIResponse),
    )


_INSIDE: ContextVar[bool] = ContextVar("otel_toolturn_inside", default=False)


class State:
    """The live instrumentation: its telemetry (``None`` when uninstrumented) and what it patched."""

    def __init__(self) -> None:
        self.telemetry: Telemetry | None = None
        self.originals: list[tuple[object, str, object]] = []
        self.types: dict[Provider, ResultTypes] = {}


STATE: Final = State()


def _server_address(instance: object) -> str | None:
    client = getattr(instance, "_client", None)
    host = getattr(getattr(client, "base_url", None), "host", None)
    return host if isinstance(host, str) else None


@dataclass(frozen=True, kw_only=True, slots=True)
class _Begun:
    record: CallRecord
    kwargs: dict[str, object]


def _sdk_makes_span(target: Target, instance: object) -> bool:
    """Whether the SDK will start its own call span for this call (the anthropic SDK does when tracing)."""
    if target.provider != "anthropic" or current_genai_span() is not None:
        return False
    return getattr(getattr(instance, "_client", None), "_tracer", None) is not None


def _begin(telemetry: Telemetry, target: Target, instance: object, kwargs: dict[str, object]) -> _Begun | None:
    """The request hook: decide, start the record, record the request. ``None`` ⇒ proceed uninstrumented."""
    try:
        model = kwargs.get("model")
        record = CallRecord(
            telemetry,
            defer_span=_sdk_makes_span(target, instance),
            lane=target.lane,
            provider=target.provider,
            requested_model=model if isinstance(model, str) else None,
            server_address=_server_address(instance),
        )
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("span", exc)
        return None
    try:
        prepared = prepare_request(
            kwargs,
            lane=target.lane,
            options=telemetry.options,
            scope=current_scope(),
            receipt=record.recording,
        )
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("law", exc)
        record.finish()
        return None
    try:
        record.request(prepared)
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("request", exc)
    return _Begun(record=record, kwargs=prepared.kwargs)


def _watched(telemetry: Telemetry, target: Target, record: CallRecord, result: object) -> object:
    """Hand back ``result`` watched; on any failure, the result itself."""
    try:
        if target.kind == "stream_manager":
            return StreamManagerProxy(result, record)
        return watch(result, record, STATE.types[target.provider])
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("response", exc)
        record.finish()
        return result


def _sync_wrapper(target: Target) -> Callable[..., object]:
    def wrapper(
        wrapped: Callable[..., object], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> object:
        telemetry = STATE.telemetry
        if telemetry is None or _INSIDE.get():
            return wrapped(*args, **kwargs)
        kwargs = materialise(kwargs, target.lane)
        begun = _begin(telemetry, target, instance, kwargs)
        if begun is None:
            return wrapped(*args, **kwargs)
        token = _INSIDE.set(True)
        try:
            with begun.record.current():
                result = wrapped(*args, **begun.kwargs)
        except BaseException as exc:
            begun.record.finish(exc)
            raise
        finally:
            _INSIDE.reset(token)
        return _watched(telemetry, target, begun.record, result)

    return wrapper


def _async_wrapper(target: Target) -> Callable[..., object]:
    def wrapper(wrapped: Callable[..., Any], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        telemetry = STATE.telemetry
        if telemetry is None or _INSIDE.get():
            return wrapped(*args, **kwargs)
        kwargs = materialise(kwargs, target.lane)
        begun = _begin(telemetry, target, instance, kwargs)
        if begun is None:
            return wrapped(*args, **kwargs)

        async def call() -> object:
            token = _INSIDE.set(True)
            try:
                with begun.record.current():
                    result = await wrapped(*args, **begun.kwargs)
            except BaseException as exc:
                begun.record.finish(exc)
                raise
            finally:
                _INSIDE.reset(token)
            return _watched(telemetry, target, begun.record, result)

        return call()

    return wrapper


def _sdk_span_wrapper(
    wrapped: Callable[..., object], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> object:
    """The SDK started its own call span: a call waiting for it records onto it instead of its own."""
    del instance
    span = wrapped(*args, **kwargs)
    telemetry = STATE.telemetry
    record = adopting_record()
    if span is None or record is None or telemetry is None:
        return span
    try:
        return record.adopt(cast("Span", span))
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("span", exc)
        return span


def _wrapper_for(target: Target) -> Callable[..., object]:
    if target.kind == "sdk_span":
        return _sdk_span_wrapper
    return _async_wrapper(target) if target.is_async else _sync_wrapper(target)


def patch(telemetry: Telemetry) -> None:
    """Patch every target of an enabled, importable provider (see ``TARGETS``)."""
    STATE.telemetry = telemetry
    for target in TARGETS:
        if target.provider not in telemetry.options.providers:
            continue
        try:
            module = importlib.import_module(target.module)
            owner = getattr(module, target.owner) if target.owner else module
            original = vars(owner)[target.method]
            STATE.types.setdefault(target.provider, result_types(target.provider))
        except (ImportError, AttributeError, KeyError):
            continue
        setattr(owner, target.method, wrapt.FunctionWrapper(original, _wrapper_for(target)))
        STATE.originals.append((owner, target.method, original))


def unpatch() -> None:
    """Restore every patched method to the very object it was before ``patch``."""
    STATE.telemetry = None
    while STATE.originals:
        owner, method, original = STATE.originals.pop()
        setattr(owner, method, original)
    STATE.types.clear()
