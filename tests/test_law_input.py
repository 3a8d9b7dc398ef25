"""Bad and unknown input: typed errors that name what arrived, or untouched pass-through, never a crash."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import otel_toolturn
from otel_toolturn import (
    INCOMPLETE_CAUSES,
    LANES,
    REPAIR_DROPS,
    REPAIR_FORMS,
    Lane,
    RepairForm,
    ToolTurnInputError,
    UnknownLaneError,
    ensure_tool_turn_invariants,
    validate,
)
from otel_toolturn._vocab import STREAM_DROP_CAUSES

ROOT = Path(__file__).resolve().parents[1]


def test_the_lossy_table_covers_every_form_exactly() -> None:
    """REPAIR_DROPS has one entry per repair form, and only the forms that leave something out drop content."""
    assert set(REPAIR_DROPS) == set(REPAIR_FORMS) == set(get_args(RepairForm))
    assert {f for f, drops in REPAIR_DROPS.items() if drops} == {
        "duplicate_call",
        "orphan_result",
        "duplicate_item",
        "dangling_reasoning",
        "unanswerable_call",
    }


def test_stream_drop_causes_are_the_incomplete_causes_but_the_synthesised_one() -> None:
    """The stream's drop causes are the incomplete causes less the view's own missing_result_synthesized."""
    assert set(INCOMPLETE_CAUSES) - set(STREAM_DROP_CAUSES) == {"missing_result_synthesized"}


def test_public_surface_matches_all() -> None:
    """Every name in __all__ exists once (ruff's RUF022 keeps it sorted), and no public name is left out."""
    assert len(set(otel_toolturn.__all__)) == len(otel_toolturn.__all__)
    for name in otel_toolturn.__all__:
        assert hasattr(otel_toolturn, name), name
    public = {n for n in vars(otel_toolturn) if not n.startswith("_") and n not in {"annotations"}}
    modules = {n for n in public if type(getattr(otel_toolturn, n)).__name__ == "module"}
    assert public - modules <= set(otel_toolturn.__all__)


def test_unknown_lane_is_a_typed_error_naming_the_known_ones() -> None:
    """An unknown lane name raises UnknownLaneError listing the lanes."""
    with pytest.raises(UnknownLaneError, match=r"'gemini'.*anthropic\.messages"):
        ensure_tool_turn_invariants([], lane="gemini")  # type: ignore[arg-type]


@pytest.mark.parametrize("lane", LANES)
def test_an_iterator_is_rejected_with_advice(lane: Lane) -> None:
    """A one-shot iterator is not silently consumed: the error says to materialise it."""
    with pytest.raises(ToolTurnInputError, match=r"list\(\)"):
        ensure_tool_turn_invariants(iter([]), lane=lane)  # type: ignore[arg-type]


def test_a_string_input_is_a_plain_responses_input() -> None:
    """A Responses string input has no tool turns and comes back as it is; other lanes reject a string."""
    assert ensure_tool_turn_invariants("hello", lane="openai.responses").messages == "hello"
    with pytest.raises(ToolTurnInputError, match="got a string"):
        ensure_tool_turn_invariants("hello", lane="openai.chat_completions")


@pytest.mark.parametrize(
    ("lane", "call"),
    [
        ("anthropic.messages", {"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}),
        ("anthropic.messages", {"role": "assistant", "content": [{"type": "tool_use", "id": 7, "name": "f"}]}),
        ("openai.chat_completions", {"role": "assistant", "tool_calls": [{"type": "function", "function": {}}]}),
        ("openai.chat_completions", {"role": "assistant", "tool_calls": "call_1"}),
        ("openai.responses", {"type": "function_call", "call_id": "", "name": "f", "arguments": "{}"}),
    ],
)
def test_a_call_without_a_readable_id_is_rejected_naming_its_position(lane: Lane, call: object) -> None:
    """A call whose id cannot be read raises ToolTurnInputError with its position and what was expected."""
    with pytest.raises(ToolTurnInputError) as caught:
        ensure_tool_turn_invariants([{"role": "user", "content": "q"}, call], lane=lane)
    assert caught.value.position == 1
    assert "item 1" in str(caught.value)


@pytest.mark.parametrize(
    ("lane", "result"),
    [
        ("anthropic.messages", {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}),
        ("openai.chat_completions", {"role": "tool", "tool_call_id": None, "content": "x"}),
        ("openai.responses", {"type": "function_call_output", "output": "x"}),
    ],
)
def test_a_result_without_a_readable_id_answers_nothing(lane: Lane, result: object) -> None:
    """A result whose id cannot be read is left out as an orphan, reported with the id ''."""
    view = ensure_tool_turn_invariants([{"role": "user", "content": "q"}, result], lane=lane)
    assert [(r.form, r.tool_call_ids) for r in view.repairs] == [("orphan_result", ("",))]


@pytest.mark.parametrize("lane", LANES)
def test_an_uncopyable_item_that_needs_a_repair_is_a_typed_error(lane: Lane) -> None:
    """An item of a type the law cannot copy is rejected by name rather than mutated."""

    class Opaque:
        role = "assistant"
        type = "function_call"
        call_id = "c1"
        name = "f"
        arguments = "{}"
        content = ({"type": "tool_use", "id": "c1", "name": "f"}, {"type": "tool_use", "id": "c1", "name": "f"})
        tool_calls = ({"id": "c1", "function": {"name": "f"}}, {"id": "c1", "function": {"name": "f"}})

    class OpaqueModel(Opaque):
        role = "model"
        parts = ({"functionCall": {"name": "f", "id": "c1"}}, {"functionCall": {"name": "f", "id": "c1"}})

    class OpaqueConverse:
        role = "assistant"
        content = ({"toolUse": {"toolUseId": "c1", "name": "f"}}, {"toolUse": {"toolUseId": "c1", "name": "f"}})

    items: list[object] = (
        [Opaque(), {"role": "user", "content": "q"}, Opaque()] if lane == "openai.responses" else [Opaque()]
    )
    if lane == "gemini.generate_content":
        items = [{"role": "user", "parts": [{"text": "q"}]}, OpaqueModel()]
    if lane == "bedrock.converse":
        items = [OpaqueConverse()]
    with pytest.raises(ToolTurnInputError, match="Opaque"):
        ensure_tool_turn_invariants(items, lane=lane)


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)
_KEYS = st.sampled_from(["role", "content", "type", "id", "tool_use_id", "tool_calls", "tool_call_id", "call_id"])
_ITEMS = st.dictionaries(_KEYS, _JSONISH | st.sampled_from(["user", "assistant", "tool", "tool_use", "tool_result"]))


@settings(max_examples=400, deadline=None)
@given(st.lists(_ITEMS | _JSONISH, max_size=6), st.sampled_from(LANES))
def test_no_input_makes_the_law_fail_with_an_internal_error(items: list[object], lane: Lane) -> None:
    """Arbitrary JSON-like input either comes out or raises ToolTurnInputError — never KeyError and the like."""
    try:
        ensure_tool_turn_invariants(items, lane=lane)
        validate(items, lane=lane)
    except ToolTurnInputError:
        pass


@pytest.mark.parametrize("lane", LANES)
def test_shapes_the_law_does_not_know_pass_through_untouched(lane: Lane) -> None:
    """Unknown roles, item types and legacy function messages come back as the very same list."""
    given_list: list[object] = [
        {"role": "system", "content": "be brief"},
        {"role": "function", "name": "legacy", "content": "1"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"role": "user", "content": [{"type": "image", "source": {}}]},
        42,
        None,
    ]
    view = ensure_tool_turn_invariants(given_list, lane=lane)
    assert view.messages is given_list


def test_the_law_imports_neither_opentelemetry_nor_wrapt() -> None:
    """Importing the package and reaching the law and validate loads no OpenTelemetry and no wrapt module."""
    script = (
        "import sys, otel_toolturn\n"
        "otel_toolturn.ensure_tool_turn_invariants, otel_toolturn.validate\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('opentelemetry', 'wrapt')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"
    loaded = subprocess.run(
        [sys.executable, "-c", "import otel_toolturn, sys; otel_toolturn.init; print('wrapt' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert loaded.stdout.strip() == "True", "the instrumentation still loads on first use"


@pytest.mark.parametrize(
    ("call_id", "said"),
    [
        ({"secret": "user text"}, "a dict of 1 key"),
        (["user text"], "a list of 1 item"),
        ("", "an empty string"),
        (None, "None"),
        (7, "a value of type 'int'"),
    ],
)
def test_an_unreadable_call_id_is_named_by_type_and_size_never_by_content(call_id: object, said: str) -> None:
    """The input error names the position, what arrived (its type and size) and what was expected, never content."""
    messages = [{"role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": "f", "input": {}}]}]
    with pytest.raises(ToolTurnInputError) as raised:
        ensure_tool_turn_invariants(messages, lane="anthropic.messages")
    message = str(raised.value)
    assert "item 0" in message
    assert said in message
    assert "user text" not in message
