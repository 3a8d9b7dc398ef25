"""The earlier move-up rule, kept here as a benchmark's point of comparison (never in the package).

Before the law became append-stable, it restored a tool turn by moving results up: every result
recorded later than its call's batch (the user message right after the assistant message that made
the call) was moved into that batch, in place of the interrupted close it held, and a second result
for a call was folded into the first (``SECOND_RESULT_SEPARATOR`` between them). A call with no
result anywhere was closed with ``INTERRUPTED_RESULT_TEXT``; a result whose call stands nowhere
earlier was left out. The batch lists one result per call, in call order, ahead of the message's
other blocks (a "continue" typed after an interruption stays after the results).

This rewrites messages the model has already answered from once a result arrives late, which is
what Anthropic's prefix check of signed thinking and every prefix cache notice. ``move_up`` reads
the Anthropic Messages shape as plain dicts (``messages`` of ``{"role", "content"}``, blocks
``tool_use`` / ``tool_result``) and returns a new list; it never mutates its input. Every
message but a batch is the very object given.

Example::

    request = move_up(transcript)  # then send ``request`` instead of ``transcript``
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from otel_toolturn import INTERRUPTED_RESULT_TEXT, SECOND_RESULT_SEPARATOR

Message = dict[str, Any]


def move_up(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every late or second result moved into its call's batch (module docstring)."""
    owner: dict[str, int] = {}
    for n, message in enumerate(messages):
        for block in _blocks(message, "assistant"):
            if block.get("type") == "tool_use":
                owner[str(block.get("id"))] = n
    found: dict[str, list[Mapping[str, Any]]] = {}
    for n, message in enumerate(messages):
        for block in _blocks(message, "user"):
            call = str(block.get("tool_use_id")) if block.get("type") == "tool_result" else None
            if call is not None and owner.get(call, n) < n:
                found.setdefault(call, []).append(block)
    out: list[Message] = []
    batch_for: int | None = None
    for n, message in enumerate(messages):
        if message.get("role") == "user":
            rest = [b for b in _blocks(message, "user") if b.get("type") != "tool_result"]
            if batch_for is not None:
                out.append(_batch(messages[batch_for], found, rest))
                batch_for = None
            elif len(rest) != len(_blocks(message, "user")):
                if rest:
                    out.append({**message, "content": rest})
            else:
                out.append(message)
            continue
        if batch_for is not None:
            out.append(_batch(messages[batch_for], found, []))
            batch_for = None
        out.append(message)
        if any(b.get("type") == "tool_use" for b in _blocks(message, "assistant")):
            batch_for = n
    if batch_for is not None:
        out.append(_batch(messages[batch_for], found, []))
    return out


def _batch(assistant: Message, found: Mapping[str, list[Mapping[str, Any]]], rest: list[Any]) -> Message:
    """The user message after ``assistant``: one result per call, in call order, then ``rest``."""
    results: list[Any] = []
    for block in _blocks(assistant, "assistant"):
        if block.get("type") != "tool_use":
            continue
        call = str(block.get("id"))
        recorded = found.get(call, [])
        if not recorded:
            results.append({"type": "tool_result", "tool_use_id": call, "content": INTERRUPTED_RESULT_TEXT})
        elif len(recorded) == 1:
            results.append(recorded[0])
        else:
            folded = SECOND_RESULT_SEPARATOR.join(_text(r.get("content")) for r in recorded)
            results.append({**recorded[0], "content": folded})
    return {"role": "user", "content": [*results, *rest]}


def _blocks(message: Mapping[str, Any], role: str) -> list[Mapping[str, Any]]:
    """The content blocks of ``message`` when it has ``role`` (a string content is one text block)."""
    if message.get("role") != role:
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _text(content: object) -> str:
    """A result's content as text (a list of text blocks joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))
    return ""
