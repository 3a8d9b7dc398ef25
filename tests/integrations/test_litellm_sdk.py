"""Through LiteLLM, against the simulator: every entry point goes out repaired and recorded once per request."""

from __future__ import annotations

import itertools
import re
from typing import Final

import pytest

from otel_toolturn import validate
from otel_toolturn.simulator import Simulator
from tests.instrument.conftest import Otel
from tests.integrations.conftest import settle, settle_async
from tests.integrations.litellm_calls import BREAKS, CALLS, Call, litellm, send_async, send_sync
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


async def _send(sim: Simulator, call: Call, brk: str, *, stream: bool, otel: Otel | None = None) -> None:
    if call.is_async:
        await send_async(sim, call, BREAKS[brk], stream=stream)
        if otel is not None:
            await settle_async(otel, 1)
    else:
        send_sync(sim, call, BREAKS[brk], stream=stream)
        if otel is not None:
            settle(otel, 1)


@pytest.mark.parametrize(("call", "brk", "stream"), CASES)
async def test_the_provider_receives_a_valid_request_recorded_once(
    instrumented: Otel, sim: Simulator, call: Call, brk: str, stream: bool
) -> None:
    """A broken transcript through LiteLLM reaches the provider valid; one span with its repairs; one request."""
    await _send(sim, call, brk, stream=stream, otel=instrumented)
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
    broken = validate(build(call.shape, BREAKS[brk]), lane=call.shape) != []
    assert bool([e for e in span.events if e.name == "toolturn.repair"]) == broken
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
