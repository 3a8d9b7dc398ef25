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
  or items mutated). A Gemini body is REST (``contents`` and the rest at its top level): it is read
  as the google-genai call it stands for, and the decision written back, by ``_litellm_lanes``'s
  ``gemini_request`` and ``gemini_writes``. LiteLLM's Gemini resend of a request (a rejected
  thought signature, a stale context cache) calls the hook again: a new request, a new record;
- the Anthropic-native messages route (``litellm.anthropic.messages.acreate``, the proxy's
  ``/v1/messages``): ``async_pre_request_hook``, which LiteLLM calls before it builds the body
  (its pre-call hook sees the body already serialised). Its ``messages`` list is LiteLLM's own
  copy of the caller's, rewritten in place; a withheld ``tool_choice`` is returned in the
  kwargs. A logger overriding this hook keeps LiteLLM's Messages calls on its Python path;
- a body in no lane of ours (``_litellm_lanes.lane_of``) passes through untouched, unrecorded.

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
from typing import TypeVar

import litellm
from litellm.integrations.custom_logger import CustomLogger

from otel_toolturn._vocab import Lane
from otel_toolturn.instrument import names
from otel_toolturn.instrument.calls import (
    CallRecord,
    Decision,
    ProviderName,
    Telemetry,
    current_scope,
    live_telemetry,
    materialise,
    prepare_request,
    server_of,
)
from otel_toolturn.integrations._litellm_calls import OpenCalls, join
from otel_toolturn.integrations._litellm_lanes import (
    GEMINI_PROVIDERS,
    NATIVE_MESSAGES_LANE,
    REST_BODY_LANE,
    SHAPED_STREAM_LANES,
    bare_model,
    gemini_request,
    gemini_writes,
    lane_of,
    provider_of,
)
from otel_toolturn.lanes import adapter_for

_T = TypeVar("_T")


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

    def _begin(
        self,
        telemetry: Telemetry,
        *,
        call_id: object,
        lane: Lane,
        request: dict[str, object],
        model: str | None,
        api_base: object,
        provider_name: ProviderName | None = None,
    ) -> Decision | None:
        """Start the call's record and decide its request; ``None`` ⇒ send it as it is, unrecorded."""
        materialised = self._guarded(telemetry, "request", lambda: materialise(request, lane))
        if materialised is None or not materialised.readable:
            return None
        server = _server(api_base)
        record = self._guarded(
            telemetry,
            "span",
            lambda: CallRecord(
                telemetry,
                lane=lane,
                provider=provider_of(lane),
                provider_name=provider_name,
                requested_model=model,
                server_address=server[0],
                server_port=server[1],
            ),
        )
        if record is None:
            return None
        kwargs = materialised.kwargs
        prepared = self._guarded(
            telemetry,
            "law",
            lambda: prepare_request(
                kwargs, lane=lane, options=telemetry.options, scope=current_scope(), receipt=record.recording
            ),
        )
        if prepared is None:
            record.finish()
            return None
        decision, receipt = prepared
        self._guarded(telemetry, "request", lambda: record.request(decision, receipt))
        if isinstance(call_id, str):
            self.calls.start(call_id, record)
            join(call_id)
        else:
            record.finish()
        return decision

    def log_pre_api_call(self, model: object, messages: object, kwargs: dict[str, object]) -> None:
        """Chat and Responses: repair the body about to be sent, in place, and start its record."""
        del model, messages
        telemetry = live_telemetry()
        if telemetry is None:
            return
        try:
            additional = kwargs.get("additional_args")
            body = additional.get("complete_input_dict") if isinstance(additional, dict) else None
            if not isinstance(body, dict):
                return
            lane = lane_of(
                kwargs.get("call_type"),
                kwargs.get("custom_llm_provider"),
                body,
                openai_compatible=_openai_compatible(),
            )
            if lane is None:
                return
            api_base = additional.get("api_base") if isinstance(additional, dict) else None
            if lane == REST_BODY_LANE:
                self._gemini(telemetry, kwargs, body, api_base)
                return
            requested = body.get("model")
            prepared = self._begin(
                telemetry,
                call_id=kwargs.get("litellm_call_id"),
                lane=lane,
                request=body,
                model=requested if isinstance(requested, str) else None,
                api_base=api_base,
            )
            if prepared is not None:
                for key, value in prepared.kwargs.items():
                    if body.get(key) is not value:
                        body[key] = value
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            telemetry.error("request", exc)

    def _gemini(
        self, telemetry: Telemetry, kwargs: dict[str, object], body: dict[str, object], api_base: object
    ) -> None:
        """A Gemini REST body: decide it as the google-genai call it stands for, write the decision into it."""
        provider = str(kwargs.get("custom_llm_provider"))
        model = bare_model(kwargs.get("model"), provider)
        request = gemini_request(body, model)
        prepared = self._begin(
            telemetry,
            call_id=kwargs.get("litellm_call_id"),
            lane=REST_BODY_LANE,
            request=request,
            model=model,
            api_base=api_base,
            provider_name=GEMINI_PROVIDERS.get(provider),
        )
        if prepared is not None:
            body.update(gemini_writes(body, request, prepared.kwargs))

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
            if provider != "anthropic" or not isinstance(messages, list):
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
