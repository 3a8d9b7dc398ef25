"""azure-ai-inference's ``ChatCompletionsClient.complete`` (and its ``aio`` twin's) through the instrumentation.

The real SDK talks to the simulator as to an Azure AI Foundry endpoint (``<endpoint>/models``; the SDK sends to
``/models/chat/completions``): a broken history, as dicts or as the SDK's typed messages, is refused with the
simulator's 400, as azure-core's own ``HttpResponseError``, without the instrumentation, and served with it, one span
per call (azure-core's retries included) carrying the repair, ``gen_ai.provider.name`` ``azure.ai.inference``
(https://opentelemetry.io/docs/specs/semconv/registry/attributes/gen-ai/). A ``TokenCredential`` fetches its token
through a pipeline of its own while the call runs (https://learn.microsoft.com/en-us/python/api/azure-core/
azure.core.pipeline.policies.bearertokencredentialpolicy); that request is never taken as the call's. A call by
its whole payload (``complete({...})``, ``body={...}``: the SDK sends it as it is, its keyword parameters unused) is
repaired in that payload; a payload of bytes passes unread.
"""

from __future__ import annotations

import io
import json
import time
from typing import Any, Final

import pytest
from azure.ai.inference import ChatCompletionsClient
from azure.ai.inference import _patch as sync_sdk
from azure.ai.inference.aio import ChatCompletionsClient as AsyncChatCompletionsClient
from azure.ai.inference.aio import _patch as async_sdk
from azure.ai.inference.models import (
    AssistantMessage,
    AsyncStreamingChatCompletions,
    ChatCompletions,
    ChatCompletionsToolCall,
    FunctionCall,
    StreamingChatCompletions,
    ToolMessage,
    UserMessage,
)
from azure.core.credentials import AccessToken, AzureKeyCredential
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.core.pipeline import Pipeline
from azure.core.pipeline._base import _TransportRunner
from azure.core.pipeline._base_async import _AsyncTransportRunner
from azure.core.pipeline.transport import RequestsTransport
from azure.core.rest import HttpRequest
from opentelemetry import trace

from otel_toolturn.instrument import names
from otel_toolturn.simulator import Simulator
from tests.instrument import sdk_checks as checks
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.test_stainless_sdks import BROKEN as CHAT_BROKEN
from tests.instrument.test_stainless_sdks import BUSY
from tests.instrument.test_stainless_sdks import REFUSAL_OF as CHAT_REFUSAL_OF
from tests.instrument.test_stainless_sdks import REPAIR_OF as CHAT_REPAIR_OF

MODEL: Final = "model-a"
PROVIDER: Final = "azure.ai.inference"
CHAT_PATH: Final = "/models/chat/completions"


def _typed_call(call_id: str) -> ChatCompletionsToolCall:
    return ChatCompletionsToolCall(id=call_id, function=FunctionCall(name="read", arguments='{"path": "a"}'))


BROKEN: Final[dict[str, list[Any]]] = {
    **CHAT_BROKEN,
    # the SDK's own typed messages: two parallel calls, one result, then the user spoke
    "typed": [
        UserMessage("Read a and b."),
        AssistantMessage(tool_calls=[_typed_call("call_1"), _typed_call("call_2")]),
        ToolMessage("a=1", tool_call_id="call_1"),
        UserMessage("Never mind b; what is in a?"),
    ],
}
REPAIR_OF: Final = {**CHAT_REPAIR_OF, "typed": "missing_result"}
REFUSAL_OF: Final = {**CHAT_REFUSAL_OF, "typed": CHAT_REFUSAL_OF["interrupted"]}
CASES: Final = sorted(BROKEN)


def _endpoint(sim: Simulator) -> str:
    """The simulator as an Azure AI Foundry models endpoint."""
    return f"{sim.base_url}/models"


def _client(sim: Simulator, **options: Any) -> ChatCompletionsClient:
    options.setdefault("retry_total", 0)
    return ChatCompletionsClient(endpoint=_endpoint(sim), credential=AzureKeyCredential("test-key"), **options)


def _chat_requests(sim: Simulator) -> list[Any]:
    return [r for r in sim.requests if r.path == CHAT_PATH]


def _served(sim: Simulator, otel: Otel, case: str, messages: list[Any], *, streamed: bool) -> None:
    """The simulator accepted one valid request; one ``azure.ai.inference`` span carries the case's repair."""
    checks.served_request(_chat_requests(sim), messages, BROKEN[case])
    assert all(mine is theirs for mine, theirs in zip(messages, BROKEN[case], strict=True))
    attributes = checks.one_repaired_span(otel, provider=PROVIDER, forms=[REPAIR_OF[case]], streamed=streamed)
    assert attributes[names.SERVER_ADDRESS] == "127.0.0.1"


def _send(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``complete``, whole or ``stream=True``: the SDK's own ``ChatCompletions`` or stream comes back."""
    with _client(sim) as client:
        if streamed:
            stream = client.complete(messages=messages, model=MODEL, stream=True)
            assert isinstance(stream, StreamingChatCompletions)
            assert [u.choices[0].finish_reason for u in stream][-1] == "stop"
        else:
            completion = client.complete(messages=messages, model=MODEL)
            assert type(completion) is ChatCompletions
            assert completion.choices[0].finish_reason == "stop"


async def _send_async(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``azure.ai.inference.aio``'s client: the SDK's own response or async stream comes back."""
    credential = AzureKeyCredential("test-key")
    async with AsyncChatCompletionsClient(endpoint=_endpoint(sim), credential=credential, retry_total=0) as client:
        if streamed:
            stream = await client.complete(messages=messages, model=MODEL, stream=True)
            assert isinstance(stream, AsyncStreamingChatCompletions)
            assert [u.choices[0].finish_reason async for u in stream][-1] == "stop"
        else:
            completion = await client.complete(messages=messages, model=MODEL)
            assert completion.choices[0].finish_reason == "stop"


test_with_the_instrumentation_the_broken_history_is_repaired_and_served = checks.repaired_and_served(
    BROKEN, _send, _served
)
test_the_async_client_is_repaired_and_served = checks.async_repaired_and_served(BROKEN, _send_async, _served)


@pytest.mark.parametrize("case", CASES)
def test_without_the_instrumentation_the_broken_history_is_refused(sim: Simulator, case: str) -> None:
    """Uninstrumented, the history goes out as written: the 400 comes back as azure-core's ``HttpResponseError``."""
    with _client(sim) as client, pytest.raises(HttpResponseError) as refused:
        client.complete(messages=BROKEN[case], model=MODEL)
    assert refused.value.status_code == 400
    assert REFUSAL_OF[case] in str(refused.value)
    checks.refused_request(_chat_requests(sim))


def test_a_call_the_sdk_retries_is_one_span(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server answers 500 once, azure-core's retry policy sends again: two requests, one span and one count."""
    otel = instrument()
    attempts = checks.busy_once(sim, monkeypatch, BUSY)
    messages = list(BROKEN["interrupted"])
    with _client(sim, retry_total=1, retry_backoff_factor=0) as client:
        client.complete(messages=messages, model=MODEL)
    assert attempts == [CHAT_PATH, CHAT_PATH]
    _served(sim, otel, "interrupted", messages, streamed=False)


class _FetchingCredential:
    """A ``TokenCredential`` that fetches its token over HTTP through an azure-core pipeline of its own.

    ``refuse``: it then raises ``ClientAuthenticationError``, as a credential whose token request failed does.
    ``spans``: whether one of our call spans was current while its request was sent.
    """

    def __init__(self, sim: Simulator, *, refuse: bool = False) -> None:
        self._url = f"{sim.base_url}/oauth2/v2.0/token"
        self._refuse = refuse
        self.spans: list[bool] = []
        seen = self.spans

        class Seen(RequestsTransport):  # type: ignore[misc]  # azure-core's requests transport is untyped here
            def send(self, request: Any, **kwargs: Any) -> Any:
                seen.append(trace.get_current_span().get_span_context().is_valid)
                return super().send(request, **kwargs)

        self._pipeline: Pipeline[Any, Any] = Pipeline(transport=Seen())

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        del scopes, kwargs
        with self._pipeline:
            self._pipeline.run(HttpRequest("POST", self._url, data={"grant_type": "client_credentials"}))
        if self._refuse:
            raise ClientAuthenticationError(message="token request refused")
        return AccessToken("token", int(time.time()) + 3600)


def test_a_credentials_token_request_is_not_the_call(instrument: Instrument, sim: Simulator) -> None:
    """A ``TokenCredential`` fetches its token while the call is pending: one span, started by the chat request."""
    otel = instrument()
    credential = _FetchingCredential(sim)
    messages = list(BROKEN["interrupted"])
    with ChatCompletionsClient(endpoint=_endpoint(sim), credential=credential, retry_total=0) as client:
        client.complete(messages=messages, model=MODEL, enforce_https=False)
    assert credential.spans == [False]  # no span of ours was current while the token request went out
    assert [r.path for r in sim.requests] == ["/oauth2/v2.0/token", CHAT_PATH]
    _served(sim, otel, "interrupted", messages, streamed=False)


def test_a_call_whose_credential_fails_after_its_token_request_leaves_no_span(
    instrument: Instrument, sim: Simulator
) -> None:
    """The token request goes out, then the credential raises: no chat request was sent, no span, nothing counted."""
    otel = instrument()
    credential = _FetchingCredential(sim, refuse=True)
    with (
        ChatCompletionsClient(endpoint=_endpoint(sim), credential=credential, retry_total=0) as client,
        pytest.raises(ClientAuthenticationError, match="token request refused"),
    ):
        client.complete(messages=list(BROKEN["interrupted"]), model=MODEL, enforce_https=False)
    assert [r.path for r in sim.requests] == ["/oauth2/v2.0/token"]
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0


def _body(messages: list[Any], *, streamed: bool) -> dict[str, Any]:
    """The whole payload, as a caller writes it for ``complete(body=...)``."""
    return {"messages": messages, "model": MODEL, "stream": streamed}


def _send_body(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``complete(<payload>)``, by position: the SDK's own objects come back; the payload unchanged."""
    body = _body(messages, streamed=streamed)
    with _client(sim) as client:
        result = client.complete(body)
        if streamed:
            assert isinstance(result, StreamingChatCompletions)
            assert [u.choices[0].finish_reason for u in result][-1] == "stop"
        else:
            assert type(result) is ChatCompletions
    assert body == _body(messages, streamed=streamed)
    assert body["messages"] is messages


async def _send_body_async(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """The ``aio`` client's ``complete(body=<payload>)``: the SDK's own objects come back; the payload unchanged."""
    body = _body(messages, streamed=streamed)
    credential = AzureKeyCredential("test-key")
    async with AsyncChatCompletionsClient(endpoint=_endpoint(sim), credential=credential, retry_total=0) as client:
        result = await client.complete(body=body)
        if streamed:
            assert isinstance(result, AsyncStreamingChatCompletions)
            assert [u.choices[0].finish_reason async for u in result][-1] == "stop"
        else:
            assert type(result) is ChatCompletions
    assert body == _body(messages, streamed=streamed)
    assert body["messages"] is messages


test_a_call_by_its_whole_payload_is_repaired_and_served = checks.repaired_and_served(BROKEN, _send_body, _served)
test_the_async_clients_call_by_its_whole_payload_is_repaired_and_served = checks.async_repaired_and_served(
    BROKEN, _send_body_async, _served
)


def test_a_payload_of_bytes_goes_out_as_written_unrecorded(instrument: Instrument, sim: Simulator) -> None:
    """``complete(body=<a file of bytes>)``: the bytes the caller wrote are sent unread, refused as written, no span."""
    otel = instrument()
    written = json.dumps({"messages": BROKEN["interrupted"], "model": MODEL}).encode()
    with _client(sim) as client, pytest.raises(HttpResponseError):
        client.complete(body=io.BytesIO(written), content_type="application/json")
    checks.refused_request(_chat_requests(sim), BROKEN["interrupted"])
    assert otel.call_spans() == []


def test_a_payload_the_sdk_cannot_encode_raises_the_sdks_own_error(instrument: Instrument, sim: Simulator) -> None:
    """A payload whose messages are a generator: the SDK's own ``TypeError``, as without us; nothing sent, no span."""

    def payload() -> dict[str, Any]:
        return {"messages": (m for m in BROKEN["interrupted"]), "model": MODEL}

    with _client(sim) as client, pytest.raises(TypeError) as bare:
        client.complete(body=payload())
    otel = instrument()
    with _client(sim) as client, pytest.raises(TypeError) as instrumented:
        client.complete(body=payload())
    assert str(instrumented.value) == str(bare.value)
    assert _chat_requests(sim) == []
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0


@checks.whole_and_streamed
def test_observe_mode_sends_the_history_as_written_and_the_sdks_error_comes_back(
    instrument: Instrument, sim: Simulator, *, streamed: bool
) -> None:
    """Observe mode: the history goes out unchanged, azure-core's ``HttpResponseError`` is raised, the span says so."""
    otel = instrument(mode="observe")
    with _client(sim) as client, pytest.raises(HttpResponseError) as refused:
        client.complete(messages=list(BROKEN["interrupted"]), model=MODEL, stream=streamed)
    assert type(refused.value) is HttpResponseError
    checks.refused_request(_chat_requests(sim), BROKEN["interrupted"])
    checks.observed_refusal(otel, "HttpResponseError")


def _patched() -> list[object]:
    """What is patched for azure-ai-inference: both clients' ``complete``, azure-core's transport runners' ``send``."""
    return [
        vars(sync_sdk.ChatCompletionsClient)["complete"],
        vars(async_sdk.ChatCompletionsClient)["complete"],
        vars(_TransportRunner)["send"],
        vars(_AsyncTransportRunner)["send"],
    ]


def test_uninstrument_restores_the_sdk(instrument: Instrument, sim: Simulator) -> None:
    """After ``uninstrument()`` the SDK's ``complete`` and azure-core's ``send`` are the objects they were; refused."""
    with (
        checks.restored_by_uninstrument(instrument, _patched, providers=("azure_ai_inference",)),
        _client(sim) as client,
        pytest.raises(HttpResponseError),
    ):
        client.complete(messages=list(BROKEN["interrupted"]), model=MODEL)
