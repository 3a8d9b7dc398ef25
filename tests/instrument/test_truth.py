"""Telemetry that tells the truth: a caller's close is not a torn stream, init's exporters never block a call.

The streams go through the real SDKs against the simulator: a stream the server cuts (``no_finish``,
``cut_arguments``) is torn; one the caller stops reading (``close()``, ``break`` then context exit,
collection) before its final frame is recorded as closed early, never torn, and the
calls still open when the caller stopped are not counted as stream drops.
"""

from __future__ import annotations

import gc
import math
import random
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import anthropic
import httpx2
import openai
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

from otel_toolturn import REPAIR_FORMS, Lane
from otel_toolturn.instrument import _count_export_error, _setup, names
from otel_toolturn.instrument._config import LANES_OF, NAMES_OF, Provider
from otel_toolturn.instrument._exporters import CountingSpanExporter
from otel_toolturn.instrument._patches import STATE
from otel_toolturn.instrument._record import CallRecord
from otel_toolturn.instrument._telemetry import Telemetry
from otel_toolturn.simulator import Misbehaviour, ScriptedCall, ScriptedTurn, Simulator
from otel_toolturn.streams import closed_by_caller, observer_for, sse_data
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.wire import Call, Wire, respond

LANES: Final[tuple[Lane, ...]] = ("anthropic.messages", "openai.chat_completions", "openai.responses")
MODEL: Final = "model-a"
ASK: Final = [{"role": "user", "content": "read it"}]
CALL: Final = ScriptedCall(name="read", arguments={"path": "a/long/enough/path/to/split", "lines": [1, 2, 3]})


def _stream(sim: Simulator, lane: Lane) -> Any:
    """One streamed call in ``lane`` (the SDK's ``Stream``, proxied), nothing read yet."""
    if lane == "anthropic.messages":
        client: Any = anthropic.Anthropic(base_url=sim.base_url, api_key="k", max_retries=0)
        return client.messages.create(model=MODEL, max_tokens=64, messages=ASK, stream=True)
    client = openai.OpenAI(base_url=sim.openai_base_url, api_key="k", max_retries=0)
    if lane == "openai.chat_completions":
        return client.chat.completions.create(model=MODEL, messages=ASK, stream=True)
    return client.responses.create(model=MODEL, input=ASK, stream=True)


def _async_stream(sim: Simulator, lane: Lane) -> Any:
    """The awaitable of one streamed call in ``lane`` on the async client."""
    if lane == "anthropic.messages":
        client: Any = anthropic.AsyncAnthropic(base_url=sim.base_url, api_key="k", max_retries=0)
        return client.messages.create(model=MODEL, max_tokens=64, messages=ASK, stream=True)
    client = openai.AsyncOpenAI(base_url=sim.openai_base_url, api_key="k", max_retries=0)
    if lane == "openai.chat_completions":
        return client.chat.completions.create(model=MODEL, messages=ASK, stream=True)
    return client.responses.create(model=MODEL, input=ASK, stream=True)


def _in_arguments(event: Any) -> bool:
    """Whether ``event`` carries a piece of a tool call's argument text (any lane's SDK event)."""
    kind = getattr(event, "type", None)
    if kind == "content_block_delta":
        return getattr(event.delta, "type", None) == "input_json_delta"
    if kind == "response.function_call_arguments.delta":
        return True
    choices = getattr(event, "choices", None) or []
    return any(choice.delta.tool_calls for choice in choices)


def _torn(otel: Otel, lane: Lane) -> tuple[bool, int, float]:
    """The span's torn attribute, the torn events and the torn counter of ``lane``."""
    (span,) = otel.call_spans()
    attributes = span.attributes or {}
    return (
        attributes.get(names.STREAM_TORN) is True,
        len(otel.events(names.EVENT_STREAM_TORN)),
        otel.total(names.STREAM_TORN_COUNT.name, toolturn__lane=lane),
    )


def _closed_early(otel: Otel) -> tuple[object, object]:
    (span,) = otel.call_spans()
    attributes = span.attributes or {}
    return attributes.get(names.STREAM_CLOSED_EARLY), attributes.get(names.STREAM_CLOSED_EARLY_UNFINISHED)


def _assert_closed_by_the_caller(otel: Otel, lane: Lane, *, unfinished: int) -> None:
    assert _torn(otel, lane) == (False, 0, 0)
    assert _closed_early(otel) == (True, unfinished)
    assert otel.events(names.EVENT_STREAM_DROP) == []
    assert otel.total(names.STREAM_DROPS.name) == 0


@pytest.mark.parametrize("lane", LANES)
def test_a_stream_closed_after_its_first_event_is_not_torn(sim: Simulator, instrument: Instrument, lane: Lane) -> None:
    """The caller reads one event and calls ``close()``: closed early, not torn, nothing dropped."""
    otel = instrument()
    sim.enqueue(ScriptedTurn(calls=(CALL,)))
    stream = _stream(sim, lane)
    next(iter(stream))
    stream.close()
    _assert_closed_by_the_caller(otel, lane, unfinished=0)


@pytest.mark.parametrize("lane", LANES)
def test_a_break_inside_a_tool_call_then_context_exit_is_not_a_drop(
    sim: Simulator, instrument: Instrument, lane: Lane
) -> None:
    """``break`` inside a call's arguments, then ``with`` exit: not torn; the open call is unfinished, not dropped."""
    otel = instrument()
    sim.enqueue(ScriptedTurn(calls=(CALL,)))
    with _stream(sim, lane) as stream:
        for event in stream:
            if _in_arguments(event):
                break
    _assert_closed_by_the_caller(otel, lane, unfinished=1)


@pytest.mark.parametrize("lane", LANES)
def test_a_stream_collected_unread_is_not_torn(sim: Simulator, instrument: Instrument, lane: Lane) -> None:
    """A stream read once and dropped by the caller (collected): its span ends once, closed early, not torn."""
    otel = instrument()
    sim.enqueue(ScriptedTurn(text="Some words to stream."))
    stream = _stream(sim, lane)
    next(iter(stream))
    response = stream.response.__wrapped__  # the SDK's HTTP response, closed below as the SDK's finalizer would
    del stream
    gc.collect()
    _assert_closed_by_the_caller(otel, lane, unfinished=0)
    response.close()


@pytest.mark.parametrize("lane", LANES)
async def test_an_async_stream_closed_after_its_first_event_is_not_torn(
    sim: Simulator, instrument: Instrument, lane: Lane
) -> None:
    """The async SDK: one event read, ``break`` and ``close()``: closed early, not torn, nothing dropped."""
    otel = instrument()
    sim.enqueue(ScriptedTurn(calls=(CALL,)))
    stream = await _async_stream(sim, lane)
    async for _ in stream:
        break
    await stream.close()
    _assert_closed_by_the_caller(otel, lane, unfinished=0)


def test_anthropic_stream_manager_left_early_is_not_torn(sim: Simulator, instrument: Instrument) -> None:
    """``messages.stream()`` exited inside a tool call's arguments: closed early, the call unfinished, not torn."""
    otel = instrument()
    sim.enqueue(ScriptedTurn(calls=(CALL,)))
    client = anthropic.Anthropic(base_url=sim.base_url, api_key="k", max_retries=0)
    with client.messages.stream(model=MODEL, max_tokens=64, messages=ASK) as stream:  # type: ignore[arg-type]
        for event in stream:
            if event.type == "input_json":
                break
    _assert_closed_by_the_caller(otel, "anthropic.messages", unfinished=1)


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("cut", ["no_finish", "cut_arguments"])
def test_a_stream_the_server_cuts_is_torn(
    sim: Simulator, instrument: Instrument, lane: Lane, cut: Misbehaviour
) -> None:
    """The server ends the stream before its final frame: torn (attribute, event, counter); never closed early."""
    otel = instrument()
    sim.enqueue(ScriptedTurn(calls=(CALL,), misbehaviours=(cut,)))
    with _stream(sim, lane) as stream:
        for _ in stream:
            pass
    assert _torn(otel, lane) == (True, 1, 1)
    assert _closed_early(otel) == (None, None)
    cut_calls = otel.total(names.STREAM_DROPS.name, toolturn__stream__drop__cause="truncated")
    assert cut_calls == (1 if cut == "cut_arguments" else 0)


@pytest.mark.parametrize("lane", LANES)
def test_a_stream_read_to_its_end_then_closed_is_neither(sim: Simulator, instrument: Instrument, lane: Lane) -> None:
    """A stream read whole and then closed by the caller: neither torn nor closed early."""
    otel = instrument()
    sim.enqueue(ScriptedTurn(calls=(CALL,)))
    with _stream(sim, lane) as stream:
        for _ in stream:
            pass
        stream.close()
    assert _torn(otel, lane) == (False, 0, 0)
    assert _closed_early(otel) == (None, None)


# --- exporters init creates: batched, so a hanging one never holds a call ------------------------------
class _Stuck:
    """An OTLP export that blocks until released; on the caller's thread it only counts itself and returns."""

    def __init__(self, caller: int) -> None:
        self.caller = caller
        self.release = threading.Event()
        self.entered = threading.Event()
        self.on_caller_thread = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        del spans
        if threading.get_ident() == self.caller:
            self.on_caller_thread += 1
            return SpanExportResult.SUCCESS
        self.entered.set()
        self.release.wait()
        return SpanExportResult.SUCCESS


def test_a_hanging_otlp_exporter_init_creates_does_not_hold_the_call(
    sim: Simulator, instrument: Instrument, otel: Otel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trace pipeline ``init`` builds batches: calls return while its OTLP export hangs, never on their thread."""
    stuck = _Stuck(threading.get_ident())
    monkeypatch.setattr(OTLPSpanExporter, "export", stuck.export)
    environ = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_BSP_EXPORT_TIMEOUT": "20"}
    provider = _setup.tracer_provider(environ, Resource.create(), _count_export_error)
    (processor,) = provider._active_span_processor._span_processors  # how init built it
    assert isinstance(processor, BatchSpanProcessor)
    assert isinstance(processor._batch_processor._exporter, CountingSpanExporter)
    otel.tracer_provider = provider
    instrument()
    try:
        client = openai.OpenAI(base_url=sim.openai_base_url, api_key="k", max_retries=0)
        client.chat.completions.create(model=MODEL, messages=ASK)  # type: ignore[arg-type]
        assert provider.force_flush()  # the export hangs; abandoned at its 20 ms deadline
        assert stuck.entered.is_set()
        answers = [client.chat.completions.create(model=MODEL, messages=ASK) for _ in range(3)]  # type: ignore[arg-type]
        assert [a.choices[0].finish_reason for a in answers] == ["stop"] * 3
        assert stuck.on_caller_thread == 0
        assert not stuck.release.is_set()
    finally:
        stuck.release.set()
        provider.shutdown()
    assert otel.total(names.INSTRUMENTATION_ERRORS.name, toolturn__error__stage="span_export") >= 1


# --- bounded labels: 10,000 calls with hostile tool names and ids --------------------------------------
SDK_CALLS: Final = 1_000
RECORDED: Final = 10_000
HANDOFF_TOOLS: Final = ("agent_*",)
TIMES: Final = "\N{MULTIPLICATION SIGN}"
"""The product sign of the document's label-bounds table."""
DOC: Final = (Path(__file__).resolve().parents[2] / "docs" / "telemetry.md").read_text(encoding="utf-8")


def _hostile(rng: random.Random) -> str:
    """A tool name or id as a hostile or careless peer might send it: long, controls, globs, unicode, handoff-like."""
    pick = rng.randrange(6)
    if pick == 0:
        return "agent_" + "".join(rng.choice("abcxyz_*?[]") for _ in range(rng.randrange(1, 12)))
    if pick == 1:
        return "t" * rng.randrange(200, 5_000)
    if pick == 2:
        return "".join(chr(rng.randrange(0, 0x20)) for _ in range(rng.randrange(1, 8))) + "\x7f\x9f"
    if pick == 3:
        return "agent_" + "é\u202e🙂" * rng.randrange(1, 100)
    return f"tool_{rng.getrandbits(64):x}"


def _ask(lane: Lane, call_id: str, name: str) -> dict[str, Any]:
    """A request whose last tool call has no result (a repair names the hostile id), in ``lane``'s spelling."""
    if lane == "anthropic.messages":
        use = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        messages = [*ASK, {"role": "assistant", "content": [use]}, {"role": "user", "content": "go on"}]
        return {"model": MODEL, "max_tokens": 8, "messages": messages}
    if lane == "openai.chat_completions":
        function = {"name": name, "arguments": "{}"}
        assistant = {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": function}]}
        return {"model": MODEL, "messages": [*ASK, assistant, {"role": "user", "content": "go on"}]}
    item = {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}
    return {"model": MODEL, "input": [*ASK, item, {"role": "user", "content": "go on"}]}


def _points(otel: Otel) -> dict[str, list[dict[str, object]]]:
    """Every ``toolturn.*`` metric's attribute sets, as the in-memory reader holds them."""
    found: dict[str, list[dict[str, object]]] = {}
    data = otel.metric_reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                sets = found.setdefault(metric.name, [])
                sets.extend(dict(point.attributes or {}) for point in metric.data.data_points)
    return {name: sets for name, sets in found.items() if name.startswith("toolturn.")}


def _documented_bounds() -> dict[str, int | None]:
    """The label-bounds table of the document, each product worked out (``None``: open, by exception class)."""
    section = DOC.split("### Label bounds", 1)[1].split("\n## ", 1)[0]
    sizes = {"`REPAIR_FORMS`": len(REPAIR_FORMS), "`handoff_tools` entries": len(HANDOFF_TOOLS)}
    bounds: dict[str, int | None] = {}
    for line in section.splitlines():
        if not line.startswith("| `toolturn."):
            continue
        name, product = (cell.strip() for cell in line.split("|")[1:3])
        factors = [int(f) if f.isdigit() else sizes.get(f) for f in product.split(f" {TIMES} ")]
        bounds[name.strip("`")] = math.prod(f for f in factors if f is not None) if None not in factors else None
    return bounds


def _hostile_reply(rng: random.Random, lane: Lane, *, stream: bool) -> httpx2.Response:
    """A response in ``lane`` with 0-2 calls of hostile names and ids, some arguments cut; one stream in ten cut."""
    whole = lane == "anthropic.messages" and not stream  # a whole Anthropic message carries an object
    arguments = ("{}", '{"path": "a"}') if whole else ("{}", '{"path": "a"}', '{"path": "a', "[1]")
    calls = [Call(_hostile(rng), _hostile(rng), rng.choice(arguments)) for _ in range(rng.randrange(0, 3))]
    return respond(lane, stream=stream, calls=calls, cut=stream and rng.random() < 0.1)


def _sdk_call(wire: Wire, lane: Lane, ask: dict[str, Any], *, stream: bool) -> None:
    """One call through the real SDK over ``wire``, a stream read to its end."""
    if lane == "anthropic.messages":
        result: Any = wire.anthropic().messages.create(**ask, stream=stream)
    elif lane == "openai.chat_completions":
        result = wire.openai().chat.completions.create(**ask, stream=stream)
    else:
        result = wire.openai().responses.create(**ask, stream=stream)
    if stream:
        for _ in result:
            pass


def _recorded(telemetry: Telemetry, lane: Lane, reply: httpx2.Response, *, stream: bool, caller_closed: bool) -> None:
    """One response through the record path the patches use: the stream's frames fed, or the whole body checked."""
    provider: Provider = "anthropic" if lane == "anthropic.messages" else "openai"
    record = CallRecord(telemetry, lane=lane, provider=provider, requested_model=MODEL, server_address=None)
    if not stream:
        record.response(reply.json())
        return
    record.start_stream()
    for data in sse_data(reply.content):
        record.feed(data)
    record.finish(caller_closed=caller_closed)


def test_labels_stay_bounded_under_hostile_names_and_ids(instrument: Instrument) -> None:
    """1,000 SDK calls and 10,000 recorded responses, hostile tool names and ids: every instrument within its bound."""
    otel = instrument(handoff_tools=HANDOFF_TOOLS)
    rng = random.Random(20_260_801)  # noqa: S311 - a reproducible test input, not a secret
    wire = Wire(responder=lambda lane, body: _hostile_reply(rng, lane, stream=bool(body.get("stream"))))
    for n in range(SDK_CALLS):
        lane = LANES[n % 3]
        _sdk_call(wire, lane, _ask(lane, _hostile(rng), _hostile(rng)), stream=n % 2 == 0)
    telemetry = STATE.telemetry
    assert telemetry is not None
    for n in range(RECORDED):
        lane, stream = LANES[n % 3], n % 2 == 0
        reply = _hostile_reply(rng, lane, stream=stream)
        _recorded(telemetry, lane, reply, stream=stream, caller_closed=rng.random() < 0.1)
    points = _points(otel)
    bounds = _documented_bounds()
    assert set(bounds) == {i.name for i in names.INSTRUMENTS}
    pairs = {(lane, name) for provider, lanes in LANES_OF.items() for lane in lanes for name in NAMES_OF[provider]}
    assert bounds[names.LOSSY_PROJECTIONS.name] == len(pairs)  # the document counts every SDK's lane and provider
    assert bounds[names.INSTRUMENTATION_ERRORS.name] is None  # open: one set per stage and exception class
    assert names.INSTRUMENTATION_ERRORS.name not in points  # and nothing failed here
    counts = {name: len({tuple(sorted(s.items())) for s in sets}) for name, sets in points.items()}
    over = {name: (count, bounds[name]) for name, count in counts.items() if count > (bounds[name] or 0)}
    assert over == {}
    assert counts[names.REPAIRS.name] >= 1
    assert counts[names.STREAM_DROPS.name] >= 1
    assert counts[names.HANDOFFS.name] == len(LANES)
    longest = max(len(str(value)) for sets in points.values() for s in sets for value in s.values())
    assert longest <= names.LABEL_MAX_LENGTH


def test_a_caller_close_keeps_what_the_provider_sent_wrong() -> None:
    """``closed_by_caller``: a call the wire closed with cut arguments stays a drop; only the open call is spared."""
    observer = observer_for("anthropic.messages", requested_model=MODEL)
    frames: list[dict[str, object]] = [
        {"type": "message_start", "message": {"id": "msg_1", "model": MODEL, "usage": {"input_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "bad", "name": "f"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"a'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "open", "name": "g"}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"b'}},
    ]
    for frame in frames:
        observer.feed(frame)
    torn = observer.finish()
    closed = closed_by_caller(torn)
    assert (torn.torn, torn.closed_early, torn.drops[0].call_ids) == (True, False, ("bad", "open"))
    assert (closed.torn, closed.closed_early) == (False, True)
    assert [(d.cause, d.count, d.call_ids) for d in closed.drops] == [("truncated", 1, ("bad",))]
    assert closed.unfinished is not None
    assert closed.unfinished.call_ids == ("open",)
    assert [note.count for note in closed.notes] == [1]
