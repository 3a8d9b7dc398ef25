"""Prompt-cache accounting: how much of a prompt an earlier request of the same lane already sent.

Every provider's prompt cache is a prefix cache; the simulator reports it the same way. A prompt is
a list of units: first the head, ``{field: request[field]}`` for the lane's head fields (Anthropic
``system`` and ``tools``; Chat ``tools``; Responses ``instructions`` and ``tools``; ``null`` when
absent), then each message or item of the transcript in order (Responses: the items a
``previous_response_id`` brings back, then the request's own ``input``; a string transcript is one
user message). Units are compared by their canonical form (``_canonical``), so a changed unit ends the
shared prefix there. Each unit is worth ``token_estimate(unit)`` tokens (about four characters of
its JSON per token); a prompt's tokens are the sum over its units.

``PromptCache.account(lane, units)`` answers with the prompt's tokens and the cached ones: the
tokens of the longest run of leading units it shares with one of the last ``CACHE_DEPTH`` prompts
of that lane served by this simulator, and then remembers the prompt. No minimum length, no
increments, no expiry, no breakpoints: a prompt sent twice is served from cache whole. The cache is
per simulator and per lane (not per model); it is safe to use from the server's threads.

Example::

    cache = PromptCache()
    first = cache.account("openai.chat_completions", [head, user])
    second = cache.account("openai.chat_completions", [head, user, reply, user_again])
    assert second.cached == first.tokens
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from otel_toolturn._vocab import Lane
from otel_toolturn.simulator._canonical import digest
from otel_toolturn.simulator._script import token_estimate

CACHE_DEPTH: Final = 64
"""How many earlier prompts per lane a new prompt is compared with."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PromptUsage:
    """A prompt's estimated ``tokens`` and how many of them were ``cached`` (``0 <= cached <= tokens``)."""

    tokens: int
    cached: int


def prompt_units(
    request: Mapping[str, object], transcript: Sequence[object], *, head_fields: Sequence[str]
) -> list[object]:
    """The prompt of ``request`` as cache units: its head, then each message or item of ``transcript``."""
    return [{name: request.get(name) for name in head_fields}, *transcript]


class PromptCache:
    """The last ``depth`` prompts of each lane, as the digests of their units."""

    def __init__(self, depth: int = CACHE_DEPTH) -> None:
        self._lock = threading.Lock()
        self._depth = depth
        self._seen: dict[Lane, deque[tuple[str, ...]]] = {}

    def account(self, lane: Lane, units: Sequence[object]) -> PromptUsage:
        """Measure ``units`` against the lane's earlier prompts, then remember them."""
        keys = tuple(digest(unit) for unit in units)
        tokens = [token_estimate(unit) for unit in units]
        with self._lock:
            seen = self._seen.setdefault(lane, deque(maxlen=self._depth))
            shared = max((_common_length(keys, earlier) for earlier in seen), default=0)
            seen.append(keys)
        return PromptUsage(tokens=sum(tokens), cached=sum(tokens[:shared]))


def _common_length(a: Sequence[str], b: Sequence[str]) -> int:
    """How many leading entries ``a`` and ``b`` share."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count
