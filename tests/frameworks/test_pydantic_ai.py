"""pydantic-ai against the simulator: broken ``message_history`` in each lane, sync, async and streamed.

Each run answers a call of the tool and then the answer (two requests); every request must reach the
simulator valid and be recorded once. pydantic-ai closes a call left without its result itself; a late
result behind an answer reaches otel-toolturn broken, so the async and streamed runs send that one.
"""

from __future__ import annotations

from collections.abc import Sequence

import anthropic
import openai
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.run import AgentRunResult

from otel_toolturn import Lane, compose
from otel_toolturn.instrument import _digests, names
from otel_toolturn.simulator import Simulator
from tests.frameworks.breaks import (
    ANSWER,
    BREAKS,
    HISTORIES,
    LANES,
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


def history(steps: Sequence[Step]) -> list[ModelMessage]:
    """The steps as pydantic-ai messages."""
    messages: list[ModelMessage] = []
    for step in steps:
        match step:
            case User():
                messages.append(ModelRequest(parts=[UserPromptPart(content=step.text)]))
            case Text():
                messages.append(ModelResponse(parts=[TextPart(content=step.text)]))
            case Call():
                part = ToolCallPart(tool_name=step.name, args=dict(step.arguments), tool_call_id=step.call_id)
                messages.append(ModelResponse(parts=[part]))
            case Result():
                result = ToolReturnPart(tool_name=step.name, content=step.text, tool_call_id=step.call_id)
                messages.append(ModelRequest(parts=[result]))
    return messages


SDKClient = anthropic.AsyncAnthropic | openai.AsyncOpenAI


def sdk_client(sim: Simulator, lane: Lane) -> SDKClient:
    """The SDK's async client of ``lane``, on the simulator."""
    if lane == "anthropic.messages":
        return anthropic.AsyncAnthropic(base_url=sim.base_url, api_key="test-key", max_retries=0)
    return openai.AsyncOpenAI(base_url=sim.openai_base_url, api_key="test-key", max_retries=0)


def model(lane: Lane, client: SDKClient) -> Model:
    """pydantic-ai's model of ``lane`` on ``client``."""
    if isinstance(client, anthropic.AsyncAnthropic):
        return AnthropicModel("claude-test", provider=AnthropicProvider(anthropic_client=client))
    provider = OpenAIProvider(openai_client=client)
    if lane == "openai.chat_completions":
        return OpenAIChatModel("gpt-test", provider=provider)
    return OpenAIResponsesModel("gpt-test", provider=provider)


def agent(sim: Simulator, lane: Lane, client: SDKClient) -> Agent[None, str]:
    """An agent of ``lane`` with the one tool, its two replies queued."""
    sim.enqueue(*agent_turns())
    return Agent(model(lane, client), tools=[read])


def sync_agent(sim: Simulator, lane: Lane, clients: list[AsyncClient]) -> Agent[None, str]:
    """``agent`` on a new client kept in ``clients`` (to be closed)."""
    client = sdk_client(sim, lane)
    clients.append(client)
    return agent(sim, lane, client)


@pytest.mark.parametrize("broken", BREAKS)
@pytest.mark.parametrize("lane", LANES)
def test_run_sync_sends_a_broken_history_valid(
    sim: Simulator, otel: Otel, sync_clients: list[AsyncClient], lane: Lane, broken: Break
) -> None:
    """``run_sync`` with a broken history: both requests valid, each one span and one count; the run result back."""
    result = sync_agent(sim, lane, sync_clients).run_sync(PROMPT, message_history=history(HISTORIES[broken]))
    assert isinstance(result, AgentRunResult)
    assert result.output == ANSWER
    assert_traffic(sim, otel, lane=lane, requests=2)


@pytest.mark.parametrize("lane", LANES)
async def test_run_async_sends_a_broken_history_valid(sim: Simulator, otel: Otel, lane: Lane) -> None:
    """``await run`` with a late result: both requests valid, each one span and one count; the run result back."""
    async with sdk_client(sim, lane) as client:
        result = await agent(sim, lane, client).run(PROMPT, message_history=history(HISTORIES["late_result"]))
    assert isinstance(result, AgentRunResult)
    assert result.output == ANSWER
    assert_traffic(sim, otel, lane=lane, requests=2)


@pytest.mark.parametrize("lane", LANES)
async def test_run_stream_sends_a_broken_history_valid(sim: Simulator, otel: Otel, lane: Lane) -> None:
    """``run_stream`` with a late result: both streamed requests valid, each one span and one count; the output back."""
    late = history(HISTORIES["late_result"])
    async with (
        sdk_client(sim, lane) as client,
        agent(sim, lane, client).run_stream(PROMPT, message_history=late) as result,
    ):
        output = await result.get_output()
    assert output == ANSWER
    assert [r.body.get("stream") for r in sim.requests if isinstance(r.body, dict)] == [True, True]
    assert_traffic(sim, otel, lane=lane, requests=2)


def test_a_refused_non_streamed_anthropic_attempt_is_not_a_request(
    sim: Simulator, otel: Otel, sync_clients: list[AsyncClient]
) -> None:
    """pydantic-ai's non-streamed Anthropic run with ``max_tokens=64000``: each HTTP request one span and one count."""
    run = sync_agent(sim, "anthropic.messages", sync_clients).run_sync(
        PROMPT, message_history=history(HISTORIES["late_result"]), model_settings={"max_tokens": 64000}
    )
    assert run.output == ANSWER
    assert [r.body.get("stream") for r in sim.requests if isinstance(r.body, dict)] == [True, True]
    assert otel.events(names.EVENT_REPAIR), "the history reached otel-toolturn broken"
    assert_traffic(sim, otel, lane="anthropic.messages", requests=2)


def test_a_run_caching_its_last_message_takes_the_digests_of_the_messages_before_it(
    sim: Simulator, otel: Otel, sync_clients: list[AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anthropic, ``anthropic_cache_messages``: the cache mark leaves the last message; only it and the new digested."""
    digested: list[object] = []

    def digest(message: object) -> bytes:
        digested.append(message)
        return compose.message_digest(message)

    monkeypatch.setattr(_digests, "message_digest", digest)
    rounds = range(_digests.FEW // 2 + 2)
    steps = [step for n in rounds for step in (User(text=f"question {n}"), Text(text=f"answer {n}"))]
    run = sync_agent(sim, "anthropic.messages", sync_clients).run_sync(
        PROMPT, message_history=history(steps), model_settings=AnthropicModelSettings(anthropic_cache_messages=True)
    )
    assert run.output == ANSWER
    first, second = (r.body["messages"] for r in sim.requests if isinstance(r.body, dict))
    assert "cache_control" in first[-1]["content"][-1]
    assert "cache_control" not in second[len(first) - 1]["content"][-1]  # the mark moved on: the message changed
    # the first request cold; the second: its first (to find the first request), the changed one and the two new
    assert len(digested) == len(first) + 1 + 1 + 2
    assert_traffic(sim, otel, lane="anthropic.messages", requests=2)
