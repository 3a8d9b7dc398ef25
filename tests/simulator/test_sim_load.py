"""The simulator under load: 200 concurrent clients, every call answered, none refused a connection."""

from __future__ import annotations

import asyncio
from typing import Final

import anthropic
import openai

from otel_toolturn.simulator import Simulator

TASKS: Final = 200
CALLS_PER_TASK: Final = 5


async def _one(oa: openai.AsyncOpenAI, an: anthropic.AsyncAnthropic, *, chat: bool) -> str:
    """One call: ``ok``, or the class name of the connection error it met."""
    try:
        if chat:
            await oa.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        else:
            await an.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    except (openai.APIConnectionError, anthropic.APIConnectionError) as exc:
        return type(exc).__name__
    return "ok"


async def _calls(sim: Simulator, task: int) -> list[str]:
    """One task's calls in turn, alternating lanes."""
    async with (
        openai.AsyncOpenAI(base_url=sim.openai_base_url, api_key="k", max_retries=0) as oa,
        anthropic.AsyncAnthropic(base_url=sim.base_url, api_key="k", max_retries=0) as an,
    ):
        return [await _one(oa, an, chat=bool((task + n) % 2)) for n in range(CALLS_PER_TASK)]


async def test_two_hundred_concurrent_tasks_all_connect() -> None:
    """200 asyncio tasks of 5 calls (AsyncOpenAI, AsyncAnthropic, no retries) on one simulator: no connection fails."""
    with Simulator() as sim:
        results = await asyncio.gather(*(_calls(sim, task) for task in range(TASKS)))
        served = len(sim.requests)
    outcomes = [outcome for task in results for outcome in task]
    assert len(outcomes) == TASKS * CALLS_PER_TASK
    assert [o for o in outcomes if o != "ok"] == []
    assert served == TASKS * CALLS_PER_TASK
