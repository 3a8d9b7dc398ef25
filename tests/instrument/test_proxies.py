"""``watch_steps`` and ``watch_async_steps``: closing the watched generator closes the SDK's, recorded or not.

The SDK's generator holds its HTTP response open until it is closed; ``yield from`` closes the inner
generator when the outer one is closed, and both watches do so at any step, sync and async alike.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Final, cast

import pytest

from otel_toolturn.instrument._pending import PendingCall
from otel_toolturn.instrument._proxies import watch_async_steps, watch_steps

CHUNKS: Final = ("a", "b", "c")

each_call_and_step: Final = pytest.mark.parametrize(
    ("recorded", "read"),
    [(True, 1), (True, 2), (False, 1), (False, 2)],
    ids=["recorded-at-the-first-chunk", "recorded-past-it", "unrecorded-at-the-first-chunk", "unrecorded-past-it"],
)
"""Close a recorded call and an unrecorded one, at the first chunk (its first step) and past it."""


class _Record:
    """A stand-in ``CallRecord``: what the watch told it, in order."""

    def __init__(self) -> None:
        self.told: list[str] = []

    def start_stream(self) -> None:
        self.told.append("start_stream")

    def feed(self, event: object) -> None:
        self.told.append(f"feed {event}")

    def finish(self, error: BaseException | None = None, *, caller_closed: bool = False) -> None:
        self.told.append(f"finish {error!r} caller_closed={caller_closed}")


class _Call:
    """A stand-in ``PendingCall`` the SDK sent at its first step; ``record`` is ``None`` for a call not recorded."""

    def __init__(self, record: _Record | None) -> None:
        self.record = record

    def sending(self) -> AbstractContextManager[None]:
        return nullcontext()

    def failed(self, error: BaseException) -> None:
        raise AssertionError(error)


def _told(record: _Record | None, read: int) -> list[str] | None:
    """What a recorded call is told when the caller closes it after ``read`` chunks; ``None`` when unrecorded."""
    if record is None:
        return None
    return ["start_stream", *(f"feed {chunk}" for chunk in CHUNKS[:read]), "finish None caller_closed=True"]


def _sdk_steps(closed: list[str]) -> Iterator[str]:
    """An SDK generator of ``CHUNKS`` that notes in ``closed`` when it is closed."""
    try:
        yield from CHUNKS
    except GeneratorExit:
        closed.append("closed")
        raise


async def _sdk_async_steps(closed: list[str]) -> AsyncIterator[str]:
    """An SDK async generator of ``CHUNKS`` that notes in ``closed`` when it is closed."""
    try:
        for chunk in CHUNKS:
            yield chunk
    except GeneratorExit:
        closed.append("closed")
        raise


@each_call_and_step
def test_closing_what_watch_steps_returns_closes_the_sdks_generator(*, recorded: bool, read: int) -> None:
    """``close()`` after ``read`` chunks closes the SDK's generator; a recorded call ends as the caller's stop."""
    closed: list[str] = []
    record = _Record() if recorded else None
    steps = _sdk_steps(closed)  # held here: closed by the watch, not by being collected
    watched = watch_steps(steps, cast("PendingCall", _Call(record)))
    assert [next(watched) for _ in range(read)] == list(CHUNKS[:read])
    cast("Generator[object]", watched).close()
    assert closed == ["closed"]
    assert (record and record.told) == _told(record, read)


@each_call_and_step
async def test_closing_what_watch_async_steps_returns_closes_the_sdks_generator(*, recorded: bool, read: int) -> None:
    """``aclose()`` after ``read`` chunks closes the SDK's async generator; a recorded call ends, the caller's stop."""
    closed: list[str] = []
    record = _Record() if recorded else None
    steps = _sdk_async_steps(closed)  # held here: closed by the watch, not by being collected
    watched = watch_async_steps(steps, cast("PendingCall", _Call(record)))
    assert [await anext(watched) for _ in range(read)] == list(CHUNKS[:read])
    await watched.aclose()
    assert closed == ["closed"]
    assert (record and record.told) == _told(record, read)
