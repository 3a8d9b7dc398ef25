"""``otel-toolturn demo``: eight real-world tool-turn breakages, refused, then repaired.

Role: a newcomer's first look. An agent talks to the embedded provider simulator through the real
``anthropic``, ``openai`` and ``google-genai`` SDK clients (``base_url`` on loopback, a dummy key,
no network) and lives through eight breakages users report: interrupted parallel calls, a late
result, text after a ``tool_use``, a repeated call, an orphan left by trimming, a cut stream, a
preserved-thinking model whose tool result arrives after it answered, and a Gemini history whose
summariser kept one of two function responses. Each story is played twice:

1. without otel-toolturn — the provider's HTTP 400, as the simulator answers it (its verdict is the
   library's own ``validate``, so the figures are "per the simulator"), is printed; the preserved-thinking
   story also plays the repair the law used to make (the late result moved up into its call's
   batch), written out in the story, and the provider's prefix check refuses it;
2. with ``otel_toolturn.init(...)`` — every call succeeds; per request, the repairs and
   stream events read back from an in-memory span exporter attached beside the real one, and for
   the preserved-thinking story the prompt tokens the provider read from its cache.

Telemetry goes to the console by default (one line per span, printed at the end), to OTLP when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (protocol from ``OTEL_EXPORTER_OTLP_PROTOCOL``), or nowhere
but the summary with ``--telemetry none``. It finishes in seconds.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

import anthropic
import openai
from anthropic.types import Message, MessageParam
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    InMemoryMetricReader,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_toolturn
from otel_toolturn._vocab import RepairForm
from otel_toolturn.cli import Telemetry
from otel_toolturn.instrument import names
from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator

KEY: Final = "demo-key-not-used"
CARRY_ON: Final = ScriptedTurn(text="Carrying on from where we were.")
REPAIR_WORDS: Final[Mapping[RepairForm, str]] = MappingProxyType(
    {
        "trailing_text": "text after the call moved ahead of it",
        "late_result": "the late result moved up behind its call",
        "late_result_in_place": "the result that came after the answer delivered where it stands",
        "duplicate_result_in_place": "a second result that came after the answer delivered where it stands",
        "missing_result": 'an "interrupted" result added for the unanswered call',
        "duplicate_result": "the second result folded into the first",
        "duplicate_call": "the repeated call left out",
        "orphan_result": "the result whose call is gone left out",
        "reused_id": "a reused call id renamed",
        "invalid_id": "a call id the provider's pattern refuses renamed",
        "duplicate_item": "an item replayed under the same id left out",
        "duplicate_item_id": "a call or output item sent without the item id it repeated",
        "dangling_reasoning": "reasoning with nothing after it left out",
        "placeholder_signature": "the documented placeholder set on a call that lost its thought signature",
        "text_after_results": "text after the function responses moved ahead of them",
    }
)
"""Each repair form in a newcomer's words."""
SHOWN_METRICS: Final = (
    names.REQUESTS.name,
    names.REPAIRS.name,
    names.LOSSY_PROJECTIONS.name,
    names.STREAM_DROPS.name,
)


# --- what one request came to -----------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class Sent:
    """One request's outcome: the status, and either a short account of the reply or the provider's error."""

    status: int
    text: str
    events: tuple[str, ...] = ()


@dataclass(kw_only=True, slots=True)
class Agent:
    """The demo's agent: SDK clients on the simulator, and a ``send`` that prints each request's outcome."""

    sim: Simulator
    spans: InMemorySpanExporter | None
    anthropic: anthropic.Anthropic
    openai: openai.OpenAI
    gemini: genai.Client
    seen: int = 0
    log: list[Sent] = field(default_factory=list)

    def send(self, label: str, call: Callable[[], str], *, answer: ScriptedTurn | None = None) -> bool:
        """Run one SDK call, print its outcome (and its telemetry events); ``answer`` scripts the reply."""
        if answer is not None:
            self.sim.enqueue(answer)
        try:
            status, text = 200, call()
        except (anthropic.BadRequestError, openai.BadRequestError) as error:
            self.sim.clear_turns()  # a refused request takes no scripted turn: drop the one queued for it
            status, text = error.status_code, _provider_message(error.body)
        except genai_errors.ClientError as error:
            self.sim.clear_turns()
            status, text = error.code, str(error.message)
        sent = Sent(status=status, text=text, events=self._new_events())
        self.log.append(sent)
        mark = "ok     " if sent.status == 200 else "refused"
        print(f"     {label:<38} {sent.status} {mark}  {sent.text}")
        for event in sent.events:
            print(f"         {event}")
        return sent.status == 200

    def ask_anthropic(self, history: list[MessageParam]) -> Message:
        """One Anthropic request of the demo's agent over ``history``, with its tools."""
        return self.anthropic.messages.create(model=MODEL_A, max_tokens=512, messages=history, tools=ANTHROPIC_TOOLS)

    def ask_thinking(self, history: list[MessageParam]) -> Message:
        """One Anthropic request over ``history`` with thinking on (each reply's thinking is signed)."""
        return self.anthropic.messages.create(
            model=MODEL_A, max_tokens=2048, messages=history, tools=ANTHROPIC_TOOLS, thinking=THINKING
        )

    @property
    def instrumented(self) -> bool:
        """Whether this pass runs with otel-toolturn (its spans are read back)."""
        return self.spans is not None

    def _new_events(self) -> tuple[str, ...]:
        if self.spans is None:
            return ()
        finished = self.spans.get_finished_spans()
        fresh, self.seen = finished[self.seen :], len(finished)
        return tuple(_describe(event.name, event.attributes or {}) for span in fresh for event in span.events)


def _provider_message(body: object) -> str:
    """The provider's own error words, from either SDK's parsed error body."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(body)


def _describe(name: str, attributes: Mapping[str, object]) -> str:
    """One telemetry event as a short line."""
    if name == names.EVENT_REPAIR:
        ids = attributes.get(names.REPAIR_TOOL_CALL_IDS, ())
        joined = ", ".join(str(i) for i in ids) if isinstance(ids, Sequence) and not isinstance(ids, str) else ids
        form = attributes.get(names.REPAIR_FORM)
        words = next((w for f, w in REPAIR_WORDS.items() if f == form), "")
        lossy = " (lossy)" if attributes.get(names.REPAIR_LOSSY) else ""
        return f"{name}: {form} [{joined}]: {words}{lossy}"
    if name == names.EVENT_STREAM_DROP:
        cause, count = attributes.get(names.STREAM_DROP_CAUSE), attributes.get(names.STREAM_DROP_COUNT)
        return f"{name}: {cause} x{count}: a call without whole arguments dropped, never run"
    if name == names.EVENT_STREAM_TORN:
        return f"{name}: the stream ended without its final frame"
    if name == names.EVENT_STREAM_END_IGNORED:
        return f"{name}: {attributes.get(names.STREAM_END_STATEMENT)} x{attributes.get(names.STREAM_END_COUNT)}"
    return name


# --- the eight stories ----------------------------------------------------------------------------------
ANTHROPIC_TOOLS: Final[list[anthropic.types.ToolParam]] = [
    {"name": "read_file", "description": "Read a file.", "input_schema": {"type": "object"}},
    {"name": "bash", "description": "Run a shell command.", "input_schema": {"type": "object"}},
]
CHAT_TOOLS: Final[list[openai.types.chat.ChatCompletionToolParam]] = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("run_tests", "run_linter", "add")
]
RESPONSES_TOOLS: Final[list[openai.types.responses.FunctionToolParam]] = [
    {"type": "function", "name": "write_file", "parameters": {"type": "object"}, "strict": False}
]
MODEL_A: Final = "claude-sonnet-4-5"
THINKING: Final[anthropic.types.ThinkingConfigEnabledParam] = {"type": "enabled", "budget_tokens": 1024}
MODEL_O: Final = "gpt-4.1-mini"


def _calls(*specs: tuple[str, Mapping[str, object]], same_id: str | None = None) -> tuple[ScriptedCall, ...]:
    return tuple(ScriptedCall(name=name, arguments=args, call_id=same_id) for name, args in specs)


def interrupted_parallel_calls(agent: Agent) -> None:
    """Two parallel reads; Ctrl-C after the first; the user types "continue"."""
    history: list[anthropic.types.MessageParam] = [{"role": "user", "content": "Tidy up the config loader."}]
    reply: list[anthropic.types.Message] = []

    def ask() -> str:
        reply.append(agent.ask_anthropic(history))
        return f"{len(reply[0].content) - 1} tool calls"

    turn = ScriptedTurn(
        text="Reading both files.",
        calls=_calls(("read_file", {"path": "loader.py"}), ("read_file", {"path": "schema.py"})),
    )
    if not agent.send("the model asks for two reads", ask, answer=turn):
        return
    first = next(b for b in reply[0].content if b.type == "tool_use")
    history += [
        {"role": "assistant", "content": reply[0].content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.id, "content": "def load(): ..."}]},
        {"role": "user", "content": "continue"},
    ]
    agent.send(
        'Ctrl-C, then "continue"',
        lambda: _text(agent.ask_anthropic(history)),
        answer=CARRY_ON,
    )


def late_result(agent: Agent) -> None:
    """Two parallel checks; the user speaks before the second result is recorded."""
    history: list[openai.types.chat.ChatCompletionMessageParam] = [
        {"role": "system", "content": "You are a build assistant."},
        {"role": "user", "content": "Run the tests and the linter."},
    ]
    reply: list[openai.types.chat.ChatCompletion] = []

    def ask() -> str:
        reply.append(agent.openai.chat.completions.create(model=MODEL_O, messages=history, tools=CHAT_TOOLS))
        return f"{len(reply[0].choices[0].message.tool_calls or [])} tool calls"

    turn = ScriptedTurn(calls=_calls(("run_tests", {}), ("run_linter", {})))
    if not agent.send("the model asks for two checks", ask, answer=turn):
        return
    message = reply[0].choices[0].message
    tests, linter = (c.id for c in message.tool_calls or [])
    history += [
        _assistant_param(message),
        {"role": "tool", "tool_call_id": tests, "content": "412 passed"},
        {"role": "user", "content": "Also check the docs build."},
        {"role": "tool", "tool_call_id": linter, "content": "no findings"},
    ]
    agent.send(
        "the user speaks before the 2nd result",
        lambda: _text(agent.openai.chat.completions.create(model=MODEL_O, messages=history, tools=CHAT_TOOLS)),
        answer=CARRY_ON,
    )


def text_after_tool_use(agent: Agent) -> None:
    """A retry after an abort appends text to the assistant message, after its tool_use."""
    history: list[anthropic.types.MessageParam] = [{"role": "user", "content": "Rename utils.py to helpers.py."}]
    reply: list[anthropic.types.Message] = []

    def ask() -> str:
        with agent.anthropic.messages.stream(
            model=MODEL_A, max_tokens=512, messages=history, tools=ANTHROPIC_TOOLS
        ) as stream:
            reply.append(stream.get_final_message())
        return "1 tool call (streamed)"

    turn = ScriptedTurn(text="Renaming.", calls=_calls(("bash", {"command": "git mv utils.py helpers.py"})))
    if not agent.send("the model asks to run a command", ask, answer=turn):
        return
    call = next(b for b in reply[0].content if b.type == "tool_use")
    said: list[anthropic.types.ContentBlockParam] = [
        {"type": "text", "text": b.text} for b in reply[0].content if b.type == "text"
    ]
    content: list[anthropic.types.ContentBlockParam] = [
        *said,
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input},
        {"type": "text", "text": "Retrying the rename after the abort."},
    ]
    history += [
        {"role": "assistant", "content": content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "renamed"}]},
    ]
    agent.send(
        "retry text lands after the tool_use",
        lambda: _text(agent.ask_anthropic(history)),
        answer=CARRY_ON,
    )


def repeated_call(agent: Agent) -> None:
    """The same tool_use arrives twice in one message; the agent answers it once."""
    history: list[anthropic.types.MessageParam] = [{"role": "user", "content": "Open the README."}]
    reply: list[anthropic.types.Message] = []

    def ask() -> str:
        reply.append(agent.ask_anthropic(history))
        return "the same tool call twice"

    twice = ("read_file", {"path": "README.md"})
    if not agent.send(
        "the model repeats one call", ask, answer=ScriptedTurn(calls=_calls(twice, twice, same_id="toolu_twice"))
    ):
        return
    history += [
        {"role": "assistant", "content": reply[0].content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_twice", "content": "# Project"}]},
    ]
    agent.send(
        "one result for the repeated call",
        lambda: _text(agent.ask_anthropic(history)),
        answer=CARRY_ON,
    )


def orphan_after_trimming(agent: Agent) -> None:
    """A history window keeps the system prompt and the last three messages, cutting a call from its result."""
    history: list[openai.types.chat.ChatCompletionMessageParam] = [
        {"role": "system", "content": "You add numbers."},
        {"role": "user", "content": "What is 3 + 4?"},
    ]
    reply: list[openai.types.chat.ChatCompletion] = []

    def ask() -> str:
        reply.append(agent.openai.chat.completions.create(model=MODEL_O, messages=history, tools=CHAT_TOOLS))
        return "1 tool call"

    if not agent.send("the model calls add(3, 4)", ask, answer=ScriptedTurn(calls=_calls(("add", {"a": 3, "b": 4})))):
        return
    message = reply[0].choices[0].message
    call_id = (message.tool_calls or [])[0].id
    history += [
        _assistant_param(message),
        {"role": "tool", "tool_call_id": call_id, "content": "7"},
        {"role": "assistant", "content": "3 + 4 = 7."},
        {"role": "user", "content": "And 3 + 3?"},
    ]
    trimmed = [history[0], *history[-3:]]
    agent.send(
        "history trimmed to the last 3",
        lambda: _text(agent.openai.chat.completions.create(model=MODEL_O, messages=trimmed, tools=CHAT_TOOLS)),
        answer=CARRY_ON,
    )


def cut_stream(agent: Agent) -> None:
    """A streamed call is cut mid-arguments; the framework drops the call but keeps an error result for it."""
    history: list[openai.types.responses.ResponseInputItemParam] = [
        {"role": "user", "content": "Write the release notes to NOTES.md."}
    ]
    call_ids: list[str] = []

    def ask() -> str:
        stream = agent.openai.responses.create(model=MODEL_O, input=history, tools=RESPONSES_TOOLS, stream=True)
        call_ids.extend(
            event.item.call_id
            for event in stream
            if event.type == "response.output_item.added" and event.item.type == "function_call"
        )
        return "the stream stops mid-arguments"

    notes = {"path": "NOTES.md", "text": "## 1.4.0\n- faster startup\n- fewer retries"}
    turn = ScriptedTurn(calls=_calls(("write_file", notes)), misbehaviours=("cut_arguments",))
    if not agent.send("the model streams a call, cut", ask, answer=turn):
        return
    history += [
        {"type": "function_call_output", "call_id": call_ids[0], "output": "error: the arguments were cut off"},
        {"role": "user", "content": "Try again, please."},
    ]
    agent.send(
        "the cut call's error result is kept",
        lambda: _text(agent.openai.responses.create(model=MODEL_O, input=history, tools=RESPONSES_TOOLS)),
        answer=CARRY_ON,
    )


def result_after_answer(agent: Agent) -> None:
    """Thinking on; Ctrl-C leaves the slow suite unanswered; its result lands after the model answered.

    Without otel-toolturn the unanswered call is refused; the repair the law used to make is then
    written out (close the call, and once the result lands move it up in place of the close): the
    provider's prefix check refuses it, because the model's signed thinking was produced after the
    close. With otel-toolturn the close stays and the result is delivered where it stands.
    """
    history: list[MessageParam] = [{"role": "user", "content": "Build it and run the integration suite."}]
    replies: list[Message] = []

    def ask(messages: list[MessageParam]) -> Callable[[], str]:
        def call() -> str:
            replies.append(agent.ask_thinking(messages))
            return _with_cache(replies[-1])

        return call

    commands = (("bash", {"command": "make build"}), ("bash", {"command": "make integration"}))
    if not agent.send("the model asks for two commands", ask(history), answer=ScriptedTurn(calls=_calls(*commands))):
        return
    calls = replies[-1].content
    build, suite = (b for b in calls if b.type == "tool_use")
    build_result: anthropic.types.ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": build.id,
        "content": "build ok",
    }
    suite_result: anthropic.types.ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": suite.id,
        "content": "212 passed, 1 failed: test_upload_retry",
    }
    history += [
        {"role": "assistant", "content": calls},
        {"role": "user", "content": [build_result]},
        {"role": "user", "content": "continue"},
    ]
    answered = agent.send('Ctrl-C in the suite, then "continue"', ask(history), answer=CARRY_ON)
    later: list[MessageParam] = [{"role": "user", "content": "Is anything failing?"}]
    if not agent.instrumented:
        # The repair the law used to make, written out. First the unanswered call is closed ...
        close: anthropic.types.ToolResultBlockParam = {
            "type": "tool_result",
            "tool_use_id": suite.id,
            "content": otel_toolturn.INTERRUPTED_RESULT_TEXT,
        }
        closed: list[MessageParam] = [*history[:2], {"role": "user", "content": [build_result, close]}, history[3]]
        if not agent.send("earlier rule: the call closed", ask(closed), answer=CARRY_ON):
            return
        # ... then, when the suite's result lands, it is moved up in place of the close.
        moved: list[MessageParam] = [
            *history[:2],
            {"role": "user", "content": [build_result, suite_result]},
            history[3],
            {"role": "assistant", "content": replies[-1].content},
            *later,
        ]
        agent.send("earlier rule: the result moved up", ask(moved), answer=CARRY_ON)
        return
    if not answered:
        return
    history += [
        {"role": "assistant", "content": replies[-1].content},
        {"role": "user", "content": [suite_result]},
        *later,
    ]
    agent.send("the suite's result lands late", ask(history), answer=CARRY_ON)


def _with_cache(reply: Message) -> str:
    """A reply's account with the provider's cache figures: prompt tokens read from cache, of all."""
    usage = reply.usage
    cached = usage.cache_read_input_tokens or 0
    prompt = usage.input_tokens + cached + (usage.cache_creation_input_tokens or 0)
    said = _text(reply) if any(b.type == "text" for b in reply.content) else "2 tool calls"
    return f"{said}; {cached} of {prompt} prompt tokens read from cache"


GEMINI_MODEL: Final = "gemini-3-pro-preview"
GEMINI_CONFIG: Final = genai_types.GenerateContentConfig(
    tools=[
        genai_types.Tool(
            function_declarations=[genai_types.FunctionDeclaration(name="read_file", description="Read a file.")]
        )
    ],
    automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
)


def pruned_result(agent: Agent) -> None:
    """Two parallel reads on Gemini; a history summariser keeps only one of the two function responses."""
    history: list[genai_types.Content] = [
        genai_types.Content(role="user", parts=[genai_types.Part(text="Compare the dev and prod configs.")])
    ]
    reply: list[genai_types.GenerateContentResponse] = []

    def ask() -> str:
        reply.append(agent.gemini.models.generate_content(model=GEMINI_MODEL, contents=history, config=GEMINI_CONFIG))
        return f"{len(reply[0].function_calls or [])} function calls"

    reads = _calls(("read_file", {"path": "dev.toml"}), ("read_file", {"path": "prod.toml"}))
    if not agent.send("the model asks for two reads", ask, answer=ScriptedTurn(calls=reads)):
        return
    called = reply[0].candidates[0].content if reply[0].candidates else None
    calls = reply[0].function_calls or []
    if called is None or not calls:
        return
    first = calls[0]
    kept = genai_types.Part.from_function_response(name=first.name or "", response={"output": "debug = true"})
    kept.function_response.id = first.id  # type: ignore[union-attr]  # from_function_response always sets it
    history += [called, genai_types.Content(role="user", parts=[kept])]
    agent.send(
        "the summariser kept 1 of 2 responses",
        lambda: _text(agent.gemini.models.generate_content(model=GEMINI_MODEL, contents=history, config=GEMINI_CONFIG)),
        answer=CARRY_ON,
    )


def _assistant_param(
    message: openai.types.chat.ChatCompletionMessage,
) -> openai.types.chat.ChatCompletionAssistantMessageParam:
    """The assistant message as the agent keeps it in its history: its text and its function calls."""
    calls: list[openai.types.chat.ChatCompletionMessageFunctionToolCallParam] = [
        {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
        for c in message.tool_calls or []
        if c.type == "function"
    ]
    return {"role": "assistant", "content": message.content, "tool_calls": calls}


def _text(
    reply: anthropic.types.Message
    | openai.types.chat.ChatCompletion
    | openai.types.responses.Response
    | genai_types.GenerateContentResponse,
) -> str:
    """A short account of a reply: its text, or how many calls it makes."""
    if isinstance(reply, genai_types.GenerateContentResponse):
        text = reply.text or ""
    elif isinstance(reply, anthropic.types.Message):
        text = "".join(b.text for b in reply.content if b.type == "text")
    elif isinstance(reply, openai.types.chat.ChatCompletion):
        text = reply.choices[0].message.content or ""
    else:
        text = reply.output_text
    return f'"{text}"'


STORIES: Final[tuple[tuple[str, str, Callable[[Agent], None]], ...]] = (
    ("interrupted parallel calls", "anthropic", interrupted_parallel_calls),
    ("a late result", "openai chat", late_result),
    ("text after a tool_use", "anthropic", text_after_tool_use),
    ("a repeated call", "anthropic", repeated_call),
    ("an orphan after trimming", "openai chat", orphan_after_trimming),
    ("a cut stream", "openai responses", cut_stream),
    ("a preserved-thinking model: a tool's result arrives after the model answered", "anthropic", result_after_answer),
    ("a summariser pruned one of two results", "gemini", pruned_result),
)


# --- telemetry --------------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class Pipeline:
    """The providers the demo hands to ``init``, the readers it summarises from, and where the rest went."""

    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    logger_provider: LoggerProvider
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    console: io.StringIO | None
    destination: str


def resolve_telemetry(choice: Telemetry | None, environ: Mapping[str, str]) -> Telemetry:
    """The telemetry destination: the one asked for, else OTLP when an endpoint is set, else the console."""
    if choice is not None:
        return choice
    return "otlp" if environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") else "console"


def build_pipeline(telemetry: Telemetry, environ: Mapping[str, str]) -> Pipeline:
    """SDK providers with an in-memory span exporter and metric reader, plus the chosen destination."""
    resource = Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME", "otel-toolturn-demo")})
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    metrics = InMemoryMetricReader()
    readers: list[MetricReader] = [metrics]
    logger_provider = LoggerProvider(resource=resource)
    console: io.StringIO | None = None
    destination = "nowhere but this summary (--telemetry none)"
    if telemetry == "console":
        console = io.StringIO()
        tracer_provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=console, formatter=_one_line)))
        destination = "the console (the console span exporter, one line per span, below)"
    elif telemetry == "otlp":
        grpc = environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").strip().lower() == "grpc"
        span_exporter, metric_exporter, log_exporter = _otlp_exporters(grpc=grpc)
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
        readers.append(PeriodicExportingMetricReader(metric_exporter))
        logger_provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
        where = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "the default OTLP endpoint")
        destination = f"OTLP ({'grpc' if grpc else 'http/protobuf'}) at {where}: spans, metrics and log events"
    return Pipeline(
        tracer_provider=tracer_provider,
        meter_provider=MeterProvider(metric_readers=readers, resource=resource),
        logger_provider=logger_provider,
        spans=spans,
        metrics=metrics,
        console=console,
        destination=destination,
    )


def _otlp_exporters(*, grpc: bool) -> tuple[SpanExporter, MetricExporter, LogRecordExporter]:
    if grpc:
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter  # noqa: PLC0415
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter  # noqa: PLC0415
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter  # noqa: PLC0415

        return OTLPSpanExporter(), OTLPMetricExporter(), OTLPLogExporter()
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs  # noqa: PLC0415
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetrics  # noqa: PLC0415
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans  # noqa: PLC0415

    return HttpSpans(), HttpMetrics(), HttpLogs()


def _one_line(span: ReadableSpan) -> str:
    """The console exporter's format here: one line per span with its toolturn events."""
    context = span.get_span_context()
    trace_id = format(context.trace_id, "032x") if context is not None else "?"
    events = ", ".join(e.name for e in span.events if e.name.startswith("toolturn.")) or "no toolturn events"
    return f"  {span.name:<36} trace {trace_id[:16]}  {events}\n"


def metric_totals(reader: InMemoryMetricReader) -> dict[str, float]:
    """The summed data points of each ``toolturn.*`` metric the reader holds."""
    data = reader.get_metrics_data()
    totals: dict[str, float] = {}
    for resource_metrics in data.resource_metrics if data is not None else ():
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                points = getattr(metric.data, "data_points", ())
                values = [getattr(p, "value", 0) for p in points]
                totals[metric.name] = totals.get(metric.name, 0) + float(sum(values))
    return totals


# --- the run ------------------------------------------------------------------------------------------------
@contextmanager
def _clients(sim: Simulator) -> Iterator[tuple[anthropic.Anthropic, openai.OpenAI, genai.Client]]:
    a = anthropic.Anthropic(base_url=sim.base_url, api_key=KEY, max_retries=0)
    o = openai.OpenAI(base_url=sim.openai_base_url, api_key=KEY, max_retries=0)
    options = genai_types.HttpOptions(base_url=sim.base_url, retry_options=genai_types.HttpRetryOptions(attempts=1))
    g = genai.Client(api_key=KEY, http_options=options)
    try:
        yield a, o, g
    finally:
        a.close()
        o.close()
        g.close()


def _play(sim: Simulator, spans: InMemorySpanExporter | None) -> list[Sent]:
    with _clients(sim) as (a, o, g):
        agent = Agent(sim=sim, spans=spans, anthropic=a, openai=o, gemini=g)
        for number, (title, lane, story) in enumerate(STORIES, start=1):
            print(f"  {number}. {title} ({lane})")
            story(agent)
        return agent.log


def run_demo(*, telemetry: Telemetry | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Play the eight stories without, then with otel-toolturn; 0 when the second pass is all 200s."""
    env = os.environ if environ is None else environ
    chosen = resolve_telemetry(telemetry, env)
    with Simulator() as sim:
        print(f"otel-toolturn demo: a provider simulator at {sim.base_url} (no API key, no network),")
        print("driven by the real anthropic, openai and google-genai SDK clients.\n")
        print(
            "Without otel-toolturn: the simulator refuses each broken transcript as the provider does "
            "(HTTP 400, the provider's words; its verdict is otel-toolturn's own validate, checked "
            "against recorded provider traffic in the test suite)."
        )
        before = _play(sim, None)
        print("\nWith otel_toolturn.init(): the same agent, the same transcripts.")
        pipeline = build_pipeline(chosen, env)
        otel_toolturn.init(
            tracer_provider=pipeline.tracer_provider,
            meter_provider=pipeline.meter_provider,
            logger_provider=pipeline.logger_provider,
        )
        try:
            after = _play(sim, pipeline.spans)
        finally:
            otel_toolturn.shutdown()
        totals = metric_totals(pipeline.metrics)
        for provider in (pipeline.tracer_provider, pipeline.meter_provider, pipeline.logger_provider):
            provider.shutdown()
    refused = sum(s.status != 200 for s in before)
    failed = sum(s.status != 200 for s in after)
    print(
        f"\nSummary, per the simulator: without otel-toolturn {refused} of {len(before)} requests were refused; "
        f"with it {len(after) - failed} of {len(after)} succeeded."
    )
    print("Metrics: " + ", ".join(f"{name} {totals.get(name, 0):g}" for name in SHOWN_METRICS))
    print(f"Telemetry went to {pipeline.destination}.")
    if chosen == "console" and pipeline.console is not None:
        print(pipeline.console.getvalue().rstrip("\n"))
        print("Set OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://localhost:4318) to send it to a collector instead.")
    return 0 if failed == 0 and refused > 0 else 1
