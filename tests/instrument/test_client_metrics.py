"""The GenAI conventions on spans of otel-toolturn's own, and at least what a util-genai instrumentation emits.

Client metrics once per call (never on another's span), the request's settings, the stream's timing.
"""

from __future__ import annotations

import json
from typing import Any, Final

import httpx2
import openai
import pytest
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor as OfficialOpenAIInstrumentor
from opentelemetry.trace import SpanKind

from otel_toolturn.instrument import Options, ToolTurnInstrumentor, names
from tests.instrument.conftest import Instrument, Otel, cut_event_stream, make_otel
from tests.instrument.wire import Wire
from tests.openai_bodies import chat_envelope

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


def _own_span(otel: Otel) -> dict[str, object]:
    (span,) = otel.call_spans()
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.schema_url == names.SCHEMA_URL
    return dict(span.attributes or {})


def test_the_request_parameters_go_on_our_span_in_the_conventions_names(instrument: Instrument) -> None:
    """Chat settings become gen_ai.request.* (one stop string a list of one, n only when not 1); stream false."""
    otel = instrument()
    Wire().openai().chat.completions.create(
        model=MODEL, messages=_MESSAGES, max_completion_tokens=64, temperature=0.2, top_p=0.9, stop="END", seed=7, n=2
    )
    attributes = _own_span(otel)
    assert attributes["gen_ai.request.max_tokens"] == 64
    assert attributes["gen_ai.request.temperature"] == 0.2
    assert attributes["gen_ai.request.top_p"] == 0.9
    assert attributes["gen_ai.request.stop_sequences"] == ("END",)
    assert attributes["gen_ai.request.seed"] == 7
    assert attributes[names.GEN_AI_REQUEST_CHOICE_COUNT] == 2
    assert attributes[names.GEN_AI_REQUEST_STREAM] is False
    assert names.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK not in attributes


def test_a_stream_states_it_and_its_time_to_first_chunk(instrument: Instrument) -> None:
    """A streamed call: gen_ai.request.stream true and a time to first chunk within the call's duration."""
    otel = instrument()
    for _ in Wire().openai().chat.completions.create(model=MODEL, messages=_MESSAGES, stream=True, n=1):
        pass
    attributes = _own_span(otel)
    assert attributes[names.GEN_AI_REQUEST_STREAM] is True
    assert names.GEN_AI_REQUEST_CHOICE_COUNT not in attributes
    (span,) = otel.call_spans()
    assert span.end_time is not None
    assert span.start_time is not None
    first = attributes[names.GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK]
    assert isinstance(first, float)
    assert 0 <= first <= (span.end_time - span.start_time) / 1e9


_CHUNK_METRICS: Final = (names.CLIENT_TIME_TO_FIRST_CHUNK.name, names.CLIENT_TIME_PER_OUTPUT_CHUNK.name)


def test_a_streams_chunk_times_carry_the_durations_attributes(instrument: Instrument) -> None:
    """A stream read to its end: one first-chunk point and one per later chunk, each with the duration's attributes."""
    otel = instrument()
    chunks = list(Wire().openai().chat.completions.create(model=MODEL, messages=_MESSAGES, stream=True))
    (duration,) = _histogram(otel, names.CLIENT_OPERATION_DURATION.name)
    assert names.GEN_AI_RESPONSE_MODEL in duration[0]
    first, later = (_histogram(otel, name) for name in _CHUNK_METRICS)
    assert first == [(duration[0], 1.0)]
    assert later == [(duration[0], float(len(chunks) - 1))]


def test_a_stream_that_fails_records_its_chunk_times_with_its_error_type(instrument: Instrument) -> None:
    """A stream whose connection drops: its chunk times carry the duration's error.type, as the conventions ask."""
    otel = instrument()
    frames = "".join(
        f"data: {json.dumps(chat_envelope(MODEL, [{'index': 0, 'delta': {'content': word}}], chunk=True))}\n\n"
        for word in ("one", "two", "three")
    ).encode()
    transport = httpx2.MockTransport(lambda _request: cut_event_stream(frames))
    client: Any = openai.OpenAI(api_key="k", http_client=httpx2.Client(transport=transport), max_retries=0)
    read: list[object] = []
    with pytest.raises(openai.APIConnectionError):
        read.extend(client.chat.completions.create(model=MODEL, messages=_MESSAGES, stream=True))
    assert len(read) == 3
    (duration,) = _histogram(otel, names.CLIENT_OPERATION_DURATION.name)
    assert duration[0][names.ERROR_TYPE] == "APIConnectionError"
    first, later = (_histogram(otel, name) for name in _CHUNK_METRICS)
    assert first == [(duration[0], 1.0)]
    assert later == [(duration[0], 2.0)]


def _genai_names(otel: Otel) -> tuple[set[str], set[str]]:
    """The conventions' span attribute keys and metric names a run exported."""
    keys = {k for s in otel.spans() for k in (s.attributes or {}) if k.startswith(("gen_ai.", "server.", "error."))}
    data = otel.metric_reader.get_metrics_data()
    metrics = set()
    if data is not None:
        metrics = {
            m.name
            for r in data.resource_metrics
            for scope in r.scope_metrics
            for m in scope.metrics
            if m.name.startswith("gen_ai.")
        }
    return keys, metrics


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_alone_it_emits_what_the_util_genai_instrumentation_emits_and_more(*, stream: bool) -> None:
    """The same Chat call under the official util-genai instrumentation and under otel-toolturn alone: a superset."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for who, instrumentor in (("util-genai", OfficialOpenAIInstrumentor()), ("otel-toolturn", ToolTurnInstrumentor())):
        otel = make_otel()
        extra = {"options": Options()} if who == "otel-toolturn" else {}
        instrumentor.instrument(
            tracer_provider=otel.tracer_provider,
            meter_provider=otel.meter_provider,
            logger_provider=otel.logger_provider,
            **extra,
        )
        try:
            response = (
                Wire()
                .openai()
                .chat.completions.create(model=MODEL, messages=_MESSAGES, temperature=0.3, max_tokens=20, stream=stream)
            )
            if stream:
                for _ in response:
                    pass
        finally:
            instrumentor.uninstrument()
        found[who] = _genai_names(otel)
    theirs, ours = found["util-genai"], found["otel-toolturn"]
    assert theirs[0], "the util-genai instrumentation recorded the call"
    assert theirs[0] - ours[0] == set()
    assert theirs[1] - ours[1] == set()
