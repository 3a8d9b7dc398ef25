"""The checks every SDK's instrumentation test makes against the simulator, written once.

A test drives its own SDK and states what is particular to it; these say what holds for every SDK: the
simulator received one request, valid in the lane (and dialect); the caller's list is the one it wrote; the
call is one span carrying its repairs, counted once; a retried call is still one span; observe mode records the
repair on the span of the refused call; ``uninstrument()`` puts back the very objects it replaced.

``repaired_and_served`` and ``async_repaired_and_served`` make the test every SDK's file has, once per broken
history, whole and streamed: instrumented, a copy of the history goes out through the SDK and is served. The file
gives only what is its SDK's own: how to send (``Send``: its client, its methods, the objects it returns) and what
the served request and span say (``Served``)::

    test_the_async_client_is_repaired_and_served = checks.async_repaired_and_served(BROKEN, _send_async, _served)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final, Protocol

import pytest

from otel_toolturn import Dialect, validate
from otel_toolturn.instrument import ToolTurnInstrumentor, names
from otel_toolturn.simulator import Simulator
from otel_toolturn.simulator._server import Answer, RecordedRequest
from tests.instrument.conftest import Instrument, Otel

CHAT: Final = "openai.chat_completions"

whole_and_streamed: Final = pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
"""Run a test once on the whole response and once on the stream (``streamed``)."""


class Send(Protocol):
    """Sends ``messages`` through the SDK (its stream if ``streamed``) and checks the SDK's own objects came back."""

    def __call__(self, sim: Simulator, messages: list[Any], *, streamed: bool) -> None: ...


class SendAsync(Protocol):
    """``Send`` through the SDK's async client."""

    def __call__(self, sim: Simulator, messages: list[Any], *, streamed: bool) -> Awaitable[None]: ...


class Served(Protocol):
    """Checks that the simulator served ``messages`` (a copy of the history ``case``) repaired, and the one span."""

    def __call__(self, sim: Simulator, otel: Otel, case: str, messages: list[Any], *, streamed: bool) -> None: ...


def repaired_and_served(broken: Mapping[str, list[Any]], send: Send, served: Served) -> Callable[..., None]:
    """The test that each broken history, sent through the SDK with ``send`` while instrumented, is served repaired."""

    @whole_and_streamed
    @pytest.mark.parametrize("case", sorted(broken))
    def test(instrument: Instrument, sim: Simulator, case: str, *, streamed: bool) -> None:
        """Instrumented, the repaired history is served; the SDK's own objects come back; one span."""
        messages = list(broken[case])
        otel = instrument()
        send(sim, messages, streamed=streamed)
        served(sim, otel, case, messages, streamed=streamed)

    return test


def async_repaired_and_served(
    broken: Mapping[str, list[Any]], send: SendAsync, served: Served
) -> Callable[..., Awaitable[None]]:
    """``repaired_and_served`` through the SDK's async client."""

    @whole_and_streamed
    @pytest.mark.parametrize("case", sorted(broken))
    async def test(instrument: Instrument, sim: Simulator, case: str, *, streamed: bool) -> None:
        """Instrumented, the async client serves the repaired history; the SDK's own objects come back; one span."""
        otel, messages = instrument(), list(broken[case])
        await send(sim, messages, streamed=streamed)
        served(sim, otel, case, messages, streamed=streamed)

    return test


def served_request(
    requests: Sequence[RecordedRequest],
    messages: list[Any],
    written: list[Any],
    *,
    path: str | None = None,
    dialect: Dialect | None = None,
) -> list[Any]:
    """The one request (to ``path``) was served, its messages valid Chat (in ``dialect``); ``messages`` as ``written``.

    Returns the messages sent.
    """
    (request,) = requests
    assert request.status == 200
    assert path is None or request.path == path
    sent = request.body["messages"]  # type: ignore[index]
    assert validate(sent, lane=CHAT, dialect=dialect) == []
    assert messages == written  # the caller's list is never changed
    assert isinstance(sent, list)
    return sent


def one_repaired_span(
    otel: Otel,
    *,
    provider: str,
    forms: Sequence[str],
    lane: str = CHAT,
    finish: str | None = "stop",
    streamed: bool | None = None,
) -> Mapping[str, Any]:
    """The one call span: ``lane``, ``provider``, ``forms`` as its repairs (attribute and events, in order).

    ``finish``: the reply's finish reason was read; ``streamed``: the span says whether the call streamed, and not torn.
    The call is counted once under ``lane`` and ``provider``; nothing failed inside the instrumentation.
    Returns the span's attributes.
    """
    (span,) = otel.call_spans()
    attributes = span.attributes or {}
    assert attributes[names.LANE] == lane
    assert attributes[names.PROVIDER] == provider
    assert attributes[names.REPAIRS_FORMS] == tuple(forms)
    assert [(e.attributes or {})[names.REPAIR_FORM] for e in span.events if e.name == names.EVENT_REPAIR] == list(forms)
    if finish is not None:
        assert attributes[names.GEN_AI_RESPONSE_FINISH_REASONS] == (finish,)  # the response (or stream) was read
    if streamed is not None:
        assert attributes[names.GEN_AI_REQUEST_STREAM] is streamed
        assert names.STREAM_TORN not in attributes
    assert otel.total(names.REQUESTS.name, toolturn__lane=lane, gen_ai__provider__name=provider) == 1
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0
    return attributes


def busy_once(sim: Simulator, monkeypatch: pytest.MonkeyPatch, answer: Answer) -> list[str]:
    """``sim`` answers its first request with ``answer`` (a 500), the others as usual; returns the paths asked."""
    served = sim.answer
    attempts: list[str] = []

    def once(path: str, raw: bytes) -> Answer:
        attempts.append(path)
        return answer if len(attempts) == 1 else served(path, raw)

    monkeypatch.setattr(sim, "answer", once)
    return attempts


def retried_as_one_call(otel: Otel, attempts: Sequence[str]) -> None:
    """Two requests went out for the call; one span, one count and one repair recorded."""
    assert len(attempts) == 2
    assert len(otel.call_spans()) == 1
    assert otel.total(names.REQUESTS.name, toolturn__lane=CHAT) == 1
    assert len(otel.events(names.EVENT_REPAIR)) == 1


def observed_refusal(otel: Otel, error_type: str, form: str = "missing_result") -> None:
    """Observe mode: the one span names the SDK's ``error_type`` and the repair ``form`` that was not applied."""
    (span,) = otel.call_spans()
    assert (span.attributes or {})[names.ERROR_TYPE] == error_type
    assert [e[names.REPAIR_FORM] for e in otel.events(names.EVENT_REPAIR)] == [form]


@contextmanager
def restored_by_uninstrument(
    instrument: Instrument, patched: Callable[[], list[object]], **options: object
) -> Iterator[None]:
    """Instrument (with ``options``) and uninstrument: each of ``patched()`` is replaced, then the very object again.

    The call made inside the block, after ``uninstrument()``, leaves no span.
    """
    before = patched()
    otel = instrument(**options)
    assert all(a is not b for a, b in zip(before, patched(), strict=True))
    ToolTurnInstrumentor().uninstrument()
    assert all(a is b for a, b in zip(before, patched(), strict=True))
    yield
    assert otel.call_spans() == []


def refused_request(requests: Sequence[RecordedRequest], written: list[Any] | None = None) -> None:
    """The one request was refused with a 400; its messages exactly as ``written``, when given."""
    (request,) = requests
    assert request.status == 400
    if written is not None:
        assert request.body["messages"] == written  # type: ignore[index]
