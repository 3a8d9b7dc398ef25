"""huggingface_hub's ``InferenceClient`` / ``AsyncInferenceClient`` chat completions through the instrumentation.

The real SDK talks to the simulator as to an endpoint given by ``base_url`` (the SDK appends
``/v1/chat/completions``, the HF router's path): a broken history is refused with the simulator's 400, as the
SDK's own ``BadRequestError``, without the instrumentation, and served with it, one span per request carrying
the repair. Hugging Face has no ``gen_ai.provider.name`` in the registry: its calls are named as an
OpenAI-compatible host outside ``PROVIDER_BY_HOST`` is, ``openai``. The SDK does not retry a request.
"""

from __future__ import annotations

import types
from typing import Any, Final

import httpx2
import pytest
from huggingface_hub import AsyncInferenceClient, InferenceClient
from huggingface_hub.errors import BadRequestError, HfHubHTTPError
from huggingface_hub.inference import _client as hf_client
from huggingface_hub.inference._generated import _async_client as hf_async_client
from huggingface_hub.inference._providers import hf_inference

from otel_toolturn.instrument import names
from otel_toolturn.simulator import Simulator
from otel_toolturn.simulator._server import Answer
from tests.instrument import sdk_checks as checks
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.test_stainless_sdks import BROKEN, REFUSAL_OF, REPAIR_OF

MODEL: Final = "model-a"
CASES: Final = sorted(BROKEN)


def _served(
    sim: Simulator, otel: Otel, case: str, messages: list[dict[str, object]], *, streamed: bool | None = None
) -> None:
    """The simulator accepted one valid request at the router's path; one span carries the case's repair."""
    checks.served_request(sim.requests, messages, BROKEN[case], path="/v1/chat/completions")
    attributes = checks.one_repaired_span(otel, provider="openai", forms=[REPAIR_OF[case]], streamed=streamed)
    assert attributes[names.SERVER_ADDRESS] == "127.0.0.1"


@pytest.mark.parametrize("case", CASES)
def test_without_the_instrumentation_the_broken_history_is_refused(sim: Simulator, case: str) -> None:
    """Uninstrumented, the history goes out as written: the 400 comes back as the SDK's own ``BadRequestError``."""
    client = InferenceClient(base_url=sim.base_url, api_key="test-key")
    with pytest.raises(BadRequestError) as refused:
        client.chat_completion(BROKEN[case], model=MODEL)
    assert REFUSAL_OF[case] in str(refused.value)
    checks.refused_request(sim.requests, BROKEN[case])


def _send(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``chat_completion(messages)``, messages by position: the SDK's own output or generator comes back."""
    client = InferenceClient(base_url=sim.base_url, api_key="test-key")
    if streamed:
        stream = client.chat_completion(messages, model=MODEL, stream=True)
        assert isinstance(stream, types.GeneratorType)
        assert [c.choices[0].finish_reason for c in stream][-1] == "stop"
    else:
        output = client.chat_completion(messages, model=MODEL)
        assert type(output).__name__ == "ChatCompletionOutput"
        assert output.choices[0].finish_reason == "stop"


async def _send_async(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``AsyncInferenceClient``: the SDK's own output or async generator comes back."""
    async with AsyncInferenceClient(base_url=sim.base_url, api_key="test-key") as client:
        if streamed:
            stream = await client.chat_completion(messages, model=MODEL, stream=True)
            assert isinstance(stream, types.AsyncGeneratorType)
            assert [c.choices[0].finish_reason async for c in stream][-1] == "stop"
        else:
            output = await client.chat_completion(messages=messages, model=MODEL)
            assert output.choices[0].finish_reason == "stop"


test_chat_completion_repairs_the_broken_history = checks.repaired_and_served(BROKEN, _send, _served)


def test_the_openai_shaped_alias_is_repaired(instrument: Instrument, sim: Simulator) -> None:
    """``chat.completions.create(messages=...)``, the alias smolagents and OpenAI-style callers use: the same."""
    otel = instrument()
    messages = list(BROKEN["interrupted"])
    client = InferenceClient(base_url=sim.base_url, api_key="test-key")
    client.chat.completions.create(model=MODEL, messages=messages)
    _served(sim, otel, "interrupted", messages)


test_the_async_client_is_repaired_and_served = checks.async_repaired_and_served(BROKEN, _send_async, _served)


def test_a_server_error_is_one_span_and_the_sdks_own_exception(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 500 (the SDK does not retry): the SDK's ``HfHubHTTPError`` reaches the caller; one span records it."""
    otel = instrument()
    monkeypatch.setattr(sim, "answer", lambda *_: Answer(status=500, body={"error": {"message": "busy"}}))
    client = InferenceClient(base_url=sim.base_url, api_key="test-key")
    with pytest.raises(HfHubHTTPError):
        client.chat_completion(list(BROKEN["interrupted"]), model=MODEL)
    (span,) = otel.call_spans()
    assert (span.attributes or {})[names.ERROR_TYPE] == "HfHubHTTPError"
    assert otel.total(names.REQUESTS.name, toolturn__lane=checks.CHAT) == 1


def test_a_request_the_sdk_sends_before_the_chat_request_is_not_the_call(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A look-up the SDK sends first (as its Hub provider mapping): one span, started by the chat request alone."""
    otel = instrument()
    prepare = hf_inference.HFInferenceConversational.prepare_request
    lookups: list[int] = []

    def look_up_first(self: object, **kwargs: Any) -> object:
        with httpx2.Client() as hub:
            lookups.append(hub.get(f"{sim.base_url}/api/models/{MODEL}").status_code)
        return prepare(self, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hf_inference.HFInferenceConversational, "prepare_request", look_up_first)
    messages = list(BROKEN["interrupted"])
    InferenceClient(base_url=sim.base_url, api_key="test-key").chat_completion(messages, model=MODEL)
    assert len(lookups) == 1
    _served(sim, otel, "interrupted", messages)


def test_a_call_refused_after_a_look_up_leaves_no_span(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK looks a model up, then refuses it (``No provider mapping found``): no chat request went, no span."""
    otel = instrument()

    def look_up_and_refuse(self: object, **kwargs: Any) -> object:
        del self, kwargs
        with httpx2.Client() as hub:
            hub.get(f"{sim.base_url}/api/models/{MODEL}")
        raise ValueError(f"No provider mapping found for model {MODEL}")

    monkeypatch.setattr(hf_inference.HFInferenceConversational, "prepare_request", look_up_and_refuse)
    with pytest.raises(ValueError, match="No provider mapping found"):
        InferenceClient(base_url=sim.base_url, api_key="k").chat_completion(list(BROKEN["interrupted"]), model=MODEL)
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0


def test_observe_mode_sends_the_history_as_written_and_the_sdks_error_comes_back(
    instrument: Instrument, sim: Simulator
) -> None:
    """Observe mode: the history goes out unchanged, the SDK's own ``BadRequestError`` is raised, the span says so."""
    otel = instrument(mode="observe")
    client = InferenceClient(base_url=sim.base_url, api_key="test-key")
    with pytest.raises(BadRequestError):
        client.chat_completion(list(BROKEN["interrupted"]), model=MODEL)
    checks.observed_refusal(otel, "BadRequestError")


def _patched() -> list[object]:
    """What is patched for huggingface_hub: ``chat_completion`` and ``_inner_post`` of both clients, httpx2's send."""
    owners = (hf_client.InferenceClient, hf_async_client.AsyncInferenceClient)
    methods = [vars(owner)[name] for owner in owners for name in ("chat_completion", "_inner_post")]
    return [*methods, vars(httpx2.Client)["send"], vars(httpx2.AsyncClient)["send"]]


def test_uninstrument_restores_the_sdk(instrument: Instrument, sim: Simulator) -> None:
    """After ``uninstrument()`` the SDK's methods and httpx2's ``send`` are the objects they were; refused again."""
    with (
        checks.restored_by_uninstrument(instrument, _patched, providers=("huggingface_hub",)),
        pytest.raises(BadRequestError),
    ):
        InferenceClient(base_url=sim.base_url, api_key="k").chat_completion(list(BROKEN["interrupted"]), model=MODEL)
