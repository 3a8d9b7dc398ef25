"""pydantic-ai's Groq and Mistral models against the simulator: broken ``message_history`` through their own SDKs.

``GroqModel`` sends with the groq SDK (``AsyncGroq``'s ``chat.completions.create``), ``MistralModel`` with the
mistralai SDK (``Chat.complete_async`` / ``stream_async``, typed messages), each pointed at the simulator:
Groq at its ``/openai/v1`` path, Mistral at its own root, judged in the ``mistral`` dialect. Each run answers
a call of the tool and then the answer (two requests). pydantic-ai closes a call left without its result
and drops a result whose call is gone itself (and gives Mistral nine-character ids); a late result behind an
answer reaches the wire broken. Without ``init()`` the provider refuses it in its words (Groq: Chat
Completions'; Mistral: ``Not the same number of function calls and responses``, mistralai/client-python#234,
camel-ai/camel#1467); with it every request is served valid, each one span of the provider carrying the repair.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Final, Literal

import groq
import httpx2
import pytest
from mistralai.client import Mistral
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.models import Model
from pydantic_ai.models.groq import GroqModel
from pydantic_ai.models.mistral import MistralModel
from pydantic_ai.providers.groq import GroqProvider
from pydantic_ai.providers.mistral import MistralProvider
from pydantic_ai.run import AgentRunResult

from otel_toolturn import Dialect
from otel_toolturn.instrument import names
from otel_toolturn.simulator import Simulator
from tests.frameworks.breaks import ANSWER, BREAKS, HISTORIES, PROMPT, Break, agent_turns, read
from tests.frameworks.conftest import AsyncClient
from tests.frameworks.test_pydantic_ai import history
from tests.frameworks.traffic import assert_traffic
from tests.instrument.conftest import Otel

Provider = Literal["groq", "mistral"]
PROVIDERS: Final[tuple[Provider, ...]] = ("groq", "mistral")
LANE: Final = "openai.chat_completions"
DIALECT: Final[dict[Provider, Dialect | None]] = {"groq": None, "mistral": "mistral"}
PROVIDER_NAME: Final[dict[Provider, str]] = {"groq": "groq", "mistral": "mistral_ai"}
REFUSAL: Final[dict[Provider, str]] = {
    "groq": "An assistant message with 'tool_calls' must be followed by tool messages",
    "mistral": "Not the same number of function calls and responses",
}
"""Each provider's words for the late result, as the simulator answers them."""
LATE_REPAIRS: Final = ("missing_result", "late_result_in_place")
"""What otel-toolturn does to the late result: the call closed where it stood, the result delivered where it came."""


@dataclass(frozen=True)
class MistralClient:
    """A ``Mistral`` client on an async HTTP client of the test's own, closed by ``close`` as the other SDKs' are.

    The HTTP client is supplied, so the SDK's own finalizer leaves it alone (it would close one it made by
    running a new event loop whenever the SDK object is collected).
    """

    sdk: Mistral
    http: httpx2.AsyncClient

    async def close(self) -> None:
        await self.http.aclose()


def sdk_client(sim: Simulator, provider: Provider) -> groq.AsyncGroq | MistralClient:
    """The provider's SDK client on the simulator, no retries."""
    if provider == "groq":
        return groq.AsyncGroq(base_url=sim.base_url, api_key="test-key", max_retries=0)
    http = httpx2.AsyncClient()
    return MistralClient(Mistral(api_key="test-key", server_url=sim.mistral_base_url, async_client=http), http)


def model(client: groq.AsyncGroq | MistralClient) -> Model:
    """pydantic-ai's model of the client's provider."""
    if isinstance(client, groq.AsyncGroq):
        return GroqModel("llama-test", provider=GroqProvider(groq_client=client))
    return MistralModel("mistral-small-latest", provider=MistralProvider(mistral_client=client.sdk))


@asynccontextmanager
async def agent(sim: Simulator, provider: Provider) -> AsyncIterator[Agent[None, str]]:
    """An agent of ``provider`` with the one tool, its two replies queued; its client closed afterwards."""
    client = sdk_client(sim, provider)
    sim.enqueue(*agent_turns())
    try:
        yield Agent(model(client), tools=[read])
    finally:
        await client.close()


@pytest.fixture
def sync_agent(sim: Simulator, sync_clients: list[AsyncClient], provider: Provider) -> Agent[None, str]:
    """An agent of ``provider`` for ``run_sync``, its client closed on the run's loop afterwards."""
    client = sdk_client(sim, provider)
    sync_clients.append(client)
    sim.enqueue(*agent_turns())
    return Agent(model(client), tools=[read])


def assert_served(sim: Simulator, otel: Otel, provider: Provider, *, repairs: tuple[str, ...]) -> None:
    """Both requests valid in the provider's dialect, each one span of its provider with ``repairs`` on it."""
    assert_traffic(sim, otel, lane=LANE, requests=2, dialect=DIALECT[provider])
    spans = otel.call_spans()
    assert [(s.attributes or {})[names.PROVIDER] for s in spans] == [PROVIDER_NAME[provider]] * 2
    assert [(s.attributes or {}).get(names.REPAIRS_FORMS, ()) for s in spans] == [repairs] * 2
    for span in spans:
        forms = [(e.attributes or {})[names.REPAIR_FORM] for e in span.events if e.name == names.EVENT_REPAIR]
        assert tuple(forms) == repairs


@pytest.mark.parametrize("broken", BREAKS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_run_sync_sends_a_broken_history_valid(
    sim: Simulator, otel: Otel, sync_agent: Agent[None, str], provider: Provider, broken: Break
) -> None:
    """``run_sync`` with a broken history: both requests valid, each one span of the provider; the run result back."""
    result = sync_agent.run_sync(PROMPT, message_history=history(HISTORIES[broken]))
    assert isinstance(result, AgentRunResult)
    assert result.output == ANSWER
    assert_served(sim, otel, provider, repairs=LATE_REPAIRS if broken == "late_result" else ())


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_run_async_repairs_a_late_result(sim: Simulator, otel: Otel, provider: Provider) -> None:
    """``await run`` with a late result: both requests valid, each one span carrying the repair; the run result back."""
    async with agent(sim, provider) as runner:
        result = await runner.run(PROMPT, message_history=history(HISTORIES["late_result"]))
    assert result.output == ANSWER
    assert_served(sim, otel, provider, repairs=LATE_REPAIRS)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_run_stream_repairs_a_late_result(sim: Simulator, otel: Otel, provider: Provider) -> None:
    """``run_stream`` with a late result: both streamed requests valid, each one span with its repair; the output."""
    late = history(HISTORIES["late_result"])
    async with agent(sim, provider) as runner, runner.run_stream(PROMPT, message_history=late) as result:
        output = await result.get_output()
    assert output == ANSWER
    assert [r.body.get("stream") for r in sim.requests if isinstance(r.body, dict)] == [True, True]
    assert_served(sim, otel, provider, repairs=LATE_REPAIRS)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_without_init_the_provider_refuses_the_late_result(sim: Simulator, provider: Provider) -> None:
    """No ``init()``: the late result goes out as written; pydantic-ai raises the 400 in the provider's words."""
    async with agent(sim, provider) as runner:
        with pytest.raises(ModelHTTPError) as refused:
            await runner.run(PROMPT, message_history=history(HISTORIES["late_result"]))
    assert refused.value.status_code == 400
    assert REFUSAL[provider] in str(refused.value.body)
    assert [(r.lane, r.status) for r in sim.requests] == [(LANE, 400)]
    assert REFUSAL[provider] in str(sim.requests[0].error)
