"""The mistralai SDK (Speakeasy, HTTP code of its own over httpx2) through the instrumentation, in Mistral's dialect.

The real SDK talks to the simulator's Mistral route (``Simulator.mistral_base_url``): a broken history is
refused with Mistral's 400 as the SDK's own ``SDKError`` without the instrumentation, in Mistral's words
(``Not the same number of function calls and responses``: mistralai/client-python#234, camel-ai/camel#1467;
``Tool call id was call_search but must be a-z, A-Z, 0-9, with a length of 9.``: jackmpcollins/magentic#276),
and served with it: repaired in the ``mistral`` dialect before the SDK serialises it, one span per call (its
retries included) carrying the repair, ``gen_ai.provider.name`` ``mistral_ai``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import httpx2
import openai
import pytest
from mistralai.client import Mistral, chat, errors, utils
from mistralai.client.utils import eventstreaming

from otel_toolturn.instrument import names
from otel_toolturn.simulator import Simulator
from otel_toolturn.simulator._server import Answer
from tests.instrument import sdk_checks as checks
from tests.instrument.conftest import Instrument, Otel

MODEL: Final = "mistral-small-latest"
PATTERN: Final = re.compile(r"[a-zA-Z0-9]{9}")


def _call(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "search", "arguments": '{"q": "a"}'}}


BROKEN: Final[dict[str, list[dict[str, object]]]] = {
    # Ctrl-C while the second of two parallel calls ran: it has no result, and the user spoke next
    "interrupted": [
        {"role": "user", "content": "Search a and b."},
        {"role": "assistant", "content": "", "tool_calls": [_call("D681PevKs"), _call("aB3dE6gH9")]},
        {"role": "tool", "tool_call_id": "D681PevKs", "content": "a=1"},
        {"role": "user", "content": "Never mind b; what is a?"},
    ],
    # a session begun on OpenAI continues on Mistral: its ids are OpenAI's
    "openai_ids": [
        {"role": "user", "content": "Search a."},
        {"role": "assistant", "content": "", "tool_calls": [_call("call_search")]},
        {"role": "tool", "tool_call_id": "call_search", "content": "a=1"},
        {"role": "user", "content": "What is a?"},
    ],
}
REPAIR_OF: Final = {"interrupted": "missing_result", "openai_ids": "invalid_id"}
REFUSAL_OF: Final = {
    "interrupted": "Not the same number of function calls and responses",
    "openai_ids": "Tool call id was call_search but must be a-z, A-Z, 0-9, with a length of 9.",
}
CASES: Final = sorted(BROKEN)


def _client(sim: Simulator, **options: Any) -> Mistral:
    return Mistral(api_key="test-key", server_url=sim.mistral_base_url, **options)


def _served(
    sim: Simulator, otel: Otel, case: str, messages: list[dict[str, object]], *, streamed: bool | None = None
) -> None:
    """The simulator accepted one request valid in Mistral's dialect; one ``mistral_ai`` span carries the repair."""
    checks.served_request(sim.requests, messages, BROKEN[case], dialect="mistral")
    checks.one_repaired_span(otel, provider="mistral_ai", forms=[REPAIR_OF[case]], streamed=streamed)


@pytest.mark.parametrize("case", CASES)
def test_without_the_instrumentation_the_broken_history_is_refused_in_mistrals_words(sim: Simulator, case: str) -> None:
    """Uninstrumented, the SDK sends the history as written: Mistral's 400 comes back as the SDK's ``SDKError``."""
    with pytest.raises(errors.SDKError) as refused:
        _client(sim).chat.complete(model=MODEL, messages=BROKEN[case])  # type: ignore[arg-type]
    assert REFUSAL_OF[case] in str(refused.value)
    checks.refused_request(sim.requests)


def _send(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``complete`` or ``stream``: the SDK's own objects come back."""
    client = _client(sim)
    if streamed:
        stream = client.chat.stream(model=MODEL, messages=messages)
        assert isinstance(stream, eventstreaming.EventStream)
        events = list(stream)
        assert events[-1].data.choices[0].finish_reason == "stop"
    else:
        completion = client.chat.complete(model=MODEL, messages=messages)
        assert type(completion).__module__.startswith("mistralai.client.models.")
        assert completion.choices[0].finish_reason == "stop"


async def _send_async(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``complete_async`` or ``stream_async``: the SDK's own objects, its ``EventStreamAsync``, come back."""
    client = _client(sim)
    if streamed:
        stream = await client.chat.stream_async(model=MODEL, messages=messages)
        assert isinstance(stream, eventstreaming.EventStreamAsync)
        events = [event async for event in stream]
        assert events[-1].data.choices[0].finish_reason == "stop"
    else:
        completion = await client.chat.complete_async(model=MODEL, messages=messages)
        assert completion.choices[0].finish_reason == "stop"


test_with_the_instrumentation_the_broken_history_is_repaired_and_served = checks.repaired_and_served(
    BROKEN, _send, _served
)


def test_a_renamed_id_is_renamed_on_its_call_and_its_result_alike(instrument: Instrument, sim: Simulator) -> None:
    """OpenAI's ``call_search`` reaches Mistral as one nine-character id, on the call and on its ``tool`` message."""
    instrument()
    _client(sim).chat.complete(model=MODEL, messages=list(BROKEN["openai_ids"]))  # type: ignore[arg-type]
    sent = sim.requests[0].body["messages"]  # type: ignore[index]
    (call,) = sent[1]["tool_calls"]
    assert PATTERN.fullmatch(call["id"])
    assert sent[2]["tool_call_id"] == call["id"]


test_the_async_methods_are_repaired_and_served = checks.async_repaired_and_served(BROKEN, _send_async, _served)


def test_a_call_the_sdk_retries_is_one_span(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server answers 500 once, the SDK retries over HTTP: two requests go out, one span and one count."""
    otel = instrument()
    attempts = checks.busy_once(sim, monkeypatch, Answer(status=500, body={"object": "error", "message": "try again"}))
    retries = utils.RetryConfig("backoff", utils.BackoffStrategy(1, 1, 1.0, 60_000), retry_connection_errors=False)
    _client(sim, retry_config=retries).chat.complete(model=MODEL, messages=list(BROKEN["interrupted"]))  # type: ignore[arg-type]
    checks.retried_as_one_call(otel, attempts)


def test_observe_mode_sends_the_history_as_written_and_the_sdks_error_comes_back(
    instrument: Instrument, sim: Simulator
) -> None:
    """Observe mode: the history goes out unchanged, the SDK's own ``SDKError`` is raised, the span says so."""
    otel = instrument(mode="observe")
    with pytest.raises(errors.SDKError):
        _client(sim).chat.complete(model=MODEL, messages=list(BROKEN["openai_ids"]))  # type: ignore[arg-type]
    checks.observed_refusal(otel, "SDKError", "invalid_id")


def _patched() -> list[object]:
    """The attributes patched for mistralai: ``Chat``'s four methods, httpx2's ``send`` (sync and async)."""
    methods = ("complete", "complete_async", "stream", "stream_async")
    return [vars(chat.Chat)[m] for m in methods] + [vars(httpx2.Client)["send"], vars(httpx2.AsyncClient)["send"]]


def test_uninstrument_restores_the_sdk(instrument: Instrument, sim: Simulator) -> None:
    """After ``uninstrument()`` the SDK's methods and httpx2's ``send`` are the objects they were; refused again."""
    with checks.restored_by_uninstrument(instrument, _patched), pytest.raises(errors.SDKError):
        _client(sim).chat.complete(model=MODEL, messages=list(BROKEN["interrupted"]))  # type: ignore[arg-type]


def _capture(sent: list[httpx2.Request]) -> httpx2.MockTransport:
    """A transport that keeps each request and answers a whole Chat Completions reply."""

    def reply(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        message = {"role": "assistant", "content": "Done."}
        choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
        body = {"id": "c1", "object": "chat.completion", "created": 1, "model": MODEL, "choices": [choice]}
        return httpx2.Response(200, json=body, request=request)

    return httpx2.MockTransport(reply)


@pytest.mark.parametrize(
    ("base_url", "provider_name", "renamed"),
    [("https://api.mistral.ai/v1", "mistral_ai", True), ("https://llm.example.com/v1", "openai", False)],
    ids=["mistral-host", "unknown-host"],
)
def test_the_openai_sdk_pointed_at_mistrals_host_is_decided_in_mistrals_dialect(
    instrument: Instrument, base_url: str, provider_name: str, *, renamed: bool
) -> None:
    """The dialect comes from the client's host: Mistral's renames OpenAI's ids; an unknown host is plain Chat."""
    otel = instrument()
    sent: list[httpx2.Request] = []
    http = httpx2.Client(transport=_capture(sent))
    with openai.OpenAI(base_url=base_url, api_key="k", http_client=http, max_retries=0) as client:
        client.chat.completions.create(model=MODEL, messages=BROKEN["openai_ids"])  # type: ignore[arg-type]
    (request,) = sent
    call_id = json.loads(request.content)["messages"][1]["tool_calls"][0]["id"]
    assert (PATTERN.fullmatch(call_id) is not None) is renamed
    (span,) = otel.call_spans()
    assert (span.attributes or {})[names.PROVIDER] == provider_name
    assert (span.attributes or {}).get(names.REPAIRS_FORMS, ()) == (("invalid_id",) if renamed else ())
