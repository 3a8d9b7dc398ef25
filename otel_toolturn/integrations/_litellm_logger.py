"""The LiteLLM callback: the law on the provider body LiteLLM is about to send, and the call's record.

Role: the thin edge between LiteLLM's hooks and the instrumentation's own stages. It converts
what a hook hands it, runs the instrumentation's request pipeline and call record
(``instrument.calls``: materialise, law, compose, receipt; ``CallRecord``), and writes the decision back
into LiteLLM's own request; it decides nothing itself. Telemetry is the live instrumentation's
(``init()``); with none, every hook passes through.

Which hook serves which path (LiteLLM 1.110):

- chat (``completion``/``acompletion``, any OpenAI-compatible provider, ``anthropic``, and the
  Gemini providers ``gemini``/``vertex_ai``) and Responses (``responses``/``aresponses``):
  ``log_pre_api_call``, called right before each HTTP request with the provider-shaped body in
  ``kwargs["additional_args"]["complete_input_dict"]``. That dict is the very one LiteLLM then
  sends, so the repaired transcript is written into it (the key replaced, never the caller's list
  or items mutated). The body is read as the lane's SDK call and the decision written back by the
  lane's adapter (``sdk_request``, ``body_writes``): a Gemini body is REST (``contents`` and the rest
  at its top level), read as the google-genai call it stands for. LiteLLM's Gemini resend of a request
  (a rejected thought signature, a stale context cache) calls the hook again: a new request, a new record;
- Bedrock Converse (``bedrock/…``, ``bedrock/converse/…``; chat and Responses): LiteLLM serialises and
  signs the body before ``log_pre_api_call`` sees it, so the body is decided as LiteLLM builds it
  (``built``, called by the wrapped builders of ``_litellm_entries.BUILDERS``) and its record starts
  in ``log_pre_api_call`` of the same call id, right before the request goes out;
- the Anthropic-native messages route (``litellm.anthropic.messages.acreate``, the proxy's
  ``/v1/messages``): ``async_pre_request_hook``, which LiteLLM calls before it builds the body
  (its pre-call hook sees the body already serialised). Its ``messages`` list is LiteLLM's own
  copy of the caller's, rewritten in place; a withheld ``tool_choice`` is returned in the
  kwargs. A logger overriding this hook keeps LiteLLM's Messages calls on its Python path;
- a body in no lane of ours (``_litellm_lanes.lane_of`` over LiteLLM's table, ``_litellm_entries.ROUTES``)
  passes through untouched, unrecorded.

The response: a whole response is checked from the provider's own JSON that LiteLLM logs
(``log_post_api_call``: usage, finish reasons, model, calls; Gemini: the ``generateContent``
response JSON, a long answer's continuation hops merged into it) and the record ends there.
Otherwise the record ends with the call itself, through LiteLLM's wrapped entry points
(``_litellm_entries``): when it returns or raises, or when its stream ends. LiteLLM's success
and failure callbacks come later (from its logging queue or thread pool) and find nothing left
to end; they end only the records of a call made through no wrapped entry point: a stream's
with the assembled response checked when LiteLLM assembles it in the lane's own shape (chat,
Responses), a failure's with LiteLLM's exception. Every hook is guarded: an error is counted
and logged at debug, and LiteLLM proceeds with its request as it stands.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final, TypeVar

import litellm
from litellm.integrations.custom_logger import CustomLogger

from otel_toolturn._vocab import Lane
from otel_toolturn.instrument import names
from otel_toolturn.instrument.calls import (
    CallRecord,
    Decision,
    Provider,
    ProviderName,
    Telemetry,
    current_scope,
    decide_request,
    live_telemetry,
    materialise,
    record_sent,
    server_of,
)
from otel_toolturn.integrations._litellm_calls import OpenCalls, join
from otel_toolturn.integrations._litellm_entries import (
    NATIVE_MESSAGES_LANE,
    NATIVE_MESSAGES_PROVIDER,
    SHAPED_STREAM_LANES,
    Builder,
    route_of,
)
from otel_toolturn.integrations._litellm_lanes import bare_model, lane_of
from otel_toolturn.lanes import adapter_for

_T = TypeVar("_T")


@dataclass(frozen=True, kw_only=True, slots=True)
class _Built:
    """A body decided as LiteLLM built it (``BUILDERS``), waiting for the pre-call hook of its request."""

    call_id: str
    builder: Builder
    model: str | None
    decision: Decision


_BUILT: Final[ContextVar[_Built | None]] = ContextVar("otel_toolturn_litellm_built", default=None)
"""The body last decided as built in this context: its request's pre-call hook follows in the same context."""


def _server(api_base: object) -> tuple[str | None, int | None]:
    if not isinstance(api_base, str) or not api_base:
        return None, None
    return server_of(api_base)


def _openai_compatible() -> tuple[str, ...]:
    names_ = getattr(litellm, "openai_compatible_providers", ())
    return tuple(n for n in names_ if isinstance(n, str))


def _provider_json(original: object) -> Mapping[str, object] | None:
    """The provider's whole JSON response as LiteLLM logged it, or ``None`` (an error, a stream, not JSON).

    An error is a body whose ``error`` is set or whose ``type`` is ``error``; a Responses body
    carries ``"error": null`` when it succeeded.
    """
    if isinstance(original, (str, bytes)):
        try:
            original = json.loads(original)
        except ValueError:
            return None
    if not isinstance(original, Mapping) or original.get("error") is not None or original.get("type") == "error":
        return None
    return original


class ToolTurnLogger(CustomLogger):
    """LiteLLM's ``CustomLogger`` for otel-toolturn (see the module docstring); one instance serves a process."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = OpenCalls()

    # --- request ---------------------------------------------------------------------------------
    def _guarded(self, telemetry: Telemetry, stage: names.ErrorStage, step: Callable[[], _T]) -> _T | None:
        try:
            return step()
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            telemetry.error(stage, exc)
            return None

    def _record(
        self,
        telemetry: Telemetry,
        *,
        lane: Lane,
        provider: Provider,
        provider_name: ProviderName | None,
        model: str | None,
        api_base: object,
    ) -> CallRecord | None:
        """The record of a request about to go out; ``None``: none (the failure counted)."""
        server = _server(api_base)
        return self._guarded(
            telemetry,
            "span",
            lambda: CallRecord(
                telemetry,
                lane=lane,
                provider=provider,
                provider_name=provider_name,
                requested_model=model,
                server_address=server[0],
                server_port=server[1],
            ),
        )

    def _decide(self, telemetry: Telemetry, lane: Lane, kwargs: dict[str, object]) -> Decision | None:
        """What the request sends (the law, composed); ``None``: as it is (the failure counted)."""
        options, scope = telemetry.options, current_scope()
        return self._guarded(telemetry, "law", lambda: decide_request(kwargs, lane=lane, options=options, scope=scope))

    def _sent(self, telemetry: Telemetry, record: CallRecord, decision: Decision, call_id: object) -> None:
        """The request goes out as ``decision`` says: its receipt recorded, the record kept open under ``call_id``."""
        receipt = record_sent(decision, lane=record.lane, options=telemetry.options, receipt=record.recording)
        self._guarded(telemetry, "request", lambda: record.request(decision, receipt))
        if isinstance(call_id, str):
            self.calls.start(call_id, record)
            join(call_id)
        else:
            record.finish()

    def _begin(
        self,
        telemetry: Telemetry,
        *,
        call_id: object,
        lane: Lane,
        request: dict[str, object],
        model: str | None,
        api_base: object,
        provider: Provider,
        provider_name: ProviderName | None = None,
    ) -> Decision | None:
        """Start the call's record and decide its request; ``None`` ⇒ send it as it is, unrecorded."""
        materialised = self._guarded(telemetry, "request", lambda: materialise(request, lane))
        if materialised is None or not materialised.readable:
            return None
        record = self._record(
            telemetry, lane=lane, provider=provider, provider_name=provider_name, model=model, api_base=api_base
        )
        if record is None:
            return None
        decision = self._decide(telemetry, lane, materialised.kwargs)
        if decision is None:
            record.finish()
            return None
        self._sent(telemetry, record, decision, call_id)
        return decision

    def log_pre_api_call(self, model: object, messages: object, kwargs: dict[str, object]) -> None:
        """Chat and Responses: repair the body about to be sent, in place, and start its record.

        A body LiteLLM serialised before this hook was decided as it was built (``built``): its record starts here.
        """
        del model, messages
        telemetry = live_telemetry()
        if telemetry is None:
            return
        try:
            additional = kwargs.get("additional_args")
            if not isinstance(additional, dict):
                return
            body = additional.get("complete_input_dict")
            if not isinstance(body, dict):
                self._built_sent(telemetry, kwargs.get("litellm_call_id"), additional.get("api_base"))
                return
            provider = kwargs.get("custom_llm_provider")
            route = route_of(provider, _openai_compatible())
            lane = lane_of(kwargs.get("call_type"), route, body)
            if route is None or lane is None:
                return
            adapter = adapter_for(lane)
            request = adapter.sdk_request(body, bare_model(kwargs.get("model"), str(provider)))
            requested = request.get("model")
            prepared = self._begin(
                telemetry,
                call_id=kwargs.get("litellm_call_id"),
                lane=lane,
                request=request,
                model=requested if isinstance(requested, str) else None,
                api_base=additional.get("api_base"),
                provider=route.provider,
                provider_name=route.provider_name,
            )
            if prepared is not None:
                body.update(adapter.body_writes(body, request, prepared.kwargs))
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            telemetry.error("request", exc)

    def built(self, builder: Builder, call_id: object, model: object, body: object) -> None:
        """A body LiteLLM built and serialises before its hooks see it: decided now, the decision written into it.

        Its record starts with its request's pre-call hook (``log_pre_api_call``), right before it goes out;
        a body LiteLLM builds and never sends is decided, and recorded by nothing.
        """
        telemetry = live_telemetry()
        if telemetry is None or not isinstance(call_id, str) or not isinstance(body, dict):
            return
        try:
            requested = model if isinstance(model, str) and model else None
            adapter = adapter_for(builder.lane)
            request = adapter.sdk_request(body, requested)
            materialised = self._guarded(telemetry, "request", lambda: materialise(request, builder.lane))
            if materialised is None or not materialised.readable:
                return
            decision = self._decide(telemetry, builder.lane, materialised.kwargs)
            if decision is None:
                return
            body.update(adapter.body_writes(body, request, decision.kwargs))
            _BUILT.set(_Built(call_id=call_id, builder=builder, model=requested, decision=decision))
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            telemetry.error("request", exc)

    def _built_sent(self, telemetry: Telemetry, call_id: object, api_base: object) -> None:
        """The pre-call hook of a request whose body was decided as built: its record starts (none decided: nothing)."""
        built = _BUILT.get()
        if built is None or built.call_id != call_id:
            return
        _BUILT.set(None)
        builder = built.builder
        record = self._record(
            telemetry,
            lane=builder.lane,
            provider=builder.provider,
            provider_name=builder.provider_name,
            model=built.model,
            api_base=api_base,
        )
        if record is not None:
            self._sent(telemetry, record, built.decision, call_id)

    async def async_pre_request_hook(
        self, model: str, messages: list[object], kwargs: dict[str, object]
    ) -> dict[str, object] | None:
        """The Anthropic-native messages route: repair LiteLLM's copy of ``messages`` in place, start the record."""
        telemetry = live_telemetry()
        if telemetry is None:
            return None
        try:
            params = kwargs.get("litellm_params")
            provider = params.get("custom_llm_provider") if isinstance(params, dict) else None
            route = route_of(provider)
            if provider != NATIVE_MESSAGES_PROVIDER or route is None or not isinstance(messages, list):
                return None
            adapter = adapter_for(NATIVE_MESSAGES_LANE)
            request: dict[str, object] = {"model": bare_model(model, provider), adapter.transcript_field: messages}
            for key in (adapter.tools_field, adapter.tool_choice_field):
                if kwargs.get(key) is not None:
                    request[key] = kwargs[key]
            prepared = self._begin(
                telemetry,
                call_id=kwargs.get("litellm_call_id"),
                lane=NATIVE_MESSAGES_LANE,
                request=request,
                model=bare_model(model, provider),
                api_base=kwargs.get("api_base"),
                provider=route.provider,
                provider_name=route.provider_name,
            )
            if prepared is None:
                return None
            sent = prepared.kwargs.get(adapter.transcript_field)
            if isinstance(sent, list) and sent is not messages:
                messages[:] = sent
            choice = prepared.kwargs.get(adapter.tool_choice_field)
            if choice is not None and choice is not kwargs.get(adapter.tool_choice_field):
                return {**kwargs, adapter.tool_choice_field: choice}
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            telemetry.error("request", exc)
        return None

    # --- response --------------------------------------------------------------------------------
    def log_post_api_call(
        self, kwargs: dict[str, object], response_obj: object, start_time: object, end_time: object
    ) -> None:
        """A whole response arrived: check the provider's JSON and end the record (a stream waits for its end)."""
        del response_obj, start_time, end_time
        telemetry = live_telemetry()
        call_id = kwargs.get("litellm_call_id")
        if telemetry is None or not isinstance(call_id, str) or kwargs.get("stream") is True:
            return
        try:
            if self.calls.peek(call_id) is None:
                return
            response = _provider_json(kwargs.get("original_response"))
            if response is None:
                return
            record = self.calls.take(call_id)
            if record is not None:
                record.response(response)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            telemetry.error("response", exc)

    def _succeeded(self, kwargs: dict[str, object], response_obj: object) -> None:
        call_id = kwargs.get("litellm_call_id")
        record = self.calls.take(call_id) if isinstance(call_id, str) else None
        if record is None:
            return
        if record.lane in SHAPED_STREAM_LANES and response_obj is not None:
            record.response(response_obj)
        else:
            record.finish()

    def _failed(self, kwargs: dict[str, object]) -> None:
        call_id = kwargs.get("litellm_call_id")
        record = self.calls.take(call_id) if isinstance(call_id, str) else None
        if record is None:
            return
        exception = kwargs.get("exception")
        record.finish(exception if isinstance(exception, BaseException) else None)

    def _ended(self, step: Callable[[], None]) -> None:
        telemetry = live_telemetry()
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            if telemetry is not None:
                telemetry.error("response", exc)

    def log_success_event(
        self, kwargs: dict[str, object], response_obj: object, start_time: object, end_time: object
    ) -> None:
        """The call succeeded (a stream: once exhausted): end its record if still open (see the module docstring)."""
        del start_time, end_time
        self._ended(lambda: self._succeeded(kwargs, response_obj))

    async def async_log_success_event(
        self, kwargs: dict[str, object], response_obj: object, start_time: object, end_time: object
    ) -> None:
        """The async twin of ``log_success_event``."""
        del start_time, end_time
        self._ended(lambda: self._succeeded(kwargs, response_obj))

    def log_failure_event(
        self, kwargs: dict[str, object], response_obj: object, start_time: object, end_time: object
    ) -> None:
        """The call failed: end its record with LiteLLM's exception."""
        del response_obj, start_time, end_time
        self._ended(lambda: self._failed(kwargs))

    async def async_log_failure_event(
        self, kwargs: dict[str, object], response_obj: object, start_time: object, end_time: object
    ) -> None:
        """The async twin of ``log_failure_event``."""
        del response_obj, start_time, end_time
        self._ended(lambda: self._failed(kwargs))
