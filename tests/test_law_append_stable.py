"""Append-stability, case by case: what the model answered from is never rewritten, in every lane.

Each case is a session as a caller records it, request by request; the request the model answered
must stand, unchanged, at the head of every later request. The last two tests show the one case the
lists alone cannot tell apart (an answer of calls only, right after an unanswered run), which the
README's Limitations state.
"""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from otel_toolturn import INTERRUPTED_RESULT_TEXT, LANES, Lane, ensure_tool_turn_invariants, validate
from otel_toolturn.lanes.gemini import LEADING_RESULTS_TEXT
from tests.transcripts import A, Event, R, U, build, c, gemini, mr, mu, sr, su, t, th

ANTHROPIC: Lane = "anthropic.messages"
RESPONSES: Lane = "openai.responses"
GEMINI: Lane = "gemini.generate_content"


def _view(lane: Lane, items: list[object]) -> list[object]:
    view = ensure_tool_turn_invariants(items, lane=lane)
    assert validate(view.messages, lane=lane) == []
    return list(view.messages)


def _each_request_heads_the_next(lane: Lane, requests: list[list[object]]) -> None:
    """Every request's view is the head of the next one's (each was answered before the next was sent)."""
    views = [_view(lane, items) for items in requests]
    for earlier, later in pairwise(views):
        assert later[: len(earlier)] == earlier


@pytest.mark.parametrize("lane", LANES)
def test_a_close_stays_where_the_model_saw_it_when_the_user_speaks_next(lane: Lane) -> None:
    """[user, call] is closed; the model answers, the user speaks: the close stays right after the call."""
    asked: list[Event] = [U("go"), A(c("c1"))]
    answered: list[Event] = [*asked, A(t("ans")), U("more")]
    landed: list[Event] = [*answered, A(t("ok")), R("c1", "<late>")]
    _each_request_heads_the_next(lane, [build(lane, asked), build(lane, answered), build(lane, landed)])
    first = _view(lane, build(lane, asked))
    assert json.dumps(first[-1]).count("interrupted") == 1, "the close is the last item of the first request"
    assert "<late>" in json.dumps(_view(lane, build(lane, landed))[len(first) :]), "the late result is delivered"


def test_responses_no_stale_close_trails_the_new_user_messages() -> None:
    """Responses: in a long session the interrupted output stays right after its run, never behind later messages."""
    events: list[Event] = [U("go"), A(c("c1"))]
    for k in range(5):
        events += [A(t(f"ans{k}")), U(f"more{k}")]
    view = _view(RESPONSES, build(RESPONSES, events))
    closes = [i for i, item in enumerate(view) if INTERRUPTED_RESULT_TEXT in json.dumps(item)]
    assert closes == [2]
    assert view[-1] == {"role": "user", "content": "more4"}


def test_gemini_an_answer_without_calls_ends_the_call_step() -> None:
    """Gemini: a model content without calls after a call content is the answer; the close stays ahead of it."""
    asked: list[Event] = [U("go"), A(c("a", signed=False))]
    answered: list[Event] = [*asked, A(t("ans")), U("more")]
    for ids in (True, False):
        requests = [gemini(asked, ids=ids), gemini(answered, ids=ids)]
        _each_request_heads_the_next(GEMINI, requests)


def test_gemini_streamed_text_ahead_of_the_calls_stays_one_step() -> None:
    """Gemini: text chunks stored as their own model contents ahead of the call chunk are one step, answered once."""
    contents = gemini([U("go"), A(t("let me")), A(th("thinking")), A(c("a"), c("b")), R("a"), R("b")])
    view = ensure_tool_turn_invariants(contents, lane=GEMINI)
    assert view.messages is contents
    assert view.repairs == ()


@pytest.mark.parametrize("answer_first", [False, True])
def test_gemini_one_placeholder_text_per_position(answer_first: bool) -> None:
    """Gemini: contents of only orphan responses hold the same text before and after the model answers."""
    orphan = {"role": "user", "parts": [{"functionResponse": {"name": "f", "id": "gone", "response": {"output": "x"}}}]}
    head: list[object] = [{"role": "model", "parts": [{"text": "hi"}]}] if answer_first else []
    asked: list[object] = [*head, orphan]
    answered: list[object] = [*asked, {"role": "model", "parts": [{"text": "ans"}]}]
    _each_request_heads_the_next(GEMINI, [asked, answered])
    placeholder = {"role": "user", "parts": [{"text": LEADING_RESULTS_TEXT}]}
    assert _view(GEMINI, asked)[-1] == placeholder
    assert _view(GEMINI, answered)[len(head)] == placeholder


@pytest.mark.parametrize("lane", [RESPONSES, GEMINI])
def test_a_later_call_repeating_an_id_keeps_the_result_it_was_sent_with(lane: Lane) -> None:
    """A repeated call id after an unanswered call is a later answer: both calls kept, each with its own result.

    The call that was answered keeps the result recorded for it; the one before keeps the close the model saw.
    """
    asked: list[Event] = [U("go"), A(c("c1", "f"))]
    answered: list[Event] = [*asked, A(c("c1", "g")), R("c1", "<g-result>")]
    requests = [build(lane, asked), build(lane, answered)]
    _each_request_heads_the_next(lane, requests)
    view = ensure_tool_turn_invariants(requests[1], lane=lane)
    assert not view.lossy
    wire = json.dumps(view.messages)
    assert wire.index('"g"') < wire.index("<g-result>"), "g's result follows g"
    assert wire.count(INTERRUPTED_RESULT_TEXT) == 1, "f keeps its close; g is answered"


@pytest.mark.parametrize("lane", [RESPONSES, GEMINI])
def test_an_answer_of_calls_only_right_after_an_unanswered_run_is_read_as_that_run(lane: Lane) -> None:
    """The limitation: a later answer of unsigned calls joins the unanswered run before it, and its close moves.

    The lists alone cannot tell it from one answer with parallel calls; the view stays valid and loses nothing.
    """
    asked: list[Event] = [U("go"), A(c("c1", signed=False))]
    answered: list[Event] = [*asked, A(c("c2", "g", signed=False))]
    first = _view(lane, build(lane, asked))
    later = ensure_tool_turn_invariants(build(lane, answered), lane=lane)
    assert validate(later.messages, lane=lane) == []
    assert not later.lossy
    assert list(later.messages[: len(first)]) != first


def test_gemini_a_signed_answer_of_calls_opens_its_own_step() -> None:
    """Gemini: the first call of each answer is signed, so a signed answer of calls after an open step is its own."""
    asked: list[Event] = [U("go"), A(c("a"))]
    answered: list[Event] = [*asked, A(c("b", "g"))]
    _each_request_heads_the_next(GEMINI, [gemini(asked), gemini(answered)])


def test_anthropic_a_pause_turn_continuation_keeps_the_request_the_model_answered() -> None:
    """Anthropic: a paused turn sent back, its continuation, an interrupted search: each request heads the next."""
    paused: list[Event] = [U("go"), A(t("searching"), su("s1"))]
    continued: list[Event] = [*paused, A(sr("s1"), t("found"), su("s2")), U("stop there")]
    answered: list[Event] = [*continued, A(t("stopped")), U("thanks")]
    requests = [build(ANTHROPIC, events) for events in (paused, continued, answered)]
    _each_request_heads_the_next(ANTHROPIC, requests)
    assert ensure_tool_turn_invariants(requests[0], lane=ANTHROPIC).messages is requests[0]
    assert json.dumps(_view(ANTHROPIC, requests[1])[2]).count("web_search_tool_result_error") == 1, "s2 closed"


def test_anthropic_an_mcp_use_closed_in_its_turn_stays_closed_there() -> None:
    """Anthropic: an MCP use the user interrupted is closed in its own message, and later requests keep it so."""
    asked: list[Event] = [U("go"), A(mu("m1"), c("c1")), R("c1"), U("never mind")]
    answered: list[Event] = [*asked, A(t("ok")), U("more"), A(mu("m2"), mr("m2"), t("done"))]
    _each_request_heads_the_next(ANTHROPIC, [build(ANTHROPIC, asked), build(ANTHROPIC, answered)])
