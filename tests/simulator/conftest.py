"""The simulator a test talks to, and the real SDK clients pointed at it (no retries)."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest
from google import genai

from otel_toolturn.simulator import Simulator
from tests.simulator.sim_wire import gemini_client


@pytest.fixture
def a_client(sim: Simulator) -> Iterator[anthropic.Anthropic]:
    """The anthropic SDK client on ``sim``."""
    with anthropic.Anthropic(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        yield client


@pytest.fixture
def o_client(sim: Simulator) -> Iterator[openai.OpenAI]:
    """The openai SDK client on ``sim``."""
    with openai.OpenAI(base_url=sim.openai_base_url, api_key="test-key", max_retries=0) as client:
        yield client


@pytest.fixture
def g_client(sim: Simulator) -> Iterator[genai.Client]:
    """The google-genai client (Developer API) on ``sim``; ``client.aio`` users close it with ``aclose``."""
    with gemini_client(sim.base_url) as client:
        yield client
