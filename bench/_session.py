"""A realistic coding-agent session for the overhead bench: what such sessions carry, message by message.

User and assistant text of 50 to 2,000 characters, a thinking block (with its signature) on every
assistant turn, tool inputs of 100 to 500 characters, tool results of 200 bytes to 10 KB, and one to
three parallel calls per tool round. ``session(messages)`` gives about 350 messages (about 0.65 MB
of JSON); ``session_round(turn)`` one more round of the growing conversation. The same seed gives
the same session in every process.
"""

from __future__ import annotations

import random
from typing import Any, Final

MESSAGES: Final = 350
"""About the length of a long coding-agent session's transcript."""

_PROSE: Final = (
    "the function reads config from disk and returns a parsed value; tests cover the error path "
    "when the file is missing or the schema changed since the last migration ran"
)
_WORDS: Final = tuple(_PROSE.split(" "))


def _text(rng: random.Random, low: int, high: int) -> str:
    """Prose of ``low`` to ``high`` characters."""
    size = rng.randint(low, high)
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


def _assistant_with_calls(rng: random.Random, turn: int) -> tuple[dict[str, Any], list[str]]:
    calls = [f"toolu_{turn:04d}_{k}" for k in range(rng.randint(1, 3))]
    blocks: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": _text(rng, 200, 800), "signature": "sig" + "A" * rng.randint(100, 300)},
        {"type": "text", "text": _text(rng, 50, 400)},
    ]
    blocks.extend(
        {
            "type": "tool_use",
            "id": call,
            "name": rng.choice(("read_file", "grep", "bash", "edit")),
            "input": {"path": f"src/module_{turn}.py", "detail": _text(rng, 80, 400)},
        }
        for call in calls
    )
    return {"role": "assistant", "content": blocks}, calls


def _results(rng: random.Random, calls: list[str]) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": call,
                "content": _text(rng, 200, rng.choice((300, 400, 500, 600, 800, 1_000, 1_200, 10_000))),
            }
            for call in calls
        ],
    }


def session_round(turn: int) -> list[dict[str, Any]]:
    """One round of the growing session: the user asks, the model thinks and calls tools, their results."""
    rng = random.Random(turn * 7919 + 3)
    assistant, calls = _assistant_with_calls(rng, 10_000 + turn)
    return [{"role": "user", "content": _text(rng, 50, 2_000)}, assistant, _results(rng, calls)]


def session(messages: int = MESSAGES, *, seed: int = 17) -> list[dict[str, Any]]:
    """A session of about ``messages`` messages, ending with tool results (the model's turn is next)."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < messages - 2:
        if turn % 4 == 0:
            out.append({"role": "user", "content": _text(rng, 50, 2_000)})
        assistant, calls = _assistant_with_calls(rng, turn)
        out.extend((assistant, _results(rng, calls)))
        if turn % 4 == 3:
            out.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": _text(rng, 100, 600), "signature": "sig" + "B" * 200},
                        {"type": "text", "text": _text(rng, 100, 1_500)},
                    ],
                }
            )
        turn += 1
    if out[-1]["role"] == "assistant":
        out.append({"role": "user", "content": _text(rng, 50, 500)})
    return out
