"""The fail-closed judge of a streamed tool call: the argument table, the missing name, the slot's verdict."""

from __future__ import annotations

import pytest

from otel_toolturn.streams import StreamDrop, parse_streamed_tool_args
from otel_toolturn.streams._tool_calls import CallSlot, judge_call, name_missing_cause

PARSE_CASES = [
    # text, close evidence, outcome
    ('{"city": "Paris"}', True, {"city": "Paris"}),  # valid object → that object
    ('{"city": "Paris"}', False, {"city": "Paris"}),  # ... whatever the close evidence
    ("{}", True, {}),  # a complete {} included
    ("{}", False, {}),
    ("", True, {}),  # no bytes, closed → a no-argument call
    ("", False, None),  # no bytes, not closed → nothing says it was a no-argument call
    ('{"city": "Par', True, None),  # truncated
    ('{"city": "Par', False, None),
    ('{"unit": celsius}', True, None),  # invalid JSON
    ('"a string"', True, None),  # top-level string
    ("[1, 2]", True, None),  # top-level array
    ("42", True, None),  # top-level number
    ("null", True, None),  # top-level null
    ("true", True, None),
    ("   ", True, None),  # whitespace is bytes, and not an object
    ('{"x": NaN}', True, None),  # not JSON
    ('{"x": Infinity}', True, None),
    ('{"a": 1} trailing', True, None),
    (' {"a": 1} ', False, {"a": 1}),  # surrounding whitespace is JSON
]


@pytest.mark.parametrize(("text", "closed", "expected"), PARSE_CASES)
def test_parse_streamed_tool_args_table(text: str, closed: bool, expected: dict[str, object] | None) -> None:
    """Each case of the fail-closed argument table gives its stated outcome."""
    assert parse_streamed_tool_args(text, closed=closed) == expected


def test_parse_streamed_tool_args_returns_a_fresh_object_every_time() -> None:
    """Two judgements of the same text never share a dict (callers must not cache outcomes)."""
    first = parse_streamed_tool_args("", closed=True)
    second = parse_streamed_tool_args("", closed=True)
    assert first == second == {}
    assert first is not second


def test_parse_streamed_tool_args_closed_is_keyword_only() -> None:
    """The close evidence cannot be passed positionally or left out."""
    with pytest.raises(TypeError):
        parse_streamed_tool_args("{}", True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        parse_streamed_tool_args("{}")  # type: ignore[call-arg]


@pytest.mark.parametrize(("closed", "cause"), [(True, "unnamed"), (False, "truncated")])
def test_name_missing_cause(closed: bool, cause: str) -> None:
    """A closed slot without a name was sent without one; an unclosed one was cut."""
    assert name_missing_cause(closed=closed) == cause


def slot(*, name: str = "f", parts: tuple[str, ...] = (), final: str | None = None, initial: object = None) -> CallSlot:
    made = CallSlot(index=0, call_id="call_1", name=name)
    made.parts.extend(parts)
    made.final = final
    made.initial = initial if isinstance(initial, dict) else None
    return made


def test_judge_call_names_first_then_arguments() -> None:
    """No name: unnamed when closed, truncated when not; a named slot is judged by its argument text."""
    assert judge_call(slot(name=""), closed=True) == StreamDrop(cause="unnamed", count=1, call_ids=("call_1",))
    assert judge_call(slot(name=""), closed=False) == StreamDrop(cause="truncated", count=1, call_ids=("call_1",))
    assert judge_call(slot(parts=('{"a": ', "1")), closed=True) == StreamDrop(
        cause="truncated", count=1, call_ids=("call_1",)
    )
    call = judge_call(slot(parts=('{"a": ', "1}")), closed=False)
    assert not isinstance(call, StreamDrop)
    assert (call.call_id, call.name, dict(call.arguments)) == ("call_1", "f", {"a": 1})


def test_judge_call_done_text_wins_and_an_opening_object_needs_the_close() -> None:
    """A done frame's text wins over the fragments; an opening arguments object runs only when closed."""
    won = judge_call(slot(parts=("{broken",), final='{"b": 2}'), closed=True)
    assert not isinstance(won, StreamDrop)
    assert dict(won.arguments) == {"b": 2}
    opened = judge_call(slot(initial={"c": 3}), closed=True)
    assert not isinstance(opened, StreamDrop)
    assert dict(opened.arguments) == {"c": 3}
    assert isinstance(judge_call(slot(initial={"c": 3}), closed=False), StreamDrop)
