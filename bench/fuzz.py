"""Fuzz and soak the law: N generated transcripts per lane and flavour, counted by what went wrong.

Flavours: ``random`` (any sequence of the lane's items from small id pools, so every break
occurs), ``near`` (clean sessions with one to three faults injected), ``malformed`` (items of the
wrong type, fields missing or of the wrong type, mixed in). The pools include same-object repeats,
ids the Anthropic pattern refuses, item ids shared across items, reasoning with nothing after it,
string and list contents. Every text and result payload is a unique ``<…>`` marker.

Each transcript is checked: the law raises nothing but ``ToolTurnInputError`` (else an internal
error); its view breaks no tool-turn rule of the lane's ``validate`` and no content rule the input
did not already break (else an invalid output); a second pass returns the
very same list with no repairs (else non-idempotent); every marker of the input is in the view
unless a lossy repair was reported (else an unreported loss); the input is left exactly as it was
(else mutated). Typed refusals are counted, not failures.

Run: ``python -m bench.fuzz`` (100,000 per lane and flavour: a maintainer's soak, minutes), or
``--count N``; the test suite runs a small deterministic sample (``tests/test_bench.py``).
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from typing import Final

from otel_toolturn import (
    INTERRUPTED_RESULT_TEXT,
    LANES,
    Lane,
    ToolTurnInputError,
    ensure_tool_turn_invariants,
    validate,
)

FLAVOURS: Final = ("random", "near", "malformed")
CLASSES: Final = (
    "checked",
    "refused",
    "internal error",
    "invalid output",
    "non-idempotent",
    "unreported loss",
    "mutated",
)
"""What a run counts: ``checked`` and ``refused`` (typed) are fine; the rest are failures."""
FAILURES: Final = CLASSES[2:]
_MARKER: Final = re.compile(r"<[a-z]+\d+>")
_CALL_IDS: Final = ("c0", "c1", "c2", "functions.lookup:0")
_ITEM_IDS: Final = ("rs_1", "rs_2", "msg_1", "msg_2")
"""Ids shared by items that are no calls; a call item's own id follows its call id (``fc_<call id>``), so it
repeats exactly where the call is replayed."""
CONTENT_RULES: Final = frozenset({"empty_message", "empty_text"})
"""Rules about content, not tool turns: a violation of them the caller sent passes through as sent."""
_BAD: Final[tuple[object, ...]] = (None, 3, "", [], {}, ["x"], {"k": "v"}, 1.5, True)


class _Maker:
    """Makes one lane's items with unique markers, from a seeded generator."""

    def __init__(self, lane: Lane, rng: random.Random) -> None:
        self.lane, self.rng, self.n = lane, rng, 0

    def marker(self, kind: str) -> str:
        self.n += 1
        return f"<{kind}{self.n}>"

    def call_id(self) -> str:
        ids = _CALL_IDS if self.lane == "anthropic.messages" else _CALL_IDS[:3]
        return self.rng.choice(ids)

    def content(self, kind: str, part: str) -> object:
        text = self.marker(kind)
        return text if self.rng.random() < 0.6 else [{"type": part, "text": text}]

    def user(self) -> object:
        if self.lane == "openai.responses" and self.rng.random() < 0.5:
            return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": self.marker("u")}]}
        return {"role": "user", "content": self.content("u", "text")}

    def answer(self, call_ids: list[str]) -> list[object]:
        """One assistant turn: text, thinking or reasoning, and calls, in a random order."""
        lane, rng = self.lane, self.rng
        if lane == "anthropic.messages":
            blocks: list[object] = []
            for _ in range(rng.randint(1, 4)):
                pick = rng.random()
                if pick < 0.3:
                    blocks.append({"type": "text", "text": self.marker("a")})
                elif pick < 0.45:
                    blocks.append({"type": "thinking", "thinking": self.marker("th"), "signature": "sig"})
                else:
                    blocks.append({"type": "tool_use", "id": self.call_id(), "name": self.marker("tool"), "input": {}})
            call_ids.extend(str(b["id"]) for b in blocks if isinstance(b, dict) and b["type"] == "tool_use")
            return [{"role": "assistant", "content": blocks}]
        if lane == "openai.chat_completions":
            calls = [
                {"id": self.call_id(), "type": "function", "function": {"name": self.marker("tool"), "arguments": "{}"}}
                for _ in range(rng.choice((0, 1, 1, 2, 3)))
            ]
            call_ids.extend(str(c["id"]) for c in calls)
            message: dict[str, object] = {
                "role": "assistant",
                "content": self.marker("a") if rng.random() < 0.7 else None,
            }
            if calls:
                message["tool_calls"] = calls
            elif message["content"] is None:
                message["content"] = self.marker("a")
            return [message]
        items: list[object] = []
        for _ in range(rng.randint(1, 4)):
            pick = rng.random()
            if pick < 0.3:
                item: dict[str, object] = {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": self.marker("a")}],
                }
                if rng.random() < 0.2:
                    item["id"] = rng.choice(_ITEM_IDS)
                items.append(item)
            elif pick < 0.45:
                items.append({"type": "reasoning", "id": rng.choice(_ITEM_IDS), "summary": []})
            else:
                call: dict[str, object] = {
                    "type": "function_call",
                    "call_id": self.call_id(),
                    "name": self.marker("tool"),
                    "arguments": "{}",
                }
                if rng.random() < 0.3:
                    call["id"] = f"fc_{call['call_id']}"
                call_ids.append(str(call["call_id"]))
                items.append(call)
        return items

    def result(self, call_id: str) -> object:
        rng = self.rng
        close = rng.random() < 0.15
        if self.lane == "anthropic.messages":
            block: dict[str, object] = {"type": "tool_result", "tool_use_id": call_id}
            block["content"] = INTERRUPTED_RESULT_TEXT if close else self.content("r", "text")
            if rng.random() < 0.2:
                block["is_error"] = True
            blocks: list[object] = [block]
            if rng.random() < 0.15:
                blocks.append({"type": "text", "text": self.marker("u")})
            return {"role": "user", "content": blocks}
        if self.lane == "openai.chat_completions":
            content = INTERRUPTED_RESULT_TEXT if close else self.content("r", "text")
            return {"role": "tool", "tool_call_id": call_id, "content": content}
        output = INTERRUPTED_RESULT_TEXT if close else self.content("r", "input_text")
        return {"type": "function_call_output", "call_id": call_id, "output": output}

    def malformed(self) -> object:
        rng, lane = self.rng, self.lane
        bad = rng.choice(_BAD)
        shapes: list[Callable[[], object]] = [
            lambda: bad,
            lambda: {"role": bad, "content": self.marker("u")},
            lambda: {"role": "user", "content": bad},
        ]
        if lane == "anthropic.messages":
            shapes += [
                lambda: {"role": "assistant", "content": [{"type": "tool_use", "id": bad, "name": "f", "input": {}}]},
                lambda: {"role": "user", "content": [{"type": "tool_result", "tool_use_id": bad, "content": "x"}]},
                lambda: {"role": "assistant", "content": [bad]},
            ]
        elif lane == "openai.chat_completions":
            shapes += [
                lambda: {"role": "assistant", "tool_calls": bad},
                lambda: {"role": "assistant", "tool_calls": [{"id": bad, "function": {"name": "f"}}]},
                lambda: {"role": "tool", "tool_call_id": bad, "content": "x"},
            ]
        else:
            shapes += [
                lambda: {"type": "function_call", "call_id": bad, "name": "f", "arguments": "{}"},
                lambda: {"type": "function_call_output", "call_id": bad, "output": "x"},
                lambda: {"type": bad},
                lambda: {"type": "reasoning", "id": bad, "summary": []},
            ]
        return rng.choice(shapes)()


def transcript(lane: Lane, flavour: str, rng: random.Random) -> list[object]:
    """One generated transcript of ``flavour`` in ``lane``."""
    make = _Maker(lane, rng)
    items: list[object] = []
    if flavour == "near":
        for _ in range(rng.randint(1, 6)):
            items.append(make.user())
            call_ids: list[str] = []
            items += make.answer(call_ids)
            items += [make.result(c) for c in dict.fromkeys(call_ids)]
        for _ in range(rng.randint(1, 3)):
            fault = rng.random()
            at = rng.randint(0, len(items))
            if fault < 0.3 and items:
                del items[rng.randrange(len(items))]
            elif fault < 0.5:
                items.insert(at, make.result(make.call_id()))
            elif fault < 0.7 and items:
                items.insert(at, items[rng.randrange(len(items))])
            elif fault < 0.85:
                items.insert(at, make.user())
            else:
                items += make.answer([])
        return items
    for _ in range(rng.randint(0, 16)):
        pick = rng.random()
        if flavour == "malformed" and pick < 0.15:
            items.append(make.malformed())
        elif pick < 0.25:
            items.append(make.user())
        elif pick < 0.5:
            items += make.answer([])
        elif pick < 0.85:
            items.append(make.result(make.call_id()))
        elif items:
            items.append(items[rng.randrange(len(items))])  # the very same object again
    return items


def check(lane: Lane, items: list[object]) -> str:
    """The class of one transcript (see ``CLASSES``)."""
    before = copy.deepcopy(items)
    try:
        view = ensure_tool_turn_invariants(items, lane=lane)
    except ToolTurnInputError:
        return "refused"
    except Exception:
        return "internal error"
    if items != before:
        return "mutated"
    try:
        broken = [v.rule for v in validate(view.messages, lane=lane)]
        sent = [v.rule for v in validate(items, lane=lane) if v.rule in CONTENT_RULES]
        if any(rule not in CONTENT_RULES for rule in broken) or len(broken) > len(sent):
            return "invalid output"
        again = ensure_tool_turn_invariants(view.messages, lane=lane)
    except Exception:
        return "internal error"
    if again.repairs or again.messages is not view.messages:
        return "non-idempotent"
    if not view.lossy:
        kept = set(_MARKER.findall(json.dumps(view.messages, default=str)))
        if not set(_MARKER.findall(json.dumps(items, default=str))) <= kept:
            return "unreported loss"
    return "checked"


def run(count: int, *, seed: int = 1) -> dict[tuple[Lane, str], Counter[str]]:
    """``count`` transcripts per lane and flavour, each lane and flavour from its own seeded generator."""
    out: dict[tuple[Lane, str], Counter[str]] = {}
    for lane in LANES:
        for flavour in FLAVOURS:
            rng = random.Random(f"{seed}:{lane}:{flavour}")
            out[lane, flavour] = Counter(check(lane, transcript(lane, flavour, rng)) for _ in range(count))
    return out


def table(counts: dict[tuple[Lane, str], Counter[str]]) -> str:
    """The counts, one row per lane and flavour."""
    header = f"{'lane':<26} {'flavour':<10}" + "".join(f"{c:>17}" for c in CLASSES)
    rows = [header, "-" * len(header)]
    for (lane, flavour), counter in counts.items():
        rows.append(f"{lane:<26} {flavour:<10}" + "".join(f"{counter[c]:>17,}" for c in CLASSES))
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000, help="transcripts per lane and flavour")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    counts = run(args.count, seed=args.seed)
    print(table(counts))
    failures = sum(counter[c] for counter in counts.values() for c in FAILURES)
    print(f"\nfailures: {failures:,}")


if __name__ == "__main__":
    main()
