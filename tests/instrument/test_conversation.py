"""The conversation state: repeats told from new breaks, prefix changes reported with their cause, bounded."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from otel_toolturn import Lane, compose
from otel_toolturn._law import ToolTurnRepair
from otel_toolturn.instrument import _conversation, names
from otel_toolturn.instrument._config import Options
from otel_toolturn.instrument._conversation import (
    Conversations,
    PrefixChange,
    Previous,
    Sighting,
    compare,
    repair_keys,
)
from otel_toolturn.instrument._request import prepare_request
from otel_toolturn.lanes import adapter_for
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.wire import MODEL, Wire
from tests.transcripts import A, Event, R, U, build, c, t

CHAT: Lane = "openai.chat_completions"


def _chat(wire: Wire, messages: list[Any]) -> None:
    wire.openai().chat.completions.create(model=MODEL, messages=messages)


def _changes(otel: Otel) -> list[tuple[object, object]]:
    return [
        (e[names.PREFIX_CHANGE_POSITION], e[names.PREFIX_CHANGE_CAUSE]) for e in otel.events(names.EVENT_PREFIX_CHANGE)
    ]


def test_a_break_resent_on_five_requests_is_one_break_and_five_repairs(instrument: Instrument) -> None:
    """One broken turn resent over five requests: five repair events (the first new, then repeats), one break."""
    otel = instrument(mode="repair")
    wire = Wire()
    transcript: list[Any] = build(CHAT, [U("go"), A(c("c1"), c("c2")), R("c1"), U("next")])
    for n in range(5):
        _chat(wire, transcript)
        transcript += build(CHAT, [A(t(f"answer {n}")), U(f"more {n}")])
    events = otel.events(names.EVENT_REPAIR)
    assert [(e[names.REPAIR_FORM], e[names.REPAIR_TOOL_CALL_IDS]) for e in events] == [("missing_result", ("c2",))] * 5
    assert [e[names.REPAIR_REPEAT] for e in events] == [False, True, True, True, True]
    assert otel.total(names.REPAIRS.name) == 5
    assert otel.total(names.BREAKS.name) == 1
    assert otel.total(names.BREAKS.name, toolturn__repair__form="missing_result", toolturn__lane=CHAT) == 1
    assert _changes(otel) == []

    transcript += build(CHAT, [A(c("c9")), U("skip that")])
    _chat(wire, transcript)
    latest = otel.events(names.EVENT_REPAIR)[5:]
    assert [(e[names.REPAIR_TOOL_CALL_IDS], e[names.REPAIR_REPEAT]) for e in latest] == [
        (("c2",), True),
        (("c9",), False),
    ]
    assert otel.total(names.REPAIRS.name) == 7
    assert otel.total(names.BREAKS.name) == 2


def test_observe_mode_tells_repeats_the_same_way(instrument: Instrument) -> None:
    """Observe mode: the would-be repairs of a resent break repeat; the break is counted once."""
    otel = instrument(mode="observe")
    wire = Wire()
    transcript: list[Any] = build(CHAT, [U("go"), A(c("c1")), U("next")])
    for n in range(3):
        _chat(wire, transcript)
        transcript += build(CHAT, [A(t(f"answer {n}")), U(f"more {n}")])
    assert [e[names.REPAIR_REPEAT] for e in otel.events(names.EVENT_REPAIR)] == [False, True, True]
    assert otel.total(names.BREAKS.name) == 1


def test_two_conversations_with_the_same_break_each_count_it(instrument: Instrument) -> None:
    """The same broken turn in two conversations (other openings): each is a break of its own."""
    otel = instrument()
    wire = Wire()
    for opening in ("first task", "second task"):
        _chat(wire, build(CHAT, [U(opening), A(c("c1")), U("next")]))
    assert [e[names.REPAIR_REPEAT] for e in otel.events(names.EVENT_REPAIR)] == [False, False]
    assert otel.total(names.BREAKS.name) == 2


def test_an_append_only_session_reports_no_prefix_change(instrument: Instrument) -> None:
    """A session that only appends (each request the last one plus the answer and a result): no prefix change."""
    otel = instrument()
    wire = Wire()
    transcript: list[Any] = [{"role": "system", "content": "be brief"}, *build(CHAT, [U("go")])]
    for n in range(6):
        _chat(wire, transcript)
        transcript += build(CHAT, [A(t("thinking"), c(f"k{n}")), R(f"k{n}", f"out {n}")])
    assert _changes(otel) == []
    assert otel.total(names.PREFIX_CHANGES.name) == 0


def test_a_rebuilt_system_prompt_is_a_caller_prefix_change(instrument: Instrument) -> None:
    """Anthropic: the top-level system prompt rebuilt between two requests of a session: cause caller, position -1."""
    otel = instrument()
    wire = Wire()
    client = wire.anthropic()
    lane: Lane = "anthropic.messages"
    transcript: list[Any] = build(lane, [U("go"), A(t("a"), c("k1")), R("k1")])
    client.messages.create(model=MODEL, max_tokens=16, system="You are terse. Today is Monday.", messages=transcript)
    transcript += build(lane, [A(t("done")), U("again")])
    client.messages.create(model=MODEL, max_tokens=16, system="You are terse. Today is Tuesday.", messages=transcript)
    assert _changes(otel) == [(-1, "caller")]
    assert otel.total(names.PREFIX_CHANGES.name, toolturn__prefix_change__cause="caller", toolturn__lane=lane) == 1


def test_a_rebuilt_system_message_is_a_caller_prefix_change_at_its_position(instrument: Instrument) -> None:
    """Chat: the system message rebuilt (a new first item): cause caller, at position 0."""
    otel = instrument()
    wire = Wire()
    rest: list[Any] = build(CHAT, [U("go"), A(c("k1")), R("k1")])
    _chat(wire, [{"role": "system", "content": "v1"}, *rest])
    rest += build(CHAT, [A(t("done")), U("again")])
    _chat(wire, [{"role": "system", "content": "v2"}, *rest])
    assert _changes(otel) == [(0, "caller")]


def test_an_edited_earlier_message_is_a_caller_prefix_change(instrument: Instrument) -> None:
    """An earlier message replaced by an edited one (a tool result shortened): cause caller, at its position."""
    otel = instrument()
    wire = Wire()
    transcript: list[Any] = build(CHAT, [U("go"), A(c("k1")), R("k1", "a long output"), A(t("read it"))])
    _chat(wire, transcript)
    transcript = [*transcript[:2], {**transcript[2], "content": "[cleared]"}, *transcript[3:]]
    transcript += build(CHAT, [U("next")])
    _chat(wire, transcript)
    assert _changes(otel) == [(2, "caller")]


def test_a_change_after_the_last_answer_is_no_prefix_change(instrument: Instrument) -> None:
    """A request resent with its last user message edited (a regenerate): nothing the model answered changed."""
    otel = instrument()
    wire = Wire()
    head: list[Any] = build(CHAT, [U("go"), A(t("hello"))])
    _chat(wire, [*head, *build(CHAT, [U("first try")])])
    _chat(wire, [*head, *build(CHAT, [U("second try")])])
    assert _changes(otel) == []


def test_chained_responses_are_not_followed(instrument: Instrument) -> None:
    """Responses chained to server-held state: each request's repairs are new breaks; no prefix change."""
    otel = instrument()
    wire = Wire()
    client = wire.openai()
    items = build("openai.responses", [U("go"), A(c("c1")), U("next")])
    for _ in range(2):
        client.responses.create(model=MODEL, input=items, previous_response_id="resp_0")
    assert [e[names.REPAIR_REPEAT] for e in otel.events(names.EVENT_REPAIR)] == [False, False]
    assert _changes(otel) == []


# --- the comparison and the state, as units -------------------------------------------------------


def _d(*names_: str) -> bytes:
    return b"".join(compose.message_digest(n) for n in names_)


def _sighting(caller: bytes, view: bytes, *, last: int, head: bytes = b"h", keys: tuple[Any, ...] = ()) -> Sighting:
    return Sighting(
        lane=CHAT,
        head=head,
        caller=caller,
        caller_last_output=last,
        opening=0,
        view=view,
        view_last_output=last,
        keys=keys,
    )


def test_a_view_that_differs_under_an_unchanged_transcript_is_a_repair_prefix_change() -> None:
    """The caller's transcript only grew, but the law's view of it differs where the model answered: cause repair."""
    previous = Previous(
        head=b"h", caller=_d("u", "a", "r"), caller_last_output=1, view=_d("u", "a", "S"), view_last_output=1
    )
    current = _sighting(_d("u", "a", "r", "a2", "late"), _d("u", "a", "late", "a2"), last=3)
    assert compare(previous, current) == PrefixChange(position=2, cause="repair")


def test_the_comparison_cases() -> None:
    """Caller edits, head changes, unanswered tails and appends: each compared as the module docstring says."""
    previous = Previous(
        head=b"h", caller=_d("u", "a", "r"), caller_last_output=1, view=_d("u", "a", "r"), view_last_output=1
    )
    appended = _sighting(_d("u", "a", "r", "a2"), _d("u", "a", "r", "a2"), last=3)
    edited = _sighting(_d("u", "A", "r", "a2"), _d("u", "A", "r", "a2"), last=3)
    trimmed = _sighting(_d("u", "a2"), _d("u", "a2"), last=1)  # the last answer replaced: nothing answered changed
    rehead = _sighting(_d("u", "a", "r", "a2"), _d("u", "a", "r", "a2"), last=3, head=b"other")
    retried = _sighting(_d("u", "a", "R"), _d("u", "a", "R"), last=1)
    assert compare(previous, appended) is None
    assert compare(previous, edited) == PrefixChange(position=1, cause="caller")
    assert compare(previous, trimmed) is None
    longer = Previous(
        head=b"h",
        caller=_d("u", "a", "r", "a2", "r2"),
        caller_last_output=3,
        view=_d("u", "a", "r", "a2", "r2"),
        view_last_output=3,
    )
    cut = _sighting(_d("u", "a2", "r2", "a3"), _d("u", "a2", "r2", "a3"), last=3)  # the history trimmed
    assert compare(longer, cut) == PrefixChange(position=1, cause="caller")
    assert compare(previous, rehead) == PrefixChange(position=-1, cause="caller")
    assert compare(previous, retried) is None
    unanswered = Previous(head=b"h", caller=_d("u"), caller_last_output=-1, view=_d("u"), view_last_output=-1)
    assert compare(unanswered, _sighting(_d("u"), _d("u"), last=-1, head=b"other")) is None
    assert compare(unanswered, _sighting(_d("u", "a"), _d("u", "a"), last=1, head=b"other")) == PrefixChange(
        position=-1, cause="caller"
    )


def test_repair_keys_name_the_turn_and_rank_equal_repairs() -> None:
    """A repair's key carries its turn's digest; two equal repairs on equal turns get ranks 0 and 1."""
    messages = build(CHAT, [U("go"), A(c("c1")), U("x"), A(c("c1")), U("y")])
    digests = [compose.message_digest(m) for m in messages]
    repair = ToolTurnRepair(form="missing_result", tool_call_ids=("c1",))
    first, second = repair_keys([repair, repair], messages, digests, CHAT)
    assert first == ("missing_result", ("c1",), digests[1], 0)
    assert second == ("missing_result", ("c1",), digests[1], 1)
    (orphan,) = repair_keys([ToolTurnRepair(form="orphan_result", tool_call_ids=("zz",))], messages, digests, CHAT)
    assert orphan == ("orphan_result", ("zz",), b"", 0)


def _keys_read_in_full(
    repairs: list[ToolTurnRepair], messages: list[object], digests: list[bytes], lane: Lane
) -> tuple[tuple[str, tuple[str, ...], bytes, int], ...]:
    """The repair keys as the module docstring defines them, every message's call ids read anew."""
    keys: list[tuple[str, tuple[str, ...], bytes, int]] = []
    ranks: dict[tuple[str, tuple[str, ...], bytes], int] = {}
    cursor = 0
    for repair in repairs:
        turn = b""
        if repair.tool_call_ids:
            first = repair.tool_call_ids[0]
            for index in range(cursor, len(messages)):
                if first in compose.emitted_call_ids(messages[index], lane=lane):
                    turn, cursor = digests[index], index
                    break
        base = (repair.form, repair.tool_call_ids, turn)
        keys.append((*base, ranks.get(base, 0)))
        ranks[base] = ranks.get(base, 0) + 1
    return tuple(keys)


@pytest.mark.parametrize("lane", ["openai.chat_completions", "anthropic.messages", "openai.responses"])
def test_repair_keys_read_each_digest_once_and_name_the_same_turns(lane: Lane) -> None:
    """Keys equal those of a full read of every message, on a first request and again with its digests known.

    Covers a call id emitted twice (the turn from the previous repair's on), ids out of order, an id no
    message emits, repairs without ids, and two lanes sharing a message's digest.
    """
    messages = build(lane, [U("go"), A(c("c1"), c("c2")), R("c1"), U("x"), A(c("c3")), R("c3"), A(c("c1")), U("y")])
    digests = [compose.message_digest(m) for m in messages]
    repairs = [
        ToolTurnRepair(form="missing_result", tool_call_ids=ids)
        for ids in [("c2",), ("c1",), ("c3",), ("c1",), ("zz",), (), ("c2",), ("c1",)]
    ]
    expected = _keys_read_in_full(repairs, messages, digests, lane)
    if lane != "openai.responses":  # a message per turn (Responses: an item per call)
        assert expected[1][2] == digests[1]  # c1 found at the turn of c2, the cursor's own message
        assert expected[3][2] == digests[6]  # then further on, past c3's turn
    assert expected[4][2] == expected[5][2] == b""
    assert expected[6][2] == b""  # c2 only before the cursor
    assert repair_keys(repairs, messages, digests, lane) == expected
    assert repair_keys(repairs, messages, digests, lane) == expected  # every digest now known
    other: Lane = "openai.chat_completions" if lane != CHAT else "anthropic.messages"
    assert repair_keys(repairs, messages, digests, other) == _keys_read_in_full(repairs, messages, digests, other)


def test_repair_keys_of_a_resent_transcript_read_its_messages_as_their_digests_say() -> None:
    """A transcript resent with more messages takes the call ids read under its leading digests; new ones are read.

    A message object edited in place after it was read keeps its digest and so the call ids read then; a
    rebuilt transcript whose edited message has its own digest, and one that replaces a message, are read
    as they stand.
    """
    events: list[Event] = [U("go"), A(c("c1"), c("c2")), R("c1"), U("x")]
    messages = build(CHAT, events)
    turn = messages[1]
    assert isinstance(turn, dict)
    digests = [compose.message_digest(m) for m in messages]
    repair = [ToolTurnRepair(form="missing_result", tool_call_ids=("c2",))]
    assert repair_keys(repair, messages, digests, CHAT) == (("missing_result", ("c2",), digests[1], 0),)
    turn["tool_calls"][1]["id"] = "edited"  # in place: its digest, and so its call ids, as first read
    longer = [*messages, *build(CHAT, [A(c("c9")), U("y")])]
    assert repair_keys(repair, longer, [*digests, b"a", b"u"], CHAT) == (("missing_result", ("c2",), digests[1], 0),)
    rebuilt = build(CHAT, events)
    rebuilt[1]["tool_calls"][1]["id"] = "edited"  # type: ignore[index]
    rebuilt_digests = [compose.message_digest(m) for m in rebuilt]
    assert rebuilt_digests[1] != digests[1]
    assert repair_keys(repair, rebuilt, rebuilt_digests, CHAT) == (("missing_result", ("c2",), b"", 0),)
    replaced = [messages[0], *build(CHAT, [A(c("c3"))]), *longer[2:4], *build(CHAT, [A(c("c2"))]), longer[5]]
    assert repair_keys(repair, replaced, [digests[0], b"1", b"2", b"3", b"4", b"5"], CHAT) == (
        ("missing_result", ("c2",), b"4", 0),
    )


class _Message(dict[str, Any]):
    """A message a weak reference can follow (a plain dict takes none)."""


def test_a_rebuilt_growing_transcript_reads_only_its_new_messages_and_holds_none_of_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A framework's transcript rebuilt as new objects, a round longer each request: its new messages alone are read.

    One entry is kept for it, and none of its message objects outlives its request.
    """
    monkeypatch.setattr(_conversation, "_REMEMBERED", {})
    adapter = adapter_for(CHAT)
    read: list[object] = []
    real = adapter.emitted_call_ids

    def counted(item: object) -> tuple[str, ...]:
        read.append(item)
        return real(item)

    monkeypatch.setattr(adapter, "emitted_call_ids", counted)
    events: list[Event] = [U("go"), A(c("c0")), U("interrupted")]
    alive: list[weakref.ref[_Message]] = []
    for round_ in range(1, 6):
        messages = [_Message(m) for m in build(CHAT, events)]  # type: ignore[call-overload]
        alive += [weakref.ref(m) for m in messages]
        digests = [compose.message_digest(m) for m in messages]
        read.clear()
        repair = [ToolTurnRepair(form="missing_result", tool_call_ids=("c0",))]
        assert repair_keys(repair, messages, digests, CHAT) == (("missing_result", ("c0",), digests[1], 0),)
        assert len(read) == (3 if round_ == 1 else 2)  # the first request reads all; then the round it added
        assert len(_conversation._REMEMBERED[CHAT]) == 1
        events += [A(c(f"c{round_}")), R(f"c{round_}")]
        del messages, read[:]
    gc.collect()
    assert [ref for ref in alive if ref() is not None] == []


def test_remembered_transcripts_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lane keeps at most ``REMEMBERED`` transcripts' call ids; a transcript past them is read anew, same keys."""
    monkeypatch.setattr(_conversation, "REMEMBERED", 2)
    monkeypatch.setattr(_conversation, "_REMEMBERED", {})
    repair = [ToolTurnRepair(form="missing_result", tool_call_ids=("c9",))]
    runs = [build(CHAT, [U(f"go {n}"), A(c("c1")), R("c1"), U("x"), A(c("c9")), U("y")]) for n in range(3)]
    for _ in range(2):
        for messages in runs:
            digests = [compose.message_digest(m) for m in messages]
            assert repair_keys(repair, messages, digests, CHAT) == (("missing_result", ("c9",), digests[4], 0),)
            assert len(_conversation._REMEMBERED[CHAT]) <= 2


def test_runs_opening_alike_are_told_apart() -> None:
    """Two runs with the same opening message, interleaved: each extends its own branch, no prefix change."""
    state = Conversations()
    key = ("missing_result", ("c1",), b"t", 0)
    runs = {"a": ["u"], "b": ["u"]}
    for step in range(4):
        for name, run in runs.items():
            run += [f"{name}-answer-{step}", f"{name}-result-{step}"]
            findings = state.follow(_sighting(_d(*run), _d(*run), last=len(run) - 2, keys=(key,)))
            assert findings.prefix_change is None
            assert findings.repeats == (step > 0 or name == "b",)


def test_the_state_is_bounded() -> None:
    """At most ``slots`` branches in all and ``branches`` per opening: the least recently used go first."""
    state = Conversations(slots=3, branches=2)
    key = ("missing_result", ("c1",), b"t", 0)
    for n in range(5):
        state.follow(_sighting(_d(f"opening {n}"), _d(f"opening {n}"), last=-1, keys=(key,)))
    assert len(state._recent) == 3
    assert state.follow(_sighting(_d("opening 0"), _d("opening 0"), last=-1, keys=(key,))).repeats == (False,)
    assert state.follow(_sighting(_d("opening 4"), _d("opening 4"), last=-1, keys=(key,))).repeats == (True,)
    for n in range(4):
        state.follow(_sighting(_d("same", f"edit {n}"), _d("same", f"edit {n}"), last=-1))
    assert len(state._by_opening[CHAT, compose.message_digest("same")]) == 2


def test_a_new_owner_starts_empty() -> None:
    """Requests of another owner (a new ``instrument()``) find nothing remembered: their repairs are new."""
    lane: Lane = CHAT
    messages = build(lane, [U("go"), A(c("c1")), U("next")])
    first, second = Options(), Options()

    def repeats(options: Options) -> tuple[bool, ...]:
        return prepare_request({"messages": messages}, lane=lane, options=options, scope=None, receipt=False)[1].repeats

    assert repeats(first) == (False,)
    assert repeats(first) == (True,)
    assert repeats(second) == (False,)
