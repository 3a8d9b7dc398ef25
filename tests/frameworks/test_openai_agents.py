"""openai-agents against the simulator: broken ``input`` item lists, Chat Completions and Responses models.

Each run answers a call of the tool and then the answer (two requests); every request must reach the
simulator valid and be recorded once. The agents' own tracing is off (it would export to the network).
The framework leaves each break in the request, so it reaches otel-toolturn (Responses takes a late
result where it stands).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import openai
import pytest
from agents import (
    Agent,
    Model,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    RunResult,
    RunResultStreaming,
    TResponseInputItem,
    function_tool,
)

from otel_toolturn import Lane
from otel_toolturn.simulator import Simulator
from tests.frameworks.breaks import (
    ANSWER,
    BREAKS,
    HISTORIES,
    OPENAI_LANES,
    PROMPT,
    Break,
    Call,
    Result,
    Step,
    Text,
    User,
    agent_turns,
    read,
)
from tests.frameworks.conftest import AsyncClient
from tests.frameworks.traffic import assert_traffic
from tests.instrument.conftest import Otel

READ = function_tool(read)
CONFIG = RunConfig(tracing_disabled=True)


def items(steps: Sequence[Step]) -> list[TResponseInputItem]:
    """The steps as the agents' input items, the prompt last."""
    out: list[TResponseInputItem] = []
    for step in steps:
        match step:
            case User():
                out.append({"role": "user", "content": step.text})
            case Text():
                out.append({"role": "assistant", "content": step.text})
            case Call():
                arguments = json.dumps(dict(step.arguments))
                out.append(
                    {"type": "function_call", "call_id": step.call_id, "name": step.name, "arguments": arguments}
                )
            case Result():
                out.append({"type": "function_call_output", "call_id": step.call_id, "output": step.text})
    out.append({"role": "user", "content": PROMPT})
    return out


def client(sim: Simulator) -> openai.AsyncOpenAI:
    """The openai SDK's async client, on the simulator."""
    return openai.AsyncOpenAI(base_url=sim.openai_base_url, api_key="test-key", max_retries=0)


def agent(sim: Simulator, lane: Lane, sdk: openai.AsyncOpenAI) -> Agent[None]:
    """An agent on the model of ``lane`` with the one tool, its two replies queued."""
    sim.enqueue(*agent_turns())
    model: Model
    if lane == "openai.chat_completions":
        model = OpenAIChatCompletionsModel(model="gpt-test", openai_client=sdk)
    else:
        model = OpenAIResponsesModel(model="gpt-test", openai_client=sdk)
    return Agent(name="reader", instructions="Answer briefly.", model=model, tools=[READ])


@pytest.mark.parametrize("broken", BREAKS)
@pytest.mark.parametrize("lane", OPENAI_LANES)
def test_run_sync_sends_a_broken_history_valid(
    sim: Simulator, otel: Otel, sync_clients: list[AsyncClient], lane: Lane, broken: Break
) -> None:
    """``Runner.run_sync`` with broken items: both requests valid, each one span and one count; the run result back."""
    sdk = client(sim)
    sync_clients.append(sdk)
    result = Runner.run_sync(agent(sim, lane, sdk), input=items(HISTORIES[broken]), run_config=CONFIG)
    assert isinstance(result, RunResult)
    assert result.final_output == ANSWER
    assert_traffic(sim, otel, lane=lane, requests=2)


@pytest.mark.parametrize("lane", OPENAI_LANES)
async def test_run_async_sends_a_broken_history_valid(sim: Simulator, otel: Otel, lane: Lane) -> None:
    """``await Runner.run``, a call without its result: both requests valid, one span, one count each; a result."""
    async with client(sim) as sdk:
        result = await Runner.run(agent(sim, lane, sdk), input=items(HISTORIES["missing_result"]), run_config=CONFIG)
    assert isinstance(result, RunResult)
    assert result.final_output == ANSWER
    assert_traffic(sim, otel, lane=lane, requests=2)


@pytest.mark.parametrize("lane", OPENAI_LANES)
async def test_run_streamed_sends_a_broken_history_valid(sim: Simulator, otel: Otel, lane: Lane) -> None:
    """``Runner.run_streamed``, a call left without its result: both requests valid, one span and one count each."""
    async with client(sim) as sdk:
        result = Runner.run_streamed(agent(sim, lane, sdk), input=items(HISTORIES["missing_result"]), run_config=CONFIG)
        async for _ in result.stream_events():
            pass
    assert isinstance(result, RunResultStreaming)
    assert result.final_output == ANSWER
    assert [r.body.get("stream") for r in sim.requests if isinstance(r.body, dict)] == [True, True]
    assert_traffic(sim, otel, lane=lane, requests=2)
