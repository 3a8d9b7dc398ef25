"""The benchmarks measure what they say: their transcripts are the ones the README's figures name.

No timing is asserted here (the machines are noisy); these tests hold the inputs the benchmarks
time to their descriptions, so a figure never silently measures something else.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

import anthropic
import botocore.client
import google.genai.models
import groq.resources.chat.completions
import httpx2
import pytest
from google import genai
from google.genai import types as genai_types
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

import otel_toolturn
from bench import (
    _fuzz_make,
    check_fuzz,
    check_memory,
    fuzz,
    gateway,
    instructions,
    law,
    lockstep,
    overhead,
    own,
    stability,
)
from bench._move_up import move_up
from bench._session import session, session_round
from bench.floor import SpanOnly
from otel_toolturn import Lane, ensure_tool_turn_invariants, validate
from otel_toolturn.cli import main as cli
from otel_toolturn.instrument._digests import DigestCache
from otel_toolturn.lanes.openai_responses import CALL_TYPES

ROOT: Final = Path(__file__).resolve().parents[1]


def _objects(transcript: list[dict[str, Any]]) -> set[int]:
    """The ids of every message, and of every list and dict inside one, of a transcript."""
    ids: set[int] = set()
    for message in transcript:
        ids.add(id(message))
        for value in message.values():
            if isinstance(value, (list, dict)):
                ids.add(id(value))
                ids.update(id(item) for item in value if isinstance(item, dict))
    return ids


@pytest.mark.parametrize("lane", ["chat", "anthropic", "gemini"])
def test_the_growing_conversation_resends_its_objects_one_round_longer(lane: str) -> None:
    """``Conversation``: each call is the previous transcript's very objects plus one round of three messages."""
    conversation = overhead.transcripts(lane)[""]
    first, second = conversation.next(), conversation.next()
    assert len(second) == len(first) + 3
    assert all(a is b for a, b in zip(first, second, strict=False))


@pytest.mark.parametrize("lane", ["chat", "anthropic", "gemini"])
def test_the_rebuilt_conversation_sends_equal_values_as_new_objects(lane: str) -> None:
    """``, rebuilt``: the growing conversation's values, and not one of its objects, on every call."""
    plain, rebuilt = overhead.transcripts(lane)[""], overhead.transcripts(lane)[", rebuilt"]
    for _ in range(3):
        same, fresh = plain.next(), rebuilt.next()
        assert fresh == same
        assert _objects(fresh).isdisjoint(_objects(same))


@pytest.mark.parametrize("lane", ["chat", "anthropic", "gemini"])
def test_the_cold_transcripts_are_never_remembered(lane: str) -> None:
    """``, cold``: no two calls' transcripts are equal or share a message object, so no digest is reused."""
    cold = overhead.transcripts(lane)[", cold"]
    cache = DigestCache(slots=3)
    sent = [cold.next() for _ in range(3)]
    assert sent[0] != sent[1] != sent[2] != sent[0]
    assert sent[0][0] != sent[1][0] != sent[2][0] != sent[0][0]
    for transcript in sent:
        assert cache._remember(transcript).messages == tuple(transcript)
        assert all(e.messages[0] is not transcript[0] for e in cache._recent[:-1])


def test_the_split_reads_other_transcripts_than_the_timed_calls() -> None:
    """``--split``: its phases' transcripts differ from the calls' at the first message: no cache mixes them."""
    phases, calls = overhead.transcripts("anthropic", tag=" (phases)"), overhead.transcripts("anthropic")
    for suffix in calls:
        assert phases[suffix].next()[0] != calls[suffix].next()[0]


@pytest.mark.parametrize("state", ["clean", "few", "dense"])
@pytest.mark.parametrize("row", law.ROWS, ids=[row.label for row in law.ROWS])
def test_the_law_bench_sessions_are_in_their_stated_state(row: law.Row, state: str) -> None:
    """``bench.law``: a clean session needs no repair; a few-faults or dense one does, dense with more repairs."""
    repairs = {
        kind: len(
            ensure_tool_turn_invariants(
                row.written(law.session(200, state=kind)), lane=row.lane, dialect=row.dialect
            ).repairs
        )
        for kind in ("clean", "few", "dense")
    }
    assert (repairs[state] > 0) == (state != "clean")
    assert repairs["dense"] > repairs["few"]


def _as_sent(transcript: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each turn as the provider reads it: its role and blocks, a run of one role's messages as one turn.

    Text content as a text block, a result's text blocks as its text, ``is_error: false`` as absent.
    """
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for message in transcript:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else [dict(b) for b in content]
        for block in blocks:
            if block.get("is_error") is False:
                del block["is_error"]
            if block["type"] == "tool_result" and isinstance(block["content"], list):
                block["content"] = "".join(part["text"] for part in block["content"])
        if turns and turns[-1][0] == message["role"]:
            turns[-1][1].extend(blocks)
        else:
            turns.append((message["role"], blocks))
    return turns


@pytest.mark.parametrize("row", overhead.FRAMEWORK_CALLS)
def test_a_framework_row_sends_the_session_as_new_dicts_made_by_the_framework_on_every_call(
    row: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The framework rows: the SDK gets the growing session, as new dicts each call from the same held messages."""
    sent: list[list[dict[str, Any]]] = []
    create: Any = anthropic.resources.messages.Messages.create
    create_async: Any = anthropic.resources.beta.messages.messages.AsyncMessages.create

    def spy(self: object, *args: Any, **kwargs: Any) -> object:
        sent.append(kwargs["messages"])
        return create(self, *args, **kwargs)

    async def spy_async(self: object, *args: Any, **kwargs: Any) -> object:
        sent.append(kwargs["messages"])
        return await create_async(self, *args, **kwargs)

    monkeypatch.setattr(anthropic.resources.messages.Messages, "create", spy)
    monkeypatch.setattr(anthropic.resources.beta.messages.messages.AsyncMessages, "create", spy_async)
    ((source, run),) = overhead.calls_by_name(openai_only=False, only=[row]).values()
    held: list[Any] = [source(), source()]
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    floor = SpanOnly()
    floor.instrument(tracer_provider=tracer_provider, meter_provider=MeterProvider())
    try:
        for history in held:
            run(history)
    finally:
        floor.uninstrument()
    assert all(a is b for a, b in zip(held[0], held[1], strict=False)), "the same held messages, one round more"
    first, second = sent
    assert _objects(first).isdisjoint(_objects(second))
    for transcript, rounds in ((first, 1), (second, 2)):
        expected = session() + [m for n in range(rounds) for m in session_round(n)]
        assert _as_sent(transcript)[1:] == _as_sent(expected)[1:]  # the first message is tagged per row
    assert len(spans.get_finished_spans()) == 2, "the floor's span on each call"


def test_the_gateway_proxies_differ_only_by_the_callback() -> None:
    """``bench.gateway``: one config and environment for the three proxies but the callback: none, ours, the floor's."""
    sides = gateway.proxies("http://127.0.0.1:1", "http://127.0.0.1:2")
    assert list(sides) == ["bare", "otel-toolturn", "SDK only"]
    (bare, env), *others = sides.values()
    callbacks = []
    for config, other_env in others:
        assert other_env == env
        callbacks.append(config.pop("litellm_settings"))
        assert config == bare
    assert callbacks == [
        {"callbacks": "otel_toolturn.integrations.litellm_proxy.callback"},
        {"callbacks": "bench._proxy_floor.callback"},
    ]
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://127.0.0.1:2"
    assert {m["litellm_params"]["api_base"] for m in bare["model_list"]} == {  # type: ignore[attr-defined]
        "http://127.0.0.1:1",
        "http://127.0.0.1:1/v1",
    }


def test_the_gateway_rounds_hold_each_proxy_once_and_rotate_which_goes_first() -> None:
    """``bench.gateway.order``: every round one block per proxy; over three rounds each proxy goes first once."""
    turns = gateway.order(3)
    rounds = [turns[i : i + 3] for i in range(0, 9, 3)]
    assert all(sorted(r) == sorted(gateway.SIDES) for r in rounds)
    assert sorted(r[0] for r in rounds) == sorted(gateway.SIDES)


def test_the_gateway_sessions_send_the_session_growing_valid_and_each_their_own() -> None:
    """``bench.gateway.Session``: the realistic session, valid, a round longer per request; two clients differ."""
    first, second = gateway.Session(0), gateway.Session(1)
    bodies = [json.loads(first.next()), json.loads(first.next())]
    other = json.loads(second.next())
    base = session()
    assert [len(b["messages"]) for b in bodies] == [len(base) + 3, len(base) + 6]
    assert bodies[1]["messages"][1:] == base[1:] + session_round(0) + session_round(1)
    assert validate(bodies[1]["messages"], lane="anthropic.messages") == []
    assert other["messages"][0] != bodies[0]["messages"][0]
    assert other["messages"][1:] == bodies[0]["messages"][1:]


def test_the_floor_variant_records_one_span_and_two_points_and_uninstrument_restores_the_sdk() -> None:
    """``span only`` (``bench.floor``): one CLIENT inference span, two metric points, then the SDK as it was."""
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    original = anthropic.resources.messages.Messages.__dict__["create"]
    client = anthropic.Anthropic(
        api_key="k",
        max_retries=0,
        http_client=httpx2.Client(
            transport=httpx2.MockTransport(lambda _r: httpx2.Response(200, content=overhead.anthropic_json()))
        ),
    )
    floor = SpanOnly()
    floor.instrument(tracer_provider=tracer_provider, meter_provider=MeterProvider(metric_readers=[reader]))
    try:
        reply = client.messages.create(model=overhead.MODEL, max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    finally:
        floor.uninstrument()
    assert isinstance(reply, anthropic.types.Message)
    (span,) = [s for s in spans.get_finished_spans() if s.instrumentation_scope.name == "bench.floor"]  # type: ignore[union-attr]
    assert (span.name, span.kind) == (f"chat {overhead.MODEL}", SpanKind.CLIENT)
    assert span.attributes is not None
    assert span.attributes["gen_ai.provider.name"] == "anthropic"
    data = reader.get_metrics_data()
    assert data is not None
    recorded = sorted(m.name for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics)
    assert recorded == ["bench.floor.requests", "gen_ai.client.operation.duration"]
    assert anthropic.resources.messages.Messages.__dict__["create"] is original


def test_the_floor_variant_records_the_gemini_response_on_its_span() -> None:
    """``span only`` on google-genai: one span with the response's model, id and usage, then the SDK as it was."""
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    original = google.genai.models.Models.__dict__["generate_content"]
    http = httpx2.Client(
        transport=httpx2.MockTransport(lambda _r: httpx2.Response(200, content=overhead.gemini_json()))
    )
    client = genai.Client(
        api_key="k",
        http_options=genai_types.HttpOptions(base_url="http://bench.invalid", httpx_client=http),
    )
    floor = SpanOnly()
    floor.instrument(tracer_provider=tracer_provider, meter_provider=MeterProvider())
    try:
        reply = client.models.generate_content(model=overhead.MODEL, contents=overhead.gemini_transcript(4))
    finally:
        floor.uninstrument()
    assert isinstance(reply, genai_types.GenerateContentResponse)
    (span,) = spans.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["gen_ai.provider.name"] == "gcp.gemini"
    recorded = {k: span.attributes[k] for k in ("gen_ai.response.model", "gen_ai.response.id")}
    assert recorded == {"gen_ai.response.model": overhead.MODEL, "gen_ai.response.id": "resp-1"}
    assert (span.attributes["gen_ai.usage.input_tokens"], span.attributes["gen_ai.usage.output_tokens"]) == (5, 7)
    assert google.genai.models.Models.__dict__["generate_content"] is original


def test_the_floor_variant_records_a_bedrock_converse_call_and_lets_other_operations_pass() -> None:
    """``span only`` on boto3 ``converse``, HTTP stubbed: one span with usage; other calls pass; botocore restored."""
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    original = botocore.client.BaseClient.__dict__["_make_api_call"]
    client = overhead.bedrock_client()
    floor = SpanOnly()
    floor.instrument(tracer_provider=tracer_provider, meter_provider=MeterProvider())
    try:
        reply = client.converse(modelId=overhead.MODEL, messages=overhead.bedrock_transcript(5))
        client.count_tokens(modelId=overhead.MODEL, input={"converse": {"messages": overhead.bedrock_transcript(1)}})
    finally:
        floor.uninstrument()
    assert reply["output"]["message"]["content"] == [{"text": "ok"}]
    (span,) = spans.get_finished_spans()
    assert span.name == f"chat {overhead.MODEL}"
    assert span.attributes is not None
    assert span.attributes["gen_ai.provider.name"] == "aws.bedrock"
    assert (span.attributes["gen_ai.usage.input_tokens"], span.attributes["gen_ai.usage.output_tokens"]) == (5, 7)
    assert botocore.client.BaseClient.__dict__["_make_api_call"] is original


@pytest.mark.parametrize("row", ["groq 2,000 msgs", "groq 2,000 msgs, broken"])
def test_the_floor_variant_records_a_groq_row_through_the_groq_sdk(row: str) -> None:
    """``span only`` on a groq row's call: one ``groq`` span with the Chat response's usage, then the SDK as it was."""
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    original = groq.resources.chat.completions.Completions.__dict__["create"]
    ((source, run),) = overhead.calls_by_name(openai_only=False, only=[row]).values()
    sent = source()
    assert isinstance(sent, list)
    floor = SpanOnly()
    floor.instrument(tracer_provider=tracer_provider, meter_provider=MeterProvider())
    try:
        reply = run(sent)
    finally:
        floor.uninstrument()
    assert type(reply).__module__.startswith("groq.types.")
    assert len(sent) == overhead.MESSAGES + 3
    assert (validate(sent, lane="openai.chat_completions") == []) is (row == "groq 2,000 msgs")
    (span,) = spans.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["gen_ai.provider.name"] == "groq"
    assert (span.attributes["gen_ai.usage.input_tokens"], span.attributes["gen_ai.usage.output_tokens"]) == (5, 7)
    assert groq.resources.chat.completions.Completions.__dict__["create"] is original


def test_the_instruction_count_is_what_the_calls_alone_take() -> None:
    """``bench.instructions`` counts the calls, not the process: twice the calls, twice the count, to 1%."""
    row = ("openai.chat_completions", "few", 200)
    found = instructions.count(*row, calls=2)
    assert found.law > 0
    assert found.dumps > 0
    assert found.messages == 208
    four = instructions.collected(*row, 4, "law") - instructions.collected(*row, 0, "law")
    assert abs(four / 4 - found.law) < found.law / 100


def test_the_bedrock_bench_transcripts_are_valid_or_broken_as_named() -> None:
    """``bedrock 2,000 msgs``: 1,999 messages the lane accepts as they are; ``, broken``: each repaired, lossless."""
    clean, broken = (
        overhead.bedrock_transcript(overhead.MESSAGES),
        overhead.bedrock_transcript(overhead.MESSAGES, broken=True),
    )
    assert len(clean) == overhead.MESSAGES - 1
    assert validate(clean + overhead.bedrock_round(0), lane="bedrock.converse") == []
    view = ensure_tool_turn_invariants(clean, lane="bedrock.converse")
    assert (view.messages is clean, view.repairs) == (True, ())
    repaired = ensure_tool_turn_invariants(broken, lane="bedrock.converse")
    assert {r.form for r in repaired.repairs} == {"missing_result"}
    assert validate(repaired.messages, lane="bedrock.converse") == []


def test_the_gemini_bench_transcripts_are_valid_or_broken_as_named() -> None:
    """``gemini 2,000 msgs``: 2,000 contents the lane accepts as they are; ``, broken``: each repaired, lossless."""
    clean, broken = (
        overhead.gemini_transcript(overhead.MESSAGES),
        overhead.gemini_transcript(overhead.MESSAGES, broken=True),
    )
    assert len(clean) == overhead.MESSAGES
    view = ensure_tool_turn_invariants(clean, lane="gemini.generate_content")
    assert (view.messages is clean, view.repairs) == (True, ())
    repairs = ensure_tool_turn_invariants(broken, lane="gemini.generate_content").repairs
    assert {r.form for r in repairs} == {"missing_result"}


def test_the_median_interval_holds_the_median_and_narrows_with_more_values() -> None:
    """``lockstep.median_interval``: two of the values around the median, closer together as there are more."""
    few, many = [float(v) for v in range(1, 21)], [float(v) for v in range(1, 2001)]
    low, high = lockstep.median_interval(few)
    assert low in few
    assert high in few
    assert low < statistics.median(few) < high
    wide = (high - low) / len(few)
    low, high = lockstep.median_interval(many)
    assert low < statistics.median(many) < high
    assert (high - low) / len(many) < wide / 3


_WORKER: Final = (
    "import sys\n"
    "from bench import lockstep\n"
    "lockstep.serve({'noop': (lambda: None, lambda _: print('stray output'))}, note=sys.argv[1])\n"
)


def test_a_worker_answers_each_call_with_its_time_and_keeps_stray_output_off_the_answers() -> None:
    """``lockstep.Worker``: the call names and note first, then one CPU time per call, whatever the call prints."""
    worker = lockstep.Worker([sys.executable, "-c", _WORKER, "a note"], cwd=str(ROOT))
    try:
        assert (worker.calls, worker.note) == (["noop"], "a note")
        times = [worker.time("noop") for _ in range(3)]
    finally:
        worker.close()
    assert all(isinstance(t, float) and t >= 0 for t in times)


def test_a_worker_that_dies_is_an_error_naming_what_it_printed() -> None:
    """``lockstep.Worker``: a worker that ends before answering raises, with the end of its standard error."""
    with pytest.raises(RuntimeError, match="no transport here"):
        lockstep.Worker([sys.executable, "-c", "raise SystemExit('no transport here')"], cwd=str(ROOT))


def test_compare_starts_each_set_in_a_rotated_order_and_runs_the_triples_asked() -> None:
    """``lockstep.compare``: three sets, each side started first once, and exactly the triples asked, on every side."""
    started: list[str] = []

    def start(side: str) -> lockstep.Worker:
        started.append(side)
        return lockstep.Worker([sys.executable, "-c", _WORKER, side], cwd=str(ROOT))

    note, rows = lockstep.compare(start, sets=3, budget=1e9, fewest=6, most=6)
    assert note == "instrumented"
    assert started[0::3] == ["plain", "instrumented", "control"]
    assert sorted(started) == sorted(lockstep.SIDES * 3)
    assert rows["noop"]["triples"] == 6
    low, high = rows["noop"]["interval"]
    assert low <= rows["noop"]["ratio"] <= high


def test_the_own_time_ledger_counts_a_nested_section_once_and_takes_off_the_clock_reads() -> None:
    """``bench.own.Ledger``: an outer section's time (less the pair cost) counts; a section inside it adds nothing."""
    ticks = iter(range(0, 1000, 10))
    ledger = own.Ledger(3.0, clock=lambda: next(ticks))
    inner = ledger.timed(lambda: "inner")
    outer = ledger.timed(lambda: inner() + " in outer")
    assert outer() == "inner in outer"
    assert (ledger.own_ns, ledger.sections) == (7.0, 1)
    assert inner() == "inner"
    assert (ledger.own_ns, ledger.sections) == (14.0, 2)

    def fails() -> None:
        raise ValueError("from the section")

    with pytest.raises(ValueError, match="from the section"):
        ledger.timed(fails)()
    assert (ledger.own_ns, ledger.sections) == (21.0, 3)
    assert inner() == "inner"  # the failed section left the ledger counting again


def test_the_own_time_sections_count_a_real_call_and_put_everything_back() -> None:
    """``bench.own.sections``: an instrumented SDK call counts otel-toolturn's sections; leaving restores each one."""
    from otel_toolturn.instrument import ToolTurnInstrumentor  # noqa: PLC0415

    def timed() -> list[object]:
        return [getattr(owner, name) for owner, name in own.SECTIONS]

    before = timed()
    client = anthropic.Anthropic(
        api_key="k",
        max_retries=0,
        http_client=httpx2.Client(
            transport=httpx2.MockTransport(lambda _r: httpx2.Response(200, content=overhead.anthropic_json()))
        ),
    )
    ledger = own.Ledger()
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(tracer_provider=TracerProvider(), meter_provider=MeterProvider())
    try:
        with own.sections(ledger):
            reply = client.messages.create(
                model=overhead.MODEL, max_tokens=8, messages=[{"role": "user", "content": "hi"}]
            )
    finally:
        instrumentor.uninstrument()
    assert isinstance(reply, anthropic.types.Message)
    assert ledger.sections == 4  # the request hook, the record at the send, the request's record, the record's end
    assert ledger.own_ns > 0
    assert timed() == before


def test_the_own_time_bench_runs_a_real_call_end_to_end() -> None:
    """``python -m bench.own``: a row for the call asked, its own time above zero and its ratio above 1."""
    import subprocess  # noqa: PLC0415

    done = subprocess.run(
        [sys.executable, "-m", "bench.own", "--only", "anthropic stream 5,000", "--calls", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("anthropic stream 5,000")]
    call_ms, own_us, ratio = (float(cell.rstrip("x")) for cell in row.split()[3::2])
    assert call_ms > 0
    assert own_us > 0
    assert ratio > 1


SDK_SPAN_ROW: Final = """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from bench import overhead
from otel_toolturn.instrument import ToolTurnInstrumentor

spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)
(name, (source, run)), = overhead.calls_by_name(openai_only=False, only=[NAME]).items()
ToolTurnInstrumentor().instrument(tracer_provider=provider)
for _ in range(2):
    run(source())
print(json.dumps([[s.instrumentation_scope.name, s.attributes.get("toolturn.repairs.count"),
                   bool(s.attributes.get("toolturn.request.prefix_fingerprint"))] for s in spans.get_finished_spans()]))
"""


@pytest.mark.parametrize(
    ("row", "scope"),
    [
        ("anthropic 2,000 msgs, SDK span", "com.anthropic.sdk.python"),
        ("anthropic 2,000 msgs", "otel_toolturn"),
        ("bedrock 2,000 msgs", "otel_toolturn"),
        ("groq 2,000 msgs", "otel_toolturn"),
    ],
)
def test_the_anthropic_rows_record_one_span_per_call_onto_the_sdk_span_or_their_own(row: str, scope: str) -> None:
    """The ``, SDK span`` row's client makes its call span and otel-toolturn records onto it; the others make none."""
    import subprocess  # noqa: PLC0415

    done = subprocess.run(
        [sys.executable, "-c", f"NAME = {row!r}\n{SDK_SPAN_ROW}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    recorded = json.loads(done.stdout.splitlines()[-1])
    assert recorded == [[scope, 0, True], [scope, 0, True]]  # one span a call, with otel-toolturn's record on it


def test_the_stability_sessions_make_the_same_calls_and_have_their_stated_length() -> None:
    """The broken and valid sessions make the same calls; full: 52 requests, quick: 10, late results included."""
    for quick, requests in ((True, 10), (False, 52)):
        broken, valid = stability.session(quick=quick, valid=False), stability.session(quick=quick, valid=True)
        asks = [[s for s in e if isinstance(s, stability.Ask)] for e in broken]
        assert asks == [[s for s in e if isinstance(s, stability.Ask)] for e in valid]
        assert sum(1 + s.lost for e in asks for s in e) == requests
        recorded = [s.call_id for e in broken for s in e if isinstance(s, stability.Record)]
        assert len(recorded) > len(set(recorded)), "a late duplicate: a second result for a call"
        late = [e[0] for e in broken if isinstance(e[0], stability.Record)]
        assert late, "some result lands at the start of a later episode, after an assistant message"
        timed_out = [
            e
            for e in broken
            if any(isinstance(a, stability.Ask) and isinstance(b, stability.Ask) for a, b in pairwise(e))
        ]
        assert timed_out, "a timed-out round: the model is asked again right after its calls, with nothing between"


def test_the_move_up_rule_moves_a_late_result_into_its_batch_and_folds_a_second() -> None:
    """``move_up``: the late result replaces the close in the batch; a second result is folded into the first."""
    call = {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {}}
    transcript: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [call, {**call, "id": "toolu_b"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "A"}]},
        {"role": "user", "content": "continue"},
        {"role": "assistant", "content": [{"type": "text", "text": "Carrying on."}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_b", "content": "B"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "A2"}]},
    ]
    early = move_up(transcript[:5])
    assert early[2]["content"][1]["content"] == otel_toolturn.INTERRUPTED_RESULT_TEXT
    moved = move_up(transcript)
    assert moved[:2] == transcript[:2]
    assert [b["content"] for b in moved[2]["content"]] == ["A" + otel_toolturn.SECOND_RESULT_SEPARATOR + "A2", "B"]
    assert moved[3:] == transcript[3:5]


@pytest.mark.parametrize("lane", list(stability.POLICIES))
def test_the_quick_session_under_otel_toolturn_is_served_whole_and_append_stable(lane: Lane) -> None:
    """Through ``otel_toolturn.init`` and the lane's real SDK: no 400, each request extends the last, nothing lost."""
    measured = stability.measure("otel-toolturn", lane=lane, quick=True, drop=False)
    assert (measured.requests, measured.refused, measured.prefix_failures, measured.lost) == (10, 0, 0, 0)
    assert (measured.kept, measured.followers) == (9, 9)


@pytest.mark.parametrize("lane", list(stability.POLICIES))
def test_the_quick_session_sent_unrepaired_is_refused_by_the_simulator(lane: Lane) -> None:
    """The session breaks the lane's rules as recorded: sent as it is, the simulator refuses some of it."""
    measured = stability.measure("unrepaired", lane=lane, quick=True, drop=False)
    assert measured.refused >= 1


def test_the_quick_session_under_the_earlier_move_up_rule_fails_the_prefix_check() -> None:
    """Moving a late result up rewrites a message the model answered from: refused, or served with a new prefix."""
    measured = stability.measure("earlier move-up rule", lane="anthropic.messages", quick=True, drop=False)
    assert measured.prefix_failures >= 1
    dropped = stability.measure("earlier move-up rule", lane="anthropic.messages", quick=True, drop=True)
    assert dropped.refused == 0
    assert dropped.thinking_dropped >= 1
    assert dropped.kept < dropped.followers


@pytest.mark.parametrize("lane", list(stability.POLICIES))
def test_otel_toolturn_keeps_the_prefix_and_the_cache_share_of_a_valid_session(lane: Lane) -> None:
    """Over the full session: 52 requests served, each extending the last, cache share ≥ 99% of a valid session's."""
    repaired = stability.measure("otel-toolturn", lane=lane, quick=False, drop=False)
    reference = stability.measure(stability.REFERENCE, lane=lane, quick=False, drop=False)
    assert repaired.requests == reference.requests == 52
    assert repaired.refused == reference.refused == 0
    assert (repaired.kept, repaired.lost) == (repaired.followers, 0)
    assert repaired.cache_share >= 0.99 * reference.cache_share


FUZZ_SAMPLE: Final = 1_000
"""Transcripts per lane and flavour the suite checks in memory."""
WIRE_SAMPLE: Final = 250
"""Transcripts per lane and flavour the suite also sends through the SDKs (the SDKs' request building
is most of a wire-checked transcript's time)."""


@pytest.fixture(scope="module")
def sender() -> Iterator[fuzz.Sender]:
    """One set of SDK clients over a mock transport, shared by the module's wire checks."""
    clients = fuzz.Sender()
    yield clients
    clients.close()


def test_a_fuzz_sample_finds_no_failure_in_any_lane() -> None:
    """1,000 generated transcripts per lane and flavour: no internal error, invalid output, loss, mutation or repeat."""
    result = fuzz.run(FUZZ_SAMPLE, seed=7, wire=False)
    assert result.failures() == {}, fuzz.examples(result)
    assert all(tally.counts["checked"] for tally in result.rows.values()), "every row checks transcripts"


def test_a_sample_of_the_check_soak_gets_every_long_files_whole_list_findings() -> None:
    """Three long generated files per lane, judged by ``check`` in segments: each as its whole list is, or refused."""
    counts = check_fuzz.run(3, seed=7)
    failed = {lane: sum(tally[name] for name in check_fuzz.FAILURES) for lane, tally in counts.items()}
    assert failed == dict.fromkeys(law.LANES, 0), counts
    assert all(tally["judged"] + tally["refused"] == 3 for tally in counts.values())


def test_every_shape_the_check_memory_bench_measures_is_near_its_size_and_judged_as_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each file ``bench.check_memory`` writes is about the size asked, and ``check`` judges it as its name says."""
    broken = ("every call interrupted", "every call reusing one id", "a body whose tools list")
    for name, write, is_json in check_memory.shapes(every_lane=True):
        path = tmp_path / ("shape.json" if is_json else "shape.jsonl")
        write(path, 200_000)
        assert 100_000 <= path.stat().st_size <= 320_000, name
        assert cli(["check", str(path)]) == (1 if name.startswith(broken) else 0), name
    assert "verdict" in capsys.readouterr().out


def test_a_fuzz_sample_sent_through_each_sdk_loses_nothing_on_the_wire() -> None:
    """Each lane's SDK sends every view it is given, unwarned, with every marker and close the view holds."""
    result = fuzz.run(WIRE_SAMPLE, seed=8)
    assert result.failures() == {}, fuzz.examples(result)
    assert {generator for lane, generator in result.rows if lane == "gemini.generate_content"} == {
        f"{flavour}, {spelling}" for flavour in _fuzz_make.FLAVOURS for spelling in _fuzz_make.SPELLINGS
    }


_DRAWN: Final = settings(
    max_examples=25, derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@_DRAWN
@given(rng=st.randoms(use_true_random=False))
@pytest.mark.parametrize("flavour", _fuzz_make.FLAVOURS)
@pytest.mark.parametrize("lane", otel_toolturn.LANES)
def test_transcripts_drawn_by_hypothesis_pass_every_check(
    lane: Lane, flavour: _fuzz_make.Flavour, rng: random.Random, sender: fuzz.Sender
) -> None:
    """The fuzz's generators under hypothesis (a failure shrinks to a small transcript): no failure, on the wire too."""
    made = _fuzz_make.transcript(lane, flavour, rng)
    note(f"{fuzz.shown(made.items)} spelling={made.spelling} faults={made.faults}")
    assert fuzz.check(lane, made.items, sender=sender) in ("checked", "refused")


def test_every_fault_is_put_into_the_near_transcripts_of_each_lane_that_has_it() -> None:
    """``FAULTS_OF`` covers the fault vocabulary, and each lane's near transcripts carry every one of its faults."""
    assert set().union(*_fuzz_make.FAULTS_OF.values()) == set(_fuzz_make.FAULTS)
    assert set(_fuzz_make.FAULTS_OF) == set(otel_toolturn.LANES)
    for lane, faults in _fuzz_make.FAULTS_OF.items():
        rng = random.Random(f"faults:{lane}")  # noqa: S311 - a reproducible test input, not a secret
        put = {f for _ in range(300) for f in _fuzz_make.transcript(lane, "near", rng).faults}
        assert put == set(faults), lane


def _spelling(content: object) -> str:
    """``sdk`` for a typed content; ``rest`` or ``snake`` for a dict by its part keys (text alone: ``text``)."""
    if not isinstance(content, dict):
        return "sdk" if isinstance(content, genai_types.Content) else "other"
    keys = {k for p in content.get("parts") or [] if isinstance(p, dict) for k in p}
    if keys & {"functionCall", "functionResponse", "thoughtSignature"}:
        return "rest"
    return "snake" if keys & {"function_call", "function_response", "thought_signature"} else "text"


def test_gemini_transcripts_come_in_four_spellings_and_mixed_ones_mix_them() -> None:
    """Every spelling is drawn; a mixed transcript holds typed and dict contents, camelCase and snake_case ones."""
    rng = random.Random("spellings")  # noqa: S311 - a reproducible test input, not a secret
    made = [_fuzz_make.transcript("gemini.generate_content", "near", rng) for _ in range(200)]
    assert {m.spelling for m in made} == set(_fuzz_make.SPELLINGS)
    for spelling in ("rest", "snake", "sdk"):
        held = {_spelling(c) for m in made if m.spelling == spelling for c in m.items}
        assert held - {"text"} == {spelling}
    mixed = [{_spelling(c) for c in m.items} for m in made if m.spelling == "mixed"]
    assert any({"sdk", "rest", "snake"} <= spellings for spellings in mixed)


def test_the_responses_fault_gives_a_call_item_another_call_items_id() -> None:
    """``reused_item_id`` alone: two call items (of any kind) with one item ``id`` and distinct ``call_id``s."""
    rng = random.Random("reused item id")  # noqa: S311 - a reproducible test input, not a secret
    made = [_fuzz_make.transcript("openai.responses", "near", rng) for _ in range(300)]
    faulty = [m.items for m in made if m.faults == ("reused_item_id",)]  # no later fault took it out
    assert faulty
    for items in faulty:
        calls = [i for i in items if isinstance(i, dict) and i.get("type") in CALL_TYPES and "id" in i]
        by_id: dict[object, set[object]] = {}
        for call in calls:
            by_id.setdefault(call["id"], set()).add(call["call_id"])
        assert any(len(call_ids) > 1 for call_ids in by_id.values())


def test_the_anthropic_fault_nests_a_result_in_a_results_content() -> None:
    """``nested_result`` alone: a ``tool_result`` block inside another ``tool_result``'s content."""
    rng = random.Random("nested result")  # noqa: S311 - a reproducible test input, not a secret
    made = [_fuzz_make.transcript("anthropic.messages", "near", rng) for _ in range(300)]
    faulty = [m.items for m in made if m.faults == ("nested_result",)]  # no later fault took it out
    assert faulty
    for items in faulty:
        inner = [
            b
            for message in items
            if isinstance(message, dict) and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result" and isinstance(block["content"], list)
            for b in block["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        assert inner


_ASK: Final = {"role": "user", "parts": [{"text": "<u1>"}]}
_STEP: Final = {"role": "model", "parts": [{"functionCall": {"name": "ls", "id": "c0", "args": {"q": "<arg2>"}}}]}
_RESPONSE: Final = {"functionResponse": {"name": "ls", "id": "c0", "response": {"output": "<r3>"}}}
_CLOSE: Final = {
    "functionResponse": {"name": "ls", "id": "c0", "response": {"error": otel_toolturn.INTERRUPTED_RESULT_TEXT}}
}


def _typed(*parts: object) -> genai_types.Content:
    """A typed user content holding ``parts`` as they are (a dict part stays a dict, as a foreign part would)."""
    return genai_types.Content.model_construct(role="user", parts=list(parts))


def _typed_close() -> genai_types.Part:
    response = genai_types.FunctionResponse(
        name="ls", id="c0", response={"error": otel_toolturn.INTERRUPTED_RESULT_TEXT}
    )
    return genai_types.Part(function_response=response)


_WIRE_CASES: Final[dict[str, tuple[list[object], list[object], fuzz.Outcome]]] = {
    "a camelCase response in a typed content": (
        [_ASK, _STEP, {"role": "user", "parts": [_RESPONSE]}],
        [_ASK, _STEP, _typed(_RESPONSE)],
        "lost on the wire",
    ),
    "a camelCase close in a typed content": ([_ASK, _STEP], [_ASK, _STEP, _typed(_CLOSE)], "lost on the wire"),
    "the same close typed": ([_ASK, _STEP], [_ASK, _STEP, _typed(_typed_close())], "checked"),
    "a part the SDK drops from the caller's own content too": (
        [_ASK, _STEP, _typed(_RESPONSE)],
        [_ASK, _STEP, _typed(_RESPONSE, {"text": "<u4>"})],
        "checked",
    ),
    "an item the SDK cannot send": ([_ASK, _STEP, {"role": "user", "parts": [_RESPONSE]}], [_ASK, None], "unsendable"),
    "a typed response holding text where an object belongs": (
        [_ASK, _STEP],
        [
            _ASK,
            _STEP,
            _typed(
                genai_types.Part(
                    function_response=genai_types.FunctionResponse.model_construct(name="ls", response="<r3>")
                )
            ),
        ],
        "warned on the wire",
    ),
}


@pytest.mark.parametrize("case", list(_WIRE_CASES))
def test_the_wire_check_judges_the_bytes_the_sdk_sends_against_the_callers_own(case: str, sender: fuzz.Sender) -> None:
    """A marker or close the SDK drops from a view, a view it refuses or warns on: found; the caller's own: not."""
    items, view, outcome = _WIRE_CASES[case]
    assert fuzz.wire_outcome("gemini.generate_content", items, view, sender) == outcome


def test_a_view_that_is_the_input_is_not_sent_again() -> None:
    """The caller's own list, unrepaired, is what the caller sends: the wire check has nothing of the law's to judge."""

    class Refusing(fuzz.Sender):
        def send(self, lane: Lane, items: list[object]) -> fuzz.Sent:
            raise AssertionError(f"sent {items!r} in {lane}")

    items: list[object] = [_ASK, _STEP, _typed(_RESPONSE)]
    refusing = Refusing()
    try:
        assert fuzz.wire_outcome("gemini.generate_content", items, items, refusing) == "checked"
    finally:
        refusing.close()


def test_the_init_bench_probe_times_three_steps_and_sees_no_sdk_imported() -> None:
    """``bench.init``: a fresh process times the SDK import, our import and ``init()``; ``init()`` imports no SDK."""
    from bench import init as init_bench  # noqa: PLC0415 - one bench module, loaded by the test that needs it

    found = init_bench.probe()
    assert found["sdks_imported"] == []
    times = [found[key] for key in ("sdk_import", "instrument_import", "init")]
    assert all(isinstance(t, float) and t >= 0 for t in times)
