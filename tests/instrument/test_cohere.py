"""The cohere SDK's v2 chat (``chat``, ``chat_stream``, their ``with_raw_response``; sync and async) instrumented.

The real SDK talks to the simulator's ``/v2/chat``: a broken history is refused with Cohere's 400 body,
as the SDK's own ``BadRequestError``, without the instrumentation, and served with it, one span per
call (its retries included) carrying the repair. Cohere's words for a missing tool result are the Chat
lane's after ``invalid request:`` (oracle/langchain-oracle#10); its messages are Chat's, with
``tool_plan`` on the assistant message and ``document`` parts in tool results
(https://docs.cohere.com/docs/migrating-v1-to-v2, https://docs.cohere.com/v2/docs/tool-use-usage-patterns).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import cohere
import httpx
import pytest
from cohere import (
    AssistantChatMessageV2,
    Document,
    DocumentToolContent,
    ToolCallV2,
    ToolCallV2Function,
    ToolChatMessageV2,
    UserChatMessageV2,
)
from cohere.core.http_response import AsyncHttpResponse, HttpResponse
from cohere.v2.raw_client import AsyncRawV2Client, RawV2Client

from otel_toolturn.instrument import ToolTurnInstrumentor, names
from otel_toolturn.simulator import ScriptedTurn, Simulator
from otel_toolturn.simulator._server import Answer
from tests.instrument import sdk_checks as checks
from tests.instrument.conftest import Instrument, Otel

MODEL: Final = "command-a-03-2025"
PLAN: Final = "I will read a and b."


def _call(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "read", "arguments": '{"path": "a"}'}}


def _document(data: dict[str, object]) -> list[dict[str, object]]:
    return [{"type": "document", "document": {"data": data}}]


BROKEN: Final[dict[str, list[Any]]] = {
    # Ctrl-C while the second of two parallel calls ran: it has no result, and the user spoke next
    "interrupted": [
        {"role": "user", "content": "Read a and b."},
        {"role": "assistant", "tool_plan": PLAN, "tool_calls": [_call("call_1"), _call("call_2")]},
        {"role": "tool", "tool_call_id": "call_1", "content": _document({"a": 1})},
        {"role": "user", "content": "Never mind b; what is in a?"},
    ],
    # the window was cut between a call and its result: the result stands alone
    "orphan": [
        {"role": "user", "content": "Read a."},
        {"role": "tool", "tool_call_id": "call_9", "content": "a=1"},
        {"role": "user", "content": "What is in a?"},
    ],
    # the SDK's own typed messages: two results recorded for one call, none for the other
    "typed": [
        UserChatMessageV2(content="Read a and b."),
        AssistantChatMessageV2(
            tool_plan=PLAN,
            tool_calls=[
                ToolCallV2(id="call_1", function=ToolCallV2Function(name="read", arguments="{}")),
                ToolCallV2(id="call_2", function=ToolCallV2Function(name="read", arguments="{}")),
            ],
        ),
        ToolChatMessageV2(tool_call_id="call_1", content=[DocumentToolContent(document=Document(data={"a": 1}))]),
        ToolChatMessageV2(tool_call_id="call_1", content=[DocumentToolContent(document=Document(data={"a": 2}))]),
        UserChatMessageV2(content="Go on."),
    ],
}
REPAIRS_OF: Final = {
    "interrupted": ("missing_result",),
    "orphan": ("orphan_result",),
    "typed": ("duplicate_result", "missing_result"),
}
REFUSAL_OF: Final = {
    "interrupted": "invalid request: An assistant message with 'tool_calls' must be followed by tool messages",
    "orphan": "invalid request: Invalid parameter: messages with role 'tool' must be a response to a preceeding",
    "typed": "invalid request: Invalid parameter: messages[3] is a second 'tool' message for tool_call_id call_1.",
}
CASES: Final = sorted(BROKEN)


@pytest.fixture
def client(sim: Simulator) -> Iterator[cohere.ClientV2]:
    """A sync client of the simulator."""
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as made:
        yield made


def _served(sim: Simulator, otel: Otel, case: str, messages: list[Any], *, streamed: bool) -> None:
    """The simulator accepted one valid request, ``tool_plan`` as sent; one ``cohere`` span carries the repairs."""
    sent = checks.served_request(sim.requests, messages, BROKEN[case], path="/v2/chat")
    assert [m.get("tool_plan") for m in sent if m["role"] == "assistant"] == [PLAN] * (case != "orphan")
    # "COMPLETE": the finish reason in Cohere's own words, read from its own response
    attributes = checks.one_repaired_span(
        otel, provider="cohere", forms=REPAIRS_OF[case], finish="COMPLETE", streamed=streamed
    )
    assert attributes[names.GEN_AI_USAGE_OUTPUT_TOKENS] > 0


@pytest.mark.parametrize("case", CASES)
def test_without_the_instrumentation_the_broken_history_is_refused(
    client: cohere.ClientV2, sim: Simulator, case: str
) -> None:
    """Uninstrumented, the history goes out as written: Cohere's 400 comes back as the SDK's ``BadRequestError``."""
    with pytest.raises(cohere.BadRequestError) as refused:
        client.chat(model=MODEL, messages=BROKEN[case])
    assert refused.value.body["message"].startswith(REFUSAL_OF[case])
    checks.refused_request(sim.requests)


def _send(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``chat`` or ``chat_stream``: the SDK's own ``V2ChatResponse`` or events come back."""
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        if streamed:
            events = list(client.chat_stream(model=MODEL, messages=messages))
            assert [type(e).__name__ for e in events][-1] == "MessageEndV2ChatStreamResponse"
        else:
            response = client.chat(model=MODEL, messages=messages)
            assert type(response).__name__ == "V2ChatResponse"
            assert response.finish_reason == "COMPLETE"


async def _send_async(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``AsyncClientV2``'s ``chat`` or ``chat_stream``: the SDK's own response or events come back."""
    async with cohere.AsyncClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        if streamed:
            events = [event async for event in client.chat_stream(model=MODEL, messages=messages)]
            assert events[-1].type == "message-end"
        else:
            response = await client.chat(model=MODEL, messages=messages)
            assert response.finish_reason == "COMPLETE"


def _send_raw(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``with_raw_response``'s ``chat`` or ``chat_stream``: the SDK's own ``HttpResponse``, its ``data`` the SDK's."""
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        if streamed:
            with client.with_raw_response.chat_stream(model=MODEL, messages=messages) as raw:
                assert type(raw) is HttpResponse
                assert raw.status_code == 200
                events = list(raw.data)
            assert [type(e).__name__ for e in events][-1] == "MessageEndV2ChatStreamResponse"
        else:
            response = client.with_raw_response.chat(model=MODEL, messages=messages)
            assert type(response) is HttpResponse
            assert (response.status_code, type(response.data).__name__) == (200, "V2ChatResponse")
            assert response.data.finish_reason == "COMPLETE"


async def _send_raw_async(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``AsyncClientV2.with_raw_response``: the SDK's own ``AsyncHttpResponse``, its ``data`` the SDK's."""
    async with cohere.AsyncClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        if streamed:
            async with client.with_raw_response.chat_stream(model=MODEL, messages=messages) as raw:
                assert type(raw) is AsyncHttpResponse
                events = [event async for event in raw.data]
            assert events[-1].type == "message-end"
        else:
            response = await client.with_raw_response.chat(model=MODEL, messages=messages)
            assert type(response) is AsyncHttpResponse
            assert response.data.finish_reason == "COMPLETE"


test_with_the_instrumentation_the_broken_history_is_repaired_and_served = checks.repaired_and_served(
    BROKEN, _send, _served
)
test_the_async_client_is_repaired_and_served = checks.async_repaired_and_served(BROKEN, _send_async, _served)
test_with_raw_response_the_broken_history_is_repaired_and_served = checks.repaired_and_served(
    BROKEN, _send_raw, _served
)
test_the_async_client_s_raw_response_is_repaired_and_served = checks.async_repaired_and_served(
    BROKEN, _send_raw_async, _served
)


def test_a_call_the_sdk_retries_is_one_span(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server answers 500 once, the SDK retries over HTTP: two requests go out, one span and one count."""
    otel = instrument()
    busy = Answer(status=500, body={"message": "try again"}, headers={"retry-after-ms": "1"})
    attempts = checks.busy_once(sim, monkeypatch, busy)
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=1) as client:
        client.chat(model=MODEL, messages=list(BROKEN["interrupted"]))
    checks.retried_as_one_call(otel, attempts)


@checks.whole_and_streamed
def test_observe_mode_sends_the_history_as_written_and_the_sdks_error_comes_back(
    instrument: Instrument, sim: Simulator, *, streamed: bool
) -> None:
    """Observe mode: the history goes out unchanged, the SDK's own ``BadRequestError`` is raised, the span says so."""
    otel = instrument(mode="observe")
    messages = list(BROKEN["interrupted"])
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        send = (lambda: list(client.chat_stream(model=MODEL, messages=messages))) if streamed else None
        with pytest.raises(cohere.BadRequestError):
            send() if send is not None else client.chat(model=MODEL, messages=messages)
    checks.refused_request(sim.requests, BROKEN["interrupted"])
    checks.observed_refusal(otel, "BadRequestError")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_raw_stream_never_entered_sends_nothing_and_records_nothing(
    instrument: Instrument, sim: Simulator, *, is_async: bool
) -> None:
    """``with_raw_response.chat_stream`` made and dropped unentered: no request, no span, no request counted."""
    otel = instrument()
    client: Any = (cohere.AsyncClientV2 if is_async else cohere.ClientV2)(
        base_url=sim.base_url, api_key="test-key", max_retries=0
    )
    manager = client.with_raw_response.chat_stream(model=MODEL, messages=list(BROKEN["interrupted"]))
    del manager
    assert sim.requests == ()
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0


def test_a_raw_stream_left_after_one_event_ends_its_span_once_closed_early(
    instrument: Instrument, sim: Simulator
) -> None:
    """The caller leaves ``with_raw_response.chat_stream`` after one event: one span, ended once, closed early."""
    otel = instrument()
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        with client.with_raw_response.chat_stream(model=MODEL, messages=list(BROKEN["interrupted"])) as raw:
            first = next(iter(raw.data))
        assert first.type == "message-start"
    checks.served_request(sim.requests, list(BROKEN["interrupted"]), BROKEN["interrupted"], path="/v2/chat")
    (span,) = otel.call_spans()
    attributes = span.attributes or {}
    assert (attributes[names.STREAM_CLOSED_EARLY], attributes.get(names.STREAM_TORN, False)) == (True, False)
    assert [event[names.REPAIR_FORM] for event in otel.events(names.EVENT_REPAIR)] == ["missing_result"]
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0


def _patched() -> list[object]:
    """The attributes patched for cohere: both raw clients' ``chat`` and ``chat_stream``, httpx's ``send``."""
    owners = (RawV2Client, AsyncRawV2Client)
    return [vars(owner)[method] for owner in owners for method in ("chat", "chat_stream")] + [
        vars(httpx.Client)["send"],
        vars(httpx.AsyncClient)["send"],
    ]


def test_uninstrument_restores_the_sdk(instrument: Instrument, sim: Simulator) -> None:
    """After ``uninstrument()`` the SDK's methods and httpx's ``send`` are the objects they were; refused again."""
    with (
        checks.restored_by_uninstrument(instrument, _patched),
        cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client,
        pytest.raises(cohere.BadRequestError),
    ):
        client.chat(model=MODEL, messages=list(BROKEN["interrupted"]))


@checks.whole_and_streamed
def test_a_client_made_before_instrumenting_is_repaired(
    instrument: Instrument, sim: Simulator, *, streamed: bool
) -> None:
    """``ClientV2`` binds its ``chat`` when made; one made before ``instrument`` is repaired all the same: one span."""
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        otel = instrument()
        messages = list(BROKEN["interrupted"])
        if streamed:
            assert list(client.chat_stream(model=MODEL, messages=messages))[-1].type == "message-end"
        else:
            assert client.chat(model=MODEL, messages=messages).finish_reason == "COMPLETE"
    _served(sim, otel, "interrupted", messages, streamed=streamed)


def test_a_client_made_before_uninstrument_passes_through(instrument: Instrument, sim: Simulator) -> None:
    """A client made while instrumented holds the bound wrapper; after ``uninstrument()`` it sends as written."""
    otel = instrument()
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        ToolTurnInstrumentor().uninstrument()
        with pytest.raises(cohere.BadRequestError):
            client.chat(model=MODEL, messages=list(BROKEN["interrupted"]))
    assert otel.call_spans() == []


def test_a_stream_that_ends_without_message_end_is_torn_on_its_span(instrument: Instrument, sim: Simulator) -> None:
    """The simulator's stream stops before ``message-end``: the SDK's events come back, the span says torn."""
    otel = instrument()
    sim.enqueue(ScriptedTurn(text="Nearly.", misbehaviours=("no_finish",)))
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        events = list(client.chat_stream(model=MODEL, messages=list(BROKEN["interrupted"])))
    assert events[-1].type == "content-end"
    (span,) = otel.call_spans()
    assert (span.attributes or {})[names.STREAM_TORN] is True


TOOLS: Final = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object", "properties": {}}}}]
ONE_ROUND: Final[list[Any]] = [
    {"role": "user", "content": "Read a."},
    {"role": "assistant", "tool_plan": PLAN, "tool_calls": [_call("call_1")]},
    {"role": "tool", "tool_call_id": "call_1", "content": "a=1"},
]


def test_withheld_tools_are_cohere_s_none(instrument: Instrument, sim: Simulator) -> None:
    """``max_tool_rounds`` reached: the cohere SDK sends v2 chat's ``tool_choice`` ``NONE``, its "no tool"; served."""
    otel = instrument(max_tool_rounds=1)
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as made:
        made.chat(model=MODEL, messages=ONE_ROUND, tools=TOOLS)
    (request,) = sim.requests
    assert (request.status, request.body["tool_choice"]) == (200, "NONE")  # type: ignore[index]
    assert request.body["tools"] == TOOLS  # type: ignore[index]  # the definitions stay
    (event,) = otel.events(names.EVENT_TOOLS_WITHHELD)
    assert event is not None
    assert (event[names.TOOLS_WITHHELD_REASON], event[names.TOOLS_WITHHELD_APPLIED]) == ("wrap-up", True)


def test_a_caller_s_none_is_read_as_tools_withheld(instrument: Instrument, sim: Simulator) -> None:
    """A caller's own ``tool_choice="NONE"`` through the cohere SDK: recorded as the caller's, sent as written."""
    otel = instrument()
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as made:
        made.chat(model=MODEL, messages=ONE_ROUND[:1], tools=TOOLS, tool_choice="NONE")
    (request,) = sim.requests
    assert request.body["tool_choice"] == "NONE"  # type: ignore[index]
    (event,) = otel.events(names.EVENT_TOOLS_WITHHELD)
    assert event is not None
    assert (event[names.TOOLS_WITHHELD_REASON], event[names.TOOLS_WITHHELD_APPLIED]) == ("caller", False)
