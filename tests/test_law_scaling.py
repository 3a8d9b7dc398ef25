"""The law's work grows with the list, not with its square: counted in reads and probes, never timed."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import otel_toolturn._law as law
from otel_toolturn import Lane, ensure_tool_turn_invariants
from otel_toolturn._view import TakenIds


class _CountedItem(dict[str, object]):
    """A wire item that counts the fields read from it (the law reads a non-``dict`` mapping through ``get``)."""

    reads = 0

    def get(self, key: str, default: object = None) -> object:
        _CountedItem.reads += 1
        return super().get(key, default)


def _reads(items: list[dict[str, object]], lane: Lane) -> int:
    _CountedItem.reads = 0
    ensure_tool_turn_invariants([_CountedItem(item) for item in items], lane=lane)
    return _CountedItem.reads


def _reasoning_then(tail: list[dict[str, object]]) -> Callable[[int], list[dict[str, object]]]:
    def make(n: int) -> list[dict[str, object]]:
        reasoning: list[dict[str, object]] = [{"type": "reasoning", "id": f"rs_{i}", "summary": []} for i in range(n)]
        opening: dict[str, object] = {"role": "user", "content": "q"}
        return [opening, *reasoning, *tail]

    return make


@pytest.mark.parametrize(
    "make",
    [
        _reasoning_then([{"role": "user", "content": "go on"}]),
        _reasoning_then([{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}]),
        _reasoning_then([]),
    ],
    ids=["no call after", "a call after", "at the end"],
)
def test_a_long_stretch_of_reasoning_is_read_in_linear_work(make: Callable[[int], list[dict[str, object]]]) -> None:
    """Responses: four times the reasoning items costs about four times the reads, not sixteen."""
    small, large = _reads(make(200), "openai.responses"), _reads(make(800), "openai.responses")
    assert large <= 5 * small


class _CountedIds(TakenIds):
    """The request's ids, counting each lookup."""

    lookups = 0

    def __contains__(self, call_id: object) -> bool:
        _CountedIds.lookups += 1
        return super().__contains__(call_id)


def _round(lane: Lane) -> list[dict[str, object]]:
    """One round that reuses the call id ``call_0``: a question, the call, its result."""
    if lane == "openai.responses":
        return [
            {"role": "user", "content": "q"},
            {"type": "function_call", "call_id": "call_0", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_0", "output": "r"},
        ]
    if lane == "bedrock.converse":
        return [
            {"role": "user", "content": [{"text": "q"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "call_0", "name": "f", "input": {}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "call_0", "content": [{"text": "r"}]}}]},
        ]
    return [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_0", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_0", "content": "r"}]},
    ]


def _reused(lane: Lane, rounds: int) -> list[dict[str, object]]:
    return [message for _ in range(rounds) for message in _round(lane)]


@pytest.mark.parametrize("lane", ["anthropic.messages", "openai.responses", "bedrock.converse"])
def test_an_id_reused_every_round_is_derived_in_linear_work(lane: Lane, monkeypatch: pytest.MonkeyPatch) -> None:
    """An id every round reuses: four times the rounds costs about four times the id lookups, not sixteen."""
    monkeypatch.setattr(law, "TakenIds", _CountedIds)
    counts = []
    for rounds in (100, 400):
        _CountedIds.lookups = 0
        view = ensure_tool_turn_invariants(_reused(lane, rounds), lane=lane)
        assert [r.form for r in view.repairs] == ["reused_id"] * (rounds - 1)
        counts.append(_CountedIds.lookups)
    assert counts[1] <= 5 * counts[0]
