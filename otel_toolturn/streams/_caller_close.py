"""A stream the caller stopped reading: what its report says, as against one the provider cut.

A report is ``torn`` when the stream ended before the lane's final frame (Anthropic: no stop
reason, stop or error; Chat: a choice without its finish reason; Responses: no
``response.completed`` / ``.incomplete`` / ``.failed`` / ``error``). Whether the provider or the
caller ended it the observer cannot see; whoever drove the stream states it. When the caller did
(closed it, left its context, broke out and let it go, was cancelled), ``closed_by_caller`` gives
the report to record:

- not torn, and ``closed_early``;
- the calls no frame had closed yet (``unfinished``) are not a ``truncated`` drop: the provider may
  still have been sending them, the caller cut them; they stay in ``unfinished``, for the count;
- everything the provider did send stays: a call it closed with arguments that are not a JSON
  object (``truncated``), a call closed without a name (``unnamed``), frames that were not JSON
  (``bad_frame``), the frames after the end; the notes and the truncation clause follow the drops.

A report that is not torn (the final frame arrived before the caller stopped) is returned as it is.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from otel_toolturn.streams._drop_notes import turn_notes_of
from otel_toolturn.streams._report import ModelOutputInvalid, StreamDrop, StreamReport


def _without(drop: StreamDrop, unfinished: StreamDrop) -> StreamDrop | None:
    """``drop`` less the ``unfinished`` calls (ids removed once each); ``None`` when none are left."""
    count = drop.count - unfinished.count
    if count <= 0:
        return None
    left = Counter(unfinished.call_ids)
    kept: list[str] = []
    for call_id in drop.call_ids:
        if left[call_id] > 0:
            left[call_id] -= 1
        else:
            kept.append(call_id)
    return StreamDrop(cause=drop.cause, count=count, call_ids=tuple(kept))


def closed_by_caller(report: StreamReport) -> StreamReport:
    """The report of a stream the caller stopped reading (see the module docstring); never alters ``report``."""
    if not report.torn:
        return report
    unfinished = report.unfinished
    drops = report.drops
    if unfinished is not None:
        drops = tuple(
            kept
            for drop in report.drops
            if (kept := _without(drop, unfinished) if drop.cause == "truncated" else drop) is not None
        )
    truncated = any(drop.cause == "truncated" for drop in drops)
    clause = report.truncation_clause if truncated else ""
    invalid = report.model_output_invalid
    if invalid is not None and invalid.cause == "truncated" and not truncated:
        invalid = ModelOutputInvalid(cause="unnamed") if any(d.cause == "unnamed" for d in drops) else None
    return dataclasses.replace(
        report,
        torn=False,
        closed_early=True,
        drops=drops,
        truncation_clause=clause,
        notes=turn_notes_of(drops, clause=clause),
        model_output_invalid=invalid,
    )
