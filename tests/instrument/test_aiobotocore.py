"""aiobotocore's async ``bedrock-runtime`` client: ``converse``, ``converse_stream`` and Anthropic ``invoke_model``."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

import aiobotocore.client
import aiobotocore.endpoint
import aiobotocore.eventstream
import pytest
from aiobotocore.stub import AioStubber
from botocore.exceptions import ClientError, ParamValidationError

from otel_toolturn.instrument import ToolTurnInstrumentor, _botocore, names
from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator
from tests.bedrock_wire import (
    BROKEN,
    INVOKE_BROKEN,
    INVOKE_CASES,
    MODEL,
    aio_bedrock_client,
    anthropic_body,
    text,
    user,
)
from tests.instrument.bedrock_checks import (
    INVOKE_LANE,
    STUBBED_CONVERSE,
    busy_once,
    check_refused,
    check_repaired,
    check_retried_once,
    the_span,
)
from tests.instrument.conftest import Instrument

CASES: Final = [(name, streamed) for name in sorted(BROKEN) for streamed in (False, True)]


async def converse(client: Any, messages: list[dict[str, object]], *, streamed: bool) -> list[object]:
    """One call, plain or streamed; the response's content blocks (plain) or every stream event (streamed)."""
    if not streamed:
        response = await client.converse(modelId=MODEL, messages=messages)
        return list(response["output"]["message"]["content"])
    response = await client.converse_stream(modelId=MODEL, messages=messages)
    return [event async for event in response["stream"]]


async def invoke(client: Any, body: bytes | str, *, streamed: bool) -> dict[str, Any]:
    """One invoke call, plain or streamed; the Anthropic message (plain) or its events by type (streamed)."""
    if not streamed:
        response = await client.invoke_model(modelId=MODEL, body=body)
        return dict(json.loads(await response["body"].read()))
    response = await client.invoke_model_with_response_stream(modelId=MODEL, body=body)
    events = [json.loads(event["chunk"]["bytes"]) async for event in response["body"]]
    return {"types": [event["type"] for event in events]}


@pytest.mark.parametrize(("name", "streamed"), CASES)
async def test_repair_mode_repairs_a_broken_history_and_the_service_answers(
    instrument: Instrument, sim: Simulator, name: str, streamed: bool
) -> None:
    """Repair mode: the history reaches the wire valid and is answered; span, event and metric say what was repaired."""
    otel = instrument(mode="repair")
    messages = list(BROKEN[name])
    async with aio_bedrock_client(sim.base_url) as client:
        assert await converse(client, messages, streamed=streamed)
    assert messages == list(BROKEN[name])  # the caller's list is never changed
    check_repaired(otel, sim, name, streamed=streamed)


@pytest.mark.parametrize(("name", "streamed"), CASES)
async def test_observe_mode_sends_the_history_unchanged_and_the_service_refuses_it(
    instrument: Instrument, sim: Simulator, name: str, streamed: bool
) -> None:
    """Observe mode: the history goes out as written, the client raises ``ValidationException``, the finding kept."""
    otel = instrument(mode="observe")
    messages = list(BROKEN[name])
    async with aio_bedrock_client(sim.base_url) as client:
        with pytest.raises(ClientError) as refused:
            await converse(client, messages, streamed=streamed)
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    check_refused(otel, sim, name, messages)


async def test_a_retried_call_is_recorded_once(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client retries a 503 over HTTP: two attempts go out, one span and one request are recorded."""
    otel = instrument(mode="repair")
    attempts: list[int] = []
    monkeypatch.setattr(sim, "answer", busy_once(sim, attempts))
    async with aio_bedrock_client(sim.base_url, attempts=2) as client:
        response = await client.converse(modelId=MODEL, messages=list(BROKEN["interrupted"]))
    check_retried_once(otel, response, attempts)


async def test_a_call_never_sent_leaves_no_span(instrument: Instrument, sim: Simulator) -> None:
    """A call ``AioStubber`` answers, and one refused before sending, record nothing; the error reaches the caller."""
    otel = instrument(mode="repair")
    async with aio_bedrock_client(sim.base_url) as client:
        with AioStubber(client) as stub:
            stub.add_response("converse", STUBBED_CONVERSE)
            await client.converse(modelId=MODEL, messages=list(BROKEN["interrupted"]))
        with pytest.raises(ParamValidationError):
            await client.converse(modelId=MODEL, messages=[{"role": "user", "content": "not a list of blocks"}])
    assert sim.requests == ()
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0


async def test_a_streamed_reply_without_message_stop_is_torn(instrument: Instrument, sim: Simulator) -> None:
    """A ``converse_stream`` that ends without ``messageStop`` marks the span torn; a cut call is a drop event."""
    otel = instrument(mode="repair")
    sim.enqueue(
        ScriptedTurn(
            calls=(ScriptedCall(name="lookup", arguments={"key": "a long value"}),), misbehaviours=("cut_arguments",)
        )
    )
    async with aio_bedrock_client(sim.base_url) as client:
        events = await converse(client, [user(text("Go."))], streamed=True)
    assert not any("messageStop" in e for e in events)  # type: ignore[operator]
    assert the_span(otel).attributes[names.STREAM_TORN] is True
    (drop,) = otel.events(names.EVENT_STREAM_DROP)
    assert drop[names.STREAM_DROP_CAUSE] == "truncated"


async def test_a_stream_closed_early_ends_its_span_once_and_closes_as_the_bare_stream(
    instrument: Instrument, sim: Simulator
) -> None:
    """The caller reads one event and calls the stream's own synchronous ``close()``: it closes, the span ends once."""
    otel = instrument(mode="repair")
    async with aio_bedrock_client(sim.base_url) as client:
        response = await client.converse_stream(modelId=MODEL, messages=[user(text("Hello."))])
        stream = response["stream"]
        assert isinstance(stream, aiobotocore.eventstream.AioEventStream)
        async for _ in stream:
            break
        assert stream.close() is None  # botocore's close, not a coroutine
        assert otel.call_spans() != []
        assert the_span(otel).attributes[names.STREAM_CLOSED_EARLY] is True
        stream.close()
    assert len(otel.call_spans()) == 1


async def test_concurrent_calls_each_record_their_own_request(instrument: Instrument, sim: Simulator) -> None:
    """Two calls awaited together on one client: two spans, each with its own repair, none crossed."""
    otel = instrument(mode="repair")
    async with aio_bedrock_client(sim.base_url) as client:
        await asyncio.gather(
            converse(client, list(BROKEN["interrupted"]), streamed=False),
            converse(client, list(BROKEN["trimmed"]), streamed=True),
        )
    assert len(otel.call_spans()) == 2
    forms = {span.attributes.get(names.REPAIRS_FORMS) for span in otel.call_spans() if span.attributes}
    assert forms == {("missing_result",), ("orphan_result",)}
    assert [r.status for r in sim.requests] == [200, 200]


async def test_a_failure_inside_is_counted_and_the_call_proceeds(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The law failing inside otel-toolturn: counted by stage, and the call goes out as written (here refused)."""
    otel = instrument(mode="repair")

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("inside")

    monkeypatch.setattr(_botocore, "decide_request", broken)
    async with aio_bedrock_client(sim.base_url) as client:
        with pytest.raises(ClientError, match="Expected toolResult blocks"):
            await converse(client, list(BROKEN["interrupted"]), streamed=False)
    assert otel.total(names.INSTRUMENTATION_ERRORS.name, toolturn__error__stage="law") == 1
    assert otel.call_spans() == []


async def test_uninstrument_restores_aiobotocore(instrument: Instrument, sim: Simulator) -> None:
    """After ``uninstrument()`` the patched coroutines are the very objects they were; calls go out as written."""
    before = (
        vars(aiobotocore.client.AioBaseClient)["_make_api_call"],
        vars(aiobotocore.endpoint.AioEndpoint)["_send"],
    )
    async with aio_bedrock_client(sim.base_url) as client:  # made before instrument: instrumented all the same
        otel = instrument(mode="repair")
        await converse(client, list(BROKEN["trimmed"]), streamed=False)
        assert len(otel.call_spans()) == 1
        ToolTurnInstrumentor().uninstrument()
        after = (
            vars(aiobotocore.client.AioBaseClient)["_make_api_call"],
            vars(aiobotocore.endpoint.AioEndpoint)["_send"],
        )
        assert after == before
        with pytest.raises(ClientError, match="exceeds the number of toolUse blocks"):
            await converse(client, list(BROKEN["trimmed"]), streamed=False)
    assert len(otel.call_spans()) == 1


@pytest.mark.parametrize(("name", "streamed"), INVOKE_CASES)
async def test_invoke_model_with_an_anthropic_body_is_repaired_and_answered(
    instrument: Instrument, sim: Simulator, name: str, streamed: bool
) -> None:
    """Repair mode, ``invoke_model`` (plain, streamed), a broken Anthropic body: sent valid, one span, repaired."""
    otel = instrument(mode="repair")
    async with aio_bedrock_client(sim.base_url) as client:
        answer = await invoke(client, anthropic_body(INVOKE_BROKEN[name]), streamed=streamed)
    if streamed:
        assert (answer["types"][0], answer["types"][-1]) == ("message_start", "message_stop")
    else:
        assert answer["type"] == "message"
    check_repaired(otel, sim, name, streamed=streamed, lane=INVOKE_LANE)


async def test_an_invoke_body_closed_unread_ends_its_span_as_the_callers_stop(
    instrument: Instrument, sim: Simulator
) -> None:
    """A whole invoke body left unread and closed (``async with``): the span ends once, no response recorded."""
    otel = instrument(mode="repair")
    async with aio_bedrock_client(sim.base_url) as client:
        response = await client.invoke_model(modelId=MODEL, body=anthropic_body(INVOKE_BROKEN["interrupted"]))
        async with response["body"]:
            pass
    span = the_span(otel)
    assert span.attributes[names.REPAIRS_FORMS] == ("missing_result",)
    assert names.GEN_AI_USAGE_OUTPUT_TOKENS not in span.attributes


async def test_an_invoke_body_that_is_not_anthropic_messages_passes_untouched(
    instrument: Instrument, sim: Simulator
) -> None:
    """Another model's body goes out as it is and records nothing."""
    otel = instrument(mode="repair")
    body = b'{"inputText": "Hello.", "textGenerationConfig": {"maxTokenCount": 8}}'
    async with aio_bedrock_client(sim.base_url) as client:
        with pytest.raises(ClientError):
            await client.invoke_model(modelId=MODEL, body=body)
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0
