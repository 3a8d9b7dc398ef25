"""Property tests of the law over generated broken transcripts, per lane.

Transcripts are drawn from a small id pool, so interruptions, late and duplicate results, repeated
calls, reused ids, repeated Responses item ids, orphans and interrupted closes all occur; every
text and result payload is unique, so what survives can be checked id by id, and an assistant
message can be found again in a view by its payload. Properties: the view validates, a second pass
is a no-op, the law is deterministic, nothing is lost unreported, a session whose every request was
valid is its own view, and the view is append-stable: for any T, model answer A and suffix Δ,
view(T + [A] + Δ) starts with view(T) (the one case the lists alone cannot tell, an answer of calls
only right after an unanswered run, is left out here and shown in tests/test_law_append_stable.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from otel_toolturn import (
    INTERRUPTED_RESULT_TEXT,
    LANES,
    CallKind,
    Dialect,
    Lane,
    ensure_tool_turn_invariants,
    validate,
)
from otel_toolturn.lanes import openai_responses
from tests.gemini_wire import assert_sent_whole
from tests.transcripts import (
    A,
    Block,
    CallBlock,
    Event,
    R,
    Rx,
    ServerResult,
    Spelling,
    Text,
    Thinking,
    U,
    build,
    gemini,
)

GEMINI: Lane = "gemini.generate_content"
ANTHROPIC: Lane = "anthropic.messages"
BEDROCK: Lane = "bedrock.converse"

IDS = ("c0", "c1", "c2", "c3")
_SPELLINGS: tuple[Spelling, ...] = ("rest", "snake", "sdk")
SERVER_IDS = ("srvtoolu_0", "srvtoolu_1", "srvtoolu_2")
"""Anthropic server and MCP tool uses' ids: a pool of their own, shared by both kinds."""
SERVER_NAMES = ("web_search", "web_fetch", "code_execution", "tool_search_tool_bm25")
ITEM_IDS = (None, None, "fc_a", "fc_b")
"""Responses call items' own ids: often none, else from a pool shared by calls of any call id."""
RESPONSES_KINDS: tuple[CallKind, ...] = (
    "function",
    "function",
    "custom",
    "local_shell",
    "shell",
    "apply_patch",
    "computer",
)
"""The kinds a Responses call is drawn from (function calls twice as often); the other lanes draw function calls."""


@st.composite
def transcripts(draw: st.DrawFn, lane: Lane, ids: tuple[str, ...] = IDS, tag: str = "") -> list[Event]:
    """A transcript of 0 to 14 events with unique payloads (``tag`` in each) and ids from a small pool."""
    events: list[Event] = []
    counter = (f"{tag}{n}" for n in range(10_000))
    if lane == GEMINI:  # Gemini refuses a call turn with nothing before it, which the law cannot supply
        events.append(U(f"<u{next(counter)}>"))
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(("U", "A", "A", "R", "R", "Rx")))
        if kind == "U":
            events.append(U(f"<u{next(counter)}>"))
        elif kind == "R":
            events.append(R(draw(st.sampled_from(ids)), f"<r{next(counter)}>", draw(st.booleans())))
        elif kind == "Rx":
            events.append(Rx(draw(st.sampled_from(ids))))
        else:
            events.append(_answer(draw, lane, ids, counter))
    return events


def _answer(
    draw: st.DrawFn, lane: Lane, ids: tuple[str, ...], counter: Iterator[str], *, bare_reasoning: bool = False
) -> A:
    """One assistant message of 1 to 4 blocks: texts, reasoning and calls in any order.

    ``bare_reasoning`` (Responses): a reasoning item may stand with no item of its own after it.
    """
    blocks: list[Block] = []
    kinds = ("t", "c", "c", "th", "s", "s") if lane == ANTHROPIC else ("t", "c", "c", "th")
    for _ in range(draw(st.integers(1, 4))):
        block = draw(st.sampled_from(kinds))
        n = next(counter)
        if block == "s":
            blocks.extend(_server_blocks(draw, n))
        elif block == "t":
            blocks.append(Text(f"<a{n}>"))
        elif block == "th":
            if lane == "openai.chat_completions":
                blocks.append(Text(f"<a{n}>"))  # Chat carries no reasoning blocks
            elif lane == "openai.responses":
                blocks.append(Thinking(f"<th{n}>"))
                if not (bare_reasoning and draw(st.booleans())):
                    blocks.append(Text(f"<a{n}>"))  # a reasoning item with its following item
            else:
                blocks.append(Thinking(f"<th{n}>"))
        else:
            signed = lane != GEMINI or draw(st.booleans())
            item_id = draw(st.sampled_from(ITEM_IDS)) if lane == "openai.responses" else None
            kind: CallKind = draw(st.sampled_from(RESPONSES_KINDS)) if lane == "openai.responses" else "function"
            blocks.append(CallBlock(draw(st.sampled_from(ids)), f"tool{n}", signed=signed, item_id=item_id, kind=kind))
    return A(*blocks)


def _server_blocks(draw: st.DrawFn, n: str) -> list[Block]:
    """Anthropic: a server or MCP tool use, its result, or both, with an id from a small pool of their own."""
    use_id = draw(st.sampled_from(SERVER_IDS))
    mcp = draw(st.booleans())
    name = f"mcp{n}" if mcp else draw(st.sampled_from(SERVER_NAMES))
    use = CallBlock(use_id, name, kind="mcp" if mcp else "server_tool")
    result = ServerResult(f"<s{n}>", use_id, mcp, "lookup" if mcp else name)
    shape = draw(st.sampled_from(("use", "pair", "pair", "result")))
    return [use] if shape == "use" else [use, result] if shape == "pair" else [result]


def _open_at_the_end(events: list[Event]) -> list[CallBlock]:
    """Anthropic: the server and MCP uses T's last assistant run leaves open (a ``pause_turn`` response sent back).

    The run is the assistant messages at the end of T; one that calls a client tool ends the run before it,
    and when it is T's last, its results follow and nothing is left open.
    """
    run: list[A] = []
    for event in reversed(events):
        if not isinstance(event, A) or any(isinstance(b, CallBlock) and b.kind == "function" for b in event.blocks):
            break
        run.insert(0, event)
    if not run or run[-1] is not events[-1]:
        return []
    uses: list[CallBlock] = []
    for block in (block for message in run for block in message.blocks):
        if isinstance(block, CallBlock):
            uses.append(block)
        elif isinstance(block, ServerResult):
            uses = [u for u in uses if (u.call_id, u.kind == "mcp") != (block.call_id, block.mcp)]
    return uses


def _continued(events: list[Event], answer: A) -> A:
    """Anthropic: the model's answer to a T whose last run left uses open continues it: their results come first."""
    results = [
        ServerResult(f"<cont{k}>", use.call_id, use.kind == "mcp", "lookup" if use.kind == "mcp" else use.name)
        for k, use in enumerate(_open_at_the_end(events))
    ]
    return A(*results, *answer.blocks) if results else answer


def _payloads(events: list[Event]) -> tuple[list[str], list[tuple[str, str]], list[tuple[str, str]]]:
    texts: list[str] = []
    results: list[tuple[str, str]] = []
    calls: list[tuple[str, str]] = []
    for event in events:
        if isinstance(event, U):
            texts.append(event.text)
        elif isinstance(event, R):
            results.append((event.call_id, event.output))
        elif isinstance(event, A):
            for block in event.blocks:
                if isinstance(block, CallBlock):
                    calls.append((block.call_id, block.name))
                elif isinstance(block, ServerResult):
                    results.append((block.call_id, block.text))
                else:
                    texts.append(block.text)
    return texts, results, calls


def _dump(messages: object) -> str:
    """The list as JSON; typed SDK objects as the SDK writes them."""
    return json.dumps(messages, default=lambda o: o.model_dump(mode="json", exclude_none=True))


def _check(
    lane: Lane,
    events: list[Event],
    *,
    merge_user: bool = False,
    make: Callable[[list[Event]], list[object]] | None = None,
    by_name: bool = False,
    dialect: Dialect | None = None,
) -> None:
    """``make``: the wire list of the events (default: ``build``); ``by_name``: calls carry no ids."""
    make = make or (lambda e: build(lane, e, merge_user=merge_user))
    given_list = make(events)
    view = ensure_tool_turn_invariants(given_list, lane=lane, dialect=dialect)

    assert validate(view.messages, lane=lane, dialect=dialect) == [], "the view validates for its lane"

    again = ensure_tool_turn_invariants(view.messages, lane=lane, dialect=dialect)
    assert again.repairs == (), "a second pass restores nothing"
    assert again.messages is view.messages, "and returns the same object"

    twice = ensure_tool_turn_invariants(make(events), lane=lane, dialect=dialect)
    assert (_dump(twice.messages), twice.repairs) == (_dump(view.messages), view.repairs), "deterministic"

    if not view.repairs:
        assert view.messages is given_list

    wire = _dump(view.messages)
    texts, results, calls = _payloads(events)
    orphaned = {i for r in view.repairs if r.form == "orphan_result" for i in r.tool_call_ids}
    duplicated = {i for r in view.repairs if r.form == "duplicate_call" for i in r.tool_call_ids}
    unanswerable = {i for r in view.repairs if r.form == "unanswerable_call" for i in r.tool_call_ids}
    for text in texts:
        assert text in wire, f"text {text} survives"
    for call_id, payload in results:
        reported = bool(orphaned) if by_name else call_id in orphaned
        assert payload in wire or reported, f"result {payload} of {call_id} survives or is a reported orphan"
    for call_id, name in calls:
        left_out = call_id in duplicated or call_id in unanswerable
        assert name in wire or left_out, f"call {name} ({call_id}) survives or is reported left out"
    assert view.lossy == bool(orphaned or duplicated or unanswerable)


_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


_KINDS = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""For lanes with calls of several kinds (Anthropic server and MCP tools; Responses shell, patch, computer calls)."""


@_KINDS
@given(transcripts("anthropic.messages"))
def test_anthropic_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Anthropic, server and MCP tools among the calls: valid, a fixed point, nothing lost unreported."""
    _check("anthropic.messages", events)


@_KINDS
@given(transcripts("anthropic.messages"))
def test_anthropic_with_results_and_text_sharing_user_messages(events: list[Event]) -> None:
    """Anthropic, results and user text in shared messages: the same properties hold."""
    _check("anthropic.messages", events, merge_user=True)


@_SETTINGS
@given(transcripts("openai.chat_completions"))
def test_chat_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Chat Completions: the view validates, a second pass is a no-op, and nothing is lost unreported."""
    _check("openai.chat_completions", events)


@_SETTINGS
@given(transcripts("openai.responses"))
def test_responses_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Responses: the view validates, a second pass is a no-op, and nothing is lost unreported."""
    _check("openai.responses", events)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts("openai.responses", ids=IDS[:3]))
def test_responses_calls_of_every_kind_give_a_valid_idempotent_deterministic_lossless_view(events: list[Event]) -> None:
    """Responses, calls of every kind sharing ids: the view validates, is a fixed point, loses nothing unreported."""
    _check("openai.responses", events)


@_SETTINGS
@given(transcripts(BEDROCK))
def test_bedrock_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Bedrock Converse: the view validates (roles alternate), a second pass is a no-op, nothing is lost unreported."""
    _check(BEDROCK, events)


@st.composite
def sessions(draw: st.DrawFn, lane: Lane, spell: Callable[[str], str] = str) -> list[Event]:
    """A longer session: clean rounds with fresh ids between broken stretches, ids rarely shared between stretches.

    ``spell``: how an id is written (a dialect's pattern).
    """
    events: list[Event] = []
    for k in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            calls = [CallBlock(spell(f"k{k}_{j}"), f"tool_k{k}_{j}") for j in range(draw(st.integers(1, 2)))]
            results = [R(call.call_id, f"<o{k}_{call.call_id}>") for call in calls]
            served: list[Block] = []
            if lane == ANTHROPIC and draw(st.booleans()):  # a web search the server answered in the same turn
                served = [
                    CallBlock(f"srv_k{k}", "web_search", kind="server_tool"),
                    ServerResult(f"<w{k}>", f"srv_k{k}"),
                ]
            events += [U(f"<q{k}>"), A(Text(f"<c{k}>"), *served, *calls), *results]
        else:
            events += draw(transcripts(lane, ids=tuple(map(spell, (f"b{k}_0", f"b{k}_1", "shared"))), tag=f"{k}_"))
    return events


def _is_assistant(lane: Lane, item: object) -> bool:
    assert isinstance(item, dict)
    if lane == "openai.responses":
        return item.get("role") == "assistant" or item.get("type") in ("reasoning", *openai_responses.CALL_TYPES)
    return item.get("role") in ("assistant", "model")


def _payload(item: object) -> str:
    """A payload only this assistant item carries (a text, thinking or call name of its own), quoted as in JSON."""
    found = _tags(item)
    assert found, f"no payload in {item!r}"
    return json.dumps(found[0])


def _tags(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if value.startswith(("<", "tool")) else []
    inner: list[object] = []
    if isinstance(value, dict):
        inner = list(value.values())
    elif isinstance(value, list):
        inner = list(value)
    return [tag for item in inner for tag in _tags(item)]


def _ahead_of(view: list[object] | object, payload: str) -> list[object]:
    """The view's items ahead of the one carrying ``payload`` (the image of an assistant item)."""
    assert isinstance(view, list)
    at = next(i for i, item in enumerate(view) if payload in json.dumps(item))
    return view[:at]


@st.composite
def _growth(
    draw: st.DrawFn, lanes: tuple[Lane, ...] = LANES, ids: tuple[str, ...] = IDS, spell: Callable[[str], str] = str
) -> tuple[Lane, list[Event], list[Event], bool]:
    lane = draw(st.sampled_from(lanes))
    merge_user = lane in ("anthropic.messages", GEMINI) and draw(st.booleans())
    return lane, draw(sessions(lane, spell)), draw(transcripts(lane, ids, tag="d")), merge_user


Answered = tuple[list[Event], A, list[Event], Callable[[list[Event]], list[object]]]


@st.composite
def _answered(draw: st.DrawFn, lane: Lane, pool: tuple[str, ...] = IDS, spell: Callable[[str], str] = str) -> Answered:
    """T (valid or broken, with or without answers), a model answer A, a suffix Δ, and the wire builder.

    Gemini: REST, snake_case or SDK spelling or a mix, with or without ids, results shared or split, signed or not.
    ``pool``, ``spell``: the id pool and how a session's own ids are written (a dialect's pattern).
    """
    events = draw(st.one_of(transcripts(lane, pool), sessions(lane, spell)))
    answer = _answer(draw, lane, (*pool, spell("fresh")), (f"x{n}" for n in range(100)), bare_reasoning=True)
    more = draw(transcripts(lane, pool, tag="d"))
    if lane == GEMINI:
        mixed = st.lists(st.sampled_from(_SPELLINGS), min_size=2, max_size=4).map(tuple)
        spelling: Spelling | tuple[Spelling, ...] = draw(st.one_of(st.sampled_from(_SPELLINGS), mixed))
        ids, merge_user, split = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())

        def make(transcript: list[Event]) -> list[object]:
            return gemini(transcript, spelling=spelling, ids=ids, merge_user=merge_user, split=split)

        assume(not _extends_the_step(events, answer))
        return events, answer, more, make
    merge = lane == ANTHROPIC and draw(st.booleans())
    if lane == ANTHROPIC:
        answer = _continued(events, answer)
    if lane == BEDROCK:
        assume(not _answer_joins_the_last_message(events))
    if lane == "openai.responses":
        assume(not _extends_the_run(events, answer, more))
    return events, answer, more, lambda transcript: build(lane, transcript, merge_user=merge)


def _answer_joins_the_last_message(events: list[Event]) -> bool:
    """Bedrock: T ends with an assistant message without calls, which the answer would join as streamed pieces."""
    return bool(events) and isinstance(events[-1], A) and not _ends_in_calls(events)


def _ends_in_calls(events: list[Event]) -> bool:
    """Whether T's last item is a call: an unanswered call turn stands at the end of T."""
    return bool(events) and isinstance(events[-1], A) and isinstance(events[-1].blocks[-1], CallBlock)


def _extends_the_run(events: list[Event], answer: A, more: list[Event]) -> bool:
    """Responses: call items follow T's trailing run with only reasoning between (the limitation the README states).

    The answer opens with calls after its reasoning, or is reasoning alone and the next answer opens
    with calls. (A repeated call id opens a run of its own; ``tests/test_law_append_stable.py`` shows that case.)
    """
    leading: object = None
    for event in (answer, *more):
        if not isinstance(event, A):
            break
        leading = next((block for block in event.blocks if not isinstance(block, Thinking)), None)
        if leading is not None:
            break
    return _ends_in_calls(events) and isinstance(leading, CallBlock)


def _text_after_a_call(lane: Lane, events: list[Event]) -> bool:
    """Responses: an answer whose message item stands after its call items (the price the README states).

    A list alone cannot tell that message from the model's next answer, so an output after it is
    delivered where it stands, though the provider would take the list as it is.
    """
    return lane == "openai.responses" and any(
        isinstance(event, A)
        and any(
            isinstance(block, Text) and any(isinstance(b, CallBlock) for b in event.blocks[:index])
            for index, block in enumerate(event.blocks)
        )
        for event in events
    )


def _extends_the_step(events: list[Event], answer: A) -> bool:
    """Gemini: an answer whose first call is unsigned, right after T's trailing call content (the same limitation)."""
    calls = [block for block in answer.blocks if isinstance(block, CallBlock)]
    last = events[-1] if events else None
    has_calls = isinstance(last, A) and any(isinstance(block, CallBlock) for block in last.blocks)
    return has_calls and bool(calls) and not calls[0].signed


def _strong_property(case: Answered, lane: Lane, dialect: Dialect | None = None) -> None:
    events, answer, more, make = case
    before = json.loads(_dump(ensure_tool_turn_invariants(make(events), lane=lane, dialect=dialect).messages))
    grown = make([*events, answer, *more])
    after = json.loads(_dump(ensure_tool_turn_invariants(grown, lane=lane, dialect=dialect).messages))
    assert after[: len(before)] == before, "the request the model answered is a prefix of every later one"


_STRONG = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_STRONG
@given(_answered("anthropic.messages"))
def test_anthropic_the_request_the_model_answered_is_a_prefix_of_every_later_one(case: Answered) -> None:
    """Anthropic: view(T + [A] + Δ) starts with view(T), for any T, model answer A and suffix Δ."""
    _strong_property(case, "anthropic.messages")


@_STRONG
@given(_answered("openai.chat_completions"))
def test_chat_the_request_the_model_answered_is_a_prefix_of_every_later_one(case: Answered) -> None:
    """Chat Completions: view(T + [A] + Δ) starts with view(T), for any T, model answer A and suffix Δ."""
    _strong_property(case, "openai.chat_completions")


@_STRONG
@given(_answered("openai.responses"))
def test_responses_the_request_the_model_answered_is_a_prefix_of_every_later_one(case: Answered) -> None:
    """Responses: view(T + [A] + Δ) starts with view(T); closes stay right after their run, reasoning included."""
    _strong_property(case, "openai.responses")


@_STRONG
@given(_answered(GEMINI))
def test_gemini_the_request_the_model_answered_is_a_prefix_of_every_later_one(case: Answered) -> None:
    """Gemini, every spelling, ids or names, signed or not: view(T + [A] + Δ) starts with view(T)."""
    _strong_property(case, GEMINI)


@_STRONG
@given(_answered(BEDROCK))
def test_bedrock_the_request_the_model_answered_is_a_prefix_of_every_later_one(case: Answered) -> None:
    """Bedrock Converse: view(T + [A] + Δ) starts with view(T); a user message never joins an earlier request's."""
    _strong_property(case, BEDROCK)


def _answered_as_sent(
    lane: Lane,
    head: list[object],
    events: list[Event],
    *,
    merge_user: bool = False,
    dialect: Dialect | None = None,
    make: Callable[[list[Event]], list[object]] | None = None,
) -> bool:
    """Whether every request a model answer in ``events`` was given (``head`` + the events before it) validates."""
    wire = make or (lambda e: build(lane, e, merge_user=merge_user))
    return all(
        validate([*head, *wire(events[:k])], lane=lane, dialect=dialect) == []
        for k, event in enumerate(events)
        if isinstance(event, A)
    )


@_SETTINGS
@given(_growth())
def test_a_list_the_provider_accepts_is_its_own_view(case: tuple[Lane, list[Event], list[Event], bool]) -> None:
    """A session whose every request the provider accepted comes back as the very same list, with no repairs.

    Every request: the list, and each list a model answer in it was given. A list that validates only
    now, after an answer the model gave over a close, keeps the close it answered over (append-stable).
    """
    _identity_when_valid(case)


@_KINDS
@given(_growth(lanes=(ANTHROPIC,)))
def test_anthropic_with_server_tools_a_list_the_provider_accepts_is_its_own_view(
    case: tuple[Lane, list[Event], list[Event], bool],
) -> None:
    """Anthropic, server and MCP tools among the calls: a list the provider accepts is its own view."""
    _identity_when_valid(case)


@_KINDS
@given(_growth(lanes=("openai.responses",)))
def test_responses_with_calls_of_every_kind_a_list_the_provider_accepts_is_its_own_view(
    case: tuple[Lane, list[Event], list[Event], bool],
) -> None:
    """Responses, shell, patch and computer calls among the calls: a list the provider accepts is its own view."""
    _identity_when_valid(case)


def _identity_when_valid(
    case: tuple[Lane, list[Event], list[Event], bool],
    dialect: Dialect | None = None,
    make: Callable[[list[Event]], list[object]] | None = None,
) -> None:
    """``make``: the wire list of the events (default: ``build``, merging user messages as the case says)."""
    lane, events, more, merge_user = case
    wire = make or (lambda e: build(lane, e, merge_user=merge_user))
    for given_events in (events, events + more):
        given_list = wire(given_events)
        view = ensure_tool_turn_invariants(given_list, lane=lane, dialect=dialect)
        if (
            validate(given_list, lane=lane, dialect=dialect) == []
            and _answered_as_sent(lane, [], given_events, merge_user=merge_user, dialect=dialect, make=make)
            and not _text_after_a_call(lane, given_events)
        ):
            assert view.messages is given_list
            assert view.repairs == ()
        grown = [*view.messages, *(make or (lambda e: build(lane, e)))(more)]
        if (
            validate(grown, lane=lane, dialect=dialect) == []
            and _answered_as_sent(lane, list(view.messages), more, dialect=dialect, make=make)
            and not _text_after_a_call(lane, more)
        ):
            again = ensure_tool_turn_invariants(grown, lane=lane, dialect=dialect)
            assert again.messages is grown
            assert again.repairs == ()


@pytest.mark.parametrize("lane", LANES)
def test_a_session_answered_over_a_close_keeps_its_prefix_when_the_real_result_lands(lane: Lane) -> None:
    """Ctrl-C, "continue", the model answers over the close, then the real result lands: no earlier message changes."""
    start: list[Event] = [U("go"), A(CallBlock("fast"), CallBlock("slow", "g")), R("fast", "<fast>"), U("continue")]
    first = list(ensure_tool_turn_invariants(build(lane, start), lane=lane).messages)
    wire = json.dumps(first)
    assert INTERRUPTED_RESULT_TEXT in wire, "the slow call is closed"
    assert wire.index(INTERRUPTED_RESULT_TEXT) < wire.index('"continue"'), "the close stands ahead of the user's text"
    answered = [*start, A(Thinking("<th>"), Text("<ok>"))]
    landed = ensure_tool_turn_invariants(build(lane, [*answered, R("slow", "<slow>")]), lane=lane)
    assert list(landed.messages[: len(first)]) == first, "what the model answered from stands as it was"
    assert "<slow>" in json.dumps(landed.messages[len(first) :]), "the real result is delivered, after the answer"
    assert validate(landed.messages, lane=lane) == []


_SCRIPT = """
import json, sys
from otel_toolturn import LANES, ensure_tool_turn_invariants, validate
from tests.transcripts import A, R, Rx, U, build, c, ollama, t
events = [R("c9"), U("q"), A(t("a"), c("c1"), c("c2"), c("c3"), c("c1"), t("b")), R("c3"), U("wait"),
          R("c2", "x"), R("c2", "y"), Rx("c1"), A(c("c3")), U("more"),
          A(*(c(f"k{n}", f"tool_{n}") for n in range(8))), U("stop")]
out = {}
for lane in LANES:
    given = build(lane, events)
    view = ensure_tool_turn_invariants(given, lane=lane)
    out[lane] = [view.messages, [[r.form, list(r.tool_call_ids), r.before_run] for r in view.repairs],
                 [[v.rule, v.message] for v in validate(given, lane=lane)]]
given = ollama(events)
view = ensure_tool_turn_invariants(given, lane="openai.chat_completions", dialect="ollama")
out["ollama"] = [view.messages, [[r.form, list(r.tool_call_ids)] for r in view.repairs],
                 [[v.rule, v.message] for v in validate(given, lane="openai.chat_completions", dialect="ollama")]]
sys.stdout.write(json.dumps(out))
"""


def test_output_is_identical_across_processes_and_hash_seeds() -> None:
    """The same input gives the same view, repairs and violations in processes with different PYTHONHASHSEED values."""
    root = Path(__file__).resolve().parents[1]
    outputs = []
    for seed in ("1", "4242", "7", "99"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, cwd=root, check=True
        )
        outputs.append(done.stdout)
    assert outputs[1:] == outputs[:-1]
    assert json.loads(outputs[0])["anthropic.messages"][1]
    assert "calls k0, k1, k2, k3, k4, k5, k6, k7 with" in json.dumps(json.loads(outputs[0])["ollama"][2])


@pytest.mark.parametrize("lane", LANES)
def test_typed_sdk_objects_pass_through_and_are_copied_not_mutated(lane: Lane) -> None:
    """Pydantic items from an earlier response are read like dicts; repaired ones are copies."""
    from pydantic import BaseModel, ConfigDict  # noqa: PLC0415 - only this test needs pydantic

    class Item(BaseModel):
        model_config = ConfigDict(extra="allow", frozen=True)

    events: list[Event] = [U("q"), A(CallBlock("c1"), CallBlock("c1")), R("c1")]
    wire = [Item(**item) if isinstance(item, dict) else item for item in build(lane, events)]
    view = ensure_tool_turn_invariants(wire, lane=lane)
    assert [r.form for r in view.repairs] == ["duplicate_call"]
    assert isinstance(view.messages[1], Item)
    assert view.messages[1] is not wire[1] or lane == "openai.responses"


_TURN_ORDER_RULES = ("roles_not_alternating", "first_message_not_user")


def _tool_turn_violations(view: object, given: list[object], lane: Lane) -> list[str]:
    """The rules the view breaks, but for the turn order the caller sent: that one no more often than the input did.

    Bedrock refuses two messages of one role in a row, or an assistant message first, and the law does not
    merge or invent what it did not write.
    """
    broken = [v.rule for v in validate(view, lane=lane)]  # type: ignore[arg-type]
    sent = [v.rule for v in validate(given, lane=lane)]
    for rule in _TURN_ORDER_RULES:
        assert broken.count(rule) <= sent.count(rule), rule
    return [rule for rule in broken if rule not in _TURN_ORDER_RULES]


@st.composite
def _with_repeats(draw: st.DrawFn) -> tuple[Lane, list[object]]:
    """A generated transcript with some of its own item objects inserted again (a retry's ``input += output``)."""
    lane = draw(st.sampled_from(LANES))
    items = build(lane, draw(transcripts(lane)))
    for _ in range(draw(st.integers(1, 3)) if items else 0):
        repeated = items[draw(st.integers(0, len(items) - 1))]
        first = 1 if lane == GEMINI else 0  # Gemini: keep the leading user content (a leading call turn is refused)
        items.insert(draw(st.integers(first, len(items))), repeated)
    return lane, items


@_SETTINGS
@given(_with_repeats())
def test_same_object_repeats_give_a_valid_idempotent_view_that_loses_nothing_unreported(
    case: tuple[Lane, list[object]],
) -> None:
    """The very same item object twice or more: the view validates, a second pass is a no-op, losses are reported."""
    lane, items = case
    view = ensure_tool_turn_invariants(items, lane=lane)
    assert _tool_turn_violations(view.messages, items, lane) == []
    again = ensure_tool_turn_invariants(view.messages, lane=lane)
    assert again.repairs == ()
    assert again.messages is view.messages
    if not view.lossy:
        wire = json.dumps(view.messages)
        assert all(tag in wire for tag in _tags(items))


GeminiCase = tuple[list[Event], Spelling | tuple[Spelling, ...], bool, bool, bool]
"""Events, the spelling (or one per content, cycling), ids, user text sharing results' contents, results split."""


@st.composite
def _gemini_case(draw: st.DrawFn) -> GeminiCase:
    mixed = st.lists(st.sampled_from(_SPELLINGS), min_size=2, max_size=4).map(tuple)
    spelling: Spelling | tuple[Spelling, ...] = draw(st.one_of(st.sampled_from(_SPELLINGS), mixed))
    return draw(transcripts(GEMINI)), spelling, draw(st.booleans()), draw(st.booleans()), draw(st.booleans())


@_SETTINGS
@given(_gemini_case())
def test_gemini_in_every_spelling_with_and_without_ids_is_valid_idempotent_deterministic_and_lossless(
    case: GeminiCase,
) -> None:
    """Gemini, REST / snake_case / SDK objects or a mix, ids or names, results split or shared: the properties hold."""
    events, spelling, ids, merge_user, split = case
    _check(
        GEMINI,
        events,
        make=lambda e: gemini(e, spelling=spelling, ids=ids, merge_user=merge_user, split=split),
        by_name=not ids,
    )


@_SETTINGS
@given(_gemini_case())
def test_gemini_in_every_spelling_and_mixed_google_genai_sends_every_part_of_the_view(case: GeminiCase) -> None:
    """Whatever the spellings mixed in ``contents``, the request google-genai sends holds every part of the view."""
    events, spelling, ids, merge_user, split = case
    given_list = gemini(events, spelling=spelling, ids=ids, merge_user=merge_user, split=split)
    view = ensure_tool_turn_invariants(given_list, lane=GEMINI)
    assert_sent_whole(view.messages)


def _signed_parts(contents: object) -> list[tuple[object, bool]]:
    """Every part that carries a thought signature, in order, each with whether it stands in a model content."""
    from otel_toolturn.lanes._gemini_parts import signed  # noqa: PLC0415 - the lane's own reading of a signature

    found: list[tuple[object, bool]] = []
    assert isinstance(contents, list)
    for content in contents:
        role = content.get("role") if isinstance(content, dict) else content.role
        parts = content.get("parts") if isinstance(content, dict) else content.parts
        found.extend((part, role == "model") for part in parts or () if signed(part))
    return found


@_SETTINGS
@given(_gemini_case())
def test_gemini_signed_parts_are_never_changed_moved_or_dropped(case: GeminiCase) -> None:
    """Every part carrying a thought signature comes back as the same object, in order, in a model content."""
    events, spelling, ids, merge_user, split = case
    given_list = gemini(events, spelling=spelling, ids=ids, merge_user=merge_user, split=split)
    view = ensure_tool_turn_invariants(given_list, lane=GEMINI)
    before = _signed_parts(given_list)
    after = [part for part in _signed_parts(view.messages) if any(part[0] is p for p, _ in before)]
    assert [p for p, _ in after] == [p for p, _ in before]
    assert all(in_model for _, in_model in after)
    stamped = [r for r in view.repairs if r.form == "placeholder_signature"]
    assert len(_signed_parts(view.messages)) == len(before) + sum(len(r.tool_call_ids) for r in stamped)
