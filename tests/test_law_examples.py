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
from tests.transcripts import A, Event, L, R, Rx, S, U, build, c, t, th

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
    prior = [given[0]]
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
