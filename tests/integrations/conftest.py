"""Fixtures for LiteLLM against the simulator: the instrumentation on, into in-memory providers.

A LiteLLM call's span ends with the call (its return, its exception, its stream's end), so the
tests read it as soon as the call returns, never waiting for LiteLLM's callbacks.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from otel_toolturn.instrument import Options, ToolTurnInstrumentor
from tests.instrument.conftest import Otel, each_span_ended_once, make_otel


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
