"""The law and ``validate`` in each dialect of a lane: Mistral's, DeepSeek's, Cohere's and Ollama's Chat.

Mistral refuses a call id that is not nine letters and digits, ``Tool call id was call_search but must be
a-z, A-Z, 0-9, with a length of 9.`` (jackmpcollins/magentic#276, editor-code-assistant/eca#233,
anomalyco/opencode#1680, karthink/gptel#1203), and a turn whose calls and ``tool`` messages do not pair up,
``Not the same number of function calls and responses`` (mistralai/client-python#234, mistralai/client-ts#106,
camel-ai/camel#1467, 567-labs/instructor#724, miquido/draive#398). The properties of every lane hold in the
dialect too, over id pools that mix ids Mistral accepts with OpenAI's and a framework's own.

Ollama refuses no tool turn; models fed an unanswered call or a result with no call before it lose track of
the tool (ollama/ollama#11704, taketwo/llm-ollama#72). Its calls usually carry no id: the properties hold over
id-less transcripts whose calls share a few names, results matched by name and order.

DeepSeek in thinking mode refuses an assistant message of a turn with tool calls that lacks its
``reasoning_content``, ``Missing `reasoning_content` field in the assistant message at message index 2. For
more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls``
(https://api-docs.deepseek.com/guides/thinking_mode, hotovo/aider-desk#529, continuedev/continue#10193,
CherryHQ/cherry-studio#11751): the law keeps the field on every message it writes, and reports a missing
one, which it cannot invent. Cohere's v2 chat states Chat's rules after ``invalid request: ``
(oracle/langchain-oracle#10).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessage

from otel_toolturn import (
    DIALECTS,
    INTERRUPTED_RESULT_TEXT,
    Dialect,
    Lane,
    UnknownLaneError,
    ensure_tool_turn_invariants,
    validate,
)
from otel_toolturn._view import Clean, field
from otel_toolturn.instrument._config import dialect_of, provider_by_host
from otel_toolturn.lanes import DIALECT_ADAPTERS
from otel_toolturn.lanes.deepseek_chat import reasoning_words
from otel_toolturn.lanes.mistral_chat import COUNT_WORDS, id_words
from tests.test_law_properties import (
    Answered,
    _answered,
    _check,
    _growth,
    _identity_when_valid,
    _strong_property,
    transcripts,
)
from tests.transcripts import A, CallBlock, Event, R, Text, U, build, ollama

CHAT: Final[Lane] = "openai.chat_completions"
MISTRAL: Final[Dialect] = "mistral"
DEEPSEEK: Final[Dialect] = "deepseek"
COHERE: Final[Dialect] = "cohere"
PATTERN: Final = re.compile(r"^[a-zA-Z0-9]{9}$")
MISTRAL_IDS: Final = ("D681PevKs", "aB3dE6gH9", "call_abc", "c0")
"""Two ids Mistral accepts, an OpenAI-style id and a short framework id: renames meet kept ids."""


def _fit(call_id: str) -> str:
    """An id written in Mistral's pattern: letters and digits, padded or cut to nine."""
    return (call_id.replace("_", "x") + "000000000")[:9]


def _as_given(call_id: str) -> str:
    """An id as the pool has it."""
    return call_id


def _ids(messages: object) -> list[str]:
    """Every call id and answered id a Chat list carries, in order."""
    assert isinstance(messages, list)
    found: list[str] = []
    for message in messages:
        calls = field(message, "tool_calls")
        found.extend(str(field(call, "id")) for call in (calls if isinstance(calls, list) else ()))
        if field(message, "role") == "tool":
            found.append(str(field(message, "tool_call_id")))
    return found


_DIALECT = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_dialect_has_an_adapter_on_its_lane() -> None:
    """The dialect table is keyed by the whole vocabulary, each adapter a Chat adapter naming its dialect."""
    assert set(DIALECT_ADAPTERS) == set(DIALECTS)
    assert all(adapter.dialect == dialect and adapter.lane == CHAT for dialect, adapter in DIALECT_ADAPTERS.items())


@_DIALECT
@given(transcripts(CHAT, MISTRAL_IDS))
def test_mistral_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Mistral: the view validates in the dialect, a second pass is a no-op, nothing is lost unreported."""
    _check(CHAT, events, dialect=MISTRAL)


@_DIALECT
@given(transcripts(CHAT, MISTRAL_IDS))
def test_a_renamed_id_always_fits_mistrals_pattern(events: list[Event]) -> None:
    """Every id of the view is nine letters and digits; each refused id is reported as ``invalid_id``."""
    given_list = build(CHAT, events)
    view = ensure_tool_turn_invariants(given_list, lane=CHAT, dialect=MISTRAL)
    assert all(PATTERN.match(call_id) for call_id in _ids(view.messages))
    refused = {call_id for call_id in _ids(given_list) if not PATTERN.match(call_id)}
    renamed = {call_id for r in view.repairs if r.form == "invalid_id" for call_id in r.tool_call_ids}
    assert renamed <= refused
    emitted = {b.call_id for event in events if isinstance(event, A) for b in event.blocks if isinstance(b, CallBlock)}
    assert refused & emitted == renamed


@_DIALECT
@given(st.sampled_from([_fit, _as_given]).flatmap(lambda spell: _answered(CHAT, MISTRAL_IDS, spell)))
def test_mistral_the_request_the_model_answered_is_a_prefix_of_every_later_one(case: Answered) -> None:
    """Mistral: view(T + [A] + Δ) starts with view(T); a renamed id is the same in every later request."""
    _strong_property(case, CHAT, MISTRAL)


@_DIALECT
@given(_growth(lanes=(CHAT,), ids=MISTRAL_IDS, spell=_fit))
def test_mistral_a_list_the_provider_accepts_is_its_own_view(case: tuple[Lane, list[Event], list[Event], bool]) -> None:
    """Mistral: a session whose every request Mistral accepted comes back as the very same list, with no repairs."""
    _identity_when_valid(case, MISTRAL)


def test_an_openai_transcript_moving_to_mistral_is_repaired_not_refused() -> None:
    """OpenAI's ``call_…`` ids: Mistral's words in ``validate``; the law renames call and result alike, once."""
    events: list[Event] = [U("Search."), A(CallBlock("call_search", "search")), R("call_search", "<found>")]
    messages = build(CHAT, events)
    assert validate(messages, lane=CHAT) == []
    assert [v.message for v in validate(messages, lane=CHAT, dialect=MISTRAL)] == [id_words("call_search")] * 2
    assert id_words("call_search") == "Tool call id was call_search but must be a-z, A-Z, 0-9, with a length of 9."
    view = ensure_tool_turn_invariants(messages, lane=CHAT, dialect=MISTRAL)
    assert [(r.form, r.tool_call_ids, r.lossy) for r in view.repairs] == [("invalid_id", ("call_search",), False)]
    (new,) = set(_ids(view.messages))
    assert PATTERN.match(new)
    assert validate(view.messages, lane=CHAT, dialect=MISTRAL) == []
    assert "<found>" in json.dumps(view.messages)
    later = [*events, A(CallBlock("D681PevKs", "read")), R("D681PevKs", "<read>"), U("thanks")]
    grown = ensure_tool_turn_invariants(build(CHAT, later), lane=CHAT, dialect=MISTRAL)
    assert list(grown.messages[: len(view.messages)]) == list(view.messages)  # the same new id, request after request
    assert messages == build(CHAT, events)  # the caller's list is never changed


def test_a_call_without_its_tool_message_is_refused_in_mistrals_words() -> None:
    """A call with no ``tool`` message, a second one, one answering no call: each Mistral's count, closed by the law."""
    interrupted = build(CHAT, [U("go"), A(CallBlock("D681PevKs"), CallBlock("aB3dE6gH9", "g")), R("D681PevKs", "<a>")])
    orphan = build(CHAT, [U("go"), R("D681PevKs", "<a>"), U("and?")])
    for messages in (interrupted, orphan):
        (violation,) = validate(messages, lane=CHAT, dialect=MISTRAL)
        assert (violation.rule, violation.message) == ("function_call_count", COUNT_WORDS)
        assert COUNT_WORDS == "Not the same number of function calls and responses"
        view = ensure_tool_turn_invariants(messages, lane=CHAT, dialect=MISTRAL)
        assert validate(view.messages, lane=CHAT, dialect=MISTRAL) == []


def test_an_id_over_chats_limit_is_stated_once_in_mistrals_words() -> None:
    """Over 40 characters: Mistral states the pattern, not OpenAI's length; the law's rename fits both."""
    long_id = "call_" + "x" * 40
    messages = build(CHAT, [U("go"), A(CallBlock(long_id)), R(long_id, "<a>")])
    assert {v.rule for v in validate(messages, lane=CHAT, dialect=MISTRAL)} == {"invalid_tool_call_id"}
    view = ensure_tool_turn_invariants(messages, lane=CHAT, dialect=MISTRAL)
    assert validate(view.messages, lane=CHAT) == validate(view.messages, lane=CHAT, dialect=MISTRAL) == []


def test_a_dialect_is_asked_of_its_own_lane_only() -> None:
    """An unknown dialect, or a dialect of another lane, is a typed error naming what is known."""
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(UnknownLaneError, match="expected one of mistral, ollama, deepseek, cohere"):
        validate(messages, lane=CHAT, dialect="groq")  # type: ignore[arg-type]
    with pytest.raises(UnknownLaneError, match=r"is of openai\.chat_completions, not of anthropic\.messages"):
        ensure_tool_turn_invariants(messages, lane="anthropic.messages", dialect=MISTRAL)


OLLAMA: Final[Dialect] = "ollama"
_OLLAMA_NAMES: Final = ("c0", "c1", "c2", "c3")
"""The function names Ollama's calls are drawn from (``ollama`` names a call by its pool id): repeats meet."""


def _id_less(events: list[Event]) -> list[object]:
    """Ollama's messages of the events, as its SDK sends them: no call or result carries an id."""
    return ollama(events)


def _with_ids(events: list[Event]) -> list[object]:
    """Ollama's messages of the events, each call with an ``id`` and each result with its ``tool_call_id``."""
    return ollama(events, ids=True)


def _written_ids(messages: object) -> list[object]:
    """Every ``id`` of a call and ``tool_call_id`` of a message in an Ollama list."""
    assert isinstance(messages, list)
    found: list[object] = [field(message, "tool_call_id") for message in messages if field(message, "role") == "tool"]
    for message in messages:
        calls = field(message, "tool_calls")
        found.extend(field(call, "id") for call in (calls if isinstance(calls, list) else ()))
    return [value for value in found if value is not None]


@_DIALECT
@given(transcripts(CHAT, _OLLAMA_NAMES))
def test_ollama_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Ollama, calls without ids matched by name: valid in the dialect, a fixed point, nothing lost unreported."""
    _check(CHAT, events, make=_id_less, by_name=True, dialect=OLLAMA)
    assert _written_ids(ensure_tool_turn_invariants(_id_less(events), lane=CHAT, dialect=OLLAMA).messages) == []


@_DIALECT
@given(transcripts(CHAT, _OLLAMA_NAMES))
def test_ollama_with_ids_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Ollama, calls carrying ids: the same properties, results matched by ``tool_call_id``."""
    _check(CHAT, events, make=_with_ids, dialect=OLLAMA)


@_DIALECT
@given(_answered(CHAT, _OLLAMA_NAMES).map(lambda case: (case[0], case[1], case[2], _id_less)))
def test_ollama_the_request_the_model_answered_is_a_prefix_of_every_later_one(case: Answered) -> None:
    """Ollama, calls without ids: view(T + [A] + Δ) starts with view(T); a call's key is its place in its message."""
    _strong_property(case, CHAT, OLLAMA)


@_DIALECT
@given(_growth(lanes=(CHAT,), ids=_OLLAMA_NAMES))
def test_ollama_a_list_the_dialect_accepts_is_its_own_view(case: tuple[Lane, list[Event], list[Event], bool]) -> None:
    """Ollama, calls without ids: a session whose every request validated comes back as the very same list."""
    _identity_when_valid(case, OLLAMA, _id_less)


def _as_mappings(value: object) -> object:
    """``value`` with every dict in it a read-only ``Mapping`` that is no dict (read through the field accessors)."""
    if isinstance(value, dict):
        return MappingProxyType({key: _as_mappings(item) for key, item in value.items()})
    if isinstance(value, list):
        return [_as_mappings(item) for item in value]
    return value


def _as_dicts(value: object) -> object:
    """``value`` with every ``Mapping`` in it a dict again."""
    if isinstance(value, Mapping):
        return {key: _as_dicts(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_dicts(item) for item in value]
    return value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(CHAT, _OLLAMA_NAMES), st.booleans())
def test_ollama_json_messages_are_read_as_the_field_accessors_read_any_mapping(events: list[Event], ids: bool) -> None:
    """Ollama: JSON dicts (read without the accessors) and the same messages as other mappings give one view."""
    messages = ollama(events, ids=ids)
    mappings = _as_mappings(messages)
    assert isinstance(mappings, list)
    adapter = DIALECT_ADAPTERS[OLLAMA]
    read, read_mappings = adapter.read(messages), adapter.read(mappings)
    assert read.kinds == read_mappings.kinds
    assert read.ids == read_mappings.ids
    assert [(u.position, u.ids, u.end) for u in read.units if isinstance(u, Clean)] == [
        (u.position, u.ids, u.end) for u in read_mappings.units if isinstance(u, Clean)
    ]
    view = ensure_tool_turn_invariants(messages, lane=CHAT, dialect=OLLAMA)
    view_mappings = ensure_tool_turn_invariants(mappings, lane=CHAT, dialect=OLLAMA)
    assert view.repairs == view_mappings.repairs
    assert _as_dicts(view_mappings.messages) == view.messages


def test_ollama_calls_of_one_name_are_answered_in_order_and_closed_in_its_spelling() -> None:
    """Two ``search`` calls, one ``tool`` message: it answers the first; the second gets a close naming its tool."""
    messages: list[object] = [
        {"role": "user", "content": "Find both."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "search", "arguments": {"q": "a"}}},
                {"function": {"name": "search", "arguments": {"q": "b"}}},
            ],
        },
        {"role": "tool", "tool_name": "search", "content": "<a>"},
        {"role": "user", "content": "and?"},
    ]
    (violation,) = validate(messages, lane=CHAT, dialect=OLLAMA)
    assert (violation.position, violation.rule) == (1, "missing_tool_messages")
    view = ensure_tool_turn_invariants(messages, lane=CHAT, dialect=OLLAMA)
    assert [(r.form, r.tool_call_ids) for r in view.repairs] == [("missing_result", ("search#2",))]
    assert view.messages[2] is messages[2]
    assert view.messages[3] == {"role": "tool", "tool_name": "search", "content": INTERRUPTED_RESULT_TEXT}
    assert view.messages[4] is messages[3]
    assert validate(view.messages, lane=CHAT, dialect=OLLAMA) == []


def test_ollama_a_turn_answered_right_after_by_name_or_id_is_read_clean() -> None:
    """A turn whose ``tool`` messages right after it answer each call once (by name, or by id): one clean unit.

    The list is its own view; a turn answered by another name, or missing a message, is read in full.
    """
    adapter = DIALECT_ADAPTERS[OLLAMA]
    events: list[Event] = [U("go"), A(CallBlock("c0"), CallBlock("c1")), R("c1"), R("c0"), A(Text("done"))]
    for messages in (ollama(events), ollama(events, ids=True)):
        assert adapter.read(messages).kinds == ["other", "clean", "reply"]
        assert ensure_tool_turn_invariants(messages, lane=CHAT, dialect=OLLAMA).messages is messages
    other_name = ollama([U("go"), A(CallBlock("c0")), R("c1")])
    assert adapter.read(other_name).kinds == ["other", "turn", "result"]
    short = ollama([U("go"), A(CallBlock("c0"), CallBlock("c1")), R("c0"), U("next")])
    assert adapter.read(short).kinds == ["other", "turn", "result", "other"]


def test_ollama_a_result_with_no_call_before_it_is_left_out_and_a_second_one_folded() -> None:
    """A ``tool`` message ahead of any call is an orphan; a second one for an answered call is folded into the first."""
    messages = ollama([R("c0", "<early>"), U("go"), A(CallBlock("c0")), R("c0", "<one>"), R("c0", "<two>")])
    rules = [v.rule for v in validate(messages, lane=CHAT, dialect=OLLAMA)]
    assert rules == ["orphan_tool_message", "multiple_tool_messages"]
    view = ensure_tool_turn_invariants(messages, lane=CHAT, dialect=OLLAMA)
    assert [r.form for r in view.repairs] == ["duplicate_result", "orphan_result"]
    assert "<early>" not in json.dumps(view.messages)
    folded = json.dumps(view.messages[-1])
    assert "<one>" in folded
    assert "<two>" in folded
    assert validate(view.messages, lane=CHAT, dialect=OLLAMA) == []


def test_ollama_a_call_with_an_id_is_closed_with_it() -> None:
    """A call carrying an ``id`` is closed with its ``tool_call_id``: written only when the transcript has ids."""
    messages = ollama([U("go"), A(CallBlock("c0")), U("stop")], ids=True)
    view = ensure_tool_turn_invariants(messages, lane=CHAT, dialect=OLLAMA)
    assert view.messages[2] == {
        "role": "tool",
        "tool_name": "c0",
        "tool_call_id": "c0",
        "content": INTERRUPTED_RESULT_TEXT,
    }


def _reasoned(events: list[Event]) -> list[object]:
    """The Chat list of the events, each assistant message with a ``reasoning_content`` of its own."""
    return [
        {**message, "reasoning_content": f"<th{at}>"} if message["role"] == "assistant" else message
        for at, message in enumerate(cast("list[dict[str, object]]", build(CHAT, events)))
    ]


def _some_reasoned(events: list[Event], keep: list[bool]) -> list[object]:
    """The Chat list of the events, the assistant messages picked by ``keep`` (cycled) with a ``reasoning_content``."""
    messages = cast("list[dict[str, object]]", build(CHAT, events))
    return [
        {**m, "reasoning_content": f"<th{at}>"} if m["role"] == "assistant" and keep[at % len(keep)] else m
        for at, m in enumerate(messages)
    ]


def _reasonings(messages: object) -> list[str]:
    """The ``reasoning_content`` of each assistant message that has one, in order."""
    assert isinstance(messages, (list, tuple))
    return [str(field(m, "reasoning_content")) for m in messages if field(m, "reasoning_content") is not None]


@_DIALECT
@given(transcripts(CHAT))
def test_deepseek_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """DeepSeek, every assistant message reasoned: the view validates in the dialect and keeps each reasoning."""
    _check(CHAT, events, dialect=DEEPSEEK, make=_reasoned)
    view = ensure_tool_turn_invariants(_reasoned(events), lane=CHAT, dialect=DEEPSEEK)
    assert _reasonings(view.messages) == _reasonings(_reasoned(events))


@_DIALECT
@given(_answered(CHAT).map(lambda case: (case[0], case[1], case[2], _reasoned)))
def test_deepseek_the_request_the_model_answered_is_a_prefix_of_every_later_one(case: Answered) -> None:
    """DeepSeek, every assistant message reasoned: view(T + [A] + Δ) starts with view(T)."""
    _strong_property(case, CHAT, DEEPSEEK)


@_DIALECT
@given(_growth(lanes=(CHAT,)))
def test_deepseek_a_list_the_dialect_accepts_is_its_own_view(case: tuple[Lane, list[Event], list[Event], bool]) -> None:
    """DeepSeek, every assistant message reasoned: a session whose every request validated is the very same list."""
    _identity_when_valid(case, DEEPSEEK, _reasoned)


@_DIALECT
@given(transcripts(CHAT), st.lists(st.booleans(), min_size=1, max_size=5))
def test_deepseek_a_missing_reasoning_is_reported_never_invented(events: list[Event], keep: list[bool]) -> None:
    """Some reasoning missing: the view breaks only DeepSeek's reasoning rule, no more than the input; none invented."""
    given_list = _some_reasoned(events, keep)
    view = ensure_tool_turn_invariants(given_list, lane=CHAT, dialect=DEEPSEEK)
    left = validate(view.messages, lane=CHAT, dialect=DEEPSEEK)
    sent = [v for v in validate(given_list, lane=CHAT, dialect=DEEPSEEK) if v.rule == "missing_reasoning_content"]
    assert {v.rule for v in left} <= {"missing_reasoning_content"}
    assert len(left) <= len(sent)
    assert _reasonings(view.messages) == _reasonings(given_list)
    assert ensure_tool_turn_invariants(view.messages, lane=CHAT, dialect=DEEPSEEK).messages is view.messages


@_DIALECT
@given(transcripts(CHAT))
def test_cohere_view_is_valid_idempotent_deterministic_and_lossless(events: list[Event]) -> None:
    """Cohere: the view validates in the dialect, a second pass is a no-op, nothing is lost unreported."""
    _check(CHAT, events, dialect=COHERE)


@_DIALECT
@given(_answered(CHAT))
def test_cohere_the_request_the_model_answered_is_a_prefix_of_every_later_one(case: Answered) -> None:
    """Cohere: view(T + [A] + Δ) starts with view(T)."""
    _strong_property(case, CHAT, COHERE)


def test_deepseek_refuses_a_tool_turn_without_reasoning_in_its_words_and_the_law_reports_it() -> None:
    """DeepSeek's words for each assistant message of a tool turn without reasoning; the law cannot invent one."""
    events: list[Event] = [
        U("q"),
        A(CallBlock("call_1", "search")),
        R("call_1", "<found>"),
        A(Text("<answer>")),
        U("ok"),
    ]
    messages = build(CHAT, events)
    assert validate(messages, lane=CHAT) == []
    assert [(v.position, v.message) for v in validate(messages, lane=CHAT, dialect=DEEPSEEK)] == [
        (1, reasoning_words(1)),
        (3, reasoning_words(3)),
    ]
    assert reasoning_words(2) == (
        "Missing `reasoning_content` field in the assistant message at message index 2. "
        "For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
    )
    view = ensure_tool_turn_invariants(messages, lane=CHAT, dialect=DEEPSEEK)
    assert (view.repairs, view.messages) == ((), messages)  # reported, not repaired
    plain = build(CHAT, [U("q"), A(Text("<a>")), U("more"), A(Text("<b>"))])
    assert validate(plain, lane=CHAT, dialect=DEEPSEEK) == []  # a turn without tool calls needs no reasoning


def test_every_message_the_law_rewrites_keeps_its_reasoning_content() -> None:
    """A turn rewritten (a repeated call dropped, an id renamed, a close added) keeps ``reasoning_content``."""
    calls = [
        {"id": i, "type": "function", "function": {"name": f"f{n}", "arguments": "{}"}}
        for n, i in enumerate(("c1", "c1", "x" * 50))
    ]
    turn = {"role": "assistant", "content": None, "reasoning_content": "<th1>", "tool_calls": calls}
    for assistant in (turn, ChatCompletionMessage.model_validate(turn)):
        messages = [{"role": "user", "content": "q"}, assistant, {"role": "tool", "tool_call_id": "c1", "content": "r"}]
        view = ensure_tool_turn_invariants(messages, lane=CHAT, dialect=DEEPSEEK)
        assert {r.form for r in view.repairs} == {"duplicate_call", "invalid_id", "missing_result"}
        written = view.messages[1]
        assert written is not assistant
        assert field(written, "reasoning_content") == "<th1>"
        assert validate(view.messages, lane=CHAT, dialect=DEEPSEEK) == []


def test_the_dialect_is_chosen_from_the_host_or_the_sdk_never_from_content() -> None:
    """``api.deepseek.com`` is DeepSeek's dialect, the cohere SDK Cohere's; an OpenAI client to Cohere is plain Chat."""
    assert dialect_of(CHAT, provider_by_host("api.deepseek.com")) == DEEPSEEK
    assert dialect_of(CHAT, provider_by_host("api.cohere.com")) is None
    assert dialect_of(CHAT, provider_by_host("api.cohere.com"), "cohere") == COHERE
    assert dialect_of(CHAT, provider_by_host("example.com")) is None
    assert dialect_of("anthropic.messages", provider_by_host("api.deepseek.com")) is None


def test_cohere_states_chat_s_rules_after_invalid_request() -> None:
    """Cohere's words: Chat's, after ``invalid request: `` (oracle/langchain-oracle#10)."""
    messages = build(CHAT, [U("q"), A(CallBlock("call_1"), CallBlock("call_2")), R("call_1", "<a>"), U("next")])
    (violation,) = validate(messages, lane=CHAT, dialect=COHERE)
    assert violation.message == (
        "invalid request: An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2"
    )
