"""Regression tests: the broken shapes users hit in public bug reports, and the defects of other repairers.

Each transcript is written here in our own words and data; the shape is what matters.
"""

from __future__ import annotations

import json

import pytest

from otel_toolturn import INTERRUPTED_RESULT_TEXT, LANES, Lane, ensure_tool_turn_invariants, validate
from otel_toolturn._view import field
from otel_toolturn.lanes.bedrock_converse import RESULTS_LEFT_OUT_TEXT
from otel_toolturn.lanes.gemini import LEADING_RESULTS_TEXT
from tests.transcripts import CLAUDE_CODE_CLOSE, A, Event, R, S, U, as_api_reads, build, c, t, th

ANTHROPIC: Lane = "anthropic.messages"


def _forms(view_repairs: object) -> list[tuple[str, tuple[str, ...]]]:
    return [(r.form, r.tool_call_ids) for r in view_repairs]  # type: ignore[attr-defined]


def test_case_1_ctrl_c_during_parallel_tools_then_continue() -> None:
    """Interrupted parallel calls: the missing results are closed ahead of the user's 'continue', in call order."""
    given: list[object] = [
        {"role": "user", "content": "do x"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "reading"},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a"}},
                {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {"path": "b"}},
                {"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {"cmd": "ls"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"},
                {"type": "text", "text": "continue"},
            ],
        },
    ]
    assert [v.rule for v in validate(given, lane=ANTHROPIC)] == ["missing_tool_result"]
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert _forms(view.repairs) == [("missing_result", ("toolu_2", "toolu_3"))]
    assert not view.lossy
    last = view.messages[-1]
    assert isinstance(last, dict)
    content = last["content"]
    assert [b.get("tool_use_id") for b in content] == ["toolu_1", "toolu_2", "toolu_3", None]
    assert content[-1] == {"type": "text", "text": "continue"}
    assert validate(view.messages, lane=ANTHROPIC) == []


@pytest.mark.parametrize("lane", LANES)
def test_case_1_in_every_lane(lane: Lane) -> None:
    """The same interruption in each lane: closed with synthetic results, the user's text kept after them."""
    given = build(lane, [U("do x"), A(t("reading"), c("c1"), c("c2"), c("c3")), R("c1"), U("continue")])
    view = ensure_tool_turn_invariants(given, lane=lane)
    expected = build(
        lane, [U("do x"), A(t("reading"), c("c1"), c("c2"), c("c3")), R("c1"), S("c2"), S("c3"), U("continue")]
    )
    assert as_api_reads(lane, view.messages) == as_api_reads(lane, expected)


def test_case_2_text_and_thinking_after_tool_use_on_retry() -> None:
    """Blocks appended after a tool_use move ahead of the call; thinking blocks are moved, never changed."""
    given = build(ANTHROPIC, [U("q"), A(th("plan"), c("c1"), t("retrying"), th("again")), R("c1")])
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert _forms(view.repairs) == [("trailing_text", ("c1",))]
    assert view.messages == build(ANTHROPIC, [U("q"), A(th("plan"), t("retrying"), th("again"), c("c1")), R("c1")])


@pytest.mark.parametrize("lane", LANES)
def test_case_3_user_text_right_after_a_call(lane: Lane) -> None:
    """A user who answers a call with plain text gets the call closed as interrupted ahead of the text."""
    given = build(lane, [U("q"), A(c("c1")), U("never mind")])
    view = ensure_tool_turn_invariants(given, lane=lane)
    assert view.messages == build(lane, [U("q"), A(c("c1")), S("c1"), U("never mind")])


def test_case_4_history_starts_with_a_result_whose_call_was_trimmed() -> None:
    """An orphan at the head is left out (lossy) while the text that shared its message is kept."""
    given: list[object] = [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_gone", "content": "old"},
                {"type": "text", "text": "summary follows"},
            ],
        },
        {"role": "assistant", "content": "ok"},
    ]
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert _forms(view.repairs) == [("orphan_result", ("toolu_gone",))]
    assert view.lossy
    assert view.messages == [
        {"role": "user", "content": [{"type": "text", "text": "summary follows"}]},
        {"role": "assistant", "content": "ok"},
    ]


@pytest.mark.parametrize("lane", LANES)
def test_case_5_and_6_the_same_call_twice_in_one_message(lane: Lane) -> None:
    """A call id emitted twice in one message keeps the first call, a lossy drop (Responses: a later run of its own)."""
    given = build(lane, [U("q"), A(c("c1", "Read", '{"p": 1}'), c("c1", "Read", '{"p": 2}')), R("c1")])
    view = ensure_tool_turn_invariants(given, lane=lane)
    if lane == "openai.responses":  # a different call item repeating an id opens the next run: a later answer
        assert _forms(view.repairs) == [("missing_result", ("c1",)), ("reused_id", ("c1",))]
        assert not view.lossy
        later: list[Event] = [A(c("c1", "Read", '{"p": 1}')), S("c1"), A(c("c1_2", "Read", '{"p": 2}')), R("c1_2")]
        assert view.messages == build(lane, [U("q"), *later])
        return
    assert _forms(view.repairs) == [("duplicate_call", ("c1",))]
    assert view.lossy
    assert view.messages == build(lane, [U("q"), A(c("c1", "Read", '{"p": 1}')), R("c1")])


@pytest.mark.parametrize("lane", LANES)
def test_case_7_human_in_the_loop_answers_a_confirmation_with_text(lane: Lane) -> None:
    """A confirmation call answered by an ordinary message is closed, the user's message kept after it."""
    given = build(lane, [U("book it"), A(c("c1", "confirm_booking")), U("actually, next week")])
    view = ensure_tool_turn_invariants(given, lane=lane)
    assert _forms(view.repairs) == [("missing_result", ("c1",))]
    assert validate(view.messages, lane=lane) == []


@pytest.mark.parametrize("lane", LANES)
def test_case_8_window_cut_between_a_call_and_its_result(lane: Lane) -> None:
    """A trimmed window that starts with a result leaves the result out, reported as a lossy orphan."""
    given = build(lane, [R("c1", "7"), A(t("The answer is 7")), U("and 3+3?")])
    view = ensure_tool_turn_invariants(given, lane=lane)
    assert _forms(view.repairs) == [("orphan_result", ("c1",))]
    kept: list[Event] = [A(t("The answer is 7")), U("and 3+3?")]
    if lane == "gemini.generate_content":  # the content keeps its place, so no model content opens the list
        kept = [U(LEADING_RESULTS_TEXT), *kept]
    if lane == "bedrock.converse":  # the message keeps its place: the conversation must start with the user
        kept = [U(RESULTS_LEFT_OUT_TEXT), *kept]
    assert view.messages == build(lane, kept)


def test_case_9_chained_responses_keep_outputs_for_server_held_calls() -> None:
    """With previous_response_id the call lives on the server: its output is kept, not an orphan."""
    given: list[object] = [{"type": "function_call_output", "call_id": "call_9", "output": "42"}]
    chained = ensure_tool_turn_invariants(given, lane="openai.responses", chained=True)
    assert chained.repairs == ()
    assert chained.messages == given
    assert validate(given, lane="openai.responses", chained=True) == []
    unchained = ensure_tool_turn_invariants(given, lane="openai.responses")
    assert _forms(unchained.repairs) == [("orphan_result", ("call_9",))]


def test_case_10_replayed_items_get_unique_ids() -> None:
    """Items replayed twice no longer repeat call ids or item ids (the replay sent without its id); nothing dropped."""
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "done"}
    given: list[object] = [{"role": "user", "content": "q"}, call, output, call, output]
    assert {v.rule for v in validate(given, lane="openai.responses")} >= {"duplicate_item"}
    view = ensure_tool_turn_invariants(given, lane="openai.responses")
    assert _forms(view.repairs) == [("reused_id", ("call_1",)), ("duplicate_item_id", ("call_1",))]
    assert not view.lossy
    assert validate(view.messages, lane="openai.responses") == []
    assert view.messages[3] == {"type": "function_call", "call_id": "call_1_2", "name": "f", "arguments": "{}"}


@pytest.mark.parametrize("lane", LANES)
def test_case_13_a_cut_call_dropped_upstream_leaves_its_synthetic_result_orphaned(lane: Lane) -> None:
    """A synthetic result whose cut call was dropped upstream is an orphan and is left out."""
    given = build(lane, [U("q"), A(t("let me look")), R("c1", CLAUDE_CODE_CLOSE), U("continue")])
    view = ensure_tool_turn_invariants(given, lane=lane)
    assert _forms(view.repairs) == [("orphan_result", ("c1",))]
    assert validate(view.messages, lane=lane) == []


@pytest.mark.parametrize("lane", LANES)
def test_defect_one_late_one_missing_keeps_the_user_message(lane: Lane) -> None:
    """One result late behind a user message and one missing: the user's message survives."""
    events: list[Event] = [U("q"), A(c("c1"), c("c2")), U("hey"), R("c1", "r1")]
    view = ensure_tool_turn_invariants(build(lane, events), lane=lane)
    if lane == "openai.responses":  # the output stands where it was recorded; the close right after the run
        assert view.messages == build(lane, [U("q"), A(c("c1"), c("c2")), S("c2"), U("hey"), R("c1", "r1")])
    else:
        assert view.messages == build(lane, [U("q"), A(c("c1"), c("c2")), R("c1", "r1"), S("c2"), U("hey")])


@pytest.mark.parametrize("lane", LANES)
def test_defect_all_results_late_are_all_moved_up(lane: Lane) -> None:
    """All results late behind a user message: every one is moved up (Responses accepts them where they stand)."""
    events: list[Event] = [U("q"), A(c("c1"), c("c2")), U("hey"), R("c1"), R("c2")]
    view = ensure_tool_turn_invariants(build(lane, events), lane=lane)
    moved = [] if lane == "openai.responses" else [("late_result", ("c1", "c2"))]
    assert _forms(view.repairs) == moved
    assert validate(view.messages, lane=lane) == []


@pytest.mark.parametrize("lane", LANES)
def test_defect_a_result_behind_an_assistant_message_is_kept_not_replaced(lane: Lane) -> None:
    """A real result behind an intervening assistant message is delivered after it, never replaced or lost."""
    view = ensure_tool_turn_invariants(build(lane, [U("q"), A(c("c1")), A(t("aloud")), R("c1", "real")]), lane=lane)
    wire = json.dumps(view.messages)
    assert wire.index("aloud") < wire.index("real"), "after what the model said, which it said without it"
    assert validate(view.messages, lane=lane) == []


@pytest.mark.parametrize("lane", LANES)
def test_defect_synthetic_results_follow_call_order(lane: Lane) -> None:
    """Synthetic closes stand in call order, never in a hash-set order."""
    ids = [f"call_{n}" for n in (7, 3, 9, 1, 5, 2, 8)]
    view = ensure_tool_turn_invariants(build(lane, [U("q"), A(*(c(i) for i in ids))]), lane=lane)
    expected = build(lane, [U("q"), A(*(c(i) for i in ids)), *(S(i) for i in ids)])
    assert as_api_reads(lane, view.messages) == as_api_reads(lane, expected)


@pytest.mark.parametrize("lane", LANES)
def test_defect_a_reused_id_keeps_the_second_turns_real_result(lane: Lane) -> None:
    """An id reused in two answered turns keeps both real results; nothing is synthesised."""
    view = ensure_tool_turn_invariants(
        build(lane, [U("q"), A(c("c0")), R("c0", "first"), A(c("c0")), R("c0", "second")]), lane=lane
    )
    wire = json.dumps(view.messages)
    assert "first" in wire
    assert "second" in wire
    assert INTERRUPTED_RESULT_TEXT not in wire
    assert validate(view.messages, lane=lane) == []


def test_the_same_call_item_twice_in_one_run_is_kept_once() -> None:
    """`input += response.output` run twice gives one call item object twice: the view keeps it once and validates."""
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"}
    given: list[object] = [{"role": "user", "content": "q"}, call, call]
    view = ensure_tool_turn_invariants(given, lane="openai.responses")
    assert _forms(view.repairs) == [("duplicate_call", ("call_1",)), ("missing_result", ("call_1",))]
    assert [item for item in view.messages if item is call] == [call]
    assert validate(view.messages, lane="openai.responses") == []
    assert ensure_tool_turn_invariants(view.messages, lane="openai.responses").repairs == ()


def test_an_id_anthropic_refuses_gets_one_that_fits_with_its_results() -> None:
    """A `functions.lookup:0` id (an OpenAI-compatible server's) becomes `functions_lookup_0`, its result with it."""
    given = build(ANTHROPIC, [U("q"), A(c("functions.lookup:0")), R("functions.lookup:0", "found")])
    assert "invalid_tool_use_id" in {v.rule for v in validate(given, lane=ANTHROPIC)}
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert _forms(view.repairs) == [("invalid_id", ("functions.lookup:0",))]
    assert not view.lossy
    assert view.messages == build(ANTHROPIC, [U("q"), A(c("functions_lookup_0")), R("functions_lookup_0", "found")])
    assert validate(view.messages, lane=ANTHROPIC) == []


def test_a_derived_id_that_is_taken_gets_a_suffix() -> None:
    """`a.b` next to an existing `a_b` becomes `a_b_2`: a derived id never collides with an earlier one."""
    given = build(ANTHROPIC, [A(c("a_b")), R("a_b"), A(c("a.b")), R("a.b")])
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert view.messages == build(ANTHROPIC, [A(c("a_b")), R("a_b"), A(c("a_b_2")), R("a_b_2")])


def test_an_item_replayed_with_its_id_is_left_out_once_reported() -> None:
    """A message item whose `id` repeats an earlier item's is left out (`duplicate_item`, lossy); the view validates."""
    said = {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}
    given: list[object] = [{"role": "user", "content": "q"}, said, {"role": "user", "content": "again"}, dict(said)]
    assert "duplicate_item" in {v.rule for v in validate(given, lane="openai.responses")}
    view = ensure_tool_turn_invariants(given, lane="openai.responses")
    assert _forms(view.repairs) == [("duplicate_item", ("msg_1",))]
    assert view.lossy
    assert view.messages == given[:3]
    assert validate(view.messages, lane="openai.responses") == []


@pytest.mark.parametrize("after", [[], [{"type": "function_call_output", "call_id": "c1", "output": "ok"}]])
def test_reasoning_with_nothing_to_belong_to_is_left_out_reported(after: list[object]) -> None:
    """A `reasoning` item last, or right before an output, is left out (`dangling_reasoning`, lossy)."""
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    reasoning = {"type": "reasoning", "id": "rs_9", "summary": []}
    given: list[object] = [{"role": "user", "content": "q"}, call, reasoning, *after]
    assert "reasoning_without_following_item" in {v.rule for v in validate(given, lane="openai.responses")}
    view = ensure_tool_turn_invariants(given, lane="openai.responses")
    assert ("dangling_reasoning", ("rs_9",)) in _forms(view.repairs)
    assert reasoning not in list(view.messages)
    assert validate(view.messages, lane="openai.responses") == []


def test_a_run_opening_with_reasoning_without_an_id_is_read_to_its_end() -> None:
    """A reasoning item with no `id` ahead of a call after an item with no `id` is read as part of the run."""
    given: list[object] = [
        {"role": "user", "content": "q"},
        {"type": "reasoning", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ]
    view = ensure_tool_turn_invariants(given, lane="openai.responses")
    assert view.messages is given


RESPONSES: Lane = "openai.responses"
_OUTPUT_TYPE = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}


def _output(kind: str, call_id: str, output: str, **more: object) -> dict[str, object]:
    return {"type": _OUTPUT_TYPE[kind], "call_id": call_id, "output": output, **more}


@pytest.mark.parametrize("kind", list(_OUTPUT_TYPE))
def test_a_retried_call_item_keeping_its_item_id_is_sent_without_it(kind: str) -> None:
    """A call item of a new call id repeating an item `id` is kept without it (`duplicate_item_id`, not lossy)."""
    fields = {"arguments": "{}"} if kind == "function_call" else {"input": "x"}
    first = {"type": kind, "id": "fc_1", "call_id": "c1", "name": "f", **fields}
    retry = {**first, "call_id": "c2"}
    given: list[object] = [{"role": "user", "content": "go"}, first, _output(kind, "c1", "a"), retry]
    given.append(_output(kind, "c2", "b"))
    assert "duplicate_item" in {v.rule for v in validate(given, lane=RESPONSES)}
    view = ensure_tool_turn_invariants(given, lane=RESPONSES)
    assert _forms(view.repairs) == [("duplicate_item_id", ("c2",))]
    assert not view.lossy
    assert list(view.messages) == [*given[:3], {k: v for k, v in retry.items() if k != "id"}, given[4]]
    assert all(a is b for a, b in zip(view.messages[:3], given[:3], strict=True)), "the first use keeps its id"
    assert validate(view.messages, lane=RESPONSES) == []
    again = ensure_tool_turn_invariants(view.messages, lane=RESPONSES)
    assert (again.messages, again.repairs) == (view.messages, ())
    assert retry["id"] == "fc_1", "the caller's item is untouched"


def test_an_output_item_repeating_an_item_id_keeps_its_output_without_it() -> None:
    """An output item whose `id` repeats an earlier item's is kept, output and all, without that `id`."""
    call = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"}
    given: list[object] = [{"role": "user", "content": "go"}, call, _output("function_call", "c1", "a", id="fc_1")]
    view = ensure_tool_turn_invariants(given, lane=RESPONSES)
    assert _forms(view.repairs) == [("duplicate_item_id", ("c1",))]
    assert list(view.messages) == [*given[:2], _output("function_call", "c1", "a")]
    assert validate(view.messages, lane=RESPONSES) == []


def test_a_replayed_reasoning_item_is_left_out_and_the_retried_call_after_it_kept() -> None:
    """Reasoning repeating an id is left out (its id is required); the retried call after it stays, without its id."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    first = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"}
    retry = {**first, "call_id": "c2"}
    given: list[object] = [{"role": "user", "content": "go"}, reasoning, first, _output("function_call", "c1", "a")]
    given += [reasoning, retry, _output("function_call", "c2", "b")]
    view = ensure_tool_turn_invariants(given, lane=RESPONSES)
    assert _forms(view.repairs) == [("duplicate_item_id", ("c2",)), ("duplicate_item", ("rs_1",))]
    assert list(view.messages) == [*given[:4], {k: v for k, v in retry.items() if k != "id"}, given[6]]
    assert validate(view.messages, lane=RESPONSES) == []


def test_reasoning_after_a_runs_last_call_stays_ahead_of_the_call_it_belongs_to() -> None:
    """A run ends at its last call: reasoning after it (a replayed copy between) stays ahead of its own call."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    later = {"type": "function_call", "call_id": "c0", "name": "g", "arguments": "{}"}
    given: list[object] = [{"role": "user", "content": "go"}, call, reasoning, reasoning, later]
    view = ensure_tool_turn_invariants(given, lane=RESPONSES)
    assert validate(view.messages, lane=RESPONSES) == []
    assert [field(item, "type") for item in view.messages][1:] == [
        "function_call",
        "function_call_output",
        "reasoning",
        "function_call",
        "function_call_output",
    ]


_NESTED: dict[Lane, tuple[list[dict[str, object]], tuple[str, ...]]] = {
    ANTHROPIC: (
        [
            {"type": "tool_result", "tool_use_id": "c1", "content": "<inner>"},
            {"type": "tool_use", "id": "c9", "name": "g", "input": {"q": "<call>"}},
            {"type": "text", "text": ""},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/<image>.png"}},
        ],
        ("text", "image", "document", "search_result"),
    ),
    "openai.chat_completions": (
        [{"type": "refusal", "refusal": "<inner>"}, {"type": "text", "text": "<kept>"}],
        ("text", "image_url", "input_audio", "file"),
    ),
    RESPONSES: (
        [
            {"type": "function_call_output", "call_id": "c1", "output": "<inner>"},
            {"type": "input_image", "image_url": "https://example.com/<image>.png"},
        ],
        ("input_text", "input_image", "input_file"),
    ),
}
"""Per lane: a result content nesting parts no user message holds, and the part types a user message holds."""


def _late(lane: Lane, content: object) -> list[object]:
    """A call answered, then a second result (holding ``content``) recorded after the model answered."""
    given = build(lane, [U("go"), A(c("c1")), R("c1", "first"), U("next"), A(t("ok"))])
    if lane == ANTHROPIC:
        given.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": content}]})
    elif lane == RESPONSES:
        given.append({"type": "function_call_output", "call_id": "c1", "output": content})
    else:
        given.append({"role": "tool", "tool_call_id": "c1", "content": content})
    return given


def _delivered_parts(lane: Lane, view_messages: object) -> list[dict[str, object]]:
    assert isinstance(view_messages, list)
    last = view_messages[-1]
    assert isinstance(last, dict)
    assert last["role"] == "user"
    parts = last["content"]
    return [{"type": "text", "text": parts}] if isinstance(parts, str) else list(parts)


@pytest.mark.parametrize(("lane", "content"), [(lane, nested) for lane, (nested, _) in _NESTED.items()])
def test_a_late_result_nesting_a_result_or_a_call_is_delivered_with_them_as_text(
    lane: Lane, content: list[dict[str, object]]
) -> None:
    """Delivered in place, a nested result, call or empty text becomes text: valid where it stands, a fixed point."""
    view = ensure_tool_turn_invariants(_late(lane, content), lane=lane)
    assert _forms(view.repairs) == [("duplicate_result_in_place", ("c1",))]
    assert not view.lossy
    parts = _delivered_parts(lane, view.messages)
    holds = _NESTED[lane][1]
    assert all(part["type"] in holds for part in parts), parts
    assert all(part["text"] for part in parts if part["type"] in ("text", "input_text")), "no empty text"
    assert all(part in parts for part in content if part["type"] in holds and part.get("text") != ""), "kept as parts"
    assert "<inner>" in json.dumps(parts)
    assert validate(view.messages, lane=lane) == []
    again = ensure_tool_turn_invariants(view.messages, lane=lane)
    assert (again.messages, again.repairs) == (view.messages, ())


@pytest.mark.parametrize("lane", list(_NESTED))
@pytest.mark.parametrize("content", [{"rows": ["<kept>"]}, 42])
def test_a_late_result_whose_content_is_no_list_and_no_string_is_delivered_as_its_json(
    lane: Lane, content: object
) -> None:
    """A late result's content that is neither text nor a list is delivered as its JSON, never dropped or spread."""
    view = ensure_tool_turn_invariants(_late(lane, content), lane=lane)
    parts = _delivered_parts(lane, view.messages)
    assert [part["type"] for part in parts] == [_NESTED[lane][1][0]] * 2
    assert parts[1]["text"] == json.dumps(content)
    assert validate(view.messages, lane=lane) == []
