"""Fixtures: the simulator, ``otel_toolturn.init`` into in-memory providers, and the loop ``run_sync`` runs on."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Protocol

import pytest

import otel_toolturn
from tests.instrument.conftest import Otel, each_span_ended_once, make_otel

pytest.register_assert_rewrite("tests.frameworks.traffic")


@pytest.fixture
def otel(caplog: pytest.LogCaptureFixture) -> Iterator[Otel]:
    """``otel_toolturn.init`` with in-memory providers; ``shutdown`` afterwards; no span ended twice."""
    providers = make_otel()
    otel_toolturn.init(
        tracer_provider=providers.tracer_provider,
        meter_provider=providers.meter_provider,
        logger_provider=providers.logger_provider,
    )
    with each_span_ended_once(caplog):
        yield providers
        otel_toolturn.shutdown()


class AsyncClient(Protocol):
    """An SDK's async client: closed by awaiting ``close``."""

    async def close(self) -> None: ...


@pytest.fixture
def sync_clients() -> Iterator[list[AsyncClient]]:
    """A current event loop for a framework's ``run_sync`` (which runs on it) and the async clients made for it.

    Afterwards the clients are closed on that loop, then the loop is closed and unset.
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    clients: list[AsyncClient] = []
    yield clients
    for client in clients:
        loop.run_until_complete(client.close())
    loop.close()
    asyncio.set_event_loop(None)
