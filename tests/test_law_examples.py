"""The worked examples E1 to E16 of the tool-turn law, in every lane where they apply."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from otel_toolturn import (
    INTERRUPTED_RESULT_TEXT,
    LANES,
    SECOND_RESULT_SEPARATOR,
    Lane,
    RepairForm,
    ToolTurnRepair,
    ensure_tool_turn_invariants,
    validate,
)
from otel_toolturn.lanes import adapter_for
from tests.transcripts import A, Event, L, R, Rx, S, U, build, c, mr, mu, sr, su, t, th

ANTHROPIC: Lane = "anthropic.messages"
CHAT: Lane = "openai.chat_completions"
RESPONSES: Lane = "openai.responses"
SAME = None
FOLD = f"a\n{SECOND_RESULT_SEPARATOR}\nb"

Repairs = tuple[tuple[RepairForm, tuple[str, ...]], ...]
E17_ANSWERED: list[Event] = [
    U("go"),
    A(c("c1"), c("c2", "g")),
    R("c1"),
    S("c2"),
    U("continue"),
    A(th("hm", "rs_hm"), t("ok")),
]


@dataclass(frozen=True)
class Example:
    name: str
    given: list[Event]
    expected: dict[Lane, tuple[list[Event] | None, Repairs]]


def _all(view: list[Event] | None, repairs: Repairs) -> dict[Lane, tuple[list[Event] | None, Repairs]]:
    return dict.fromkeys(LANES, (view, repairs))


EXAMPLES = [
    Example(
        "E1 trailing_text",
        [U("q"), A(t("a"), c("c1"), t("b")), R("c1")],
        {
            ANTHROPIC: ([U("q"), A(t("a"), t("b"), c("c1")), R("c1")], (("trailing_text", ("c1",)),)),
            CHAT: (SAME, ()),
            # the message after the call is the model's next item: its output came after it answered
            RESPONSES: (
                [U("q"), A(t("a"), c("c1")), S("c1"), A(t("b")), L("c1")],
                (("missing_result", ("c1",)), ("late_result_in_place", ("c1",))),
            ),
        },
    ),
    Example(
        "E2 text between calls",
        [U("q"), A(c("c1"), t("x"), c("c2", "g"), th("y")), R("c1"), R("c2")],
        {
            ANTHROPIC: (
                [U("q"), A(t("x"), th("y"), c("c1"), c("c2", "g")), R("c1"), R("c2")],
                (("trailing_text", ("c1", "c2")),),
            ),
            CHAT: (SAME, ()),
        },
    ),
    Example(
        "E3 duplicate_call",
        [U("q"), A(c("c1"), c("c1")), R("c1")],
        _all([U("q"), A(c("c1")), R("c1")], (("duplicate_call", ("c1",)),)),
    ),
    Example(
        "E4 late_result",
        [U("q"), A(c("c1"), c("c2", "g")), R("c1"), U("wait"), R("c2")],
        {
            ANTHROPIC: ([U("q"), A(c("c1"), c("c2", "g")), R("c1"), R("c2"), U("wait")], (("late_result", ("c2",)),)),
            CHAT: ([U("q"), A(c("c1"), c("c2", "g")), R("c1"), R("c2"), U("wait")], (("late_result", ("c2",)),)),
            RESPONSES: (SAME, ()),
        },
    ),
    Example(
        "E5 late behind an assistant message",
        [U("q"), A(c("c1")), A(t("aloud")), R("c1")],
        {
            ANTHROPIC: (
                [U("q"), A(c("c1")), S("c1"), A(t("aloud")), L("c1")],
                (("missing_result", ("c1",)), ("late_result_in_place", ("c1",))),
            ),
            CHAT: (
                [U("q"), A(c("c1")), S("c1"), A(t("aloud")), L("c1")],
                (("missing_result", ("c1",)), ("late_result_in_place", ("c1",))),
            ),
            RESPONSES: (
                [U("q"), A(c("c1")), S("c1"), A(t("aloud")), L("c1")],
                (("missing_result", ("c1",)), ("late_result_in_place", ("c1",))),
            ),
        },
    ),
    Example(
        "E6 missing_result",
        [U("go"), A(c("c1"), c("c2")), R("c1"), U("next")],
        {
            ANTHROPIC: ([U("go"), A(c("c1"), c("c2")), R("c1"), S("c2"), U("next")], (("missing_result", ("c2",)),)),
            CHAT: ([U("go"), A(c("c1"), c("c2")), R("c1"), S("c2"), U("next")], (("missing_result", ("c2",)),)),
            # after the outputs that follow the run: where the model first saw it, on every later request
            RESPONSES: ([U("go"), A(c("c1"), c("c2")), R("c1"), S("c2"), U("next")], (("missing_result", ("c2",)),)),
        },
    ),
    Example(
        "E7 missing at the end",
        [U("go"), A(c("c1"))],
        _all([U("go"), A(c("c1")), S("c1")], (("missing_result", ("c1",)),)),
    ),
    Example(
        "E8 duplicate_result",
        [U("q"), A(c("c1")), R("c1", "a"), R("c1", "b")],
        _all([U("q"), A(c("c1")), R("c1", FOLD)], (("duplicate_result", ("c1",)),)),
    ),
    Example(
        "E9 void close",
        [U("q"), A(c("c1")), Rx("c1"), U("..."), R("c1", "real")],
        {
            ANTHROPIC: (
                [U("q"), A(c("c1")), R("c1", "real"), U("...")],
                (("late_result", ("c1",)), ("duplicate_result", ("c1",))),
            ),
            CHAT: (
                [U("q"), A(c("c1")), R("c1", "real"), U("...")],
                (("late_result", ("c1",)), ("duplicate_result", ("c1",))),
            ),
            RESPONSES: ([U("q"), A(c("c1")), U("..."), R("c1", "real")], (("duplicate_result", ("c1",)),)),
        },
    ),
    Example("E10 close stands in", [U("q"), A(c("c1")), Rx("c1")], _all(SAME, ())),
    Example(
        "E11 orphan_result",
        [R("c9"), U("hi"), A(t("hello"))],
        _all([U("hi"), A(t("hello"))], (("orphan_result", ("c9",)),)),
    ),
    Example(
        "E12 result before its call",
        [U("q"), R("c1"), A(c("c1"))],
        _all([U("q"), A(c("c1")), S("c1")], (("missing_result", ("c1",)), ("orphan_result", ("c1",)))),
    ),
    Example(
        "E13 id reused",
        [U("q"), A(c("c0", "f")), U("more"), A(c("c0", "g")), R("c0", "ok")],
        {
            ANTHROPIC: (
                [U("q"), A(c("c0", "f")), S("c0"), U("more"), A(c("c0_2", "g")), R("c0_2", "ok")],
                (("missing_result", ("c0",)), ("reused_id", ("c0",))),
            ),
            RESPONSES: (
                [U("q"), A(c("c0", "f")), S("c0"), U("more"), A(c("c0_2", "g")), R("c0_2", "ok")],
                (("missing_result", ("c0",)), ("reused_id", ("c0",))),
            ),
            CHAT: (
                [U("q"), A(c("c0", "f")), S("c0"), U("more"), A(c("c0", "g")), R("c0", "ok")],
                (("missing_result", ("c0",)),),
            ),
        },
    ),
    Example(
        "E14 fold after the last use",
        [U("q"), A(c("c1")), R("c1", "x"), A(c("c1")), R("c1", "a"), R("c1", "b")],
        {
            ANTHROPIC: (
                [U("q"), A(c("c1")), R("c1", "x"), A(c("c1_2")), R("c1_2", FOLD)],
                (("reused_id", ("c1",)), ("duplicate_result", ("c1",))),
            ),
            RESPONSES: (
                [U("q"), A(c("c1")), R("c1", "x"), A(c("c1_2")), R("c1_2", FOLD)],
                (("reused_id", ("c1",)), ("duplicate_result", ("c1",))),
            ),
            CHAT: (
                [U("q"), A(c("c1")), R("c1", "x"), A(c("c1")), R("c1", FOLD)],
                (("duplicate_result", ("c1",)),),
            ),
        },
    ),
    Example(
        "E17 a result recorded after the model answered over its close",
        [U("go"), A(c("c1"), c("c2", "g")), R("c1"), U("continue"), A(th("hm", "rs_hm"), t("ok")), R("c2", "real")],
        {
            ANTHROPIC: (
                [*E17_ANSWERED, L("c2", "real", "g")],
                (("missing_result", ("c2",)), ("late_result_in_place", ("c2",))),
            ),
            CHAT: (
                [*E17_ANSWERED, L("c2", "real", "g")],
                (("missing_result", ("c2",)), ("late_result_in_place", ("c2",))),
            ),
            RESPONSES: (
                [*E17_ANSWERED, L("c2", "real", "g")],
                (("missing_result", ("c2",)), ("late_result_in_place", ("c2",))),
            ),
        },
    ),
    Example(
        "E18 a second result recorded after the model answered",
        [U("go"), A(c("c1")), R("c1", "a"), A(t("ok")), U("more"), R("c1", "b")],
        _all(
            [U("go"), A(c("c1")), R("c1", "a"), A(t("ok")), U("more"), L("c1", "b", second=True)],
            (("duplicate_result_in_place", ("c1",)),),
        ),
    ),
    Example(
        "E19 an interrupted close recorded after the model answered",
        [U("go"), A(c("c1")), U("next"), A(t("ok")), Rx("c1")],
        {
            ANTHROPIC: (
                [U("go"), A(c("c1")), S("c1"), U("next"), A(t("ok"))],
                (("missing_result", ("c1",)), ("late_result_in_place", ("c1",))),
            ),
            CHAT: (
                [U("go"), A(c("c1")), S("c1"), U("next"), A(t("ok"))],
                (("missing_result", ("c1",)), ("late_result_in_place", ("c1",))),
            ),
            RESPONSES: (
                [U("go"), A(c("c1")), S("c1"), U("next"), A(t("ok"))],
                (("missing_result", ("c1",)), ("late_result_in_place", ("c1",))),
            ),
        },
    ),
]


def _cases() -> list[tuple[Example, Lane]]:
    return [(e, lane) for e in EXAMPLES for lane in LANES if lane in e.expected]


@pytest.mark.parametrize(("example", "lane"), _cases(), ids=lambda v: v.name if isinstance(v, Example) else v)
def test_worked_example(example: Example, lane: Lane) -> None:
    """The law turns each worked example into its expected view and reports exactly its repairs."""
    given = build(lane, example.given)
    expected_events, expected_repairs = example.expected[lane]
    view = ensure_tool_turn_invariants(given, lane=lane)
    assert [(r.form, r.tool_call_ids) for r in view.repairs] == list(expected_repairs)
    if expected_events is None:
        assert view.messages is given
    else:
        assert view.messages == build(lane, expected_events)
    assert validate(view.messages, lane=lane) == []


@pytest.mark.parametrize("lane", LANES)
def test_e15_before_run_marks_only_missing_results_of_prior_messages(lane: Lane) -> None:
    """E15: a missing result on an inherited message is marked before_run; the same view otherwise."""
    given = build(lane, [A(c("c1")), U("resume")])
    prior = [given[-2]]  # the call's message (Bedrock's list opens with the user's text ahead of it)
    marked = ensure_tool_turn_invariants(given, lane=lane, prior_messages=prior)
    unmarked = ensure_tool_turn_invariants(given, lane=lane)
    assert marked.repairs == (ToolTurnRepair(form="missing_result", tool_call_ids=("c1",), before_run=True),)
    assert unmarked.repairs == (ToolTurnRepair(form="missing_result", tool_call_ids=("c1",)),)
    assert marked.messages == unmarked.messages == build(lane, [A(c("c1")), S("c1"), U("resume")])


@pytest.mark.parametrize("lane", LANES)
def test_e15_membership_is_by_identity_not_equality(lane: Lane) -> None:
    """An equal copy of the inherited message does not mark it: membership is by object."""
    given = build(lane, [A(c("c1")), U("resume")])
    copy = build(lane, [A(c("c1"))])
    view = ensure_tool_turn_invariants(given, lane=lane, prior_messages=copy)
    assert not view.repairs[0].before_run


@pytest.mark.parametrize("lane", LANES)
def test_e16_nothing_to_do_returns_the_same_list(lane: Lane) -> None:
    """E16: a valid transcript comes back as the very same list object with no repairs."""
    given = build(lane, [U("q"), A(t("a"), c("c1"), c("c2")), R("c2"), R("c1"), A(t("done")), U("thanks")])
    view = ensure_tool_turn_invariants(given, lane=lane)
    assert view.messages is given
    assert view.repairs == ()
    assert not view.lossy


@pytest.mark.parametrize("lane", LANES)
def test_untouched_items_keep_their_identity_and_moved_results_their_object(lane: Lane) -> None:
    """Items the law does not touch are the same objects; a moved result keeps its object."""
    given = build(lane, [U("q"), A(c("c1"), c("c2")), R("c1"), U("wait"), R("c2"), A(c("c3"))])
    view = ensure_tool_turn_invariants(given, lane=lane)
    assert view.repairs
    out = list(view.messages)
    for item in given:
        if lane == "gemini.generate_content" and item in (given[2], given[4]):
            part = item["parts"][0]  # type: ignore[index]
            assert any(p is part for o in out for p in o["parts"]), part  # type: ignore[index]
            continue  # Gemini needs a turn's results in one content: the parts keep their objects
        if lane == "bedrock.converse" and item is given[2]:
            blocks = item["content"]  # type: ignore[index]
            assert all(any(b is o for m in out for o in m["content"]) for b in blocks)  # type: ignore[index]
            continue  # Bedrock: the results lead one user message, the user's text after them; the blocks kept
        assert any(item is o for o in out), item
    if lane == CHAT:
        assert out.index(given[-2]) < out.index(given[-3]), "the late result moved up"


@pytest.mark.parametrize("lane", LANES)
def test_the_input_is_never_mutated(lane: Lane) -> None:
    """The law leaves the caller's list and every item in it exactly as they were."""
    given = build(lane, [R("c9"), U("q"), A(t("a"), c("c1"), c("c1"), t("b")), R("c1", "a"), U("x"), R("c1", "b")])
    snapshot = repr(given)
    ensure_tool_turn_invariants(given, lane=lane)
    assert repr(given) == snapshot


def test_fold_keeps_is_error_and_block_contents() -> None:
    """Folding block contents concatenates them with a separator block and keeps an is_error flag."""
    given: list[object] = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "a"}]}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "b", "is_error": True}]},
    ]
    view = ensure_tool_turn_invariants(given, lane="anthropic.messages")
    assert view.messages[1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "c1",
                "is_error": True,
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "text", "text": SECOND_RESULT_SEPARATOR},
                    {"type": "text", "text": "b"},
                ],
            }
        ],
    }


@pytest.mark.parametrize("lane", LANES)
def test_a_result_recorded_later_for_a_clean_turn_reaches_it(lane: Lane) -> None:
    """A turn answered once per call right after it needs nothing; a result recorded for it later still reaches it."""
    given = build(lane, [U("q"), A(c("c1"), c("c2")), R("c1"), R("c2"), A(t("done")), R("c2")])
    view = ensure_tool_turn_invariants(given, lane=lane)
    assert [(r.form, r.tool_call_ids) for r in view.repairs] == [("duplicate_result_in_place", ("c2",))]
    assert validate(view.messages, lane=lane) == []
    assert all(kept is item for kept, item in zip(view.messages, given[:-1], strict=False))


def test_anthropic_results_then_the_users_words_in_one_message_are_read_as_one_clean_turn() -> None:
    """The user's text after a turn's results in their message: one clean unit, its own view; text first: not clean."""
    given = build(ANTHROPIC, [U("q"), A(c("c1"), c("c2")), R("c1"), R("c2"), U("next"), A(t("ok"))], merge_user=True)
    adapter = adapter_for(ANTHROPIC)
    assert adapter.read(given).kinds == ["other", "clean", "reply"]
    assert ensure_tool_turn_invariants(given, lane=ANTHROPIC).messages is given
    text_first = build(ANTHROPIC, [U("q"), A(c("c1")), U("next"), R("c1")], merge_user=True)
    assert adapter.read(text_first).kinds == ["other", "turn", "part", "result"]
    again = build(ANTHROPIC, [U("q"), A(c("c1")), R("c1"), U("next"), R("c1")], merge_user=True)
    assert adapter.read(again).kinds == ["other", "turn", "result", "part", "result"]  # a second result: read in full


def test_a_clean_turn_whose_id_an_earlier_turn_took_gets_a_derived_id() -> None:
    """Anthropic: an id derived for an earlier turn is taken; a later turn otherwise clean that uses it is renamed."""
    given = build(
        ANTHROPIC,
        [
            U("q"),
            A(c("functions.a:0")),
            R("functions.a:0"),
            A(t("ok")),
            U("more"),
            A(c("functions_a_0")),
            R("functions_a_0"),
        ],
    )
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert [(r.form, r.tool_call_ids) for r in view.repairs] == [
        ("invalid_id", ("functions.a:0",)),
        ("reused_id", ("functions_a_0",)),
    ]
    assert validate(view.messages, lane=ANTHROPIC) == []


def test_responses_outputs_of_a_closed_run_recorded_late_and_twice_come_back_a_fixed_point() -> None:
    """Responses: a run closed earlier, its real outputs recorded late: a second pass of the law changes nothing.

    The smallest transcript the fuzz (``bench.fuzz``, near-valid: an orphan and a duplicated result) found
    not idempotent under a one-pass reading of runs and their outputs.
    """
    given: list[object] = [
        {"role": "user", "content": [{"type": "text", "text": "<u1>"}]},
        {"type": "function_call", "call_id": "c0", "name": "t0", "arguments": "{}", "id": "fc_c0"},
        {"type": "function_call", "call_id": "c1", "name": "t1", "arguments": "{}", "id": "fc_c1"},
        {"type": "function_call_output", "call_id": "c0", "output": INTERRUPTED_RESULT_TEXT},
        {"type": "function_call_output", "call_id": "c1", "output": "<r7>", "id": "fc_0"},
        {"role": "user", "content": "<u8>"},
        {"type": "function_call_output", "call_id": "c0", "output": "<r15>"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "<a9>"}]},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "<r14>"}]},
    ]
    once = ensure_tool_turn_invariants(given, lane="openai.responses")
    twice = ensure_tool_turn_invariants(list(once.messages), lane="openai.responses")
    assert validate(once.messages, lane="openai.responses") == []
    assert list(twice.messages) == list(once.messages)
    assert twice.repairs == ()


# --- Anthropic server tools and MCP blocks -------------------------------------------------------------

SERVER_CLOSE = {"type": "web_search_tool_result_error", "error_code": "unavailable"}


def _server(events: list[Event]) -> tuple[list[object], tuple[ToolTurnRepair, ...], list[object]]:
    """The Anthropic wire list of ``events``, and its view's repairs and messages (which validate)."""
    given = build(ANTHROPIC, events)
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert validate(view.messages, lane=ANTHROPIC) == []
    return given, view.repairs, list(view.messages)


def test_an_open_server_tool_use_before_the_user_speaks_is_closed_in_its_own_turn() -> None:
    """A web search with no result, then a user message: its error result is written right after the use."""
    given, repairs, out = _server([U("q"), A(t("let me look"), su("s1"), t("a")), U("more")])
    assert repairs == (ToolTurnRepair(form="missing_result", tool_call_ids=("s1",), call_kind="server_tool"),)
    assert not any(r.lossy for r in repairs)
    assert out[1] == {
        "role": "assistant",
        "content": [
            *given[1]["content"][:2],  # type: ignore[index]
            {"type": "web_search_tool_result", "tool_use_id": "s1", "content": SERVER_CLOSE},
            given[1]["content"][2],  # type: ignore[index]
        ],
    }
    assert out[0] is given[0]
    assert out[2] is given[2]


def test_an_open_mcp_tool_use_is_closed_with_an_interrupted_error_result() -> None:
    """An MCP tool use with no result before the user speaks: ``is_error`` with the interrupted text, kind ``mcp``."""
    _, repairs, out = _server([U("q"), A(mu("m1")), U("more")])
    assert repairs == (ToolTurnRepair(form="missing_result", tool_call_ids=("m1",), call_kind="mcp"),)
    assert out[1]["content"][1] == {  # type: ignore[index]
        "type": "mcp_tool_result",
        "tool_use_id": "m1",
        "is_error": True,
        "content": INTERRUPTED_RESULT_TEXT,
    }


@pytest.mark.parametrize(
    ("name", "result"),
    [
        ("code_execution", "code_execution_tool_result"),
        ("bash_code_execution", "bash_code_execution_tool_result"),
        ("text_editor_code_execution", "text_editor_code_execution_tool_result"),
        ("tool_search_tool_regex", "tool_search_tool_result"),
        ("tool_search_tool_bm25", "tool_search_tool_result"),
        ("web_fetch", "web_fetch_tool_result"),
    ],
)
def test_each_server_tool_is_closed_by_its_own_error_result(name: str, result: str) -> None:
    """Every server tool the SDK lists gets its own result block type, with the ``unavailable`` error shape."""
    _, _, out = _server([U("q"), A(su("s1", name)), U("more")])
    close = {"type": result, "tool_use_id": "s1", "content": {"type": f"{result}_error", "error_code": "unavailable"}}
    assert out[1]["content"][1] == close  # type: ignore[index]


def test_an_open_server_tool_use_beside_client_calls_is_closed_ahead_of_them() -> None:
    """A turn with client calls is followed by their results, so an open server use there is closed in the message."""
    given, repairs, out = _server([U("q"), A(su("s1"), c("c1")), R("c1")])
    assert [(r.form, r.tool_call_ids, r.call_kind) for r in repairs] == [("missing_result", ("s1",), "server_tool")]
    assert [block["type"] for block in out[1]["content"]] == ["server_tool_use", "web_search_tool_result", "tool_use"]  # type: ignore[index]
    assert out[2] is given[2]


def test_a_pause_turn_response_sent_back_is_untouched() -> None:
    """The run that ends the list may hold an open use: a ``pause_turn`` response sent back to be continued."""
    given = build(ANTHROPIC, [U("q"), A(t("searching"), su("s1"))])
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert view.messages is given
    assert view.repairs == ()


def test_a_pause_turn_continuation_answers_the_use_in_the_merged_turn() -> None:
    """The paused message, then the continuation holding the result as another assistant message: one valid turn."""
    given = build(ANTHROPIC, [U("q"), A(su("s1")), A(sr("s1"), t("found it")), U("thanks")])
    assert validate(given, lane=ANTHROPIC) == []
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert view.messages is given
    assert view.repairs == ()


def test_an_orphan_server_result_is_left_out_and_reported_lossy() -> None:
    """A result block whose use was trimmed away is left out; a message it leaves empty is left out too.

    Reported as the law orders unit repairs: a message left out first, then what was restored inside one.
    """
    given, repairs, out = _server([U("q"), A(sr("s9"), t("a")), U("more"), A(mr("m9")), U("again")])
    assert [(r.form, r.tool_call_ids, r.call_kind, r.lossy) for r in repairs] == [
        ("orphan_result", ("m9",), "mcp", True),
        ("orphan_result", ("s9",), "server_tool", True),
    ]
    assert out == [given[0], {"role": "assistant", "content": [{"type": "text", "text": "a"}]}, given[2], given[4]]


def test_a_server_result_ahead_of_its_use_is_an_orphan_and_the_use_open() -> None:
    """Order counts: a result before its use answers nothing (left out), and the use after it is closed."""
    _, repairs, out = _server([U("q"), A(sr("s1"), su("s1")), U("more")])
    assert [(r.form, r.call_kind) for r in repairs] == [
        ("orphan_result", "server_tool"),
        ("missing_result", "server_tool"),
    ]
    assert [block["type"] for block in out[1]["content"]] == ["server_tool_use", "web_search_tool_result"]  # type: ignore[index]


def test_a_server_result_after_a_client_call_turn_answers_nothing() -> None:
    """A message with client calls ends the run (their results follow it): a result in the next message is an orphan."""
    _, repairs, _ = _server([U("q"), A(su("s1"), c("c1")), A(sr("s1"), t("a")), U("more")])
    forms = {(r.form, r.call_kind) for r in repairs}
    assert {("missing_result", "server_tool"), ("orphan_result", "server_tool")} <= forms


def test_a_second_result_for_one_server_tool_use_stays_as_sent() -> None:
    """A second result block for an answered use answers a use too: left as it is (the README's Limitations)."""
    given = build(ANTHROPIC, [U("q"), A(su("s1"), sr("s1", "<a>"), sr("s1", "<b>")), U("more")])
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert view.messages is given


def test_every_server_and_mcp_kind_answered_is_the_very_same_list() -> None:
    """Every server tool and an MCP tool, each answered in its turn, beside client calls: the same list, no repair."""
    names = ["web_search", "web_fetch", "code_execution", "bash_code_execution", "text_editor_code_execution"]
    names += ["tool_search_tool_regex", "tool_search_tool_bm25"]
    blocks = [block for n, name in enumerate(names) for block in (su(f"s{n}", name), sr(f"s{n}", name=name))]
    events: list[Event] = [U("q"), A(t("a"), *blocks, mu("m1"), mr("m1"), c("c1")), R("c1"), A(t("done")), U("ok")]
    given = build(ANTHROPIC, events)
    assert validate(given, lane=ANTHROPIC) == []
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert view.messages is given
    assert view.repairs == ()


def test_validate_reports_an_open_server_tool_use_in_the_apis_words() -> None:
    """The API's words for a server tool use left without its result (AnswerDotAI/lisette#108, 2026-02).

    ``messages.33: `web_search` tool use with id `srvtoolu_01…` was found without a corresponding
    `web_search_tool_result` block``; the MCP wording is modelled on it (no public report found).
    """
    given = build(ANTHROPIC, [U("q"), A(su("srvtoolu_01"), t("a")), U("more"), A(mu("mcptoolu_01")), U("again")])
    assert [v.message for v in validate(given, lane=ANTHROPIC)] == [
        (
            "messages.1: `web_search` tool use with id `srvtoolu_01` was found without a corresponding "
            "`web_search_tool_result` block"
        ),
        "messages.3: `lookup` tool use with id `mcptoolu_01` was found without a corresponding `mcp_tool_result` block",
    ]


def test_validate_reports_an_orphan_server_result_in_the_apis_words() -> None:
    """The API's words for a server result with no use before it (anthropics/claude-code#80439, 2026-07).

    ``messages.25.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: srvtoolu_….
    Each `advisor_tool_result` block must have a corresponding `server_tool_use` block before it.``
    """
    given = build(ANTHROPIC, [U("q"), A(sr("srvtoolu_9", name="advisor"), t("a"))])
    assert [v.message for v in validate(given, lane=ANTHROPIC)] == [
        (
            "messages.1.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: srvtoolu_9. "
            "Each `advisor_tool_result` block must have a corresponding `server_tool_use` block before it."
        )
    ]


def test_the_sdks_own_server_tool_blocks_are_read_and_closed_without_mutation() -> None:
    """The SDK's typed ``ServerToolUseBlock`` in a stored reply is closed like a dict, the reply itself untouched."""
    from anthropic.types import ServerToolUseBlock, TextBlock  # noqa: PLC0415 - only this test needs the SDK

    use = ServerToolUseBlock(type="server_tool_use", id="srvtoolu_1", name="web_search", input={"query": "q"})
    reply = [use, TextBlock(type="text", text="searching", citations=None)]
    given: list[object] = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "more"},
    ]
    view = ensure_tool_turn_invariants(given, lane=ANTHROPIC)
    assert validate(view.messages, lane=ANTHROPIC) == []
    assert [(r.form, r.call_kind) for r in view.repairs] == [("missing_result", "server_tool")]
    written = view.messages[1]["content"]  # type: ignore[index]
    assert written[0] is use
    assert written[1]["content"] == SERVER_CLOSE
    assert given[1]["content"] is reply  # type: ignore[index]
    assert len(reply) == 2
