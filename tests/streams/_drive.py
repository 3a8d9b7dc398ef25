"""Feed hand-made frames to an observer, raw or through the real SDK (test support)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from types import SimpleNamespace

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import StreamReport, observer_for
from tests.streams._frames import MODEL, Frame, sse_bytes
from tests.streams._sdk import report_of, sdk_calls, sdk_events, sdk_final, sdk_finish, sdk_usage


def raw_report(lane: Lane, frames: Sequence[Frame | str], *, requested: str | None = MODEL) -> StreamReport:
    """Feed each frame as the raw JSON dict (a ``str`` frame as its raw data) and check none was altered."""
    before = copy.deepcopy(list(frames))
    report = fed(lane, frames, requested=requested)
    assert list(frames) == before, "the observer altered a frame"
    return report


def fed(lane: Lane, events: Sequence[object], *, requested: str | None = MODEL) -> StreamReport:
    """Feed each event as it is to a new observer; its report (checked to be the same when taken again)."""
    observer = observer_for(lane, requested_model=requested)
    for event in events:
        observer.feed(event)
    report = observer.finish()
    assert observer.finish() == report, "finish() is not repeatable"
    return report


def as_object(value: object) -> object:
    """A JSON frame as attribute-only objects (what ``getattr`` reads, not a mapping)."""
    if isinstance(value, dict):
        return SimpleNamespace(**{key: as_object(item) for key, item in value.items()})
    if isinstance(value, list):
        return [as_object(item) for item in value]
    return value


def dump(event: object) -> object:
    """An SDK event as plain data, to compare before and after the observer read it."""
    model_dump = getattr(event, "model_dump", None)
    return model_dump() if callable(model_dump) else event


def sdk_report(lane: Lane, frames: Sequence[Frame | str], *, requested: str | None = MODEL) -> StreamReport:
    """Serialise the frames to SSE, let the real SDK parse them, feed its event objects."""
    events = sdk_events(lane, sse_bytes(lane, frames))
    dumps = [dump(e) for e in events]
    report = report_of(lane, events, requested)
    assert [dump(e) for e in events] == dumps, "the observer altered an SDK event"
    return report


def both(lane: Lane, frames: Sequence[Frame], *, requested: str | None = MODEL) -> StreamReport:
    """The raw report, after checking the SDK path gives the same one (event counts aside)."""
    raw = raw_report(lane, frames, requested=requested)
    via_sdk = sdk_report(lane, frames, requested=requested)
    assert dataclasses.replace(via_sdk, events=0) == dataclasses.replace(raw, events=0)
    return raw


def final_of(lane: Lane, frames: Sequence[Frame]) -> object:
    """The SDK's own accumulated result over the frames."""
    return sdk_final(lane, sse_bytes(lane, frames))


def assert_agrees_with_sdk(lane: Lane, frames: Sequence[Frame], report: StreamReport) -> None:
    """The report's calls, finish reasons and usage are what the SDK's own accumulator makes of ``frames``."""
    final = final_of(lane, frames)
    assert [(c.call_id, c.name, dict(c.arguments)) for c in report.calls] == sdk_calls(final)
    assert report.finish_reasons == sdk_finish(final)
    assert report.usage == sdk_usage(final)


def assert_whole_turn(
    lane: Lane, frames: Sequence[Frame], report: StreamReport, *, finish: str, response_id: str
) -> None:
    """A whole turn: none dropped, torn or ignored; ``finish``, usage 10 in / 20 out, ``response_id``; SDK agrees."""
    assert (report.drops, report.torn, report.ends_ignored, report.finish_reasons) == ((), False, None, (finish,))
    assert (report.usage.input_tokens, report.usage.output_tokens, report.response_id) == (10, 20, response_id)
    assert_agrees_with_sdk(lane, frames, report)


def assert_one_truncated_drop(report: StreamReport, call_id: str, *, clause: str, torn: bool) -> None:
    """No call, one truncated drop naming ``call_id``, the truncation clause and tornness given."""
    assert report.calls == ()
    assert [(d.cause, d.count, d.call_ids) for d in report.drops] == [("truncated", 1, (call_id,))]
    assert report.truncation_clause == clause
    assert report.torn is torn
