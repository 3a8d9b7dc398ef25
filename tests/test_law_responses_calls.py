"""The Responses calls the agent runs (local shell, shell, apply patch, computer) under the law, kind by kind."""

from __future__ import annotations

import json
from typing import Any, Final, get_args

import pytest

from otel_toolturn import (
    CALL_KINDS,
    INTERRUPTED_RESULT_TEXT,
    SECOND_RESULT_SEPARATOR,
    CallKind,
    Lane,
    ToolTurnView,
    ensure_tool_turn_invariants,
    validate,
)
from otel_toolturn.lanes import openai_responses
from tests.transcripts import A, Event, R, Rx, S, U, build, c, responses_output, t, th

RESPONSES: Lane = "openai.responses"
KINDS: Final[tuple[CallKind, ...]] = ("function", "custom", "local_shell", "shell", "apply_patch", "computer")
"""Every kind of call the Responses client answers."""
CLOSED: Final = tuple(kind for kind in KINDS if kind != "computer")
"""The kinds that have an honest interrupted close."""


def _view(events: list[Event]) -> tuple[list[Any], ToolTurnView]:
    view = ensure_tool_turn_invariants(build(RESPONSES, events), lane=RESPONSES)
    assert validate(view.messages, lane=RESPONSES) == [], "the view validates"
    again = ensure_tool_turn_invariants(view.messages, lane=RESPONSES)
    assert again.repairs == (), "a second pass restores nothing"
    assert again.messages is view.messages, "and returns the same object"
    return list(view.messages), view


def test_the_spelling_table_names_exactly_the_kinds_the_lane_answers() -> None:
    """The lane's one table of spellings covers the Responses kinds of ``CallKind``, no Anthropic kind and no other."""
    assert set(openai_responses._SPELLING) == set(KINDS)
    assert set(KINDS) <= set(get_args(CallKind)) == set(CALL_KINDS)
    assert set(CALL_KINDS) - set(KINDS) == {"server_tool", "mcp"}
    assert len(set(openai_responses.CALL_TYPES)) == len(set(openai_responses.OUTPUT_TYPES)) == len(KINDS)


@pytest.mark.parametrize("kind", CLOSED)
def test_an_interrupted_call_is_closed_with_its_own_kind_of_output(kind: CallKind) -> None:
    """A call of each kind with no output is closed by an output of its kind, reported with its kind."""
    items, view = _view([U("go"), A(th("plan"), c("c1", kind=kind)), U("next")])
    assert items == build(RESPONSES, [U("go"), A(th("plan"), c("c1", kind=kind)), S("c1"), U("next")])
    assert [(r.form, r.tool_call_ids, r.call_kind, r.lossy) for r in view.repairs] == [
        ("missing_result", ("c1",), kind, False)
    ]


def test_each_close_keeps_its_kinds_schema() -> None:
    """Shell: one chunk, exit 130, the text as stderr; apply patch: failed; local shell: the text under ``call_id``."""
    events: list[Event] = [U("go"), A(c("s", kind="shell"), c("p", kind="apply_patch"), c("l", kind="local_shell"))]
    items, _ = _view(events)
    shell, patch, local = items[-3:]
    assert shell == {
        "type": "shell_call_output",
        "call_id": "s",
        "output": [{"stdout": "", "stderr": INTERRUPTED_RESULT_TEXT, "outcome": {"type": "exit", "exit_code": 130}}],
    }
    assert patch == {
        "type": "apply_patch_call_output",
        "call_id": "p",
        "status": "failed",
        "output": INTERRUPTED_RESULT_TEXT,
    }
    assert local == {"type": "local_shell_call_output", "call_id": "l", "output": INTERRUPTED_RESULT_TEXT}


def test_a_computer_call_without_output_is_left_out_with_its_reasoning() -> None:
    """No screenshot can be made up: the computer call and the reasoning ahead of it are left out, lossy."""
    items, view = _view([U("go"), A(th("look"), c("k1", kind="computer")), U("next")])
    assert items == build(RESPONSES, [U("go"), U("next")])
    (repair,) = view.repairs
    assert (repair.form, repair.tool_call_ids, repair.call_kind, repair.lossy) == (
        "unanswerable_call",
        ("k1",),
        "computer",
        True,
    )


def test_a_computer_call_beside_an_answered_call_leaves_the_other_call_and_its_reasoning_in_place() -> None:
    """Only the unanswerable call and the reasoning right ahead of it go; the run's other call keeps its output."""
    items, view = _view([U("go"), A(th("a"), c("f1"), th("b"), c("k1", kind="computer")), R("f1", "done")])
    assert items == build(RESPONSES, [U("go"), A(th("a"), c("f1")), R("f1", "done")])
    assert [r.form for r in view.repairs] == ["unanswerable_call"]


def test_every_kind_answered_is_the_very_same_list_with_no_repair() -> None:
    """A transcript with a call of every kind, each answered by its own output, comes back as the same object."""
    calls = [c(f"c{n}", f"tool{n}", kind=kind) for n, kind in enumerate(KINDS)]
    events: list[Event] = [U("go"), A(th("plan"), *calls), *(R(f"c{n}", f"<out{n}>") for n in range(len(KINDS)))]
    given = build(RESPONSES, [*events, A(t("done")), U("thanks")])
    assert validate(given, lane=RESPONSES) == []
    view = ensure_tool_turn_invariants(given, lane=RESPONSES)
    assert view.messages is given
    assert view.repairs == ()


@pytest.mark.parametrize("kind", KINDS)
def test_a_late_output_is_delivered_in_place_as_a_user_message(kind: CallKind) -> None:
    """An output recorded after the model answered stays where it stands, as a user message holding all of it."""
    items, view = _view([U("go"), A(c("c1", "tool", kind=kind)), U("next"), A(t("ok")), R("c1", "<late>", True)])
    delivered = items[-1]
    assert isinstance(delivered, dict)
    assert (delivered["type"], delivered["role"]) == ("message", "user")
    assert "<late>" in json.dumps(delivered)
    forms = [(r.form, r.call_kind) for r in view.repairs]
    assert (("unanswerable_call" if kind == "computer" else "missing_result"), kind) in forms
    assert ("late_result_in_place", kind) in forms


def test_a_late_screenshot_is_an_input_image_and_shell_chunks_are_text() -> None:
    """A computer output is delivered as an ``input_image`` part; a shell output's chunks as text of their JSON."""
    computer, _ = _view([U("go"), A(c("k1", kind="computer")), A(t("ok")), R("k1", "<shot>")])
    parts = computer[-1]["content"]
    assert parts[1] == {"type": "input_image", "detail": "auto", "image_url": "https://shots.example/<shot>.png"}
    shell, _ = _view([U("go"), A(c("s1", kind="shell")), A(t("ok")), R("s1", "<out>")])
    parts = shell[-1]["content"]
    assert all(part["type"] == "input_text" for part in parts)
    assert json.loads(parts[1]["text"])["stdout"] == "<out>"


def test_two_shell_outputs_fold_into_one_with_a_separator_chunk() -> None:
    """Shell: the chunks of both outputs in order, a chunk carrying the separator between, its outcome copied."""
    items, view = _view([U("go"), A(c("s1", kind="shell")), R("s1", "<a>"), R("s1", "<b>", True)])
    (folded,) = items[2:]
    assert folded["output"] == [
        {"stdout": "<a>", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
        {"stdout": "", "stderr": SECOND_RESULT_SEPARATOR, "outcome": {"type": "exit", "exit_code": 0}},
        {"stdout": "<b>", "stderr": "", "outcome": {"type": "exit", "exit_code": 1}},
    ]
    assert [(r.form, r.call_kind, r.lossy) for r in view.repairs] == [("duplicate_result", "shell", False)]


def test_two_apply_patch_outputs_fold_their_text_and_fail_if_one_failed() -> None:
    """Apply patch: the texts joined by the separator, ``failed`` when either was."""
    items, _ = _view([U("go"), A(c("p1", kind="apply_patch")), R("p1", "<a>"), R("p1", "<b>", True)])
    assert items[2] == {
        "type": "apply_patch_call_output",
        "call_id": "p1",
        "status": "failed",
        "output": f"<a>\n{SECOND_RESULT_SEPARATOR}\n<b>",
    }


def test_two_local_shell_outputs_fold_their_text() -> None:
    """Local shell: the output strings joined by the separator on a line of its own."""
    items, _ = _view([U("go"), A(c("l1", kind="local_shell")), R("l1", "<a>"), R("l1", "<b>")])
    assert items[2] == responses_output("local_shell", "l1", f"<a>\n{SECOND_RESULT_SEPARATOR}\n<b>")


def test_two_screenshots_keep_the_first_as_the_output_and_deliver_the_second_after_it() -> None:
    """Computer: one output holds one screenshot, so the second is delivered right after it, named, as an image."""
    items, view = _view([U("go"), A(c("k1", kind="computer")), R("k1", "<a>"), R("k1", "<b>"), U("next")])
    assert items[2] == responses_output("computer", "k1", "<a>")
    assert items[3] == {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": f"{SECOND_RESULT_SEPARATOR} (computer call k1)"},
            {"type": "input_image", "detail": "auto", "image_url": "https://shots.example/<b>.png"},
        ],
    }
    assert items[4:] == build(RESPONSES, [U("next")])
    assert [(r.form, r.call_kind, r.lossy) for r in view.repairs] == [("duplicate_result", "computer", False)]


@pytest.mark.parametrize("kind", CLOSED)
def test_a_recorded_interrupted_close_of_each_kind_is_void_beside_a_real_output(kind: CallKind) -> None:
    """Another framework's close beside the real output carries no outcome: it is left out, nothing folded."""
    items, view = _view([U("go"), A(c("c1", kind=kind)), Rx("c1"), R("c1", "<real>")])
    assert items == build(RESPONSES, [U("go"), A(c("c1", kind=kind)), R("c1", "<real>")])
    assert [r.form for r in view.repairs] == ["duplicate_result"]


def test_a_reused_id_of_another_kind_gets_a_derived_id_with_its_output() -> None:
    """A later shell call reusing a function call's id is renamed, and its output with it."""
    items, view = _view([U("go"), A(c("c1")), R("c1"), U("more"), A(c("c1", kind="shell")), R("c1", "<sh>")])
    assert items[-2]["call_id"] == items[-1]["call_id"] == "c1_2"
    assert [(r.form, r.call_kind) for r in view.repairs] == [("reused_id", "shell")]


def test_hosted_calls_stay_replies_and_agent_run_calls_are_calls() -> None:
    """Hosted calls the server answers are model replies; the four calls the agent runs are calls, not replies."""
    for hosted in ("web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call"):
        assert openai_responses._replied({"type": hosted}, hosted)
        assert openai_responses.model_made({"type": hosted})
    for call in ("local_shell_call", "shell_call", "apply_patch_call", "computer_call", "custom_tool_call"):
        assert not openai_responses._replied({"type": call}, call)
        assert openai_responses.model_made({"type": call})
    hosted_only = [{"role": "user", "content": "go"}, {"type": "web_search_call", "id": "ws_1", "status": "completed"}]
    assert ensure_tool_turn_invariants(hosted_only, lane=RESPONSES).messages is hosted_only


@pytest.mark.parametrize(
    ("kind", "missing", "orphan"),
    [
        (
            "local_shell",
            "No tool output found for local shell call c1.",
            "No tool call found for local shell call output with call_id c1.",
        ),
        (
            "shell",
            "No tool output found for shell call c1.",
            "No tool call found for shell call output with call_id c1.",
        ),
        (
            "apply_patch",
            "No tool output found for apply patch call c1.",
            "No tool call found for apply patch call output with call_id c1.",
        ),
        (
            "computer",
            "No tool output found for computer call c1.",
            "No tool call found for computer call output with call_id c1.",
        ),
        (
            "custom",
            "No tool output found for custom tool call c1.",
            "No tool call found for custom tool call output with call_id c1.",
        ),
    ],
)
def test_validate_names_each_kind_in_the_providers_words(kind: CallKind, missing: str, orphan: str) -> None:
    """An unanswered call and an output without its call, in the API's words for the kind.

    Public texts: ``No tool output found for local shell call call_MEmrSaOboO5WG3MXGazSubb7.``
    (openai/openai-agents-python#1855); ``No tool output found for shell call call_XXXXX``
    (openai/openai-agents-python#2664, and the OpenAI community thread "Hosted `shell` Continuations
    Require Missing `shell_call_output`"); ``No tool output found for custom tool call call_nNNw…``
    (diegosouzapw/OmniRoute#8946). No public report quotes the apply-patch or computer texts, nor any
    "No tool call found for … output" text but the function call's (``No tool call found for function
    call output with call_id …``, binaricat/Netcatty#684): those follow the function-call wording
    with the kind's name, as the public ones do.
    """
    unanswered = build(RESPONSES, [U("go"), A(c("c1", kind=kind))])
    assert [v.message for v in validate(unanswered, lane=RESPONSES)] == [missing]
    output = responses_output(kind, "c1", "<x>")
    assert [v.message for v in validate([{"role": "user", "content": "go"}, output], lane=RESPONSES)] == [orphan]


def test_reasoning_that_only_a_refused_replay_separates_from_a_computer_call_goes_with_it() -> None:
    """Reasoning, its replay (left out), then a computer call nothing answered: the reasoning goes with the call."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    call = {"type": "computer_call", "call_id": "k1", "action": {"type": "wait"}, "pending_safety_checks": []}
    given = [{"role": "user", "content": "go"}, reasoning, dict(reasoning), call, {"role": "user", "content": "next"}]
    view = ensure_tool_turn_invariants(given, lane=RESPONSES)
    assert view.messages == [given[0], given[-1]]
    assert validate(view.messages, lane=RESPONSES) == []
    assert [(r.form, r.tool_call_ids) for r in view.repairs] == [
        ("unanswerable_call", ("k1",)),
        ("duplicate_item", ("rs_1",)),
    ]
    answered = [*given[:4], responses_output("computer", "k1", "<shot>")]
    kept = ensure_tool_turn_invariants(answered, lane=RESPONSES)
    assert kept.messages == [answered[0], reasoning, call, answered[-1]], "answered, the reasoning stays ahead of it"
