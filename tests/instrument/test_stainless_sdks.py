"""The groq, together and fireworks-ai SDKs (Stainless, HTTP code of their own) through the instrumentation.

Each real SDK talks to the simulator's Chat Completions lane (Groq at its own ``/openai/v1`` path): a
broken history is refused with the simulator's 400, as the SDK's own ``BadRequestError``, without the
instrumentation, and served with it, one span per call (its retries included) carrying the repair.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import fireworks
import groq
import httpx
import pytest
import together

from otel_toolturn.instrument import names
from otel_toolturn.simulator import Simulator
from otel_toolturn.simulator._server import Answer
from tests.instrument import sdk_checks as checks
from tests.instrument.conftest import Instrument, Otel

MODEL: Final = "model-a"


@dataclass(frozen=True)
class Sdk:
    """One SDK: how its clients reach the simulator, its own classes, the provider name its calls carry."""

    name: str
    sdk: Any
    base_url: Callable[[Simulator], str]
    resource: str
    provider_name: str

    def client(self, sim: Simulator, *, retries: int = 0) -> Any:
        return self.sdk.Client(base_url=self.base_url(sim), api_key="test-key", max_retries=retries)

    def async_client(self, sim: Simulator) -> Any:
        return self.sdk.AsyncClient(base_url=self.base_url(sim), api_key="test-key", max_retries=0)

    def resources(self) -> tuple[type, type]:
        """The SDK's sync and async chat completions resource classes."""
        module = importlib.import_module(f"{self.sdk.__name__}.resources.chat.completions")
        return getattr(module, self.resource), getattr(module, f"Async{self.resource}")


def _in_together_shape(sim: Simulator) -> str:
    """The simulator's root as the installed together's default base URL has it (2.x ends in ``/v1``, 3.x does not)."""
    default = str(together.Client(api_key="test-key").base_url).rstrip("/")
    return sim.openai_base_url if default.endswith("/v1") else sim.base_url


SDKS: Final = (
    Sdk(name="groq", sdk=groq, base_url=lambda sim: sim.base_url, resource="Completions", provider_name="groq"),
    Sdk(
        name="together",
        sdk=together,
        base_url=_in_together_shape,
        resource="CompletionsResource",
        provider_name="openai",
    ),
    Sdk(
        name="fireworks",
        sdk=fireworks,
        base_url=lambda sim: sim.base_url,
        resource="CompletionsResource",
        provider_name="openai",
    ),
)


def _call(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "read", "arguments": '{"path": "a"}'}}


BROKEN: Final[dict[str, list[dict[str, object]]]] = {
    # Ctrl-C while the second of two parallel calls ran: it has no result, and the user spoke next
    "interrupted": [
        {"role": "user", "content": "Read a and b."},
        {"role": "assistant", "content": None, "tool_calls": [_call("call_1"), _call("call_2")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a=1"},
        {"role": "user", "content": "Never mind b; what is in a?"},
    ],
    # the window was cut between a call and its result: the result stands alone
    "orphan": [
        {"role": "user", "content": "Read a."},
        {"role": "tool", "tool_call_id": "call_9", "content": "a=1"},
        {"role": "user", "content": "What is in a?"},
    ],
}
REPAIR_OF: Final = {"interrupted": "missing_result", "orphan": "orphan_result"}
REFUSAL_OF: Final = {
    "interrupted": "An assistant message with 'tool_calls' must be followed by tool messages",
    "orphan": "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
}
BUSY: Final = Answer(status=500, body={"error": {"message": "try again"}}, headers={"retry-after-ms": "1"})
"""A 500 that asks to be tried again at once: the answer to a first attempt the SDK retries."""
CASES: Final = [(sdk, case) for sdk in SDKS for case in sorted(BROKEN)]
IDS: Final = [f"{sdk.name}-{case}" for sdk, case in CASES]


def _served(
    sim: Simulator, otel: Otel, sdk: Sdk, case: str, messages: list[dict[str, object]], *, streamed: bool | None = None
) -> None:
    """The simulator accepted one valid request; one span of ``sdk``'s provider carries the case's repair."""
    checks.served_request(sim.requests, messages, BROKEN[case])
    checks.one_repaired_span(otel, provider=sdk.provider_name, forms=[REPAIR_OF[case]], streamed=streamed)


@pytest.mark.parametrize(("sdk", "case"), CASES, ids=IDS)
def test_without_the_instrumentation_the_broken_history_is_refused(sim: Simulator, sdk: Sdk, case: str) -> None:
    """Uninstrumented, the SDK sends the history as written: the 400 comes back as the SDK's own ``BadRequestError``."""
    with sdk.client(sim) as client, pytest.raises(sdk.sdk.BadRequestError) as refused:
        client.chat.completions.create(model=MODEL, messages=BROKEN[case])
    assert REFUSAL_OF[case] in str(refused.value)
    checks.refused_request(sim.requests, BROKEN[case])


@checks.whole_and_streamed
@pytest.mark.parametrize(("sdk", "case"), CASES, ids=IDS)
def test_with_the_instrumentation_the_broken_history_is_repaired_and_served(
    instrument: Instrument, sim: Simulator, sdk: Sdk, case: str, *, streamed: bool
) -> None:
    """Instrumented, the repaired history is served; the SDK's own response or stream comes back; one span."""
    otel = instrument()
    messages = list(BROKEN[case])
    with sdk.client(sim) as client:
        if streamed:
            stream = client.chat.completions.create(model=MODEL, messages=messages, stream=True)
            assert isinstance(stream, sdk.sdk.Stream)
            chunks = list(stream)
            assert chunks[-1].choices[0].finish_reason == "stop"
        else:
            completion = client.chat.completions.create(model=MODEL, messages=messages)
            assert type(completion).__module__.startswith(f"{sdk.sdk.__name__}.types.")
            assert completion.choices[0].finish_reason == "stop"
    _served(sim, otel, sdk, case, messages, streamed=streamed)


@checks.whole_and_streamed
@pytest.mark.parametrize(("sdk", "case"), CASES, ids=IDS)
async def test_the_async_client_is_repaired_and_served(
    instrument: Instrument, sim: Simulator, sdk: Sdk, case: str, *, streamed: bool
) -> None:
    """The async client: the same repair, the SDK's own ``AsyncStream``, one span."""
    otel = instrument()
    messages = list(BROKEN[case])
    async with sdk.async_client(sim) as client:
        if streamed:
            stream = await client.chat.completions.create(model=MODEL, messages=messages, stream=True)
            assert isinstance(stream, sdk.sdk.AsyncStream)
            chunks = [chunk async for chunk in stream]
            assert chunks[-1].choices[0].finish_reason == "stop"
        else:
            completion = await client.chat.completions.create(model=MODEL, messages=messages)
            assert completion.choices[0].finish_reason == "stop"
    _served(sim, otel, sdk, case, messages)


@pytest.mark.parametrize("sdk", SDKS, ids=[s.name for s in SDKS])
def test_a_raw_response_is_the_sdks_own_and_recorded_once(instrument: Instrument, sim: Simulator, sdk: Sdk) -> None:
    """``with_raw_response``: the SDK's ``APIResponse`` comes back and parses; the call is one span with its repair."""
    otel = instrument()
    messages = list(BROKEN["interrupted"])
    with sdk.client(sim) as client:
        raw = client.chat.completions.with_raw_response.create(model=MODEL, messages=messages)
        assert isinstance(raw, importlib.import_module(f"{sdk.sdk.__name__}._response").APIResponse)
        assert raw.parse().choices[0].finish_reason == "stop"
    _served(sim, otel, sdk, "interrupted", messages)


@pytest.mark.parametrize("sdk", SDKS, ids=[s.name for s in SDKS])
def test_a_call_the_sdk_retries_is_one_span(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch, sdk: Sdk
) -> None:
    """The server answers 500 once, the SDK retries over HTTP: two requests go out, one span and one count."""
    otel = instrument()
    attempts = checks.busy_once(sim, monkeypatch, BUSY)
    with sdk.client(sim, retries=1) as client:
        client.chat.completions.create(model=MODEL, messages=list(BROKEN["interrupted"]))
    checks.retried_as_one_call(otel, attempts)


@pytest.mark.parametrize("sdk", SDKS, ids=[s.name for s in SDKS])
def test_observe_mode_sends_the_history_as_written_and_the_sdks_error_comes_back(
    instrument: Instrument, sim: Simulator, sdk: Sdk
) -> None:
    """Observe mode: the history goes out unchanged, the SDK's own ``BadRequestError`` is raised, the span says so."""
    otel = instrument(mode="observe")
    with sdk.client(sim) as client, pytest.raises(sdk.sdk.BadRequestError):
        client.chat.completions.create(model=MODEL, messages=list(BROKEN["interrupted"]))
    checks.observed_refusal(otel, "BadRequestError")


def _patched(sdk: Sdk) -> list[object]:
    """The attributes patched for ``sdk``: its resources' ``create``, httpx's ``send`` (sync and async)."""
    return [vars(owner)["create"] for owner in sdk.resources()] + [
        vars(httpx.Client)["send"],
        vars(httpx.AsyncClient)["send"],
    ]


@pytest.mark.parametrize("sdk", SDKS, ids=[s.name for s in SDKS])
def test_uninstrument_restores_the_sdk(instrument: Instrument, sim: Simulator, sdk: Sdk) -> None:
    """After ``uninstrument()`` the SDK's ``create`` and httpx's ``send`` are the objects they were; refused again."""
    with (
        checks.restored_by_uninstrument(instrument, lambda: _patched(sdk)),
        sdk.client(sim) as client,
        pytest.raises(sdk.sdk.BadRequestError),
    ):
        client.chat.completions.create(model=MODEL, messages=list(BROKEN["interrupted"]))


def _completion(request: httpx.Request) -> httpx.Response:
    """A whole Chat Completions reply, whatever was asked."""
    message = {"role": "assistant", "content": "Done."}
    choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    body = {"id": "c1", "object": "chat.completion", "created": 1, "model": MODEL, "choices": [choice], "usage": usage}
    return httpx.Response(200, json=body, request=request)


@pytest.mark.parametrize("sdk", [s for s in SDKS if s.name != "groq"], ids=["together", "fireworks"])
def test_a_client_pointed_at_a_known_host_carries_that_hosts_provider_name(instrument: Instrument, sdk: Sdk) -> None:
    """A Together or Fireworks client sent to Groq's host is named ``groq``, as the openai SDK's would be."""
    otel = instrument()
    http = httpx.Client(transport=httpx.MockTransport(_completion))
    with sdk.sdk.Client(base_url="https://api.groq.com/openai/v1", api_key="k", http_client=http, max_retries=0) as c:
        c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "go"}])
    (span,) = otel.call_spans()
    assert (span.attributes or {})[names.PROVIDER] == "groq"
    assert (span.attributes or {})[names.SERVER_ADDRESS] == "api.groq.com"


def test_one_provider_enabled_records_its_calls_and_passes_the_others_through(
    instrument: Instrument, sim: Simulator
) -> None:
    """``providers=["groq"]``: groq's call is repaired on one span; together's goes out as written, unrecorded."""
    otel = instrument(providers=("groq",))
    groq_sdk, together_sdk, _ = SDKS
    with groq_sdk.client(sim) as client:
        client.chat.completions.create(model=MODEL, messages=list(BROKEN["interrupted"]))
    with together_sdk.client(sim) as client, pytest.raises(together.BadRequestError):
        client.chat.completions.create(model=MODEL, messages=list(BROKEN["interrupted"]))
    assert [r.status for r in sim.requests] == [200, 400]
    (span,) = otel.call_spans()
    assert (span.attributes or {})[names.PROVIDER] == "groq"


def test_the_shared_send_is_patched_once_and_passes_other_httpx_users_through(
    instrument: Instrument, sim: Simulator
) -> None:
    """Three SDKs share one wrapper on httpx's ``send``; a plain httpx request while instrumented records nothing."""
    otel = instrument()
    for owner in (httpx.Client, httpx.AsyncClient):
        assert not hasattr(vars(owner)["send"].__wrapped__, "__wrapped__")  # one layer, not one per SDK
    with httpx.Client() as plain:
        reply = plain.post(f"{sim.openai_base_url}/chat/completions", json={"model": MODEL, "messages": []})
    assert reply.status_code == 200
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0
