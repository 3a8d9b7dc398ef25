"""Every recorded response of the three lanes, replayed through the observers and the SDKs' own clients."""

from __future__ import annotations

import dataclasses
import json

import pytest

from otel_toolturn.streams import StreamReport, check_response, observer_for, sse_data
from tests.streams._recordings import RECORDED, Exchange, absent, all_exchanges
from tests.streams._sdk import (
    anthropic_message,
    chat_completion,
    report_of,
    responses_response,
    sdk_calls,
    sdk_events,
    sdk_final,
    sdk_finish,
    sdk_usage,
)

if not RECORDED.is_dir():
    absent("the shared recordings folder", module=True)

EXCHANGES = all_exchanges()
STREAMED = [e for e in EXCHANGES if e.streamed]
WHOLE = [e for e in EXCHANGES if not e.streamed]
SDK_CANNOT_ACCUMULATE = {
    # the SDK's accumulator raises on the unquoted argument value; we drop the call instead
    "anthropic/tool_use_invalid_json_response.txt#0": "truncated",
    # the SDK's accumulator needs usage on message_start; these recordings omit it
    "anthropic/beta_usage_omitted_input_tokens_response.txt#0": None,
    "anthropic/beta_usage_omitted_with_optional_fields_response.txt#0": None,
    "anthropic/missing_usage_response.txt#0": None,
    "anthropic/missing_usage_rich_delta_response.txt#0": None,
    "anthropic/usage_omitted_response.txt#0": None,
    "anthropic/usage_omitted_with_optional_fields_response.txt#0": None,
}


def raw_report(exchange: Exchange, frames: list[str] | None = None) -> StreamReport:
    observer = observer_for(exchange.lane, requested_model=exchange.requested_model or "requested-model")
    for frame in sse_data(exchange.body) if frames is None else frames:
        observer.feed(frame)
    return observer.finish()


def terminated(body: bytes) -> bool:
    """Whether the body's last event is closed by its blank line (the SDKs' decoders drop one that is not)."""
    return body.endswith((b"\n\n", b"\r\n\r\n", b"\r\r"))


def frames_the_sdk_delivers(body: bytes) -> list[str]:
    frames = sse_data(body)
    return frames if terminated(body) else frames[:-1]


def without_events(report: StreamReport) -> StreamReport:
    return dataclasses.replace(report, events=0)


def test_every_lane_has_recordings() -> None:
    """The recordings cover each lane, streamed and not, so no lane passes vacuously."""
    assert {e.lane for e in STREAMED} == {"anthropic.messages", "openai.chat_completions", "openai.responses"}
    assert {e.lane for e in WHOLE} == {"anthropic.messages", "openai.chat_completions", "openai.responses"}


@pytest.mark.parametrize("exchange", STREAMED, ids=lambda e: e.name)
def test_streamed_recording_sdk_events_and_raw_frames_agree(exchange: Exchange) -> None:
    """The report from the SDK's own event objects equals the report from the raw SSE JSON frames."""
    model = exchange.requested_model or "requested-model"
    from_sdk = report_of(exchange.lane, sdk_events(exchange.lane, exchange.body), model)
    assert without_events(from_sdk) == without_events(raw_report(exchange, frames_the_sdk_delivers(exchange.body)))


def test_unterminated_last_event_is_flushed_by_us_and_dropped_by_the_sdk() -> None:
    """A recording whose last event has no blank line: we read its message_stop, the SDK never yields it."""
    (exchange,) = [e for e in STREAMED if e.name == "anthropic/out_of_order_response.txt#0"]
    assert not terminated(exchange.body)
    assert "message_stop" in sse_data(exchange.body)[-1]
    assert [getattr(e, "type", None) for e in sdk_events(exchange.lane, exchange.body)][-1] != "message_stop"
    assert not raw_report(exchange).torn


@pytest.mark.parametrize("exchange", STREAMED, ids=lambda e: e.name)
def test_streamed_recording_agrees_with_the_sdk_accumulator(exchange: Exchange) -> None:
    """Where the SDK's accumulator gives a complete result, our calls, arguments, stop reason and usage agree."""
    final = sdk_final(exchange.lane, exchange.body)
    report = raw_report(exchange)
    if isinstance(final, Exception):
        assert exchange.name in SDK_CANNOT_ACCUMULATE, final
        expected = SDK_CANNOT_ACCUMULATE[exchange.name]
        assert [d.cause for d in report.drops] == ([expected] if expected else [])
        assert not report.torn
        return
    ours = [(c.call_id, c.name, dict(c.arguments)) for c in report.calls]
    dropped = {i for d in report.drops for i in d.call_ids}
    assert ours == [call for call in sdk_calls(final) if call[0] not in dropped]
    assert report.finish_reasons == sdk_finish(final)
    assert report.usage == sdk_usage(final)


def test_cut_recording_drops_the_call_the_sdk_keeps_partial() -> None:
    """The recorded cut call (no block stop, max_tokens) is a truncated drop naming the cap; the SDK keeps it."""
    (exchange,) = [e for e in STREAMED if e.name == "anthropic/incomplete_partial_json_response.txt#0"]
    report = raw_report(exchange)
    final = sdk_final(exchange.lane, exchange.body)
    assert report.calls == ()
    (drop,) = report.drops
    assert (drop.cause, drop.count) == ("truncated", 1)
    assert [c[0] for c in sdk_calls(final)] == list(drop.call_ids)
    assert report.truncation_clause
    assert report.model_output_invalid is not None
    assert report.model_output_invalid.output_limit


@pytest.mark.parametrize("exchange", WHOLE, ids=lambda e: e.name)
def test_whole_response_sdk_object_and_raw_json_agree(exchange: Exchange) -> None:
    """A non-streamed recording gives the same report from the SDK's object and from the raw JSON dict."""
    loaders = {
        "anthropic.messages": anthropic_message,
        "openai.chat_completions": chat_completion,
        "openai.responses": responses_response,
    }
    model = exchange.requested_model or "requested-model"
    sdk_object = loaders[exchange.lane](exchange.body)
    from_sdk = check_response(exchange.lane, sdk_object, requested_model=model)
    from_raw = check_response(exchange.lane, json.loads(exchange.body), requested_model=model)
    assert from_sdk == from_raw
    assert [(c.call_id, c.name, dict(c.arguments)) for c in from_sdk.calls] == sdk_calls(sdk_object)
    assert from_sdk.finish_reasons == sdk_finish(sdk_object)
    assert from_sdk.usage == sdk_usage(sdk_object)
    assert not from_sdk.torn
