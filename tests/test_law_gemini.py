"""The Gemini lane's acceptance cases, each reduced from a public report to its minimal ``contents``.

Every repaired case also validates clean; a valid one comes back as the very same list.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from google.genai import types

from otel_toolturn import INTERRUPTED_RESULT_TEXT, Lane, ToolTurnInputError, ensure_tool_turn_invariants, validate
from otel_toolturn.lanes import adapter_for
from otel_toolturn.lanes.gemini import LEADING_RESULTS_TEXT, PLACEHOLDER_SIGNATURE
from tests.gemini_wire import assert_sent_whole
from tests.transcripts import A, Event, R, U, c, gemini, t

GEMINI: Lane = "gemini.generate_content"
CLOSE: dict[str, object] = {"error": INTERRUPTED_RESULT_TEXT}


def user(text: str) -> Any:
    return {"role": "user", "parts": [{"text": text}]}


def call(name: str, call_id: str | None = None, signature: str | None = "c2ln") -> Any:
    data: dict[str, object] = {"name": name, "args": {}}
    if call_id:
        data["id"] = call_id
    part: dict[str, object] = {"functionCall": data}
    if signature:
        part["thoughtSignature"] = signature
    return part


def response(name: str, payload: Mapping[str, object], call_id: str | None = None) -> Any:
    data: dict[str, object] = {"name": name}
    if call_id:
        data["id"] = call_id
    data["response"] = payload
    return {"functionResponse": data}


def model(*parts: object) -> Any:
    return {"role": "model", "parts": list(parts)}


def results(*parts: object) -> Any:
    return {"role": "user", "parts": list(parts)}


def _repair(contents: Sequence[object]) -> tuple[Any, list[tuple[str, tuple[str, ...]]]]:
    view = ensure_tool_turn_invariants(contents, lane=GEMINI)
    assert validate(view.messages, lane=GEMINI) == [], "the repaired contents validate"
    return list(view.messages), [(r.form, r.tool_call_ids) for r in view.repairs]


def test_a_call_turn_dropped_by_history_curation_leaves_its_response_out() -> None:
    """Compression cut the history after the call turn: the response that answers nothing is left out, reported.

    https://github.com/google-gemini/gemini-cli/issues/4105
    """
    contents = [user("summary of earlier work"), results(response("read_file", {"output": "text"})), user("go on")]
    assert [v.rule for v in validate(contents, lane=GEMINI)] == ["response_turn_position"]
    out, repairs = _repair(contents)
    assert out == [contents[0], contents[2]]
    assert repairs == [("orphan_result", ("read_file#1",))]


def test_a_summariser_pruning_one_of_two_results_gets_the_interrupted_close() -> None:
    """A summariser kept one of two responses: the pruned one is closed as interrupted, with its call's name and id.

    https://github.com/google-gemini/gemini-cli/issues/4568
    """
    turn = model(call("ls", "a"), call("cat", "b", signature=None))
    contents = [user("q"), turn, results(response("ls", {"output": "x"}, "a"))]
    assert [v.rule for v in validate(contents, lane=GEMINI)] == ["function_response_count"]
    out, repairs = _repair(contents)
    assert out[1] is turn
    assert out[2] == results(response("ls", {"output": "x"}, "a"), response("cat", CLOSE, "b"))
    assert repairs == [("missing_result", ("b",))]


def test_a_response_with_no_call_is_left_out_and_its_content_with_it() -> None:
    """A persisted response whose call was never stored: left out; a content left with no parts goes too.

    https://github.com/google/adk-python/issues/6582
    """
    contents = [user("q"), model({"text": "hello"}), results(response("lookup", {"output": "1"}, "orphan-1"))]
    out, repairs = _repair(contents)
    assert out == contents[:2]
    assert repairs == [("orphan_result", ("orphan-1",))]


def test_text_after_the_responses_moves_ahead_of_them() -> None:
    """The next question sent in the same content as the tool result, after it: it goes ahead of the response.

    https://github.com/google/adk-go/pull/766
    """
    answer = response("search", {"output": "hits"})
    question = {"text": "and now?"}
    contents = [user("q"), model(call("search")), results(answer, question)]
    assert [v.rule for v in validate(contents, lane=GEMINI)] == ["text_after_responses"]
    out, repairs = _repair(contents)
    assert out[2]["parts"] == [question, answer]
    assert out[2]["parts"][0] is question
    assert repairs == [("text_after_results", ("search#1",))]


def test_text_before_the_responses_is_accepted_as_it_is() -> None:
    """Text ahead of the responses in their content is accepted: the list comes back as the same object."""
    contents = [user("q"), model(call("search")), results({"text": "here:"}, response("search", {"output": "x"}))]
    view = ensure_tool_turn_invariants(contents, lane=GEMINI)
    assert view.messages is contents
    assert view.repairs == ()


def test_results_split_over_two_contents_are_merged_into_one() -> None:
    """Parallel responses stored as two user contents: merged into the one content right after the calls.

    https://github.com/vertesia/llumiverse/pull/464
    """
    first, second = response("a", {"output": "1"}), response("b", {"output": "2"})
    contents = [user("q"), model(call("a"), call("b", signature=None)), results(first), results(second)]
    assert [v.rule for v in validate(contents, lane=GEMINI)] == ["function_response_count", "response_turn_position"]
    out, repairs = _repair(contents)
    assert len(out) == 3
    assert out[2]["parts"][0] is first
    assert out[2]["parts"][1] is second
    assert repairs == [("late_result", ("b#1",))]


def test_a_late_result_behind_a_user_message_is_moved_up() -> None:
    """A tool completion recorded after the user spoke again: moved up right after its call turn.

    https://github.com/google/adk-go/pull/1428
    """
    late = results(response("build", {"output": "done"}, "c1"))
    contents = [user("q"), model(call("build", "c1")), user("status?"), late]
    out, repairs = _repair(contents)
    assert out == [contents[0], contents[1], late, contents[2]]
    assert out[2] is late
    assert repairs == [("late_result", ("c1",))]


def test_a_signed_parallel_call_turn_with_one_result_missing_keeps_every_signed_part() -> None:
    """Parallel calls, only the first signed, one response missing: the close is added, the turn is untouched.

    https://github.com/zed-industries/zed/issues/64035
    """
    signed = call("read", "r1", signature="c2lnLXIx")
    unsigned = call("read", "r2", signature=None)
    turn = model({"text": "reading both", "thought": True}, signed, unsigned)
    contents = [user("q"), turn, results(response("read", {"output": "one"}, "r1"))]
    out, repairs = _repair(contents)
    assert out[1] is turn
    assert out[1]["parts"][1] is signed
    assert out[2]["parts"][1] == response("read", CLOSE, "r2")
    assert repairs == [("missing_result", ("r2",))]


def test_streamed_model_chunks_already_valid_come_back_as_the_same_object() -> None:
    """The SDK's streaming chat stores one model content per chunk: text chunks ahead of the calls are one step.

    https://github.com/gunpal5/Google_GenerativeAI/issues/57
    """
    contents = [
        user("sum 1..69 and look it up"),
        model({"text": "Let me"}),
        model({"text": " check."}),
        model({"text": "Calling it now."}, call("lookup", signature="c2ln")),
        model(call("search", signature=None)),
        results(response("lookup", {"output": "2415"}), response("search", {"output": "found"})),
        model({"text": "The sum is 2415."}),
    ]
    assert validate(contents, lane=GEMINI) == []
    view = ensure_tool_turn_invariants(contents, lane=GEMINI)
    assert view.messages is contents
    assert view.repairs == ()


def test_a_model_content_without_calls_after_a_step_is_the_models_answer() -> None:
    """Text after the call chunk is the next answer: the close it answered over stays, the result lands in place.

    The list alone cannot tell a streamed text chunk after the call from an answer the model gave over
    the close; the reading that keeps every earlier request unchanged is the one taken. Nothing is lost.
    """
    asked = [user("sum 1..69 and look it up"), model(call("lookup", signature="c2ln"))]
    first = ensure_tool_turn_invariants(asked, lane=GEMINI).messages
    later = [*asked, model({"text": "Calling it now."}), results(response("lookup", {"output": "2415"}))]
    view = ensure_tool_turn_invariants(later, lane=GEMINI)
    assert view.messages[: len(first)] == first
    assert [(r.form, r.tool_call_ids) for r in view.repairs] == [
        ("missing_result", ("lookup#1",)),
        ("late_result_in_place", ("lookup#1",)),
    ]
    assert not view.lossy
    assert "2415" in str(view.messages[-1])


def test_an_unsigned_first_call_gets_the_placeholder_and_nothing_else_changes() -> None:
    """A call step whose first call lost its signature: the provider's placeholder is set on it, reported, not lossy.

    https://github.com/google-gemini/gemini-cli/issues/28579
    """
    first, second = call("ls", signature=None), call("pwd", signature=None)
    contents = [user("q"), model(first, second), results(response("ls", {}), response("pwd", {}))]
    [violation] = validate(contents, lane=GEMINI)
    assert violation.rule == "missing_thought_signature"
    assert "function call `default_api:ls` , position 2" in violation.message
    view = ensure_tool_turn_invariants(contents, lane=GEMINI)
    stamped: Any = view.messages[1]
    assert stamped["parts"] == [{**first, "thoughtSignature": PLACEHOLDER_SIGNATURE}, second]
    assert stamped["parts"][1] is second
    assert [(r.form, r.tool_call_ids, r.lossy) for r in view.repairs] == [("placeholder_signature", ("ls#1",), False)]
    assert validate(view.messages, lane=GEMINI) == []


def test_sdk_objects_are_read_and_repaired_as_sdk_objects() -> None:
    """SDK ``Content`` objects: the close is an SDK ``Part``, the stamp's bytes go out as the placeholder."""
    contents = [
        types.Content(role="user", parts=[types.Part(text="q")]),
        types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(name="ls", id="a"))]),
    ]
    view = ensure_tool_turn_invariants(contents, lane=GEMINI)
    assert [r.form for r in view.repairs] == ["placeholder_signature", "missing_result"]
    stamped, closing = view.messages[1], view.messages[2]
    assert isinstance(stamped, types.Content)
    assert isinstance(closing, types.Content)
    wire = stamped.model_dump(mode="json", exclude_none=True)
    assert wire["parts"][0]["thought_signature"] == PLACEHOLDER_SIGNATURE
    assert _sdk_parts(closing)[0].function_response.response == CLOSE
    assert _sdk_parts(contents[1])[0].thought_signature is None, "the caller's object is not mutated"
    assert validate(view.messages, lane=GEMINI) == []


def test_a_call_turn_with_nothing_before_it_is_reported_not_repaired() -> None:
    """A history starting with a function call is refused; the law cannot invent the user turn, validate says so.

    https://github.com/google-gemini/gemini-cli/issues/11814
    """
    contents = [model(call("ls")), results(response("ls", {}))]
    assert [v.rule for v in validate(contents, lane=GEMINI)] == ["call_turn_position"]


def test_the_openai_compatible_gemini_endpoint_keeps_each_calls_extra_content_in_the_chat_lane() -> None:
    """Chat lane, Gemini's OpenAI-compatible shape: a repair keeps ``tool_calls[].extra_content`` (the signatures)."""
    signature = {"google": {"thought_signature": "c2ln"}}
    calls = [
        {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "read", "arguments": "{}"},
            "extra_content": signature,
        }
        for n in (1, 2)
    ]
    messages: list[object] = [
        {"role": "user", "content": "read both"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_1", "content": "one"},
        {"role": "user", "content": "go on"},
    ]
    view = ensure_tool_turn_invariants(messages, lane="openai.chat_completions")
    assert [r.form for r in view.repairs] == ["missing_result"]
    sent = view.messages[1]
    assert isinstance(sent, dict)
    assert sent["tool_calls"] is calls
    assert all(c["extra_content"] == signature for c in sent["tool_calls"])
    assert validate(view.messages, lane="openai.chat_completions") == []


def _closes_all(contents: Sequence[object]) -> Any:
    """The repaired contents, checked to validate and to come back unchanged from a second pass."""
    out, _ = _repair(contents)
    again = ensure_tool_turn_invariants(out, lane=GEMINI)
    assert again.repairs == ()
    return out


def test_a_call_without_an_id_beside_one_with_an_id_gets_its_own_close() -> None:
    """Same-named calls, one with an id and one without: an id-less response answers the id-less call."""
    contents = [user("q"), model(call("ls", "c1", signature=None), call("ls", signature=None))]
    out = _closes_all(contents)
    assert out[2] == results(response("ls", CLOSE, "c1"), response("ls", CLOSE))


def test_a_response_ahead_of_every_user_turn_never_leaves_a_call_turn_first() -> None:
    """Leaving out a response that opens the contents keeps a user content there, so no call turn comes first."""
    orphan = results(response("grep", {"output": "x"}))
    for head in ([orphan], [model({"text": "hi"}), orphan]):
        contents = [*head, model(call("ls")), results(response("ls", {"output": "y"}))]
        out = _closes_all(contents)
        assert out[len(head) - 1] == {"role": "user", "parts": [{"text": LEADING_RESULTS_TEXT}]}
        assert out[len(head) :] == contents[len(head) :]


def test_a_response_naming_a_left_out_repeated_call_is_left_out_with_it() -> None:
    """A repeat of a call's id that the law leaves out answers no response by its name: that response goes too."""
    contents = [
        user("q"),
        model(call("ls", "c2"), call("grep", "c2", signature=None)),
        results(response("grep", {"output": "x"})),
    ]
    out = _closes_all(contents)
    assert out[-1] == results(response("ls", CLOSE, "c2"))


def test_a_close_for_a_signed_repeat_of_an_id_answers_the_repeat() -> None:
    """Two signed calls with one id, the first answered by name: the second's close, by id, answers the second."""
    contents = [
        user("q"),
        model(call("cat", "c2"), call("ls", "c2")),
        results(response("cat", {"output": "x"})),
    ]
    out = _closes_all(contents)
    assert out[-1] == results(response("cat", {"output": "x"}), response("ls", CLOSE, "c2"))


def test_a_response_by_name_leaves_the_call_another_response_names_by_id() -> None:
    """Responses moved into one content: the one without an id takes the call no response names by id."""
    contents = [
        user("q"),
        model(call("grep", "c2"), call("grep", "c1", signature=None)),
        results(response("grep", CLOSE, "c2"), response("grep", {"output": "a"})),
        results(response("cat", {"output": "b"}, "c2")),
    ]
    out = _closes_all(contents)
    assert out[-1] == results(response("grep", {"output": "a"}), response("cat", {"output": "b"}, "c2"))


def test_responses_in_one_content_each_find_their_own_call_when_one_can_move_aside() -> None:
    """Two calls with one id, a response by name and one by id moved into one content: each answers its own call."""
    contents = [
        user("q"),
        model(call("grep", "c0", signature=None), call("cat", "c0")),
        results(response("grep", {"error": "x"})),
        results(response("grep", {"output": "y"}, "c0")),
    ]
    out = _closes_all(contents)
    assert out[-1] == results(response("grep", {"error": "x"}), response("grep", {"output": "y"}, "c0"))


def _sdk_parts(content: object) -> list[Any]:
    """The parts of an SDK ``Content`` (checked to be one, holding parts)."""
    assert isinstance(content, types.Content)
    assert content.parts is not None
    return list(content.parts)


def _sdk_call(name: str, call_id: str, signature: bytes | None = b"sig") -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, id=call_id, args={}), thought_signature=signature)


def _sdk_response(name: str, payload: dict[str, object], call_id: str) -> types.Part:
    return types.Part(function_response=types.FunctionResponse(name=name, id=call_id, response=payload))


def test_results_split_over_a_typed_content_and_a_rest_dict_all_reach_the_wire() -> None:
    """A REST response merged into the SDK ``Content`` holding the other is an SDK ``Part``: the SDK sends it whole."""
    turn = types.Content(role="model", parts=[_sdk_call("a", "a"), _sdk_call("b", "b", None)])
    typed = types.Content(role="user", parts=[_sdk_response("a", {"output": "<one>"}, "a")])
    contents = [user("q"), turn, typed, results(response("b", {"output": "<two>"}, "b"))]
    out = _closes_all(contents)
    assert len(out) == 3
    assert all(isinstance(part, types.Part) for part in _sdk_parts(out[2]))
    wire = assert_sent_whole(out)
    assert [p["functionResponse"]["response"] for p in wire[2]["parts"]] == [{"output": "<one>"}, {"output": "<two>"}]


def test_a_close_for_a_rest_call_added_to_a_typed_content_reaches_the_wire() -> None:
    """The close of a REST call, added to the SDK ``Content`` holding the other response, is sent whole."""
    typed = types.Content(role="user", parts=[_sdk_response("ls", {"output": "x"}, "a")])
    contents = [user("q"), model(call("ls", "a"), call("cat", "b", signature=None)), typed]
    out = _closes_all(contents)
    closing = _sdk_parts(out[2])[1]
    assert isinstance(closing, types.Part)
    assert closing.function_response is not None
    assert (closing.function_response.name, closing.function_response.id) == ("cat", "b")
    wire = assert_sent_whole(out)
    assert wire[2]["parts"][1] == response("cat", CLOSE, "b")


def test_snake_case_responses_merged_into_a_typed_content_become_sdk_parts() -> None:
    """SDK snake_case dict parts merged into a typed ``Content`` are ``Part`` objects: no serialisation warning."""
    turn = types.Content(role="model", parts=[_sdk_call("a", "a"), _sdk_call("b", "b", None)])
    typed = types.Content(role="user", parts=[_sdk_response("a", {"output": "1"}, "a")])
    snake = {
        "role": "user",
        "parts": [{"text": "<note>"}, {"function_response": {"name": "b", "id": "b", "response": {}}}],
    }
    out = _closes_all([user("q"), turn, typed, snake])
    merged = _sdk_parts(out[2])
    assert [type(part) for part in merged] == [types.Part] * 3
    assert merged[0].text == "<note>"
    assert_sent_whole(out)


def test_an_sdk_response_merged_into_a_dict_content_is_a_dict_in_that_contents_spelling() -> None:
    """An SDK ``Part`` merged into a dict content is a dict: REST camelCase, or snake_case beside snake_case parts."""
    late = types.Content(role="user", parts=[_sdk_response("b", {"output": "<two>"}, "b")])
    turn = model(call("a", "a"), call("b", "b", signature=None))
    first = response("a", {"output": "<one>"}, "a")
    snake_first = {"function_response": {"name": "a", "id": "a", "response": {"output": "<one>"}}}
    for answer, spelled in ((first, response("b", {"output": "<two>"}, "b")), (snake_first, None)):
        out = _closes_all([user("q"), turn, results(answer), late])
        assert type(out[2]) is dict
        assert out[2]["parts"][0] is answer
        moved = out[2]["parts"][1]
        if spelled is not None:
            assert moved == spelled
        else:
            assert moved == {"function_response": {"id": "b", "name": "b", "response": {"output": "<two>"}}}
        json.dumps(out[2])
        assert_sent_whole(out)


def test_a_dict_part_the_sdk_cannot_read_is_never_written_into_a_typed_content() -> None:
    """A dict part the ``Content`` model refuses, to merge into one, is a ``ToolTurnInputError``, not a lost part."""
    typed = types.Content(role="user", parts=[_sdk_response("a", {"output": "1"}, "a")])
    odd = results({"functionResponse": {"name": "b", "id": "b", "response": {}}, "unknownField": 1})
    contents = [user("q"), model(call("a", "a"), call("b", "b", signature=None)), typed, odd]
    with pytest.raises(ToolTurnInputError, match="cannot be written into a Content"):
        ensure_tool_turn_invariants(contents, lane=GEMINI)


def test_an_sdk_part_the_sdk_cannot_dump_is_never_written_into_a_dict_content() -> None:
    """A typed part the SDK cannot dump as JSON, to merge into a dict content, is a ``ToolTurnInputError``."""
    odd = types.Part.model_construct(
        None, function_response=types.FunctionResponse.model_construct(None, name="b", id="b", response={"k": object()})
    )
    late = types.Content.model_construct(None, role="user", parts=[odd])
    contents = [user("q"), model(call("a", "a"), call("b", "b", signature=None)), results(response("a", {}, "a")), late]
    with pytest.raises(ToolTurnInputError, match="cannot be dumped as JSON"):
        ensure_tool_turn_invariants(contents, lane=GEMINI)


def test_a_part_holding_a_response_and_a_text_is_refused_naming_its_position() -> None:
    """A part with two kinds of data (a response and a text) is a typed refusal at its content, never a silent loss."""
    part = {"functionResponse": {"name": "ls", "response": {"output": "x"}}, "text": "also typed here"}
    contents = [user("q"), model(call("ls")), {"role": "user", "parts": [part]}]
    with pytest.raises(ToolTurnInputError, match=r"item 2: a part holds both a functionResponse and a text") as err:
        ensure_tool_turn_invariants(contents, lane=GEMINI)
    assert "also typed here" not in str(err.value)


def test_turns_without_ids_answered_by_name_right_after_are_read_clean() -> None:
    """Calls and responses without ids, each name answered as often right after: clean units, the list its own view.

    Responses in another order are clean too; one name answered twice and another not at all, or a response
    with an id, is read in full (and repaired).
    """
    adapter = adapter_for(GEMINI)
    answered_out_of_order: list[Event] = [A(c("a", "read"), c("b", "read"), c("d", "grep")), R("d"), R("a"), R("b")]
    given = gemini([U("q"), *answered_out_of_order, A(t("done")), U("more"), A(c("e", "read")), R("e")], ids=False)
    assert adapter.read(given).kinds == ["other", "clean", "reply", "other", "clean"]
    assert ensure_tool_turn_invariants(given, lane=GEMINI).messages is given
    twice = gemini([U("q"), A(c("a", "read"), c("d", "grep")), R("a"), R("a")], ids=False)
    assert "clean" not in adapter.read(twice).kinds
    assert sorted(r.form for r in ensure_tool_turn_invariants(twice, lane=GEMINI).repairs) == [
        "duplicate_result",
        "missing_result",
    ]
    with_id = gemini([U("q"), A(c("a", "read")), R("a")], ids=False)
    with_id[2]["parts"][0]["functionResponse"]["id"] = "a"  # type: ignore[index]
    assert "clean" not in adapter.read(with_id).kinds
