"""Every SDK helper, sync and async: the caller sees exactly what it sees uninstrumented, and one call is recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final

import anthropic
import openai
import pytest
from opentelemetry.trace import SpanKind

from otel_toolturn import Lane
from otel_toolturn.instrument import names
from otel_toolturn.instrument._patches import TARGETS, Target
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.wire import MODEL, Wire

Q: Final = [{"role": "user", "content": "hello"}]
MAX: Final = 16


@dataclass(frozen=True)
class Scenario:
    name: str
    lane: Lane
    sync: Callable[[Any], object]
    async_: Callable[[Any], Coroutine[Any, Any, object]]


def _chat_create(c: Any) -> object:
    r = c.chat.completions.create(model=MODEL, messages=Q)
    return (r.__class__.__name__, r.choices[0].message.content)


async def _achat_create(c: Any) -> object:
    r = await c.chat.completions.create(model=MODEL, messages=Q)
    return (r.__class__.__name__, r.choices[0].message.content)


def _chat_stream(c: Any) -> object:
    s = c.chat.completions.create(model=MODEL, messages=Q, stream=True)
    return (isinstance(s, openai.Stream), [ch.choices[0].delta.content for ch in s])


async def _achat_stream(c: Any) -> object:
    s = await c.chat.completions.create(model=MODEL, messages=Q, stream=True)
    return (isinstance(s, openai.AsyncStream), [ch.choices[0].delta.content async for ch in s])


def _chat_stream_with(c: Any) -> object:
    with c.chat.completions.create(model=MODEL, messages=Q, stream=True) as s:
        return [ch.choices[0].finish_reason for ch in s]


async def _achat_stream_with(c: Any) -> object:
    async with await c.chat.completions.create(model=MODEL, messages=Q, stream=True) as s:
        return [ch.choices[0].finish_reason async for ch in s]


def _chat_raw(c: Any) -> object:
    r = c.chat.completions.with_raw_response.create(model=MODEL, messages=Q)
    return (r.__class__.__name__, r.headers["x-request-id"], r.parse().choices[0].message.content)


async def _achat_raw(c: Any) -> object:
    r = await c.chat.completions.with_raw_response.create(model=MODEL, messages=Q)
    return (r.__class__.__name__, r.headers["x-request-id"], r.parse().choices[0].message.content)


def _chat_streaming_response(c: Any) -> object:
    with c.chat.completions.with_streaming_response.create(model=MODEL, messages=Q) as r:
        return (r.__class__.__name__, r.headers["x-request-id"], r.parse().choices[0].message.content)


async def _achat_streaming_response(c: Any) -> object:
    async with c.chat.completions.with_streaming_response.create(model=MODEL, messages=Q) as r:
        return (r.__class__.__name__, r.headers["x-request-id"], (await r.parse()).choices[0].message.content)


def _chat_streaming_response_stream(c: Any) -> object:
    with c.chat.completions.with_streaming_response.create(model=MODEL, messages=Q, stream=True) as r:
        return [ch.choices[0].delta.content for ch in r.parse()]


async def _achat_streaming_response_stream(c: Any) -> object:
    async with c.chat.completions.with_streaming_response.create(model=MODEL, messages=Q, stream=True) as r:
        return [ch.choices[0].delta.content async for ch in await r.parse()]


def _chat_helper(c: Any) -> object:
    with c.chat.completions.stream(model=MODEL, messages=Q) as s:
        final = s.get_final_completion()
    return (s.__class__.__name__, final.choices[0].message.content)


async def _achat_helper(c: Any) -> object:
    async with c.chat.completions.stream(model=MODEL, messages=Q) as s:
        final = await s.get_final_completion()
    return (s.__class__.__name__, final.choices[0].message.content)


def _chat_helper_partial(c: Any) -> object:
    with c.chat.completions.stream(model=MODEL, messages=Q) as s:
        return next(iter(s)).type


async def _achat_helper_partial(c: Any) -> object:
    async with c.chat.completions.stream(model=MODEL, messages=Q) as s:
        async for event in s:
            return event.type
    return None


def _chat_parse(c: Any) -> object:
    r = c.chat.completions.parse(model=MODEL, messages=Q)
    return (r.__class__.__name__, r.choices[0].message.content)


async def _achat_parse(c: Any) -> object:
    r = await c.chat.completions.parse(model=MODEL, messages=Q)
    return (r.__class__.__name__, r.choices[0].message.content)


def _resp_create(c: Any) -> object:
    r = c.responses.create(model=MODEL, input=Q)
    return (r.__class__.__name__, r.output_text)


async def _aresp_create(c: Any) -> object:
    r = await c.responses.create(model=MODEL, input=Q)
    return (r.__class__.__name__, r.output_text)


def _resp_stream(c: Any) -> object:
    return [e.type for e in c.responses.create(model=MODEL, input=Q, stream=True)]


async def _aresp_stream(c: Any) -> object:
    return [e.type async for e in await c.responses.create(model=MODEL, input=Q, stream=True)]


def _resp_raw(c: Any) -> object:
    r = c.responses.with_raw_response.create(model=MODEL, input=Q)
    return (r.headers["x-request-id"], r.parse().output_text)


async def _aresp_raw(c: Any) -> object:
    r = await c.responses.with_raw_response.create(model=MODEL, input=Q)
    return (r.headers["x-request-id"], r.parse().output_text)


def _resp_helper(c: Any) -> object:
    with c.responses.stream(model=MODEL, input=Q) as s:
        return s.get_final_response().output_text


async def _aresp_helper(c: Any) -> object:
    async with c.responses.stream(model=MODEL, input=Q) as s:
        return (await s.get_final_response()).output_text


def _resp_parse(c: Any) -> object:
    r = c.responses.parse(model=MODEL, input=Q)
    return (r.__class__.__name__, r.output_text)


async def _aresp_parse(c: Any) -> object:
    r = await c.responses.parse(model=MODEL, input=Q)
    return (r.__class__.__name__, r.output_text)


def _messages(c: Any, beta: bool) -> Any:
    return c.beta.messages if beta else c.messages


def _ant_create(beta: bool) -> tuple[Callable[[Any], object], Callable[[Any], Coroutine[Any, Any, object]]]:
    def sync(c: Any) -> object:
        r = _messages(c, beta).create(model=MODEL, max_tokens=MAX, messages=Q)
        return (r.__class__.__name__, r.content[0].text)

    async def async_(c: Any) -> object:
        r = await _messages(c, beta).create(model=MODEL, max_tokens=MAX, messages=Q)
        return (r.__class__.__name__, r.content[0].text)

    return sync, async_


def _ant_stream(beta: bool) -> tuple[Callable[[Any], object], Callable[[Any], Coroutine[Any, Any, object]]]:
    def sync(c: Any) -> object:
        s = _messages(c, beta).create(model=MODEL, max_tokens=MAX, messages=Q, stream=True)
        return (isinstance(s, anthropic.Stream), [e.type for e in s])

    async def async_(c: Any) -> object:
        s = await _messages(c, beta).create(model=MODEL, max_tokens=MAX, messages=Q, stream=True)
        return (isinstance(s, anthropic.AsyncStream), [e.type async for e in s])

    return sync, async_


def _ant_helper(beta: bool) -> tuple[Callable[[Any], object], Callable[[Any], Coroutine[Any, Any, object]]]:
    def sync(c: Any) -> object:
        with _messages(c, beta).stream(model=MODEL, max_tokens=MAX, messages=Q) as s:
            message = s.get_final_message()
        return (s.__class__.__name__, message.content[0].text, message.stop_reason)

    async def async_(c: Any) -> object:
        async with _messages(c, beta).stream(model=MODEL, max_tokens=MAX, messages=Q) as s:
            message = await s.get_final_message()
        return (s.__class__.__name__, message.content[0].text, message.stop_reason)

    return sync, async_


def _ant_parse(beta: bool) -> tuple[Callable[[Any], object], Callable[[Any], Coroutine[Any, Any, object]]]:
    def sync(c: Any) -> object:
        r = _messages(c, beta).parse(model=MODEL, max_tokens=MAX, messages=Q)
        return (r.__class__.__name__, r.content[0].text)

    async def async_(c: Any) -> object:
        r = await _messages(c, beta).parse(model=MODEL, max_tokens=MAX, messages=Q)
        return (r.__class__.__name__, r.content[0].text)

    return sync, async_


def _ant_text_stream(c: Any) -> object:
    with c.messages.stream(model=MODEL, max_tokens=MAX, messages=Q) as s:
        return "".join(s.text_stream)


async def _aant_text_stream(c: Any) -> object:
    async with c.messages.stream(model=MODEL, max_tokens=MAX, messages=Q) as s:
        return "".join([t async for t in s.text_stream])


def _ant_raw(c: Any) -> object:
    r = c.messages.with_raw_response.create(model=MODEL, max_tokens=MAX, messages=Q)
    return (r.__class__.__name__, r.headers["x-request-id"], r.parse().content[0].text)


async def _aant_raw(c: Any) -> object:
    r = await c.messages.with_raw_response.create(model=MODEL, max_tokens=MAX, messages=Q)
    return (r.__class__.__name__, r.headers["x-request-id"], (await r.parse()).content[0].text)


def _ant_streaming_response(c: Any) -> object:
    with c.messages.with_streaming_response.create(model=MODEL, max_tokens=MAX, messages=Q, stream=True) as r:
        return [e.type for e in r.parse()]


async def _aant_streaming_response(c: Any) -> object:
    async with c.messages.with_streaming_response.create(model=MODEL, max_tokens=MAX, messages=Q, stream=True) as r:
        return [e.type async for e in await r.parse()]


def _ant_close_early(c: Any) -> object:
    with c.messages.stream(model=MODEL, max_tokens=MAX, messages=Q) as s:
        first = next(iter(s)).type
        s.close()
    return first


async def _aant_close_early(c: Any) -> object:
    async with c.messages.stream(model=MODEL, max_tokens=MAX, messages=Q) as s:
        async for event in s:
            await s.close()
            return event.type
    return None


SCENARIOS: Final = [
    Scenario("chat.create", "openai.chat_completions", _chat_create, _achat_create),
    Scenario("chat.create(stream=True)", "openai.chat_completions", _chat_stream, _achat_stream),
    Scenario("chat.create(stream=True) in with", "openai.chat_completions", _chat_stream_with, _achat_stream_with),
    Scenario("chat.with_raw_response.create", "openai.chat_completions", _chat_raw, _achat_raw),
    Scenario(
        "chat.with_streaming_response.create",
        "openai.chat_completions",
        _chat_streaming_response,
        _achat_streaming_response,
    ),
    Scenario(
        "chat.with_streaming_response.create(stream=True)",
        "openai.chat_completions",
        _chat_streaming_response_stream,
        _achat_streaming_response_stream,
    ),
    Scenario("chat.stream", "openai.chat_completions", _chat_helper, _achat_helper),
    Scenario("chat.stream partial", "openai.chat_completions", _chat_helper_partial, _achat_helper_partial),
    Scenario("chat.parse", "openai.chat_completions", _chat_parse, _achat_parse),
    Scenario("responses.create", "openai.responses", _resp_create, _aresp_create),
    Scenario("responses.create(stream=True)", "openai.responses", _resp_stream, _aresp_stream),
    Scenario("responses.with_raw_response.create", "openai.responses", _resp_raw, _aresp_raw),
    Scenario("responses.stream", "openai.responses", _resp_helper, _aresp_helper),
    Scenario("responses.parse", "openai.responses", _resp_parse, _aresp_parse),
    Scenario("messages.create", "anthropic.messages", *_ant_create(beta=False)),
    Scenario("messages.create(stream=True)", "anthropic.messages", *_ant_stream(beta=False)),
    Scenario("messages.stream", "anthropic.messages", *_ant_helper(beta=False)),
    Scenario("messages.stream text_stream", "anthropic.messages", _ant_text_stream, _aant_text_stream),
    Scenario("messages.stream close()", "anthropic.messages", _ant_close_early, _aant_close_early),
    Scenario("messages.parse", "anthropic.messages", *_ant_parse(beta=False)),
    Scenario("messages.with_raw_response.create", "anthropic.messages", _ant_raw, _aant_raw),
    Scenario(
        "messages.with_streaming_response.create(stream=True)",
        "anthropic.messages",
        _ant_streaming_response,
        _aant_streaming_response,
    ),
    Scenario("beta.messages.create", "anthropic.messages", *_ant_create(beta=True)),
    Scenario("beta.messages.create(stream=True)", "anthropic.messages", *_ant_stream(beta=True)),
    Scenario("beta.messages.stream", "anthropic.messages", *_ant_helper(beta=True)),
    Scenario("beta.messages.parse", "anthropic.messages", *_ant_parse(beta=True)),
]


def _client(wire: Wire, lane: Lane, otel: Otel, *, is_async: bool) -> Any:
    if lane != "anthropic.messages":
        return wire.async_openai() if is_async else wire.openai()
    option = {"tracer_provider": otel.tracer_provider}
    return wire.async_anthropic(open_telemetry=option) if is_async else wire.anthropic(open_telemetry=option)


def _run(scenario: Scenario, wire: Wire, otel: Otel, *, is_async: bool) -> object:
    client = _client(wire, scenario.lane, otel, is_async=is_async)
    if is_async:
        return asyncio.run(scenario.async_(client))
    return scenario.sync(client)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_helper_behaves_as_uninstrumented(
    instrument: Instrument, otel: Otel, scenario: Scenario, is_async: bool
) -> None:
    """The helper's result is the uninstrumented one; exactly one call span ends, carrying the telemetry."""
    plain_wire = Wire()
    plain = _run(scenario, plain_wire, otel, is_async=is_async)
    otel.span_exporter.clear()
    instrument()
    wire = Wire()
    seen = _run(scenario, wire, otel, is_async=is_async)
    assert seen == plain
    assert wire.bodies == plain_wire.bodies
    spans = otel.spans()
    assert len(spans) == 1
    (span,) = otel.call_spans()
    assert span.attributes is not None
    assert span.attributes[names.LANE] == scenario.lane
    assert span.attributes[names.GEN_AI_OPERATION_NAME] == "chat"
    assert otel.total(names.REQUESTS.name, toolturn__lane=scenario.lane) == 1


def test_anthropic_sdk_span_gets_the_events_instead_of_a_second_span(instrument: Instrument, otel: Otel) -> None:
    """With the anthropic SDK's own call span on, the call's attributes and events go onto it: one span in all."""
    otel_ = instrument(handoff_tools=("transfer_*",))
    client = Wire().anthropic(open_telemetry={"tracer_provider": otel.tracer_provider})
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
    ]
    client.messages.create(model=MODEL, max_tokens=MAX, messages=messages)
    (span,) = otel_.spans()
    assert span.name.startswith("anthropic.")
    assert [e.name for e in span.events if e.name.startswith("toolturn.")] == [names.EVENT_REPAIR]
    assert span.attributes is not None
    assert span.attributes[names.REPAIRS_COUNT] == 1


def test_patch_table_covers_sync_and_async_alike() -> None:
    """Each patched sync method has its async twin, with an async wrapper exactly where the SDK awaits or yields async.

    A twin is the ``Async`` owner's method of the same name, or (google-genai's one API client) the
    same owner's ``_async_`` method, or (mistralai) the same owner's method of the name with ``_async`` after it
    (huggingface_hub's async client is in a module of its own; azure-ai-inference's async client is its ``aio``
    module's class of the same name, over azure-core's ``_base_async`` transport runner ``_AsyncTransportRunner``).
    botocore has no async client (aiobotocore is another package).
    """
    pairs = [t for t in TARGETS if t.kind != "sdk_span" and t.provider != "botocore"]

    def is_async(target: Target) -> bool:
        return (
            target.owner.lstrip("_").startswith("Async")
            or target.method.startswith("_async_")
            or target.method.endswith("_async")
            or ".aio." in target.module
        )

    def twin(target: Target) -> tuple[str, str]:
        module = target.module.replace("._generated._async_client", "._client")  # huggingface_hub's async module
        module = module.replace(".aio.", ".").removesuffix("_async")  # azure-ai-inference's, azure-core's
        return module, target.method.replace("_async_", "_", 1).removesuffix("_async")

    sync = {twin(t) for t in pairs if not is_async(t)}
    asyn = {twin(t) for t in pairs if is_async(t)}
    assert sync == asyn
    for target in pairs:
        assert target.is_async is (
            is_async(target) and target.kind in {"call", "send", "gate", "steps", "call_or_steps"}
        )


def test_another_genai_span_current_at_the_call_gets_the_telemetry(instrument: Instrument, otel: Otel) -> None:
    """Inside another instrumentation's GenAI CLIENT span, no second span: the events go onto that span."""
    instrument()
    tracer = otel.tracer_provider.get_tracer("another.instrumentation")
    messages = [{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": [_CALL]}]
    with tracer.start_as_current_span(
        "chat model-a", kind=SpanKind.CLIENT, attributes={names.GEN_AI_OPERATION_NAME: "chat"}
    ):
        Wire().openai().chat.completions.create(model=MODEL, messages=messages)
    (span,) = otel.spans()
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name == "another.instrumentation"
    assert span.attributes is not None
    assert span.attributes[names.LANE] == "openai.chat_completions"
    assert [e.name for e in span.events] == [names.EVENT_REPAIR]
    assert names.GEN_AI_RESPONSE_MODEL not in span.attributes


_CALL: Final = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
