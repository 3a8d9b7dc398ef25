"""The Bedrock Converse lane, one example per form, and ``validate`` in the service's words.

The service's words, as users report them (``ValidationException`` from ``converse`` / ``converse_stream``):

- ``The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous
  turn.`` — Just-Curieous/Curie#16 (LiteLLM), langgenius/dify-official-plugins#765, pydantic/pydantic-ai#2327.
- ``Expected toolResult blocks at messages.22.content for the following Ids: tooluse_…`` —
  NousResearch/hermes-agent#108584; ``… for the following Ids: tooluse_sMml…, but found: tooluse_G64h…`` when
  parallel results were split over two user messages — microsoft/semantic-kernel#13649, and the same fix in
  maximhq/bifrost#1165 and crewAI ("all toolResult blocks for a turn in a single user message").
- ``The toolResult blocks at messages.X.content contain duplicate Ids: tooluse_…`` — BerriAI/litellm#20047, #20048.
- ``A conversation must alternate between user and assistant roles. Make sure the conversation alternates
  between user and assistant roles and try again.`` — microsoft/semantic-kernel#10277, langchain-ai/langchain-aws#130
  (consecutive user messages are refused, not merged), langgenius/dify#9294.
- ``A conversation must start with a user message. Try again with a conversation that starts with a user
  message.`` — strands-agents/harness-sdk#2085 and strands-agents/sdk-typescript#727 (a sliding window trimmed to
  an assistant message), langgenius/dify#12340, elastic/kibana#246393.
- ``toolUseId``: 1 to 64 characters of ``[a-zA-Z0-9_.:-]+`` — botocore's service model (``ToolUseId``), and
  run-llama/llama_index#22775.

Words no public report gave us, written in the service's style and marked as such in ``validate``'s docstring:
a repeated ``toolUse`` id (``The toolUse blocks at messages.N.content contain duplicate Ids: …``, by analogy with
the ``toolResult`` one), empty content and blank text. Also reported, and NOT checked by ``validate`` because it
depends on the model behind the service (Llama 4, older Claude 3 routes):
``messages.4.content: Conversation blocks and tool result blocks cannot be provided in the same turn.`` —
strands-agents/harness-sdk#1223, BerriAI/litellm#6053, langchain-ai/langchain-aws#141.
"""

from __future__ import annotations

import json

from otel_toolturn import INTERRUPTED_RESULT_TEXT, SECOND_RESULT_SEPARATOR, Lane, ensure_tool_turn_invariants, validate
from otel_toolturn.lanes.bedrock_converse import RESULTS_LEFT_OUT_TEXT, fits_id

BEDROCK: Lane = "bedrock.converse"


def user(*blocks: object) -> dict[str, object]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: object) -> dict[str, object]:
    return {"role": "assistant", "content": list(blocks)}


def text(value: str) -> dict[str, object]:
    return {"text": value}


def use(call_id: str, name: str = "f") -> dict[str, object]:
    return {"toolUse": {"toolUseId": call_id, "name": name, "input": {}}}


def result(call_id: str, output: str = "ok", *, error: bool = False) -> dict[str, object]:
    block: dict[str, object] = {"toolUseId": call_id, "content": [{"text": output}]}
    if error:
        block["status"] = "error"
    return {"toolResult": block}


def reasoning(value: str) -> dict[str, object]:
    return {"reasoningContent": {"reasoningText": {"text": value, "signature": "sig-" + value}}}


CACHE = {"cachePoint": {"type": "default"}}


def _view(messages: list[object]) -> tuple[list[object], list[tuple[str, tuple[str, ...]]]]:
    view = ensure_tool_turn_invariants(messages, lane=BEDROCK)
    assert validate(view.messages, lane=BEDROCK) == [], "the view validates"
    again = ensure_tool_turn_invariants(view.messages, lane=BEDROCK)
    assert again.messages is view.messages, "a second pass is a no-op"
    return list(view.messages), [(r.form, r.tool_call_ids) for r in view.repairs]


def _roles(messages: list[object]) -> list[object]:
    return [m["role"] for m in messages if isinstance(m, dict)]


def test_a_clean_session_is_its_own_view() -> None:
    """Calls answered one result each in the next user message (a cache point after them): the very same list."""
    messages: list[object] = [
        user(text("go")),
        assistant(reasoning("plan"), text("let me look"), use("tooluse_a"), use("tooluse_b")),
        user(result("tooluse_a"), result("tooluse_b"), CACHE),
        assistant(text("done")),
    ]
    view = ensure_tool_turn_invariants(messages, lane=BEDROCK)
    assert view.messages is messages
    assert view.repairs == ()
    assert validate(messages, lane=BEDROCK) == []


def test_missing_result_is_an_error_result_in_one_user_message_with_the_users_text() -> None:
    """missing_result: an error toolResult of the interrupted text leads the user's next message; no two users meet."""
    messages: list[object] = [user(text("go")), assistant(use("tooluse_a")), user(text("never mind"))]
    assert validate(messages, lane=BEDROCK)[0].message == (
        "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_a"
    )
    out, repairs = _view(messages)
    assert repairs == [("missing_result", ("tooluse_a",))]
    assert _roles(out) == ["user", "assistant", "user"]
    close = {"toolUseId": "tooluse_a", "content": [{"text": INTERRUPTED_RESULT_TEXT}], "status": "error"}
    assert out[2] == user({"toolResult": close}, text("never mind"))


def test_late_result_split_over_two_user_messages_is_moved_up_into_one() -> None:
    """late_result: parallel results in two user messages (refused: "but found") are written in one."""
    messages: list[object] = [
        user(text("go")),
        assistant(use("a"), use("b")),
        user(result("a", "A")),
        user(result("b", "B")),
    ]
    rules = {v.rule for v in validate(messages, lane=BEDROCK)}
    assert rules == {"missing_tool_result", "unexpected_tool_result", "roles_not_alternating"}
    out, repairs = _view(messages)
    assert repairs == [("late_result", ("b",))]
    assert out[2] == user(result("a", "A"), result("b", "B"))
    assert len(out) == 3


def test_late_result_behind_the_users_text_is_moved_ahead_of_it() -> None:
    """late_result: a result recorded after the user's text in the same window leads the one user message."""
    messages: list[object] = [user(text("go")), assistant(use("a")), user(text("wait")), user(result("a", "A"))]
    out, repairs = _view(messages)
    assert repairs == [("late_result", ("a",))]
    assert out[2] == user(result("a", "A"), text("wait"))


def test_duplicate_result_is_folded_into_one_result() -> None:
    """duplicate_result: two results for one call (refused: "contain duplicate Ids") become one, both kept."""
    messages: list[object] = [user(text("go")), assistant(use("a")), user(result("a", "x"), result("a", "y"))]
    assert validate(messages, lane=BEDROCK)[0].message == (
        "The toolResult blocks at messages.2.content contain duplicate Ids: a"
    )
    out, repairs = _view(messages)
    assert repairs == [("duplicate_result", ("a",))]
    assert out[2] == user({"toolResult": {"toolUseId": "a", "content": [text(f"x\n{SECOND_RESULT_SEPARATOR}\ny")]}})


def test_orphan_result_is_left_out_and_its_message_keeps_its_place_between_two_answers() -> None:
    """orphan_result: a result of no call (refused: "exceeds the number of toolUse blocks") is left out, reported."""
    messages: list[object] = [user(text("go")), assistant(text("hi")), user(result("gone")), assistant(text("more"))]
    assert validate(messages, lane=BEDROCK)[0].message == (
        "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn."
    )
    out, repairs = _view(messages)
    assert repairs == [("orphan_result", ("gone",))]
    assert out[2] == user(text(RESULTS_LEFT_OUT_TEXT)), "two assistant messages never meet"
    assert out[1] is messages[1]
    assert out[3] is messages[3]


def test_an_orphan_result_at_the_end_leaves_nothing_behind() -> None:
    """orphan_result at the end: the message goes, and the placeholder comes only once an answer follows it."""
    asked: list[object] = [user(text("go")), assistant(text("hi")), user(result("gone"))]
    out, _ = _view(asked)
    assert out == asked[:2]
    later, _ = _view([*asked, assistant(text("more"))])
    assert later[: len(out)] == out


def test_an_orphan_result_opening_a_trimmed_window_keeps_the_conversation_starting_with_the_user() -> None:
    """orphan_result at the head (a window trimmed past its call): the message keeps its place, so the user opens."""
    trimmed: list[object] = [user(result("gone")), assistant(text("hi")), user(text("go on"))]
    assert [v.rule for v in validate(trimmed[1:], lane=BEDROCK)] == ["first_message_not_user"]
    assert validate(trimmed[1:], lane=BEDROCK)[0].message == (
        "A conversation must start with a user message. Try again with a conversation that starts with a user message."
    )
    out, repairs = _view(trimmed)
    assert repairs == [("orphan_result", ("gone",))]
    assert out[0] == user(text(RESULTS_LEFT_OUT_TEXT))
    assert out[1:] == trimmed[1:]
    alone, _ = _view(trimmed[:1])
    assert alone == [user(text(RESULTS_LEFT_OUT_TEXT))], "the same before the model answered: append-stable"


def test_duplicate_call_is_left_out() -> None:
    """duplicate_call: a call repeating an id of its own message is left out (lossy)."""
    messages: list[object] = [user(text("go")), assistant(use("a", "f"), use("a", "g")), user(result("a"))]
    out, repairs = _view(messages)
    assert repairs == [("duplicate_call", ("a",))]
    assert out[1] == assistant(use("a", "f"))


def test_reused_id_gets_a_derived_id_within_the_pattern() -> None:
    """reused_id: a later call repeating an earlier turn's id gets a derived id; its result follows it."""
    messages: list[object] = [
        user(text("go")),
        assistant(use("a")),
        user(result("a", "1")),
        assistant(use("a")),
        user(result("a", "2")),
    ]
    assert any(v.rule == "duplicate_tool_use_id" for v in validate(messages, lane=BEDROCK))
    out, repairs = _view(messages)
    assert repairs == [("reused_id", ("a",))]
    assert out[3] == assistant(use("a_2"))
    assert out[4] == user(result("a_2", "2"))


def test_invalid_id_over_64_characters_or_outside_the_pattern_is_renamed() -> None:
    """invalid_id: an id the service model refuses gets a derived id of at most 64 characters of its pattern."""
    for bad in ("t" * 70, "fn lookup"):
        messages: list[object] = [user(text("go")), assistant(use(bad)), user(result(bad))]
        assert [v.rule for v in validate(messages, lane=BEDROCK)] == ["invalid_tool_use_id", "unexpected_tool_result"]
        out, repairs = _view(messages)
        assert repairs == [("invalid_id", (bad,))]
        new_id = out[1]["content"][0]["toolUse"]["toolUseId"]  # type: ignore[index]
        assert fits_id(new_id)
        assert len(new_id) <= 64
        assert out[2] == user(result(new_id))


def test_ids_with_dot_and_colon_are_accepted_as_the_service_model_says() -> None:
    """``functions.lookup:0`` fits ``[a-zA-Z0-9_.:-]+``: kept as sent."""
    call_id = "functions.lookup:0"
    messages: list[object] = [user(text("go")), assistant(use(call_id)), user(result(call_id))]
    assert ensure_tool_turn_invariants(messages, lane=BEDROCK).messages is messages


def test_trailing_text_moves_ahead_of_the_calls_reasoning_and_cache_points_stay() -> None:
    """trailing_text: text after a toolUse goes ahead of the calls; reasoning and cache points keep their place."""
    signed = reasoning("plan")
    messages: list[object] = [user(text("go")), assistant(signed, use("a"), CACHE, text("then")), user(result("a"))]
    assert [v.rule for v in validate(messages, lane=BEDROCK)] == ["block_after_tool_use"]
    out, repairs = _view(messages)
    assert repairs == [("trailing_text", ("a",))]
    content = out[1]["content"]  # type: ignore[index]
    assert content == [signed, text("then"), use("a"), CACHE]
    assert content[0] is signed


def test_a_signed_reasoning_block_is_never_changed_moved_or_split() -> None:
    """A reasoning block keeps its object and its place in every repaired turn, even after the calls."""
    first, after = reasoning("before"), reasoning("after")
    messages: list[object] = [user(text("go")), assistant(first, use("a"), after, use("a"))]
    out, _ = _view(messages)
    content = out[1]["content"]  # type: ignore[index]
    assert content[0] is first
    assert content[2] is after


def test_a_result_recorded_after_the_model_answered_is_delivered_where_it_stands() -> None:
    """late_result_in_place: the call keeps the close the model saw; the late result is text in its user message."""
    asked: list[object] = [user(text("go")), assistant(use("a")), user(text("continue"))]
    first, _ = _view(asked)
    landed: list[object] = [*asked, assistant(text("ok")), user(result("a", "<late>"))]
    out, repairs = _view(landed)
    assert out[: len(first)] == first
    assert repairs == [("missing_result", ("a",)), ("late_result_in_place", ("a",))]
    assert out[-1]["role"] == "user"  # type: ignore[index]
    assert "<late>" in json.dumps(out[-1])
    assert "toolResult" not in json.dumps(out[-1])


def test_a_second_result_after_the_answer_is_delivered_where_it_stands() -> None:
    """duplicate_result_in_place: a call answered and seen gets a later second result as text."""
    messages: list[object] = [
        user(text("go")),
        assistant(use("a")),
        user(result("a", "1")),
        assistant(text("ok")),
        user(result("a", "2"), text("and?")),
    ]
    out, repairs = _view(messages)
    assert repairs == [("duplicate_result_in_place", ("a",))]
    assert out[4]["content"][1] == text("and?")  # type: ignore[index]
    assert "Another result of tool call a" in out[4]["content"][0]["text"]  # type: ignore[index]


def test_two_user_messages_the_caller_sent_are_refused_and_passed_through() -> None:
    """Consecutive user messages (refused: "must alternate") are not the law's to merge when nothing else changes."""
    messages: list[object] = [user(text("a")), user(text("b"))]
    words = (
        "A conversation must alternate between user and assistant roles. "
        "Make sure the conversation alternates between user and assistant roles and try again."
    )
    assert [v.message for v in validate(messages, lane=BEDROCK)] == [words]
    assert ensure_tool_turn_invariants(messages, lane=BEDROCK).messages is messages


def test_a_server_tool_use_is_no_client_call() -> None:
    """A toolUse of ``type: server_tool_use`` is answered by the service: no result is asked of the client."""
    server = {"toolUse": {"toolUseId": "srv_1", "name": "web", "input": {}, "type": "server_tool_use"}}
    messages: list[object] = [user(text("go")), assistant(server, text("found it"))]
    assert validate(messages, lane=BEDROCK) == []
    assert ensure_tool_turn_invariants(messages, lane=BEDROCK).messages is messages
