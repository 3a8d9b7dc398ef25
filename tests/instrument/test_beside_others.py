"""Beside another GenAI instrumentation, in either order: one inference span per call, the repair on it.

The instrumentations users run beside otel-toolturn: the official ``opentelemetry-instrumentation-genai-openai``
(its span current), OpenLLMetry's ``opentelemetry-instrumentation-openai`` (current) and
``opentelemetry-instrumentation-anthropic`` (started, never made current), and the official
``opentelemetry-instrumentation-botocore`` (its bedrock-runtime extension's ``chat`` span, current, for boto3's
``converse`` and ``converse_stream`` against the simulator). Instrumented first, theirs wraps inside ours and
starts its span while the request is sent; instrumented last, it wraps outside and starts its span before the call.
aiobotocore's client, which the botocore instrumentation does not reach, gets otel-toolturn's one span beside it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any, Final

import pytest
from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor
from opentelemetry.instrumentation.botocore import BotocoreInstrumentor
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor as OfficialOpenAIInstrumentor
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.instrumentation.openai import OpenAIInstrumentor as OpenLLMetryOpenAIInstrumentor
from opentelemetry.trace import SpanKind

from otel_toolturn.instrument import Options, ToolTurnInstrumentor, names
from otel_toolturn.simulator import Simulator
from tests.bedrock_wire import BROKEN, MODEL, aio_bedrock_client, bedrock_client
from tests.instrument.conftest import Otel, each_span_ended_once
from tests.instrument.wire import Wire

pytestmark = pytest.mark.filterwarnings(
    # OpenLLMetry's openai instrumentation defines a pydantic model with a class-based config (its warning, not ours).
    "ignore:Support for class-based `config` is deprecated:pydantic.warnings.PydanticDeprecatedSince20"
)

_TOOL_USE: Final = {"type": "tool_use", "id": "c1", "name": "f", "input": {}}
_CALL: Final = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}

OTHERS: Final[dict[str, tuple[Callable[[], Any], str]]] = {
    "genai-openai": (OfficialOpenAIInstrumentor, "openai"),
    "openllmetry-openai": (OpenLLMetryOpenAIInstrumentor, "openai"),
    "openllmetry-anthropic": (AnthropicInstrumentor, "anthropic"),
    "botocore": (BotocoreInstrumentor, "bedrock"),
}
"""Each instrumentation beside which otel-toolturn runs: its instrumentor, and the SDK it wraps."""


@pytest.fixture
def beside(otel: Otel, caplog: pytest.LogCaptureFixture) -> Iterator[Callable[[str, bool], None]]:
    """Instrument otel-toolturn and another instrumentation into ``otel``, in the order asked; both undone after."""
    done: list[BaseInstrumentor] = []

    def go(other: str, ours_first: bool) -> None:
        ours = ToolTurnInstrumentor()
        theirs = OTHERS[other][0]()
        order = [ours, theirs] if ours_first else [theirs, ours]
        for instrumentor in order:
            extra = {"options": Options()} if instrumentor is ours else {}
            instrumentor.instrument(
                tracer_provider=otel.tracer_provider,
                meter_provider=otel.meter_provider,
                logger_provider=otel.logger_provider,
                **extra,
            )
            done.append(instrumentor)

    with each_span_ended_once(caplog):
        yield go
        for instrumentor in reversed(done):
            instrumentor.uninstrument()
        _unwrap_leftovers()


def _unwrap_leftovers() -> None:
    """Undo what another instrumentation's ``uninstrument`` left wrapped in the SDKs, so no later test runs it.

    OpenLLMetry's openai instrumentation does not unwrap ``Completions.create`` of the openai 3 layout.
    """
    for name, module in list(sys.modules.items()):
        if not name.startswith(("openai.", "anthropic.")) or module is None:
            continue
        for owner in list(vars(module).values()):
            if not isinstance(owner, type) or owner.__module__ != name:
                continue
            for attribute, value in list(vars(owner).items()):
                wrapper = getattr(value, "_self_wrapper", None)
                if getattr(wrapper, "__module__", "").startswith("opentelemetry.instrumentation."):
                    setattr(owner, attribute, value.__wrapped__)


def _call(sdk: str, *, stream: bool, sim: Simulator) -> None:
    """One call with an interrupted tool call, read to its end (boto3's against the simulator, answered)."""
    wire = Wire()
    if sdk == "bedrock":
        client = bedrock_client(sim.base_url)
        if stream:
            assert list(client.converse_stream(modelId=MODEL, messages=list(BROKEN["interrupted"]))["stream"])
        else:
            assert client.converse(modelId=MODEL, messages=list(BROKEN["interrupted"]))["output"]["message"]
        assert sim.requests[-1].status == 200
        return
    if sdk == "openai":
        messages = [{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": [_CALL]}]
        response = wire.openai().chat.completions.create(model="gpt-4.1-mini", messages=messages, stream=stream)
    else:
        messages = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [_TOOL_USE]}]
        response = wire.anthropic().messages.create(model="claude-x", max_tokens=10, messages=messages, stream=stream)
    if stream:
        for _ in response:
            pass


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("ours_first", [True, False], ids=["otel-toolturn-first", "otel-toolturn-last"])
@pytest.mark.parametrize("other", sorted(OTHERS))
def test_one_inference_span_per_call_with_the_repair_on_it(
    beside: Callable[[str, bool], None], otel: Otel, sim: Simulator, other: str, *, ours_first: bool, stream: bool
) -> None:
    """Exactly one CLIENT inference span for the call, the other instrumentation's, carrying the lane and the repair."""
    beside(other, ours_first)
    _call(OTHERS[other][1], stream=stream, sim=sim)
    (span,) = [s for s in otel.spans() if s.kind is SpanKind.CLIENT]
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name != names.INSTRUMENTATION_NAME
    assert span.attributes is not None
    assert span.attributes[names.LANE] in {"openai.chat_completions", "anthropic.messages", "bedrock.converse"}
    assert [e.attributes[names.REPAIR_FORM] for e in span.events if e.name == names.EVENT_REPAIR and e.attributes] == [
        "missing_result"
    ]


@pytest.mark.parametrize("other", sorted(OTHERS))
def test_two_calls_in_a_row_each_get_their_own_span(
    beside: Callable[[str, bool], None], otel: Otel, sim: Simulator, other: str
) -> None:
    """A span another instrumentation noted for one call is never taken by the next: two calls, two spans."""
    beside(other, True)
    _call(OTHERS[other][1], stream=True, sim=sim)
    _call(OTHERS[other][1], stream=False, sim=sim)
    spans = [s for s in otel.spans() if s.kind is SpanKind.CLIENT]
    assert len(spans) == 2
    assert all(s.attributes and names.LANE in s.attributes for s in spans)
    assert all(len([e for e in s.events if e.name == names.EVENT_REPAIR]) == 1 for s in spans)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("ours_first", [True, False], ids=["otel-toolturn-first", "otel-toolturn-last"])
async def test_an_aiobotocore_call_beside_the_botocore_instrumentation_gets_one_span(
    beside: Callable[[str, bool], None], otel: Otel, sim: Simulator, *, ours_first: bool, stream: bool
) -> None:
    """The async Bedrock client beside the botocore instrumentation, either order: one CLIENT span, repaired."""
    beside("botocore", ours_first)
    async with aio_bedrock_client(sim.base_url) as client:
        if stream:
            response = await client.converse_stream(modelId=MODEL, messages=list(BROKEN["interrupted"]))
            assert [event async for event in response["stream"]]
        else:
            assert (await client.converse(modelId=MODEL, messages=list(BROKEN["interrupted"])))["output"]["message"]
    assert [r.status for r in sim.requests] == [200]
    (span,) = [s for s in otel.spans() if s.kind is SpanKind.CLIENT]
    assert span.attributes is not None
    assert span.attributes[names.LANE] == "bedrock.converse"
    assert [e.attributes[names.REPAIR_FORM] for e in span.events if e.name == names.EVENT_REPAIR and e.attributes] == [
        "missing_result"
    ]
