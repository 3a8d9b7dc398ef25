"""Fuzz and soak the law: N generated transcripts per lane and flavour, counted by what went wrong.

Flavours: ``random`` (any sequence of the lane's items from small id pools, so every break
occurs), ``near`` (clean sessions with one to three faults injected), ``malformed`` (items of the
wrong type, fields missing or of the wrong type, results nesting parts no user message holds, mixed
in). The pools include same-object repeats, ids the Anthropic pattern refuses, item ids shared
across items (calls and outputs of different call ids included), reasoning with nothing after it,
string and list contents. Gemini transcripts are drawn in one spelling each (REST camelCase dicts,
the SDK's snake_case dicts, or ``google.genai.types.Content`` objects) and add calls with and without
ids, signed and unsigned, consecutive model contents (one per streamed chunk), responses split over
contents and text after them. Every text, call argument and result payload is a unique ``<…>`` marker.

Each transcript is checked: the law raises nothing but ``ToolTurnInputError`` (else an internal
error); its view breaks no tool-turn rule of the lane's ``validate`` and no rule of
``PASSED_THROUGH`` more often than the input did (else an invalid output); a second pass returns the
very same list with no repairs (else non-idempotent); every marker of the input is in the view
unless a lossy repair was reported (else an unreported loss); the input is left exactly as it was
(else mutated). Typed refusals are counted, not failures.

Run: ``python -m bench.fuzz`` (100,000 per lane and flavour: a maintainer's soak, minutes), or
``--count N`` and ``--lane LANE``; the test suite runs a small deterministic sample (``tests/test_bench.py``).
"""

from __future__ import annotations

import argparse
import base64
import copy
import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from otel_toolturn import (
    INTERRUPTED_RESULT_TEXT,
    LANES,
    Lane,
    ToolTurnInputError,
    ensure_tool_turn_invariants,
    validate,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

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
"""Ids shared by items that are no calls; a call item's own id mostly follows its call id (``fc_<call id>``), so it
repeats where the call is replayed, and is sometimes ``_SHARED_ID``, which calls and outputs of other call ids
carry too (a retry that rewrote the call id and kept the item id)."""
_SHARED_ID: Final = "fc_0"
CONTENT_RULES: Final = frozenset({"empty_message", "empty_text", "empty_parts"})
"""Rules about content, not tool turns: a violation of them the caller sent passes through as sent."""
UNREPAIRED_RULES: Final = frozenset({"call_turn_position"})
"""Tool-turn rules the law documents it does not repair: Gemini's call turn at the start of ``contents``
(the law would have to invent a user turn). A violation of them the caller sent passes through as sent."""
PASSED_THROUGH: Final = CONTENT_RULES | UNREPAIRED_RULES
"""The rules the law's view may break, each no more often than the input did."""
_NAMES: Final = ("ls", "cat", "grep")
"""Gemini tool names: a small pool, since responses without ids are matched by name."""
_SIGNATURE: Final = "c2ln"
"""A thought signature as REST carries it (base64 of ``sig``); SDK objects hold the decoded bytes."""
_SPELLINGS: Final = ("rest", "snake", "sdk")
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

    def answer(self, call_ids: list[object]) -> list[object]:
        """One assistant turn: text, thinking or reasoning, and calls, in a random order; its call ids added."""
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
                    call["id"] = f"fc_{call['call_id']}" if rng.random() < 0.8 else _SHARED_ID
                call_ids.append(str(call["call_id"]))
                items.append(call)
        return items

    def results(self, call_ids: list[object]) -> list[object]:
        """One result item for each distinct call id."""
        return [self.result(str(c)) for c in dict.fromkeys(call_ids)]

    def orphan(self) -> list[object]:
        """A result for a call id drawn from the pool (it may answer nothing)."""
        return [self.result(self.call_id())]

    def spell(self, items: list[object]) -> list[object]:
        """The transcript in the lane's spelling (the items as made)."""
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
        item: dict[str, object] = {"type": "function_call_output", "call_id": call_id, "output": output}
        if rng.random() < 0.05:
            item["id"] = _SHARED_ID
        return item

    def malformed(self) -> object:
        rng, lane = self.rng, self.lane
        bad = rng.choice(_BAD)
        shapes: list[Callable[[], object]] = [
            lambda: bad,
            lambda: {"role": bad, "content": self.marker("u")},
            lambda: {"role": "user", "content": bad},
        ]
        if lane == "anthropic.messages":
            nested: list[object] = [
                {"type": "tool_result", "tool_use_id": self.call_id(), "content": self.marker("r")},
                {"type": "tool_use", "id": self.call_id(), "name": self.marker("tool"), "input": {}},
                {"type": "text", "text": ""},
                bad,
            ]
            shapes += [
                lambda: {"role": "assistant", "content": [{"type": "tool_use", "id": bad, "name": "f", "input": {}}]},
                lambda: {"role": "user", "content": [{"type": "tool_result", "tool_use_id": bad, "content": "x"}]},
                lambda: {"role": "assistant", "content": [bad]},
                lambda: {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": self.call_id(), "content": [rng.choice(nested)]}
                    ],
                },
            ]
        elif lane == "openai.chat_completions":
            nested = [{"type": "refusal", "refusal": self.marker("r")}, {"k": self.marker("r")}, bad]
            shapes += [
                lambda: {"role": "assistant", "tool_calls": bad},
                lambda: {"role": "assistant", "tool_calls": [{"id": bad, "function": {"name": "f"}}]},
                lambda: {"role": "tool", "tool_call_id": bad, "content": "x"},
                lambda: {"role": "tool", "tool_call_id": self.call_id(), "content": rng.choice([nested, *nested])},
            ]
        else:
            nested = [{"type": "function_call_output", "call_id": self.call_id(), "output": self.marker("r")}, bad]
            shapes += [
                lambda: {"type": "function_call", "call_id": bad, "name": "f", "arguments": "{}"},
                lambda: {"type": "function_call_output", "call_id": bad, "output": "x"},
                lambda: {"type": bad},
                lambda: {"type": "reasoning", "id": bad, "summary": []},
                lambda: {
                    "type": "function_call_output",
                    "call_id": self.call_id(),
                    "output": rng.choice([nested, *nested]),
                },
            ]
        return rng.choice(shapes)()


class _GeminiMaker(_Maker):
    """Makes Gemini contents (REST camelCase while made; ``spell`` turns them into the transcript's spelling).

    A call is ``(name, id or None)``. Per transcript: whether calls carry ids (always, never, or mixed)
    and the spelling.
    """

    def __init__(self, lane: Lane, rng: random.Random) -> None:
        super().__init__(lane, rng)
        self.ids = rng.choice(("always", "never", "mixed"))
        self.spelling = rng.choice(_SPELLINGS)

    def call(self) -> tuple[str, str | None]:
        rng = self.rng
        with_id = self.ids == "always" or (self.ids == "mixed" and rng.random() < 0.5)
        return rng.choice(_NAMES), rng.choice(_CALL_IDS[:3]) if with_id else None

    def text(self, kind: str) -> dict[str, object]:
        part: dict[str, object] = {"text": self.marker(kind)}
        if kind == "th":
            part["thought"] = True
        return part

    def user(self) -> object:
        content: dict[str, object] = {"parts": [self.text("u")]}
        if self.rng.random() < 0.9:  # a missing role reads as user
            content = {"role": "user", **content}
        return content

    def answer(self, call_ids: list[object]) -> list[object]:
        """One call step or reply: text, thought and call parts, as one to three consecutive model contents."""
        rng = self.rng
        parts: list[object] = []
        for _ in range(rng.randint(1, 4)):
            pick = rng.random()
            if pick < 0.25:
                parts.append(self.text("a"))
            elif pick < 0.4:
                part = self.text("th")
                if rng.random() < 0.5:
                    part["thoughtSignature"] = _SIGNATURE
                parts.append(part)
            else:
                name, call_id = self.call()
                data: dict[str, object] = {"name": name, "args": {"q": self.marker("arg")}}
                if call_id is not None:
                    data["id"] = call_id
                call: dict[str, object] = {"functionCall": data}
                first = not any("functionCall" in p for p in parts if isinstance(p, dict))
                if rng.random() < (0.8 if first else 0.15):
                    call["thoughtSignature"] = _SIGNATURE
                parts.append(call)
                call_ids.append((name, call_id))
        cuts = sorted(rng.sample(range(1, len(parts)), k=min(len(parts) - 1, rng.choice((0, 0, 1, 2)))))
        bounds = [0, *cuts, len(parts)]
        return [{"role": "model", "parts": parts[a:b]} for a, b in itertools.pairwise(bounds)]

    def response(self, call: object) -> dict[str, object]:
        rng = self.rng
        name, call_id = call if isinstance(call, tuple) else self.call()
        data: dict[str, object] = {"name": name}
        if call_id is not None and rng.random() < 0.9:  # else matched by name
            data["id"] = call_id
        pick = rng.random()
        payload: dict[str, object]
        if pick < 0.15:
            payload = {"error": INTERRUPTED_RESULT_TEXT}
        elif pick < 0.5:
            payload = {"output": self.marker("r")}
        elif pick < 0.65:
            payload = {rng.choice(("result", "error")): self.marker("r")}
        elif pick < 0.85:
            payload = {"output": {"rows": [self.marker("r")]}}
        else:
            payload = {"output": self.marker("r"), "code": 0}
        data["response"] = payload
        return {"functionResponse": data}

    def results(self, call_ids: list[object]) -> list[object]:
        """One response per call (a repeated id answered once), in one content or split over two; text around."""
        seen: set[object] = set()
        parts: list[object] = []
        for call in call_ids:
            call_id = call[1] if isinstance(call, tuple) else None
            if call_id is None or call_id not in seen:
                parts.append(self.response(call))
            seen.add(call_id)
        return self.contents(parts) if parts else []

    def contents(self, parts: list[object]) -> list[object]:
        """User contents holding ``parts``: maybe text before or after them, maybe split in two."""
        rng = self.rng
        if rng.random() < 0.15:
            parts.insert(0, self.text("u"))
        if rng.random() < 0.15:
            parts.append(self.text("u"))
        if len(parts) > 1 and rng.random() < 0.2:
            cut = rng.randrange(1, len(parts))
            return [{"role": "user", "parts": parts[:cut]}, {"role": "user", "parts": parts[cut:]}]
        return [{"role": "user", "parts": parts}]

    def orphan(self) -> list[object]:
        """One to three responses for calls drawn from the pools (they may answer nothing)."""
        return self.contents([self.response(None) for _ in range(self.rng.choice((1, 1, 2, 3)))])

    def malformed(self) -> object:
        rng = self.rng
        bad = rng.choice(_BAD)
        shapes: list[Callable[[], object]] = [
            lambda: bad,
            lambda: {"role": bad, "parts": [self.text("u")]},
            lambda: {"role": "user", "parts": bad},
            lambda: {"role": rng.choice(("user", "model")), "parts": [bad]},
            lambda: {"role": "model"},
            lambda: {"role": "model", "parts": [{"functionCall": {"args": {}}}]},
            lambda: {"role": "model", "parts": [{"functionCall": bad}]},
            lambda: {"role": "model", "parts": [{"functionCall": {"name": bad, "args": {}}}]},
            lambda: {"role": "model", "parts": [{"functionCall": {"name": "ls", "id": bad, "args": {}}}]},
            lambda: {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": bad}}]},
            lambda: {"role": "model", "parts": [{"functionCall": {"name": "ls"}, "thoughtSignature": bad}]},
            lambda: {"role": "user", "parts": [{"functionResponse": bad}]},
            lambda: {"role": "user", "parts": [{"functionResponse": {"name": bad, "response": {"output": "x"}}}]},
            lambda: {"role": "user", "parts": [{"functionResponse": {"name": "ls", "id": bad, "response": {}}}]},
            lambda: {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": bad}}]},
        ]
        return rng.choice(shapes)()

    def spell(self, items: list[object]) -> list[object]:
        """The contents in the transcript's spelling; the same object made twice stays one object."""
        if self.spelling == "rest":
            return items
        convert = _snake if self.spelling == "snake" else _sdk_content
        done: dict[int, object] = {}
        out: list[object] = []
        for item in items:
            if id(item) not in done:
                done[id(item)] = convert(item)
            out.append(done[id(item)])
        return out


_SNAKE: Final = {"functionCall": "function_call", "functionResponse": "function_response"}
_SNAKE_SIGNATURE: Final = {"thoughtSignature": "thought_signature"}


def _snake(content: object) -> object:
    """A made content in the SDK's snake_case dict spelling (part keys only; payloads stay as made)."""
    if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
        return content
    keys = _SNAKE | _SNAKE_SIGNATURE
    parts = [{keys.get(k, k): v for k, v in p.items()} if isinstance(p, dict) else p for p in content["parts"]]
    return {**content, "parts": parts}


def _sdk_content(content: object) -> object:
    """A made content as a ``google.genai.types.Content``; one the SDK's validation refuses is constructed as made."""
    from google.genai import types  # noqa: PLC0415 - only Gemini transcripts need the SDK
    from pydantic import ValidationError  # noqa: PLC0415

    snake = _snake(content)
    if not isinstance(snake, dict):
        return snake
    parts = snake.get("parts")
    if isinstance(parts, list):
        parts = [_signature_bytes(p) for p in parts]
    try:
        return types.Content.model_validate({**snake, "parts": parts} if "parts" in snake else snake)
    except ValidationError:
        pass
    classes: dict[str, type[BaseModel]] = {
        "function_call": types.FunctionCall,
        "function_response": types.FunctionResponse,
    }
    if isinstance(parts, list):
        parts = [_construct(types.Part, p, classes) if isinstance(p, dict) else p for p in parts]
    fields: dict[str, Any] = {k: v for k, v in snake.items() if k in ("role", "parts")}
    if "parts" in snake:
        fields["parts"] = parts
    return types.Content.model_construct(**fields)


def _construct(cls: type[BaseModel], made: dict[str, object], classes: dict[str, type[BaseModel]]) -> BaseModel:
    """``cls`` holding ``made`` unvalidated, its dict fields named in ``classes`` constructed the same way."""
    fields: dict[str, Any] = {
        k: _construct(classes[k], v, {}) if k in classes and isinstance(v, dict) else v for k, v in made.items()
    }
    return cls.model_construct(None, **fields)


def _signature_bytes(part: object) -> object:
    """The part with a string signature as the bytes the SDK holds."""
    if isinstance(part, dict) and isinstance(part.get("thought_signature"), str):
        return {**part, "thought_signature": base64.b64decode(part["thought_signature"] + "==")}
    return part


def transcript(lane: Lane, flavour: str, rng: random.Random) -> list[object]:
    """One generated transcript of ``flavour`` in ``lane``."""
    make = _GeminiMaker(lane, rng) if lane == "gemini.generate_content" else _Maker(lane, rng)
    items: list[object] = []
    if flavour == "near":
        for _ in range(rng.randint(1, 6)):
            items.append(make.user())
            calls: list[object] = []
            items += make.answer(calls)
            items += make.results(calls)
        for _ in range(rng.randint(1, 3)):
            fault = rng.random()
            at = rng.randint(0, len(items))
            if fault < 0.3 and items:
                del items[rng.randrange(len(items))]
            elif fault < 0.5:
                items[at:at] = make.orphan()
            elif fault < 0.7 and items:
                items.insert(at, items[rng.randrange(len(items))])
            elif fault < 0.85:
                items.insert(at, make.user())
            else:
                items += make.answer([])
        return make.spell(items)
    for _ in range(rng.randint(0, 16)):
        pick = rng.random()
        if flavour == "malformed" and pick < 0.15:
            items.append(make.malformed())
        elif pick < 0.25:
            items.append(make.user())
        elif pick < 0.5:
            items += make.answer([])
        elif pick < 0.85:
            items += make.orphan()
        elif items:
            items.append(items[rng.randrange(len(items))])  # the very same object again
    return make.spell(items)


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
        broken = Counter(v.rule for v in validate(view.messages, lane=lane))
        sent = Counter(v.rule for v in validate(items, lane=lane) if v.rule in PASSED_THROUGH)
        if any(rule not in PASSED_THROUGH for rule in broken) or broken.total() > sent.total():
            return "invalid output"
        if any(broken[rule] > sent[rule] for rule in UNREPAIRED_RULES):
            return "invalid output"
        again = ensure_tool_turn_invariants(view.messages, lane=lane)
    except Exception:
        return "internal error"
    if again.repairs or again.messages is not view.messages:
        return "non-idempotent"
    if not view.lossy:
        kept = set(_MARKER.findall(json.dumps(view.messages, default=_plain)))
        if not set(_MARKER.findall(json.dumps(items, default=_plain))) <= kept:
            return "unreported loss"
    return "checked"


def _plain(value: object) -> object:
    """A value ``json`` cannot write, as it can: a pydantic model's fields (its ``str`` abbreviates deep values)."""
    model_dump = getattr(value, "model_dump", None)
    return model_dump(warnings=False) if callable(model_dump) else str(value)


def run(count: int, *, seed: int = 1, lanes: Sequence[Lane] = LANES) -> dict[tuple[Lane, str], Counter[str]]:
    """``count`` transcripts per lane and flavour, each lane and flavour from its own seeded generator."""
    out: dict[tuple[Lane, str], Counter[str]] = {}
    for lane in lanes:
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
    parser.add_argument("--lane", choices=LANES, action="append", help="only this lane (repeatable)")
    args = parser.parse_args()
    counts = run(args.count, seed=args.seed, lanes=args.lane or LANES)
    print(table(counts))
    failures = sum(counter[c] for counter in counts.values() for c in FAILURES)
    print(f"\nfailures: {failures:,}")


if __name__ == "__main__":
    main()
