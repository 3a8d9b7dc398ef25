"""Properties over generated streams, per lane: a cut call never runs; a whole one runs with its exact arguments."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import OBSERVED_LANES
from tests.streams._drive import raw_report, sdk_report
from tests.streams._frames import Frame, a_tool_turn, c_tool_turn, r_tool_turn

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points) if b > a]


# The lanes whose call arguments stream as text fragments in SSE frames (Gemini's arrive whole:
# test_streams_gemini_properties; Bedrock's event stream: test_streams_bedrock).
FRAGMENT_LANES: tuple[Lane, ...] = tuple(
    lane for lane in OBSERVED_LANES if lane not in {"gemini.generate_content", "bedrock.converse"}
)

# A turn with the call left open and an ending that closes nothing: (lane, frames builder)
OPEN_TURNS: dict[Lane, list[Callable[[list[str]], list[Frame]]]] = {
    "anthropic.messages": [
        lambda parts: a_tool_turn("id_1", "f", parts, close=False, stop="max_tokens"),
        lambda parts: a_tool_turn("id_1", "f", parts, close=False, stop=None),
    ],
    "openai.chat_completions": [
        lambda parts: c_tool_turn("id_1", "f", parts, finish="length"),
        lambda parts: c_tool_turn("id_1", "f", parts, finish=None),
    ],
    "openai.responses": [
        lambda parts: r_tool_turn("id_1", "f", parts, done=False, end="incomplete"),
        lambda parts: r_tool_turn("id_1", "f", parts, done=False, end=None),
    ],
}
CLOSED_TURNS: dict[Lane, Callable[[list[str]], list[Frame]]] = {
    "anthropic.messages": lambda parts: a_tool_turn("id_1", "f", parts, close=True, stop="tool_use"),
    "openai.chat_completions": lambda parts: c_tool_turn("id_1", "f", parts, finish="tool_calls"),
    "openai.responses": lambda parts: r_tool_turn("id_1", "f", parts, done=True, end="completed"),
}


@settings(max_examples=150, deadline=None)
@given(
    lane=st.sampled_from(FRAGMENT_LANES),
    args=arguments,
    cut=st.integers(min_value=0),
    cuts=st.lists(st.integers(min_value=0), max_size=6),
    ending=st.integers(min_value=0, max_value=1),
)
def test_a_cut_call_never_runs(lane: Lane, args: dict[str, object], cut: int, cuts: list[int], ending: int) -> None:
    """Any proper prefix of the arguments, in any chunking, with any ending that closes nothing: a truncated drop."""
    text = json.dumps(args)
    prefix = text[: cut % len(text)]
    r = raw_report(lane, OPEN_TURNS[lane][ending](split(prefix, cuts)))
    assert r.calls == ()
    assert [(d.cause, d.count, d.call_ids) for d in r.drops] == [("truncated", 1, ("id_1",))]


@settings(max_examples=150, deadline=None)
@given(lane=st.sampled_from(FRAGMENT_LANES), args=arguments, cuts=st.lists(st.integers(min_value=0), max_size=6))
def test_a_whole_call_runs_with_its_exact_arguments(lane: Lane, args: dict[str, object], cuts: list[int]) -> None:
    """The whole arguments, in any chunking, closed: one call whose arguments equal the original object."""
    r = raw_report(lane, CLOSED_TURNS[lane](split(json.dumps(args), cuts)))
    assert r.drops == ()
    assert [dict(c.arguments) for c in r.calls] == [json.loads(json.dumps(args))]


@settings(max_examples=20, deadline=None)
@given(
    lane=st.sampled_from(FRAGMENT_LANES),
    args=arguments,
    cut=st.integers(min_value=0),
    cuts=st.lists(st.integers(0), max_size=4),
)
def test_the_sdk_path_agrees_on_cut_calls(lane: Lane, args: dict[str, object], cut: int, cuts: list[int]) -> None:
    """Through the real SDK's own event objects a cut call is dropped exactly as from the raw frames."""
    text = json.dumps(args)
    frames = OPEN_TURNS[lane][0](split(text[: cut % len(text)], cuts))
    assert sdk_report(lane, frames).drops == raw_report(lane, frames).drops
