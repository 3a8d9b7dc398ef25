"""What a response's ``StreamReport`` turns into: span attributes, events and metric points.

Role: the response side of recording. Reads the report the stream observers (or the whole-response
check) made of one response, decides nothing, and emits through the call's ``CallSink``. Where the
span attributes go is the record's business: ``response_attributes`` fills the dict it is given,
and the record sets them before ``record_report`` emits the events.

What a report carries:

- span attributes: on our own span, the conventions' ``gen_ai.response.*`` and ``gen_ai.usage.*``
  (id, finish reasons, tokens, cache tokens, model); on any span, a torn stream, or one closed
  early with how many calls it left unfinished;
- per drop: a ``toolturn.stream.drop`` event and a point of its count, labelled with its cause;
- stream ends ignored: their event and a point of their count, labelled with the statement;
- a torn stream: its event and a point;
- a substituted model: an event (the model requested, the model reported) and a point;
- the repetition poll: one event per hit, the cut first, then the spared;
- input transformations: one event each, one point per type and reason label (never the path);
- handoffs (``record_handoffs``): one event per call that matches a ``handoff_tools`` pattern and
  one point per pattern; more than one in a response gives, before those, one refusal event and point.
"""

from __future__ import annotations

from collections import Counter

from opentelemetry.util.types import AttributeValue

from otel_toolturn.handoff import matching_pattern
from otel_toolturn.instrument import names
from otel_toolturn.instrument._telemetry import CallSink
from otel_toolturn.streams import InputTransformation, StreamedCall, StreamReport, Usage


def response_attributes(report: StreamReport, attributes: dict[str, AttributeValue], *, own_span: bool) -> None:
    """Put the report's span attributes in ``attributes`` (the conventions' only when ``own_span``)."""
    if own_span:
        if report.response_id is not None:
            attributes[names.GEN_AI_RESPONSE_ID] = report.response_id
        if report.finish_reasons:
            attributes[names.GEN_AI_RESPONSE_FINISH_REASONS] = report.finish_reasons
        _usage_attributes(report.usage, attributes)
        if report.response_model is not None:
            attributes[names.GEN_AI_RESPONSE_MODEL] = report.response_model
    if report.torn:
        attributes[names.STREAM_TORN] = True
    elif report.closed_early:
        attributes[names.STREAM_CLOSED_EARLY] = True
        attributes[names.STREAM_CLOSED_EARLY_UNFINISHED] = report.unfinished.count if report.unfinished else 0


def _usage_attributes(usage: Usage, attributes: dict[str, AttributeValue]) -> None:
    """The conventions' ``gen_ai.usage.*`` attributes of the counts the provider reported."""
    if usage.input_tokens is not None:
        attributes[names.GEN_AI_USAGE_INPUT_TOKENS] = usage.input_tokens
    if usage.output_tokens is not None:
        attributes[names.GEN_AI_USAGE_OUTPUT_TOKENS] = usage.output_tokens
    if usage.cache_read_input_tokens is not None:
        attributes[names.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = usage.cache_read_input_tokens
    if usage.cache_creation_input_tokens is not None:
        attributes[names.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = usage.cache_creation_input_tokens


def usage_tokens(usage: Usage) -> list[tuple[str, int]]:
    """The input and output tokens the provider reported, each with its token type, for the token metric."""
    tokens: list[tuple[str, int]] = []
    if usage.input_tokens is not None:
        tokens.append((names.TOKEN_TYPE_INPUT, usage.input_tokens))
    if usage.output_tokens is not None:
        tokens.append((names.TOKEN_TYPE_OUTPUT, usage.output_tokens))
    return tokens


def record_report(sink: CallSink, report: StreamReport, *, requested_model: str | None) -> None:
    """Emit the report's events and points (see the module docstring); ``requested_model``: the call's."""
    _record_stream_ends(sink, report)
    if report.substituted_model is not None:
        sink.event(
            names.EVENT_RESPONSE_MODEL,
            {
                names.RESPONSE_MODEL_REQUESTED: report.requested_model or requested_model or "",
                names.RESPONSE_MODEL_REPORTED: report.substituted_model,
                names.LANE: sink.lane,
            },
        )
        sink.telemetry.add(names.MODEL_SUBSTITUTIONS, 1, sink.labels.base)
    repetition = report.repetition
    hits = ([(repetition.cut, True)] if repetition.cut is not None else []) + [
        (hit, False) for hit in repetition.spared
    ]
    for hit, cut in hits:
        sink.event(
            names.EVENT_REPETITION,
            {
                names.REPETITION_RULE: hit.rule,
                names.REPETITION_DEPTH: hit.depth,
                names.REPETITION_CUT: cut,
                names.LANE: sink.lane,
            },
        )
    if report.input_transformations:
        _record_input_transformations(sink, report.input_transformations)
    if report.calls:
        record_handoffs(sink, report.calls)


def _record_stream_ends(sink: CallSink, report: StreamReport) -> None:
    """How the stream ended: its drops, the ends it ignored, whether it was torn."""
    tel = sink.telemetry
    for drop in report.drops:
        sink.event(
            names.EVENT_STREAM_DROP,
            {
                names.STREAM_DROP_CAUSE: drop.cause,
                names.STREAM_DROP_COUNT: drop.count,
                names.STREAM_DROP_IDS: drop.call_ids,
                names.LANE: sink.lane,
            },
        )
        tel.add(names.STREAM_DROPS, drop.count, sink.labels.with_((names.STREAM_DROP_CAUSE, drop.cause)))
    ignored = report.ends_ignored
    if ignored is not None:
        sink.event(
            names.EVENT_STREAM_END_IGNORED,
            {
                names.STREAM_END_STATEMENT: ignored.statement,
                names.STREAM_END_WORD: ignored.word,
                names.STREAM_END_COUNT: ignored.count,
                names.LANE: sink.lane,
            },
        )
        tel.add(
            names.STREAM_ENDS_IGNORED, ignored.count, sink.labels.with_((names.STREAM_END_STATEMENT, ignored.statement))
        )
    if report.torn:
        sink.event(names.EVENT_STREAM_TORN, {names.LANE: sink.lane})
        tel.add(names.STREAM_TORN_COUNT, 1, sink.labels.base)


def _record_input_transformations(sink: CallSink, transformations: tuple[InputTransformation, ...]) -> None:
    """What the provider changed in the request: one event each (its strings as sent), one point per label set.

    The counter's type and reason are the closed-set labels (``other`` outside them); the path
    is never a label.
    """
    lane = sink.lane
    sink.events(
        names.EVENT_INPUT_TRANSFORMATION,
        [
            {
                names.INPUT_TRANSFORMATION_TYPE: transformation.type,
                names.INPUT_TRANSFORMATION_REASON: transformation.reason,
                names.INPUT_TRANSFORMATION_PATH: transformation.path,
                names.LANE: lane,
            }
            for transformation in transformations
        ],
    )
    points = Counter((t.type_label, t.reason_label) for t in transformations)
    for (type_label, reason_label), count in points.items():
        sink.telemetry.add(
            names.INPUT_TRANSFORMATIONS,
            count,
            sink.labels.with_(
                (names.INPUT_TRANSFORMATION_TYPE, type_label), (names.INPUT_TRANSFORMATION_REASON, reason_label)
            ),
        )


def record_handoffs(sink: CallSink, calls: tuple[StreamedCall, ...]) -> None:
    """The hook point where a response's whole calls are seen: handoff events are emitted here (guarded).

    A call is a handoff call when ``matching_pattern`` finds its ``handoff_tools`` pattern (the
    handoff package's own rule): each gives a ``toolturn.handoff`` event and a counter point
    labelled with the pattern it matched. A response with more than one gives, before those,
    one ``toolturn.handoff.refused`` event and counter point. Tool names reach events only,
    through ``handoff_tool_shown``.
    """
    patterns = sink.telemetry.options.handoff_tools
    if not patterns or not calls:
        return
    try:
        handoffs = [(call, pattern) for call in calls if (pattern := matching_pattern(call.name, patterns)) is not None]
        if len(handoffs) > 1:
            sink.event(
                names.EVENT_HANDOFF_REFUSED,
                {
                    names.HANDOFF_COUNT: len(handoffs),
                    names.HANDOFF_TOOL: tuple(handoff_tool_shown(c.name) for c, _ in handoffs),
                    names.HANDOFF_PATTERN: tuple(pattern for _, pattern in handoffs),
                    names.HANDOFF_CALL_ID: tuple(c.call_id for c, _ in handoffs),
                    names.LANE: sink.lane,
                },
            )
            sink.telemetry.add(names.HANDOFFS_REFUSED, 1, sink.labels.base)
        for call, pattern in handoffs:
            sink.event(
                names.EVENT_HANDOFF,
                {
                    names.HANDOFF_TOOL: handoff_tool_shown(call.name),
                    names.HANDOFF_PATTERN: pattern,
                    names.HANDOFF_CALL_ID: call.call_id,
                    names.LANE: sink.lane,
                },
            )
        for pattern, count in Counter(pattern for _, pattern in handoffs).items():
            sink.telemetry.add(names.HANDOFFS, count, sink.labels.with_((names.HANDOFF_PATTERN, pattern)))
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        sink.telemetry.error("handoff", exc)


def handoff_tool_shown(name: str) -> str:
    """A tool name as the handoff events carry it: control characters replaced, at most ``HANDOFF_TOOL_MAX_LENGTH``.

    A control character (C0, DEL, C1) becomes U+FFFD; a name longer than the limit keeps its first
    ``HANDOFF_TOOL_MAX_LENGTH - 1`` characters and ends with ``…``.
    """
    limit = names.HANDOFF_TOOL_MAX_LENGTH
    long = len(name) > limit
    kept = name[: limit - 1] if long else name
    shown = "".join("\ufffd" if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 else c for c in kept)
    return shown + "\u2026" if long else shown
