"""Ending a turn from a tool: value, marks, decide, apply, end, the replayable step."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from otel_toolturn import Lane, ensure_tool_turn_invariants, validate
from otel_toolturn.handoff import (
    DeferredHandBack,
    EndTurnStep,
    HandoffOutcome,
    HandoffScopes,
    RunnerState,
    TurnEnded,
    TurnMarks,
    TurnScope,
    close_handoff,
    drop_handoff_call,
    handoff_scope_key,
    push_scoped,
    record_turn_mark,
    run_end_turn_step,
)
from otel_toolturn.handoff._end_turn import (
    CONTINUE,
    EndTurn,
    ToolSuccess,
    TurnMark,
    answer_value_of,
    apply_end_turn_decision,
    decide_end_turn,
    end_thread_with_answer,
)
from otel_toolturn.handoff._texts import handoff_resume_text
from otel_toolturn.handoff._wire import HANDOFF_LANES
from tests.handoff.threads import ALONE, EXPLORER, contents, persona, round_with_sibling, snapshot
from tests.transcripts import A, R, U, build, c, t

ANSWER = {"role": "assistant", "content": "3 events"}


class Reply(BaseModel):
    text: str


REPLY = Reply.model_validate


def mark(**overrides: object) -> TurnMark:
    fields: dict[str, object] = {
        "tool_name": "tool",
        "is_handoff": False,
        "end_turn": True,
        "scope": "llm",
        "message": None,
        "value": "answer",
        "deferred_hand_back": None,
    }
    fields.update(overrides)
    return TurnMark(**fields)  # type: ignore[arg-type]


# --- the answer value ----------------------------------------------------------------------------


def test_answer_value_of_nothing_is_none() -> None:
    """A tool that returned nothing answers ``None``."""
    assert answer_value_of(None) is None


def test_answer_value_of_a_success_is_its_value() -> None:
    """A success wrapper answers its value, ``None`` when empty."""
    value = {"n": 3}
    assert answer_value_of(ToolSuccess(value=value)) is value
    assert answer_value_of(ToolSuccess()) is None


def test_answer_value_of_anything_else_passes_through() -> None:
    """Any other result, a failure included, is the value as it is."""
    failure = RuntimeError("boom")
    assert answer_value_of(failure) is failure
    assert answer_value_of("text") == "text"


def test_an_empty_success_never_ends_the_turn() -> None:
    """Where a loop shows the model a "ran successfully" placeholder, the value is ``None``: no answer."""
    state = record_turn_mark(
        RunnerState(),
        round_index=0,
        call_index=0,
        tool_name="tool",
        is_handoff=False,
        marks=TurnMarks(end_turn=True),
        raw_tool_result=ToolSuccess(),
        deferred_hand_back=None,
    )
    decided = decide_end_turn(state.turn_marks[0], ran_call_indexes=[0], response_format=None, pending_attachments=0)
    assert decided.decision == CONTINUE
    assert decided.warnings == ("tool: end-turn ignored; the value is not a string",)


# --- recording a mark --------------------------------------------------------------------------


def _record(state: RunnerState, marks: TurnMarks, deferred: DeferredHandBack | None = None) -> RunnerState:
    return record_turn_mark(
        state,
        round_index=2,
        call_index=1,
        tool_name="explorer",
        is_handoff=True,
        marks=marks,
        raw_tool_result=ToolSuccess(value="the value"),
        deferred_hand_back=deferred,
    )


def test_marks_that_set_nothing_are_not_recorded() -> None:
    """Nothing set ⇒ nothing recorded (the very same state)."""
    state = RunnerState()
    assert _record(state, TurnMarks()) is state


def test_value_is_recorded_only_with_end_turn() -> None:
    """A hand-back alone is recorded without the value; with end-turn the value is kept."""
    start = RunnerState()
    hand_back = _record(start, TurnMarks(message="Custom."))
    assert hand_back.turn_marks[2][1] == TurnMark(
        tool_name="explorer", is_handoff=True, end_turn=False, scope="llm", message="Custom.", value=None
    )
    ending = _record(start, TurnMarks(end_turn=True, scope="turn"))
    assert ending.turn_marks[2][1].value == "the value"
    assert ending.turn_marks[2][1].scope == "turn"
    assert start == RunnerState()


def test_a_deferred_hand_back_alone_is_recorded() -> None:
    """A deferred hand-back is something set, and rides in the mark."""
    deferred = DeferredHandBack(scope_key="explorer:call-1:0", body="b", message=None)
    state = _record(RunnerState(), TurnMarks(), deferred)
    assert state.turn_marks[2][1].deferred_hand_back == deferred


# --- deciding ------------------------------------------------------------------------------------


def _decide(
    marks: dict[int, TurnMark], ran: list[int], *, response_format: object = None, pending: int = 0
) -> tuple[object, tuple[str, ...]]:
    decided = decide_end_turn(
        marks,
        ran_call_indexes=ran,
        response_format=response_format,  # type: ignore[arg-type]
        pending_attachments=pending,
    )
    return decided.decision, decided.warnings


def test_no_marks_continue_silently() -> None:
    """No marks ⇒ continue, no warning."""
    assert _decide({}, [0]) == (CONTINUE, ())


def test_an_ordinary_tool_that_ran_alone_ends_the_turn() -> None:
    """The round's only call that ran counts."""
    decision, warnings = _decide({0: mark()}, [0])
    assert decision == EndTurn(call_index=0, scope="llm", answer_text="answer", return_value="answer")
    assert warnings == ()


def test_an_ordinary_tool_beside_other_calls_is_dropped_with_a_warning() -> None:
    """An end-turn mark beside other calls warns and is dropped."""
    assert _decide({1: mark()}, [0, 1]) == (
        CONTINUE,
        ("tool: end-turn ignored; it ran beside other tool calls in the same response",),
    )


def test_a_handoff_counts_beside_other_calls() -> None:
    """A handoff runs last, after the others, so its mark counts."""
    decision, _ = _decide({1: mark(is_handoff=True, scope="turn")}, [0, 1])
    assert decision == EndTurn(call_index=1, scope="turn", answer_text="answer", return_value="answer")


def test_two_ordinary_marks_give_two_warnings() -> None:
    """Two ordinary tools beside each other: both dropped, one warning each."""
    decision, warnings = _decide({0: mark(tool_name="a"), 1: mark(tool_name="b")}, [0, 1])
    assert decision == CONTINUE
    assert [w.split(":")[0] for w in warnings] == ["a", "b"]


def test_two_counting_marks_warn_and_continue() -> None:
    """Two marks that would count is a guess, so the turn goes on with a warning."""
    decision, warnings = _decide({0: mark(is_handoff=True), 1: mark(is_handoff=True)}, [0, 1])
    assert decision == CONTINUE
    assert warnings == ("end-turn ignored; 2 tool calls in one response asked to end the turn",)


def test_a_pending_attachment_continues() -> None:
    """A reply attachment waiting to be delivered keeps the turn going."""
    assert _decide({0: mark()}, [0], pending=1) == (
        CONTINUE,
        ("tool: end-turn ignored; a reply attachment is waiting to be delivered",),
    )


@pytest.mark.parametrize("value", [None, {"a": 1}, 3])
def test_without_structured_output_the_value_must_be_a_string(value: object) -> None:
    """With no structured output, a value that is not a string continues with a warning."""
    assert _decide({0: mark(value=value)}, [0]) == (CONTINUE, ("tool: end-turn ignored; the value is not a string",))


def test_a_value_matching_the_structured_output_ends_with_its_json() -> None:
    """The value matches the caller's type: its JSON is the answer text, the parsed value returned."""
    decision, warnings = _decide({0: mark(value={"text": "hi é"})}, [0], response_format=REPLY)
    assert decision == EndTurn(
        call_index=0, scope="llm", answer_text='{"text":"hi é"}', return_value=Reply(text="hi é")
    )
    assert warnings == ()


def test_a_value_not_matching_the_structured_output_continues() -> None:
    """A value the caller's type rejects continues with a warning."""
    assert _decide({0: mark(value={"wrong": 1})}, [0], response_format=REPLY) == (
        CONTINUE,
        ("tool: end-turn ignored; the value does not match the caller's structured output",),
    )


def test_a_hand_back_on_a_non_handoff_warns() -> None:
    """Only a handoff hands back; the text is ignored with a warning."""
    assert _decide({0: mark(end_turn=False, message="m", value=None)}, [0]) == (
        CONTINUE,
        ("tool: hand-back ignored; only a handoff hands back",),
    )


def test_a_handoff_hand_back_is_ignored_when_the_turn_ends() -> None:
    """The turn ended, so the handoff's custom hand-back is never shown."""
    decision, warnings = _decide({0: mark(is_handoff=True, message="m")}, [0])
    assert isinstance(decision, EndTurn)
    assert warnings == ("tool: hand-back ignored; the turn ended",)


# --- applying --------------------------------------------------------------------------------------


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_continue_pushes_every_deferred_hand_back_in_call_order(lane: Lane) -> None:
    """Continue ⇒ each deferred hand-back is pushed (custom text or the default)."""
    thread = build(lane, [U("q")])
    marks = {
        3: mark(
            tool_name="b",
            is_handoff=True,
            deferred_hand_back=DeferredHandBack(scope_key="k", body="x", message="Custom."),
        ),
        1: mark(
            tool_name="a",
            is_handoff=True,
            deferred_hand_back=DeferredHandBack(scope_key="j", body="done", message=None),
        ),
        2: mark(),
    }
    enclosing = TurnMarks(message="outer")
    applied = apply_end_turn_decision(thread, CONTINUE, marks, enclosing=enclosing, lane=lane)
    assert contents(applied.messages) == ["q", handoff_resume_text("a", "done"), "Custom."]
    assert applied.turn_ended == TurnEnded(ended=False)
    assert applied.enclosing is enclosing


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_end_of_scope_llm_ends_the_thread_and_leaves_the_enclosing_tool_alone(lane: Lane) -> None:
    """End ⇒ the thread ends with the answer; scope ``llm`` never touches the enclosing marks."""
    enclosing = TurnMarks()
    decision = EndTurn(call_index=0, scope="llm", answer_text="3 events", return_value="3 events")
    applied = apply_end_turn_decision(build(lane, [U("q")]), decision, {}, enclosing=enclosing, lane=lane)
    assert applied.messages == [*build(lane, [U("q")]), ANSWER]
    assert applied.turn_ended == TurnEnded(ended=True, return_value="3 events")
    assert applied.enclosing is enclosing


@pytest.mark.parametrize("scope", ["llm", "turn"])
def test_end_of_scope_turn_inside_a_tool_body_marks_the_enclosing_loop(scope: TurnScope) -> None:
    """Scope ``turn`` inside a tool body re-marks the enclosing tool; at top level nothing to mark."""
    decision = EndTurn(call_index=0, scope=scope, answer_text="done", return_value="done")
    inside = apply_end_turn_decision([], decision, {}, enclosing=TurnMarks(message="m"), lane="openai.chat_completions")
    top = apply_end_turn_decision([], decision, {}, enclosing=None, lane="openai.chat_completions")
    expected = TurnMarks(end_turn=True, scope="turn", message="m") if scope == "turn" else TurnMarks(message="m")
    assert inside.enclosing == expected
    assert top.enclosing is None


# --- ending the thread with the answer ------------------------------------------------------------


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_a_trailing_plain_assistant_message_is_replaced(lane: Lane) -> None:
    """The body's structured reply is replaced, never followed by a second assistant message."""
    thread = build(lane, [U("q"), A(t('{"answer": "3 events", "done": true}'))])
    before = snapshot(thread)
    assert end_thread_with_answer(thread, "3 events", lane=lane) == [*build(lane, [U("q")]), ANSWER]
    assert thread == before


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_the_caller_text_left_by_the_drop_is_replaced(lane: Lane) -> None:
    """The caller's own text left by ``drop_handoff_call`` is replaced by the answer."""
    dropped = drop_handoff_call(build(lane, [U("q"), A(t("Let me check."), c("call-1", "explorer"))]), ALONE, lane=lane)
    out = end_thread_with_answer(dropped, "3 events", lane=lane)
    assert out == [*build(lane, [U("q")]), ANSWER]
    assert validate(out, lane=lane) == []


@pytest.mark.parametrize("lane", HANDOFF_LANES)
@pytest.mark.parametrize(
    "events",
    [
        [U("q")],
        [U("q"), A(c("call-2", "updateStatus")), R("call-2")],
        [U("q"), A(t("Checking."), c("call-2", "updateStatus"))],
    ],
    ids=["after-user", "after-tool-result", "after-calls"],
)
def test_anything_else_is_followed_by_the_answer(lane: Lane, events: list[object]) -> None:
    """After a user message, a tool result or a message still carrying calls, the answer is pushed."""
    thread = build(lane, events)  # type: ignore[arg-type]
    assert end_thread_with_answer(thread, "3 events", lane=lane) == [*thread, ANSWER]


# --- the step, replayed -----------------------------------------------------------------------------


def _round_with_ending_handoff(lane: Lane, *, value: object) -> tuple[RunnerState, list[object]]:
    """A round where updateStatus ran, then the explorer handoff ran its body and asked to end the turn."""
    key = handoff_scope_key(HandoffScopes(), "explorer", "call-1")
    thread = drop_handoff_call(round_with_sibling(lane), EXPLORER, lane=lane)
    thread = push_scoped(thread, persona(lane, "explorer persona"), scopes=HandoffScopes().enter(key))
    thread = [*thread, {"role": "assistant", "content": "the body's reply"}]
    marks = TurnMarks(end_turn=True, scope="turn")
    closed = close_handoff(
        thread,
        scope_key=key,
        tool_name="explorer",
        outcome=HandoffOutcome(kind="success", text="3 events"),
        marks=marks,
        lane=lane,
    )
    state = record_turn_mark(
        RunnerState(),
        round_index=0,
        call_index=1,
        tool_name="explorer",
        is_handoff=True,
        marks=marks,
        raw_tool_result=ToolSuccess(value=value),
        deferred_hand_back=closed.deferred,
    )
    return state, closed.messages


def _step(state: RunnerState, messages: list[object], lane: Lane, enclosing: TurnMarks | None) -> EndTurnStep:
    """The end-turn step of round 0, whose calls 0 and 1 ran, with no response format or attachments."""
    return run_end_turn_step(
        state,
        round_index=0,
        ran_call_indexes=[0, 1],
        response_format=None,
        pending_attachments=0,
        messages=messages,
        enclosing=enclosing,
        lane=lane,
    )


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_step_ends_records_and_drops_the_marks(lane: Lane) -> None:
    """The step applies the decision, records ``turn_ended[round]`` and drops the round's marks."""
    state, messages = _round_with_ending_handoff(lane, value="3 events")
    step = _step(state, messages, lane, TurnMarks())
    assert step.turn_ended == TurnEnded(ended=True, return_value="3 events")
    assert step.state == RunnerState(turn_marks={}, turn_ended={0: step.turn_ended})
    assert step.enclosing == TurnMarks(end_turn=True, scope="turn")
    assert step.messages[-1] == ANSWER
    assert "explorer persona" not in contents(step.messages)
    assert validate(step.messages, lane=lane) == []
    assert ensure_tool_turn_invariants(step.messages, lane=lane).messages is step.messages


@pytest.mark.parametrize("lane", HANDOFF_LANES)
@pytest.mark.parametrize("value", ["3 events", {"not": "a string"}], ids=["ends", "continues"])
def test_step_replayed_from_recorded_state_finds_the_same_outcome(lane: Lane, value: object) -> None:
    """Replayed from the state before it or after it, the step gives the same outcome, applied once."""
    state, messages = _round_with_ending_handoff(lane, value=value)
    first = _step(state, messages, lane, TurnMarks())
    again = _step(state, messages, lane, TurnMarks())
    assert again == first
    replayed = _step(first.state, first.messages, lane, first.enclosing)
    assert replayed.state is first.state
    assert replayed.messages == first.messages
    assert replayed.enclosing is first.enclosing
    assert replayed.turn_ended == first.turn_ended
    assert replayed.warnings == ()
    hand_backs = [
        m for m in replayed.messages if m == {"role": "user", "content": handoff_resume_text("explorer", "3 events")}
    ]
    assert len(hand_backs) == (0 if first.turn_ended.ended else 1)
    assert validate(replayed.messages, lane=lane) == []
