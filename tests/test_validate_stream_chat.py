"""Chat's ``validate`` fed in segments (``validate_stream``) is its ``validate``, in every dialect.

For generated broken transcripts, and the law's views of them, cut at a random choice of the points
``cut_here`` allows: ``close`` after feeding every segment gives exactly ``validate`` of the whole list (the same
violations, positions, words and order), and an item ``validate`` rejects is rejected with the same words and
position.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Final, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_toolturn import Dialect, Lane, ToolTurnInputError, ensure_tool_turn_invariants
from otel_toolturn._law_stream import cut_here
from otel_toolturn.lanes import adapter_for
from tests.test_law_properties import transcripts
from tests.transcripts import A, R, U, build, c, ollama, t

CHAT: Final[Lane] = "openai.chat_completions"
_SETTINGS: Final = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CUTS: Final = st.lists(st.booleans(), min_size=20, max_size=20)
"""Which of the allowed cut points a case cuts at, in order."""
CHAT_IDS: Final = ("c0", "c1", "c2", "call_" + "x" * 40)
"""Short ids and one over Chat's 40 characters: ids meet, and one is too long."""
MISTRAL_IDS: Final = ("D681PevKs", "aB3dE6gH9", "call_abc", "c0")
"""Two ids Mistral accepts and two it refuses."""
OLLAMA_NAMES: Final = ("c0", "c1", "c2", "c3")
"""The function names Ollama's calls are drawn from: repeats meet."""
OLLAMA_IDS: Final = (None, None, "c0#1", "c1#1", "q")
"""The ids an Ollama call or result may carry (names ``c0``, ``c1``): none, a key ``<name>#<n>`` spells, another."""
_NAMELESS: Final = {"role": "assistant", "content": "", "tool_calls": [{"function": {"arguments": {}}}]}
"""An assistant message Ollama's ``validate`` rejects: a call with neither a name nor an id."""


def _segments(items: Sequence[object], chosen: Sequence[bool]) -> Iterator[tuple[Sequence[object], bool]]:
    """``items`` cut at the allowed points ``chosen`` picks: each segment, and whether it is the last."""
    points = [i for i in range(1, len(items)) if cut_here(items[i - 1], items[i], lane=CHAT)]
    bounds = [0, *(p for p, cut in zip(points, chosen, strict=False) if cut), len(items)]
    for start, end in itertools.pairwise(bounds):
        yield items[start:end], end == len(items)


def _streamed(items: Sequence[object], dialect: Dialect | None, chosen: Sequence[bool]) -> list[object]:
    """The violations of ``items`` fed to the dialect's stream in segments, cut where ``chosen`` says."""
    stream = adapter_for(CHAT, dialect).validate_stream()
    for segment, last in _segments(items, chosen):
        stream.feed(segment, last=last)
    return list(stream.close())


def _same_as_whole(items: list[object], dialect: Dialect | None, chosen: Sequence[bool]) -> None:
    """Fed in segments, ``items`` give what ``validate`` of the whole list gives: violations, or the same refusal."""
    refused: ToolTurnInputError | None = None
    try:
        whole = adapter_for(CHAT, dialect).validate(items)
    except ToolTurnInputError as error:
        refused = error
    if refused is None:
        assert _streamed(items, dialect, chosen) == whole
        return
    with pytest.raises(ToolTurnInputError) as raised:
        _streamed(items, dialect, chosen)
    assert (str(raised.value), raised.value.position) == (str(refused), refused.position)


def _both(items: list[object], dialect: Dialect | None, chosen: Sequence[bool]) -> None:
    """The stream equals ``validate`` on the broken list and on the law's view of it."""
    _same_as_whole(items, dialect, chosen)
    view = ensure_tool_turn_invariants(items, lane=CHAT, dialect=dialect)
    _same_as_whole(list(view.messages), dialect, chosen)


@st.composite
def _reasoned(draw: st.DrawFn) -> list[object]:
    """A Chat list whose assistant messages each keep or lack a ``reasoning_content``, at random."""
    messages = cast("list[dict[str, object]]", build(CHAT, draw(transcripts(CHAT, CHAT_IDS))))
    return [
        {**m, "reasoning_content": f"<th{at}>"} if m["role"] == "assistant" and draw(st.booleans()) else m
        for at, m in enumerate(messages)
    ]


@st.composite
def _ollama_ids(draw: st.DrawFn) -> list[object]:
    """An Ollama list whose calls and ``tool`` messages each carry an id drawn apart from their names, or none."""
    messages = cast("list[dict[str, object]]", ollama(draw(transcripts(CHAT, ("c0", "c1")))))
    for message in messages:
        for call in cast("list[dict[str, object]]", message.get("tool_calls", [])):
            call_id = draw(st.sampled_from(OLLAMA_IDS))
            if call_id is not None:
                call["id"] = call_id
        answered = draw(st.sampled_from(OLLAMA_IDS))
        if message["role"] == "tool" and answered is not None:
            message["tool_call_id"] = answered
    return list(messages)


@pytest.mark.parametrize("dialect", [None, "cohere"])
@_SETTINGS
@given(data=st.data())
def test_chat_and_cohere_streams_are_validate(dialect: Dialect | None, data: st.DataObject) -> None:
    """Chat and Cohere: any cuts give the whole list's violations, broken or repaired."""
    _both(build(CHAT, data.draw(transcripts(CHAT, CHAT_IDS))), dialect, data.draw(CUTS))


@_SETTINGS
@given(data=st.data())
def test_mistral_stream_is_validate(data: st.DataObject) -> None:
    """Mistral, ids in and out of its pattern: any cuts give the whole list's violations, broken or repaired."""
    _both(build(CHAT, data.draw(transcripts(CHAT, MISTRAL_IDS))), "mistral", data.draw(CUTS))


@_SETTINGS
@given(data=st.data())
def test_deepseek_stream_is_validate(data: st.DataObject) -> None:
    """DeepSeek, assistant messages with and without reasoning: any cuts give the whole list's violations."""
    _both(data.draw(_reasoned()), "deepseek", data.draw(CUTS))


@pytest.mark.parametrize("ids", [False, True])
@_SETTINGS
@given(data=st.data())
def test_ollama_stream_is_validate(ids: bool, data: st.DataObject) -> None:
    """Ollama, calls matched by name (or by id): any cuts give the whole list's violations, broken or repaired."""
    _both(ollama(data.draw(transcripts(CHAT, OLLAMA_NAMES)), ids=ids), "ollama", data.draw(CUTS))


@_SETTINGS
@given(data=st.data())
def test_ollama_stream_is_validate_with_ids_apart_from_names(data: st.DataObject) -> None:
    """Ollama, ids that meet other calls' names and keys: any cuts give the whole list's violations."""
    _both(data.draw(_ollama_ids()), "ollama", data.draw(CUTS))


@_SETTINGS
@given(data=st.data())
def test_ollama_stream_rejects_a_nameless_call_as_validate_does(data: st.DataObject) -> None:
    """A call with neither a name nor an id, anywhere: the stream refuses it in the same words, at the same position."""
    items = ollama(data.draw(transcripts(CHAT, OLLAMA_NAMES)))
    items.insert(data.draw(st.integers(0, len(items))), _NAMELESS)
    with pytest.raises(ToolTurnInputError):
        adapter_for(CHAT, "ollama").validate(items)
    _same_as_whole(items, "ollama", data.draw(CUTS))


def test_a_batch_cut_before_its_next_answer_is_stated_at_its_own_position() -> None:
    """A call left unanswered in one segment is stated, at its message's position, when the next segment begins."""
    items = build(CHAT, [U("q"), A(t("thinking")), R("x"), A(c("a"), c("b")), R("a"), A(t("done"))])
    assert [i for i in range(1, len(items)) if cut_here(items[i - 1], items[i], lane=CHAT)] == [1, 3, 5]
    stream = adapter_for(CHAT).validate_stream()
    stream.feed(items[:3], last=False)
    stream.feed(items[3:5], last=False)
    stream.feed(items[5:], last=True)
    assert [(v.position, v.rule) for v in stream.close()] == [(2, "orphan_tool_message"), (3, "missing_tool_messages")]
    assert stream.close() == adapter_for(CHAT).validate(items)


def test_deepseeks_rule_reaches_back_across_a_cut() -> None:
    """A tool call after a cut makes an earlier answer without reasoning, since the same user message, a violation."""
    items: list[object] = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "let me look"},
        {"role": "tool", "tool_call_id": "x", "content": "stray"},
        {"role": "assistant", "reasoning_content": "r", "tool_calls": [{"id": "a", "function": {"name": "f"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
    ]
    stream = adapter_for(CHAT, "deepseek").validate_stream()
    stream.feed(items[:3], last=False)
    stream.feed(items[3:], last=True)
    violations = stream.close()
    assert [(v.position, v.rule) for v in violations] == [(1, "missing_reasoning_content"), (2, "orphan_tool_message")]
    assert violations == adapter_for(CHAT, "deepseek").validate(items)


def test_ollamas_matcher_reaches_back_across_a_cut() -> None:
    """A ``tool`` message named for a call of an earlier segment answers that call, not the one right before it."""
    items: list[object] = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "q", "function": {"name": "search"}}]},
        {"role": "tool", "tool_call_id": "q", "tool_name": "search", "content": "r"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "search#1", "function": {"name": "g"}}]},
        {"role": "tool", "tool_name": "search", "content": "r2"},
    ]
    stream = adapter_for(CHAT, "ollama").validate_stream()
    stream.feed(items[:3], last=False)
    stream.feed(items[3:], last=True)
    violations = stream.close()
    assert [(v.position, v.rule) for v in violations] == [(4, "orphan_tool_message"), (3, "missing_tool_messages")]
    assert violations == adapter_for(CHAT, "ollama").validate(items)
