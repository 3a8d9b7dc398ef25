"""The report of one turn: every call slot judged, the drops counted and worded, the facts gathered.

``settle`` is the one place a ``StreamReport`` is built, for a streamed response (each lane's
observer, at ``finish``) and a whole one (``check_response``) alike. It judges each slot with
``judge_call`` under the lane's close evidence, counts the drops per cause (the calls a provider
said it withheld among the ``truncated`` ones; of those, the ones no frame closed:
``unfinished``), words the notes and the truncation clause, and reads nothing it is not given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from otel_toolturn.streams._drop_notes import turn_notes_of
from otel_toolturn.streams._ledger import StreamEndLedger
from otel_toolturn.streams._model_check import ReportedModel
from otel_toolturn.streams._report import RepetitionReport, StreamDrop, StreamedCall, StreamReport, Usage
from otel_toolturn.streams._tool_calls import CallSlot, judge_call
from otel_toolturn.streams._truncation_cause import OutputCapFacts, model_output_invalid_of, truncation_cause_clause


def settle(
    *,
    slots: Iterable[CallSlot],
    closed_of: Callable[[CallSlot], bool],
    ledger: StreamEndLedger,
    torn: bool,
    finish_reasons: tuple[str, ...],
    response_id: str | None,
    requested_model: str | None,
    model: ReportedModel,
    cap: OutputCapFacts,
    repetition: RepetitionReport,
    usage: Usage,
    bad_frames: int,
    frames_unread: int,
    events: int,
    withheld_calls: int = 0,
    server_open: tuple[str, ...] = (),
) -> StreamReport:
    """Judge every slot (in choice, then index order) and build the report; never alters a slot.

    ``withheld_calls``: calls the provider said the model made but it withheld as unreadable
    (Gemini's ``MALFORMED_FUNCTION_CALL``), counted as ``truncated`` drops without ids.
    ``server_open``: the ids of calls the server runs (Anthropic server and MCP tools) that the stream
    left open, counted as ``truncated`` drops no frame closed, like an open function call.
    """
    calls: list[StreamedCall] = []
    cut: list[str] = []
    open_cut: list[str] = []
    unnamed: list[str] = []
    truncated_count, unnamed_count, open_count = withheld_calls, 0, 0
    for slot in sorted(slots, key=lambda s: (s.choice, s.index)):
        closed = closed_of(slot)
        verdict = judge_call(slot, closed=closed)
        if isinstance(verdict, StreamedCall):
            calls.append(verdict)
        elif verdict.cause == "truncated":
            truncated_count += 1
            cut.extend(verdict.call_ids)
            if not closed:
                open_count += 1
                open_cut.extend(verdict.call_ids)
        else:
            unnamed_count += 1
            unnamed.extend(verdict.call_ids)
    for use_id in server_open:
        truncated_count += 1
        open_count += 1
        if use_id:
            cut.append(use_id)
            open_cut.append(use_id)
    drops: list[StreamDrop] = []
    if truncated_count:
        drops.append(StreamDrop(cause="truncated", count=truncated_count, call_ids=tuple(cut)))
    if unnamed_count:
        drops.append(StreamDrop(cause="unnamed", count=unnamed_count, call_ids=tuple(unnamed)))
    if bad_frames:
        drops.append(StreamDrop(cause="bad_frame", count=bad_frames))
    clause = truncation_cause_clause(cap, terminal_frame_seen=ledger.decided is not None) if truncated_count else ""
    return StreamReport(
        calls=tuple(calls),
        drops=tuple(drops),
        ends_ignored=ledger.ignored,
        torn=torn,
        finish_reasons=finish_reasons,
        response_id=response_id,
        requested_model=requested_model,
        response_model=model.name,
        substituted_model=model.substituted,
        echo_dropped=int(model.name_dropped),
        truncation_clause=clause,
        repetition=repetition,
        usage=usage,
        events=events,
        notes=turn_notes_of(drops, clause=clause),
        model_output_invalid=model_output_invalid_of(truncated=truncated_count, unnamed=unnamed_count, cap=cap),
        frames_unread=frames_unread,
        unfinished=StreamDrop(cause="truncated", count=open_count, call_ids=tuple(open_cut)) if open_count else None,
    )
