"""The simulator a test talks to, and the real SDK clients pointed at it (no retries)."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest

from otel_toolturn.simulator import Simulator


@pytest.fixture
def sim() -> Iterator[Simulator]:
    """A simulator of the test's own, stopped after it."""
    with Simulator() as simulator:
        yield simulator


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
