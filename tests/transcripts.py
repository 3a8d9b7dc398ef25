"""A tiny neutral notation for transcripts, built into each lane's wire shape.

The notation follows law-examples: ``U("q")`` user text, ``A(t("x"), c("c1", "f"), th("y"))`` an
assistant message, ``R("c1", "out")`` a recorded result, ``Rx("c1")`` a recorded interrupted close,
``S("c1")`` the synthetic interrupted result the law adds, ``L("c1", "out")`` a result the law
delivered where it stands because the model had answered in between. ``build(lane, events)`` gives the wire
list; a result becomes its own message (Anthropic, Chat) or item (Responses).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

from otel_toolturn import INTERRUPTED_RESULT_TEXT, Lane
from otel_toolturn._view import in_place_heading

CLAUDE_CODE_CLOSE: Final = "[Tool result missing due to internal error]"


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Thinking:
    text: str
    item_id: str | None = None
    """Responses: the reasoning item's own ``id`` (default: one unique to its place)."""


@dataclass(frozen=True)
class CallBlock:
    call_id: str
    name: str = "f"
    arguments: str = "{}"


Block = Text | Thinking | CallBlock


@dataclass(frozen=True)
class U:
    text: str


@dataclass(frozen=True)
class A:
    blocks: tuple[Block, ...]

    def __init__(self, *blocks: Block) -> None:
        object.__setattr__(self, "blocks", blocks)


@dataclass(frozen=True)
class R:
    call_id: str
    output: str = "ok"
    is_error: bool = False


@dataclass(frozen=True)
class Rx:
    """A recorded interrupted close (the text another framework wrote)."""

    call_id: str
    text: str = CLAUDE_CODE_CLOSE


@dataclass(frozen=True)
class S:
    """The synthetic interrupted result the law adds."""

    call_id: str


@dataclass(frozen=True)
class L:
    """A result the law delivered where it stands, as text naming its call (``second``: the call had one)."""

    call_id: str
    output: str = "ok"
    name: str = "f"
    second: bool = False
    is_error: bool = False

    @property
    def text(self) -> str:
        return f"{in_place_heading(self.call_id, self.name, second=self.second, error=self.is_error)}\n{self.output}"


Event = U | A | R | Rx | S | L


def t(text: str) -> Text:
    return Text(text)


def th(text: str, item_id: str | None = None) -> Thinking:
    return Thinking(text, item_id)


def c(call_id: str, name: str = "f", arguments: str = "{}") -> CallBlock:
    return CallBlock(call_id, name, arguments)


def build(lane: Lane, events: list[Event] | tuple[Event, ...], *, merge_user: bool = False) -> list[object]:
    """The wire list of ``events`` in ``lane``.

    ``merge_user`` (Anthropic): consecutive user-side events share one user message, as clients
    write them (results and the user's text in one message).
    """
    if lane == "anthropic.messages":
        messages = [_anthropic(e) for e in events]
        return _merge_user(messages) if merge_user else list[object](messages)
    if lane == "openai.chat_completions":
        return [_chat(e) for e in events]
    items: list[object] = []
    for number, event in enumerate(events):
        items.extend(_responses(event, number))
    return items


def _merge_user(messages: list[dict[str, object]]) -> list[object]:
    out: list[dict[str, object]] = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)  # type: ignore[call-overload]
        if out and message["role"] == "user" and out[-1]["role"] == "user":
            out[-1]["content"].extend(blocks)  # type: ignore[attr-defined]
        else:
            out.append({"role": message["role"], "content": blocks if message["role"] == "user" else content})
    return list(out)


def _anthropic(event: Event) -> dict[str, object]:
    if isinstance(event, U):
        return {"role": "user", "content": event.text}
    if isinstance(event, L):
        return {"role": "user", "content": [{"type": "text", "text": event.text}]}
    if isinstance(event, A):
        blocks: list[object] = []
        for block in event.blocks:
            if isinstance(block, Text):
                blocks.append({"type": "text", "text": block.text})
            elif isinstance(block, Thinking):
                blocks.append({"type": "thinking", "thinking": block.text, "signature": "sig-" + block.text})
            else:
                blocks.append(
                    {"type": "tool_use", "id": block.call_id, "name": block.name, "input": json.loads(block.arguments)}
                )
        return {"role": "assistant", "content": blocks}
    result: dict[str, object]
    if isinstance(event, R):
        result = {"type": "tool_result", "tool_use_id": event.call_id, "content": event.output}
        if event.is_error:
            result["is_error"] = True
    elif isinstance(event, Rx):
        result = {"type": "tool_result", "tool_use_id": event.call_id, "content": event.text}
    else:
        result = {
            "type": "tool_result",
            "tool_use_id": event.call_id,
            "content": INTERRUPTED_RESULT_TEXT,
            "is_error": True,
        }
    return {"role": "user", "content": [result]}


def _chat(event: Event) -> dict[str, object]:
    if isinstance(event, U | L):
        return {"role": "user", "content": event.text}
    if isinstance(event, A):
        text = "".join(b.text for b in event.blocks if isinstance(b, Text))
        calls = [
            {"id": b.call_id, "type": "function", "function": {"name": b.name, "arguments": b.arguments}}
            for b in event.blocks
            if isinstance(b, CallBlock)
        ]
        message: dict[str, object] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = calls
        return message
    if isinstance(event, R):
        return {"role": "tool", "tool_call_id": event.call_id, "content": event.output}
    if isinstance(event, Rx):
        return {"role": "tool", "tool_call_id": event.call_id, "content": event.text}
    return {"role": "tool", "tool_call_id": event.call_id, "content": INTERRUPTED_RESULT_TEXT}


def _responses(event: Event, number: int) -> list[object]:
    if isinstance(event, U):
        return [{"role": "user", "content": event.text}]
    if isinstance(event, L):
        return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": event.text}]}]
    if isinstance(event, A):
        items: list[object] = []
        for part, block in enumerate(event.blocks):
            if isinstance(block, Text):
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": block.text, "annotations": []}],
                    }
                )
            elif isinstance(block, Thinking):
                items.append(
                    {
                        "type": "reasoning",
                        "id": block.item_id or f"rs_{number}_{part}",
                        "summary": [{"type": "summary_text", "text": block.text}],
                    }
                )
            else:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": block.call_id,
                        "name": block.name,
                        "arguments": block.arguments,
                    }
                )
        return items
    if isinstance(event, R):
        return [{"type": "function_call_output", "call_id": event.call_id, "output": event.output}]
    if isinstance(event, Rx):
        return [{"type": "function_call_output", "call_id": event.call_id, "output": event.text}]
    return [{"type": "function_call_output", "call_id": event.call_id, "output": INTERRUPTED_RESULT_TEXT}]


def as_api_reads(lane: Lane, messages: object) -> list[object]:
    """The list as the provider reads it: Anthropic combines consecutive user messages' blocks."""
    assert isinstance(messages, list)
    if lane != "anthropic.messages":
        return messages
    out: list[object] = []
    for message in messages:
        assert isinstance(message, dict)
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        if out and message["role"] == "user" and out[-1]["role"] == "user":  # type: ignore[index]
            out[-1]["content"].extend(blocks)  # type: ignore[index]
        else:
            out.append({"role": message["role"], "content": blocks})
    return out
