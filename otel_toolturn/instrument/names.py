"""The telemetry contract: every name otel-toolturn emits or reads, defined once.

Span attributes, events, metric instruments and environment variables. ``docs/telemetry.md``
documents each; the dashboards' tests check their queries against this module, never a copy.

This module imports nothing from OpenTelemetry, so tools (the CLI, the dashboard checks) can read
the contract without the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from otel_toolturn._vocab import Lane

INSTRUMENTATION_NAME: Final = "otel_toolturn"

# --- attribute keys (span attributes, event attributes, metric labels) -------------------------
LANE: Final = "toolturn.lane"
MODE: Final = "toolturn.mode"
PROVIDER: Final = "gen_ai.provider.name"
REPAIR_FORM: Final = "toolturn.repair.form"
REPAIR_TOOL_CALL_IDS: Final = "toolturn.repair.tool_call_ids"
REPAIR_LOSSY: Final = "toolturn.repair.lossy"
REPAIR_BEFORE_RUN: Final = "toolturn.repair.before_run"
REPAIR_CALL_KIND: Final = "toolturn.repair.call_kind"
"""The kind of call the repair concerns, one of ``otel_toolturn.CALL_KINDS``."""
REPAIR_REPEAT: Final = "toolturn.repair.repeat"
"""Whether an earlier request of the same conversation made the same repair (form, ids, turn)."""
PREFIX_CHANGE_POSITION: Final = "toolturn.prefix_change.position"
"""The first view position where the answered prefix changed; -1: the head (system prompt, tools)."""
PREFIX_CHANGE_CAUSE: Final = "toolturn.prefix_change.cause"
REPAIRS_COUNT: Final = "toolturn.repairs.count"
REPAIRS_FORMS: Final = "toolturn.repairs.forms"
REPAIRS_LOSSY: Final = "toolturn.repairs.lossy"
STREAM_DROP_CAUSE: Final = "toolturn.stream.drop.cause"
STREAM_DROP_COUNT: Final = "toolturn.stream.drop.count"
STREAM_DROP_IDS: Final = "toolturn.stream.drop.tool_call_ids"
STREAM_END_STATEMENT: Final = "toolturn.stream.end.statement"
STREAM_END_WORD: Final = "toolturn.stream.end.word"
STREAM_END_COUNT: Final = "toolturn.stream.end.count"
STREAM_TORN: Final = "toolturn.stream.torn"
"""The provider's stream ended (the connection or the SDK's iteration ended, or failed) before its final frame."""
STREAM_CLOSED_EARLY: Final = "toolturn.stream.closed_early"
"""The caller stopped reading (closed, left, abandoned or cancelled the stream) before its final frame: never torn."""
STREAM_CLOSED_EARLY_UNFINISHED: Final = "toolturn.stream.closed_early.unfinished_calls"
"""Of a stream closed early: the calls still open when the caller stopped (not stream drops: the caller cut them)."""
TOOLS_WITHHELD_REASON: Final = "toolturn.tools_withheld.reason"
RESPONSE_MODEL_REQUESTED: Final = "toolturn.response_model.requested"
RESPONSE_MODEL_REPORTED: Final = "toolturn.response_model.reported"
REPETITION_RULE: Final = "toolturn.repetition.rule"
REPETITION_DEPTH: Final = "toolturn.repetition.depth"
REPETITION_CUT: Final = "toolturn.repetition.cut"
HANDOFF_TOOL: Final = "toolturn.handoff.tool"
"""A handoff call's tool name, an event attribute only (never a metric label): cut to
``HANDOFF_TOOL_MAX_LENGTH`` characters, each control character replaced with U+FFFD."""
HANDOFF_PATTERN: Final = "toolturn.handoff.pattern"
"""The configured ``handoff_tools`` entry a handoff call matched: the ``toolturn.handoffs`` label (a closed set)."""
HANDOFF_TOOL_MAX_LENGTH: Final = 128
"""The most characters ``toolturn.handoff.tool`` carries; a longer name is cut and ends with ``…``."""
LABEL_MAX_LENGTH: Final = 64
"""The most characters a metric label value of a closed set carries (``docs/telemetry.md``, "Label bounds")."""
HANDOFF_CALL_ID: Final = "toolturn.handoff.tool_call_id"
HANDOFF_COUNT: Final = "toolturn.handoff.count"
ERROR_STAGE: Final = "toolturn.error.stage"
ERROR_TYPE: Final = "error.type"
FINGERPRINT_SYSTEM: Final = "toolturn.request.system_fingerprints"
FINGERPRINT_TOOLS: Final = "toolturn.request.tools_fingerprint"
FINGERPRINT_PREFIX: Final = "toolturn.request.prefix_fingerprint"
TOOLS_WITHHELD_APPLIED: Final = "toolturn.tools_withheld.applied"
MAX_TOOL_ROUNDS_SEEN: Final = "toolturn.request.tool_rounds"
SYSTEM_PROMPT: Final = "toolturn.request.system_prompt"
GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
"""The conventions' opt-in system instructions (JSON of text parts), on a span of our own with capture on."""
"""The joined system prompt: content, set only when content capture is on."""
INPUT_TRANSFORMATION_TYPE: Final = "toolturn.input_transformation.type"
INPUT_TRANSFORMATION_REASON: Final = "toolturn.input_transformation.reason"
INPUT_TRANSFORMATION_PATH: Final = "toolturn.input_transformation.path"
"""Where in the request the provider changed something (an event attribute only, never a metric label)."""

# --- GenAI semantic-convention keys the inference span carries (not ours: never extended) -------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
GEN_AI_TOKEN_TYPE: Final = "gen_ai.token.type"  # noqa: S105 - an attribute key, no secret
TOKEN_TYPE_INPUT: Final = "input"  # noqa: S105 - a token type, no secret
"""``gen_ai.token.type`` of the tokens a request sent."""
TOKEN_TYPE_OUTPUT: Final = "output"  # noqa: S105 - a token type, no secret
"""``gen_ai.token.type`` of the tokens a response produced."""
OPERATION_CHAT: Final = "chat"
OPERATION_GENERATE_CONTENT: Final = "generate_content"
OPERATION_OF: Final[Mapping[Lane, str]] = MappingProxyType(
    {
        "anthropic.messages": OPERATION_CHAT,
        "openai.chat_completions": OPERATION_CHAT,
        "openai.responses": OPERATION_CHAT,
        "gemini.generate_content": OPERATION_GENERATE_CONTENT,
        "bedrock.converse": OPERATION_CHAT,
    }
)
"""``gen_ai.operation.name`` of each lane's inference span (the registry's well-known value for Gemini)."""
GEN_AI_REQUEST_STREAM: Final = "gen_ai.request.stream"
GEN_AI_REQUEST_CHOICE_COUNT: Final = "gen_ai.request.choice.count"
GEN_AI_REQUEST_STOP_SEQUENCES: Final = "gen_ai.request.stop_sequences"
GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK: Final = "gen_ai.response.time_to_first_chunk"
REQUEST_PARAMETERS: Final[Mapping[Lane, tuple[tuple[str, str], ...]]] = MappingProxyType(
    {
        "anthropic.messages": (
            ("gen_ai.request.max_tokens", "max_tokens"),
            ("gen_ai.request.temperature", "temperature"),
            ("gen_ai.request.top_p", "top_p"),
            ("gen_ai.request.top_k", "top_k"),
            ("gen_ai.request.stop_sequences", "stop_sequences"),
        ),
        "openai.chat_completions": (
            ("gen_ai.request.max_tokens", "max_completion_tokens"),
            ("gen_ai.request.max_tokens", "max_tokens"),
            ("gen_ai.request.temperature", "temperature"),
            ("gen_ai.request.top_p", "top_p"),
            ("gen_ai.request.stop_sequences", "stop"),
            ("gen_ai.request.seed", "seed"),
            ("gen_ai.request.frequency_penalty", "frequency_penalty"),
            ("gen_ai.request.presence_penalty", "presence_penalty"),
            (GEN_AI_REQUEST_CHOICE_COUNT, "n"),
        ),
        "openai.responses": (
            ("gen_ai.request.max_tokens", "max_output_tokens"),
            ("gen_ai.request.temperature", "temperature"),
            ("gen_ai.request.top_p", "top_p"),
        ),
        "gemini.generate_content": (
            ("gen_ai.request.max_tokens", "max_output_tokens"),
            ("gen_ai.request.max_tokens", "maxOutputTokens"),
            ("gen_ai.request.temperature", "temperature"),
            ("gen_ai.request.top_p", "top_p"),
            ("gen_ai.request.top_p", "topP"),
            ("gen_ai.request.top_k", "top_k"),
            ("gen_ai.request.top_k", "topK"),
            ("gen_ai.request.stop_sequences", "stop_sequences"),
            ("gen_ai.request.stop_sequences", "stopSequences"),
            ("gen_ai.request.seed", "seed"),
            ("gen_ai.request.frequency_penalty", "frequency_penalty"),
            ("gen_ai.request.frequency_penalty", "frequencyPenalty"),
            ("gen_ai.request.presence_penalty", "presence_penalty"),
            ("gen_ai.request.presence_penalty", "presencePenalty"),
            (GEN_AI_REQUEST_CHOICE_COUNT, "candidate_count"),
            (GEN_AI_REQUEST_CHOICE_COUNT, "candidateCount"),
        ),
        "bedrock.converse": (
            ("gen_ai.request.max_tokens", "inferenceConfig.maxTokens"),
            ("gen_ai.request.temperature", "inferenceConfig.temperature"),
            ("gen_ai.request.top_p", "inferenceConfig.topP"),
            ("gen_ai.request.stop_sequences", "inferenceConfig.stopSequences"),
        ),
    }
)
"""Where each lane's request carries the conventions' ``gen_ai.request.*`` parameters: the attribute, and the
request setting holding it (``compose.request_field``: google-genai's ``config``, in either spelling; the first
setting that holds a value wins); the choice count only when it is not 1. A dotted setting is a field of a
setting (Bedrock Converse: ``inferenceConfig.maxTokens``)."""
SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.37.0"
"""The semantic conventions release whose GenAI names the spans and metrics carry."""

ErrorStage = Literal[
    "request",
    "law",
    "span",
    "metric",
    "event",
    "response",
    "stream",
    "handoff",
    "span_export",
    "metric_export",
    "log_export",
]
"""Where inside otel-toolturn an error was caught (the ``toolturn.error.stage`` value).

The ``*_export`` stages: an exporter ``init`` created (never the application's) raised, hung past
its deadline, or failed to flush; the calls themselves were never affected."""

PrefixChangeCause = Literal["caller", "repair"]
"""Why the answered prefix changed (the ``toolturn.prefix_change.cause`` value): the caller's own
transcript or head changed there, or only the law's view of an unchanged transcript did."""

# --- events (span events, and log records of the same name when a logger provider is set) ------
EVENT_REPAIR: Final = "toolturn.repair"
EVENT_STREAM_DROP: Final = "toolturn.stream.drop"
EVENT_STREAM_END_IGNORED: Final = "toolturn.stream.end_ignored"
EVENT_STREAM_TORN: Final = "toolturn.stream.torn"
EVENT_TOOLS_WITHHELD: Final = "toolturn.tools_withheld"
EVENT_RESPONSE_MODEL: Final = "toolturn.response_model"
EVENT_REPETITION: Final = "toolturn.repetition"
EVENT_HANDOFF: Final = "toolturn.handoff"
EVENT_HANDOFF_REFUSED: Final = "toolturn.handoff.refused"
EVENT_PREFIX_CHANGE: Final = "toolturn.prefix_change"
EVENT_INPUT_TRANSFORMATION: Final = "toolturn.input_transformation"

EVENTS: Final = (
    EVENT_REPAIR,
    EVENT_STREAM_DROP,
    EVENT_STREAM_END_IGNORED,
    EVENT_STREAM_TORN,
    EVENT_TOOLS_WITHHELD,
    EVENT_RESPONSE_MODEL,
    EVENT_REPETITION,
    EVENT_HANDOFF,
    EVENT_HANDOFF_REFUSED,
    EVENT_PREFIX_CHANGE,
    EVENT_INPUT_TRANSFORMATION,
)


# --- metric instruments -------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class Instrument:
    """One metric instrument: its OTel name, kind, unit, description and the attribute keys it carries."""

    name: str
    kind: Literal["counter", "histogram"]
    unit: str
    description: str
    attributes: tuple[str, ...]

    @property
    def prometheus_name(self) -> str:
        """The name a Prometheus scrape shows (dots to underscores, ``_total`` on counters, ``_seconds`` for s)."""
        base = self.name.replace(".", "_")
        if self.unit == "s":
            base += "_seconds"
        return base + "_total" if self.kind == "counter" else base


REQUESTS: Final = Instrument(
    name="toolturn.requests",
    kind="counter",
    unit="{request}",
    description="Provider requests seen by otel-toolturn.",
    attributes=(LANE, PROVIDER, MODE),
)
REPAIRS: Final = Instrument(
    name="toolturn.repairs",
    kind="counter",
    unit="{repair}",
    description=(
        "Tool-turn repairs made (or, in observe mode, that would have been made), by form: every"
        " request's, so a break resent on five requests counts five (toolturn.breaks counts it once)."
    ),
    attributes=(REPAIR_FORM, REPAIR_LOSSY, LANE, PROVIDER),
)
BREAKS: Final = Instrument(
    name="toolturn.breaks",
    kind="counter",
    unit="{break}",
    description=(
        "Broken tool turns, each counted once per conversation: on the first request that repairs it"
        " (toolturn.repairs counts every request's repairs, repeats included)."
    ),
    attributes=(REPAIR_FORM, REPAIR_LOSSY, LANE, PROVIDER),
)
PREFIX_CHANGES: Final = Instrument(
    name="toolturn.prefix_changes",
    kind="counter",
    unit="{request}",
    description="Requests whose already-answered prefix differs from the previous request's, by cause.",
    attributes=(PREFIX_CHANGE_CAUSE, LANE, PROVIDER),
)
LOSSY_PROJECTIONS: Final = Instrument(
    name="toolturn.lossy_projections",
    kind="counter",
    unit="{request}",
    description="Requests whose view left recorded content out (a lossy repair); created at 0 per lane.",
    attributes=(LANE, PROVIDER),
)
STREAM_DROPS: Final = Instrument(
    name="toolturn.stream.drops",
    kind="counter",
    unit="{call}",
    description="Streamed tool calls or frames dropped because they could not be read whole, by cause.",
    attributes=(STREAM_DROP_CAUSE, LANE, PROVIDER),
)
STREAM_ENDS_IGNORED: Final = Instrument(
    name="toolturn.stream.ends_ignored",
    kind="counter",
    unit="{frame}",
    description="Frames refused because they arrived after the stream's first terminal statement.",
    attributes=(STREAM_END_STATEMENT, LANE, PROVIDER),
)
STREAM_TORN_COUNT: Final = Instrument(
    name="toolturn.stream.torn",
    kind="counter",
    unit="{stream}",
    description="Streams that ended without their terminal frame.",
    attributes=(LANE, PROVIDER),
)
TOOLS_WITHHELD: Final = Instrument(
    name="toolturn.tools_withheld",
    kind="counter",
    unit="{request}",
    description="Requests sent with their tools withheld, by reason.",
    attributes=(TOOLS_WITHHELD_REASON, LANE, PROVIDER),
)
MODEL_SUBSTITUTIONS: Final = Instrument(
    name="toolturn.response_model.substitutions",
    kind="counter",
    unit="{response}",
    description="Responses answered by another model than the one requested.",
    attributes=(LANE, PROVIDER),
)
INSTRUMENTATION_ERRORS: Final = Instrument(
    name="toolturn.instrumentation.errors",
    kind="counter",
    unit="{error}",
    description="Errors inside otel-toolturn, caught so the host call proceeded uninstrumented.",
    attributes=(ERROR_STAGE, ERROR_TYPE),
)
HANDOFFS: Final = Instrument(
    name="toolturn.handoffs",
    kind="counter",
    unit="{call}",
    description="Handoff tool calls seen in responses, by the configured handoff_tools pattern they matched.",
    attributes=(HANDOFF_PATTERN, LANE, PROVIDER),
)
HANDOFFS_REFUSED: Final = Instrument(
    name="toolturn.handoff.refused",
    kind="counter",
    unit="{response}",
    description="Responses that carried more than one handoff call (all refused).",
    attributes=(LANE, PROVIDER),
)
INPUT_TRANSFORMATIONS: Final = Instrument(
    name="toolturn.input_transformations",
    kind="counter",
    unit="{transformation}",
    description="Changes the provider made to a request before reading it (thinking dropped), by type and reason.",
    attributes=(INPUT_TRANSFORMATION_TYPE, INPUT_TRANSFORMATION_REASON, LANE, PROVIDER),
)
LAW_DURATION: Final = Instrument(
    name="toolturn.law.duration",
    kind="histogram",
    unit="s",
    description="Time the tool-turn law took on one request.",
    attributes=(LANE, PROVIDER),
)
LAW_DURATION_BUCKETS: Final[tuple[float, ...]] = (
    0.00001,
    0.000025,
    0.00005,
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
)

CLIENT_OPERATION_DURATION: Final = Instrument(
    name="gen_ai.client.operation.duration",
    kind="histogram",
    unit="s",
    description="GenAI operation duration.",
    attributes=(
        GEN_AI_OPERATION_NAME,
        PROVIDER,
        GEN_AI_REQUEST_MODEL,
        GEN_AI_RESPONSE_MODEL,
        SERVER_ADDRESS,
        SERVER_PORT,
    ),
)
"""The GenAI conventions' required client metric, recorded for each call whose inference span is otel-toolturn's own."""
CLIENT_TOKEN_USAGE: Final = Instrument(
    name="gen_ai.client.token.usage",
    kind="histogram",
    unit="{token}",
    description="Number of input and output tokens used.",
    attributes=(
        GEN_AI_OPERATION_NAME,
        PROVIDER,
        GEN_AI_TOKEN_TYPE,
        GEN_AI_REQUEST_MODEL,
        GEN_AI_RESPONSE_MODEL,
        SERVER_ADDRESS,
        SERVER_PORT,
    ),
)
"""The GenAI conventions' token metric (``gen_ai.token.type``: ``input`` or ``output``), on the same calls."""
CLIENT_TIME_TO_FIRST_CHUNK: Final = Instrument(
    name="gen_ai.client.operation.time_to_first_chunk",
    kind="histogram",
    unit="s",
    description="Time to receive the first chunk of a streamed response.",
    attributes=CLIENT_OPERATION_DURATION.attributes,
)
"""A stream's first chunk, from the call, once per stream (on spans of our own)."""
CLIENT_TIME_PER_OUTPUT_CHUNK: Final = Instrument(
    name="gen_ai.client.operation.time_per_output_chunk",
    kind="histogram",
    unit="s",
    description="Time per output chunk after the first one, from the previous chunk.",
    attributes=CLIENT_OPERATION_DURATION.attributes,
)
"""Each later chunk of a stream, from the one before it (on spans of our own)."""
CLIENT_DURATION_BUCKETS: Final[tuple[float, ...]] = tuple(0.01 * 2**n for n in range(14))
"""The conventions' advisory boundaries: 0.01 s to 81.92 s, doubling."""
CLIENT_TOKEN_BUCKETS: Final[tuple[int, ...]] = tuple(4**n for n in range(14))
"""The conventions' advisory boundaries: 1 to 67,108,864 tokens, times 4."""
GENAI_INSTRUMENTS: Final[tuple[Instrument, ...]] = (
    CLIENT_OPERATION_DURATION,
    CLIENT_TOKEN_USAGE,
    CLIENT_TIME_TO_FIRST_CHUNK,
    CLIENT_TIME_PER_OUTPUT_CHUNK,
)
"""The GenAI conventions' client metrics otel-toolturn records (never when another instrumentation owns the span)."""

INSTRUMENTS: Final[tuple[Instrument, ...]] = (
    REQUESTS,
    REPAIRS,
    BREAKS,
    PREFIX_CHANGES,
    LOSSY_PROJECTIONS,
    STREAM_DROPS,
    STREAM_ENDS_IGNORED,
    STREAM_TORN_COUNT,
    TOOLS_WITHHELD,
    MODEL_SUBSTITUTIONS,
    INSTRUMENTATION_ERRORS,
    HANDOFFS,
    HANDOFFS_REFUSED,
    INPUT_TRANSFORMATIONS,
    LAW_DURATION,
)

# --- environment variables ------------------------------------------------------------------------
ENV_MODE: Final = "OTEL_TOOLTURN_MODE"
ENV_CAPTURE_CONTENT: Final = "OTEL_TOOLTURN_CAPTURE_CONTENT"
ENV_PROVIDERS: Final = "OTEL_TOOLTURN_PROVIDERS"
ENV_MAX_TOOL_ROUNDS: Final = "OTEL_TOOLTURN_MAX_TOOL_ROUNDS"
ENV_HANDOFF_TOOLS: Final = "OTEL_TOOLTURN_HANDOFF_TOOLS"
ENV_GENAI_CAPTURE_CONTENT: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
