"""boto3 / botocore ``bedrock-runtime``: ``converse``, ``converse_stream`` and Anthropic ``invoke_model``.

The same for aiobotocore's async client (``AioBaseClient``, ``AioEndpoint``), which subclasses botocore's and
awaits the same two steps: one decision (``_decided``) for both, the call awaited while pending, its
``AioEventStream`` watched by ``AsyncStreamProxy`` and an invoke body by ``AsyncWatchedBody``.

The call hook and the watched result of the operations that carry a tool-turn transcript:
``Converse`` and ``ConverseStream`` (the ``bedrock.converse`` lane, ``messages``), and
``InvokeModel`` and ``InvokeModelWithResponseStream`` whose body is Anthropic Messages JSON (the
``anthropic.messages`` lane; ``anthropic_body`` says which bodies are). ``gen_ai.provider.name`` is
``aws.bedrock`` on both.

Where it hooks (both from the patch table, ``_patches.TARGETS``):

- the call: ``botocore.client.BaseClient._make_api_call(operation_name, api_params)``. botocore
  generates every client method at run time and each one calls this function, so one patch reaches
  every client, made before or after ``instrument``. ``api_call_wrapper`` lets every operation through
  untouched but bedrock-runtime's ``Converse`` and ``ConverseStream``, and its ``InvokeModel`` and
  ``InvokeModelWithResponseStream`` with an Anthropic body.
- the send: ``botocore.endpoint.Endpoint._send(request)``, through the send hook every SDK shares
  (``_patches``: kind ``send``). botocore calls it once per HTTP attempt it makes (its retries
  included), and only for a request that really goes out: an attempt a ``before-send`` handler answers
  and a call a ``before-call`` handler answers (botocore's ``Stubber``) send nothing, so they record
  nothing. The first attempt makes the call's record and span; every later one reuses them.

Why not botocore's own events (``before-parameter-build``, ``before-send``): they are registered on each
client's emitter, copied from its session when the client is made, so a handler cannot reach the
clients made before ``instrument``, and ``uninstrument`` could not take it back from every client
without keeping each one; and a handler runs before a step, never around it: it cannot keep the decided
call pending while botocore sends it, make the span current during the send, or watch the result (the
response dict, or the ``EventStream`` inside it) once the call returns. Two function patches do all
that and are restored exactly by ``uninstrument``.

Per Converse call, as every patched SDK call (``_patches``): the law decides ``messages`` before
botocore validates and serialises them (``repair`` mode sends the view in a new parameters dict;
``observe`` mode sends the caller's own); the call runs pending; a whole response is checked and
recorded (``CallRecord.response``); a stream's ``EventStream`` is handed back watched
(``_proxies.StreamProxy``: each event read by the ``bedrock.converse`` observer, the span ended once).
botocore's exceptions (``ClientError`` and its ``ValidationException``, ``ParamValidationError``) reach
the caller unchanged; a call sent ends its span with ``error.type``; a call never sent records nothing.
Anything otel-toolturn fails at is counted, logged at debug, and the call goes on uninstrumented.
Per InvokeModel call, the same on the body's Anthropic request: ``params["body"]`` (JSON bytes or a
string) is decoded, decided as the anthropic SDK's ``messages.create`` keyword arguments are, and
encoded again only when the decision changed it (bytes stay bytes, a string a string); any other
body (not JSON, not an object, no ``anthropic_version`` or no ``messages`` list, a file) is sent
untouched and records nothing. The whole response's ``body`` is handed back watched
(``WatchedBody``: the message checked and the span ended when the caller reads it whole, or closes
it); a stream's events are watched as Anthropic's, each ``chunk``'s ``bytes`` read by the
``anthropic.messages`` observer.

A botocore call made while a Converse call is pending (a credentials provider calling STS to sign
it) runs with no call pending, so its send never takes the Converse call's record.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Final, cast

import wrapt

from otel_toolturn._vocab import Lane
from otel_toolturn.instrument._pending import PENDING, PendingCall
from otel_toolturn.instrument._proxies import AsyncStreamProxy, StreamProxy, when_collected
from otel_toolturn.instrument._record import CallRecord
from otel_toolturn.instrument._request import Materialised, decide_request, materialise
from otel_toolturn.instrument._telemetry import Telemetry
from otel_toolturn.instrument._withhold import current_scope
from otel_toolturn.lanes import adapter_for

SERVICE: Final = "bedrock-runtime"
"""The botocore service name whose operations are instrumented."""
OPERATIONS: Final = frozenset({"Converse", "ConverseStream"})
"""The operations of ``SERVICE`` that carry a ``messages`` transcript (the ``bedrock.converse`` lane)."""
STREAMED: Final = "ConverseStream"
"""The operation whose response holds an ``EventStream`` under ``stream``."""
INVOKE_OPERATIONS: Final = frozenset({"InvokeModel", "InvokeModelWithResponseStream"})
"""The operations of ``SERVICE`` whose ``body`` may be an Anthropic Messages request (the invoke lane)."""
INVOKE_STREAMED: Final = "InvokeModelWithResponseStream"
"""The invoke operation whose response holds an ``EventStream`` of ``chunk`` events under ``body``."""

TelemetryOf = Callable[[], Telemetry | None]
ServerOf = Callable[[str], tuple[str | None, int | None]]


def instrumented(instance: object, operation_name: object) -> bool:
    """Whether a ``_make_api_call`` may be one this module instruments: bedrock-runtime's Converse or invoke."""
    if operation_name not in OPERATIONS and operation_name not in INVOKE_OPERATIONS:
        return False
    service_model = getattr(getattr(instance, "meta", None), "service_model", None)
    return getattr(service_model, "service_name", None) == SERVICE


def _passed_through(wrapped: Callable[..., object], args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
    """Another operation: called as it is, with no call pending (its sends are never a Converse call's)."""
    if PENDING.get() is None:
        return wrapped(*args, **kwargs)
    token = PENDING.set(None)
    try:
        return wrapped(*args, **kwargs)
    finally:
        PENDING.reset(token)


def _passed_through_async(
    wrapped: Callable[..., Awaitable[object]], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Awaitable[object]:
    """``_passed_through`` for aiobotocore: the operation awaited with no call pending."""
    if PENDING.get() is None:
        return wrapped(*args, **kwargs)
    return _apart(wrapped, args, kwargs)


async def _apart(wrapped: Callable[..., Awaitable[object]], args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
    token = PENDING.set(None)
    try:
        return await wrapped(*args, **kwargs)
    finally:
        PENDING.reset(token)


def anthropic_body(body: object, lane: Lane) -> dict[str, object] | None:
    """An invoke ``body`` read as an Anthropic Messages request; ``None`` when it is not one.

    One: JSON bytes (UTF-8) or a string holding an object with ``anthropic_version`` and a
    ``messages`` list. Anything else (a file, another model's body, text that is not JSON) is ``None``.
    """
    if isinstance(body, (bytes, bytearray)):
        try:
            text = bytes(body).decode()
        except UnicodeDecodeError:
            return None
    elif isinstance(body, str):
        text = body
    else:
        return None
    try:
        request = json.loads(text)
    except ValueError:
        return None
    if not isinstance(request, dict) or "anthropic_version" not in request:
        return None
    return request if isinstance(request.get(adapter_for(lane).transcript_field), list) else None


def encoded_body(request: Mapping[str, object], like: object) -> bytes | str:
    """``request`` as JSON, of the caller's body's kind: a string for a string, else UTF-8 bytes."""
    text = json.dumps(request, ensure_ascii=False, separators=(",", ":"))
    return text if isinstance(like, str) else text.encode()


def _begin(
    telemetry: Telemetry,
    lane: Lane,
    instance: object,
    params: dict[str, object],
    server_of: ServerOf,
    *,
    model: object,
) -> PendingCall | None:
    """Decide what is sent and make the call pending; ``None``: proceed uninstrumented (the failure counted)."""
    try:
        decided = decide_request(params, lane=lane, options=telemetry.options, scope=current_scope())
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("law", exc)
        return None
    try:
        endpoint = getattr(getattr(instance, "meta", None), "endpoint_url", None)
        return PendingCall(
            telemetry,
            lane=lane,
            provider="botocore",
            decided=decided,
            caller_kwargs={"model": model},  # the pending call reads the requested model as ``model``
            server=server_of(endpoint) if isinstance(endpoint, str) else (None, None),
            provider_name="aws.bedrock",
        )
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("span", exc)
        return None


class WatchedBody(wrapt.ObjectProxy[Any]):
    """The ``body`` of an InvokeModel response (botocore's ``StreamingBody``), watched.

    The caller reads it as without instrumentation. Read whole (``read()``, or reads up to its end),
    its JSON is checked as an Anthropic message and the call finished; a read that raises finishes
    the call with that error; ``close()`` or collection unread finishes it as the caller's stop.
    """

    def __init__(self, wrapped: object, record: CallRecord) -> None:
        super().__init__(wrapped)
        self._self_record = record
        self._self_data = bytearray()
        when_collected(self, record.finish, caller_closed=True)

    def read(self, amt: int | None = None) -> bytes:
        """The wrapped body's ``read``; the call recorded once the body has been read to its end."""
        record = self._self_record
        try:
            data: bytes = self.__wrapped__.read(amt)
        except BaseException as exc:
            record.finish(exc, caller_closed=not isinstance(exc, Exception))
            raise
        _took(record, self._self_data, data, amt)
        return data

    def close(self) -> object:
        try:
            return self.__wrapped__.close()
        finally:
            self._self_record.finish(caller_closed=True)


class AioEventStreamProxy(AsyncStreamProxy):
    """aiobotocore's ``AioEventStream``, watched as an async SDK stream; its ``close`` is botocore's, synchronous."""

    def close(self) -> object:  # type: ignore[override]  # the stream's own close is synchronous, so is this one
        try:
            return self.__wrapped__.close()
        finally:
            self._self_record.finish(caller_closed=True)


class AsyncWatchedBody(WatchedBody):
    """The ``body`` of an aiobotocore InvokeModel response (its async ``StreamingBody``), watched as ``WatchedBody``.

    ``await read()``, read to its end, checks the message and finishes the call; ``close()`` (synchronous, as
    the body's), ``await aclose()``, leaving ``async with`` or collection unread finish it as the caller's stop.
    """

    async def read(self, amt: int | None = None) -> bytes:  # type: ignore[override]  # the body reads with await
        """The wrapped body's ``read``, awaited; the call recorded once the body has been read to its end."""
        record = self._self_record
        try:
            data: bytes = await self.__wrapped__.read(amt)
        except BaseException as exc:
            record.finish(exc, caller_closed=not isinstance(exc, Exception))
            raise
        _took(record, self._self_data, data, amt)
        return data

    async def aclose(self) -> object:
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._self_record.finish(caller_closed=True)

    async def __aenter__(self) -> AsyncWatchedBody:
        await self.__wrapped__.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        try:
            return cast("bool | None", await self.__wrapped__.__aexit__(exc_type, exc, tb))
        finally:
            self._self_record.finish(caller_closed=True)


def _took(record: CallRecord, read: bytearray, data: bytes, amt: int | None) -> None:
    """A body read ``data`` (asked for ``amt`` bytes): kept in ``read``; at the body's end, its message recorded."""
    read += data
    if amt is None or not data:
        try:
            message: object = json.loads(bytes(read))
        except ValueError:
            message = None
        record.response(message)


def chunk_bytes(event: object) -> object:
    """What the Anthropic observer reads of an ``InvokeModelWithResponseStream`` event: its ``chunk``'s bytes.

    Any other event (none carries a message event) is read as it is.
    """
    chunk = event.get("chunk") if isinstance(event, Mapping) else None
    payload = chunk.get("bytes") if isinstance(chunk, Mapping) else None
    return payload if isinstance(payload, bytes) else event


def _watched(
    telemetry: Telemetry, call: PendingCall, operation_name: str, result: object, *, aio: bool = False
) -> object:
    """The response handed back: a whole one checked and recorded; a stream's ``EventStream`` watched.

    An invoke response's ``body`` is watched as Anthropic's (``WatchedBody``, or its stream's chunks).
    ``aio``: aiobotocore's response, its streams and bodies read with ``await``.
    """
    call.handed_over()
    record = call.record
    if record is None:
        return result
    try:
        streams = AioEventStreamProxy if aio else StreamProxy
        stream = result.get("stream") if isinstance(result, Mapping) else None
        if operation_name == STREAMED and stream is not None:
            return {**result, "stream": streams(stream, record)}  # type: ignore[dict-item]
        body = result.get("body") if isinstance(result, Mapping) else None
        if operation_name == INVOKE_STREAMED and body is not None:
            return {**result, "body": streams(body, record, read=chunk_bytes)}  # type: ignore[dict-item]
        if operation_name in INVOKE_OPERATIONS and body is not None:
            watched = AsyncWatchedBody(body, record) if aio else WatchedBody(body, record)
            return {**result, "body": watched}  # type: ignore[dict-item]
        record.response(result)
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("response", exc)
        record.finish()
    return result


def _materialised(telemetry: Telemetry, lane: Lane, params: dict[str, object]) -> Materialised:
    """``materialise``, guarded: a failure of its own sends the caller's parameters as they are, unrecorded."""
    try:
        return materialise(params, lane)
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("request", exc)
        return Materialised(kwargs=params, readable=False)


def api_call_wrapper(
    lane: Lane, invoke_lane: Lane, telemetry_of: TelemetryOf, server_of: ServerOf, *, aio: bool = False
) -> Callable[..., object]:
    """The wrapper of ``BaseClient._make_api_call`` (``aio``: of aiobotocore's ``AioBaseClient``, a coroutine).

    ``lane``: what Converse speaks; ``invoke_lane``: what an invoke body read by ``anthropic_body`` speaks.

    ``telemetry_of`` gives the live instrumentation's telemetry (``None``: uninstrumented, pass through);
    ``server_of`` reads ``server.address`` and ``server.port`` from the client's endpoint URL.
    """

    def wrapper(wrapped: Callable[..., Any], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        telemetry = telemetry_of()
        call: PendingCall | None = None
        sent: tuple[Any, ...] = args
        if (
            telemetry is not None and len(args) == 2 and not kwargs and instrumented(instance, args[0])
        ):  # (operation_name, api_params)
            call, sent = _decided(
                telemetry, instance, args[0], args[1], lane=lane, invoke_lane=invoke_lane, server_of=server_of
            )
        if telemetry is None or call is None:
            return (_passed_through_async if aio else _passed_through)(wrapped, sent, kwargs)
        return (_sent_async if aio else _sent)(wrapped, telemetry, call, sent)

    return wrapper


def _sent(wrapped: Callable[..., object], telemetry: Telemetry, call: PendingCall, sent: tuple[Any, ...]) -> object:
    """A botocore call, decided: run pending, its response watched (botocore's exceptions unchanged)."""
    try:
        with call.sending():
            result = wrapped(*sent)
    except BaseException as exc:
        call.failed(exc)
        raise
    return _watched(telemetry, call, sent[0], result)


async def _sent_async(
    wrapped: Callable[..., Awaitable[object]], telemetry: Telemetry, call: PendingCall, sent: tuple[Any, ...]
) -> object:
    """An aiobotocore call, decided: awaited pending, its response watched (its exceptions unchanged)."""
    try:
        with call.sending():
            result = await wrapped(*sent)
    except BaseException as exc:
        call.failed(exc)
        raise
    return _watched(telemetry, call, sent[0], result, aio=True)


def _decided(
    telemetry: Telemetry,
    instance: object,
    operation_name: str,
    params: object,
    *,
    lane: Lane,
    invoke_lane: Lane,
    server_of: ServerOf,
) -> tuple[PendingCall | None, tuple[Any, ...]]:
    """An instrumented operation's call, decided and pending, and the arguments that send it.

    ``None``: the operation goes out uninstrumented with those arguments (parameters that are not a dict,
    an invoke body that is not Anthropic Messages, or a failure of otel-toolturn's own, counted).
    """
    if not isinstance(params, dict):
        return None, (operation_name, params)
    if operation_name in INVOKE_OPERATIONS:
        return _invoke(telemetry, instance, operation_name, params, lane=invoke_lane, server_of=server_of)
    materialised = _materialised(telemetry, lane, params)
    if not materialised.readable:
        return None, (operation_name, materialised.kwargs)
    call = _begin(telemetry, lane, instance, materialised.kwargs, server_of, model=params.get("modelId"))
    return call, (operation_name, materialised.kwargs if call is None else call.kwargs)


def _invoke(
    telemetry: Telemetry,
    instance: object,
    operation_name: str,
    params: dict[str, object],
    *,
    lane: Lane,
    server_of: ServerOf,
) -> tuple[PendingCall | None, tuple[Any, ...]]:
    """An invoke call: its Anthropic body decided (see the module docstring); any other body untouched."""
    untouched = (operation_name, params)
    try:
        request = anthropic_body(params.get("body"), lane)
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("request", exc)
        request = None
    if request is None:
        return None, untouched
    materialised = _materialised(telemetry, lane, request)
    if not materialised.readable:
        return None, untouched
    call = _begin(telemetry, lane, instance, materialised.kwargs, server_of, model=params.get("modelId"))
    if call is None or call.kwargs is request:
        return call, untouched
    try:
        return call, (operation_name, {**params, "body": encoded_body(call.kwargs, params.get("body"))})
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("request", exc)
        return None, untouched
