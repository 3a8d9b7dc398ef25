"""A call the SDK never sends leaves no span and counts nothing; a call it sends is recorded once.

The SDKs refuse some calls before any HTTP request goes out (a non-streamed Anthropic call whose
``max_tokens`` may take longer than ten minutes, a missing required argument, a body they cannot
encode), and their helpers hand back managers that send only when entered. Each such call meets
the SDK's own exception or object unchanged, and otel-toolturn records it only once the SDK sends.
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Callable
from typing import Any, Final

import anthropic
import httpx2
import openai
import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode

from otel_toolturn import Lane
from otel_toolturn.instrument import names
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.wire import KEY, MODEL, Wire, respond
from tests.transcripts import A, U, build, c

KNOWN_MODEL: Final = "claude-opus-4-0"
"""A model the anthropic SDK caps for non-streamed calls (``MODEL_NONSTREAMING_TOKENS``: 8,192)."""

LARGE_MAX_TOKENS: Final = 16_000
"""Above that model's non-streamed cap: the SDK refuses ``stream=False`` before sending."""


class _Started(SpanProcessor):
    """Counts spans started (the in-memory exporter sees only ended ones)."""

    def __init__(self) -> None:
        self.started = 0

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        del span, parent_context
        self.started += 1

    def on_end(self, span: ReadableSpan) -> None:
        del span


def _watching(otel: Otel) -> _Started:
    started = _Started()
    otel.tracer_provider.add_span_processor(started)
    return started


def _echo(lane: Lane, body: dict[str, object]) -> httpx2.Response:
    """The provider's answer, naming the model asked for (no model substitution to record)."""
    return respond(lane, stream=bool(body.get("stream")), model=str(body.get("model")))


def _broken(lane: Lane) -> list[object]:
    """A transcript the law repairs once (a call without its result), so a recorded call counts one repair."""
    return build(lane, [U("go"), A(c("t1")), U("go on")])


def _metrics(otel: Otel) -> set[str]:
    """The names of every metric with a data point above zero (a counter may be announced at zero)."""
    data = otel.metric_reader.get_metrics_data()
    if data is None:
        return set()
    return {
        metric.name
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
        if getattr(point, "value", getattr(point, "count", 0))
    }


def _nothing_recorded(otel: Otel, started: _Started, wire: Wire) -> None:
    assert wire.bodies == []
    assert started.started == 0
    assert otel.spans() == []
    assert _metrics(otel) == set()


def _recorded_once(otel: Otel, wire: Wire) -> ReadableSpan:
    assert len(wire.bodies) == 1
    (span,) = otel.call_spans()
    assert otel.total(names.REQUESTS.name) == 1
    assert otel.total(names.REPAIRS.name) == 1
    assert otel.total(names.BREAKS.name) == 1
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0
    return span


def _outcome(call: Callable[[], object]) -> str:
    """What the caller meets: the exception's type and message (``no error`` when none)."""
    try:
        call()
    except Exception as exc:
        return f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
    return "no error"


def _run(is_async: bool, call: Callable[[], Any]) -> Any:
    """``call()``, awaited in a fresh event loop when ``is_async``."""
    if not is_async:
        return call()

    async def main() -> object:
        result: object = await call()
        return result

    return asyncio.run(main())


def _anthropic(wire: Wire, is_async: bool) -> Any:
    return wire.async_anthropic() if is_async else wire.anthropic()


def _refused(wire: Wire, is_async: bool) -> str:
    client = _anthropic(wire, is_async)
    messages = _broken("anthropic.messages")
    return _outcome(
        lambda: _run(
            is_async,
            lambda: client.messages.create(model=KNOWN_MODEL, max_tokens=LARGE_MAX_TOKENS, messages=messages),
        )
    )


def _streamed(wire: Wire, is_async: bool) -> list[str]:
    client = _anthropic(wire, is_async)
    messages = _broken("anthropic.messages")
    if not is_async:
        stream = client.messages.create(model=KNOWN_MODEL, max_tokens=LARGE_MAX_TOKENS, messages=messages, stream=True)
        return [event.type for event in stream]

    async def main() -> list[str]:
        stream = await client.messages.create(
            model=KNOWN_MODEL, max_tokens=LARGE_MAX_TOKENS, messages=messages, stream=True
        )
        return [event.type async for event in stream]

    return asyncio.run(main())


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_streaming_required_refusal_records_nothing_and_the_streamed_retry_once(
    instrument: Instrument, is_async: bool
) -> None:
    """The SDK's "Streaming is required" ValueError, unchanged, records nothing; the streamed retry records once."""
    plain = _refused(Wire(_echo), is_async)
    assert plain.startswith("builtins.ValueError: Streaming is required")
    otel = instrument()
    started = _watching(otel)
    wire = Wire(_echo)
    assert _refused(wire, is_async) == plain
    _nothing_recorded(otel, started, wire)
    assert _streamed(wire, is_async)[-1] == "message_stop"
    span = _recorded_once(otel, wire)
    assert span.status.status_code is not StatusCode.ERROR
    assert [e.name for e in span.events if e.name == names.EVENT_REPAIR] == [names.EVENT_REPAIR]


def _missing_model(lane: Lane, wire: Wire) -> str:
    messages = _broken(lane)
    if lane == "anthropic.messages":
        return _outcome(lambda: wire.anthropic().messages.create(max_tokens=16, messages=messages))
    return _outcome(lambda: wire.openai().chat.completions.create(messages=messages))


@pytest.mark.parametrize("lane", ["anthropic.messages", "openai.chat_completions"])
def test_a_missing_model_meets_the_sdks_type_error_and_records_nothing(instrument: Instrument, lane: Lane) -> None:
    """A call without its required ``model``: the SDK's own TypeError, unchanged; no span, no count, nothing sent."""
    plain = _missing_model(lane, Wire())
    assert plain.startswith("builtins.TypeError")
    otel = instrument()
    started = _watching(otel)
    wire = Wire()
    assert _missing_model(lane, wire) == plain
    _nothing_recorded(otel, started, wire)


def _unencodable(lane: Lane, wire: Wire, otel: Otel | None) -> str:
    messages = _broken(lane)
    extra: dict[str, object] = {"extra_body": {"x": object()}}
    if lane == "anthropic.messages":
        option = {"tracer_provider": otel.tracer_provider} if otel is not None else None
        client = wire.anthropic(open_telemetry=option)
        return _outcome(lambda: client.messages.create(model=MODEL, max_tokens=16, messages=messages, **extra))
    if lane == "openai.chat_completions":
        return _outcome(lambda: wire.openai().chat.completions.create(model=MODEL, messages=messages, **extra))
    return _outcome(lambda: wire.openai().responses.create(model=MODEL, input=messages, **extra))


@pytest.mark.parametrize(
    ("lane", "sdk_traces"),
    [
        ("anthropic.messages", False),
        ("anthropic.messages", True),
        ("openai.chat_completions", False),
        ("openai.responses", False),
    ],
    ids=["anthropic", "anthropic-sdk-span", "chat", "responses"],
)
def test_a_body_the_sdk_cannot_encode_records_nothing(instrument: Instrument, lane: Lane, sdk_traces: bool) -> None:
    """A body the SDK fails to encode before sending: its own error, unchanged; no telemetry of ours on any span."""
    otel = instrument()
    plain = _unencodable(lane, Wire(), None)
    assert "not JSON serializable" in plain
    wire = Wire()
    assert _unencodable(lane, wire, otel if sdk_traces else None) == plain
    assert wire.bodies == []
    assert otel.call_spans() == []
    assert _metrics(otel) == set()


def _manager(client: Any, beta: bool) -> Any:
    messages = client.beta.messages if beta else client.messages
    return messages.stream(model=MODEL, max_tokens=16, messages=_broken("anthropic.messages"))


@pytest.mark.parametrize("beta", [False, True], ids=["messages", "beta"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_stream_manager_never_entered_records_nothing(instrument: Instrument, is_async: bool, beta: bool) -> None:
    """Anthropic ``stream()`` managers made and dropped without entering send nothing, start no span, count nothing."""
    otel = instrument()
    started = _watching(otel)
    wire = Wire()
    client = _anthropic(wire, is_async)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        manager = _manager(client, beta)
        del manager
        gc.collect()
    # the async manager holds the SDK's request coroutine, which warns unawaited, as without otel-toolturn
    assert all("never awaited" in str(w.message) for w in caught)
    assert len(caught) == int(is_async)
    _nothing_recorded(otel, started, wire)


@pytest.mark.parametrize("beta", [False, True], ids=["messages", "beta"])
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_stream_manager_entered_records_once(instrument: Instrument, is_async: bool, beta: bool) -> None:
    """An Anthropic ``stream()`` manager, entered and read: one span, counted once."""
    otel = instrument()
    wire = Wire()
    client = _anthropic(wire, is_async)
    manager = _manager(client, beta)
    if is_async:

        async def read() -> str:
            async with manager as stream:
                return str((await stream.get_final_message()).stop_reason)

        stop = asyncio.run(read())
    else:
        with manager as stream:
            stop = str(stream.get_final_message().stop_reason)
    assert stop == "end_turn"
    span = _recorded_once(otel, wire)
    assert span.status.status_code is not StatusCode.ERROR


def _openai_helpers() -> dict[str, Callable[[Any], Any]]:
    chat = _broken("openai.chat_completions")
    items = _broken("openai.responses")
    return {
        "chat.stream": lambda o: o.chat.completions.stream(model=MODEL, messages=chat),
        "responses.stream": lambda o: o.responses.stream(model=MODEL, input=items),
        "chat.with_streaming_response": lambda o: o.chat.completions.with_streaming_response.create(
            model=MODEL, messages=chat
        ),
        "responses.with_streaming_response": lambda o: o.responses.with_streaming_response.create(
            model=MODEL, input=items
        ),
    }


OPENAI_HELPERS: Final = _openai_helpers()


@pytest.mark.parametrize("helper", OPENAI_HELPERS)
def test_an_openai_helper_never_entered_records_nothing(instrument: Instrument, helper: str) -> None:
    """An openai helper's manager made and dropped without entering sends nothing and records nothing."""
    otel = instrument()
    started = _watching(otel)
    wire = Wire()
    manager = OPENAI_HELPERS[helper](wire.openai())
    del manager
    gc.collect()
    _nothing_recorded(otel, started, wire)


@pytest.mark.parametrize("helper", OPENAI_HELPERS)
def test_an_openai_helper_entered_records_once(instrument: Instrument, helper: str) -> None:
    """An openai helper's manager, entered and read to its end: one span, counted once."""
    otel = instrument()
    wire = Wire()
    with OPENAI_HELPERS[helper](wire.openai()) as entered:
        read = entered.iter_lines() if helper.endswith("with_streaming_response") else entered
        assert list(read)
    _recorded_once(otel, wire)


def _failing_client(lane: Lane) -> Any:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        request.read()
        raise httpx2.ConnectError("refused", request=request)

    http = httpx2.Client(transport=httpx2.MockTransport(refuse))
    if lane == "anthropic.messages":
        return anthropic.Anthropic(api_key=KEY, http_client=http, max_retries=0)
    return openai.OpenAI(api_key=KEY, http_client=http, max_retries=0)


def _create(client: Any, lane: Lane) -> Callable[[], object]:
    messages = _broken(lane)
    if lane == "anthropic.messages":
        return lambda: client.messages.create(model=MODEL, max_tokens=16, messages=messages)
    if lane == "openai.chat_completions":
        return lambda: client.chat.completions.create(model=MODEL, messages=messages)
    return lambda: client.responses.create(model=MODEL, input=messages)


@pytest.mark.parametrize("lane", ["anthropic.messages", "openai.chat_completions", "openai.responses"])
def test_a_request_sent_and_lost_on_the_wire_is_recorded_once(instrument: Instrument, lane: Lane) -> None:
    """A request that went out and failed in transport: the SDK's error, unchanged; one span with the error, counted."""
    plain = _outcome(_create(_failing_client(lane), lane))
    assert "APIConnectionError" in plain
    otel = instrument()
    assert _outcome(_create(_failing_client(lane), lane)) == plain
    (span,) = otel.call_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None
    assert span.attributes[names.ERROR_TYPE] == "APIConnectionError"
    assert otel.total(names.REQUESTS.name) == 1
    assert otel.total(names.REPAIRS.name) == 1


def _retrying_client(lane: Lane, wire: Wire, answers: list[int]) -> Any:
    def handle(request: httpx2.Request) -> httpx2.Response:
        if answers.pop(0) == 500:
            request.read()
            return httpx2.Response(500, json={"error": {"message": "try again"}}, headers={"retry-after-ms": "1"})
        return wire.handle(request)

    http = httpx2.Client(transport=httpx2.MockTransport(handle))
    if lane == "anthropic.messages":
        return anthropic.Anthropic(api_key=KEY, http_client=http, max_retries=1)
    return openai.OpenAI(api_key=KEY, http_client=http, max_retries=1)


@pytest.mark.parametrize("lane", ["anthropic.messages", "openai.chat_completions"])
def test_a_call_the_sdk_retries_is_recorded_once(instrument: Instrument, lane: Lane) -> None:
    """A call the SDK sends twice (a 500, then its retry) is one span, counted once."""
    otel = instrument()
    wire = Wire()
    answers = [500, 200]
    _create(_retrying_client(lane, wire, answers), lane)()
    assert answers == []
    _recorded_once(otel, wire)
