"""Through LiteLLM, against the simulator: every entry point goes out repaired and recorded once per request.

Each call's span has ended, and been exported, by the time the call returns (or its stream ends).
"""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import Any, Final

import pytest

from otel_toolturn import ensure_tool_turn_invariants, validate
from otel_toolturn.instrument._record import CallRecord
from otel_toolturn.integrations.litellm import LOGGER
from otel_toolturn.simulator import Simulator
from tests.instrument.conftest import Otel
from tests.integrations.litellm_calls import BREAKS, CALLS, Call, litellm, request_kwargs, send_async, send_sync
from tests.transcripts import build

pytestmark = [
    # LiteLLM's own: its Responses stream serialises usage through a mismatched pydantic model
    pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning"),
    # LiteLLM's own: pydantic notes its ReadOnly TypedDict items when it builds their schemas
    pytest.mark.filterwarnings("ignore:Items? .* using the `ReadOnly` qualifier:UserWarning"),
]

CASES: Final = [
    pytest.param(call, brk, stream, id=f"{call}-{brk}-{'stream' if stream else 'plain'}")
    for call, brk, stream in itertools.product(CALLS, BREAKS, (False, True))
]
REFUSED: Final = [
    pytest.param(call, brk, stream, id=f"{call}-{brk}-{'stream' if stream else 'plain'}")
    for call, brk, stream in itertools.product(CALLS, BREAKS, (False, True))
    if validate(build(call.shape, BREAKS[brk]), lane=call.shape)
]
"""The cases whose transcript the provider refuses as written (a late result stands in Responses)."""


async def _send(sim: Simulator, call: Call, brk: str, *, stream: bool) -> None:
    if call.is_async:
        await send_async(sim, call, BREAKS[brk], stream=stream)
    else:
        send_sync(sim, call, BREAKS[brk], stream=stream)


@pytest.mark.parametrize(("call", "brk", "stream"), CASES)
async def test_the_provider_receives_a_valid_request_recorded_once(
    instrumented: Otel, sim: Simulator, call: Call, brk: str, stream: bool
) -> None:
    """A broken transcript through LiteLLM reaches the provider valid; one span with the law's repairs; one request."""
    await _send(sim, call, brk, stream=stream)
    sent = sim.requests[-1]
    assert sent.status == 200, sent.error
    assert isinstance(sent.body, dict)
    key = "input" if call.wire == "openai.responses" else "messages"
    assert validate(sent.body[key], lane=call.wire) == []
    spans = instrumented.call_spans()
    assert len(spans) == 1
    (span,) = spans
    assert span.attributes is not None
    assert span.attributes["toolturn.lane"] == call.wire
    # a late result after an answer is repaired in every lane (delivered where it stands), though Responses accepts it
    repaired = ensure_tool_turn_invariants(build(call.shape, BREAKS[brk]), lane=call.shape).repairs != ()
    assert bool([e for e in span.events if e.name == "toolturn.repair"]) == repaired
    assert instrumented.total("toolturn.requests") == len(sim.requests) == 1
    assert instrumented.total("toolturn.requests", toolturn__lane=call.wire) == 1


@pytest.mark.parametrize(("call", "brk", "stream"), REFUSED)
async def test_without_init_the_provider_refuses_the_same_call(
    sim: Simulator, call: Call, brk: str, stream: bool
) -> None:
    """Uninstrumented, the same LiteLLM call meets the provider's 400: the repair is otel-toolturn's."""
    assert not [cb for cb in litellm.callbacks if type(cb).__name__ == "ToolTurnLogger"]
    with pytest.raises(litellm.exceptions.BadRequestError):
        await _send(sim, call, brk, stream=stream)
    assert sim.requests[-1].status == 400


RUNS: Final = 5
"""Calls per entry point and mode in the tests below (``python -m bench.litellm_asyncio`` makes 1,000)."""


def _modes(calls: list[Call]) -> list[Any]:
    return [
        pytest.param(call, stream, id=f"{call}-{'stream' if stream else 'plain'}")
        for call, stream in itertools.product(calls, (False, True))
    ]


@pytest.mark.parametrize(("call", "stream"), _modes([c for c in CALLS if c.is_async]))
def test_each_async_call_in_its_own_event_loop_exports_its_span_before_the_next(
    instrumented: Otel, sim: Simulator, call: Call, stream: bool
) -> None:
    """An async call in its own ``asyncio.run`` (a script's ``main``) has its span exported when the loop ends."""
    for done in range(1, RUNS + 1):
        asyncio.run(send_async(sim, call, BREAKS["missing"], stream=stream))
        assert len(instrumented.call_spans()) == done
        assert len(LOGGER.calls) == 0
    assert instrumented.total("toolturn.requests") == len(sim.requests) == RUNS


@pytest.mark.parametrize(("call", "stream"), _modes([c for c in CALLS if not c.is_async]))
async def test_each_sync_call_exports_its_span_when_it_returns(
    instrumented: Otel, sim: Simulator, call: Call, stream: bool
) -> None:
    """A sync call (a stream: read to its end) has its span exported by the time it returns, none left open."""
    for done in range(1, RUNS + 1):
        send_sync(sim, call, BREAKS["missing"], stream=stream)
        assert len(instrumented.call_spans()) == done
        assert len(LOGGER.calls) == 0
    assert instrumented.total("toolturn.requests") == len(sim.requests) == RUNS


async def test_a_stream_closed_early_ends_its_span_at_close(instrumented: Otel, sim: Simulator) -> None:
    """A LiteLLM stream read for one chunk and closed: its span has ended, as closed early, when ``aclose`` returns."""
    (call,) = [c for c in CALLS if c.entry == "acompletion" and c.provider == "openai"]
    stream: Any = await litellm.acompletion(**request_kwargs(sim, call, BREAKS["missing"], stream=True))
    await stream.__anext__()
    assert instrumented.call_spans() == []
    await stream.aclose()
    (span,) = instrumented.call_spans()
    assert span.attributes is not None
    assert span.attributes["toolturn.stream.closed_early"] is True


def test_a_whole_responses_answer_is_checked_from_the_provider_json(instrumented: Otel, sim: Simulator) -> None:
    """A plain ``responses`` call's span carries the provider's own response id and usage, not LiteLLM's rewrite."""
    (call,) = [c for c in CALLS if c.entry == "responses"]
    send_sync(sim, call, BREAKS["missing"], stream=False)
    (span,) = instrumented.call_spans()
    assert span.attributes is not None
    assert re.fullmatch(r"resp_\d{4}", str(span.attributes["gen_ai.response.id"]))
    tokens = span.attributes["gen_ai.usage.input_tokens"]
    assert isinstance(tokens, int)
    assert tokens > 0


async def test_a_failing_response_check_is_counted_and_the_call_returns_its_answer(
    instrumented: Otel, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The response check raising as an Anthropic-native call returns: LiteLLM's answer is returned, the span ended."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise ValueError("refused")

    monkeypatch.setattr(CallRecord, "response", refuse)
    (call,) = [c for c in CALLS if c.entry == "amessages"]
    answer: Any = await send_async(sim, call, BREAKS["missing"], stream=False)
    assert answer["type"] == "message"
    assert len(instrumented.call_spans()) == 1
    assert instrumented.total("toolturn.instrumentation.errors", toolturn__error__stage="response") == 1
