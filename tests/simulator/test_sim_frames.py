"""The pure frame edits behind the misbehaviours, and the scripted-turn values."""

from __future__ import annotations

import pytest

from otel_toolturn import Lane
from otel_toolturn.simulator import DEFAULT_ANSWER, MISBEHAVIOURS, ScriptedCall, ScriptedTurn, default_turn
from otel_toolturn.simulator._frames import (
    BAD_FRAME_DATA,
    Frame,
    FrameRole,
    apply_misbehaviours,
    number_sequence,
    pieces,
)


def frame(name: str, role: FrameRole) -> Frame:
    return Frame(data={"type": name}, role=role, event=name)


STREAM = [
    frame("start", "head"),
    frame("text", "content"),
    frame("arg1", "arguments"),
    frame("arg2", "arguments"),
    frame("arg3", "arguments"),
    frame("arg4", "arguments"),
    frame("stop", "finish"),
    frame("usage", "trailer"),
    Frame(data="[DONE]", role="done"),
]
AFTER_END = [frame("late", "content"), frame("stop again", "finish")]


def names(frames: list[Frame]) -> list[str]:
    return [f.data if isinstance(f.data, str) else str(f.data["type"]) for f in frames]


@pytest.mark.parametrize("text", ["", "x", "{}", '{"key": "value"}', "a" * 101])
def test_pieces_rejoin_and_split_whenever_possible(text: str) -> None:
    """Pieces rejoin to the text, none is empty, and any text of two characters or more gives two or more."""
    got = pieces(text, 4)
    assert "".join(got) == text
    assert all(got)
    assert len(got) <= 4
    assert len(got) >= min(2, len(text))


def test_no_misbehaviour_changes_nothing() -> None:
    """With no misbehaviour the frames come back as they were."""
    assert apply_misbehaviours(STREAM, (), after_end=AFTER_END, bad_frame_event=None) == STREAM


def test_cut_arguments_keeps_half_the_first_arguments_and_nothing_after() -> None:
    """``cut_arguments`` keeps the first half of the first argument run and ends there."""
    out = apply_misbehaviours(STREAM, ("cut_arguments",), after_end=AFTER_END, bad_frame_event=None)
    assert names(out) == ["start", "text", "arg1", "arg2"]


def test_no_finish_stops_before_the_terminal_frame() -> None:
    """``no_finish`` drops the terminal frame and everything after it."""
    out = apply_misbehaviours(STREAM, ("no_finish",), after_end=AFTER_END, bad_frame_event=None)
    assert names(out) == ["start", "text", "arg1", "arg2", "arg3", "arg4"]


def test_frames_after_end_go_ahead_of_done() -> None:
    """``frames_after_end`` inserts the lane's late frames after the trailer, ahead of ``[DONE]``."""
    out = apply_misbehaviours(STREAM, ("frames_after_end",), after_end=AFTER_END, bad_frame_event=None)
    assert names(out)[-4:] == ["usage", "late", "stop again", "[DONE]"]
    no_done = apply_misbehaviours(STREAM[:-1], ("frames_after_end",), after_end=AFTER_END, bad_frame_event=None)
    assert names(no_done)[-2:] == ["late", "stop again"]


def test_bad_frame_comes_second_with_the_lanes_event_name() -> None:
    """``bad_frame`` puts one unreadable frame right after the first, named as the lane asks."""
    out = apply_misbehaviours(STREAM, ("bad_frame",), after_end=AFTER_END, bad_frame_event="content_block_delta")
    assert out[1] == Frame(data=BAD_FRAME_DATA, role="content", event="content_block_delta")
    assert out[:1] + out[2:] == STREAM


def test_number_sequence_counts_json_frames_only() -> None:
    """``sequence_number`` runs 0, 1, 2 … over JSON frames; raw-text frames pass through unnumbered."""
    out = number_sequence([STREAM[0], Frame(data=BAD_FRAME_DATA, role="content"), STREAM[1]])
    assert [f.data if isinstance(f.data, str) else f.data["sequence_number"] for f in out] == [0, BAD_FRAME_DATA, 1]


def test_scripted_turn_refuses_what_it_cannot_do() -> None:
    """A turn with neither text nor calls, an unknown misbehaviour, or a cut without a call is refused."""
    with pytest.raises(ValueError, match="neither"):
        ScriptedTurn()
    with pytest.raises(ValueError, match="unknown misbehaviour"):
        ScriptedTurn(text="x", misbehaviours=("explode",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a call"):
        ScriptedTurn(text="x", misbehaviours=("cut_arguments",))
    with pytest.raises(ValueError, match="needs a call"):
        ScriptedTurn(text="x", misbehaviours=("malformed_call",))
    assert len(MISBEHAVIOURS) == 5


@pytest.mark.parametrize(
    ("body", "lane", "expected"),
    [
        ({"messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "t"}]}, "anthropic.messages", "t"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "anthropic.messages", None),
        (
            {
                "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]}],
                "tools": [{"name": "t"}],
            },
            "anthropic.messages",
            None,
        ),
        (
            {"messages": [{"role": "user", "content": "hi"}], "tools": [{"function": {"name": "f"}}]},
            "openai.chat_completions",
            "f",
        ),
        (
            {"messages": [{"role": "tool", "content": "r"}], "tools": [{"function": {"name": "f"}}]},
            "openai.chat_completions",
            None,
        ),
        ({"input": "hi", "tools": [{"type": "function", "name": "r"}]}, "openai.responses", "r"),
        ({"input": [{"type": "function_call_output"}], "tools": [{"name": "r"}]}, "openai.responses", None),
        (
            {
                "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                "tools": [{"functionDeclarations": [{"name": "g"}]}],
            },
            "gemini.generate_content",
            "g",
        ),
        (
            {"contents": [{"parts": [{"text": "hi"}]}], "tools": [{"function_declarations": [{"name": "s"}]}]},
            "gemini.generate_content",
            "s",
        ),
        ({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}, "gemini.generate_content", None),
        (
            {
                "contents": [{"role": "user", "parts": [{"functionResponse": {"name": "g", "response": {}}}]}],
                "tools": [{"functionDeclarations": [{"name": "g"}]}],
            },
            "gemini.generate_content",
            None,
        ),
    ],
)
def test_default_turn_per_lane(body: dict[str, object], lane: Lane, expected: str | None) -> None:
    """The default turn calls the first declared tool after user text; it answers after a result or without tools."""
    turn = default_turn(body, lane=lane)
    if expected is None:
        assert turn == ScriptedTurn(text=DEFAULT_ANSWER)
    else:
        assert turn == ScriptedTurn(calls=(ScriptedCall(name=expected),))
