"""Dropping the handoff's call, and answering it when the body never started."""

from __future__ import annotations

import pytest
from anthropic.types import Message, TextBlock, ToolUseBlock, Usage
from openai.types.chat import ChatCompletionMessage
from openai.types.chat.chat_completion_message_tool_call import ChatCompletionMessageToolCall, Function
from openai.types.responses import ResponseFunctionToolCall

from otel_toolturn import HandoffError, Lane, ToolTurnInputError, UnknownLaneError, validate
from otel_toolturn.handoff import HandoffCall, answer_handoff_not_started, drop_handoff_call
from otel_toolturn.handoff._texts import handoff_not_started_text
from otel_toolturn.handoff._wire import HANDOFF_LANES
from tests.handoff.threads import ALONE, EXPLORER, round_with_sibling, snapshot
from tests.transcripts import A, R, U, build, c, t, th


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_drop_targets_the_last_assistant_message(lane: Lane) -> None:
    """An earlier assistant message's call is never the target."""
    thread = build(lane, [U("q"), A(c("call-0", "explorer")), R("call-0"), U("again"), A(c("call-1", "explorer"))])
    assert drop_handoff_call(thread, ALONE, lane=lane) == build(
        lane, [U("q"), A(c("call-0", "explorer")), R("call-0"), U("again")]
    )
    with pytest.raises(HandoffError, match=r"explorer \(call-0\).*found explorer \(call-1\)"):
        drop_handoff_call(thread, HandoffCall(index=0, call_id="call-0", name="explorer"), lane=lane)


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_drop_without_an_assistant_message_is_a_handoff_error(lane: Lane) -> None:
    """No assistant message ⇒ a clear error saying none was found."""
    with pytest.raises(HandoffError, match="expected an assistant message carrying call 'call-1', found none"):
        drop_handoff_call(build(lane, [U("hello")]), ALONE, lane=lane)


@pytest.mark.parametrize("lane", HANDOFF_LANES)
@pytest.mark.parametrize(
    ("call", "words"),
    [
        (HandoffCall(index=1, call_id="call-1", name="oracle"), r"to be oracle \(call-1\), found explorer \(call-1\)"),
        (HandoffCall(index=1, call_id="call-9", name="explorer"), r"to be explorer \(call-9\), found explorer"),
        (HandoffCall(index=0, call_id="call-1", name="explorer"), r"found updateStatus \(call-2\)"),
        (HandoffCall(index=2, call_id="call-1", name="explorer"), r"it carries 2 call\(s\)"),
    ],
)
def test_drop_of_a_call_not_exactly_at_its_index_is_a_handoff_error(lane: Lane, call: HandoffCall, words: str) -> None:
    """The call at the index must be exactly (name, id); the error names both sides."""
    with pytest.raises(HandoffError, match=words):
        drop_handoff_call(round_with_sibling(lane), call, lane=lane)


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_drop_beside_a_sibling_removes_only_this_call(lane: Lane) -> None:
    """Other calls remain, their results still pair; nothing is inserted."""
    thread = round_with_sibling(lane)
    before = snapshot(thread)
    out = drop_handoff_call(thread, EXPLORER, lane=lane)
    assert out == build(lane, [U("hello"), A(t("Exploring."), c("call-2", "updateStatus")), R("call-2")])
    assert validate(out, lane=lane) == []
    assert thread == before


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_drop_of_the_only_call_keeps_its_text(lane: Lane) -> None:
    """The only call gone, its text stays as a plain assistant message."""
    thread = build(lane, [U("hello"), A(t("I'll ask the explorer."), c("call-1", "explorer"))])
    out = drop_handoff_call(thread, ALONE, lane=lane)
    assert out == build(lane, [U("hello"), A(t("I'll ask the explorer."))])
    assert validate(out, lane=lane) == []


@pytest.mark.parametrize("lane", HANDOFF_LANES)
@pytest.mark.parametrize("blocks", [(c("call-1", "explorer"),), (th("plan"), c("call-1", "explorer"))])
def test_drop_of_the_only_call_without_text_removes_the_message(lane: Lane, blocks: tuple[object, ...]) -> None:
    """A message that was only the call (and its reasoning) is removed."""
    thread = build(lane, [U("hello"), A(*blocks)])  # type: ignore[arg-type]
    assert drop_handoff_call(thread, ALONE, lane=lane) == build(lane, [U("hello")])


def test_drop_in_responses_takes_the_reasoning_directly_ahead_of_the_call() -> None:
    """Responses: the reasoning item right ahead of the call goes with it; a sibling's stays."""
    lane: Lane = "openai.responses"
    thread = build(lane, [U("q"), A(th("a"), c("call-2", "g"), th("b"), c("call-1", "explorer")), R("call-2")])
    out = drop_handoff_call(thread, EXPLORER, lane=lane)
    assert [item.get("type") for item in out if isinstance(item, dict)] == [
        None,
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert validate(out, lane=lane) == []


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_call_only_message_is_removed_when_guard_feedback_follows(lane: Lane) -> None:
    """The call-only message goes even with guard feedback after it."""
    thread = build(lane, [U("hello"), A(c("call-1", "explorer")), U("guard feedback")])
    assert drop_handoff_call(thread, ALONE, lane=lane) == build(lane, [U("hello"), U("guard feedback")])


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_sibling_call_result_and_feedback_survive(lane: Lane) -> None:
    """A ``user, assistant, tool, user`` thread with a sibling call and its result survives the drop."""
    out = drop_handoff_call(round_with_sibling(lane, feedback=True), EXPLORER, lane=lane)
    assert out == build(
        lane, [U("hello"), A(t("Exploring."), c("call-2", "updateStatus")), R("call-2"), U("guard feedback")]
    )
    assert validate(out, lane=lane) == []


@pytest.mark.parametrize("lane", HANDOFF_LANES)
@pytest.mark.parametrize("feedback", [False, True])
def test_not_started_answers_the_call_after_its_batch(lane: Lane, feedback: bool) -> None:
    """The not-started text answers the handoff's call, so the provider never sees it unanswered."""
    thread = round_with_sibling(lane, feedback=feedback)
    before = snapshot(thread)
    out = answer_handoff_not_started(thread, EXPLORER, "the user rejected the guard trip", lane=lane)
    text = handoff_not_started_text("explorer", "the user rejected the guard trip")
    answered = R("call-1", text, is_error=True)
    tail = [U("guard feedback")] if feedback else []
    sent = A(t("Exploring."), c("call-2", "updateStatus"), c("call-1", "explorer"))
    assert out == build(lane, [U("hello"), sent, R("call-2"), answered, *tail])
    assert validate(thread, lane=lane) != []
    assert validate(out, lane=lane) == []
    assert thread == before


def test_not_started_joins_anthropic_results_that_share_a_message_with_feedback() -> None:
    """Anthropic: with the sibling's result and feedback in one message, the answer goes right after the result."""
    lane: Lane = "anthropic.messages"
    thread = [
        *build(lane, [U("hello"), A(c("call-2", "updateStatus"), c("call-1", "explorer"))]),
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call-2", "content": "ok"},
                {"type": "text", "text": "guard feedback"},
            ],
        },
    ]
    out = answer_handoff_not_started(thread, EXPLORER, "stopped", lane=lane)
    assert len(out) == 3
    assert [block["type"] for block in out[2]["content"]] == ["tool_result", "tool_result", "text"]  # type: ignore[index]
    assert validate(out, lane=lane) == []


def test_drop_handles_typed_anthropic_messages() -> None:
    """A typed ``Message`` passed back from a response is copied, never changed, and keeps its type."""
    message = Message(
        id="msg_1",
        type="message",
        role="assistant",
        model="claude-test",
        content=[
            TextBlock(type="text", text="Exploring."),
            ToolUseBlock(type="tool_use", id="call-2", name="updateStatus", input={}),
            ToolUseBlock(type="tool_use", id="call-1", name="explorer", input={}),
        ],
        stop_reason="tool_use",
        stop_sequence=None,
        usage=Usage(input_tokens=1, output_tokens=1),
    )
    thread: list[object] = [{"role": "user", "content": "hello"}, message]
    out = drop_handoff_call(thread, EXPLORER, lane="anthropic.messages")
    assert isinstance(out[1], Message)
    assert [block.type for block in out[1].content] == ["text", "tool_use"]
    assert len(message.content) == 3


def test_drop_handles_typed_chat_messages() -> None:
    """A typed ``ChatCompletionMessage``: a sibling stays in a copy; the only call without text removes it."""

    def call(call_id: str, name: str) -> ChatCompletionMessageToolCall:
        return ChatCompletionMessageToolCall(id=call_id, type="function", function=Function(name=name, arguments="{}"))

    lane: Lane = "openai.chat_completions"
    both = ChatCompletionMessage(
        role="assistant", content=None, tool_calls=[call("call-2", "u"), call("call-1", "explorer")]
    )
    out = drop_handoff_call([{"role": "user", "content": "q"}, both], EXPLORER, lane=lane)
    assert isinstance(out[1], ChatCompletionMessage)
    assert [tc.id for tc in out[1].tool_calls or ()] == ["call-2"]
    assert len(both.tool_calls or ()) == 2
    alone = ChatCompletionMessage(role="assistant", content=None, tool_calls=[call("call-1", "explorer")])
    assert drop_handoff_call([{"role": "user", "content": "q"}, alone], ALONE, lane=lane) == [
        {"role": "user", "content": "q"}
    ]


def test_drop_handles_typed_responses_items() -> None:
    """Typed Responses call items are read by their fields and dropped by identity."""
    lane: Lane = "openai.responses"
    sibling = ResponseFunctionToolCall(type="function_call", call_id="call-2", name="u", arguments="{}", id="fc_2")
    handoff = ResponseFunctionToolCall(
        type="function_call", call_id="call-1", name="explorer", arguments="{}", id="fc_1"
    )
    out = drop_handoff_call([{"role": "user", "content": "q"}, sibling, handoff], EXPLORER, lane=lane)
    assert len(out) == 2
    assert out[1] is sibling


def test_drop_keeps_the_untouched_messages_as_the_same_objects() -> None:
    """Messages the drop does not rewrite are the caller's own objects."""
    thread = round_with_sibling("anthropic.messages", feedback=True)
    out = drop_handoff_call(thread, EXPLORER, lane="anthropic.messages")
    assert [out[i] is thread[i] for i in range(4)] == [True, False, True, True]


def test_not_started_answers_a_custom_tool_call_with_its_own_output_type() -> None:
    """Responses: a ``custom_tool_call`` handoff is answered by a ``custom_tool_call_output``."""
    lane: Lane = "openai.responses"
    thread: list[object] = [
        {"role": "user", "content": "q"},
        {"type": "custom_tool_call", "call_id": "call-1", "name": "explorer", "input": "why"},
    ]
    out = answer_handoff_not_started(thread, ALONE, "stopped", lane=lane)
    assert out[2] == {
        "type": "custom_tool_call_output",
        "call_id": "call-1",
        "output": handoff_not_started_text("explorer", "stopped"),
    }
    assert validate(out, lane=lane) == []


def test_an_unknown_lane_is_a_typed_error() -> None:
    """A lane outside the closed set is an ``UnknownLaneError`` naming it."""
    with pytest.raises(UnknownLaneError, match="'gemini'"):
        drop_handoff_call([], ALONE, lane="gemini")  # type: ignore[arg-type]


def test_a_string_input_is_read_per_lane() -> None:
    """A Responses ``input`` string is one user message (no assistant message); elsewhere it is rejected."""
    with pytest.raises(HandoffError, match="found none"):
        drop_handoff_call("hello", ALONE, lane="openai.responses")
    with pytest.raises(ToolTurnInputError, match="expects a list of messages"):
        drop_handoff_call("hello", ALONE, lane="openai.chat_completions")


def test_a_handoff_on_the_gemini_lane_is_a_handoff_error_naming_the_lanes_it_runs_on() -> None:
    """Gemini keeps its system instruction outside ``contents``: a handoff there is refused, typed, not guessed."""
    thread: list[object] = [{"role": "user", "parts": [{"text": "go"}]}]
    with pytest.raises(HandoffError, match=r"anthropic\.messages.*gemini\.generate_content keeps"):
        drop_handoff_call(thread, ALONE, lane="gemini.generate_content")
