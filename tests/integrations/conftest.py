"""Fixtures for LiteLLM against the simulator: the simulator, the instrumentation on, and waiting for a span.

LiteLLM ends a streamed call from its own callback threads, after the caller has read the stream;
``settle``/``settle_async`` poll for the span (a bound on the wait, not a timing check).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Final

import pytest

from otel_toolturn.instrument import Options, ToolTurnInstrumentor
from tests.instrument.conftest import Otel, each_span_ended_once, make_otel

SETTLE_ROUNDS: Final = 500
"""Polls (10 ms apart) for LiteLLM's callback threads to end a streamed call's span; a bound, not a timing check."""


@pytest.fixture
def instrumented(caplog: pytest.LogCaptureFixture) -> Iterator[Otel]:
    """otel-toolturn instrumented (the ``litellm`` provider on) into in-memory providers; removed afterwards."""
    otel = make_otel()
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(
        options=Options(),
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        logger_provider=otel.logger_provider,
    )
    with each_span_ended_once(caplog):
        yield otel
        instrumentor.uninstrument()


def settle(otel: Otel, count: int) -> None:
    """Wait (bounded) until ``count`` call spans have ended."""
    for _ in range(SETTLE_ROUNDS):
        if len(otel.call_spans()) >= count:
            return
        time.sleep(0.01)


async def settle_async(otel: Otel, count: int) -> None:
    """``settle`` without blocking the event loop LiteLLM's async callbacks run on."""
    for _ in range(SETTLE_ROUNDS):
        if len(otel.call_spans()) >= count:
            return
        await asyncio.sleep(0.01)
