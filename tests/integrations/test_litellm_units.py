"""The LiteLLM integration's pure parts and its registration, without a provider."""

from __future__ import annotations

import gc
import importlib
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import wrapt

from otel_toolturn import LANES, Lane
from otel_toolturn.instrument import Options, ToolTurnInstrumentor
from otel_toolturn.instrument._patches import STATE
from otel_toolturn.integrations import _litellm_logger
from otel_toolturn.integrations._litellm_calls import OpenCalls, join
from otel_toolturn.integrations._litellm_entries import BUILDERS, ENTRIES, ROUTES, Entry, route_of, wrapper_for
from otel_toolturn.integrations._litellm_lanes import bare_model, lane_of
from otel_toolturn.integrations.litellm import LOGGER, register
from otel_toolturn.lanes import adapter_for
from tests.instrument.conftest import Otel, make_otel
from tests.integrations.litellm_calls import litellm

pytestmark = pytest.mark.filterwarnings("ignore:Items? .* using the `ReadOnly` qualifier:UserWarning")


@pytest.mark.parametrize(
    ("call_type", "provider", "body", "lane"),
    [
        ("completion", "openai", {"messages": []}, "openai.chat_completions"),
        ("acompletion", "groq", {"messages": []}, "openai.chat_completions"),
        ("completion", "anthropic", {"messages": []}, "anthropic.messages"),
        ("responses", "openai", {"input": []}, "openai.responses"),
        ("aresponses", "openai", {"input": "hi"}, "openai.responses"),
        ("responses", "anthropic", {"messages": []}, "anthropic.messages"),
        ("completion", "bedrock", {"messages": []}, None),
        ("completion", "gemini", {"contents": []}, "gemini.generate_content"),
        ("acompletion", "vertex_ai", {"contents": []}, "gemini.generate_content"),
        ("responses", "gemini", {"contents": []}, "gemini.generate_content"),
        ("completion", "gemini", {"messages": []}, None),
        ("completion", "openai", {"contents": []}, None),
        ("anthropic_messages", "anthropic", {"messages": []}, None),
        ("embedding", "openai", {"input": []}, None),
        ("completion", None, {"messages": []}, None),
    ],
)
def test_lane_of_names_the_wire_or_none(
    call_type: str, provider: str | None, body: dict[str, object], lane: str | None
) -> None:
    """Chat and Responses bodies of OpenAI-compatible, Anthropic and Gemini providers get their lane; else none."""
    assert lane_of(call_type, route_of(provider, ("groq",)), body) == lane


def test_routes_name_the_provider_each_call_is_recorded_with() -> None:
    """Gemini's routes carry their backend's provider name; the others their wire's family; unknown ones none."""
    assert {name: route.provider_name for name, route in ROUTES.items() if route.provider_name} == {
        "gemini": "gcp.gemini",
        "vertex_ai": "gcp.vertex_ai",
        "vertex_ai_beta": "gcp.vertex_ai",
    }
    assert route_of("groq", ("groq",)) == ROUTES["openai"]
    assert route_of("groq") is None
    assert route_of("bedrock") is None


def test_bare_model_drops_only_the_routing_prefix() -> None:
    """``anthropic/claude-x`` names ``claude-x``; a model without the prefix is kept; none is ``None``."""
    assert bare_model("anthropic/claude-x", "anthropic") == "claude-x"
    assert bare_model("claude-x", "anthropic") == "claude-x"
    assert bare_model(None, "anthropic") is None


GEMINI = adapter_for("gemini.generate_content")


@pytest.mark.parametrize("lane", [lane for lane in LANES if lane != "gemini.generate_content"])
def test_a_body_spelled_as_its_sdk_call_is_read_as_it_is_and_gets_only_what_changed(lane: Lane) -> None:
    """Every lane but Gemini's REST: the body is the SDK call itself; only a field the decision replaced is written."""
    adapter = adapter_for(lane)
    transcript: list[object] = []
    body: dict[str, object] = {"model": "m", adapter.transcript_field: transcript}
    request = adapter.sdk_request(body, "other")
    assert request is body
    assert adapter.body_writes(body, request, dict(body)) == {}
    repaired: list[object] = [{"role": "user", "content": "hi"}]
    assert adapter.body_writes(body, request, {**body, adapter.transcript_field: repaired}) == {
        adapter.transcript_field: repaired
    }


def test_gemini_request_reads_the_rest_body_as_the_google_genai_call() -> None:
    """``contents`` as they are; the system instruction, tools and tool config (either spelling) under ``config``."""
    contents: list[object] = [{"role": "user", "parts": [{"text": "hi"}]}]
    tools = [{"function_declarations": [{"name": "read"}]}]
    body: dict[str, object] = {
        "contents": contents,
        "system_instruction": {"parts": [{"text": "be brief"}]},
        "tools": tools,
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {"max_output_tokens": 64},
    }
    request = GEMINI.sdk_request(body, "gemini-x")
    assert request["contents"] is contents
    assert request == {
        "model": "gemini-x",
        "contents": contents,
        "config": {
            "system_instruction": body["system_instruction"],
            "tools": tools,
            "tool_config": body["toolConfig"],
        },
    }
    assert GEMINI.sdk_request({"contents": contents, "systemInstruction": "s"}, None) == {
        "contents": contents,
        "config": {"system_instruction": "s"},
    }


def test_gemini_writes_only_what_the_decision_changed() -> None:
    """Unchanged: nothing to write; new contents: ``contents``; tools withheld: the body's own tool-config key."""
    body: dict[str, object] = {"contents": [], "tool_config": {"function_calling_config": {"mode": "AUTO"}}}
    request = GEMINI.sdk_request(body, None)
    assert GEMINI.body_writes(body, request, request) == {}
    repaired: list[object] = [{"role": "user", "parts": [{"text": "hi"}]}]
    off = {"function_calling_config": {"mode": "NONE"}}
    sent = {**request, "contents": repaired, "config": {**request["config"], "tool_config": off}}  # type: ignore[dict-item]
    assert GEMINI.body_writes(body, request, sent) == {"contents": repaired, "tool_config": off}
    bare: dict[str, object] = {"contents": []}
    plain = GEMINI.sdk_request(bare, None)
    assert GEMINI.body_writes(bare, plain, {**plain, "config": {"tool_config": off}}) == {"toolConfig": off}


class _Record:
    """What the entry wrappers and ``OpenCalls`` read of a ``CallRecord``: its lane, its stream, its end."""

    def __init__(self, lane: str = "anthropic.messages") -> None:
        self.lane = lane
        self.finished = 0
        self.ends: list[tuple[BaseException | None, bool]] = []
        self.fed: list[object] = []

    def finish(self, error: BaseException | None = None, *, caller_closed: bool = False) -> None:
        self.finished += 1
        self.ends.append((error, caller_closed))

    def start_stream(self) -> None:
        pass

    def feed(self, event: object) -> None:
        self.fed.append(event)


def test_open_calls_end_a_retried_request_and_the_oldest_past_capacity() -> None:
    """A second request of one call ends the first; past capacity the oldest ends; ``take`` hands it over."""
    calls = OpenCalls(capacity=2)
    first, retry, other, third = _Record(), _Record(), _Record(), _Record()
    calls.start("a", first)  # type: ignore[arg-type]
    calls.start("a", retry)  # type: ignore[arg-type]
    assert (first.finished, len(calls)) == (1, 1)
    calls.start("b", other)  # type: ignore[arg-type]
    calls.start("c", third)  # type: ignore[arg-type]
    assert retry.finished == 1
    taken: object = calls.take("b")
    assert taken is other
    assert calls.take("b") is None
    calls.close_all()
    assert (third.finished, other.finished, len(calls)) == (1, 0, 0)


@pytest.fixture
def otel() -> Otel:
    return make_otel()


def _ours() -> list[object]:
    return [cb for cb in litellm.callbacks if type(cb).__name__ == "ToolTurnLogger"]


def test_instrument_registers_once_and_uninstrument_removes(otel: Otel) -> None:
    """With the ``litellm`` provider, instrumenting adds the callback once; uninstrumenting removes it."""
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(options=Options(), tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    try:
        assert len(_ours()) == 1
    finally:
        instrumentor.uninstrument()
    assert _ours() == []


def test_without_the_litellm_provider_nothing_is_registered(otel: Otel) -> None:
    """``providers`` without ``litellm`` leaves LiteLLM's callbacks alone."""
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(
        options=Options(providers=("openai", "anthropic")),
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
    )
    try:
        assert _ours() == []
    finally:
        instrumentor.uninstrument()


def test_a_failing_law_is_counted_and_the_request_goes_as_it_stands(
    otel: Otel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The law raising inside the hook: one ``law`` error counted, the body untouched, the span ended once."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise ValueError("refused")

    monkeypatch.setattr(_litellm_logger, "decide_request", refuse)
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(options=Options(), tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    try:
        messages = [{"role": "user", "content": "hi"}]
        body: dict[str, object] = {"model": "m", "messages": messages}
        kwargs: dict[str, object] = {
            "call_type": "completion",
            "custom_llm_provider": "openai",
            "litellm_call_id": "call-1",
            "additional_args": {"complete_input_dict": body},
        }
        LOGGER.log_pre_api_call("m", None, kwargs)
        assert body == {"model": "m", "messages": messages}
        assert body["messages"] is messages
        assert otel.total("toolturn.instrumentation.errors", toolturn__error__stage="law") == 1
        assert len(otel.spans()) == 1
        assert len(LOGGER.calls) == 0
    finally:
        instrumentor.uninstrument()


def test_register_wraps_each_entry_point_once_and_unregister_restores_litellm_own(otel: Otel) -> None:
    """Every entry point of ``ENTRIES`` exists and is wrapped once while instrumented; LiteLLM's own is back after."""
    assert litellm.anthropic.messages is importlib.import_module("litellm.anthropic_interface.messages")  # type: ignore[attr-defined]
    originals = _wrapped_places()
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(options=Options(), tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    try:
        register()
        for place, original in originals.items():
            wrapped = vars(place[0])[place[1]]
            assert isinstance(wrapped, wrapt.FunctionWrapper)
            assert wrapped.__wrapped__ is original
    finally:
        instrumentor.uninstrument()
    assert _wrapped_places() == originals


def _wrapped_places() -> dict[tuple[object, str], object]:
    """What each entry point of ``ENTRIES`` and builder of ``BUILDERS`` is now, by (module or class, name)."""
    places: list[tuple[object, str]] = [(importlib.import_module(entry.module), entry.name) for entry in ENTRIES]
    places += [(getattr(importlib.import_module(b.module), b.owner), b.name) for b in BUILDERS]
    return {place: vars(place[0])[place[1]] for place in places}


def test_a_body_built_and_never_sent_records_nothing(otel: Otel) -> None:
    """A Converse body LiteLLM builds with no request after it: decided, no span; another call's hook takes nothing."""
    from litellm.llms.bedrock.chat.converse_transformation import AmazonConverseConfig  # noqa: PLC0415

    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(options=Options(), tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    try:
        messages: list[Any] = [{"role": "user", "content": "hi"}]
        body = AmazonConverseConfig()._transform_request(
            model="m", messages=messages, optional_params={}, litellm_params={"litellm_call_id": "built-1"}
        )
        assert body["messages"] == [{"role": "user", "content": [{"text": "hi"}]}]
        kwargs: dict[str, object] = {
            "call_type": "completion",
            "custom_llm_provider": "bedrock",
            "litellm_call_id": "sent-2",
            "additional_args": {"complete_input_dict": "{}"},
        }
        LOGGER.log_pre_api_call("m", None, kwargs)
        assert otel.spans() == []
        assert len(LOGGER.calls) == 0
    finally:
        instrumentor.uninstrument()


_SYNC_CHAT = Entry(module="m", name="completion", shape="openai.chat_completions", events=True, is_async=False)


def _sending(calls: OpenCalls, records: list[_Record], result: Callable[[], object]) -> Callable[..., object]:
    """A stand-in for a LiteLLM function: each record a request it sends (as the hooks note them), then ``result``."""

    def send() -> object:
        for index, record in enumerate(records):
            calls.start(f"call-{index}", record)  # type: ignore[arg-type]
            join(f"call-{index}")
        return result()

    return send


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wrappers act as under a live instrumentation."""
    monkeypatch.setattr(STATE, "telemetry", object())


def test_a_call_ends_its_earlier_requests_at_return_and_its_stream_at_exhaustion(live: None) -> None:
    """A resent request ends when the call returns; the stream's ends once, when read to its end, its events fed."""
    calls = OpenCalls()
    earlier, last = _Record(), _Record("openai.chat_completions")
    wrapper = wrapper_for(_SYNC_CHAT, calls)
    stream: Any = wrapper(_sending(calls, [earlier, last], lambda: iter(["a", "b"])), None, (), {})
    assert (earlier.finished, last.finished, len(calls)) == (1, 0, 0)
    assert list(stream) == ["a", "b"]
    assert last.ends == [(None, False)]
    assert last.fed == ["a", "b"]


def test_a_call_that_raises_ends_each_request_with_its_exception(live: None) -> None:
    """The wrapped function raising: each request it sent ends with that very exception, which reaches the caller."""
    calls = OpenCalls()
    records = [_Record(), _Record()]
    refused = ValueError("refused")

    def fail() -> object:
        raise refused

    with pytest.raises(ValueError, match="refused") as raised:
        wrapper_for(_SYNC_CHAT, calls)(_sending(calls, records, fail), None, (), {})
    assert raised.value is refused
    assert [record.ends for record in records] == [[(refused, False)], [(refused, False)]]


def test_a_stream_closed_or_dropped_unread_ends_as_the_caller_stop(live: None) -> None:
    """``close()`` ends the stream's request once, as closed by the caller; a stream dropped unread does the same."""
    calls = OpenCalls()

    class Closable(Iterator[object]):
        def __next__(self) -> object:
            return "a"

        def close(self) -> None:
            pass

    closed, dropped = _Record(), _Record()
    stream: Any = wrapper_for(_SYNC_CHAT, calls)(_sending(calls, [closed], Closable), None, (), {})
    stream.close()
    assert closed.ends == [(None, True)]
    wrapper_for(_SYNC_CHAT, calls)(_sending(calls, [dropped], Closable), None, (), {})
    gc.collect()
    assert dropped.ends == [(None, True)]


def test_the_lane_rule_is_pure_it_loads_neither_litellm_nor_opentelemetry() -> None:
    """Importing the lane rule loads no LiteLLM, no OpenTelemetry and no wrapt (its module docstring's promise)."""
    code = (
        "import sys, otel_toolturn.integrations._litellm_lanes\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'litellm', 'opentelemetry', 'wrapt'}))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
