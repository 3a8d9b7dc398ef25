"""The Amazon Bedrock Converse lane: ``messages`` of ``{role, content: [blocks]}`` (``converse`` / ``converse_stream``).

A block is a one-key dict whose key is its kind: ``text``, ``image``, ``document``, ``toolUse``
(``toolUseId``, ``name``, ``input``), ``toolResult`` (``toolUseId``, ``content`` of ``text`` / ``json``
/ ``image`` / ``document`` blocks, ``status`` ``"success"`` or ``"error"``), ``reasoningContent``
(``reasoningText {text, signature}`` or ``redactedContent``), ``cachePoint`` and others.

- Calls are the ``toolUse`` blocks of an assistant message (one with ``type: "server_tool_use"`` is
  answered by the service and is no client call). Results are the ``toolResult`` blocks of the next
  user message, which they lead: one per call, all in that one message. Ids are unique in the request
  and match the service model's ``[a-zA-Z0-9_.:-]+``, 1 to 64 characters; a derived id keeps to
  ``[a-zA-Z0-9_-]`` within 64, which every model behind the service accepts.
- The service does not combine consecutive messages of one role, it refuses them. So ``write`` never
  writes two user messages in a row: between two assistant messages, what the law wrote and the user
  messages standing there become one user message (its results first, then every other block in
  order; a string content as a text block) unless every message there comes back as it was; a message
  of another role standing there follows it. Where every result of a user message was
  moved or left out and an assistant message follows, or the message opened the conversation (which
  must start with a user message), the message keeps its place holding ``RESULTS_LEFT_OUT_TEXT``, so
  two assistant messages never meet and a window trimmed to a result whose call is gone still opens
  with the user.
- A block after the first call that is not a call moves ahead of the calls (``trailing_text``), except
  ``reasoningContent`` (a signed block is never changed, moved or split) and ``cachePoint`` (it marks
  the block before it), which keep their place.
- Written by the law: an interrupted close is an error ``toolResult`` holding one ``text`` block of
  ``INTERRUPTED_RESULT_TEXT``; folded results are one ``toolResult`` of every content block, a text
  block of ``SECOND_RESULT_SEPARATOR`` between two, ``status: "error"`` when any was one; a result
  delivered where it stands is blocks of its user message: a text naming the call, then its content
  (``text``, ``image``, ``document``, ``video`` and ``searchResult`` blocks as they are, ``json`` and any
  other as text of its JSON).
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping, Sequence
from typing import Final

from otel_toolturn._errors import UnsupportedLaneError
from otel_toolturn._view import (
    CLEAN,
    INTERRUPTED_RESULT_TEXT,
    OTHER,
    PART,
    REPLY,
    RESULT,
    SECOND_RESULT_SEPARATOR,
    TURN,
    Call,
    Clean,
    Emitted,
    TakenIds,
    Turn,
    UnitKind,
    ValidationStream,
    View,
    Violation,
    field,
    in_place_heading,
    replace,
)
from otel_toolturn._vocab import CallKind, Lane
from otel_toolturn.lanes import request_parts
from otel_toolturn.lanes._common import (
    call_id_of,
    derive_id,
    interrupted,
    is_list,
    json_text,
    result_id_of,
    role_of,
    text_of,
)
from otel_toolturn.lanes._defaults import AdapterDefaults

RESULTS_LEFT_OUT_TEXT: Final = "[tool results stood here; each was moved to the call it answers or left out]"
"""The text of a user message whose every result was moved or left out, kept so two assistant messages never meet."""

_ID: Final = re.compile(r"[a-zA-Z0-9_.:-]{1,64}")
"""The service model's ``ToolUseId``: pattern ``[a-zA-Z0-9_.:-]+``, 1 to 64 characters."""
_ID_LIMIT: Final = 64
_KEPT_IN_PLACE: Final = frozenset({"reasoningContent", "cachePoint"})
"""Blocks after the first call that keep their place when the turn is written anew."""
_USER_BLOCKS: Final = frozenset({"text", "image", "document", "video", "searchResult"})
"""The blocks of a ``toolResult`` content a user message holds too, where a delivered result stands."""


def _kind(block: object) -> str | None:
    """A block's kind: its one key (a typed object: the first kind attribute it sets)."""
    if isinstance(block, Mapping):
        for key in block:
            return str(key)
        return None
    for key in ("toolUse", "toolResult", "text", "reasoningContent", "cachePoint"):
        if getattr(block, key, None) is not None:
            return key
    return None


def _call(block: object) -> object | None:
    """The ``toolUse`` of a block that is a client call; ``None`` for any other block."""
    use = block.get("toolUse") if type(block) is dict else field(block, "toolUse")
    if use is None or field(use, "type") == "server_tool_use":
        return None
    return use


def _result(block: object) -> object | None:
    """The ``toolResult`` of a block; ``None`` for any other block."""
    return block.get("toolResult") if type(block) is dict else field(block, "toolResult")


def _content(message: object) -> object:
    return message.get("content") if type(message) is dict else field(message, "content")


def _role(message: object) -> object:
    return message.get("role") if type(message) is dict else role_of(message)


def fits_id(call_id: str) -> bool:
    """Whether ``call_id`` is a ``toolUseId`` the service accepts (``[a-zA-Z0-9_.:-]+``, 1 to 64 characters)."""
    return _ID.fullmatch(call_id) is not None


def emitted_call_ids(message: object) -> tuple[str, ...]:
    """The ids of the client ``toolUse`` blocks of a message, in order (those without a string id left out)."""
    content = _content(message)
    ids: list[str] = []
    for block in content if is_list(content) else ():
        call_id = field(_call(block), "toolUseId")
        if isinstance(call_id, str):
            ids.append(call_id)
    return tuple(ids)


class BedrockConverse(AdapterDefaults):
    """Reads and writes the Bedrock Converse wire list for the law."""

    lane: Lane = "bedrock.converse"
    unique_ids = True
    results_anywhere = False

    def read(
        self, messages: Sequence[object], full: Container[int] = (), state: dict[str, object] | None = None
    ) -> View:
        """Assistant messages with client ``toolUse`` blocks as turns, other assistant messages as replies.

        Each ``toolResult`` of a user message is a result and its other block runs are parts; a message whose
        last block is a result ends with an empty part, so a later message's results are never in place beside
        them, and ``write`` sees where the message stood if all of them go. A turn whose calls end the message
        (``reasoningContent`` and ``cachePoint`` aside), with distinct ids, followed by a user
        message that opens with exactly one ``toolResult`` per call and holds no other, is ``Clean``.
        """
        del state  # nothing of what came before a cut changes how this lane reads
        view = View()
        units, kinds = view.units, view.kinds
        position, stop = 0, len(messages)
        while position < stop:
            message = messages[position]
            if type(message) is dict:
                role, content = message.get("role"), message.get("content")
            else:
                role, content = _role(message), _content(message)
            if type(content) is list or is_list(content):
                if role == "assistant":
                    ids: list[str] = []
                    uses: list[object] = []
                    trailing = False
                    for block in content:
                        use = block.get("toolUse") if type(block) is dict else _call(block)
                        if type(use) is dict:
                            if use.get("type") == "server_tool_use":
                                use = None
                        elif use is not None and field(use, "type") == "server_tool_use":
                            use = None
                        if use is not None:
                            call_id = use.get("toolUseId") if type(use) is dict else None
                            if type(call_id) is not str or not call_id:
                                call_id = call_id_of(use, "toolUseId", position, "toolUse block")
                            ids.append(call_id)
                            uses.append(block)
                        elif ids and _kind(block) not in _KEPT_IN_PLACE:
                            trailing = True
                    if ids:
                        end = 0 if trailing or position in full else _answered(messages, position + 1, ids)
                        if end:
                            units.append(Clean(position, ids, end))
                            view.clean_ids.extend(ids)
                            kinds.append(CLEAN)
                            position = end
                            continue
                        calls = [Call(call_id, block) for call_id, block in zip(ids, uses, strict=True)]
                        units.append(Turn(position, calls, (message,), trailing))
                        kinds.append(TURN)
                        position += 1
                        continue
                elif role == "user" and _read_results(message, content, view):
                    position += 1
                    continue
            units.append(message)
            kinds.append(REPLY if role == "assistant" else OTHER)
            position += 1
        return view

    def interrupted(self, result: object) -> bool:
        """Whether the result's content is an interrupted close."""
        return interrupted(field(_result(result), "content"))

    def write_turn(
        self, items: tuple[object, ...], position: int, calls: Sequence[tuple[object, object]], *, trailing: bool
    ) -> list[object]:
        """The message with the blocks that trailed its first call moved ahead of it, and the kept calls.

        ``reasoningContent`` and ``cachePoint`` blocks keep their place among the calls.
        """
        message = items[0]
        content = _content(message)
        blocks = list(content) if is_list(content) else []
        first = next((i for i, block in enumerate(blocks) if _call(block) is not None), len(blocks))
        moved = [b for b in blocks[first:] if _call(b) is None and _kind(b) not in _KEPT_IN_PLACE] if trailing else []
        kept: list[object] = []
        pending = list(calls)
        for block in blocks[first:]:
            if _call(block) is None:
                if not (trailing and _kind(block) not in _KEPT_IN_PLACE):
                    kept.append(block)
            elif pending and pending[0][0] is block:
                kept.append(pending.pop(0)[1])
        written = [*blocks[:first], *moved, *kept]
        if len(written) == len(blocks) and all(a is b for a, b in zip(written, blocks, strict=True)):
            return [message]
        if type(message) is dict:
            return [{**message, "content": written}]
        return [replace(message, position, content=written)]

    def rename_call(self, call: Call, new_id: str) -> Call:
        """The ``toolUse`` block under ``new_id``."""
        use = _call(call.ref)
        return Call(call_id=new_id, ref=replace(call.ref, toolUse=replace(use, toolUseId=new_id)))

    def rename_result(self, result: object, new_id: str) -> object:
        """The ``toolResult`` block answering ``new_id``."""
        return replace(result, toolResult=replace(_result(result), toolUseId=new_id))

    def fits_ids(self, call_ids: Sequence[str]) -> bool:
        """Whether every id matches ``[a-zA-Z0-9_.:-]+`` in 1 to 64 characters."""
        return all(map(fits_id, call_ids))

    def derive_id(self, call_id: str, taken: TakenIds) -> str:
        """``<id>_<n>``, of ``[a-zA-Z0-9_-]``, cut to at most 64 characters."""
        return derive_id(call_id, taken, pattern_safe=True, limit=_ID_LIMIT)

    def call_kind(self, call: object) -> CallKind:
        """A client ``toolUse`` block is a function call."""
        del call  # one kind of call
        return "function"

    def synthesize(self, call: Call) -> object:
        """An error ``toolResult`` saying the call was interrupted and its outcome is unknown."""
        return {
            "toolResult": {
                "toolUseId": call.call_id,
                "content": [{"text": INTERRUPTED_RESULT_TEXT}],
                "status": "error",
            }
        }

    def fold(self, results: Sequence[object]) -> object:
        """One ``toolResult`` holding every result's content, ``status: "error"`` if any was one.

        Contents of one text block each: one text block, joined by the separator on a line of its own; otherwise
        every content block, a separator text block between two results.
        """
        contents = [field(_result(r), "content") for r in results]
        texts = [text_of(content) for content in contents]
        blocks: list[object] = []
        if all(isinstance(text, str) for text in texts):
            blocks.append({"text": f"\n{SECOND_RESULT_SEPARATOR}\n".join(str(text) for text in texts)})
        for number, content in enumerate(contents if not blocks else ()):
            if number:
                blocks.append({"text": SECOND_RESULT_SEPARATOR})
            if is_list(content):
                blocks.extend(content)
            elif isinstance(content, str) and content:
                blocks.append({"text": content})
            elif content is not None:
                blocks.append({"text": json_text(content)})
        inner = _result(results[0])
        if any(field(_result(r), "status") == "error" for r in results):
            return replace(results[0], toolResult=replace(inner, content=blocks, status="error"))
        return replace(results[0], toolResult=replace(inner, content=blocks))

    def call_name(self, call: object) -> str:
        """The ``toolUse``'s ``name``."""
        return _name(call)

    def deliver(self, result: object, call_id: str, name: str, *, second: bool) -> tuple[UnitKind, object]:
        """The result as blocks of the user message it stood in: a text naming the call, then its content.

        A leading text shares the heading's block; an ``image``, ``document``, ``video``, ``searchResult``
        or non-empty ``text`` block is kept as it is; any other (``json``, a nested call or result) becomes
        a text block of its JSON.
        """
        inner = _result(result)
        heading = in_place_heading(call_id, name, second=second, error=field(inner, "status") == "error")
        content = field(inner, "content")
        parts = list(content) if is_list(content) else ([] if content is None else [content])
        first = field(parts[0], "text") if parts and _kind(parts[0]) == "text" else None
        if isinstance(first, str) and first:
            blocks: list[object] = [{"text": f"{heading}\n{first}"}]
            parts = parts[1:]
        elif isinstance(content, str) and content:
            blocks, parts = [{"text": f"{heading}\n{content}"}], []
        else:
            blocks = [{"text": heading}]
        for part in parts:
            kind = _kind(part)
            text = field(part, "text")
            if kind in _USER_BLOCKS and (kind != "text" or (isinstance(text, str) and text)):
                blocks.append(part)
            else:
                blocks.append({"text": json_text(part)})
        return PART, tuple(blocks)

    def write(self, out: Emitted) -> list[object]:
        """Assistant messages as they are; what stands between two of them as one user message (see the module)."""
        wire: list[object] = []
        segment: list[tuple[UnitKind, object, object]] = []
        for item, kind, source in zip(out.items, out.kinds, out.sources, strict=True):
            if kind == OTHER and _role(item) == "assistant":
                _flush(segment, wire, last=False)
                wire.append(item)
            else:
                segment.append((kind, item, source))
        _flush(segment, wire, last=not out.more)
        return wire

    def validate(self, messages: Sequence[object], *, chained: bool = False) -> list[Violation]:
        """The Converse API's tool-turn and turn-order rules, in its own words where users have reported them.

        Reported (see ``tests/test_law_bedrock.py`` for where): ``missing_tool_result``,
        ``unexpected_tool_result``, ``duplicate_tool_result``, ``roles_not_alternating``, and the id
        constraint of the service model (``invalid_tool_use_id``, in AWS's constraint wording). Written in the
        service's style, no report found: ``duplicate_tool_use_id`` (by analogy with the ``toolResult`` words),
        ``block_after_tool_use`` (Claude's rule behind the service), ``empty_message`` and ``empty_text``. Not
        checked: ``Conversation blocks and tool result blocks cannot be provided in the same turn``, which some
        models behind the service apply to a user message holding results and text.
        """
        stream = self.validate_stream(chained=chained)
        stream.feed(messages, last=True)
        return stream.close()

    def validate_stream(self, *, chained: bool = False) -> ValidationStream:
        """``validate`` fed one segment at a time, each cut at the start of an assistant message."""
        del chained  # no server-held state continues this lane's transcript
        return _ConverseStream()

    transcript_field: str = "messages"

    def tools(self, request: request_parts.Request) -> object:
        """The tool definitions: ``toolConfig.tools``; ``None``: none."""
        tool_config = request.get("toolConfig")
        return None if tool_config is None else field(tool_config, "tools")

    def tool_choice(self, request: request_parts.Request) -> object:
        """The caller's ``toolConfig.toolChoice``; ``None``: none given."""
        tool_config = request.get("toolConfig")
        return None if tool_config is None else field(tool_config, "toolChoice")

    def tool_choice_none(self) -> None:
        """None: a ``toolChoice`` is ``auto``, ``any`` or one ``tool``, and ``toolConfig`` must stay."""

    def says_no_tool(self, tool_choice: object) -> bool:
        """Never: a ``toolChoice`` has no "none"."""
        del tool_choice
        return False

    def with_tool_choice(self, request: request_parts.Request, choice: object) -> dict[str, object]:
        """Refused: Converse has no tool choice that calls no tool (``UnsupportedLaneError``)."""
        del request, choice  # nothing to set them in
        raise UnsupportedLaneError(f"{self.lane} has no tool choice that calls no tool")

    def system_pieces(
        self, request: request_parts.Request, transcript: Sequence[request_parts.SystemPromptPiece] | None = None
    ) -> tuple[request_parts.SystemPromptPiece, ...]:
        """Each ``text`` block of ``system`` (the messages hold none)."""
        del transcript  # the system prompt stands outside the transcript
        return tuple(request_parts.text_pieces(request.get("system"), "system"))

    def emitted_call_ids(self, item: object) -> tuple[str, ...]:
        """The ids of the client ``toolUse`` blocks of an assistant message (``emitted_call_ids``)."""
        return emitted_call_ids(item) if field(item, "role") == "assistant" else ()

    def speaks_as_user(self, message: object) -> bool:
        """A ``user`` message with a non-empty ``text`` block."""
        if field(message, "role") != "user":
            return False
        content = field(message, "content")
        blocks = content if isinstance(content, Sequence) and not isinstance(content, str) else ()
        return any(isinstance(field(block, "text"), str) and bool(field(block, "text")) for block in blocks)

    @property
    def handoff(self) -> None:
        """None: no handoff runs here (the system prompt lives outside the list a handoff pushes it into)."""

    sdk_listed_parameters: tuple[tuple[str, str], ...] = (("messages", "openai_list"),)  # botocore lists nothing
    head_settings: tuple[str, ...] = ("system", "toolConfig")
    tool_choice_field: str = "toolConfig"

    cli_alias: str = "bedrock"

    def claims_body(self, body: request_parts.Request, transcript_field: str | None) -> bool:
        """A body with a Converse field, or a ``system`` list of blocks without a ``type``."""
        del transcript_field  # Chat and Messages share ``messages``
        return not _CLAIMED_FIELDS.isdisjoint(body) or _untyped_blocks(body.get("system"))

    def claims_item(self, item: request_parts.Item) -> bool:
        """A message holding a Converse block (a ``toolUse``, ``toolResult``, ... key, and no ``type``)."""
        content = item.get("content")
        return isinstance(content, list) and any(_claimed_block(b) for b in content)


def _answered(messages: Sequence[object], start: int, ids: list[str]) -> int:
    """Where the clean results of the call ids ``ids`` end (``start + 1``); ``0``: the turn is not clean.

    The message at ``start`` is a user message that opens with exactly one ``toolResult`` per call, then
    holds no other result (the user's text, a ``cachePoint``, may follow them); the ids are distinct.
    """
    expected = set(ids)
    if start >= len(messages) or len(expected) != len(ids):
        return 0
    message = messages[start]
    if type(message) is dict:
        role, content = message.get("role"), message.get("content")
    else:
        role, content = _role(message), _content(message)
    if role != "user" or not (type(content) is list or is_list(content)):
        return 0
    for block in content:
        inner = block.get("toolResult") if type(block) is dict else _result(block)
        if inner is None:
            if expected:
                return 0  # a block ahead of a result: the results do not lead the message
            continue
        call_id = inner.get("toolUseId") if type(inner) is dict else field(inner, "toolUseId")
        if type(call_id) is not str or call_id not in expected:
            return 0
        expected.remove(call_id)
    return 0 if expected else start + 1


def _read_results(message: object, content: Sequence[object], view: View) -> bool:
    """A user message's results and part runs, an empty part after a last result; ``False``: no result there."""
    units, kinds, ids, sources = view.units, view.kinds, view.ids, view.sources
    mark = len(units)
    run: list[object] = []
    for block in content:
        inner = block.get("toolResult") if type(block) is dict else _result(block)
        if inner is None:
            run.append(block)
            continue
        if run:
            sources[len(units)] = message
            units.append(tuple(run))
            kinds.append(PART)
            run = []
        ids[len(units)] = result_id_of(inner, "toolUseId")
        sources[len(units)] = message
        units.append(block)
        kinds.append(RESULT)
    if len(units) == mark:
        return False
    sources[len(units)] = message
    units.append(tuple(run))
    kinds.append(PART)
    return True


def _name(block: object) -> str:
    name = field(_call(block), "name")
    return name if isinstance(name, str) else ""


def _blocks_of(kind: UnitKind, item: object) -> list[object]:
    """The blocks a unit puts in a user message: a part's blocks, or the result block itself."""
    if kind == PART and is_list(item):
        return list(item)
    return [item]


def _as_sent(segment: list[tuple[UnitKind, object, object]]) -> list[object] | None:
    """The segment's messages when every one comes back as it was sent; ``None`` when the law changed any."""
    messages: list[object] = []
    index = 0
    while index < len(segment):
        kind, item, source = segment[index]
        if kind == OTHER:
            messages.append(item)
            index += 1
            continue
        blocks: list[object] = []
        while index < len(segment) and segment[index][0] != OTHER and segment[index][2] is source:
            blocks.extend(_blocks_of(segment[index][0], segment[index][1]))
            index += 1
        content = _content(source) if source is not None else None
        if not (is_list(content) and len(blocks) == len(content) and all(map(_same, blocks, content))):
            return None
        messages.append(source)
    return messages


def _user_blocks(content: object) -> list[object]:
    """A user message's content as blocks of the message it joins: a string as a text block, any other value kept."""
    if is_list(content):
        return list(content)
    if isinstance(content, str):
        return [{"text": content}] if content else []
    return [] if content is None else [content]


def _same(a: object, b: object) -> bool:
    return a is b


def _flush(segment: list[tuple[UnitKind, object, object]], wire: list[object], *, last: bool) -> None:
    """What stands between two assistant messages (``last``: after the last one), as the wire takes it."""
    if not segment:
        return
    kept = _as_sent(segment)
    if kept is not None:
        wire.extend(kept)
        segment.clear()
        return
    results: list[object] = []
    others: list[object] = []
    apart: list[object] = []  # items that are no user message: kept as they are, after it
    template: object = None
    for kind, item, source in segment:
        holder = source
        if kind == RESULT:
            results.append(item)
        elif kind == PART:
            others.extend(_blocks_of(kind, item))
        elif _role(item) == "user":
            others.extend(_user_blocks(_content(item)))
            holder = item
        else:
            apart.append(item)
            continue
        if template is None and holder is not None:
            template = holder
    blocks = [*results, *others]
    if blocks:
        if type(template) is dict:
            wire.append({**template, "content": blocks})
        elif template is not None:
            wire.append(replace(template, content=blocks))
        else:
            wire.append({"role": "user", "content": blocks})
    elif not wire or (not last and _role(wire[-1]) == "assistant"):
        wire.append({"role": "user", "content": [{"text": RESULTS_LEFT_OUT_TEXT}]})
    wire.extend(apart)
    segment.clear()


_START_WORDS: Final = (
    "A conversation must start with a user message. Try again with a conversation that starts with a user message."
)
_ALTERNATE_WORDS: Final = (
    "A conversation must alternate between user and assistant roles. "
    "Make sure the conversation alternates between user and assistant roles and try again."
)


class _ConverseStream:
    """The Converse API's rules message by message, fed one segment at a time (``validate_stream``).

    Carried across a cut: the position the next segment starts at, the role of the last user or assistant
    message (for the turn order), the ``toolUse`` ids so far, the ids the last message called that the next
    must answer (with its position), and the violations found.
    """

    __slots__ = ("_at", "_expected", "_expected_at", "_previous_role", "_seen", "_violations")

    def __init__(self) -> None:
        self._at = 0
        self._seen: set[str] = set()
        self._expected: list[str] = []
        self._expected_at = 0
        self._previous_role: object = None
        self._violations: list[Violation] = []

    def feed(self, messages: Sequence[object], *, last: bool) -> None:
        """Judge the next segment's messages; ``last``: the transcript ends with it."""
        del last  # a rule on the end of the list is judged at ``close``
        violations, seen_ids = self._violations, self._seen
        expected, expected_at, previous_role = self._expected, self._expected_at, self._previous_role
        for position, message in enumerate(messages, self._at):
            role, content = _role(message), _content(message)
            blocks = list(content) if is_list(content) else []
            if not blocks:
                violations.append(
                    Violation(
                        position=position,
                        rule="empty_message",
                        message=f"The content field in the Message object at messages.{position} is empty. "
                        "Add a ContentBlock object to the content field and try again.",
                    )
                )
            for index, block in enumerate(blocks):
                if _kind(block) == "text" and not field(block, "text"):
                    violations.append(
                        Violation(
                            position=position,
                            rule="empty_text",
                            message=f"The text field in the ContentBlock object at messages.{position}.content."
                            f"{index} is blank. Add text to the text field, and try again.",
                        )
                    )
            if role in ("user", "assistant"):
                if previous_role is None and role == "assistant":
                    violations.append(Violation(position=position, rule="first_message_not_user", message=_START_WORDS))
                elif role == previous_role:
                    violations.append(
                        Violation(position=position, rule="roles_not_alternating", message=_ALTERNATE_WORDS)
                    )
                previous_role = role
            if role == "user":
                violations.extend(_answers(position, blocks, expected))
                expected = []
                continue
            if expected:
                violations.append(_missing(expected_at + 1, expected))
            expected = []
            if role != "assistant":
                continue
            calling = False
            for index, block in enumerate(blocks):
                use = _call(block)
                if use is None:
                    if calling and _kind(block) not in _KEPT_IN_PLACE:
                        violations.append(
                            Violation(
                                position=position,
                                rule="block_after_tool_use",
                                message=f"messages.{position}.content.{index}: a toolUse block must be followed "
                                "only by toolUse blocks in its message",
                            )
                        )
                        calling = False
                    continue
                call_id = field(use, "toolUseId")
                if not isinstance(call_id, str) or not fits_id(call_id):
                    violations.append(
                        Violation(
                            position=position,
                            rule="invalid_tool_use_id",
                            message=f"1 validation error detected: Value at 'messages.{position + 1}.member."
                            f"content.{index + 1}.member.toolUse.toolUseId' failed to satisfy constraint: Member "
                            "must satisfy regular expression pattern: [a-zA-Z0-9_.:-]+ and have length less "
                            "than or equal to 64",
                        )
                    )
                elif call_id in seen_ids:
                    violations.append(
                        Violation(
                            position=position,
                            rule="duplicate_tool_use_id",
                            message=f"The toolUse blocks at messages.{position}.content contain duplicate Ids: "
                            f"{call_id}",
                        )
                    )
                else:
                    seen_ids.add(call_id)
                    expected.append(call_id)
                    expected_at = position
                calling = True
        self._at += len(messages)
        self._expected, self._expected_at, self._previous_role = expected, expected_at, previous_role

    def close(self) -> list[Violation]:
        """The violations of the whole transcript, the calls left unanswered at its end last."""
        if self._expected:
            self._violations.append(_missing(self._expected_at + 1, self._expected))
            self._expected = []
        return self._violations


def _answers(position: int, blocks: list[object], expected: list[str]) -> list[Violation]:
    """The rules a user message breaks in answering ``expected``, the calls of the message before it."""
    violations: list[Violation] = []
    answered: list[str] = []
    leading = True
    for block in blocks:
        inner = _result(block)
        if inner is None:
            leading = leading and _kind(block) == "cachePoint"
            continue
        call_id = field(inner, "toolUseId")
        if call_id in answered:
            violations.append(
                Violation(
                    position=position,
                    rule="duplicate_tool_result",
                    message=f"The toolResult blocks at messages.{position}.content contain duplicate Ids: {call_id}",
                )
            )
        elif not leading or call_id not in expected:
            violations.append(
                Violation(
                    position=position,
                    rule="unexpected_tool_result",
                    message=f"The number of toolResult blocks at messages.{position}.content exceeds the number "
                    "of toolUse blocks of previous turn.",
                )
            )
        else:
            answered.append(str(call_id))
    missing = [call_id for call_id in expected if call_id not in answered]
    if missing:
        violations.append(_missing(position, missing))
    return violations


def _missing(position: int, ids: list[str]) -> Violation:
    return Violation(
        position=position,
        rule="missing_tool_result",
        message=f"Expected toolResult blocks at messages.{position}.content for the following Ids: {', '.join(ids)}",
    )


ADAPTER: Final[BedrockConverse] = BedrockConverse()


_CLAIMED_FIELDS: Final = frozenset({"modelId", "toolConfig", "inferenceConfig", "additionalModelRequestFields"})
"""Top-level fields only a Converse request body carries."""
_CLAIMED_BLOCKS: Final = frozenset({"toolUse", "toolResult", "reasoningContent", "cachePoint"})
"""Keys only a Converse content block carries (its one key is its kind; it has no ``type``)."""


def _untyped_blocks(system: object) -> bool:
    """Whether a body's ``system`` is Converse's: a list of blocks, each a dict without a ``type``."""
    return isinstance(system, list) and bool(system) and all(isinstance(b, Mapping) and "type" not in b for b in system)


def _claimed_block(block: object) -> bool:
    """A Converse content block: a dict without a ``type`` holding one of ``_CLAIMED_BLOCKS``."""
    return isinstance(block, Mapping) and "type" not in block and not _CLAIMED_BLOCKS.isdisjoint(block)
