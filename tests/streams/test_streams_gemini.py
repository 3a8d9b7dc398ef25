"""The Gemini observer and response check over hand-made chunks, in both dict spellings and as SDK objects."""

from __future__ import annotations

import copy
import dataclasses
import enum
import json
from typing import Final

import pytest
from google.genai import types

from otel_toolturn.streams import StreamEndIgnored, StreamReport, check_response, closed_by_caller, observer_for
from otel_toolturn.streams._truncation_cause import CAP_CLAUSE
from otel_toolturn.streams.gemini import FINISH_REASONS, finish_word
from tests.streams._drive import both, fed, raw_report, sdk_report
from tests.streams._frames import Frame, g_call, g_chunk, g_text, g_tool_turn, snake
from tests.streams._sdk import gemini_response

LANE: Final = "gemini.generate_content"
SIGNATURE: Final = "c2lnbmF0dXJlLW9mLXRoZS1maXJzdC1jYWxs"
WEATHER: Final = {"location": "Boston", "units": ["celsius"], "days": 2}


def calls_of(report: StreamReport) -> list[tuple[str, str, dict[str, object], int]]:
    return [(c.call_id, c.name, dict(c.arguments), c.index) for c in report.calls]


def drops_of(report: StreamReport) -> list[tuple[str, int, tuple[str, ...]]]:
    return [(d.cause, d.count, d.call_ids) for d in report.drops]


def three_ways(frames: list[Frame], *, requested: str | None = "model-a") -> StreamReport:
    """The REST-dict report, after checking the snake_case dicts and the real SDK's chunks give the same one."""
    raw = both(LANE, frames, requested=requested)
    snaked = raw_report(LANE, [snake(f) for f in frames], requested=requested)  # type: ignore[misc]
    assert snaked == raw
    return raw


def test_a_whole_call_is_a_call_in_every_spelling() -> None:
    """A functionCall part with name, args and id is one call; REST dicts, SDK dicts and SDK chunks agree."""
    r = three_ways(g_tool_turn(g_call("get_weather", WEATHER, call_id="fc_1"), finish="STOP"))
    assert calls_of(r) == [("fc_1", "get_weather", WEATHER, 0)]
    assert (r.drops, r.torn, r.ends_ignored, r.finish_reasons) == ((), False, None, ("STOP",))
    assert (r.response_id, r.response_model, r.substituted_model) == ("resp-g1", "model-a", None)


def test_parallel_calls_in_one_part_list_and_across_chunks() -> None:
    """Parallel calls keep their order (index = their place among the candidate's calls); missing ids are empty."""
    frames = [
        g_chunk(g_call("get_weather", {"location": "Boston"}), g_call("get_weather", {"location": "Delhi"})),
        g_chunk(g_call("get_time", {"zone": "UTC"}), finish="STOP"),
    ]
    r = three_ways(frames)
    assert calls_of(r) == [
        ("", "get_weather", {"location": "Boston"}, 0),
        ("", "get_weather", {"location": "Delhi"}, 1),
        ("", "get_time", {"zone": "UTC"}, 2),
    ]


def test_a_call_without_args_runs_with_an_empty_object() -> None:
    """A functionCall part with no args is a no-argument call: {}."""
    assert calls_of(three_ways([g_chunk(g_call("now"), finish="STOP")])) == [("", "now", {}, 0)]


def test_max_tokens_drops_the_call_the_cap_cut_and_keeps_the_finished_ones() -> None:
    """MAX_TOKENS: the candidate's last part, a call, is a truncated drop naming the cap; earlier calls run."""
    frames = g_tool_turn(g_call("a", {"x": 1}, call_id="c1"), g_call("b", {"y": 2}, call_id="c2"), finish="MAX_TOKENS")
    r = three_ways(frames)
    assert calls_of(r) == [("c1", "a", {"x": 1}, 0)]
    assert drops_of(r) == [("truncated", 1, ("c2",))]
    assert r.truncation_clause == CAP_CLAUSE
    assert r.model_output_invalid is not None
    assert (r.model_output_invalid.cause, r.model_output_invalid.output_limit) == ("truncated", True)
    assert r.finish_reasons == ("MAX_TOKENS",)


def test_max_tokens_after_text_keeps_every_call() -> None:
    """Text after the last call (the cap cut the text, not a call): every call runs; an empty text part is no part."""
    frames = [g_chunk(g_call("a", {"x": 1})), g_chunk(g_text("and then"), g_text(""), finish="MAX_TOKENS")]
    r = three_ways(frames)
    assert calls_of(r) == [("", "a", {"x": 1}, 0)]
    assert r.drops == ()
    cut = three_ways([g_chunk(g_call("a", {"x": 1})), g_chunk(g_text(""), finish="MAX_TOKENS")])
    assert drops_of(cut) == [("truncated", 1, ())]


def test_malformed_function_call_counts_the_call_the_provider_withheld() -> None:
    """MALFORMED_FUNCTION_CALL: one truncated drop without ids, model_output_invalid truncated, no cap named."""
    r = three_ways([g_chunk(g_text("Let me check."), finish="MALFORMED_FUNCTION_CALL")])
    assert r.calls == ()
    assert drops_of(r) == [("truncated", 1, ())]
    assert r.model_output_invalid is not None
    assert (r.model_output_invalid.cause, r.model_output_invalid.output_limit) == ("truncated", False)
    assert (r.truncation_clause, r.torn, r.finish_reasons) == ("", False, ("MALFORMED_FUNCTION_CALL",))
    assert [n.text for n in r.notes] == [
        "1 tool call was dropped: the arguments were not valid JSON. Issue them again."
    ]


SDK_FINISH_REASONS: Final = frozenset(member.value for member in types.FinishReason)
"""The installed SDK's finish reasons (its parser warns on a word it does not know)."""


@pytest.mark.parametrize(
    "reason",
    [
        "STOP",
        "SAFETY",
        "RECITATION",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
        pytest.param(
            "MISSING_THOUGHT_SIGNATURE",
            marks=pytest.mark.skipif(
                "MISSING_THOUGHT_SIGNATURE" not in SDK_FINISH_REASONS,
                reason="google-genai 3.3 brings the MISSING_THOUGHT_SIGNATURE finish reason",
            ),
        ),
    ],
)
def test_other_finish_reasons_end_the_stream_with_their_word(reason: str) -> None:
    """Any other finish reason is the ending's word only: the whole calls that arrived stay calls."""
    r = three_ways([g_chunk(g_call("a", {"x": 1}), finish=reason)])
    assert (r.finish_reasons, r.torn, r.drops, r.model_output_invalid) == ((reason,), False, (), None)
    assert calls_of(r) == [("", "a", {"x": 1}, 0)]


def test_a_stream_without_a_finish_reason_is_torn() -> None:
    """No finishReason: torn (the provider cut); the calls that came whole stay; the caller's close is not torn."""
    r = three_ways(g_tool_turn(g_call("a", {"x": 1}, call_id="c1"), finish=None))
    assert r.torn
    assert calls_of(r) == [("c1", "a", {"x": 1}, 0)]
    closed = closed_by_caller(r)
    assert (closed.torn, closed.closed_early, closed.unfinished) == (False, True, None)
    assert fed(LANE, []).torn


def test_the_requested_model_with_resource_path_and_version_is_no_substitution() -> None:
    """models/<id> and a -NNN version of it name the requested model; another model is a substitution."""
    frames = [g_chunk(g_text("hi"), finish="STOP", model="gemini-1.5-flash-002")]
    for requested in ("models/gemini-1.5-flash", "gemini-1.5-flash", "publishers/google/models/gemini-1.5-flash"):
        r = three_ways(frames, requested=requested)
        assert (r.requested_model, r.response_model, r.substituted_model) == (
            requested,
            "gemini-1.5-flash-002",
            None,
        )
    swapped = three_ways(frames, requested="models/gemini-2.5-pro")
    assert swapped.substituted_model == "gemini-1.5-flash-002"


def test_usage_reads_prompt_and_candidates_plus_thoughts() -> None:
    """Input tokens are promptTokenCount; output tokens candidatesTokenCount + thoughtsTokenCount (last chunk wins)."""
    usage: Frame = {"promptTokenCount": 71, "candidatesTokenCount": 33, "thoughtsTokenCount": 93}
    frames = [g_chunk(g_text("a")), g_chunk(g_text("b"), finish="STOP", usage=usage)]
    r = three_ways(frames)
    assert (r.usage.input_tokens, r.usage.output_tokens) == (71, 126)
    observer = observer_for(LANE, requested_model="model-a", max_output_tokens=126)
    for frame in [g_chunk(g_call("a", {}), finish="STOP", usage=usage)]:
        observer.feed(frame)
    assert observer.finish().model_output_invalid is None


def test_thought_signatures_stay_out_of_the_report() -> None:
    """A signed call reports exactly as the unsigned one; the signature appears nowhere in the report."""
    signed = three_ways([g_chunk(g_call("a", {"x": 1}, signature=SIGNATURE), finish="STOP")])
    unsigned = three_ways([g_chunk(g_call("a", {"x": 1}), finish="STOP")])
    assert signed == unsigned
    assert SIGNATURE not in repr(signed)


def test_an_unknown_finish_reason_is_reported_as_other() -> None:
    """A finish reason outside the closed set is OTHER, from a dict and from the SDK (which warns about it)."""
    frames = [g_chunk(g_call("a", {"x": 1}), finish="SOMETHING_NEW")]
    assert raw_report(LANE, frames).finish_reasons == ("OTHER",)
    with pytest.warns(UserWarning, match="SOMETHING_NEW"):
        assert sdk_report(LANE, frames).finish_reasons == ("OTHER",)


class _Reason(enum.Enum):
    STOP = "STOP"


@pytest.mark.parametrize(
    ("raw", "word"),
    [
        ("STOP", "STOP"),
        ("max_tokens", "MAX_TOKENS"),
        (types.FinishReason.MALFORMED_FUNCTION_CALL, "MALFORMED_FUNCTION_CALL"),
        (_Reason.STOP, "STOP"),
        (1, "STOP"),
        (2, "MAX_TOKENS"),
        (5, "OTHER"),
        (9, "OTHER"),
        (True, "OTHER"),
        ("stop\n", "OTHER"),
        (None, "OTHER"),
    ],
)
def test_finish_word_maps_onto_the_closed_set(raw: object, word: str) -> None:
    """Words read case-insensitively, enums by value, numbers 0-5 by the shared numbering; all else OTHER."""
    assert finish_word(raw) == word
    assert finish_word(raw) in FINISH_REASONS


@pytest.mark.skipif(
    not set(FINISH_REASONS) <= SDK_FINISH_REASONS,
    reason="google-genai 3.3 brings MISSING_THOUGHT_SIGNATURE, MODEL_ARMOR and PUP_LIMITED_DISABLED",
)
def test_the_closed_set_is_the_sdks_finish_reasons() -> None:
    """FINISH_REASONS is exactly the installed SDK's FinishReason values, so no SDK word reads as OTHER."""
    assert set(FINISH_REASONS) == SDK_FINISH_REASONS


def test_a_call_without_a_name_is_unnamed() -> None:
    """A functionCall part without a name never runs: an unnamed drop naming its id."""
    r = three_ways([g_chunk(g_call(None, {"x": 1}, call_id="c9"), finish="STOP")])
    assert (r.calls, drops_of(r)) == ((), [("unnamed", 1, ("c9",))])


def test_arguments_that_are_not_an_object_never_run() -> None:
    """A dict frame whose args are a list or a string: a truncated drop (the SDK cannot even carry one)."""
    for args in ([1, 2], "x=1"):
        frame = g_chunk(g_call("a", call_id="c1"), finish="STOP")
        part = frame["candidates"][0]["content"]["parts"][0]  # type: ignore[index]
        part["functionCall"]["args"] = args
        assert drops_of(raw_report(LANE, [frame])) == [("truncated", 1, ("c1",))]


def test_a_part_streaming_its_arguments_in_pieces_never_runs() -> None:
    """Parts with willContinue / partialArgs are not assembled: a call nothing closed, dropped."""
    part = g_call("a", call_id="c1")
    part["functionCall"]["willContinue"] = True  # type: ignore[index]
    r = three_ways([g_chunk(part, finish="STOP")])
    assert (r.calls, drops_of(r)) == ((), [("truncated", 1, ("c1",))])


def test_parts_after_the_finish_are_refused_and_counted() -> None:
    """After a candidate's finishReason its parts and a second finish are refused; usage is still read."""
    late_usage: Frame = {"promptTokenCount": 1, "candidatesTokenCount": 2}
    frames = [g_chunk(g_call("a", {}), finish="STOP"), g_chunk(g_call("b", {}), finish="STOP", usage=late_usage)]
    r = three_ways(frames)
    assert [c.name for c in r.calls] == ["a"]
    assert r.ends_ignored == StreamEndIgnored(statement="content", word="parts", count=2)
    assert (r.usage.input_tokens, r.usage.output_tokens) == (1, 2)


def test_an_unfinished_second_candidate_tears_the_stream() -> None:
    """With several candidates, each must finish; calls carry their candidate as choice."""
    frames = [g_chunk(g_call("a", {}), finish="STOP"), g_chunk(g_call("b", {}), index=1)]
    r = three_ways(frames)
    assert r.torn
    assert [(c.name, c.choice) for c in r.calls] == [("a", 0), ("b", 1)]
    done = three_ways([*frames, g_chunk(finish="STOP", index=1)])
    assert (done.torn, done.finish_reasons) == (False, ("STOP", "STOP"))


def test_an_in_band_error_and_a_blocked_prompt_are_endings() -> None:
    """An error chunk ends the stream with its status; a promptFeedback block ends it with its reason."""
    error = raw_report(LANE, [g_chunk(g_text("a")), {"error": {"code": 500, "status": "INTERNAL", "message": "x"}}])
    assert (error.torn, error.finish_reasons) == (False, ())
    blocked: Frame = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "modelVersion": "model-a"}
    r = three_ways([blocked])
    assert (r.torn, r.finish_reasons) == (False, ("PROHIBITED_CONTENT",))
    numbered = raw_report(LANE, [{"promptFeedback": {"blockReason": 3}}])
    assert (numbered.torn, numbered.finish_reasons) == (False, ("OTHER",))


def test_raw_frames_are_decoded_and_bad_ones_counted() -> None:
    """A raw data: string is decoded; one that is not JSON is a bad_frame drop."""
    frame = json.dumps(g_chunk(g_call("a", {"x": 1}), finish="STOP"))
    r = fed(LANE, ["{not json", frame, frame.encode()])
    assert [c.name for c in r.calls] == ["a"]
    assert drops_of(r) == [("bad_frame", 1, ())]


def test_looping_text_trips_the_repetition_poll_and_thoughts_are_not_polled() -> None:
    """Candidate 0's text feeds the poll; thought text does not."""
    loop = "All work and no play. " * 40
    r = three_ways([g_chunk(g_text(loop[i : i + 50])) for i in range(0, len(loop), 50)] + [g_chunk(finish="STOP")])
    assert r.repetition.cut is not None
    thoughts = three_ways([g_chunk(g_text(loop, thought=True), finish="STOP")])
    assert thoughts.repetition.cut is None


def test_feed_never_raises_on_unreadable_chunks() -> None:
    """Chunks of no known shape are read as nothing or counted unread, never raised."""
    r = fed(LANE, [None, 3, [], {"candidates": "x"}, {"candidates": [None, {"content": 7}]}, "[1]"])
    assert (r.calls, r.drops, r.torn, r.frames_unread) == ((), (), True, 1)


# --- the response check --------------------------------------------------------------------------


def whole(*parts: Frame, finish: str | int | None = "STOP", usage: Frame | None = None) -> Frame:
    return g_chunk(*parts, finish=finish, usage=usage)


def checked(body: Frame, *, requested: str | None = "model-a") -> StreamReport:
    """The check of the REST dict, after checking the snake_case dict and the SDK's own response agree."""
    before = copy.deepcopy(body)
    raw = check_response(LANE, body, requested_model=requested)
    assert body == before, "the check altered the response"
    assert check_response(LANE, snake(body), requested_model=requested) == raw
    sdk = gemini_response(json.dumps(body).encode())
    assert check_response(LANE, sdk, requested_model=requested) == raw
    assert isinstance(sdk, types.GenerateContentResponse)
    return raw


def test_check_response_reads_calls_finish_usage_and_id() -> None:
    """A whole response: calls, finish reason, usage, id and model, the same in every spelling."""
    usage: Frame = {"promptTokenCount": 5, "candidatesTokenCount": 6, "thoughtsTokenCount": 7}
    body = whole(g_call("a", {"x": 1}, call_id="c1", signature=SIGNATURE), g_call("b", {}), usage=usage)
    r = checked(body, requested="models/model-a")
    assert calls_of(r) == [("c1", "a", {"x": 1}, 0), ("", "b", {}, 1)]
    assert (r.finish_reasons, r.usage.input_tokens, r.usage.output_tokens) == (("STOP",), 5, 13)
    assert (r.response_id, r.response_model, r.substituted_model, r.torn, r.events) == (
        "resp-g1",
        "model-a",
        None,
        False,
        1,
    )
    assert SIGNATURE not in repr(r)


def test_check_response_agrees_with_the_one_chunk_stream() -> None:
    """A whole response reports as the same body streamed in one chunk (cap cut and withheld calls alike)."""
    for finish in ("STOP", "MAX_TOKENS", "MALFORMED_FUNCTION_CALL", "SAFETY"):
        body = whole(g_call("a", {"x": 1}, call_id="c1"), g_call("b", {"y": 2}, call_id="c2"), finish=finish)
        streamed = raw_report(LANE, [body])
        assert checked(body) == dataclasses.replace(streamed, events=1)


def test_check_response_of_a_blocked_prompt_and_unreadable_bodies() -> None:
    """A blocked prompt reports its reason; bodies of no known shape give an empty report."""
    blocked = check_response(LANE, {"promptFeedback": {"blockReason": "SAFETY"}}, requested_model=None)
    assert blocked.finish_reasons == ("SAFETY",)
    for body in (None, {}, {"candidates": 3}, "text"):
        r = check_response(LANE, body, requested_model=None)
        assert (r.calls, r.drops, r.torn) == ((), (), False)


def test_check_response_numbered_finish_reasons() -> None:
    """enum-encoding=int finish reasons read by the shared numbering (2: MAX_TOKENS names the cap)."""
    r = check_response(LANE, whole(g_call("a", {"x": 1}), finish=2), requested_model=None)
    assert (r.finish_reasons, r.truncation_clause) == (("MAX_TOKENS",), CAP_CLAUSE)
