"""What a request's ``Decision`` and ``Receipt`` turn into: span attributes, events and metric points.

Role: the request side of recording. Reads the request hook's ``Decision`` (what is sent and why)
and the ``Receipt`` of it going out (fingerprints, digests, the conversation's findings), decides
nothing, and emits through the call's ``CallSink``. Where the span attributes go (set at once, or
held for a span of our own until it ends) is the record's business: ``record_request`` fills the
dict it is given.

What a request carries:

- always: one ``toolturn.requests`` point; each failure of the receipt counted as an error of the
  ``request`` stage;
- when the law ran: its duration; one ``toolturn.repair`` event per repair (``toolturn.repair.repeat``:
  an earlier request of the conversation made it too); ``toolturn.repairs`` counts every repair and
  ``toolturn.breaks`` only those that do not repeat, one point per form and lossiness; one
  ``toolturn.lossy_projections`` point when any repair is lossy; the span's repair count, forms (in
  order of first appearance) and lossiness, also when there was none;
- a prefix change: its event and a point labelled with its cause;
- tools withheld: an event (the reason, whether it was applied) and a point labelled with the reason;
- the span attributes: the conventions' ``gen_ai.request.*`` parameters (our own span only), the
  fingerprints, the tool rounds seen (when ``max_tool_rounds`` is set) and the system prompt (on our
  own span also as ``gen_ai.system_instructions``).
"""

from __future__ import annotations

import json
from functools import cache

from opentelemetry.util.types import AttributeValue

from otel_toolturn._law import ToolTurnRepair
from otel_toolturn._view import field
from otel_toolturn._vocab import Lane
from otel_toolturn.instrument import names
from otel_toolturn.instrument._request import Decision, Receipt
from otel_toolturn.instrument._telemetry import Attributes, CallSink
from otel_toolturn.lanes import adapter_for


def record_request(sink: CallSink, decision: Decision, receipt: Receipt, attributes: dict[str, AttributeValue]) -> None:
    """Emit what the request carries (see the module docstring) and put its span attributes in ``attributes``."""
    tel = sink.telemetry
    tel.add(names.REQUESTS, 1, sink.labels.requests)
    for failure in receipt.failures:
        tel.error("request", failure)
    view = decision.view
    if view is not None:
        tel.law_duration(decision.law_seconds, sink.labels.base)
        _record_repairs(sink, view.repairs, receipt.repeats, attributes)
    change = receipt.prefix_change
    if change is not None:
        sink.event(
            names.EVENT_PREFIX_CHANGE,
            {
                names.PREFIX_CHANGE_POSITION: change.position,
                names.PREFIX_CHANGE_CAUSE: change.cause,
                names.LANE: sink.lane,
            },
        )
        tel.add(names.PREFIX_CHANGES, 1, sink.labels.with_((names.PREFIX_CHANGE_CAUSE, change.cause)))
    withheld = decision.withheld
    if withheld is not None:
        sink.event(
            names.EVENT_TOOLS_WITHHELD,
            {
                names.TOOLS_WITHHELD_REASON: withheld,
                names.TOOLS_WITHHELD_APPLIED: decision.withheld_applied,
                names.LANE: sink.lane,
            },
        )
        tel.add(names.TOOLS_WITHHELD, 1, sink.labels.with_((names.TOOLS_WITHHELD_REASON, withheld)))
    _request_attributes(sink, decision, receipt, attributes)


def _record_repairs(
    sink: CallSink,
    repairs: tuple[ToolTurnRepair, ...],
    repeats: tuple[bool, ...],
    attributes: dict[str, AttributeValue],
) -> None:
    """The law's repairs: one event each, the repairs and breaks points, the lossy point, the span's summary."""
    lossy = False
    forms: tuple[str, ...] = ()
    if repairs:
        batch: list[Attributes] = []
        points: dict[tuple[str, bool], int] = {}
        breaks: dict[tuple[str, bool], int] = {}
        for index, repair in enumerate(repairs):
            form, repair_lossy = repair.form, repair.lossy
            repeat = index < len(repeats) and repeats[index]
            batch.append(_repair_event(repair, repeat=repeat, lane=sink.lane))
            points[form, repair_lossy] = points.get((form, repair_lossy), 0) + 1
            if not repeat:
                breaks[form, repair_lossy] = breaks.get((form, repair_lossy), 0) + 1
            lossy = lossy or repair_lossy
        sink.events(names.EVENT_REPAIR, batch)
        _add_per_form(sink, names.REPAIRS, points)
        _add_per_form(sink, names.BREAKS, breaks)
        forms = tuple(dict.fromkeys(point_form for point_form, _ in points))
        if lossy:
            sink.telemetry.add(names.LOSSY_PROJECTIONS, 1, sink.labels.base)
    attributes[names.REPAIRS_COUNT] = len(repairs)
    attributes[names.REPAIRS_FORMS] = forms
    attributes[names.REPAIRS_LOSSY] = lossy


def _repair_event(repair: ToolTurnRepair, *, repeat: bool, lane: Lane) -> Attributes:
    """The ``toolturn.repair`` event's attributes for ``repair``."""
    return {
        names.REPAIR_FORM: repair.form,
        names.REPAIR_TOOL_CALL_IDS: repair.tool_call_ids,
        names.REPAIR_LOSSY: repair.lossy,
        names.REPAIR_BEFORE_RUN: repair.before_run,
        names.REPAIR_CALL_KIND: repair.call_kind,
        names.REPAIR_REPEAT: repeat,
        names.LANE: lane,
    }


def _add_per_form(sink: CallSink, instrument: names.Instrument, points: dict[tuple[str, bool], int]) -> None:
    """One point of ``instrument`` per repair form and lossiness, of its count."""
    for (form, lossy), count in points.items():
        sink.telemetry.add(instrument, count, sink.labels.with_((names.REPAIR_FORM, form), (names.REPAIR_LOSSY, lossy)))


def _request_attributes(
    sink: CallSink, decision: Decision, receipt: Receipt, attributes: dict[str, AttributeValue]
) -> None:
    """The request's span attributes past the repairs: parameters, fingerprints, tool rounds, system prompt."""
    if sink.own_span:
        attributes.update(request_parameters(sink.lane, decision.kwargs))
    if receipt.system_fingerprints:
        attributes[names.FINGERPRINT_SYSTEM] = receipt.system_fingerprints
    if receipt.tools_fingerprint is not None:
        attributes[names.FINGERPRINT_TOOLS] = receipt.tools_fingerprint
    if receipt.prefix_fingerprint is not None:
        attributes[names.FINGERPRINT_PREFIX] = receipt.prefix_fingerprint
    if sink.telemetry.options.max_tool_rounds:
        attributes[names.MAX_TOOL_ROUNDS_SEEN] = decision.tool_rounds
    if receipt.system_prompt:
        attributes[names.SYSTEM_PROMPT] = receipt.system_prompt
        if sink.own_span:
            parts = [{"type": "text", "content": receipt.system_prompt}]
            attributes[names.GEN_AI_SYSTEM_INSTRUCTIONS] = json.dumps(parts, ensure_ascii=False)


def request_parameters(lane: Lane, kwargs: dict[str, object]) -> dict[str, AttributeValue]:
    """The conventions' ``gen_ai.request.*`` parameters the request carries (``names.REQUEST_PARAMETERS``).

    Numbers as they are (a boolean is no number), stop sequences as a list of strings (one string: a list
    of one), the choice count only when it is not 1; anything else is left out. A dotted setting is read
    field by field (``inferenceConfig.maxTokens``: the ``maxTokens`` of the ``inferenceConfig`` setting).
    """
    found: dict[str, AttributeValue] = {}
    setting = adapter_for(lane).setting  # ``compose.request_field``, the lane read once
    for key, outer, inner in _settings_of(lane):
        if key in found:
            continue
        value = setting(kwargs, outer)
        for name in inner:
            value = None if value is None else field(value, name)
        if key == names.GEN_AI_REQUEST_STOP_SEQUENCES:
            stops = [value] if isinstance(value, str) else value
            if isinstance(stops, (list, tuple)) and stops and all(isinstance(s, str) for s in stops):
                found[key] = tuple(str(s) for s in stops)
        elif (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and (key != names.GEN_AI_REQUEST_CHOICE_COUNT or value != 1)
        ):
            found[key] = value
    return found


@cache
def _settings_of(lane: Lane) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """``names.REQUEST_PARAMETERS`` of ``lane``, each setting split at its dots: its attribute, setting, fields."""
    return tuple((key, *_split(setting)) for key, setting in names.REQUEST_PARAMETERS[lane])


def _split(setting: str) -> tuple[str, tuple[str, ...]]:
    outer, *inner = setting.split(".")
    return outer, tuple(inner)
