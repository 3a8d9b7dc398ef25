"""The instrumentation's overhead on real SDK calls, side by side with the other OpenAI instrumentations.

Each side of a comparison runs in its own process (``bench.lockstep``): the SDK uninstrumented,
the SDK instrumented once with the variant, and the control (a second uninstrumented process);
the parent has them run one call each, back to back, in a rotating order, each on its own
transcript from the same source. The ratio of each instrumented call to the adjacent
uninstrumented one is taken, and their median is reported with its 95% interval (lower is better;
1.00x is free). Every process has the same OpenTelemetry SDK set up: a tracer provider with a batch
processor, a meter provider and a logger provider, all exporting to nothing.

Calls, over a mock transport of the SDK's own HTTP client (no network):

- ``chat 2,000 msgs``: ``chat.completions.create`` in a conversation of 2,000 messages (tool
  rounds) that grows by one round (user, assistant call, result) per call, resent as the same
  message objects, as an agent does (``Conversation``); it starts over after 100 rounds;
- ``chat 2,000 msgs, rebuilt``: the growing conversation sent as new message objects with the same
  values on every call, as a framework that rebuilds its dicts from its own message types sends it;
- ``chat 2,000 msgs, cold``: a 2,000-message transcript seen for the first time on every call (as a
  process resuming a stored conversation sends its first request);
- ``chat 2,000 msgs, broken``: the growing conversation with missing results (otel-toolturn
  repairs it on every call);
- ``chat stream 5,000``: ``chat.completions.create(stream=True)`` read to the end, 5,000 chunks;
- ``anthropic 2,000 msgs`` / ``, rebuilt`` / ``, cold`` / ``, broken`` / ``anthropic stream 5,000``: the same
  through ``messages.create`` (otel-toolturn only; the other two instrument OpenAI), on a client
  whose own tracing is off, so otel-toolturn starts its own inference span;
- ``gemini 2,000 msgs`` / ``, rebuilt`` / ``, cold`` / ``, broken``: the same through google-genai's
  ``models.generate_content`` (otel-toolturn and ``span only``), ``contents`` in the REST spelling
  with signed calls;
- ``groq 2,000 msgs`` / ``, broken``: the growing conversation (and its broken twin) through the groq
  SDK's own ``chat.completions.create`` (otel-toolturn and ``span only``), over an ``httpx`` mock
  transport: one of the SDKs with HTTP code of their own;
- ``bedrock 2,000 msgs`` / ``, broken``: the same through boto3's ``bedrock-runtime`` ``converse``
  (otel-toolturn and ``span only``), 1,999 messages alternating as Converse requires (a user message
  holds the previous round's ``toolResult`` and the next question), the HTTP response stubbed below
  botocore's ``Endpoint._send`` (its HTTP session), so botocore validates, serialises and signs each
  request as it would send it;
- ``anthropic session 350 msgs``: a realistic coding-agent session (``bench._session``: about 350
  messages and 0.63 MB, thinking on every assistant turn, parallel calls, results up to 10 KB),
  resent and growing by one round per call for 30 calls, then starting over;
- ``pydantic-ai session 350 msgs`` / ``langchain session 350 msgs``: the realistic session, growing
  as above, held in the framework's own message types (``bench._frameworks``) and sent by it: an
  agent's ``run_sync`` with ``message_history`` (``AsyncAnthropic``'s ``beta.messages.create``), a
  chat model's ``invoke`` (``Anthropic``'s ``messages.create``). The framework converts its
  messages into new dicts on every call (merging the next user message into the last one it sent
  when a round starts after results), and its own work is in both sides of the ratio;
- ``anthropic 2,000 msgs, SDK span``: the growing conversation on a client with the SDK's own
  tracing on (its default whenever a tracer provider is set): both sides pay the SDK's call span,
  and otel-toolturn records onto it instead of starting a span of its own.

Variants: ``otel-toolturn``; ``otel-genai`` (``opentelemetry-instrumentation-genai-openai``, or
``-openai-v2``); ``openllmetry`` (``opentelemetry-instrumentation-openai`` from traceloop), each
with its default settings; ``span only`` (``bench.floor``): an inference span and two metric
points per call and nothing else, the floor any instrumentation of the GenAI conventions pays on
this machine (both SDKs). A variant whose package is not installed is reported as such.

Run: ``python -m bench.overhead`` (``--quick`` for fewer triples). The transcripts are made before
the clock starts. ``--split`` instead prints where
otel-toolturn's own time goes on each 2,000-message call, with the SDK call itself stubbed out:
the strip rule, the law, the request receipt (the digests of the prefix fingerprint and the
conversation state; system-prompt pieces and fingerprints), the telemetry (span, metrics, events,
the response check) and the rest, in microseconds of this thread's CPU time per call (the median
over a growing conversation's calls).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

import anthropic
import boto3  # type: ignore[import-untyped]
import botocore.client
import groq
import httpx
import httpx2
import openai
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.config import Config
from google import genai
from google.genai import types as genai_types
from opentelemetry import _logs, metrics, trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from bench import lockstep
from bench._session import session, session_round
from bench.floor import SpanOnly
from otel_toolturn.instrument import ToolTurnInstrumentor
from otel_toolturn.instrument._config import resolve_options

VARIANTS: Final = ("otel-toolturn", "otel-genai", "openllmetry", "span only")
MODEL: Final = "model-a"
MESSAGES: Final = 2000
EVENTS: Final = 5000
M = TypeVar("M")


def chat_transcript(size: int, *, broken: bool) -> list[dict[str, Any]]:
    """A Chat Completions transcript of ``size`` messages: user, assistant with a call, tool result."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful assistant."}]
    turn = 0
    while len(out) < size - 1:
        call = f"call_{turn}"
        out.append({"role": "user", "content": f"Question {turn}: what is in file {turn}?"})
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call, "type": "function", "function": {"name": "read", "arguments": f'{{"n": {turn}}}'}}
                ],
            }
        )
        if not (broken and turn % 50 == 7):
            out.append({"role": "tool", "tool_call_id": call, "content": f"contents of file {turn} " * 4})
        turn += 1
    out.append({"role": "user", "content": "Summarise."})
    return out[:size]


def anthropic_transcript(size: int, *, broken: bool = False) -> list[dict[str, Any]]:
    """An Anthropic transcript of ``size`` messages with a tool round every three messages.

    ``broken``: every 50th round's result is missing (otel-toolturn adds a closing one).
    """
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < size - 1:
        call = f"toolu_{turn}"
        out.append({"role": "user", "content": f"Question {turn}"})
        out.append(
            {"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "read", "input": {"n": turn}}]}
        )
        if not (broken and turn % 50 == 7):
            result = {"type": "tool_result", "tool_use_id": call, "content": f"file {turn} " * 4}
            out.append({"role": "user", "content": [result]})
        turn += 1
    out = out[: size - 1] if out[size - 2]["role"] == "assistant" else out[:size]
    if out[-1]["role"] == "assistant":
        out.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{turn - 1}", "content": "x"}]}
        )
    return out


def gemini_transcript(size: int, *, broken: bool = False) -> list[dict[str, Any]]:
    """A Gemini ``contents`` list of ``size`` contents with a tool round every three (REST spelling, signed calls).

    ``broken``: every 50th round's response is missing (otel-toolturn adds a closing one).
    """
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < size - 1:
        out.extend(gemini_round(turn)[: 2 if broken and turn % 50 == 7 else 3])
        turn += 1
    out = out[:size]
    if out[-1]["role"] == "model":
        out[-1] = {"role": "user", "parts": [{"text": "Summarise."}]}
    return out


def bedrock_transcript(size: int, *, broken: bool = False) -> list[dict[str, Any]]:
    """A Converse transcript of at most ``size`` messages, an odd count: user first and last, roles alternating.

    Each round is the assistant's call and a user message with its result and the next question.
    ``broken``: every 50th round's result is missing (otel-toolturn adds a closing one).
    """
    out: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "Question 0"}]}]
    turn = 0
    while len(out) + 2 <= size:
        out.extend(bedrock_round(turn, prefix="tooluse", answered=not (broken and turn % 50 == 7)))
        turn += 1
    return out


ROUNDS: Final = 100
"""How many rounds a growing conversation takes before it starts over (its first call is then cold)."""
SESSION_ROUNDS: Final = 30
"""How many rounds the realistic session grows by before it starts over."""


def chat_round(turn: int) -> list[dict[str, Any]]:
    """One Chat round of a growing conversation: the user asks, the assistant calls a tool, its result."""
    call = f"call_more_{turn}"
    return [
        {"role": "user", "content": f"And file {turn}?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call, "type": "function", "function": {"name": "read", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": call, "content": f"contents of more file {turn} " * 4},
    ]


def anthropic_round(turn: int) -> list[dict[str, Any]]:
    """One Anthropic round of a growing conversation: the user asks, the assistant calls a tool, its result."""
    call = f"toolu_more_{turn}"
    return [
        {"role": "user", "content": f"And file {turn}?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "read", "input": {"n": turn}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": f"more {turn} " * 4}]},
    ]


def gemini_round(turn: int) -> list[dict[str, Any]]:
    """One Gemini round of a growing conversation: the user asks, the model calls a tool (signed), its response."""
    call = {"name": "read", "args": {"n": turn}, "id": f"call_more_{turn}"}
    response = {"name": "read", "id": f"call_more_{turn}", "response": {"output": f"more {turn} " * 4}}
    return [
        {"role": "user", "parts": [{"text": f"And file {turn}?"}]},
        {"role": "model", "parts": [{"functionCall": call, "thoughtSignature": "c2lnbmF0dXJl"}]},
        {"role": "user", "parts": [{"functionResponse": response}]},
    ]


def bedrock_round(turn: int, *, prefix: str = "tooluse_more", answered: bool = True) -> list[dict[str, Any]]:
    """One Converse round: the assistant calls a tool; a user message, its result and the next question.

    Not ``answered``: the user message holds the question alone (the call is left without its result).
    """
    call = f"{prefix}_{turn}"
    result = {"toolResult": {"toolUseId": call, "content": [{"text": f"more {turn} " * 4}]}}
    return [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": call, "name": "read", "input": {"n": turn}}}]},
        {"role": "user", "content": [*([result] if answered else []), {"text": f"And file {turn + 1}?"}]},
    ]


class Conversation(Generic[M]):
    """A transcript as an agent sends it: one round longer on every call, the same message objects resent.

    ``next()`` is the transcript of the next call (a new list of the same objects plus one more
    round). After ``ROUNDS`` rounds it starts over from the first transcript, so a run of any
    length stays near its size; the call that starts over is read cold. ``rebuilt``: every call's
    messages are new objects made by it from the held ones (``_rebuilt``: the same values, as a
    framework that rebuilds its dicts from its own message types sends them). The messages may be
    of any type: a framework's own messages (which it converts on every call), or their JSON text.
    """

    def __init__(self, base: list[M], rounds: list[list[M]], *, rebuilt: Callable[[M], M] | None = None) -> None:
        self._base = base
        self._rounds = rounds
        self._rebuilt = rebuilt
        self._at = 0

    def next(self) -> list[M]:
        """The transcript of the next call."""
        if self._at == len(self._rounds):
            self._at = 0
        self._at += 1
        transcript = self._base + [m for r in self._rounds[: self._at] for m in r]
        return transcript if self._rebuilt is None else [self._rebuilt(m) for m in transcript]


class Cold:
    """A transcript seen for the first time on every call, as a process resuming a stored conversation sends it.

    Every call's transcript is new objects, its first message its own (so no two are equal): no
    digest is reused and no conversation is found for it.
    """

    def __init__(self, base: list[dict[str, Any]]) -> None:
        self._base = base
        self._made = 0

    def next(self) -> list[dict[str, Any]]:
        """The transcript of the next call."""
        self._made += 1
        return [_retitled(self._base[0], f" (sending {self._made})"), *map(_rebuilt, self._base[1:])]


def _retitled(message: dict[str, Any], suffix: str) -> dict[str, Any]:
    """A copy of a user message (Gemini: content) whose text ends with ``suffix``."""
    if "parts" in message:
        first, *rest = message["parts"]
        return {**message, "parts": [{**first, "text": f"{first['text']}{suffix}"}, *rest]}
    return {**message, "content": f"{message['content']}{suffix}"}


def _rebuilt(message: dict[str, Any]) -> dict[str, Any]:
    """A new message object equal to ``message``, its lists new too (as a framework's serialiser makes them)."""
    return {
        k: [dict(b) if isinstance(b, dict) else b for b in v] if isinstance(v, list) else v for k, v in message.items()
    }


def transcripts(lane: str, *, tag: str = "") -> dict[str, Conversation[dict[str, Any]] | Cold]:
    """The four 2,000-message transcripts of a lane: growing, rebuilt (growing), cold, broken (growing).

    ``tag``: appended to the first message, so that two sets of a lane's transcripts are not equal.
    """
    if lane == "chat":
        base, broken, make = chat_transcript(MESSAGES, broken=False), chat_transcript(MESSAGES, broken=True), chat_round
    elif lane == "gemini":
        base, broken, make = gemini_transcript(MESSAGES), gemini_transcript(MESSAGES, broken=True), gemini_round
    else:
        base, broken, make = (
            anthropic_transcript(MESSAGES),
            anthropic_transcript(MESSAGES, broken=True),
            anthropic_round,
        )
    for transcript in (base, broken):
        transcript[0] = _retitled(transcript[0], tag)
    return {
        "": Conversation(base, [make(n) for n in range(ROUNDS)]),
        ", rebuilt": Conversation(base, [make(n) for n in range(ROUNDS)], rebuilt=_rebuilt),
        ", cold": Cold(base),
        ", broken": Conversation(broken, [make(n) for n in range(ROUNDS)]),
    }


def chat_json() -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
        }
    ).encode()


def chat_sse(events: int) -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None) -> str:
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n"

    parts = [chunk({"role": "assistant", "content": ""}, None)]
    parts += [chunk({"content": f"w{i} "}, None) for i in range(events - 2)]
    parts += [chunk({}, "stop"), "data: [DONE]\n\n"]
    return "".join(parts).encode()


def anthropic_json() -> bytes:
    return json.dumps(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 7},
        }
    ).encode()


def gemini_json() -> bytes:
    return json.dumps(
        {
            "candidates": [
                {"index": 0, "content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 7, "totalTokenCount": 12},
            "modelVersion": MODEL,
            "responseId": "resp-1",
        }
    ).encode()


def converse_json() -> bytes:
    return json.dumps(
        {
            "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12},
            "metrics": {"latencyMs": 1},
        }
    ).encode()


class _Body:
    """A stubbed response's raw body, as botocore reads it (``stream()``)."""

    def __init__(self, content: bytes) -> None:
        self._content = content

    def stream(self, **_: object) -> Iterable[bytes]:
        return iter((self._content,))


class StubbedHttp:
    """botocore's HTTP session, answering every request with ``content`` at once (no network).

    It stands where ``Endpoint._send`` sends (``endpoint.http_session``), so everything botocore
    does up to the wire (validation, serialisation, signing) and otel-toolturn's send hook still run.
    """

    def __init__(self, content: bytes) -> None:
        self._content = content

    def send(self, request: AWSPreparedRequest) -> AWSResponse:
        """A 200 response holding ``content``, for any request."""
        headers = {"content-type": "application/json", "x-amzn-requestid": "req-1"}
        return AWSResponse(request.url, 200, headers, _Body(self._content))

    def close(self) -> None:
        """Nothing to close."""


DUMMY: Final = "k"
"""The credentials the stubbed clients sign with (nothing checks them)."""


def bedrock_client() -> botocore.client.BaseClient:
    """boto3's ``bedrock-runtime`` client, dummy credentials, one attempt, its HTTP session ``StubbedHttp``."""
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url="http://bench.invalid",
        region_name="us-east-1",
        aws_access_key_id=DUMMY,
        aws_secret_access_key=DUMMY,
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
    client._endpoint.http_session = StubbedHttp(converse_json())  # where the HTTP response is stubbed
    return client


def anthropic_sse(events: int) -> bytes:
    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"

    start: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant", "model": MODEL, "content": []}
    start |= {"stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}
    parts = [event("message_start", {"message": start})]
    parts.append(event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}))
    parts += [
        event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": f"w{i} "}})
        for i in range(events - 5)
    ]
    parts.append(event("content_block_stop", {"index": 0}))
    parts.append(event("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}}))
    parts.append(event("message_stop", {}))
    return "".join(parts).encode()


class _NoSpans(SpanExporter):
    def export(self, spans: Sequence[object]) -> SpanExportResult:
        del spans
        return SpanExportResult.SUCCESS


class _NoLogs(LogRecordExporter):
    def export(self, batch: Sequence[object]) -> LogRecordExportResult:
        del batch
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        del timeout_millis
        return True


def setup_telemetry() -> None:
    """The same OpenTelemetry SDK in every process: real providers, exporting to nothing."""
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(_NoSpans()))
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(BatchLogRecordProcessor(_NoLogs()))
    _logs.set_logger_provider(logger_provider)


def _instrumentor(variant: str) -> tuple[Any, str] | None:
    """The ``BaseInstrumentor`` of ``variant`` and its package, or ``None`` when not installed."""
    if variant == "otel-toolturn":
        return ToolTurnInstrumentor(), "otel-toolturn"
    if variant == "span only":
        return SpanOnly(), "bench.floor (an inference span and two metric points, nothing else)"
    candidates = (
        [
            ("opentelemetry.instrumentation.genai.openai", "opentelemetry-instrumentation-genai-openai"),
            ("opentelemetry.instrumentation.openai_v2", "opentelemetry-instrumentation-openai-v2"),
        ]
        if variant == "otel-genai"
        else [("opentelemetry.instrumentation.openai", "opentelemetry-instrumentation-openai")]
    )
    for module, dist in candidates:
        try:
            instrumentor = importlib.import_module(module).OpenAIInstrumentor
        except ImportError:
            continue
        return instrumentor(), dist
    return None


Call = lockstep.Call


def _drain(stream: Iterable[object]) -> int:
    """Read a stream to its end, as a caller would; the number of events."""
    count = 0
    for _ in stream:
        count += 1
    return count


FRAMEWORK_CALLS: Final = ("pydantic-ai session 350 msgs", "langchain session 350 msgs")
"""The calls made through a framework; built only when one of them is asked for (or every call is), the
others only when one of them is."""


def calls_by_name(*, openai_only: bool, only: Sequence[str] = ()) -> dict[str, Call]:
    """Each timed call, by name (``only``: just these)."""
    calls = _every_call(openai_only=openai_only) if not only or set(only) - set(FRAMEWORK_CALLS) else {}
    if not openai_only and (not only or set(only) & set(FRAMEWORK_CALLS)):
        calls |= _framework_calls()
    return {name: call for name, call in calls.items() if not only or name in only}


def _framework_calls() -> dict[str, Call]:
    """The realistic session, growing, held by pydantic-ai and by LangChain; each call through the framework."""
    from bench import _frameworks  # noqa: PLC0415 - imported for these calls only: each framework takes seconds

    headers = {"content-type": "application/json"}
    transport = httpx2.MockTransport(lambda _r: httpx2.Response(200, content=anthropic_json(), headers=headers))
    rounds = [session_round(n) for n in range(SESSION_ROUNDS)]

    def held(framework: str) -> list[dict[str, Any]]:
        """The session, its first message its own per framework, so no row's conversation state is another's."""
        base = session()
        base[0] = _retitled(base[0], f" ({framework})")
        return base

    typed = Conversation(
        _frameworks.pydantic_ai_messages(held("pydantic-ai"), model=MODEL),
        [_frameworks.pydantic_ai_messages(r, model=MODEL) for r in rounds],
    )
    chain = Conversation(
        _frameworks.langchain_messages(held("langchain")), [_frameworks.langchain_messages(r) for r in rounds]
    )
    return {
        FRAMEWORK_CALLS[0]: (
            typed.next,
            _frameworks.pydantic_ai_call(httpx2.AsyncClient(transport=transport), model=MODEL),
        ),
        FRAMEWORK_CALLS[1]: (chain.next, _frameworks.langchain_call(httpx2.Client(transport=transport), model=MODEL)),
    }


def _every_call(*, openai_only: bool) -> dict[str, Call]:

    def client(body: bytes, kind: str) -> httpx2.Client:
        headers = {"content-type": "text/event-stream" if kind == "sse" else "application/json"}
        return httpx2.Client(
            transport=httpx2.MockTransport(lambda _r: httpx2.Response(200, content=body, headers=headers))
        )

    def nothing() -> None:
        return None

    def chat_call(source: Conversation[dict[str, Any]] | Cold) -> Call:
        return source.next, lambda messages: chat.chat.completions.create(model=MODEL, messages=messages)

    def anthropic_call(source: Conversation[dict[str, Any]] | Cold) -> Call:
        return source.next, lambda messages: ant.messages.create(model=MODEL, max_tokens=8, messages=messages)

    chat: Any = openai.OpenAI(api_key="k", http_client=client(chat_json(), "json"), max_retries=0)
    chat_stream: Any = openai.OpenAI(api_key="k", http_client=client(chat_sse(EVENTS), "sse"), max_retries=0)
    short = chat_transcript(3, broken=False)
    calls: dict[str, Call] = {
        f"chat 2,000 msgs{suffix}": chat_call(source) for suffix, source in transcripts("chat").items()
    }
    calls["chat stream 5,000"] = (
        nothing,
        lambda _: _drain(chat_stream.chat.completions.create(model=MODEL, messages=short, stream=True)),
    )
    if openai_only:
        return calls
    telemetry_off: Any = {"traces": {"enabled": False}}
    ant: Any = anthropic.Anthropic(
        api_key="k", http_client=client(anthropic_json(), "json"), max_retries=0, open_telemetry=telemetry_off
    )
    ant_stream: Any = anthropic.Anthropic(
        api_key="k", http_client=client(anthropic_sse(EVENTS), "sse"), max_retries=0, open_telemetry=telemetry_off
    )
    for suffix, source in transcripts("anthropic").items():
        calls[f"anthropic 2,000 msgs{suffix}"] = anthropic_call(source)
    realistic = Conversation(session(), [session_round(n) for n in range(SESSION_ROUNDS)])
    calls["anthropic session 350 msgs"] = anthropic_call(realistic)
    # The SDK's default whenever a tracer provider is set: its own call span, which otel-toolturn
    # records onto instead of starting its own (its own transcript, so no row's conversation state is another's).
    ant_traced: Any = anthropic.Anthropic(
        api_key="k", http_client=client(anthropic_json(), "json"), max_retries=0, open_telemetry={"traces": True}
    )
    traced = transcripts("anthropic", tag=" (SDK span)")[""]
    calls["anthropic 2,000 msgs, SDK span"] = (
        traced.next,
        lambda messages: ant_traced.messages.create(model=MODEL, max_tokens=8, messages=messages),
    )
    gemini_http = client(gemini_json(), "json")
    gem: Any = genai.Client(
        api_key="k", http_options=genai_types.HttpOptions(base_url="http://bench.invalid", httpx_client=gemini_http)
    )
    for suffix, source in transcripts("gemini").items():
        calls[f"gemini 2,000 msgs{suffix}"] = (
            source.next,
            lambda contents: gem.models.generate_content(model=MODEL, contents=contents),
        )
    groq_http = httpx.Client(
        transport=httpx.MockTransport(
            lambda _r: httpx.Response(200, content=chat_json(), headers={"content-type": "application/json"})
        )
    )
    groq_chat: Any = groq.Groq(api_key="k", http_client=groq_http, max_retries=0)
    groq_transcripts = transcripts("chat", tag=" (groq)")
    for suffix in ("", ", broken"):
        calls[f"groq 2,000 msgs{suffix}"] = (
            groq_transcripts[suffix].next,
            lambda messages: groq_chat.chat.completions.create(model=MODEL, messages=messages),
        )
    converse: Any = bedrock_client()
    for suffix, broken in (("", False), (", broken", True)):
        source = Conversation(bedrock_transcript(MESSAGES, broken=broken), [bedrock_round(n) for n in range(ROUNDS)])
        calls[f"bedrock 2,000 msgs{suffix}"] = (
            source.next,
            lambda messages: converse.converse(modelId=MODEL, messages=messages),
        )
    first = anthropic_transcript(MESSAGES)[:1]
    calls["anthropic stream 5,000"] = (
        nothing,
        lambda _: _drain(ant_stream.messages.create(model=MODEL, max_tokens=8, messages=first, stream=True)),
    )
    return calls


BUDGET: Final = {False: 10.0, True: 2.0}
"""Seconds of uninstrumented calls one row aims at (full run, ``--quick``); it sets how many triples run."""
TRIPLES: Final = {False: (18, 360), True: (6, 42)}
"""The fewest and the most triples of a row (full run, ``--quick``)."""
SETS: Final = {False: 6, True: 3}
"""How many sets of fresh worker processes share a row's triples (full run, ``--quick``; a multiple of 3)."""


def worker(variant: str, *, only: Sequence[str] = ()) -> None:
    """Serve the calls (``lockstep.serve``; ``only``: just these), instrumented once with ``variant`` (or ``none``)."""
    setup_telemetry()

    if variant == "none":
        lockstep.serve(calls_by_name(openai_only=False, only=only))
        return
    found = _instrumentor(variant)
    if found is None:
        lockstep.serve({}, note="not installed")
        return
    instrumentor, package = found
    # One options object, as an application instruments once: otel-toolturn's transcript memo
    # belongs to the options it was instrumented with.
    settings: dict[str, Any] = {"options": resolve_options(environ=os.environ)} if variant == "otel-toolturn" else {}
    calls = calls_by_name(openai_only=variant not in ("otel-toolturn", "span only"), only=only)
    instrumentor.instrument(**settings)
    lockstep.serve(calls, note=package)


def measure(variant: str, *, quick: bool, only: Sequence[str] = ()) -> dict[str, Any]:
    """Every call of ``variant`` (``only``: these) against the SDK uninstrumented (``lockstep.compare``), by name."""
    root = str(Path(__file__).resolve().parents[1])

    def worker_for(side: str) -> lockstep.Worker:
        command = [sys.executable, "-m", "bench.overhead", "--worker", side]
        for name in only:
            command += ["--only", name]
        return lockstep.Worker(command, cwd=root)

    def start(side: str) -> lockstep.Worker:
        return worker_for(variant if side == "instrumented" else "none")

    fewest, most = TRIPLES[quick]
    package, rows = lockstep.compare(start, sets=SETS[quick], budget=BUDGET[quick], fewest=fewest, most=most)
    return {"variant": variant, "package": package, "rows": rows}


SPLIT: Final = ("total", "strip", "law", "receipt: prefix", "receipt: system", "telemetry", "rest")


def _split_row(
    resource: object, reply: object, extra: dict[str, Any], sources: tuple[Any, Any], *, quick: bool
) -> dict[str, float]:
    """One call's split (see ``split``): ``sources`` give the transcripts, one for the phases, one for ``total``."""
    from otel_toolturn import compose, ensure_tool_turn_invariants  # noqa: PLC0415 - only the split reads the internals
    from otel_toolturn.instrument import _patches  # noqa: PLC0415
    from otel_toolturn.instrument._pending import PENDING  # noqa: PLC0415
    from otel_toolturn.instrument._record import CallRecord  # noqa: PLC0415
    from otel_toolturn.instrument._request import DIGESTS, prepare_request  # noqa: PLC0415

    telemetry = _patches.STATE.telemetry
    if telemetry is None:
        raise RuntimeError("the split needs otel-toolturn instrumented")
    lane = "anthropic.messages" if isinstance(resource, anthropic.resources.Messages) else "openai.chat_completions"
    target = next(t for t in _patches.TARGETS if t.lane == lane and t.method == "create" and not t.is_async)
    lane, provider = target.lane, target.sdk
    wrapper = _patches._wrapper_for(target)
    phases, calls = sources
    steps = 20 if quick else 150
    clock = time.thread_time_ns
    times: dict[str, list[float]] = {name: [] for name in SPLIT if name != "rest"}

    def send_at_once(*_args: object, **_kwargs: object) -> object:
        """The SDK's send, at once: the pending call recorded as the send hook records it, then the reply."""
        call = PENDING.get()
        record = call.sent() if call is not None else None
        if call is not None and record is not None:
            with record.current():
                call.handed_over()
        return reply

    gc.collect()
    gc.disable()
    try:
        for _ in range(steps):
            kwargs = {"model": MODEL, **extra, "messages": calls.next()}
            started = clock()
            wrapper(send_at_once, resource, (), kwargs)
            times["total"].append(clock() - started)

            messages = phases.next()
            request = {"model": MODEL, **extra, "messages": messages}
            started = clock()
            stripped = compose.strip_framework_fields(messages)
            strip = clock()
            sent = ensure_tool_turn_invariants(stripped, lane=lane).messages
            law = clock()
            caller = DIGESTS.digests(messages)
            fingerprint = compose.prefix_fingerprint(
                (caller if sent is messages else DIGESTS.digests(sent, source=messages))[:-1]
            )
            prefix = clock()
            pieces = compose.system_prompt_pieces(request, lane=lane)
            system = tuple(compose.fingerprint(p.raw_content) for p in compose.contributing_pieces(pieces))
            done = clock()
            del fingerprint, system
            for name, took in (
                ("strip", strip - started),
                ("law", law - strip),
                ("receipt: prefix", prefix - law),
                ("receipt: system", done - prefix),
            ):
                times[name].append(took)

            decision, receipt = prepare_request(request, lane=lane, options=telemetry.options, scope=None, receipt=True)
            one = CallRecord(telemetry, lane=lane, provider=provider, requested_model=MODEL, server_address="h")
            started = clock()
            with one.current():
                pass
            one.request(decision, receipt)
            one.response(reply)
            times["telemetry"].append(clock() - started)
    finally:
        gc.enable()
    row = {name: statistics.median(values) / 1000 for name, values in times.items()}
    row["rest"] = row["total"] - sum(v for k, v in row.items() if k != "total")
    return row


def split(*, quick: bool) -> dict[str, dict[str, float]]:
    """Where otel-toolturn's own time goes on each 2,000-message call, the SDK call stubbed out (µs per call).

    Each figure is the median over the calls of a growing conversation (``Conversation``; the cold
    row: ``Cold``) of this thread's CPU time. ``total``: the patched method around a stub that
    sends at once (the call recorded as the send hook records it: the receipt, the conversation
    state, the span) and returns the SDK's own response object. ``strip``: the strip rule on the transcript.
    ``law``: the law on the stripped transcript. ``receipt: prefix``: the digests (the caller's and
    the view's) and the prefix fingerprint. ``receipt: system``: the system-prompt pieces and their fingerprints.
    ``telemetry``: one call's record (span, metric points, events and log records, the
    whole-response check). ``rest``: ``total`` less the others (the call's arguments read, the
    conversation state's findings, the pending call).
    """
    setup_telemetry()
    telemetry_off: Any = {"traces": {"enabled": False}}
    chat: Any = openai.OpenAI(api_key="k", http_client=httpx2.Client(), max_retries=0)
    ant: Any = anthropic.Anthropic(
        api_key="k", http_client=httpx2.Client(), max_retries=0, open_telemetry=telemetry_off
    )
    chat_reply = openai.types.chat.ChatCompletion.model_validate_json(chat_json())
    ant_reply = anthropic.types.Message.model_validate_json(anthropic_json())
    cases: dict[str, tuple[Any, object, dict[str, Any], tuple[Any, Any]]] = {}
    for lane, resource, reply, extra in (
        ("chat", chat.chat.completions, chat_reply, {}),
        ("anthropic", ant.messages, ant_reply, {"max_tokens": 8}),
    ):
        phases, calls = transcripts(lane, tag=" (phases)"), transcripts(lane)
        for suffix in phases:
            cases[f"{lane} 2,000 msgs{suffix}"] = (resource, reply, extra, (phases[suffix], calls[suffix]))
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument()
    try:
        return {
            name: _split_row(resource, reply, extra, sources, quick=quick)
            for name, (resource, reply, extra, sources) in cases.items()
        }
    finally:
        instrumentor.uninstrument()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--worker", choices=[*VARIANTS, "none"], help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", action="append", default=[], metavar="CALL", help="time only this call (repeatable)")
    parser.add_argument("--variant", action="append", choices=VARIANTS, help="only this instrumentation (repeatable)")
    parser.add_argument("--split", action="store_true", help="where otel-toolturn's own time goes, per call")
    args = parser.parse_args(argv)
    if args.split:
        rows = split(quick=args.quick)
        width = max(len(n) for n in rows) + 2
        print("otel-toolturn's own time per call, SDK call stubbed: µs of thread CPU time, median over calls.\n")
        print(f"{'call':<{width}}" + "".join(f"{k:>16}" for k in SPLIT))
        for name, cells in rows.items():
            print(f"{name:<{width}}" + "".join(f"{cells[k]:>16.0f}" for k in SPLIT))
        return
    if args.worker:
        worker(args.worker, only=args.only)
        return
    variants = args.variant or VARIANTS
    print(table([measure(variant, quick=args.quick, only=args.only) for variant in variants]))


def table(results: Sequence[dict[str, Any]]) -> str:
    """The variants' results side by side: one row per call, one column per variant, and the control."""
    names = list(dict.fromkeys(name for r in results for name in r["rows"]))
    width = max(len(n) for n in names) + 2
    lines = [
        "Overhead of each instrumentation: median over rotating triples (each side in its own process) of",
        "one call instrumented / the adjacent call uninstrumented, with its 95% interval.",
        "'uninstrumented': median per-call time. 'control': a second uninstrumented process in place of the",
        "instrumented one (the method's noise; otel-toolturn's run). '-': not measured for that instrumentation.",
        "",
        f"{'call':<{width}}{'uninstrumented':>16}{'control':>9}" + "".join(f"{r['variant']:>24}" for r in results),
    ]
    for name in names:
        measured = [r["rows"][name] for r in results if name in r["rows"]]
        base = min(m["before"] for m in measured)
        row = f"{name:<{width}}{base * 1000:>13.2f} ms{measured[0]['control']:>8.3f}x"
        for r in results:
            cell = r["rows"].get(name)
            if cell is None:
                row += f"{'-':>24}"
                continue
            low, high = cell["interval"]
            text = f"{cell['ratio']:.3f}x ({low:.3f}-{high:.3f})"
            row += f"{text:>24}"
        lines.append(row)
    lines.append("")
    lines.extend(f"{r['variant']}: {r['package']}" for r in results)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
