"""The ids the law writes: every derived id keeps its lane's pattern and length, and ids the API refuses are renamed.

The limits, in the providers' words: Chat Completions ``Invalid 'messages[3].tool_calls[0].id': string too
long. Expected a string with maximum length 40, but got a string with length 41 instead.``
(microsoft/autogen#6377, agno-agi/agno#5382); Responses ``Invalid 'input[149].call_id': string too long.
Expected a string with maximum length 64, but got a string with length 86 instead.`` (openai/codex#14355,
AnswerDotAI/fastllm#45); Anthropic ``String should match pattern '^[a-zA-Z0-9_-]+$'``; Bedrock Converse: the
service model's ``ToolUseId``, 1 to 64 characters of ``[a-zA-Z0-9_.:-]+`` (run-llama/llama_index#22775).
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_toolturn import Lane, ensure_tool_turn_invariants, validate
from otel_toolturn._view import LaneAdapter, TakenIds, field
from otel_toolturn._vocab import LANES
from otel_toolturn.lanes import DIALECT_ADAPTERS, adapter_for, bedrock_converse
from otel_toolturn.lanes._common import derive_id
from tests.test_law_properties import _check, transcripts
from tests.transcripts import A, Event, R, U, build, c

_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
LIMITS: dict[Lane, int] = {
    "anthropic.messages": 64,
    "openai.chat_completions": 40,
    "openai.responses": 64,
    "bedrock.converse": 64,
}
"""The longest call id the law writes in each lane with a limit (Anthropic: ours, the API states none)."""

LONG_IDS = ("c0", "c" * 40, "d" * 41, "e" * 64, "f" * 65, "g" * 70, "fn.lookup:" + "h" * 58)
"""An id pool around each limit, with one the Anthropic pattern refuses."""


def _written_ids(lane: Lane, messages: object) -> list[str]:
    """Every call id and answered id the list carries, in order."""
    assert isinstance(messages, list)
    found: list[str] = []
    for item in messages:
        if lane == "bedrock.converse":
            found.extend(_bedrock_ids(item))
        elif lane == "anthropic.messages":
            content = field(item, "content")
            for block in content if isinstance(content, list) else ():
                found.extend(str(field(block, key)) for key in ("id", "tool_use_id") if field(block, key) is not None)
        elif lane == "openai.chat_completions":
            found.extend(str(field(call, "id")) for call in field(item, "tool_calls") or ())  # type: ignore[attr-defined]
            if field(item, "role") == "tool":
                found.append(str(field(item, "tool_call_id")))
        elif field(item, "call_id") is not None:
            found.append(str(field(item, "call_id")))
    return found


def _bedrock_ids(message: object) -> list[str]:
    """The ids of a Converse message's ``toolUse`` and ``toolResult`` blocks, in order."""
    content = field(message, "content")
    found: list[str] = []
    for block in content if isinstance(content, list) else ():
        for key in ("toolUse", "toolResult"):
            call_id = field(field(block, key), "toolUseId") if field(block, key) is not None else None
            if call_id is not None:
                found.append(str(call_id))
    return found


def _fits(lane: Lane, call_id: str, given_ids: set[str]) -> bool:
    if lane == "bedrock.converse":
        return bedrock_converse.fits_id(call_id)
    if lane == "anthropic.messages":
        return _ANTHROPIC_ID.match(call_id) is not None and (call_id in given_ids or len(call_id) <= LIMITS[lane])
    return len(call_id) <= LIMITS[lane]


_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.sampled_from(sorted(LIMITS)).flatmap(lambda lane: st.tuples(st.just(lane), transcripts(lane, LONG_IDS))))
def test_no_id_in_the_view_falls_outside_its_lanes_pattern_or_length(case: tuple[Lane, list[Event]]) -> None:
    """Over ids around each lane's limit, reused and refused: every id in the view fits, and the view holds."""
    lane, events = case
    _check(lane, events)
    given_ids = set(_written_ids(lane, build(lane, events)))
    view = ensure_tool_turn_invariants(build(lane, events), lane=lane)
    for call_id in _written_ids(lane, view.messages):
        assert _fits(lane, call_id, given_ids), f"{lane}: {len(call_id)} characters written"


@given(st.text(min_size=1, max_size=90), st.sets(st.text(min_size=1, max_size=70), max_size=8))
def test_a_derived_id_is_free_and_within_its_limit(call_id: str, taken: set[str]) -> None:
    """derive_id gives an id not taken, within the limit, and of the pattern when asked."""
    for limit in (40, 64):
        ids = TakenIds()
        ids.update(taken)
        new = derive_id(call_id, ids, pattern_safe=True, limit=limit)
        assert new not in taken
        assert len(new) <= limit
        assert _ANTHROPIC_ID.match(new)


@given(
    st.lists(st.sampled_from(["call_0", "call_0_2", "x" * 70, "toolu_ab"]), min_size=1, max_size=12),
    st.sets(st.sampled_from(["call_0_3", "call_0_5", "x" * 38 + "_3", "toolu_ab_2"]), max_size=4),
)
def test_a_resumed_search_finds_what_a_search_from_2_finds(bases: list[str], others: set[str]) -> None:
    """Deriving id after id with one TakenIds gives each time the id a fresh search over the same ids gives."""
    resumed = TakenIds()
    resumed.update(others)
    for base in bases:
        fresh = TakenIds()
        fresh.update(resumed)
        expected = derive_id(base, fresh, pattern_safe=False, limit=40)
        assert derive_id(base, resumed, pattern_safe=False, limit=40) == expected
        resumed.add(expected)
        resumed.add(base)


def test_responses_a_repeated_call_id_of_64_characters_is_renamed_within_64() -> None:
    """Responses: the later use of a 64-character call_id gets a derived id of at most 64 characters."""
    long_id = "call_" + "x" * 59
    events: list[Event] = [U("q"), A(c(long_id)), R(long_id, "one"), A(c(long_id)), R(long_id, "two")]
    view = ensure_tool_turn_invariants(build("openai.responses", events), lane="openai.responses")
    assert [r.form for r in view.repairs] == ["reused_id"]
    ids = _written_ids("openai.responses", view.messages)
    assert ids[:2] == [long_id, long_id]
    assert ids[2] == ids[3] != long_id
    assert len(ids[2]) == 64
    assert validate(view.messages, lane="openai.responses") == []


def test_responses_a_call_id_over_64_characters_is_refused_and_renamed_with_its_output() -> None:
    """Responses: a 71-character call_id is refused in OpenAI's words, and the view cuts it to 64, output with it."""
    long_id = "codex_mcp__hermes-tools__kanban_complete_exec-" + "0" * 25
    items = build("openai.responses", [U("q"), A(c(long_id)), R(long_id, "done")])
    [violation] = validate(items, lane="openai.responses")[:1]
    assert violation.message == (
        "Invalid 'input[1].call_id': string too long. Expected a string with maximum length 64, "
        "but got a string with length 71 instead."
    )
    view = ensure_tool_turn_invariants(items, lane="openai.responses")
    assert [(r.form, r.tool_call_ids) for r in view.repairs] == [("invalid_id", (long_id,))]
    assert _written_ids("openai.responses", view.messages) == [long_id[:64], long_id[:64]]
    assert validate(view.messages, lane="openai.responses") == []


def test_chat_a_tool_call_id_over_40_characters_is_refused_and_renamed_with_its_result() -> None:
    """Chat: a Responses item id carried into Chat (53 characters) is refused as OpenAI words it, and cut to 40."""
    long_id = "fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f"
    items = build("openai.chat_completions", [U("q"), A(c(long_id)), R(long_id, "hits")])
    expected = (
        "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length 40, "
        "but got a string with length 53 instead."
    )
    assert [v.message for v in validate(items, lane="openai.chat_completions")] == [expected]
    view = ensure_tool_turn_invariants(items, lane="openai.chat_completions")
    assert [(r.form, r.tool_call_ids) for r in view.repairs] == [("invalid_id", (long_id,))]
    assert _written_ids("openai.chat_completions", view.messages) == [long_id[:40], long_id[:40]]
    assert validate(view.messages, lane="openai.chat_completions") == []


def test_chat_a_reused_id_that_fits_is_kept_as_chat_accepts_it() -> None:
    """Chat: a repeated id within 40 characters is no repair (only ids the API refuses are renamed)."""
    items = build("openai.chat_completions", [U("q"), A(c("c1")), R("c1", "a"), A(c("c1")), R("c1", "b")])
    view = ensure_tool_turn_invariants(items, lane="openai.chat_completions")
    assert view.repairs == ()
    assert view.messages is items


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(DIALECT_ADAPTERS.items()) + [(lane, adapter_for(lane, None)) for lane in LANES]),
    st.lists(st.sampled_from([*LONG_IDS, "D681PevKs", "x7Yq0Lm2Z", "D681PevK", "a.b", "tool_é"]), max_size=5),
)
def test_a_turn_fits_exactly_when_each_of_its_ids_fits_alone(case: tuple[str, LaneAdapter], ids: list[str]) -> None:
    """Every lane and dialect asks its id rule once over a turn's ids: that answers as the ids asked one by one."""
    _, adapter = case
    assert adapter.fits_ids(ids) == all(adapter.fits_ids([call_id]) for call_id in ids)


def test_chat_a_refused_id_in_a_clean_turn_renames_that_turn_alone() -> None:
    """Chat: among clean turns, the one whose id is over 40 characters is renamed; the others stay the same objects."""
    long_id = "x" * 41
    items = build(
        "openai.chat_completions",
        [U("q"), A(c("c1")), R("c1", "a"), A(c(long_id)), R(long_id, "b"), A(c("c2")), R("c2", "c")],
    )
    view = ensure_tool_turn_invariants(items, lane="openai.chat_completions")
    assert [(r.form, r.tool_call_ids) for r in view.repairs] == [("invalid_id", (long_id,))]
    assert isinstance(view.messages, list)
    assert [m is i for m, i in zip(view.messages, items, strict=True)] == [True, True, True, False, False, True, True]
    assert _written_ids("openai.chat_completions", view.messages) == ["c1", "c1", "x" * 40, "x" * 40, "c2", "c2"]
