"""The transcripts ``bench.fuzz`` checks: one maker per lane, three flavours, named faults, Gemini in four spellings.

``transcript(lane, flavour, rng)`` draws one transcript from ``rng`` (a seeded ``random.Random``, or
the one hypothesis draws from, so that a failure shrinks):

- ``random``: any sequence of the lane's items (user turns, answers with calls, results, the very
  same object again) from small id pools, so every break occurs and ids are reused across turns;
- ``near``: a clean session of one to six rounds with one to three of the lane's ``FAULTS_OF`` in it;
- ``malformed``: the random sequence with items of the wrong type, fields missing or of the wrong
  type, and shapes the lane does not define mixed in.

Every text, call argument and result payload is a unique ``<kind><n>`` marker, so whatever reaches a
list can be traced. Gemini contents are made as REST camelCase dicts and then written in the
transcript's spelling: ``rest``, ``snake`` (the SDK's snake_case dicts), ``sdk``
(``google.genai.types.Content``; one the SDK's validation refuses is constructed as made) or
``mixed`` (each content in one of the three, as a history holding the SDK's response objects beside
stored JSON has them); the same object made twice stays one object.
"""

from __future__ import annotations

import base64
import dataclasses
import itertools
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from typing_extensions import assert_never

from otel_toolturn import INTERRUPTED_RESULT_TEXT, Dialect, Lane

if TYPE_CHECKING:
    from pydantic import BaseModel

Flavour = Literal["random", "near", "malformed"]
FLAVOURS: Final[tuple[Flavour, ...]] = get_args(Flavour)

Spelling = Literal["rest", "snake", "sdk", "mixed"]
SPELLINGS: Final[tuple[Spelling, ...]] = get_args(Spelling)
"""Gemini's spellings of a transcript: REST camelCase dicts, the SDK's snake_case dicts, typed ``Content``, mixed."""

Fault = Literal[
    "dropped_item",
    "dropped_result",
    "late_result",
    "split_results",
    "duplicated_result",
    "same_object",
    "orphan_result",
    "user_between",
    "unanswered_call",
    "chunked_answer",
    "dropped_signature",
    "reused_item_id",
    "nested_result",
    "open_server_use",
]
"""A near-valid transcript's faults: any item left out; one result left out (Gemini: one response part);
a result moved later; a batch's results split over two messages (Chat and Responses: a user message
between them); a second result, with a payload of its own, for an answered call; an item inserted again
as the very same object; a result for a pool id, which may answer nothing; a user message inserted
anywhere; an answer with calls and no results; an assistant message cut in two consecutive ones, one
per streamed chunk; a signed call's thought signature left out (Gemini); a call item given another call
item's ``id``, its ``call_id`` its own (Responses, a retry that kept the item id); a result nested in
another result's content (Anthropic, Bedrock); a server or MCP tool's result block left out of its answer
(Anthropic)."""
FAULTS: Final[tuple[Fault, ...]] = get_args(Fault)

_EVERY_LANE: Final[tuple[Fault, ...]] = (
    "dropped_item",
    "dropped_result",
    "late_result",
    "split_results",
    "duplicated_result",
    "same_object",
    "orphan_result",
    "user_between",
    "unanswered_call",
)
FAULTS_OF: Final[Mapping[Lane, tuple[Fault, ...]]] = MappingProxyType(
    {
        "anthropic.messages": (*_EVERY_LANE, "chunked_answer", "nested_result", "open_server_use"),
        "openai.chat_completions": (*_EVERY_LANE, "chunked_answer"),
        "openai.responses": (*_EVERY_LANE, "reused_item_id"),
        "gemini.generate_content": (*_EVERY_LANE, "chunked_answer", "dropped_signature"),
        "bedrock.converse": (*_EVERY_LANE, "chunked_answer", "nested_result"),
    }
)
"""The faults a near-valid transcript of each lane draws from (Responses items are one per part already)."""


@dataclass(frozen=True, kw_only=True)
class Transcript:
    """One generated transcript: its items, its spelling (Gemini) and the faults put in it (``near``)."""

    items: list[object]
    spelling: Spelling | None = None
    faults: tuple[Fault, ...] = ()


_CALL_IDS: Final = ("c0", "c1", "c2", "functions.lookup:0")
_ITEM_IDS: Final = ("rs_1", "rs_2", "msg_1", "msg_2")
_SHARED_ID: Final = "fc_0"
"""A Responses item id that calls and outputs of different call ids carry (a retry that rewrote the call id and kept
the item id)."""
"""Ids shared by items that are no calls; a call item's own id follows its call id (``fc_<call id>``), so it
repeats exactly where the call is replayed, unless a ``reused_item_id`` fault gives it another call's."""
_SERVER_IDS: Final = ("srvtoolu_0", "srvtoolu_1")
"""Anthropic server and MCP tool uses' ids: a pool of their own, so results answer uses of other turns too."""
_SERVER_TOOLS: Final = (
    ("web_search", "web_search_tool_result"),
    ("code_execution", "code_execution_tool_result"),
    ("tool_search_tool_regex", "tool_search_tool_result"),
)
_NAMES: Final = ("ls", "cat", "grep")
"""Gemini tool names: a small pool, since responses without ids are matched by name."""
_SIGNATURE: Final = "c2ln"
"""A thought signature as REST carries it (base64 of ``sig``); SDK objects hold the decoded bytes."""
_BAD: Final[tuple[object, ...]] = (None, 3, "", [], {}, ["x"], {"k": "v"}, 1.5, True)


def _dict(value: object) -> dict[str, Any]:
    """A made item as the dict it is (the faults rewrite only items their maker made as dicts)."""
    if not isinstance(value, dict):
        raise TypeError(f"a made item to rewrite must be a dict, got {type(value).__name__}")
    return value


class _Maker:
    """Makes one lane's items with unique markers, from ``rng``.

    The hooks of the faults answer ``None`` where a fault does not apply to the item (or to the lane).
    """

    lane: Lane

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.n = rng, 0

    def marker(self, kind: str) -> str:
        self.n += 1
        return f"<{kind}{self.n}>"

    def call_id(self) -> str:
        return self.rng.choice(_CALL_IDS[:3])

    def content(self, kind: str, part: str) -> object:
        text = self.marker(kind)
        return text if self.rng.random() < 0.6 else [{"type": part, "text": text}]

    def user(self) -> object:
        return {"role": "user", "content": self.content("u", "text")}

    def answer(self, call_ids: list[object]) -> list[object]:
        """One assistant turn (its call ids added to ``call_ids``)."""
        raise NotImplementedError

    def result(self, call_id: str) -> object:
        raise NotImplementedError

    def results(self, call_ids: list[object]) -> list[object]:
        """One result item for each distinct call id."""
        return [self.result(str(c)) for c in dict.fromkeys(call_ids)]

    def orphan(self) -> list[object]:
        """A result for a call id drawn from the pool (it may answer nothing)."""
        return [self.result(self.call_id())]

    def malformed(self) -> object:
        bad = self.rng.choice(_BAD)
        return self.rng.choice(self.bad_shapes(bad))()

    def bad_shapes(self, bad: object) -> list[Callable[[], object]]:
        """Ways to make a malformed item around the bad value ``bad``."""
        return [
            lambda: bad,
            lambda: {"role": bad, "content": self.marker("u")},
            lambda: {"role": "user", "content": bad},
        ]

    def spell(self, items: list[object]) -> Transcript:
        """The transcript in the lane's spelling (the items as made)."""
        return Transcript(items=items)

    def is_result(self, item: object) -> bool:
        raise NotImplementedError

    def is_answer(self, item: object) -> bool:
        return isinstance(item, dict) and item.get("role") == "assistant"

    def without_one(self, item: object) -> object | None:  # noqa: ARG002 - a lane of one result an item
        """The result item with one of several results left out (``None``: it holds one)."""
        return None

    def split(self, item: object) -> list[object] | None:  # noqa: ARG002 - a lane of one result an item
        """The result item's results over two items (``None``: the lane keeps one result an item)."""
        return None

    def again(self, item: object) -> object:
        """A second result, with a payload of its own, for a call the result item answers."""
        raise NotImplementedError

    def chunked(self, item: object) -> list[object] | None:  # noqa: ARG002 - a lane of one piece an item
        """The assistant message cut in two consecutive ones (``None``: it has one piece)."""
        return None

    def unsigned(self, item: object) -> object | None:  # noqa: ARG002 - a lane without signed calls
        """The model content with its first signed call unsigned (``None``: nothing signed)."""
        return None

    def nested(self, item: object) -> object | None:  # noqa: ARG002 - a lane whose results hold no results
        """The result message with a result nested in its first result's content (``None``: not one)."""
        return None

    def unserved(self, item: object) -> object | None:  # noqa: ARG002 - a lane without server tools
        """The answer with one server tool's result block left out (``None``: it holds none)."""
        return None


class _BlockResults(_Maker):
    """A maker whose results are blocks of user messages (Anthropic, Bedrock): found, dropped, split, repeated."""

    def _is_result_block(self, block: dict[str, Any]) -> bool:
        raise NotImplementedError

    def _answered_id(self, block: dict[str, Any]) -> str:
        raise NotImplementedError

    def _results_in(self, item: object) -> list[int]:
        if not isinstance(item, dict) or item.get("role") != "user" or not isinstance(item.get("content"), list):
            return []
        return [i for i, b in enumerate(item["content"]) if isinstance(b, dict) and self._is_result_block(b)]

    def is_result(self, item: object) -> bool:
        return bool(self._results_in(item))

    def without_one(self, item: object) -> object | None:
        at = self._results_in(item)
        if len(at) < 2:
            return None
        gone = self.rng.choice(at)
        return {**_dict(item), "content": [b for i, b in enumerate(_dict(item)["content"]) if i != gone]}

    def split(self, item: object) -> list[object] | None:
        blocks = _dict(item)["content"]
        if len(blocks) < 2:
            return None
        cut = self.rng.randrange(1, len(blocks))
        return [{"role": "user", "content": blocks[:cut]}, {"role": "user", "content": blocks[cut:]}]

    def again(self, item: object) -> object:
        block = _dict(item)["content"][self.rng.choice(self._results_in(item))]
        return self.result(self._answered_id(block))


class _Anthropic(_BlockResults):
    lane: Lane = "anthropic.messages"

    def call_id(self) -> str:
        return self.rng.choice(_CALL_IDS)

    def answer(self, call_ids: list[object]) -> list[object]:
        """Text, thinking and calls, in a random order."""
        blocks: list[object] = []
        for _ in range(self.rng.randint(1, 4)):
            pick = self.rng.random()
            if pick < 0.3:
                blocks.append({"type": "text", "text": self.marker("a")})
            elif pick < 0.45:
                blocks.append({"type": "thinking", "thinking": self.marker("th"), "signature": "sig"})
            elif pick < 0.6:
                blocks += self.served()
            else:
                blocks.append({"type": "tool_use", "id": self.call_id(), "name": self.marker("tool"), "input": {}})
        call_ids.extend(str(b["id"]) for b in blocks if isinstance(b, dict) and b["type"] == "tool_use")
        return [{"role": "assistant", "content": blocks}]

    def served(self) -> list[object]:
        """A server or MCP tool use with its result block, or either alone (a paused turn, a trimmed one)."""
        use_id = self.rng.choice(_SERVER_IDS)
        use: dict[str, object]
        result: dict[str, object]
        if self.rng.random() < 0.3:
            use = {"type": "mcp_tool_use", "id": use_id, "name": self.marker("tool"), "server_name": "s", "input": {}}
            result = {"type": "mcp_tool_result", "tool_use_id": use_id, "content": self.content("r", "text")}
        else:
            name, kind = self.rng.choice(_SERVER_TOOLS)
            use = {"type": "server_tool_use", "id": use_id, "name": name, "input": {"query": self.marker("q")}}
            found = {"type": "web_search_result", "title": self.marker("r"), "url": "https://example.com/"}
            result = {"type": kind, "tool_use_id": use_id, "content": [found]}
        pick = self.rng.random()
        return [use, result] if pick < 0.7 else [use] if pick < 0.85 else [result]

    def unserved(self, item: object) -> object | None:
        blocks = _dict(item)["content"]
        at = [
            i
            for i, b in enumerate(blocks if isinstance(blocks, list) else ())
            if isinstance(b, dict) and str(b.get("type")).endswith("_tool_result") and b.get("type") != "tool_result"
        ]
        if not at:
            return None
        gone = self.rng.choice(at)
        return {**_dict(item), "content": [b for i, b in enumerate(blocks) if i != gone]}

    def block(self, call_id: str) -> dict[str, object]:
        close = self.rng.random() < 0.15
        block: dict[str, object] = {"type": "tool_result", "tool_use_id": call_id}
        block["content"] = INTERRUPTED_RESULT_TEXT if close else self.content("r", "text")
        if self.rng.random() < 0.2:
            block["is_error"] = True
        return block

    def result(self, call_id: str) -> object:
        blocks: list[object] = [self.block(call_id)]
        if self.rng.random() < 0.15:
            blocks.append({"type": "text", "text": self.marker("u")})
        return {"role": "user", "content": blocks}

    def results(self, call_ids: list[object]) -> list[object]:
        """The results of a turn in one user message, one block per distinct call id, maybe text after them."""
        blocks: list[object] = [self.block(str(c)) for c in dict.fromkeys(call_ids)]
        if blocks and self.rng.random() < 0.15:
            blocks.append({"type": "text", "text": self.marker("u")})
        return [{"role": "user", "content": blocks}] if blocks else []

    def bad_shapes(self, bad: object) -> list[Callable[[], object]]:
        return [
            *super().bad_shapes(bad),
            lambda: {"role": "assistant", "content": [{"type": "tool_use", "id": bad, "name": "f", "input": {}}]},
            lambda: {"role": "assistant", "content": [{"type": "tool_use", "id": self.call_id(), "name": "f"}]},
            lambda: {"role": "user", "content": [{"type": "tool_result", "tool_use_id": bad, "content": "x"}]},
            lambda: {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": self.call_id(), "content": bad}],
            },
            lambda: {"role": "assistant", "content": [bad]},
            lambda: {"role": "assistant", "content": [{"type": "server_tool_use", "id": bad, "name": "web_search"}]},
            lambda: {"role": "assistant", "content": [{"type": "mcp_tool_use", "id": self.marker("m"), "name": bad}]},
            lambda: {
                "role": "assistant",
                "content": [{"type": "web_search_tool_result", "tool_use_id": bad, "content": []}],
            },
            lambda: self.nested(self.result(self.call_id())),
            lambda: {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": self.call_id(),
                        "content": [
                            {"type": "tool_use", "id": self.call_id(), "name": self.marker("tool"), "input": {}},
                            {"type": "text", "text": ""},
                        ],
                    }
                ],
            },
        ]

    def _is_result_block(self, block: dict[str, Any]) -> bool:
        return block.get("type") == "tool_result"

    def _answered_id(self, block: dict[str, Any]) -> str:
        return str(block["tool_use_id"])

    def chunked(self, item: object) -> list[object] | None:
        blocks = _dict(item)["content"]
        if not isinstance(blocks, list) or len(blocks) < 2:
            return None
        cut = self.rng.randrange(1, len(blocks))
        return [{"role": "assistant", "content": blocks[:cut]}, {"role": "assistant", "content": blocks[cut:]}]

    def nested(self, item: object) -> object | None:
        at = self._results_in(item)
        if not at:
            return None
        blocks = list(_dict(item)["content"])
        outer = blocks[at[0]]
        inner = {"type": "tool_result", "tool_use_id": self.call_id(), "content": self.content("r", "text")}
        own = outer.get("content")
        held = own if isinstance(own, list) else [{"type": "text", "text": own}] if isinstance(own, str) else []
        blocks[at[0]] = {**outer, "content": [inner, *held] if self.rng.random() < 0.5 else [*held, inner]}
        return {**_dict(item), "content": blocks}


class _Chat(_Maker):
    lane: Lane = "openai.chat_completions"

    def answer(self, call_ids: list[object]) -> list[object]:
        """Text or none, and zero to three calls."""
        calls = [
            {"id": self.call_id(), "type": "function", "function": {"name": self.marker("tool"), "arguments": "{}"}}
            for _ in range(self.rng.choice((0, 1, 1, 2, 3)))
        ]
        call_ids.extend(str(c["id"]) for c in calls)
        message: dict[str, object] = {
            "role": "assistant",
            "content": self.marker("a") if self.rng.random() < 0.7 else None,
        }
        if calls:
            message["tool_calls"] = calls
        elif message["content"] is None:
            message["content"] = self.marker("a")
        return [message]

    def result(self, call_id: str) -> object:
        content = INTERRUPTED_RESULT_TEXT if self.rng.random() < 0.15 else self.content("r", "text")
        return {"role": "tool", "tool_call_id": call_id, "content": content}

    def bad_shapes(self, bad: object) -> list[Callable[[], object]]:
        return [
            *super().bad_shapes(bad),
            lambda: {"role": "assistant", "tool_calls": bad},
            lambda: {"role": "assistant", "tool_calls": [{"id": bad, "function": {"name": "f"}}]},
            lambda: {"role": "assistant", "tool_calls": [{"id": self.call_id(), "function": bad}]},
            lambda: {"role": "tool", "tool_call_id": bad, "content": "x"},
            lambda: {"role": "tool", "tool_call_id": self.call_id(), "content": bad},
            lambda: {
                "role": "tool",
                "tool_call_id": self.call_id(),
                "content": [{"type": "refusal", "refusal": self.marker("r")}, {"k": self.marker("r")}],
            },
        ]

    def is_result(self, item: object) -> bool:
        return isinstance(item, dict) and item.get("role") == "tool"

    def again(self, item: object) -> object:
        return self.result(_dict(item)["tool_call_id"])

    def chunked(self, item: object) -> list[object] | None:
        message = _dict(item)
        calls = message.get("tool_calls")
        if not isinstance(calls, list) or not calls:
            return None
        if message.get("content") is not None:
            return [{"role": "assistant", "content": message["content"]}, {**message, "content": None}]
        if len(calls) < 2:
            return None
        cut = self.rng.randrange(1, len(calls))
        return [{**message, "tool_calls": calls[:cut]}, {**message, "tool_calls": calls[cut:]}]


_MISTRAL_IDS: Final = ("D681PevKs", "aB3dE6gH9", "c0", "functions.lookup:0")
"""Two ids Mistral accepts, a short one and a framework's: renames meet kept ids."""


class _MistralChat(_Chat):
    """Chat for Mistral: ids drawn from a pool that mixes ids Mistral accepts with ids it refuses."""

    def call_id(self) -> str:
        return self.rng.choice(_MISTRAL_IDS[:3])


class _DeepSeekChat(_Chat):
    """Chat for DeepSeek in thinking mode: most assistant messages carry a ``reasoning_content`` marker."""

    def answer(self, call_ids: list[object]) -> list[object]:
        """Chat's answer, with its reasoning four times in five."""
        return [
            {**_dict(m), "reasoning_content": self.marker("th")} if self.rng.random() < 0.8 else m
            for m in super().answer(call_ids)
        ]


_OLLAMA_NAMES: Final = ("c0", "c1", "c2")
"""The tool names Ollama's id-less calls are drawn from: few, so calls of one name meet in a turn."""


class _OllamaChat(_Chat):
    """Chat for Ollama's native chat: calls without ids, arguments an object, results answering by ``tool_name``."""

    def call_id(self) -> str:
        return self.rng.choice(_OLLAMA_NAMES)

    def answer(self, call_ids: list[object]) -> list[object]:
        """Chat's answer, each call spelt as Ollama's: its name (the key it is answered by) and its arguments."""
        messages = [_dict(m) for m in super().answer(call_ids)]
        for message in messages:
            if "tool_calls" in message:
                message["tool_calls"] = [
                    {"function": {"name": c["id"], "arguments": {}}} for c in message["tool_calls"]
                ]
        return list(messages)

    def result(self, call_id: str) -> object:
        content = INTERRUPTED_RESULT_TEXT if self.rng.random() < 0.15 else self.marker("r")
        return {"role": "tool", "tool_name": call_id, "content": content}

    def again(self, item: object) -> object:
        return self.result(_dict(item)["tool_name"])


class _Responses(_Maker):
    """Makes Responses items: calls of every kind the client answers, each answered by its own kind of output.

    Each call id's kind is the one its latest call was made with; an output for an id no call used yet
    is a function call output.
    """

    lane: Lane = "openai.responses"

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.kinds: dict[str, str] = {}

    def user(self) -> object:
        if self.rng.random() < 0.5:
            return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": self.marker("u")}]}
        return super().user()

    def answer(self, call_ids: list[object]) -> list[object]:
        """Messages, reasoning and call items of any kind, in a random order."""
        rng = self.rng
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
                call = self.call(self.call_id(), rng.choice(_RESPONSES_KINDS))
                if rng.random() < 0.3:  # mostly its call's own item id; sometimes one other items carry too
                    call["id"] = f"fc_{call['call_id']}" if rng.random() < 0.8 else _SHARED_ID
                call_ids.append(str(call["call_id"]))
                items.append(call)
        return items

    def call(self, call_id: str, kind: str) -> dict[str, object]:
        """A call item of ``kind`` (its marker as the name, command, path or typed text)."""
        self.kinds[call_id] = kind
        marker = self.marker("tool")
        call: dict[str, object] = {"type": kind, "call_id": call_id}
        if kind == "function_call":
            call |= {"name": marker, "arguments": "{}"}
        elif kind == "custom_tool_call":
            call |= {"name": marker, "input": self.marker("in")}
        elif kind == "local_shell_call":
            call |= {"action": {"type": "exec", "command": [marker], "env": {}}, "status": "completed"}
        elif kind == "shell_call":
            call |= {"action": {"commands": [marker]}, "status": "completed"}
        elif kind == "apply_patch_call":
            call |= {"operation": {"type": "delete_file", "path": marker}, "status": "completed"}
        else:
            call |= {"action": {"type": "type", "text": marker}, "pending_safety_checks": [], "status": "completed"}
        return call

    def result(self, call_id: str) -> object:
        """An output of the kind of the call's latest call (an interrupted close 15% of the time, where one exists)."""
        kind = self.kinds.get(call_id, "function_call")
        closed = self.rng.random() < 0.15
        item: dict[str, object] = {"type": f"{kind}_output", "call_id": call_id}
        if kind in ("function_call", "custom_tool_call"):
            item["output"] = INTERRUPTED_RESULT_TEXT if closed else self.content("r", "input_text")
        elif kind == "local_shell_call":
            item["output"] = INTERRUPTED_RESULT_TEXT if closed else self.marker("r")
        elif kind == "shell_call":
            outcome = {"type": "exit", "exit_code": 130} if closed else self.rng.choice(_OUTCOMES)
            out, err = ("", INTERRUPTED_RESULT_TEXT) if closed else (self.marker("r"), "")
            item["output"] = [{"stdout": out, "stderr": err, "outcome": outcome}]
        elif kind == "apply_patch_call":
            failed = closed or self.rng.random() < 0.3
            item |= {"status": "failed" if failed else "completed"}
            item["output"] = INTERRUPTED_RESULT_TEXT if closed else self.marker("r")
        else:
            url = f"https://shots.example/{self.marker('r')}.png"
            item["output"] = {"type": "computer_screenshot", "image_url": url}
        if self.rng.random() < 0.05:
            item["id"] = _SHARED_ID
        return item

    def bad_shapes(self, bad: object) -> list[Callable[[], object]]:
        return [
            *super().bad_shapes(bad),
            lambda: {"type": "function_call", "call_id": bad, "name": "f", "arguments": "{}"},
            lambda: {"type": "function_call", "call_id": self.call_id(), "id": bad, "name": "f", "arguments": "{}"},
            lambda: {"type": "function_call_output", "call_id": bad, "output": "x"},
            lambda: {"type": "function_call_output", "call_id": self.call_id(), "output": bad},
            lambda: {"type": "shell_call", "call_id": bad, "action": {"commands": [self.marker("tool")]}},
            lambda: {"type": "shell_call_output", "call_id": self.call_id(), "output": bad},
            lambda: {"type": "apply_patch_call_output", "call_id": self.call_id(), "status": bad, "output": bad},
            lambda: {"type": "computer_call_output", "call_id": self.call_id(), "output": bad},
            lambda: {"type": bad},
            lambda: {"type": "reasoning", "id": bad, "summary": []},
            lambda: {
                "type": "function_call_output",
                "call_id": self.call_id(),
                "output": [{"type": "function_call_output", "call_id": self.call_id(), "output": self.marker("r")}],
            },
        ]

    def is_result(self, item: object) -> bool:
        return isinstance(item, dict) and item.get("type") in _RESPONSES_OUTPUTS

    def is_answer(self, item: object) -> bool:
        return isinstance(item, dict) and item.get("type") in _RESPONSES_KINDS

    def again(self, item: object) -> object:
        return self.result(_dict(item)["call_id"])


_RESPONSES_KINDS: Final = (
    "function_call",
    "function_call",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
    "computer_call",
)
"""The Responses call item types a call is drawn from (function calls most often)."""
_RESPONSES_OUTPUTS: Final = frozenset(f"{kind}_output" for kind in _RESPONSES_KINDS)
_OUTCOMES: Final[tuple[dict[str, object], ...]] = (
    {"type": "exit", "exit_code": 0},
    {"type": "exit", "exit_code": 1},
    {"type": "timeout"},
)


class _Gemini(_Maker):
    """Makes Gemini contents (REST camelCase while made; ``spell`` writes them in the transcript's spelling).

    A call is ``(name, id or None)``. Per transcript: whether calls carry ids (always, never, or mixed)
    and the spelling.
    """

    lane: Lane = "gemini.generate_content"

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.ids = rng.choice(("always", "never", "mixed"))
        self.spelling: Spelling = rng.choice(SPELLINGS)

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

    def bad_shapes(self, bad: object) -> list[Callable[[], object]]:
        rng = self.rng
        return [
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
            lambda: {"role": "user", "parts": [{**self.response(None), "text": self.marker("u")}]},
            lambda: {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}, self.response(None)]},
        ]

    def spell(self, items: list[object]) -> Transcript:
        """The contents in the transcript's spelling (``mixed``: each its own); the same object stays one object."""
        spellings: dict[Spelling, Callable[[object], object]] = {"rest": lambda c: c, "snake": _snake, "sdk": _sdk}
        done: dict[int, object] = {}
        out: list[object] = []
        for item in items:
            if id(item) not in done:
                spelling = self.rng.choice(("rest", "snake", "sdk")) if self.spelling == "mixed" else self.spelling
                done[id(item)] = spellings[spelling](item)
            out.append(done[id(item)])
        return Transcript(items=out, spelling=self.spelling)

    def _parts(self, item: object, key: str) -> list[int]:
        if not isinstance(item, dict) or not isinstance(item.get("parts"), list):
            return []
        return [i for i, p in enumerate(item["parts"]) if isinstance(p, dict) and key in p]

    def is_result(self, item: object) -> bool:
        return (
            isinstance(item, dict)
            and item.get("role", "user") == "user"
            and bool(self._parts(item, "functionResponse"))
        )

    def is_answer(self, item: object) -> bool:
        return isinstance(item, dict) and item.get("role") == "model"

    def without_one(self, item: object) -> object | None:
        at = self._parts(item, "functionResponse")
        if len(at) < 2:
            return None
        gone = self.rng.choice(at)
        return {**_dict(item), "parts": [p for i, p in enumerate(_dict(item)["parts"]) if i != gone]}

    def split(self, item: object) -> list[object] | None:
        return self.chunked(item)

    def again(self, item: object) -> object:
        data = _dict(item)["parts"][self.rng.choice(self._parts(item, "functionResponse"))]["functionResponse"]
        return {"role": "user", "parts": [self.response((data["name"], data.get("id")))]}

    def chunked(self, item: object) -> list[object] | None:
        parts = _dict(item)["parts"]
        if len(parts) < 2:
            return None
        cut = self.rng.randrange(1, len(parts))
        return [{**_dict(item), "parts": parts[:cut]}, {**_dict(item), "parts": parts[cut:]}]

    def unsigned(self, item: object) -> object | None:
        at = [i for i in self._parts(item, "functionCall") if "thoughtSignature" in _dict(item)["parts"][i]]
        if not at:
            return None
        parts = list(_dict(item)["parts"])
        parts[at[0]] = {k: v for k, v in parts[at[0]].items() if k != "thoughtSignature"}
        return {**_dict(item), "parts": parts}


_BEDROCK_IDS: Final = ("c0", "c1", "c2", "functions.lookup:0", "tooluse_" + "x" * 60, "fn lookup")
"""Bedrock call ids: the pool, one with the ``.`` and ``:`` the service accepts, one over its 64 characters, one
with a space it refuses."""


class _Bedrock(_BlockResults):
    lane: Lane = "bedrock.converse"

    def call_id(self) -> str:
        return self.rng.choice(_BEDROCK_IDS)

    def user(self) -> object:
        return {"role": "user", "content": [{"text": self.marker("u")}]}

    def answer(self, call_ids: list[object]) -> list[object]:
        """Text, signed reasoning and calls, in a random order, and now and then a cache point."""
        blocks: list[object] = []
        for _ in range(self.rng.randint(1, 4)):
            pick = self.rng.random()
            if pick < 0.3:
                blocks.append({"text": self.marker("a")})
            elif pick < 0.4:
                reasoning = {"reasoningText": {"text": self.marker("th"), "signature": "sig"}}
                blocks.append({"reasoningContent": reasoning})
            elif pick < 0.45:
                blocks.append({"cachePoint": {"type": "default"}})
            else:
                call_id = self.call_id()
                call_ids.append(call_id)
                blocks.append({"toolUse": {"toolUseId": call_id, "name": self.marker("tool"), "input": {}}})
        return [{"role": "assistant", "content": blocks}]

    def block(self, call_id: str) -> dict[str, object]:
        pick = self.rng.random()
        content: list[object]
        if pick < 0.15:
            content = [{"text": INTERRUPTED_RESULT_TEXT}]
        elif pick < 0.3:
            content = [{"json": {"value": self.marker("r")}}]
        elif pick < 0.4:
            content = [{"text": self.marker("r")}, {"text": self.marker("r")}]
        else:
            content = [{"text": self.marker("r")}]
        result: dict[str, object] = {"toolUseId": call_id, "content": content}
        if self.rng.random() < 0.2:
            result["status"] = "error"
        return {"toolResult": result}

    def result(self, call_id: str) -> object:
        blocks: list[object] = [self.block(call_id)]
        if self.rng.random() < 0.15:
            blocks.append({"text": self.marker("u")})
        return {"role": "user", "content": blocks}

    def results(self, call_ids: list[object]) -> list[object]:
        """The results of a turn in one user message, one block per distinct call id, maybe text or a cache point."""
        blocks: list[object] = [self.block(str(c)) for c in dict.fromkeys(call_ids)]
        if blocks and self.rng.random() < 0.15:
            blocks.append({"text": self.marker("u")})
        elif blocks and self.rng.random() < 0.15:
            blocks.append({"cachePoint": {"type": "default"}})
        return [{"role": "user", "content": blocks}] if blocks else []

    def bad_shapes(self, bad: object) -> list[Callable[[], object]]:
        return [
            *super().bad_shapes(bad),
            lambda: {"role": "assistant", "content": [{"toolUse": {"toolUseId": bad, "name": "f", "input": {}}}]},
            lambda: {"role": "assistant", "content": [{"toolUse": bad}]},
            lambda: {"role": "user", "content": [{"toolResult": {"toolUseId": bad, "content": [{"text": "x"}]}}]},
            lambda: {"role": "user", "content": [{"toolResult": {"toolUseId": self.call_id(), "content": bad}}]},
            lambda: {"role": "user", "content": [{"toolResult": bad}]},
            lambda: {"role": "assistant", "content": [bad]},
            lambda: {"role": "user", "content": [{"text": bad}]},
            lambda: self.nested(self.result(self.call_id())),
        ]

    def _is_result_block(self, block: dict[str, Any]) -> bool:
        return "toolResult" in block

    def _answered_id(self, block: dict[str, Any]) -> str:
        return str(block["toolResult"]["toolUseId"])

    def chunked(self, item: object) -> list[object] | None:
        blocks = _dict(item)["content"]
        if not isinstance(blocks, list) or len(blocks) < 2:
            return None
        cut = self.rng.randrange(1, len(blocks))
        return [{"role": "assistant", "content": blocks[:cut]}, {"role": "assistant", "content": blocks[cut:]}]

    def nested(self, item: object) -> object | None:
        at = self._results_in(item)
        if not at:
            return None
        blocks = list(_dict(item)["content"])
        outer = blocks[at[0]]["toolResult"]
        inner = self.block(self.call_id())
        own = outer.get("content") if isinstance(outer, dict) else None
        held = own if isinstance(own, list) else []
        content = [inner, *held] if self.rng.random() < 0.5 else [*held, inner]
        blocks[at[0]] = {"toolResult": {**outer, "content": content}}
        return {**_dict(item), "content": blocks}


_MAKERS: Final[Mapping[Lane, Callable[[random.Random], _Maker]]] = MappingProxyType(
    {
        "anthropic.messages": _Anthropic,
        "openai.chat_completions": _Chat,
        "openai.responses": _Responses,
        "gemini.generate_content": _Gemini,
        "bedrock.converse": _Bedrock,
    }
)

_SNAKE: Final = {"functionCall": "function_call", "functionResponse": "function_response"}
_SNAKE_SIGNATURE: Final = {"thoughtSignature": "thought_signature"}


def _snake(content: object) -> object:
    """A made content in the SDK's snake_case dict spelling (part keys only; payloads stay as made)."""
    if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
        return content
    keys = _SNAKE | _SNAKE_SIGNATURE
    parts = [{keys.get(k, k): v for k, v in p.items()} if isinstance(p, dict) else p for p in content["parts"]]
    return {**content, "parts": parts}


def _sdk(content: object) -> object:
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


def _put(make: _Maker, items: list[object], fault: Fault) -> bool:
    """Puts ``fault`` into ``items`` in place; ``False`` when it has nothing to act on."""
    rng = make.rng
    results = [i for i, item in enumerate(items) if make.is_result(item)]
    answers = [i for i, item in enumerate(items) if make.is_answer(item)]
    match fault:
        case "dropped_item":
            if not items:
                return False
            del items[rng.randrange(len(items))]
        case "dropped_result":
            if not results:
                return False
            at = rng.choice(results)
            kept = make.without_one(items[at])
            items[at : at + 1] = [] if kept is None else [kept]
        case "late_result":
            late = [i for i in results if i < len(items) - 1]
            if not late:
                return False
            at = rng.choice(late)
            item = items.pop(at)
            items.insert(rng.randint(at + 1, len(items)), item)
        case "split_results":
            pieces = [(i, make.split(items[i])) for i in results]
            split = [(i, p) for i, p in pieces if p is not None]
            if split:
                at, parts = rng.choice(split)
                items[at : at + 1] = parts
                return True
            batches = [i for i in results if i + 1 in results]
            if not batches:
                return False
            items.insert(rng.choice(batches) + 1, make.user())
        case "duplicated_result":
            if not results:
                return False
            at = rng.choice(results)
            items.insert(rng.randint(at + 1, len(items)), make.again(items[at]))
        case "same_object":
            if not items:
                return False
            items.insert(rng.randint(0, len(items)), items[rng.randrange(len(items))])
        case "orphan_result":
            at = rng.randint(0, len(items))
            items[at:at] = make.orphan()
        case "user_between":
            items.insert(rng.randint(0, len(items)), make.user())
        case "unanswered_call":
            calls: list[object] = []
            items += make.answer(calls)
            return bool(calls)
        case "chunked_answer" | "dropped_signature" | "nested_result" | "open_server_use":
            hook = {
                "chunked_answer": make.chunked,
                "dropped_signature": make.unsigned,
                "nested_result": make.nested,
                "open_server_use": make.unserved,
            }
            where = results if fault == "nested_result" else answers
            done = [(i, hook[fault](items[i])) for i in where]
            done = [(i, d) for i, d in done if d is not None]
            if not done:
                return False
            at, replaced = rng.choice(done)
            items[at : at + 1] = replaced if isinstance(replaced, list) else [replaced]
        case "reused_item_id":
            calls_at = [i for i in answers if isinstance(items[i], dict)]
            pairs = [
                (a, b)
                for a, b in itertools.combinations(calls_at, 2)
                if _dict(items[a])["call_id"] != _dict(items[b])["call_id"]
            ]
            if not pairs:
                return False
            first, later = rng.choice(pairs)
            item_id = _dict(items[first]).setdefault("id", f"fc_{_dict(items[first])['call_id']}")
            items[later] = {**_dict(items[later]), "id": item_id}
        case _:
            assert_never(fault)
    return True


DIALECT_MAKERS: Final[Mapping[Dialect, Callable[[random.Random], _Maker]]] = MappingProxyType(
    {"mistral": _MistralChat, "ollama": _OllamaChat, "deepseek": _DeepSeekChat, "cohere": _Chat}
)
"""Each dialect's maker (a maker of its lane): Mistral's id pool, Ollama's id-less calls, DeepSeek's reasoning;
Cohere's messages are Chat's."""


def transcript(lane: Lane, flavour: Flavour, rng: random.Random, dialect: Dialect | None = None) -> Transcript:
    """One generated transcript of ``flavour`` in ``lane`` (in ``dialect``, if given), drawn from ``rng``."""
    make = _MAKERS[lane](rng) if dialect is None else DIALECT_MAKERS[dialect](rng)
    items: list[object] = []
    if flavour == "near":
        for _ in range(rng.randint(1, 6)):
            items.append(make.user())
            calls: list[object] = []
            items += make.answer(calls)
            items += make.results(calls)
        drawn = [rng.choice(FAULTS_OF[lane]) for _ in range(rng.randint(1, 3))]
        faults = tuple(fault for fault in drawn if _put(make, items, fault))
        return dataclasses.replace(make.spell(items), faults=faults)
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
