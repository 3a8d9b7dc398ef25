"""Scope keys and stripping a dispatch's system messages."""

from __future__ import annotations

import pytest

from otel_toolturn import HandoffError, Lane
from otel_toolturn.handoff import HandoffOutcome, HandoffScopes, close_handoff, handoff_scope_key, push_scoped
from otel_toolturn.handoff._close import NO_MARKS
from otel_toolturn.handoff._scope import SCOPE_FIELD, scope_of, strip_handoff_system_messages, tag_scoped
from otel_toolturn.handoff._texts import handoff_resume_text, handoff_stopped_text
from otel_toolturn.handoff._wire import HANDOFF_LANES
from tests.handoff.threads import contents, persona, snapshot

TOP = HandoffScopes()
KEY = handoff_scope_key(TOP, "explorer", "call-1")


def _finish(messages: list[object], *, scope_key: str, tool_name: str, body: str, lane: Lane) -> list[object]:
    """Close a handoff whose body succeeded and set no marks."""
    outcome = HandoffOutcome(kind="success", text=body)
    return close_handoff(
        messages, scope_key=scope_key, tool_name=tool_name, outcome=outcome, marks=NO_MARKS, lane=lane
    ).messages


def test_key_is_tool_call_id_and_depth() -> None:
    """The key is ``<tool>:<call id>:<depth>``, depth 0 with no dispatch open."""
    assert KEY == "explorer:call-1:0"
    assert handoff_scope_key(TOP.enter(KEY), "oracle", "call-9") == "oracle:call-9:1"


def test_nested_inside_itself_without_ids_gets_a_distinct_key() -> None:
    """A handoff nested in itself, same name and empty id, still gets its own key."""
    outer = handoff_scope_key(TOP, "subagent", "")
    inner = handoff_scope_key(TOP.enter(outer), "subagent", "")
    assert (outer, inner) == ("subagent::0", "subagent::1")


def test_key_before_entering_equals_key_after_leaving() -> None:
    """Computed before entering and after leaving, the key is the same."""
    outer = TOP.enter(handoff_scope_key(TOP, "outer", "o"))
    before = handoff_scope_key(outer, "subagent", "")
    inside = outer.enter(before)
    assert inside.current == before
    after = inside.exit()
    assert after == outer
    assert handoff_scope_key(after, "subagent", "") == before


def test_leaving_with_no_scope_open_is_a_handoff_error() -> None:
    """Leaving a scope that was never entered is a typed error."""
    with pytest.raises(HandoffError, match="no handoff scope is open"):
        TOP.exit()


def test_push_scoped_tags_with_the_innermost_open_dispatch_only() -> None:
    """A message pushed while a dispatch is open carries its key; with none open it is pushed as is."""
    message = {"role": "system", "content": "persona"}
    plain = push_scoped([], message, scopes=TOP)
    assert plain[0] is message
    inner = TOP.enter("outer:o:0").enter("inner:i:1")
    tagged = push_scoped([], message, scopes=inner)
    assert tagged == [{"role": "system", "content": "persona", SCOPE_FIELD: "inner:i:1"}]
    assert SCOPE_FIELD not in message


def test_tagging_a_typed_object_is_a_handoff_error() -> None:
    """Only a dict can carry the library-only tag: anything else is a typed error naming its type."""
    with pytest.raises(HandoffError, match="'tuple'"):
        tag_scoped(("system", "persona"), KEY)


def _after_body(lane: Lane) -> list[object]:
    """The caller's persona and request, then the body's persona and work pushed inside the dispatch."""
    scopes = TOP.enter(KEY)
    thread: list[object] = [persona(lane, "caller persona"), {"role": "user", "content": "hello"}]
    thread = push_scoped(thread, persona(lane, "subagent persona"), scopes=scopes)
    return [*thread, {"role": "user", "content": "brief"}, {"role": "assistant", "content": "the answer"}]


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_finish_strips_the_body_persona_and_hands_back(lane: Lane) -> None:
    """Closing strips the dispatch's messages, keeps the caller's, pushes the hand-back."""
    thread = _after_body(lane)
    before = snapshot(thread)
    out = _finish(thread, scope_key=KEY, tool_name="explorer", body="the answer", lane=lane)
    assert contents(out) == [
        "caller persona",
        "hello",
        "brief",
        "the answer",
        handoff_resume_text("explorer", "the answer"),
    ]
    assert out[-1] == {"role": "user", "content": handoff_resume_text("explorer", "the answer")}
    kept = [thread[0], thread[1], thread[3], thread[4]]
    assert all(a is b for a, b in zip(out[:-1], kept, strict=True))
    assert thread == before


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_finish_removes_only_this_dispatch_messages(lane: Lane) -> None:
    """Another dispatch's tagged messages stay."""
    first = _after_body(lane)
    second_key = handoff_scope_key(TOP, "explorer", "call-2")
    thread = push_scoped(first, persona(lane, "second persona"), scopes=TOP.enter(second_key))
    out = _finish(thread, scope_key=second_key, tool_name="explorer", body="second answer", lane=lane)
    assert "subagent persona" in contents(out)
    assert "second persona" not in contents(out)


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_strip_survives_compaction_shifting_indexes(lane: Lane) -> None:
    """Compaction replaces a run with a summary; the tag rides with the kept message."""
    thread = _after_body(lane)
    compacted = [thread[0], persona(lane, "summary of earlier turns"), {"role": "user", "content": "more"}, *thread[2:]]
    out = _finish(compacted, scope_key=KEY, tool_name="explorer", body="the answer", lane=lane)
    assert contents(out) == [
        "caller persona",
        "summary of earlier turns",
        "more",
        "brief",
        "the answer",
        handoff_resume_text("explorer", "the answer"),
    ]


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_compacted_away_dispatch_still_hands_back(lane: Lane) -> None:
    """With the tagged messages summarised away, nothing is stripped and the hand-back comes."""
    thread = [persona(lane, "caller persona"), persona(lane, "summary"), {"role": "assistant", "content": "x"}]
    out = _finish(thread, scope_key=KEY, tool_name="explorer", body="x", lane=lane)
    assert out[:3] == thread
    assert contents(out)[3] == handoff_resume_text("explorer", "x")


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_nested_dispatches_strip_inner_persona_with_inner_hand_back(lane: Lane) -> None:
    """The inner persona goes with the inner hand-back; the outer with the outer one."""
    outer_key = handoff_scope_key(TOP, "outerAgent", "call-o")
    outer = TOP.enter(outer_key)
    thread = push_scoped([{"role": "user", "content": "hello"}], persona(lane, "outer persona"), scopes=outer)
    inner_key = handoff_scope_key(outer, "subagent", "call-i")
    inner = outer.enter(inner_key)
    thread = push_scoped(thread, persona(lane, "inner persona"), scopes=inner)
    thread = [*thread, {"role": "assistant", "content": "inner answer"}]
    assert handoff_scope_key(inner.exit(), "subagent", "call-i") == inner_key
    thread = _finish(thread, scope_key=inner_key, tool_name="subagent", body="inner answer", lane=lane)
    assert "outer persona" in contents(thread)
    assert "inner persona" not in contents(thread)
    thread = [*thread, {"role": "assistant", "content": "outer answer"}]
    thread = _finish(thread, scope_key=outer_key, tool_name="outerAgent", body="outer answer", lane=lane)
    assert contents(thread) == [
        "hello",
        "inner answer",
        handoff_resume_text("subagent", "inner answer"),
        "outer answer",
        handoff_resume_text("outerAgent", "outer answer"),
    ]


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_self_nested_without_ids_strips_only_the_inner_persona(lane: Lane) -> None:
    """Same name, empty ids — the inner close leaves the outer persona."""
    outer_key = handoff_scope_key(TOP, "subagent", "")
    outer = TOP.enter(outer_key)
    thread = push_scoped([{"role": "user", "content": "hello"}], persona(lane, "outer persona"), scopes=outer)
    inner_key = handoff_scope_key(outer, "subagent", "")
    thread = push_scoped(thread, persona(lane, "inner persona"), scopes=outer.enter(inner_key))
    out = _finish(thread, scope_key=inner_key, tool_name="subagent", body="inner answer", lane=lane)
    assert [scope_of(m) for m in out] == [None, outer_key, None]
    assert "inner persona" not in contents(out)


@pytest.mark.parametrize("lane", HANDOFF_LANES)
def test_finish_stopped_strips_and_says_the_body_stopped(lane: Lane) -> None:
    """A stopped handoff strips the same way and hands back with the stopped text."""
    out = close_handoff(
        _after_body(lane),
        scope_key=KEY,
        tool_name="explorer",
        outcome=HandoffOutcome(kind="stopped", text="timeout"),
        marks=NO_MARKS,
        lane=lane,
    ).messages
    assert "subagent persona" not in contents(out)
    assert contents(out)[-1] == handoff_stopped_text("explorer", "timeout")


def test_strip_alone_keeps_every_other_message_object() -> None:
    """Stripping without a hand-back (a cancelled dispatch) keeps the other messages as the same objects."""
    thread = _after_body("openai.chat_completions")
    out = strip_handoff_system_messages(thread, KEY)
    assert out is not thread
    assert len(out) == 4
    assert all(any(m is n for n in thread) for m in out)
    assert strip_handoff_system_messages(out, KEY) == out
