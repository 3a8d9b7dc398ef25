"""The benchmarks measure what they say: their transcripts are the ones the README's figures name.

No timing is asserted here (the machines are noisy); these tests hold the inputs the benchmarks
time to their descriptions, so a figure never silently measures something else.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench import law, overhead
from otel_toolturn import Lane, ensure_tool_turn_invariants
from otel_toolturn.instrument._memo import TranscriptMemo
from tests.transcripts import build


def _objects(transcript: list[dict[str, Any]]) -> set[int]:
    """The ids of every message, and of every list and dict inside one, of a transcript."""
    ids: set[int] = set()
    for message in transcript:
        ids.add(id(message))
        for value in message.values():
            if isinstance(value, (list, dict)):
                ids.add(id(value))
                ids.update(id(item) for item in value if isinstance(item, dict))
    return ids


@pytest.mark.parametrize("lane", ["chat", "anthropic"])
def test_the_growing_conversation_resends_its_objects_one_round_longer(lane: str) -> None:
    """``Conversation``: each call is the previous transcript's very objects plus one round of three messages."""
    conversation = overhead.transcripts(lane)[""]
    first, second = conversation.next(), conversation.next()
    assert len(second) == len(first) + 3
    assert all(a is b for a, b in zip(first, second, strict=False))


@pytest.mark.parametrize("lane", ["chat", "anthropic"])
def test_the_rebuilt_conversation_sends_equal_values_as_new_objects(lane: str) -> None:
    """``, rebuilt``: the growing conversation's values, and not one of its objects, on every call."""
    plain, rebuilt = overhead.transcripts(lane)[""], overhead.transcripts(lane)[", rebuilt"]
    for _ in range(3):
        same, fresh = plain.next(), rebuilt.next()
        assert fresh == same
        assert _objects(fresh).isdisjoint(_objects(same))


@pytest.mark.parametrize("lane", ["chat", "anthropic"])
def test_the_cold_transcripts_are_never_remembered(lane: str) -> None:
    """``, cold``: no two calls' transcripts are equal, so the memo never resumes one (each is a first sighting)."""
    cold = overhead.transcripts(lane)[", cold"]
    memo = TranscriptMemo()
    key: Lane = "anthropic.messages" if lane == "anthropic" else "openai.chat_completions"
    sent = [cold.next() for _ in range(3)]
    assert sent[0] != sent[1] != sent[2] != sent[0]
    for transcript in sent:
        known = memo.recall(transcript, lane=key)
        assert known is not None
        assert not known.surveyed, "a first sighting takes the pure path"


def test_the_split_reads_other_transcripts_than_the_timed_calls() -> None:
    """``--split``: its phases' transcripts differ from the calls' at the first message: the memo keeps them apart."""
    phases, calls = overhead.transcripts("anthropic", tag=" (phases)"), overhead.transcripts("anthropic")
    for suffix in calls:
        assert phases[suffix].next()[0] != calls[suffix].next()[0]


@pytest.mark.parametrize("state", ["clean", "few", "dense"])
@pytest.mark.parametrize("lane", law.LANES)
def test_the_law_bench_sessions_are_in_their_stated_state(lane: Lane, state: str) -> None:
    """``bench.law``: a clean session needs no repair; a few-faults or dense one does, dense with more repairs."""
    repairs = {
        kind: len(ensure_tool_turn_invariants(build(lane, law.session(200, state=kind)), lane=lane).repairs)
        for kind in ("clean", "few", "dense")
    }
    assert (repairs[state] > 0) == (state != "clean")
    assert repairs["dense"] > repairs["few"]
