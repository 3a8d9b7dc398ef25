"""The GenAI conventions' client metrics: once per call on a span of otel-toolturn's own, never on another's."""

from __future__ import annotations

from typing import Final

from opentelemetry.trace import SpanKind

from otel_toolturn.instrument import names
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.wire import Wire

MODEL: Final = "gpt-4.1-mini"
_MESSAGES: Final = [{"role": "user", "content": "go"}]


def _histogram(otel: Otel, name: str) -> list[tuple[dict[str, object], float]]:
    return otel.points(name)


def test_a_call_on_our_own_span_records_duration_and_tokens_by_type(instrument: Instrument) -> None:
    """One call: one duration point and an input and an output token point, with the call's conventions attributes."""
    otel = instrument()
    response = Wire().openai().chat.completions.create(model=MODEL, messages=_MESSAGES)
    (duration,) = _histogram(otel, names.CLIENT_OPERATION_DURATION.name)
    attributes, count = duration
    assert count == 1
    assert attributes[names.GEN_AI_OPERATION_NAME] == "chat"
    assert attributes[names.PROVIDER] == "openai"
    assert attributes[names.GEN_AI_REQUEST_MODEL] == MODEL
    assert attributes[names.GEN_AI_RESPONSE_MODEL] == response.model
    assert attributes[names.SERVER_ADDRESS]
    assert isinstance(attributes[names.SERVER_PORT], int)
    tokens = {a[names.GEN_AI_TOKEN_TYPE]: c for a, c in _histogram(otel, names.CLIENT_TOKEN_USAGE.name)}
    assert tokens == {"input": 1, "output": 1}
    assert response.usage is not None
    assert otel.total(names.CLIENT_TOKEN_USAGE.name, gen_ai__token__type="input") == 1


def test_a_streamed_call_is_recorded_once_at_its_end(instrument: Instrument) -> None:
    """A stream read to its end: one duration point, counted when the stream ends."""
    otel = instrument()
    stream = Wire().openai().chat.completions.create(model=MODEL, messages=_MESSAGES, stream=True)
    assert _histogram(otel, names.CLIENT_OPERATION_DURATION.name) == []
    for _ in stream:
        pass
    assert [c for _, c in _histogram(otel, names.CLIENT_OPERATION_DURATION.name)] == [1]


def test_a_call_on_another_instrumentations_span_records_no_client_metric(instrument: Instrument) -> None:
    """Inside another instrumentation's GenAI span, that owner records the conventions' metrics: none of ours."""
    otel = instrument()
    tracer = otel.tracer_provider.get_tracer("another.instrumentation")
    with tracer.start_as_current_span(
        "chat model-a", kind=SpanKind.CLIENT, attributes={names.GEN_AI_OPERATION_NAME: "chat"}
    ):
        Wire().openai().chat.completions.create(model=MODEL, messages=_MESSAGES)
    assert _histogram(otel, names.CLIENT_OPERATION_DURATION.name) == []
    assert _histogram(otel, names.CLIENT_TOKEN_USAGE.name) == []
    assert otel.total(names.REQUESTS.name) == 1
