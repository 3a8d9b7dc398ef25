"""The transcript memo: over any sequence of calls, the same answers as the pure functions on the same input."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from typing import Any, overload

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_toolturn import LANES, Lane, ToolTurnInputError, compose, ensure_tool_turn_invariants
from otel_toolturn._law import ToolTurnView
from otel_toolturn._view import Survey, SurveyState
from otel_toolturn.instrument import _memo, _request
from otel_toolturn.instrument._config import Options
from otel_toolturn.instrument._memo import Transcript, TranscriptMemo
from otel_toolturn.instrument._request import prepare_request
from otel_toolturn.lanes import adapter_for
from tests.test_law_examples import EXAMPLES
from tests.transcripts import A, Block, CallBlock, Event, R, Rx, Text, Thinking, U, build

IDS = ("c0", "c1", "c2", "c3", "c4", "c5")
KEY: dict[Lane, str] = {
    "anthropic.messages": "messages",
    "openai.chat_completions": "messages",
    "openai.responses": "input",
}


def _survey(lane: Lane, messages: Sequence[object], state: SurveyState | None = None) -> Survey | None:
    return adapter_for(lane).survey(messages, state)


def _same_survey(a: Survey | None, b: Survey | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.bounds == b.bounds and a.dirty == b.dirty


def _resumed_everywhere(lane: Lane, messages: list[object]) -> None:
    whole = _survey(lane, messages)
    for cut in range(len(messages) + 1):
        first = _survey(lane, messages[:cut])
        if first is None:
            continue
        assert first.state is not None
        kept = dataclasses.replace(first.state.copy())
        resumed = _survey(lane, messages, first.state)
        assert _same_survey(resumed, whole), f"resumed at {cut} (paused at {first.state.position})"
        assert first.state == kept, "resuming leaves the paused state as it was"


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_a_survey_resumed_at_every_position_is_the_whole_lists(example: Any, lane: Lane) -> None:
    """Each worked example, each lane: surveying a prefix then resuming over the rest is the survey of the whole."""
    _resumed_everywhere(lane, build(lane, example.given))
    if lane == "anthropic.messages":
        _resumed_everywhere(lane, build(lane, example.given, merge_user=True))


def test_a_responses_survey_pauses_ahead_of_trailing_reasoning() -> None:
    """Responses: reasoning items ending the list are not settled yet, so the survey's state stops ahead of them."""
    items = build("openai.responses", [U("q"), A(Text("a"))])
    reasoning = [{"type": "reasoning", "id": f"rs_{n}", "summary": []} for n in range(2)]
    survey = _survey("openai.responses", [*items, *reasoning])
    assert survey is not None
    assert survey.state is not None
    assert survey.state.position == len(items)
    call = {"type": "function_call", "call_id": "c9", "name": "f", "arguments": "{}"}
    grown = [*items, *reasoning, call]
    assert _same_survey(_survey("openai.responses", grown, survey.state), _survey("openai.responses", grown))


# A sequence of calls: each step makes the transcript one call sends.


@st.composite
def _events(draw: st.DrawFn, lane: Lane) -> list[Event]:
    """One to four events drawn from a small id pool, so broken stretches and repairs occur."""
    events: list[Event] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(("U", "A", "A", "R", "R", "Rx")))
        if kind == "U":
            events.append(U(draw(st.sampled_from(("q", "more", "")))))
        elif kind == "R":
            events.append(R(draw(st.sampled_from(IDS)), draw(st.sampled_from(("ok", "out")))))
        elif kind == "Rx":
            events.append(Rx(draw(st.sampled_from(IDS))))
        else:
            blocks: list[Block] = []
            for _ in range(draw(st.integers(1, 3))):
                block = draw(st.sampled_from(("t", "c", "c", "th")))
                if block == "t" or (block == "th" and lane == "openai.chat_completions"):
                    blocks.append(Text("a"))
                elif block == "th":
                    blocks.append(Thinking("r"))
                    if lane == "openai.responses":
                        blocks.append(Text("a"))
                else:
                    blocks.append(CallBlock(draw(st.sampled_from(IDS))))
            events.append(A(*blocks))
    return events


def _extras(data: st.DataObject, lane: Lane, messages: list[object]) -> list[object]:
    """``messages`` with some carrying framework fields, and (Chat, Responses) a system or developer message."""
    draw = data.draw
    out: list[object] = []
    for message in messages:
        marked = draw(st.integers(0, 4)) == 0 and isinstance(message, dict)
        out.append({**message, "injectedBy": "memory"} if marked else message)  # type: ignore[dict-item]
    if lane != "anthropic.messages" and draw(st.integers(0, 5)) == 0:
        role = draw(st.sampled_from(("system", "developer")))
        text = draw(st.sampled_from(("be brief", "")))
        out.insert(
            0,
            {"role": role, "content": text}
            if draw(st.booleans())
            else {"role": role, "content": [{"type": "text", "text": text}]},
        )
    return out


def _run_calls(data: st.DataObject, lane: Lane) -> None:
    """Successive calls, each checked as it is made: transcripts grown, forked, trimmed, replaced, edited, rebuilt."""
    memo = TranscriptMemo(slots=3)
    draw = data.draw
    conversations: list[list[object]] = []
    for _ in range(draw(st.integers(1, 12))):
        move = draw(
            st.sampled_from(("new", "grow", "grow", "grow", "resend", "fork", "trim", "replace", "edit", "rebuild"))
        )
        if not conversations or move == "new":
            conversations.append(_extras(data, lane, build(lane, draw(_events(lane)))))
            current = conversations[-1]
        else:
            current = draw(st.sampled_from(conversations))
            if move == "grow":
                current.extend(_extras(data, lane, build(lane, draw(_events(lane)))))
            elif move == "fork" and current:
                cut = draw(st.integers(0, len(current)))
                current = current[:cut] + _extras(data, lane, build(lane, draw(_events(lane))))
                conversations.append(current)
            elif move == "trim" and current:
                current = current[draw(st.integers(1, len(current))) :]
                conversations.append(current)
            elif move == "replace" and current:
                at = draw(st.integers(0, len(current) - 1))
                fresh = build(lane, draw(_events(lane)))[0]
                current[at] = dict(current[at]) if draw(st.booleans()) else fresh  # type: ignore[call-overload]
            elif move == "edit" and current:
                _edit(data, current[draw(st.integers(0, len(current) - 1))])
            elif move == "rebuild":
                current[:] = [_rebuilt(m) for m in current]
                grown = data.draw(st.booleans())
                if current and grown:
                    current.extend(_extras(data, lane, build(lane, draw(_events(lane)))))
        _check_call(memo, lane, list(current), chained=lane == "openai.responses" and draw(st.booleans()))


def _rebuilt(message: object) -> object:
    """An equal message of new objects, as a framework that rebuilds its dicts on every call sends it."""
    assert isinstance(message, dict)
    return {
        key: [dict(item) if isinstance(item, dict) else item for item in value] if isinstance(value, list) else value
        for key, value in message.items()
    }


def _edit(data: st.DataObject, message: object) -> None:
    """Change a message in place where the memo looks: a field set or a list grown or shrunk."""
    draw = data.draw
    assert isinstance(message, dict)
    lists = [k for k, v in message.items() if isinstance(v, list)]
    choice = draw(st.sampled_from(("role", "content", "field", "list", "list")))
    if choice == "role":
        message["role"] = draw(st.sampled_from(("user", "assistant", "tool")))
    elif choice == "content":
        message["content"] = draw(st.sampled_from(("text", None, [{"type": "text", "text": "t"}])))
    elif choice == "field":
        message["injectedBy"] = "later"
    elif lists:
        items = message[draw(st.sampled_from(lists))]
        if items and draw(st.booleans()):
            items.pop()
        else:
            call_id = draw(st.sampled_from(IDS))
            items.append(
                draw(
                    st.sampled_from(
                        (
                            {"type": "tool_result", "tool_use_id": call_id, "content": "late"},
                            {"type": "tool_use", "id": call_id, "name": "f", "input": {}},
                            {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}},
                            {"type": "text", "text": "x"},
                        )
                    )
                )
            )


def _assert_view(got: ToolTurnView, want: ToolTurnView, messages: list[object]) -> None:
    assert got.repairs == want.repairs
    assert (got.messages is messages) == (want.messages is messages)
    assert list(got.messages) == list(want.messages)
    callers = {id(m) for m in messages}
    for mine, pure in zip(got.messages, want.messages, strict=True):
        if id(pure) in callers:
            assert mine is pure, "a caller's object the law keeps is kept by the memo"


def _assert_strip(got: Sequence[object], want: Sequence[object], got_view: object, want_view: object) -> None:
    assert list(got) == list(want)
    assert (got is got_view) == (want is want_view)
    assert not any(isinstance(m, dict) and not compose.FRAMEWORK_FIELDS.isdisjoint(m) for m in got)


def _check_call(memo: TranscriptMemo, lane: Lane, messages: list[object], *, chained: bool) -> None:
    """One call through the memo: its view, strip, system pieces and prefix fingerprint are the pure functions'."""
    known = memo.recall(messages, lane=lane)
    if not messages:
        assert known is None, "an empty list has nothing to remember"
        return
    assert known is not None, "a list of dicts is taken"
    try:
        pure = ensure_tool_turn_invariants(messages, lane=lane, chained=chained)
    except ToolTurnInputError as error:
        with pytest.raises(ToolTurnInputError, match=re.escape(str(error))):
            known.view(messages, chained=chained)
        return
    view = known.view(messages, chained=chained)
    _assert_view(view, pure, messages)
    sent = known.strip(messages, view)
    assert not isinstance(pure.messages, str)
    pure_sent = compose.strip_framework_fields(pure.messages)
    _assert_strip(sent, pure_sent, view.messages, pure.messages)
    pieces = compose.system_prompt_pieces({KEY[lane]: sent}, lane=lane, transcript=known.pieces)
    assert [p.raw_content for p in pieces] == [
        p.raw_content for p in compose.system_prompt_pieces({KEY[lane]: pure_sent}, lane=lane)
    ]
    digests = [compose.message_digest(m) for m in pure_sent[:-1]]
    assert known.prefix_fingerprint(sent, messages, view) == compose.prefix_fingerprint(digests)


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.data())
def test_anthropic_calls_get_the_pure_answers(data: st.DataObject) -> None:
    """Anthropic, any sequence of calls: the memo's view, strip and prefix fingerprint are the pure functions'."""
    _run_calls(data, "anthropic.messages")


@_SETTINGS
@given(st.data())
def test_chat_calls_get_the_pure_answers(data: st.DataObject) -> None:
    """Chat, any sequence of calls: the memo's view, strip, system pieces and prefix fingerprint are the pure ones."""
    _run_calls(data, "openai.chat_completions")


@_SETTINGS
@given(st.data())
def test_responses_calls_chained_or_not_get_the_pure_answers(data: st.DataObject) -> None:
    """Responses, chained or not: the memo's view, strip, system pieces and prefix fingerprint are the pure ones."""
    _run_calls(data, "openai.responses")


def _growing(lane: Lane, rounds: int) -> Iterator[list[object]]:
    """A conversation resent with one more round each call, one round in three leaving a result out."""
    transcript: list[object] = []
    for n in range(rounds):
        events: list[Event] = [U(f"q{n}"), A(Text("a"), CallBlock(f"call{n}"))]
        if n % 3:
            events.append(R(f"call{n}", f"out{n}"))
        transcript.extend(build(lane, events))
        yield list(transcript)


class _CountingSurveys:
    """A lane's adapter whose surveys note how many messages each one read (a compiled adapter cannot be patched)."""

    def __init__(self, adapter: Any, surveyed: list[int]) -> None:
        self._adapter = adapter
        self._surveyed = surveyed

    def survey(self, messages: Sequence[object], state: SurveyState | None = None) -> Survey | None:
        self._surveyed.append(len(messages) - (state.position if state is not None else 0))
        result: Survey | None = self._adapter.survey(messages, state)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)


@pytest.mark.parametrize("rebuilt", [False, True], ids=["same objects", "rebuilt dicts"])
@pytest.mark.parametrize("lane", LANES)
def test_a_growing_conversation_is_surveyed_once(lane: Lane, rebuilt: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resent one round longer, the same objects or equal new dicts: later resends survey only new messages."""
    surveyed: list[int] = []
    monkeypatch.setattr(_memo, "adapter_for", lambda lane: _CountingSurveys(adapter_for(lane), surveyed))
    memo = TranscriptMemo()
    previous = 0
    for call, grown in enumerate(_growing(lane, 12)):
        messages = [_rebuilt(m) for m in grown] if rebuilt else grown
        known = memo.recall(messages, lane=lane)
        assert known is not None
        if call == 1:
            assert surveyed[-1] == len(messages), "the first resend surveys the whole list"
        elif call > 1:
            assert surveyed[-1] == len(messages) - previous, "later ones only the new messages"
        _assert_view(known.view(messages, chained=False), ensure_tool_turn_invariants(messages, lane=lane), messages)
        previous = len(messages)


def test_a_rebuilt_message_is_stripped_from_its_own_values() -> None:
    """A message with framework fields rebuilt as an equal new dict: the request carries the new dict's values."""
    memo = TranscriptMemo()
    old = [{"role": "user", "content": [{"type": "text", "text": "q"}], "injectedBy": "memory"}]
    for _ in range(2):
        known = memo.recall(old, lane="anthropic.messages")
        assert known is not None
    new = [_rebuilt(m) for m in old]
    known = memo.recall(new, lane="anthropic.messages")
    assert known is not None
    old[0]["content"].append({"type": "text", "text": "changed after it was replaced"})  # type: ignore[attr-defined]
    view = known.view(new, chained=False)
    sent = known.strip(new, view)
    assert sent == [{"role": "user", "content": [{"type": "text", "text": "q"}]}]
    assert sent[0]["content"] is new[0]["content"]  # type: ignore[index]


def _in_place_edits() -> list[tuple[str, Any]]:
    def append_block(m: list[dict[str, Any]]) -> None:
        m[2]["content"].append({"type": "text", "text": "and more"})

    def pop_block(m: list[dict[str, Any]]) -> None:
        m[2]["content"].pop()

    def set_role(m: list[dict[str, Any]]) -> None:
        m[2]["role"] = "assistant"

    def set_content(m: list[dict[str, Any]]) -> None:
        m[1]["content"] = "no calls any more"

    def add_field(m: list[dict[str, Any]]) -> None:
        m[0]["injectedBy"] = "memory"

    return [
        ("append a block", append_block),
        ("pop a block", pop_block),
        ("set the role", set_role),
        ("set the content", set_content),
        ("add a framework field", add_field),
    ]


@pytest.mark.parametrize(("name", "edit"), _in_place_edits(), ids=[n for n, _ in _in_place_edits()])
def test_a_transcript_edited_in_place_after_it_was_sent_is_read_anew(name: str, edit: Any) -> None:
    """An edit in place of a field or a content list of a message already sent: the next call gets the pure answer."""
    del name
    lane: Lane = "anthropic.messages"
    messages: list[Any] = build(lane, [U("q"), A(CallBlock("c1")), R("c1")])
    memo = TranscriptMemo()
    assert memo.recall(messages[:1], lane=lane) is not None
    remembered = memo.recall(list(messages), lane=lane)
    assert remembered is not None
    assert remembered.surveyed
    edit(messages)
    grown = [*messages, *build(lane, [U("next")])]
    known = memo.recall(grown, lane=lane)
    assert known is not None
    view = known.view(grown, chained=False)
    pure = ensure_tool_turn_invariants(grown, lane=lane)
    _assert_view(view, pure, grown)
    assert not isinstance(pure.messages, str)
    _assert_strip(known.strip(grown, view), compose.strip_framework_fields(pure.messages), view.messages, pure.messages)


@dataclasses.dataclass
class _Typed:
    role: str
    content: object


class _Plain(Sequence[object]):
    """A sequence that is neither a list nor a tuple."""

    def __init__(self, items: list[object]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> object: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[object]: ...
    def __getitem__(self, index: int | slice) -> object:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)


def _odd_inputs() -> list[object]:
    plain = build("anthropic.messages", [U("q")])
    return [
        "just text",
        (),
        [],
        _Plain(plain),
        [*plain, _Typed("user", "hi")],
        [_Typed("user", "hi")],
        iter(plain),
        None,
        42,
        [{"role": "user", "content": object()}],
        [{"role": "assistant", "content": [{"type": "tool_use", "id": 7}]}],
    ]


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("given_", _odd_inputs())
def test_odd_input_takes_the_pure_path_and_never_raises(lane: Lane, given_: object) -> None:
    """Strings, typed objects, other sequences, iterators, unreadable items: taken only when plain, never a raise."""
    memo = TranscriptMemo()
    for _ in range(2):
        known = memo.recall(given_, lane=lane)
        if isinstance(given_, (list, tuple)) and all(type(m) is dict for m in given_) and given_:
            assert isinstance(known, Transcript)
        else:
            assert known is None


def test_a_tuple_transcript_is_taken_and_extended() -> None:
    """A tuple transcript resent as a longer tuple: taken, and the answers are the pure ones."""
    lane: Lane = "openai.chat_completions"
    first = tuple(build(lane, [U("q"), A(CallBlock("c1"))]))
    memo = TranscriptMemo()
    assert memo.recall(first, lane=lane) is not None
    grown = (*first, *build(lane, [R("c1"), U("more")]))
    known = memo.recall(grown, lane=lane)
    assert known is not None
    assert known.survey is not None
    assert known.view(grown, chained=False) == ensure_tool_turn_invariants(grown, lane=lane)


@pytest.mark.parametrize("mode", ["repair", "observe"])
@pytest.mark.parametrize("lane", LANES)
def test_prepare_request_decides_as_without_the_memo(lane: Lane, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each call of a growing conversation: the request hook's decision and receipt are those of the pure path."""
    monkeypatch.setattr(_request, "MEMO", TranscriptMemo())
    options = Options(mode=mode, capture_content=True)  # type: ignore[arg-type]
    key = KEY[lane]
    system: list[object] = [{"role": "system", "content": "You are terse."}] if lane != "anthropic.messages" else []
    for messages in _growing(lane, 8):
        transcript = [*system, *messages]
        memoised = prepare_request({key: transcript}, lane=lane, options=options, scope=None, receipt=True)
        pure = prepare_request({key: _Plain(transcript)}, lane=lane, options=options, scope=None, receipt=True)
        assert memoised.view is not None
        assert pure.view is not None
        assert memoised.view.repairs == pure.view.repairs
        assert list(memoised.kwargs[key]) == list(pure.kwargs[key])  # type: ignore[call-overload]
        assert (memoised.kwargs[key] is transcript) == (mode == "observe" or not pure.view.repairs)
        assert memoised.system_fingerprints == pure.system_fingerprints
        assert memoised.system_prompt == pure.system_prompt
        assert memoised.prefix_fingerprint == pure.prefix_fingerprint


@pytest.mark.parametrize("lane", LANES)
def test_a_transcript_resent_unchanged_is_worked_out_on_its_second_sending(lane: Lane) -> None:
    """First sighting: the pure path; the same messages resent: findings worked out, then reused as they are."""
    messages = build(lane, [U("q"), A(CallBlock("c1")), U("next")])
    memo = TranscriptMemo()
    first = memo.recall(messages, lane=lane)
    assert first is not None
    assert not first.surveyed
    second = memo.recall(list(messages), lane=lane)
    assert second is not None
    assert second.surveyed
    assert memo.recall(list(messages), lane=lane) is second
    assert second.view(messages, chained=False) == ensure_tool_turn_invariants(messages, lane=lane)


def test_a_new_owner_starts_the_memo_empty() -> None:
    """Calls of another owner (a new ``instrument()``) find nothing remembered from the previous one."""
    lane: Lane = "openai.chat_completions"
    messages = build(lane, [U("q")])
    memo = TranscriptMemo()
    memo.recall(messages, lane=lane, owner="first")
    known = memo.recall(list(messages), lane=lane, owner="first")
    assert known is not None
    assert known.surveyed
    again = memo.recall(list(messages), lane=lane, owner="second")
    assert again is not None
    assert not again.surveyed


@pytest.mark.parametrize(("name", "edit"), _in_place_edits(), ids=[n for n, _ in _in_place_edits()])
def test_a_first_sighting_takes_no_snapshot_and_an_edit_before_its_resend_is_read(name: str, edit: Any) -> None:
    """A transcript sent once costs no snapshot; edited in place before its resend, the resend gets the pure answers."""
    del name
    lane: Lane = "anthropic.messages"
    messages: list[Any] = build(lane, [U("q"), A(CallBlock("c1")), R("c1")])
    memo = TranscriptMemo()
    first = memo.recall(messages, lane=lane)
    assert first is not None
    assert first.snapshots is None
    assert not first.surveyed
    first_view = first.view(messages, chained=False)
    first.prefix_fingerprint(first.strip(messages, first_view), messages, first_view)  # digests made, then stale
    edit(messages)
    _check_call(memo, lane, [*messages, *build(lane, [U("next")])], chained=False)
