"""Beside another GenAI instrumentation of groq, ollama, cohere and azure-ai-inference: one inference span per request.

The instrumentations users run beside otel-toolturn on these SDKs: OpenLLMetry's ``opentelemetry-instrumentation-groq``
(its span started, never made current), ``-ollama`` (started, never current) and ``-cohere`` (started, made current
around the call), and azure-ai-inference's own ``AIInferenceInstrumentor`` over ``azure-core-tracing-opentelemetry``
(https://learn.microsoft.com/en-us/python/api/overview/azure/ai-inference-readme#tracing: current, and azure-core's
HTTP span, a CLIENT span without GenAI attributes, beneath it). OpenLLMetry's cohere instrumentation declares
``cohere >=4.2.7, <6`` and so instruments nothing beside cohere 7 unless its dependency check is skipped: tested both
ways; with it skipped, its wrapper of the inherited ``V2Client.chat`` stands on ``ClientV2`` itself, and otel-toolturn
instrumented after it wraps that copy too (``_patches``). Not here: OpenLLMetry's ``-mistralai`` imports
``mistralai.models``, a module mistralai 2 and later no longer have, and huggingface_hub has no OpenLLMetry
instrumentation (``-transformers`` wraps transformers' pipelines).

Each real SDK sends a history whose second of two parallel tool calls has no result to the simulator, through its
client and its async client (``AsyncGroq``, ``ollama.AsyncClient``, ``AsyncClientV2``, ``azure.ai.inference.aio``),
whole and streamed: the simulator receives the repaired history, and exactly one GenAI inference span is exported for
the request, the other instrumentation's, carrying otel-toolturn's lane and repair, whichever was instrumented first;
two async calls, in one task or in flight at once, get a span each. Either one undone
leaves the other working, but for what the others' ``uninstrument`` does: wrapt's ``unwrap`` (and azure's
``_original``) takes off the outermost wrapper, so theirs undone from beneath ours takes ours; OpenLLMetry's ollama
instrumentation wraps ``Client._request`` but unwraps ``Client.chat``, ours. Ours undone from beneath theirs leaves
theirs in place (``_patches.unpatch``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import cohere
import groq
import ollama
import pytest
from azure.ai.inference import ChatCompletionsClient
from azure.ai.inference.aio import ChatCompletionsClient as AsyncChatCompletionsClient
from azure.ai.inference.tracing import AIInferenceInstrumentor
from azure.core.credentials import AzureKeyCredential
from azure.core.exceptions import HttpResponseError
from azure.core.settings import settings
from opentelemetry import trace
from opentelemetry.instrumentation.cohere import CohereInstrumentor
from opentelemetry.instrumentation.groq import GroqInstrumentor
from opentelemetry.instrumentation.ollama import OllamaInstrumentor
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from otel_toolturn import Dialect
from otel_toolturn.instrument import Options, ToolTurnInstrumentor, names
from otel_toolturn.simulator import ScriptedTurn, Simulator
from tests.instrument import sdk_checks as checks
from tests.instrument.conftest import Otel, each_span_ended_once

_GENAI: Final = (names.GEN_AI_OPERATION_NAME, names.PROVIDER, "gen_ai.system")
"""Attributes, any of which makes a CLIENT span a GenAI inference span (an HTTP span has none)."""


def _call(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "read", "arguments": '{"path": "a"}'}}


CHAT: Final[list[dict[str, object]]] = [
    {"role": "user", "content": "Read a and b."},
    {"role": "assistant", "content": "", "tool_calls": [_call("call_1"), _call("call_2")]},
    {"role": "tool", "tool_call_id": "call_1", "content": "a=1"},
    {"role": "user", "content": "Never mind b; what is in a?"},
]
"""Ctrl-C while the second of two parallel calls ran: it has no result, and the user spoke next."""

OLLAMA: Final[list[dict[str, object]]] = [
    {"role": "user", "content": "Read a and b."},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "read", "arguments": {"path": p}}} for p in "ab"],
    },
    {"role": "tool", "tool_name": "read", "content": "a=1"},
    {"role": "user", "content": "Never mind b; what is in a?"},
]
"""The same in Ollama's id-less messages, results answered by tool name."""


def _groq(sim: Simulator, messages: list[Any], *, stream: bool) -> None:
    with groq.Client(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        response: Any = client.chat.completions.create(model="model-a", messages=messages, stream=stream)
        if stream:
            assert list(response)[-1].choices[0].finish_reason == "stop"


def _ollama(sim: Simulator, messages: list[Any], *, stream: bool) -> None:
    response: Any = ollama.Client(host=sim.base_url).chat(model="llama3.2", messages=messages, stream=stream)  # type: ignore[call-overload]
    if stream:
        assert list(response)[-1].done


def _cohere(sim: Simulator, messages: list[Any], *, stream: bool) -> None:
    with cohere.ClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        if stream:
            assert list(client.chat_stream(model="command-a-03-2025", messages=messages))[-1].type == "message-end"
        else:
            client.chat(model="command-a-03-2025", messages=messages)


def _azure(sim: Simulator, messages: list[Any], *, stream: bool) -> None:
    endpoint = f"{sim.base_url}/models"
    with ChatCompletionsClient(endpoint=endpoint, credential=AzureKeyCredential("test-key"), retry_total=0) as client:
        response = client.complete(messages=messages, model="model-a", stream=stream)
        if stream:
            assert list(response)


async def _groq_async(sim: Simulator, messages: list[Any], *, stream: bool) -> None:
    async with groq.AsyncGroq(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        response: Any = await client.chat.completions.create(model="model-a", messages=messages, stream=stream)
        if stream:
            assert [chunk async for chunk in response][-1].choices[0].finish_reason == "stop"


async def _ollama_async(sim: Simulator, messages: list[Any], *, stream: bool) -> None:
    async with ollama.AsyncClient(host=sim.base_url) as client:
        response: Any = await client.chat(model="llama3.2", messages=messages, stream=stream)
        if stream:
            assert [part async for part in response][-1].done


async def _cohere_async(sim: Simulator, messages: list[Any], *, stream: bool) -> None:
    async with cohere.AsyncClientV2(base_url=sim.base_url, api_key="test-key", max_retries=0) as client:
        if stream:
            events = [event async for event in client.chat_stream(model="command-a-03-2025", messages=messages)]
            assert events[-1].type == "message-end"
        else:
            await client.chat(model="command-a-03-2025", messages=messages)


async def _azure_async(sim: Simulator, messages: list[Any], *, stream: bool) -> None:
    endpoint, credential = f"{sim.base_url}/models", AzureKeyCredential("test-key")
    async with AsyncChatCompletionsClient(endpoint=endpoint, credential=credential, retry_total=0) as client:
        response: Any = await client.complete(messages=messages, model="model-a", stream=stream)
        if stream:
            assert [update async for update in response]


@dataclass(frozen=True)
class Sdk:
    """One SDK: how its client and async client send ``messages``, to which path, in which dialect, refused how."""

    send: Callable[..., None]
    send_async: Callable[..., Coroutine[Any, Any, None]]
    messages: list[dict[str, object]]
    path: str
    refused: type[BaseException]
    dialect: Dialect | None = None


SDKS: Final = {
    "groq": Sdk(_groq, _groq_async, CHAT, "/openai/v1/chat/completions", groq.BadRequestError),
    "ollama": Sdk(_ollama, _ollama_async, OLLAMA, "/api/chat", ollama.ResponseError, dialect="ollama"),
    "cohere": Sdk(_cohere, _cohere_async, CHAT, "/v2/chat", cohere.BadRequestError),
    "azure": Sdk(_azure, _azure_async, CHAT, "/models/chat/completions", HttpResponseError),
}


class AzureInferenceTracing:
    """azure-ai-inference's tracing as instrumentor: ``AIInferenceInstrumentor`` over azure-core's OpenTelemetry span.

    azure-core's tracing takes the global tracer provider (the ``beside`` fixture sets the test's).
    """

    def __init__(self) -> None:
        self._inner = AIInferenceInstrumentor()  # type: ignore[no-untyped-call]

    def instrument(self, **kwargs: object) -> None:
        del kwargs  # azure-core's tracing takes the global providers
        settings.tracing_implementation.set_value("opentelemetry")
        self._inner.instrument()

    def uninstrument(self) -> None:
        self._inner.uninstrument()
        settings.tracing_implementation.unset_value()


@dataclass(frozen=True)
class Other:
    """Another instrumentation: its instrumentor, the SDK it wraps, whether it spans, its ``instrument`` keywords."""

    instrumentor: Callable[[], Any]
    sdk: str
    spans: bool = True
    options: dict[str, object] = field(default_factory=dict)


OTHERS: Final = {
    "openllmetry-groq": Other(GroqInstrumentor, "groq"),
    "openllmetry-ollama": Other(OllamaInstrumentor, "ollama"),
    # its dependency check declines cohere 7: it wraps nothing, as Traceloop.init leaves it
    "openllmetry-cohere": Other(CohereInstrumentor, "cohere", spans=False),
    # its range overridden, as a user who skips the check does: it wraps ClientV2.chat and chat_stream
    "openllmetry-cohere-unchecked": Other(CohereInstrumentor, "cohere", options={"skip_dep_check": True}),
    "azure-ai-inference": Other(AzureInferenceTracing, "azure"),
}
SPANNING: Final = sorted(name for name, other in OTHERS.items() if other.spans)

Beside = Callable[[str, bool], tuple[ToolTurnInstrumentor, Any]]


@pytest.fixture
def beside(otel: Otel, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> Iterator[Beside]:
    """Instrument otel-toolturn and another instrumentation into ``otel``, in the order asked; all undone after.

    Returns both instrumentors, ours first.
    """
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", otel.tracer_provider)  # azure-core's tracing takes the global one
    wrapped = _owners()
    done: list[Any] = []

    def go(other: str, ours_first: bool) -> tuple[ToolTurnInstrumentor, Any]:
        ours = ToolTurnInstrumentor()
        theirs = OTHERS[other].instrumentor()
        for instrumentor in [ours, theirs] if ours_first else [theirs, ours]:
            extra = {"options": Options()} if instrumentor is ours else OTHERS[other].options
            instrumentor.instrument(
                tracer_provider=otel.tracer_provider,
                meter_provider=otel.meter_provider,
                logger_provider=otel.logger_provider,
                **extra,
            )
            done.append(instrumentor)
        return ours, theirs

    with each_span_ended_once(caplog):
        yield go
        for instrumentor in reversed(done):
            if getattr(instrumentor, "is_instrumented_by_opentelemetry", True):
                instrumentor.uninstrument()
        _put_back(wrapped)


_WRAPPED: Final = (
    "groq.resources.chat.completions",
    "ollama._client",
    "cohere.client_v2",
    "cohere.v2.client",
    "cohere.v2.raw_client",
    "azure.ai.inference._patch",
    "azure.ai.inference.aio._patch",
)
"""The modules whose functions and classes' methods the instrumentations here wrap."""


def _owners() -> dict[object, dict[str, object]]:
    """Each module of ``_WRAPPED`` and each class it defines, with its attributes as they are now."""
    owners: list[object] = []
    for name in _WRAPPED:
        module = importlib.import_module(name)
        owners += [module, *(v for v in vars(module).values() if isinstance(v, type) and v.__module__ == name)]
    return {owner: dict(vars(owner)) for owner in owners}


def _put_back(before: dict[object, dict[str, object]]) -> None:
    """Each owner's attributes as they were, so no later test runs what an ``uninstrument`` left wrapped.

    OpenLLMetry's ollama instrumentation never unwraps ``_request``; its cohere one, wrapping ``ClientV2.chat``
    (inherited), leaves a copy on ``ClientV2``; a wrapper of ours left beneath another's (``_patches.unpatch``) stays.
    """
    for owner, attributes in before.items():
        for attribute in set(vars(owner)) - set(attributes):
            delattr(owner, attribute)
        for attribute, value in attributes.items():
            if vars(owner).get(attribute) is not value:
                setattr(owner, attribute, value)


def _inference_spans(otel: Otel) -> list[ReadableSpan]:
    """The GenAI inference spans exported: CLIENT spans with a GenAI attribute."""
    return [s for s in otel.spans() if s.kind is SpanKind.CLIENT and any(k in (s.attributes or {}) for k in _GENAI)]


def _sent(sim: Simulator, sdk: Sdk) -> list[Any]:
    """What the simulator received on the SDK's path, with the caller's list unchanged; one request, served."""
    messages = list(sdk.messages)
    sdk.send(sim, messages, stream=False)
    requests = [r for r in sim.requests if r.path == sdk.path]
    return checks.served_request(requests, messages, sdk.messages, dialect=sdk.dialect)


def _repaired_on(span: ReadableSpan) -> None:
    """``span`` carries otel-toolturn's lane and its one repair, as attribute and event."""
    attributes = span.attributes or {}
    assert attributes[names.LANE] == checks.CHAT
    assert attributes[names.REPAIRS_FORMS] == ("missing_result",)
    assert [(e.attributes or {})[names.REPAIR_FORM] for e in span.events if e.name == names.EVENT_REPAIR] == [
        "missing_result"
    ]


@pytest.mark.parametrize("client", ["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("ours_first", [True, False], ids=["otel-toolturn-first", "otel-toolturn-last"])
@pytest.mark.parametrize("other", sorted(OTHERS))
def test_one_inference_span_per_request_with_the_repair_on_it(
    beside: Beside,
    otel: Otel,
    sim: Simulator,
    other: str,
    client: str,
    *,
    ours_first: bool,
    stream: bool,
) -> None:
    """The simulator gets the repaired history; one inference span, the other's (if it spans), carries the repair."""
    beside(other, ours_first)
    sdk = SDKS[OTHERS[other].sdk]
    messages = list(sdk.messages)
    if client == "sync":
        sdk.send(sim, messages, stream=stream)
    else:
        asyncio.run(sdk.send_async(sim, messages, stream=stream))
    _one_repaired_inference_span(otel, sim, other, messages)


def _one_repaired_inference_span(otel: Otel, sim: Simulator, other: str, messages: list[Any]) -> None:
    """The repaired history was served for ``messages``; one inference span, the other's if it spans, repaired."""
    sdk = SDKS[OTHERS[other].sdk]
    requests = [r for r in sim.requests if r.path == sdk.path]
    sent = checks.served_request(requests, messages, sdk.messages, dialect=sdk.dialect)
    assert len(sent) == len(sdk.messages) + 1  # the missing result, written in
    (span,) = _inference_spans(otel)
    assert span.instrumentation_scope is not None
    assert (span.instrumentation_scope.name != names.INSTRUMENTATION_NAME) is OTHERS[other].spans
    _repaired_on(span)
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("ours_first", [True, False], ids=["otel-toolturn-first", "otel-toolturn-last"])
def test_an_azure_call_by_its_whole_payload_gets_one_repaired_span(
    beside: Beside, otel: Otel, sim: Simulator, *, ours_first: bool, stream: bool
) -> None:
    """``complete({...})`` beside azure's own tracing: the payload is repaired in place; one span, azure's, repaired."""
    beside("azure-ai-inference", ours_first)
    messages = list(CHAT)
    endpoint = f"{sim.base_url}/models"
    with ChatCompletionsClient(endpoint=endpoint, credential=AzureKeyCredential("test-key"), retry_total=0) as client:
        response: Any = client.complete({"messages": messages, "model": "model-a", "stream": stream})
        if stream:
            assert list(response)
    _one_repaired_inference_span(otel, sim, "azure-ai-inference", messages)


@pytest.mark.parametrize("other", SPANNING)
def test_two_calls_in_a_row_each_get_their_own_span(beside: Beside, otel: Otel, sim: Simulator, other: str) -> None:
    """A span another instrumentation started for one call is never taken by the next: two calls, two spans."""
    beside(other, True)
    sdk = SDKS[OTHERS[other].sdk]
    sdk.send(sim, list(sdk.messages), stream=True)
    sdk.send(sim, list(sdk.messages), stream=False)
    spans = _inference_spans(otel)
    assert len(spans) == 2
    assert len({s.context.span_id for s in spans}) == 2
    for span in spans:
        _repaired_on(span)


@pytest.mark.parametrize("at_once", [False, True], ids=["in-a-row", "at-once"])
@pytest.mark.parametrize("ours_first", [True, False], ids=["otel-toolturn-first", "otel-toolturn-last"])
@pytest.mark.parametrize("other", SPANNING)
async def test_two_async_calls_each_get_their_own_span(
    beside: Beside, otel: Otel, sim: Simulator, other: str, *, ours_first: bool, at_once: bool
) -> None:
    """Two async calls, streamed then plain, in one task or in flight at once in two: two spans, each repaired."""
    beside(other, ours_first)
    sdk = SDKS[OTHERS[other].sdk]
    calls = [sdk.send_async(sim, list(sdk.messages), stream=stream) for stream in (True, False)]
    if at_once:
        await asyncio.gather(*calls)
    else:
        for call in calls:
            await call
    assert [r.status for r in sim.requests if r.path == sdk.path] == [200, 200]
    spans = _inference_spans(otel)
    assert len({s.context.span_id for s in spans}) == len(spans) == 2
    for span in spans:
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name != names.INSTRUMENTATION_NAME
        _repaired_on(span)


UNDONE: Final = [
    (other, ours_first, undone)
    for other in SPANNING
    for ours_first in (True, False)
    for undone in ("otel-toolturn", "other")
    # theirs undone from beneath ours: wrapt's unwrap (and azure's ``_original``) removes the outermost wrapper, ours
    if undone == "otel-toolturn" or ours_first
    # OpenLLMetry's ollama 0.62.4 wraps ``Client._request`` but unwraps ``Client.chat``: ours
    if not (undone == "other" and other == "openllmetry-ollama")
]


@pytest.mark.parametrize(
    ("other", "ours_first", "undone"), UNDONE, ids=[f"{o}-{'ours' if f else 'theirs'}-first-{u}" for o, f, u in UNDONE]
)
def test_uninstrument_of_one_leaves_the_other_working(
    beside: Beside,
    otel: Otel,
    sim: Simulator,
    other: str,
    *,
    ours_first: bool,
    undone: str,
) -> None:
    """Either instrumentation undone, the other still works: ours repairs on a span of its own, theirs still spans."""
    ours, theirs = beside(other, ours_first)
    sdk = SDKS[OTHERS[other].sdk]
    (ours if undone == "otel-toolturn" else theirs).uninstrument()
    if undone == "other":
        _sent(sim, sdk)
        (span,) = _inference_spans(otel)
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name == names.INSTRUMENTATION_NAME
        _repaired_on(span)
        return
    with pytest.raises(sdk.refused):
        sdk.send(sim, list(sdk.messages), stream=False)
    checks.refused_request([r for r in sim.requests if r.path == sdk.path])
    (span,) = _inference_spans(otel)
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name != names.INSTRUMENTATION_NAME
    assert names.LANE not in (span.attributes or {})


UNSEEN_STREAM: Final = ("azure-ai-inference", "async", True)
"""azure's async stream wrapper, made after ours, reads the HTTP response itself around otel-toolturn's stream."""


@pytest.mark.parametrize("client", ["sync", "async"])
@pytest.mark.parametrize("ours_first", [True, False], ids=["otel-toolturn-first", "otel-toolturn-last"])
@pytest.mark.parametrize("other", SPANNING)
def test_a_torn_stream_is_on_the_other_s_span_in_either_order(
    beside: Beside, otel: Otel, sim: Simulator, other: str, client: str, *, ours_first: bool
) -> None:
    """A stream cut before its end: torn on the other's span, counted once, whichever stream wrapper is outside.

    The other's wrapper beneath ours (OpenLLMetry's ollama always; the others when otel-toolturn was instrumented
    last) ends its span before the stream's end reaches otel-toolturn, and OpenLLMetry's groq hands back the SDK's
    stream as a generator: its span's end waits for the stream's, so what the end tells is on the span.
    """
    beside(other, ours_first)
    sim.enqueue(ScriptedTurn(text="Nearly.", misbehaviours=("no_finish",)))
    sdk = SDKS[OTHERS[other].sdk]

    def read() -> None:
        if client == "sync":
            sdk.send(sim, list(sdk.messages), stream=True)
        else:
            asyncio.run(sdk.send_async(sim, list(sdk.messages), stream=True))

    with contextlib.suppress(AssertionError):  # a helper's check of the last chunk, which the cut took
        read()
    (span,) = _inference_spans(otel)
    _repaired_on(span)
    attributes = span.attributes or {}
    seen = (other, client, ours_first) != UNSEEN_STREAM
    assert (attributes.get(names.STREAM_TORN), otel.total(names.STREAM_TORN_COUNT.name)) == (
        (True, 1) if seen else (None, 0)
    )
    assert [e.name for e in span.events].count(names.EVENT_STREAM_TORN) == int(seen)
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0
