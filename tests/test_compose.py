"""The request composition rules: tools rule, system-prompt join, contributing pieces, strip rule, fingerprints."""

from __future__ import annotations

import contextlib
import copy
import datetime
import subprocess
import sys
from collections.abc import Callable
from enum import Enum
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_toolturn import LANES, Lane, UnknownLaneError, UnsupportedLaneError, compose
from otel_toolturn._view import SystemPromptPiece
from otel_toolturn.compose import (
    FRAMEWORK_FIELDS,
    SYSTEM_PROMPT_SEPARATOR,
    caller_withheld_tools,
    continues_server_state,
    contributing_pieces,
    fingerprint,
    join_system_prompt,
    strip_framework_fields,
    system_prompt_pieces,
    tool_choice_none,
    tool_rounds_since_user_text,
    tools_withheld,
    transcript_system_pieces,
)
from tests.transcripts import A, Event, R, U, build, c, gemini, t

P = SystemPromptPiece


@pytest.mark.parametrize(
    ("wrap_up", "revision", "expected"),
    [
        (None, None, None),
        (True, None, "wrap-up"),
        (None, True, "evidence-revision"),
        (True, True, "wrap-up"),
        ("yes", None, None),
        (1, 1, None),
        (False, False, None),
    ],
)
def test_tools_rule(wrap_up: object, revision: object, expected: str | None) -> None:
    """Wrap-up first, then evidence revision; only a literal ``True`` counts as asked."""
    assert tools_withheld(wrap_up, revision) == expected


@pytest.mark.parametrize(
    ("lane", "spelling"),
    [("anthropic.messages", {"type": "none"}), ("openai.chat_completions", "none"), ("openai.responses", "none")],
)
def test_tool_choice_none_per_lane_is_recognised_as_withheld(lane: Lane, spelling: object) -> None:
    """Each lane's spelling of "no tool", and a caller who sent it is recognised."""
    assert tool_choice_none(lane) == spelling
    assert caller_withheld_tools(spelling)
    assert not caller_withheld_tools("auto")
    assert not caller_withheld_tools({"type": "auto"})


def test_join_drops_empty_pieces_before_joining() -> None:
    """Empty and absent pieces spend no separator between their neighbours."""
    pieces = [P(raw_content="You are a bot."), P(), P(raw_content=""), P(raw_content="Be brief.")]
    assert join_system_prompt(pieces) == "You are a bot.\n\nBe brief."
    assert SYSTEM_PROMPT_SEPARATOR == "\n\n"
    assert join_system_prompt([]) == ""


def test_contributing_pieces_are_exactly_the_joined_survivors() -> None:
    """The survivors, in order, are what the join concatenates (the same objects)."""
    pieces = [P(raw_content="a", source="s0"), P(raw_content="", source="s1"), P(raw_content="b", source="s2")]
    survivors = contributing_pieces(pieces)
    assert survivors == (pieces[0], pieces[2])
    assert SYSTEM_PROMPT_SEPARATOR.join(p.raw_content or "" for p in survivors) == join_system_prompt(pieces)


def test_system_prompt_pieces_per_lane() -> None:
    """Each lane's pieces, in wire order, with where each sits."""
    anthropic = {
        "system": [{"type": "text", "text": "base"}, {"type": "text", "text": ""}, {"type": "text", "text": "skill"}]
    }
    assert [(p.raw_content, p.source) for p in system_prompt_pieces(anthropic, lane="anthropic.messages")] == [
        ("base", "system.0"),
        ("", "system.1"),
        ("skill", "system.2"),
    ]
    chat = {
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "u"},
            {"role": "developer", "content": [{"type": "text", "text": "d"}]},
        ]
    }
    assert [(p.raw_content, p.source) for p in system_prompt_pieces(chat, lane="openai.chat_completions")] == [
        ("s", "messages.0"),
        ("d", "messages.2.0"),
    ]
    responses = {
        "instructions": "i",
        "input": [{"role": "developer", "content": "d"}, {"type": "function_call_output", "role": "system"}],
    }
    assert [p.raw_content for p in system_prompt_pieces(responses, lane="openai.responses")] == ["i", "d"]
    assert system_prompt_pieces({"input": "just text"}, lane="openai.responses") == ()


def test_system_pieces_read_in_two_parts_are_the_whole_lists() -> None:
    """A transcript's pieces read as a prefix then the rest (``start``) are the pieces of the whole, sources and all."""
    items: list[object] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "developer", "content": [{"type": "text", "text": "d"}, {"type": "text", "text": "e"}]},
        {"role": "developer", "type": "message", "content": "m"},
    ]
    whole = transcript_system_pieces(items, key="messages")
    for cut in range(len(items) + 1):
        parts = transcript_system_pieces(items[:cut], key="messages")
        parts += transcript_system_pieces(items[cut:], key="messages", start=cut)
        assert parts == whole
    request = {"instructions": "i", "input": items}
    known = transcript_system_pieces(items, key="input")
    assert system_prompt_pieces(request, lane="openai.responses", transcript=known) == system_prompt_pieces(
        request, lane="openai.responses"
    )


def test_strip_removes_fields_never_messages_and_keeps_untouched_objects() -> None:
    """A field, never a message; untouched messages are the same objects; the input is not mutated."""
    clean = {"role": "user", "content": "hi"}
    marked = {"role": "tool", "content": "r", "tool_call_id": "c1", "toolChars": 3, "not_dispatched": True}
    messages = [clean, marked]
    before = copy.deepcopy(messages)
    out = strip_framework_fields(messages)
    assert out == [clean, {"role": "tool", "content": "r", "tool_call_id": "c1"}]
    assert out[0] is clean
    assert messages == before
    assert len(out) == len(messages)


def test_strip_with_nothing_to_strip_returns_the_same_list() -> None:
    """Nothing to strip ⇒ the very same list object (an agent that marks nothing allocates nothing)."""
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    assert strip_framework_fields(messages) is messages
    assert {"injectedBy", "notDispatched", "toolResultOrigin", "toolChars", "foldedExempt"} <= FRAMEWORK_FIELDS


def test_strip_reads_only_mappings_among_other_items() -> None:
    """Beside plain dicts: another mapping's fields are stripped, a string or generator item passes unread."""

    class Marked(dict[str, object]):
        pass

    pending = (part for part in ["a", "b"])
    messages: list[object] = [{"role": "user", "content": "hi"}, "text", pending, Marked(role="tool", toolChars=3)]
    out = strip_framework_fields(messages)
    assert out == [{"role": "user", "content": "hi"}, "text", pending, {"role": "tool"}]
    assert out[0] is messages[0]
    assert list(pending) == ["a", "b"]
    clean: list[object] = [{"role": "user", "content": "hi"}, "text", Marked(role="tool")]
    assert strip_framework_fields(clean) is clean


def test_fingerprint_is_short_and_tells_pieces_apart() -> None:
    """Twelve hex characters; key order does not matter; a changed value changes it."""
    a = fingerprint({"x": 1, "y": [1, 2]})
    assert len(a) == 12
    assert int(a, 16) >= 0
    assert fingerprint({"y": [1, 2], "x": 1}) == a
    assert fingerprint({"x": 2, "y": [1, 2]}) != a


def _standard(value: object) -> bytes:
    """The canonical bytes as the standard encoder writes them (what an installation without orjson sends)."""
    return compose._CANONICAL.encode(value).encode("utf-8", "surrogatepass")


_FLOATS = st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x == 0 or abs(x) >= 1e-4)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | _FLOATS | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500)
@given(value=_JSON)
def test_the_canonical_bytes_are_the_standard_encoders_for_every_json_value(value: object) -> None:
    """With or without orjson, a JSON value (floats of magnitude 1e-4 and up) gives the same canonical bytes."""
    assert compose.canonical_json(value) == _standard(value)


class _Colour(Enum):
    RED = "red"


@pytest.mark.parametrize(
    "value",
    [{1: "a"}, [2**70], "\ud800", _Colour.RED, {"when": datetime.date(2026, 1, 2)}, {"z": 1, "a": _Colour.RED}],
    ids=["int key", "big int", "lone surrogate", "enum", "date", "nested enum"],
)
def test_a_value_orjson_writes_otherwise_gets_the_standard_encoders_bytes(value: object) -> None:
    """Values orjson refuses, and enums and dates it would write its own way, get the standard encoder's bytes."""
    assert compose.canonical_json(value) == _standard(value)


def test_fingerprint_is_the_same_in_every_process() -> None:
    """The same value gives the same fingerprint under two different hash seeds."""
    value = "{'b': [1, 'x'], 'a': 'é', 'c': {'z': 1, 'y': 2}}"
    code = f"from otel_toolturn.compose import fingerprint; print(fingerprint({value}))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            check=True,
            capture_output=True,
            text=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(__import__("pathlib").Path(__file__).resolve().parents[1])},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1


@pytest.mark.parametrize("lane", ["anthropic.messages", "openai.chat_completions", "openai.responses"])
def test_tool_rounds_since_user_text(lane: Lane) -> None:
    """Rounds count assistant turns with calls since the last user text; results alone do not reset it."""
    two = build(lane, [U("go"), A(c("c1")), R("c1"), A(c("c2"), c("c3")), R("c2"), R("c3")])
    assert tool_rounds_since_user_text(two, lane=lane) == 2
    reset = build(lane, [U("go"), A(c("c1")), R("c1"), U("more"), A(c("c2")), R("c2")])
    assert tool_rounds_since_user_text(reset, lane=lane) == 1
    talk = build(lane, [U("go"), A(t("just talk"))])
    assert tool_rounds_since_user_text(talk, lane=lane) == 0


_STEPS = st.lists(
    st.one_of(
        st.just("user text"),
        st.just("reply"),
        st.integers(1, 3),  # a round: the model calls this many tools, and each result is recorded
    ),
    max_size=10,
)


def _session(steps: list[object]) -> tuple[list[Event], int]:
    """An agent's session from ``steps``, and the rounds it made since the last user text."""
    events: list[Event] = [U("go")]
    rounds, calls = 0, 0
    for step in steps:
        if step == "user text":
            events.append(U("more"))
            rounds = 0
        elif step == "reply":
            events.append(A(t("said")))
        else:
            assert isinstance(step, int)
            ids = [f"c{calls + k}" for k in range(step)]
            calls += step
            events += [A(*(c(i) for i in ids)), *(R(i) for i in ids)]
            rounds += 1
    return events, rounds


@settings(max_examples=300, deadline=None)
@given(lane=st.sampled_from(LANES), steps=_STEPS)
def test_tool_rounds_count_the_rounds_since_the_last_user_text(lane: Lane, steps: list[object]) -> None:
    """In any agent's session, the rounds counted are the model's call turns since the user last wrote."""
    events, rounds = _session(steps)
    messages = build(lane, events) if lane != "gemini.generate_content" else gemini(events)
    assert tool_rounds_since_user_text(messages, lane=lane) == rounds


def test_handoff_scope_tag_is_stripped() -> None:
    """The handoff dispatch tag is library-only: the strip rule removes it before the wire."""
    from otel_toolturn.handoff._scope import SCOPE_FIELD, tag_scoped  # noqa: PLC0415 - the handoff side of the contract

    assert SCOPE_FIELD in FRAMEWORK_FIELDS
    tagged = tag_scoped({"role": "system", "content": "p"}, "explorer:c1:0")
    assert strip_framework_fields([tagged]) == [{"role": "system", "content": "p"}]


@pytest.mark.parametrize(
    ("request_", "lane", "expected"),
    [
        ({"previous_response_id": "resp_1"}, "openai.responses", True),
        ({"previous_response_id": ""}, "openai.responses", False),
        ({"previous_response_id": None}, "openai.responses", False),
        ({"conversation": "conv_1"}, "openai.responses", True),
        ({"conversation": {"id": "conv_1"}}, "openai.responses", True),
        ({"conversation": ""}, "openai.responses", False),
        ({"conversation": None}, "openai.responses", False),
        ({}, "openai.responses", False),
        ({"previous_response_id": "resp_1"}, "openai.chat_completions", False),
    ],
)
def test_continues_server_state_only_with_a_named_response_or_conversation(
    request_: dict[str, object], lane: Lane, expected: bool
) -> None:
    """A Responses request is chained when it names a previous response or a conversation; empty or null names none."""
    assert continues_server_state(request_, lane=lane) is expected


def test_an_sdk_omitted_value_names_no_server_state() -> None:
    """The SDK's "not given" sentinel in a field is no server state."""
    openai = pytest.importorskip("openai", reason="the openai SDK is not installed")
    assert not continues_server_state({"previous_response_id": openai.NOT_GIVEN}, lane="openai.responses")


def test_the_withheld_reasons_are_the_rules_and_the_callers() -> None:
    """Every reason the tools rule gives is a withheld reason; the one more is the caller's own."""
    assert set(compose.TOOLS_WITHHELD_REASONS) == {*compose.TOOLS_WITHHELD, "caller"}


UNKNOWN_LANE = cast("Lane", "mistral.chat")
LANE_READERS: dict[str, Callable[[Lane], object]] = {
    "tool_choice_none": tool_choice_none,
    "system_prompt_pieces": lambda lane: system_prompt_pieces({}, lane=lane),
    "tool_rounds_since_user_text": lambda lane: tool_rounds_since_user_text([], lane=lane),
    "is_model_output": lambda lane: compose.is_model_output({"role": "user"}, lane=lane),
    "emitted_call_ids": lambda lane: compose.emitted_call_ids({"role": "user"}, lane=lane),
    "continues_server_state": lambda lane: continues_server_state({}, lane=lane),
    "request_field": lambda lane: compose.request_field({}, "tools", lane=lane),
    "with_tools_withheld": lambda lane: compose.with_tools_withheld({}, lane=lane),
}


@pytest.mark.parametrize("read", LANE_READERS.values(), ids=list(LANE_READERS))
def test_a_lane_outside_the_vocabulary_is_refused_not_guessed(read: Callable[[Lane], object]) -> None:
    """Every rule that reads a lane refuses one outside ``LANES`` instead of reading it as another."""
    with pytest.raises(UnknownLaneError, match=r"mistral\.chat"):
        read(UNKNOWN_LANE)
    for lane in compose.TOOL_CHOICE_LANES:
        read(lane)
    for lane in set(LANES) - set(compose.TOOL_CHOICE_LANES):  # Bedrock Converse: no "call no tool"
        with contextlib.suppress(UnsupportedLaneError):
            read(lane)


def test_bedrock_converse_has_no_tool_choice_that_calls_no_tool() -> None:
    """Converse's toolChoice is auto, any or one tool: withholding tools there is a typed error, never a guess."""
    assert set(LANES) - set(compose.TOOL_CHOICE_LANES) == {"bedrock.converse"}
    with pytest.raises(UnsupportedLaneError, match="no tool choice"):
        compose.with_tools_withheld({}, lane="bedrock.converse")
    request = {"toolConfig": {"tools": [], "toolChoice": {"auto": {}}}}
    assert compose.request_tool_choice(request, lane="bedrock.converse") == {"auto": {}}


GEMINI: Lane = "gemini.generate_content"


def _gemini_call(name: str) -> dict[str, object]:
    return {"role": "model", "parts": [{"functionCall": {"name": name, "args": {}}, "thoughtSignature": "c2ln"}]}


def _gemini_response(name: str) -> dict[str, object]:
    return {"role": "user", "parts": [{"functionResponse": {"name": name, "response": {"output": "ok"}}}]}


def test_gemini_tools_are_withheld_in_its_config_whatever_the_configs_spelling() -> None:
    """google-genai: withheld tools set ``config.tool_config`` to NONE (dict, typed or absent config), tools kept."""
    from google.genai import types  # noqa: PLC0415 - the SDK is a test dependency of this lane only

    tools: list[types.ToolUnion] = [
        types.Tool(function_declarations=[types.FunctionDeclaration(name="read", description="Read.")])
    ]
    typed = types.GenerateContentConfig(tools=tools, temperature=0.2)
    for config in (None, {"tools": tools}, typed):
        request: dict[str, object] = {"model": "gemini-3", "contents": [], "config": config}
        out = compose.with_tools_withheld(request, lane=GEMINI)
        assert request["config"] is config  # the caller's request is never changed
        choice = compose.request_tool_choice(out, lane=GEMINI)
        assert caller_withheld_tools(choice)
        assert compose.request_tools(out, lane=GEMINI) == compose.request_tools(request, lane=GEMINI)
    written = compose.with_tools_withheld({"config": typed}, lane=GEMINI)["config"]
    assert isinstance(written, types.GenerateContentConfig)
    assert isinstance(written.tool_config, types.ToolConfig)
    assert written.temperature == 0.2
    assert written.model_fields_set == {"tools", "temperature", "tool_config"}


def test_gemini_caller_choice_none_is_recognised_and_other_modes_are_not() -> None:
    """A caller's ``tool_config`` with mode NONE is the caller withholding; AUTO and ANY are not."""
    assert caller_withheld_tools({"function_calling_config": {"mode": "NONE"}})
    assert not caller_withheld_tools({"function_calling_config": {"mode": "AUTO"}})
    assert not caller_withheld_tools({"function_calling_config": {"mode": "ANY"}})
    assert not caller_withheld_tools(None)


def test_gemini_system_instruction_pieces_in_each_spelling() -> None:
    """``config.system_instruction`` as a string, a content, or a list gives its text pieces in order."""
    from google.genai import types  # noqa: PLC0415 - the SDK is a test dependency of this lane only

    def texts(instruction: object) -> list[str | None]:
        pieces = system_prompt_pieces({"config": {"system_instruction": instruction}}, lane=GEMINI)
        return [p.raw_content for p in pieces]

    assert texts("Be brief.") == ["Be brief."]
    content = types.Content(parts=[types.Part(text="Be brief."), types.Part(text="Cite files.")])
    assert texts(content) == ["Be brief.", "Cite files."]
    assert texts(["Be brief.", {"text": "Cite files."}]) == ["Be brief.", "Cite files."]
    typed = types.GenerateContentConfig(system_instruction="Be brief.")
    assert [p.raw_content for p in system_prompt_pieces({"config": typed}, lane=GEMINI)] == ["Be brief."]
    assert system_prompt_pieces({"contents": []}, lane=GEMINI) == ()


def test_gemini_tool_rounds_count_call_steps_since_the_user_spoke() -> None:
    """A step spread over consecutive model contents is one round; results do not reset it; user text does."""
    said = {"role": "model", "parts": [{"text": "Reading."}]}
    messages = [
        {"role": "user", "parts": [{"text": "go"}]},
        said,
        _gemini_call("a"),
        _gemini_response("a"),
        _gemini_call("b"),
        said,
        _gemini_response("b"),
    ]
    assert tool_rounds_since_user_text(messages, lane=GEMINI) == 2
    assert tool_rounds_since_user_text([*messages, {"role": "user", "parts": [{"text": "stop"}]}], lane=GEMINI) == 0


def test_gemini_model_contents_and_their_call_ids_as_the_lane_knows_them() -> None:
    """A ``model`` content is model output; its calls are known by id, or ``<name>#<k>`` without one."""
    with_ids = {"role": "model", "parts": [{"functionCall": {"id": "fc_1", "name": "read", "args": {}}}]}
    assert compose.is_model_output(with_ids, lane=GEMINI)
    assert not compose.is_model_output(_gemini_response("read"), lane=GEMINI)
    assert compose.emitted_call_ids(with_ids, lane=GEMINI) == ("fc_1",)
    assert compose.emitted_call_ids(_gemini_call("read"), lane=GEMINI) == ("read#1",)
    assert compose.emitted_call_ids(_gemini_response("read"), lane=GEMINI) == ()


def test_a_python_function_in_the_tools_fingerprints_the_same_in_every_process() -> None:
    """A callable (automatic function calling) is fingerprinted by its qualified name, not its address."""
    script = (
        "from otel_toolturn.compose import fingerprint\n"
        "def read(path: str) -> str:\n    return path\n"
        "print(fingerprint([read]))"
    )
    runs = {
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    assert len(runs) == 1


@pytest.mark.parametrize(
    ("item", "made"),
    [
        ({"type": "message", "role": "assistant", "content": []}, True),
        ({"role": "assistant", "content": "hi"}, True),
        ({"type": "reasoning", "id": "rs_1", "summary": []}, True),
        ({"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "s", "tools": []}, True),
        ({"type": "mcp_approval_request", "id": "mcpr_1", "name": "f", "arguments": "{}", "server_label": "s"}, True),
        ({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}, True),
        ({"type": "web_search_call", "id": "ws_1", "status": "completed"}, True),
        ({"type": "shell_call", "call_id": "c1", "action": {"commands": ["ls"]}}, True),
        ({"type": "computer_call", "call_id": "c1", "action": {"type": "wait"}, "pending_safety_checks": []}, True),
        ({"type": "shell_call_output", "call_id": "c1", "output": []}, False),
        ({"type": "function_call_output", "call_id": "c1", "output": "ok"}, False),
        ({"type": "message", "role": "user", "content": "go"}, False),
        ({"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}, False),
    ],
)
def test_who_made_a_responses_item_has_one_answer(item: dict[str, object], made: bool) -> None:
    """``compose.is_model_output`` and the Responses lane agree on every item kind (MCP listings and requests too)."""
    from otel_toolturn.lanes import openai_responses  # noqa: PLC0415 - the lane's own reading, compared

    assert compose.is_model_output(item, lane="openai.responses") is made
    assert openai_responses.model_made(item) is made


@pytest.mark.parametrize("kind", ["local_shell_call", "shell_call", "apply_patch_call", "computer_call"])
def test_a_responses_call_the_agent_runs_emits_its_call_id(kind: str) -> None:
    """``compose.emitted_call_ids`` reads every kind of Responses call the lane reads, not function calls alone."""
    assert compose.emitted_call_ids({"type": kind, "call_id": "c7"}, lane="openai.responses") == ("c7",)
