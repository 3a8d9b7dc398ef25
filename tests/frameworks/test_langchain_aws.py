"""``langchain-aws`` ``ChatBedrockConverse`` against the simulator: broken message lists through boto3's Converse.

Each call sends a history with ``AIMessage(tool_calls=...)`` and ``ToolMessage`` broken one way, through
``ChatBedrockConverse`` on a boto3 ``bedrock-runtime`` client pointed at the simulator (dummy
credentials, no network); the simulated model answers with a tool call (one request). With
``otel_toolturn.init()`` the request must reach the simulator valid, be recorded once, and the
AIMessage come back with the call; without it the same history gets the service's
``ValidationException``. ``ChatBedrockConverse`` joins a ``ToolMessage`` and the ``HumanMessage`` after
it into one user message, so each break reaches the wire as the service refuses it.
"""

from __future__ import annotations

from typing import Final

import pytest
from botocore.exceptions import ClientError
from langchain_aws import ChatBedrockConverse
from langchain_core.messages import AIMessageChunk
from langchain_core.messages.ai import add_ai_message_chunks
from pydantic import SecretStr

from otel_toolturn import Lane
from otel_toolturn.simulator import Simulator
from tests.bedrock_wire import MODEL
from tests.frameworks.breaks import BREAKS, HISTORIES, Break, call_turn
from tests.frameworks.test_langchain import READ, assert_call, history
from tests.frameworks.traffic import assert_traffic
from tests.instrument.conftest import Otel

LANE: Final[Lane] = "bedrock.converse"
REFUSALS: Final[dict[Break, str]] = {
    "missing_result": "Expected toolResult blocks",
    "late_result": "Expected toolResult blocks",
    "orphan_result": "exceeds the number of toolUse blocks",
}
"""The service's words for each break, as the simulator answers them."""


def chat_model(sim: Simulator) -> ChatBedrockConverse:
    """``ChatBedrockConverse`` on the simulator: its own boto3 client, dummy credentials, no retries."""
    return ChatBedrockConverse(
        model=MODEL,
        base_url=sim.base_url,
        region_name="us-east-1",
        aws_access_key_id=SecretStr("x"),
        aws_secret_access_key=SecretStr("x"),
        max_retries=0,
    )


@pytest.mark.parametrize("broken", BREAKS)
def test_invoke_sends_a_broken_history_valid(sim: Simulator, otel: Otel, broken: Break) -> None:
    """``invoke`` with a broken history: the Converse request valid, one span and one count; the AIMessage back."""
    sim.enqueue(call_turn())
    assert_call(chat_model(sim).bind_tools([READ]).invoke(history(HISTORIES[broken])))
    assert_traffic(sim, otel, lane=LANE, requests=1)


async def test_ainvoke_sends_a_broken_history_valid(sim: Simulator, otel: Otel) -> None:
    """``ainvoke`` with a call left without its result: the request valid, one span, one count; the AIMessage back."""
    sim.enqueue(call_turn())
    assert_call(await chat_model(sim).bind_tools([READ]).ainvoke(history(HISTORIES["missing_result"])))
    assert_traffic(sim, otel, lane=LANE, requests=1)


@pytest.mark.parametrize("broken", BREAKS)
def test_stream_sends_a_broken_history_valid(sim: Simulator, otel: Otel, broken: Break) -> None:
    """``stream`` (``converse_stream``) with a broken history: the request valid, one span, one count; the call back."""
    sim.enqueue(call_turn())
    streamed = list(chat_model(sim).bind_tools([READ]).stream(history(HISTORIES[broken])))
    chunks = [c for c in streamed if isinstance(c, AIMessageChunk)]
    assert len(chunks) == len(streamed) > 1
    assert_call(add_ai_message_chunks(*chunks))
    assert [r.path.endswith("/converse-stream") for r in sim.requests] == [True]
    assert_traffic(sim, otel, lane=LANE, requests=1)


async def test_astream_sends_a_broken_history_valid(sim: Simulator, otel: Otel) -> None:
    """``astream`` with a late result: the streamed request valid, one span, one count; the chunks make the call."""
    sim.enqueue(call_turn())
    model = chat_model(sim).bind_tools([READ])
    chunks = [c async for c in model.astream(history(HISTORIES["late_result"])) if isinstance(c, AIMessageChunk)]
    assert_call(add_ai_message_chunks(*chunks))
    assert [r.path.endswith("/converse-stream") for r in sim.requests] == [True]
    assert_traffic(sim, otel, lane=LANE, requests=1)


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("broken", BREAKS)
def test_without_init_the_service_refuses_the_same_history(sim: Simulator, broken: Break, streamed: bool) -> None:
    """No ``init()``: the same history reaches the service as written and boto3 raises its ``ValidationException``."""
    sim.enqueue(call_turn())
    model = chat_model(sim).bind_tools([READ])
    messages = history(HISTORIES[broken])
    send = (lambda: list(model.stream(messages))) if streamed else (lambda: model.invoke(messages))
    with pytest.raises(ClientError) as refused:
        send()
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert [(r.lane, r.status) for r in sim.requests] == [(LANE, 400)]
    assert REFUSALS[broken] in str(sim.requests[0].error)
