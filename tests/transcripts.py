"""A tiny neutral notation for transcripts, built into each lane's wire shape.

The notation follows law-examples: ``U("q")`` user text, ``A(t("x"), c("c1", "f"), th("y"))`` an
assistant message (Anthropic also: ``su("s1")`` a server tool use and ``sr("s1")`` its result block,
``mu("m1")`` / ``mr("m1")`` an MCP tool's), ``R("c1", "out")`` a recorded result, ``Rx("c1")`` a
recorded interrupted close, ``S("c1")`` the synthetic interrupted result the law adds,
``L("c1", "out")`` a result the law delivered where it stands because the model had answered in
between. ``build(lane, events)`` gives the wire list; a result becomes its own message (Anthropic,
Chat) or item (Responses); Gemini: consecutive results share one user content, and
``gemini(events, spelling=..., ids=...)`` gives the snake_case dicts or the SDK's typed objects (or a
mix of the three, one spelling per content), and calls and responses without
ids (matched by name); ``ollama(events, ids=...)`` gives Ollama's native messages, each call named by its
id from the pool (its own name kept in its arguments), so calls and results match by name and order.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from otel_toolturn import INTERRUPTED_RESULT_TEXT, CallKind, Lane
from otel_toolturn._view import in_place_heading
from otel_toolturn.lanes._anthropic_server import RESULT_OF

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
    signed: bool = True
    """Gemini: whether the call carries a thought signature when it is the first call of its message."""
    item_id: str | None = None
    """Responses: the call item's own ``id`` (default: none)."""
    kind: CallKind = "function"
    """The kind of call (a lane builds the kinds it has; ``R`` answers with the output of its call's kind)."""


@dataclass(frozen=True)
class ServerResult(Text):
    """Anthropic: a server tool's result block in the assistant message (``mcp``: an MCP tool's), answering ``call_id``.

    ``text`` is its payload. A server or MCP tool use is a ``CallBlock`` of kind ``server_tool`` or ``mcp``; the
    other lanes have neither and read this block as text.
    """

    call_id: str = ""
    mcp: bool = False
    name: str = "web_search"
    """The server tool it answers (its block type follows from it)."""


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


def c(
    call_id: str,
    name: str = "f",
    arguments: str = "{}",
    *,
    signed: bool = True,
    item_id: str | None = None,
    kind: CallKind = "function",
) -> CallBlock:
    return CallBlock(call_id, name, arguments, signed, item_id, kind)


def su(use_id: str, name: str = "web_search", arguments: str = '{"query": "q"}') -> CallBlock:
    """Anthropic: a server tool use."""
    return CallBlock(use_id, name, arguments, kind="server_tool")


def sr(use_id: str, output: str = "<found>", name: str = "web_search") -> ServerResult:
    """Anthropic: a server tool's result block, in the assistant message."""
    return ServerResult(output, use_id, False, name)


def mu(use_id: str, name: str = "lookup", arguments: str = "{}") -> CallBlock:
    """Anthropic: an MCP tool use."""
    return CallBlock(use_id, name, arguments, kind="mcp")


def mr(use_id: str, output: str = "<found>") -> ServerResult:
    """Anthropic: an MCP tool's result block, in the assistant message."""
    return ServerResult(output, use_id, True, "lookup")


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
    if lane == "gemini.generate_content":
        return gemini(events, merge_user=merge_user)
    if lane == "bedrock.converse":
        return bedrock(events)
    items: list[object] = []
    kinds: dict[str, CallKind] = {}  # each call id's kind, as its nearest earlier call has it
    for number, event in enumerate(events):
        items.extend(_responses(event, number, kinds))
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
            if isinstance(block, ServerResult):
                blocks.append(_anthropic_server_result(block))
            elif isinstance(block, Text):
                blocks.append({"type": "text", "text": block.text})
            elif isinstance(block, Thinking):
                blocks.append({"type": "thinking", "thinking": block.text, "signature": "sig-" + block.text})
            else:
                use = _USE_TYPES.get(block.kind, "tool_use")
                call = {"type": use, "id": block.call_id, "name": block.name, "input": json.loads(block.arguments)}
                if use == "mcp_tool_use":
                    call["server_name"] = "docs"
                blocks.append(call)
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


_USE_TYPES: Final[dict[str, str]] = {"server_tool": "server_tool_use", "mcp": "mcp_tool_use"}


def _anthropic_server_result(block: ServerResult) -> dict[str, object]:
    """The result block of a server tool (web search results, or an execution result) or of an MCP tool."""
    if block.mcp:
        return {"type": "mcp_tool_result", "tool_use_id": block.call_id, "is_error": False, "content": block.text}
    kind = RESULT_OF.get(block.name, f"{block.name}_tool_result")
    content: object
    if block.name == "web_search":
        content = [
            {"type": "web_search_result", "title": block.text, "url": "https://example.com/", "encrypted_content": "e"}
        ]
    else:
        content = {
            "type": kind.removesuffix("_tool_result") + "_result",
            "stdout": block.text,
            "stderr": "",
            "return_code": 0,
            "content": [],
        }
    return {"type": kind, "tool_use_id": block.call_id, "content": content}


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


def _responses(event: Event, number: int, kinds: dict[str, CallKind]) -> list[object]:
    """The Responses items of ``event``; ``kinds`` (each call id's kind so far) gains the calls of an answer."""
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
                kinds[block.call_id] = block.kind
                items.append(responses_call(block))
        return items
    kind = kinds.get(event.call_id, "function")
    if isinstance(event, R):
        return [responses_output(kind, event.call_id, event.output, error=event.is_error)]
    if isinstance(event, Rx):
        return [responses_output(kind, event.call_id, event.text, error=True, interrupted=True)]
    if kind == "computer":
        raise ValueError("the law adds no close for a computer call: it is left out (unanswerable_call)")
    return [responses_output(kind, event.call_id, INTERRUPTED_RESULT_TEXT, error=True, interrupted=True)]


def responses_call(block: CallBlock) -> dict[str, object]:
    """The call item of ``block``'s kind; its name stands in the item (as a command, a path or typed text)."""
    call: dict[str, object] = {"call_id": block.call_id}
    if block.kind == "custom":
        call |= {"type": "custom_tool_call", "name": block.name, "input": block.arguments}
    elif block.kind == "local_shell":
        action = {"type": "exec", "command": [block.name], "env": {}}
        call |= {"type": "local_shell_call", "action": action, "status": "completed"}
    elif block.kind == "shell":
        call |= {"type": "shell_call", "action": {"commands": [block.name]}, "status": "completed"}
    elif block.kind == "apply_patch":
        operation = {"type": "update_file", "path": block.name, "diff": block.arguments}
        call |= {"type": "apply_patch_call", "operation": operation, "status": "completed"}
    elif block.kind == "computer":
        action = {"type": "type", "text": block.name}
        call |= {"type": "computer_call", "action": action, "pending_safety_checks": [], "status": "completed"}
    else:
        call |= {"type": "function_call", "name": block.name, "arguments": block.arguments}
    if block.item_id is not None:
        call["id"] = block.item_id
    return call


def responses_output(
    kind: CallKind, call_id: str, output: str, *, error: bool = False, interrupted: bool = False
) -> dict[str, object]:
    """The output item answering a call of ``kind`` with ``output`` (an interrupted close: as the law writes one).

    A shell output is one chunk (``output`` as stdout; an interrupted close: as stderr, exit code 130); an
    apply-patch output ``failed`` on an ``error``; a computer output a screenshot whose URL holds ``output``.
    """
    if kind == "shell":
        outcome = {"type": "exit", "exit_code": 130 if interrupted else 1 if error else 0}
        chunk = {"stdout": "", "stderr": output} if interrupted else {"stdout": output, "stderr": ""}
        return {"type": "shell_call_output", "call_id": call_id, "output": [chunk | {"outcome": outcome}]}
    if kind == "apply_patch":
        status = "failed" if error else "completed"
        return {"type": "apply_patch_call_output", "call_id": call_id, "status": status, "output": output}
    if kind == "computer":
        screenshot = {"type": "computer_screenshot", "image_url": f"https://shots.example/{output}.png"}
        return {"type": "computer_call_output", "call_id": call_id, "output": screenshot}
    output_type = {"custom": "custom_tool_call_output", "local_shell": "local_shell_call_output"}.get(
        kind, "function_call_output"
    )
    return {"type": output_type, "call_id": call_id, "output": output}


OPENING_TEXT: Final = "(the conversation so far)"
"""The user's text a Bedrock conversation opens with when its events open with the model's."""


def bedrock(events: list[Event] | tuple[Event, ...]) -> list[object]:
    """The Bedrock Converse ``messages`` of ``events``: consecutive events of one role share one message.

    The service refuses two messages of one role in a row, so a client stores them as one: results and
    the user's text in one user message, in the order recorded; an answer streamed in pieces as one
    assistant message. An answer after an assistant message with calls is the model's next answer, its
    own message (the calls were sent with closes in between). A conversation starts with a user message,
    so events that open with the model's get the user's ``OPENING_TEXT`` ahead of them.
    """
    messages: list[dict[str, object]] = []
    for event in events:
        role, blocks = _bedrock(event)
        if not messages and role == "assistant":
            messages.append({"role": "user", "content": [{"text": OPENING_TEXT}]})
        last = messages[-1] if messages else None
        calls = last is not None and any("toolUse" in block for block in last["content"])  # type: ignore[attr-defined]
        if last is not None and last["role"] == role and not (role == "assistant" and calls):
            messages[-1]["content"] = [*messages[-1]["content"], *blocks]  # type: ignore[misc]
        else:
            messages.append({"role": role, "content": blocks})
    return list[object](messages)


def _bedrock(event: Event) -> tuple[str, list[object]]:
    """One event as its role and the Converse blocks it adds to a message of that role."""
    if isinstance(event, U | L):
        return "user", [{"text": event.text}]
    if isinstance(event, A):
        blocks: list[object] = []
        for block in event.blocks:
            if isinstance(block, Text):
                blocks.append({"text": block.text})
            elif isinstance(block, Thinking):
                blocks.append(
                    {"reasoningContent": {"reasoningText": {"text": block.text, "signature": "sig-" + block.text}}}
                )
            else:
                use = {"toolUseId": block.call_id, "name": block.name, "input": json.loads(block.arguments)}
                blocks.append({"toolUse": use})
        return "assistant", blocks
    result: dict[str, object]
    if isinstance(event, R):
        result = {"toolUseId": event.call_id, "content": [{"text": event.output}]}
        if event.is_error:
            result["status"] = "error"
    elif isinstance(event, Rx):
        result = {"toolUseId": event.call_id, "content": [{"text": event.text}]}
    else:
        result = {"toolUseId": event.call_id, "content": [{"text": INTERRUPTED_RESULT_TEXT}], "status": "error"}
    return "user", [{"toolResult": result}]


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


Spelling = Literal["rest", "snake", "sdk"]


def signature(call_id: str) -> str:
    """The thought signature ``build`` gives the first call of a Gemini message (base64url, as on the wire)."""
    return base64.urlsafe_b64encode(f"sig-{call_id}".encode()).decode()


def gemini(
    events: list[Event] | tuple[Event, ...],
    *,
    spelling: Spelling | Sequence[Spelling] = "rest",
    ids: bool = True,
    merge_user: bool = False,
    split: bool = False,
) -> list[object]:
    """The Gemini ``contents`` of ``events``.

    Consecutive results share one user content (``split``: each its own); ``merge_user``: the user's text
    shares it too. A response carries the name of the nearest earlier call with its id. ``ids=False``: no
    call or response carries an id. ``spelling``: REST camelCase dicts, the SDK's snake_case dicts, or
    ``google.genai.types.Content`` objects; a sequence of them: the k-th content in the k-th spelling,
    cycling (a history stored as JSON with the SDK's response objects appended to it).
    """
    names: dict[str, str] = {}
    contents: list[dict[str, object]] = []
    user_side = False  # the last content is a user content that results may join
    for event in events:
        if isinstance(event, A):
            parts: list[object] = []
            first = True
            for block in event.blocks:
                if isinstance(block, Text):
                    parts.append({"text": block.text})
                elif isinstance(block, Thinking):
                    parts.append({"text": block.text, "thought": True})
                else:
                    names[block.call_id] = block.name
                    call: dict[str, object] = {"name": block.name, "args": json.loads(block.arguments)}
                    if ids:
                        call["id"] = block.call_id
                    part: dict[str, object] = {"functionCall": call}
                    if first and block.signed:
                        part["thoughtSignature"] = signature(block.call_id)
                    first = False
                    parts.append(part)
            contents.append({"role": "model", "parts": parts})
            user_side = False
            continue
        if isinstance(event, U | L):
            text_part: dict[str, object] = {"text": event.text}
            if merge_user and user_side:
                contents[-1]["parts"].append(text_part)  # type: ignore[attr-defined]
            else:
                contents.append({"role": "user", "parts": [text_part]})
            user_side = merge_user
            continue
        if isinstance(event, R):
            payload = {"error" if event.is_error else "output": event.output}
        elif isinstance(event, Rx):
            payload = {"error": event.text}
        else:
            payload = {"error": INTERRUPTED_RESULT_TEXT}
        response: dict[str, object] = {"name": names.get(event.call_id, "f")}
        if ids:
            response["id"] = event.call_id
        response["response"] = payload
        part = {"functionResponse": response}
        if user_side and not split:
            contents[-1]["parts"].append(part)  # type: ignore[attr-defined]
        else:
            contents.append({"role": "user", "parts": [part]})
        user_side = True
    spellings = (spelling,) if isinstance(spelling, str) else tuple(spelling)
    return [_spelled(content, spellings[k % len(spellings)]) for k, content in enumerate(contents)]


def ollama(events: list[Event] | tuple[Event, ...], *, ids: bool = False) -> list[object]:
    """Ollama's ``/api/chat`` messages of ``events``.

    A call's function is named by its call id, its own name kept in its arguments (``tag``); a result is a
    ``tool`` message naming that function. ``ids``: calls carry their ``id`` and results their
    ``tool_call_id`` too (Ollama's SDK writes neither).
    """
    messages: list[object] = []
    for event in events:
        if isinstance(event, U | L):
            messages.append({"role": "user", "content": event.text})
            continue
        if isinstance(event, A):
            text = "".join(b.text for b in event.blocks if isinstance(b, Text))
            calls: list[object] = []
            for block in event.blocks:
                if isinstance(block, CallBlock):
                    arguments = {"tag": block.name, **json.loads(block.arguments)}
                    call: dict[str, object] = {"function": {"name": block.call_id, "arguments": arguments}}
                    calls.append({"id": block.call_id, **call} if ids else call)
            message: dict[str, object] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = calls
            messages.append(message)
            continue
        content = (
            event.output if isinstance(event, R) else event.text if isinstance(event, Rx) else INTERRUPTED_RESULT_TEXT
        )
        result: dict[str, object] = {"role": "tool", "tool_name": event.call_id, "content": content}
        if ids:
            result["tool_call_id"] = event.call_id
        messages.append(result)
    return messages


def _spelled(content: dict[str, object], spelling: Spelling) -> object:
    """A REST content in ``spelling``."""
    if spelling == "rest":
        return content
    if spelling == "snake":
        return _snake(content)
    from google.genai import types  # noqa: PLC0415 - only the SDK spelling needs the SDK

    return types.Content.model_validate(_snake(content))


def _snake(value: object) -> object:
    if isinstance(value, dict):
        return {
            _SNAKE.get(key, key): _snake(inner) if key not in {"args", "response"} else inner
            for key, inner in value.items()
        }
    if isinstance(value, list):
        return [_snake(inner) for inner in value]
    return value


_SNAKE: Final = {
    "functionCall": "function_call",
    "functionResponse": "function_response",
    "thoughtSignature": "thought_signature",
}
