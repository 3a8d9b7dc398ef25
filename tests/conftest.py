"""Fixtures every test package shares."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from otel_toolturn.simulator import Simulator


@pytest.fixture
def sim() -> Iterator[Simulator]:
    """A provider simulator of the test's own, serving on loopback, stopped after it."""
    with Simulator() as simulator:
        yield simulator
