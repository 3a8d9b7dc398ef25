"""boto3 / botocore ``bedrock-runtime`` ``converse`` and ``converse_stream``: the call hook and the watched result.

Where it hooks (both from the patch table, ``_patches.TARGETS``):

- the call: ``botocore.client.BaseClient._make_api_call(operation_name, api_params)``. botocore
  generates every client method at run time and each one calls this function, so one patch reaches
  every client, made before or after ``instrument``. ``api_call_wrapper`` lets every operation through
  untouched but bedrock-runtime's ``Converse`` and ``ConverseStream``.
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
A botocore call made while a Converse call is pending (a credentials provider calling STS to sign
it) runs with no call pending, so its send never takes the Converse call's record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from otel_toolturn._vocab import Lane
from otel_toolturn.instrument._pending import PENDING, PendingCall
from otel_toolturn.instrument._proxies import StreamProxy
from otel_toolturn.instrument._request import Materialised, decide_request, materialise
from otel_toolturn.instrument._telemetry import Telemetry
from otel_toolturn.instrument._withhold import current_scope

SERVICE: Final = "bedrock-runtime"
"""The botocore service name whose operations are instrumented."""
OPERATIONS: Final = frozenset({"Converse", "ConverseStream"})
"""The operations of ``SERVICE`` that carry a ``messages`` transcript (the ``bedrock.converse`` lane)."""
STREAMED: Final = "ConverseStream"
"""The operation whose response holds an ``EventStream`` under ``stream``."""

TelemetryOf = Callable[[], Telemetry | None]
ServerOf = Callable[[str], tuple[str | None, int | None]]


def instrumented(instance: object, operation_name: object) -> bool:
    """Whether a ``_make_api_call`` is one this module instruments: a Converse operation of bedrock-runtime."""
    if operation_name not in OPERATIONS:
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


def _begin(
    telemetry: Telemetry, lane: Lane, instance: object, params: dict[str, object], server_of: ServerOf
) -> PendingCall | None:
    """Decide what is sent and make the call pending; ``None``: proceed uninstrumented (the failure counted)."""
    try:
        decided = decide_request(params, lane=lane, options=telemetry.options, scope=current_scope())
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("law", exc)
        return None
    try:
        endpoint = getattr(getattr(instance, "meta", None), "endpoint_url", None)
        model = params.get("modelId")
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


def _watched(telemetry: Telemetry, call: PendingCall, operation_name: str, result: object) -> object:
    """The response handed back: a whole one checked and recorded; a stream's ``EventStream`` watched."""
    call.handed_over()
    record = call.record
    if record is None:
        return result
    try:
        stream = result.get("stream") if isinstance(result, Mapping) else None
        if operation_name == STREAMED and stream is not None:
            return {**result, "stream": StreamProxy(stream, record)}  # type: ignore[dict-item]
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


def api_call_wrapper(lane: Lane, telemetry_of: TelemetryOf, server_of: ServerOf) -> Callable[..., object]:
    """The wrapper of ``BaseClient._make_api_call`` (see the module docstring).

    ``telemetry_of`` gives the live instrumentation's telemetry (``None``: uninstrumented, pass through);
    ``server_of`` reads ``server.address`` and ``server.port`` from the client's endpoint URL.
    """

    def wrapper(
        wrapped: Callable[..., object], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> object:
        telemetry = telemetry_of()
        if (
            telemetry is None or len(args) != 2 or kwargs or not instrumented(instance, args[0])
        ):  # (operation_name, api_params)
            return _passed_through(wrapped, args, kwargs)
        operation_name, params = args
        if not isinstance(params, dict):
            return wrapped(*args)
        materialised = _materialised(telemetry, lane, params)
        if not materialised.readable:
            return wrapped(operation_name, materialised.kwargs)
        call = _begin(telemetry, lane, instance, materialised.kwargs, server_of)
        if call is None:
            return wrapped(operation_name, materialised.kwargs)
        try:
            with call.sending():
                result = wrapped(operation_name, call.kwargs)
        except BaseException as exc:
            call.failed(exc)
            raise
        return _watched(telemetry, call, operation_name, result)

    return wrapper
