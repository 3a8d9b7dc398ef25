"""The Anthropic Messages lane: ``messages`` of ``{role, content: str | [blocks]}``.

Calls are ``tool_use`` blocks of an assistant message; results are ``tool_result`` blocks of a user
message, which must lead it (text that shared the message follows them). Ids must be unique in the
whole request and match ``^[a-zA-Z0-9_-]+$``. The API combines consecutive messages of one role
before its rules apply; ``validate`` does the same.

Server tools (``server_tool_use``) and MCP tools (``mcp_tool_use``) are not client calls: the server
answers them in the same assistant turn with their result blocks (``lanes._anthropic_server``). An
assistant message holding one is read with its open uses closed and its orphan results left out, as
that module states, and marked: a message with client calls is a ``Turn`` whose ``marks`` say so and
whose ``items`` hold the message as restored; any other is a reply kept where it stands, restored, in
``View.marks`` — or, left empty, in ``View.refused``. A message with no server block costs one lookup
per block.
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping, Sequence
from itertools import islice
from typing import Final

from otel_toolturn._view import (
    CLEAN,
    INTERRUPTED_RESULT_TEXT,
    OTHER,
    PART,
    REPLY,
    RESULT,
    TURN,
    Call,
    Clean,
    Emitted,
    Mark,
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
from otel_toolturn.lanes._anthropic_server import PLAIN, restore, served
from otel_toolturn.lanes._anthropic_server import family as server_family
from otel_toolturn.lanes._anthropic_server import violations as server_violations
from otel_toolturn.lanes._common import (
    call_id_of,
    delivered_parts,
    derive_id,
    fits_anthropic_ids,
    fold_contents,
    interrupted,
    is_list,
    result_id_of,
    role_of,
)
from otel_toolturn.lanes._defaults import AdapterDefaults

__all__ = ["ADAPTER", "AnthropicMessages", "server_family"]
"""``server_family``: the kind of server call a block ``type`` names, as the lane reads it (streams share it)."""

_USER_BLOCKS: Final = frozenset({"text", "image", "document", "search_result"})
"""The blocks a ``tool_result`` content holds that a user message holds too, where a delivered result stands."""


def _blocks(message: object) -> object:
    return field(message, "content")


def _block_list(message: object) -> Sequence[object]:
    content = field(message, "content")
    return content if is_list(content) else ()


class AnthropicMessages(AdapterDefaults):
    """Reads and writes the Anthropic Messages wire list for the law."""

    lane: Lane = "anthropic.messages"
    unique_ids = True
    results_anywhere = False

    def read(
        self, messages: Sequence[object], full: Container[int] = (), state: dict[str, object] | None = None
    ) -> View:
        """Assistant messages with ``tool_use`` as turns, other assistant messages as replies, results and parts.

        Each ``tool_result`` is a result, and the other blocks of a message holding results are parts. A
        turn whose ``tool_use`` blocks end the message, with distinct ids, followed by a user message of
        exactly one ``tool_result`` per call (the user's next words may follow them there), is read with
        that message as ``Clean``.
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
                role, content = role_of(message), _blocks(message)
            if type(content) is list or (type(content) is not str and is_list(content)):
                if role == "assistant":
                    ids: list[str] = []
                    uses: list[object] = []
                    trailing = False
                    server_blocks: list[object] | None = None
                    for block in content:
                        if type(block) is dict:
                            kind, call_id = block.get("type"), block.get("id")
                        else:
                            kind, call_id = field(block, "type"), None
                        if kind == "tool_use":
                            if type(call_id) is not str or not call_id:
                                call_id = call_id_of(block, "id", position, "tool_use block")
                            ids.append(call_id)
                            uses.append(block)
                            continue
                        if ids:
                            trailing = True
                        if type(kind) is str and kind not in PLAIN and served(kind):
                            if server_blocks is None:
                                server_blocks = []
                            server_blocks.append(block)
                    marks: tuple[Mark, ...] = ()
                    if server_blocks is not None:
                        restored = restore(messages, position, content, server_blocks, calls_client=bool(ids))
                        if restored is not None:
                            blocks, marks = restored
                            message = replace(message, position, content=blocks)
                    if ids:
                        end = 0 if trailing or marks or position in full else _answered(messages, position + 1, ids)
                        if end:
                            units.append(Clean(position, ids, end))
                            view.clean_ids.extend(ids)
                            kinds.append(CLEAN)
                            position = end
                            continue
                        calls = [Call(call_id, block) for call_id, block in zip(ids, uses, strict=True)]
                        units.append(Turn(position, calls, (message,), trailing, marks))
                        kinds.append(TURN)
                        position += 1
                        continue
                    if marks:
                        if not _block_list(message):
                            view.refused[len(units)] = marks[0]
                            marks = marks[1:]
                        if marks:
                            view.marks[len(units)] = marks
                        units.append(message)
                        kinds.append(REPLY)
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
        return interrupted(field(result, "content"))

    def write_turn(
        self, items: tuple[object, ...], position: int, calls: Sequence[tuple[object, object]], *, trailing: bool
    ) -> list[object]:
        """The message with its non-call blocks in order, then the kept calls."""
        message = items[0]
        written = [new for _, new in calls]
        others: list[object] = []
        originals: list[object] = []
        for block in _block_list(message):
            kind = field(block, "type")
            (originals if kind == "tool_use" else others).append(block)
        if not trailing and len(written) == len(originals):
            for a, b in zip(written, originals, strict=True):
                if a is not b:
                    break
            else:
                return [message]
        if type(message) is dict:
            return [{**message, "content": [*others, *written]}]
        return [replace(message, position, content=[*others, *written])]

    def rename_call(self, call: Call, new_id: str) -> Call:
        """The ``tool_use`` block under ``new_id``."""
        return Call(call_id=new_id, ref=replace(call.ref, id=new_id))

    def rename_result(self, result: object, new_id: str) -> object:
        """The ``tool_result`` block answering ``new_id``."""
        return replace(result, tool_use_id=new_id)

    def fits_ids(self, call_ids: Sequence[str]) -> bool:
        """Whether every id matches ``^[a-zA-Z0-9_-]+$``."""
        return fits_anthropic_ids(call_ids)

    def derive_id(self, call_id: str, taken: TakenIds) -> str:
        """``<id>_<n>``, fitting ``^[a-zA-Z0-9_-]+$``, cut to at most 64 characters."""
        return derive_id(call_id, taken, pattern_safe=True, limit=64)

    def call_kind(self, call: object) -> CallKind:
        """A ``tool_use`` block is a function call (server and MCP tool uses are read apart, marked with their kind)."""
        del call  # one kind of call
        return "function"

    def synthesize(self, call: Call) -> object:
        """An error ``tool_result`` saying the call was interrupted and its outcome is unknown."""
        return {
            "type": "tool_result",
            "tool_use_id": call.call_id,
            "content": INTERRUPTED_RESULT_TEXT,
            "is_error": True,
        }

    def fold(self, results: Sequence[object]) -> object:
        """One ``tool_result``: contents joined; ``is_error`` kept when any result had it."""
        content = fold_contents([field(r, "content") for r in results], lambda text: {"type": "text", "text": text})
        if any(field(r, "is_error") is True for r in results):
            return replace(results[0], content=content, is_error=True)
        return replace(results[0], content=content)

    def call_name(self, call: object) -> str:
        """The block's ``name``."""
        return _name(call)

    def deliver(self, result: object, call_id: str, name: str, *, second: bool) -> tuple[UnitKind, object]:
        """The result as blocks of the message it stood in: a text block naming the call, then its content's blocks.

        A block a user message holds (text, image, document, search result) is kept as it is; any other
        (a ``tool_result`` or ``tool_use`` nested in the content, an empty text) as a text block of its JSON.
        """
        heading = in_place_heading(call_id, name, second=second, error=field(result, "is_error") is True)
        return PART, tuple(delivered_parts(heading, field(result, "content"), _USER_BLOCKS, "text"))

    def write(self, out: Emitted) -> list[object]:
        """Whole messages as they are; result and part runs regrouped into user messages.

        A run of units that is exactly one original message's blocks, in order, is that message
        object; anything else becomes a new user message, results first. A run ends where a message
        the law left out stood.
        """
        wire: list[object] = []
        run: list[tuple[UnitKind, object, object]] = []
        breaks = out.breaks
        for index, (item, kind, source) in enumerate(zip(out.items, out.kinds, out.sources, strict=True)):
            if breaks and run and index in breaks:
                _flush(run, wire)
            if kind == OTHER:
                if run:
                    _flush(run, wire)
                wire.append(item)
            else:
                run.append((kind, item, source))
        if run:
            _flush(run, wire)
        return wire

    def validate(self, messages: Sequence[object], *, chained: bool = False) -> list[Violation]:
        """The Messages API's tool-turn rules, in its own words, on the merged role turns."""
        stream = self.validate_stream(chained=chained)
        stream.feed(messages, last=True)
        return stream.close()

    def validate_stream(self, *, chained: bool = False) -> ValidationStream:
        """``validate`` fed one segment at a time, each cut at the start of an assistant turn."""
        del chained  # no server-held state continues this lane's transcript
        return _MessagesStream()

    transcript_field: str = "messages"

    def tool_choice_none(self) -> object:
        """``{"type": "none"}``: call no tool."""
        return {"type": "none"}

    def says_no_tool(self, tool_choice: object) -> bool:
        """``{"type": "none"}``."""
        return isinstance(tool_choice, Mapping) and tool_choice.get("type") == "none"

    def system_pieces(
        self, request: request_parts.Request, transcript: Sequence[request_parts.SystemPromptPiece] | None = None
    ) -> tuple[request_parts.SystemPromptPiece, ...]:
        """The ``system`` string, or each text block of it (the transcript holds none)."""
        del transcript  # the system prompt stands outside the transcript
        return tuple(request_parts.text_pieces(request.get("system"), "system"))

    def emitted_call_ids(self, item: object) -> tuple[str, ...]:
        """The ids of the ``tool_use`` blocks of an assistant message, in order (those without a string id left out)."""
        if field(item, "role") != "assistant":
            return ()
        blocks = field(item, "content")
        if not isinstance(blocks, Sequence) or isinstance(blocks, str):
            return ()
        ids = (field(block, "id") for block in blocks if field(block, "type") == "tool_use")
        return tuple(call_id for call_id in ids if isinstance(call_id, str))

    def speaks_as_user(self, message: object) -> bool:
        """A ``user`` message with text (a string, or a text block)."""
        return field(message, "role") == "user" and request_parts.has_text(field(message, "content"))

    @property
    def handoff(self) -> request_parts.HandoffWire:
        """The lane's handoff spelling (``HANDOFF``)."""
        return HANDOFF

    sdk_listed_parameters: tuple[tuple[str, str], ...] = (
        ("messages", "anthropic"),
        ("system", "anthropic"),
        ("tools", "anthropic"),
    )
    sdk_listed_item_fields: tuple[str, ...] = ("content",)
    head_settings: tuple[str, ...] = ("system", "tools")
    instructions_in_transcript: bool = False

    cli_alias: str = "anthropic"

    def claims_body(self, body: request_parts.Request, transcript_field: str | None) -> bool:
        """A body with a top-level ``system`` (Converse, whose ``system`` is a list of untyped blocks, asked first)."""
        del transcript_field  # Chat and Bedrock share ``messages``
        return "system" in body

    def claims_item(self, item: request_parts.Item) -> bool:
        """A message holding a ``tool_use``, ``tool_result``, server tool use or thinking block."""
        content = item.get("content")
        return isinstance(content, list) and any(
            isinstance(b, Mapping) and request_parts.kind_of(b) in _CLAIMED_BLOCKS for b in content
        )


def _answered(messages: Sequence[object], start: int, ids: list[str]) -> int:
    """Where the results of a clean turn with the call ids ``ids`` end; ``0``: the turn is not clean.

    They are the user messages from ``start`` that hold ``tool_result`` blocks, exactly one per call,
    and nothing else but, in the last of them, blocks after its results that are no result (the user's
    next words, sent with the results: one user turn, its results leading, as the full reading writes
    it); the ids must be distinct.
    """
    expected = set(ids)
    if len(expected) != len(ids):
        return 0
    position, stop = start, len(messages)
    while expected and position < stop:
        message = messages[position]
        if type(message) is dict:
            role, content = message.get("role"), message.get("content")
        else:
            role, content = role_of(message), _blocks(message)
        if role != "user" or not (type(content) is list or is_list(content)) or not content:
            return 0
        for block in content:
            if type(block) is dict:
                kind, call_id = block.get("type"), block.get("tool_use_id")
            else:
                kind, call_id = field(block, "type"), field(block, "tool_use_id")
            if kind != "tool_result" or type(call_id) is not str or call_id not in expected:
                if expected or kind == "tool_result" or not _parts_from(content, block):
                    return 0
                return position + 1  # every call answered; the rest of the message is parts
            expected.remove(call_id)
        position += 1
    return 0 if expected else position


def _parts_from(content: Sequence[object], first: object) -> bool:
    """Whether no block of ``content`` from ``first`` (the very object) on is a ``tool_result``."""
    at = next((index for index, block in enumerate(content) if block is first), 0)  # 0: never read as parts only
    return all(
        (block.get("type") if type(block) is dict else field(block, "type")) != "tool_result"
        for block in islice(content, at, None)
    )


def _read_results(message: object, content: Sequence[object], view: View) -> bool:
    """A user message's ``tool_result`` blocks as results, its other block runs as parts; ``False``: none there."""
    units, kinds, ids, sources = view.units, view.kinds, view.ids, view.sources
    mark = len(units)
    run: list[object] = []
    for block in content:
        if type(block) is dict:
            kind, call_id = block.get("type"), block.get("tool_use_id")
        else:
            kind, call_id = field(block, "type"), None
        if kind == "tool_result":
            if run:
                sources[len(units)] = message
                units.append(tuple(run))
                kinds.append(PART)
                run = []
            ids[len(units)] = call_id if type(call_id) is str and call_id else result_id_of(block, "tool_use_id")
            sources[len(units)] = message
            units.append(block)
            kinds.append(RESULT)
        else:
            run.append(block)
    if len(units) == mark:
        return False
    if run:
        sources[len(units)] = message
        units.append(tuple(run))
        kinds.append(PART)
    return True


def _name(call: object) -> str:
    name = field(call, "name")
    return name if isinstance(name, str) else ""


def _unit_blocks(kind: UnitKind, item: object) -> list[object]:
    if kind == PART and is_list(item):
        return list(item)
    return [item]


def _flush(run: list[tuple[UnitKind, object, object]], wire: list[object]) -> None:
    """One run of result and part units as user messages: one API turn, so its results lead (stable order)."""
    run.sort(key=lambda unit: unit[0] != RESULT)
    fresh: list[object] = []
    index = 0
    while index < len(run):
        source = run[index][2]
        end = index
        blocks: list[object] = []
        while end < len(run) and source is not None and run[end][2] is source:
            kind, item, _ = run[end]
            if kind == RESULT:
                blocks.append(item)
            else:
                blocks.extend(_unit_blocks(kind, item))
            end += 1
        content = _blocks(source) if source is not None else None
        if (
            end > index
            and is_list(content)
            and len(blocks) == len(content)
            and all(a is b for a, b in zip(blocks, content, strict=True))
        ):
            if fresh:
                wire.append({"role": "user", "content": fresh})
                fresh = []
            wire.append(source)
            index = end
        else:
            fresh.extend(_unit_blocks(run[index][0], run[index][1]))
            index += 1
    if fresh:
        wire.append({"role": "user", "content": fresh})
    run.clear()


_Blocks = list[tuple[int, int, object]]
"""A role turn's blocks, each with the position of its message and its index there."""


def _role_turns(
    messages: Sequence[object], start: int, empties: list[Violation], *, last: bool
) -> Iterator[tuple[object, _Blocks, bool]]:
    """Consecutive same-role messages merged, as the API merges them: each turn's role, blocks, and whether it is last.

    ``start``: the position of ``messages[0]`` in the transcript; ``last``: the transcript ends with
    ``messages``. One turn is held at a time. An empty message or text block is added to ``empties`` as it
    is read.
    """
    turn: tuple[object, _Blocks] | None = None
    for position, message in enumerate(messages, start):
        role = role_of(message)
        content = _blocks(message)
        if isinstance(content, str):
            blocks: _Blocks = [(position, 0, {"type": "text", "text": content})]
        elif is_list(content):
            blocks = [(position, i, b) for i, b in enumerate(content)]
        else:
            blocks = []
        if not blocks:
            empties.append(
                Violation(
                    position=position,
                    rule="empty_message",
                    message=f"messages.{position}: all messages must have non-empty content "
                    "except for the optional final assistant message",
                )
            )
        for pos, _, block in blocks:
            if field(block, "type") == "text" and not field(block, "text"):
                empties.append(
                    Violation(
                        position=pos,
                        rule="empty_text",
                        message="messages: text content blocks must be non-empty",
                    )
                )
        if turn is not None and turn[0] == role:
            turn[1].extend(blocks)
            continue
        if turn is not None:
            yield (*turn, False)
        turn = (role, blocks)
    if turn is not None:
        yield (*turn, last)


class _MessagesStream:
    """The Messages API's rules on the merged role turns, fed one segment at a time (``validate_stream``).

    A segment starts an assistant turn, so no role turn spans a cut; one turn is held at a time. Carried
    across a cut: the position the next segment starts at, the ``tool_use`` ids so far, the ids the last
    turn called that its answer must hold (with their position), and the violations found, empty messages
    and text apart (they come first).
    """

    __slots__ = ("_at", "_empties", "_expected", "_expected_at", "_seen", "_violations")

    def __init__(self) -> None:
        self._at = 0
        self._seen: set[str] = set()
        self._expected: list[str] = []
        self._expected_at = 0
        self._empties: list[Violation] = []
        self._violations: list[Violation] = []

    def feed(self, messages: Sequence[object], *, last: bool) -> None:
        """Judge the next segment's role turns; ``last``: the transcript ends with it."""
        for role, blocks, final in _role_turns(messages, self._at, self._empties, last=last):
            if role == "user":
                self._answer(blocks)
            else:
                self._call(blocks, final=final)
        self._at += len(messages)

    def close(self) -> list[Violation]:
        """Empty messages and text first, then the tool turns, as ``validate`` of the whole list."""
        if self._expected:
            self._violations.append(_missing(self._expected_at, self._expected))
            self._expected = []
        return self._empties + self._violations

    def _answer(self, blocks: _Blocks) -> None:
        """A user turn's results against the calls of the turn before it."""
        violations, expected = self._violations, self._expected
        answered: list[str] = []
        leading = True
        for pos, index, block in blocks:
            if field(block, "type") != "tool_result":
                leading = False
                continue
            call_id = field(block, "tool_use_id")
            if not leading and call_id in expected:
                violations.append(
                    Violation(
                        position=pos,
                        rule="results_not_leading",
                        message=f"messages.{pos}: Did not find {len(expected)} tool_result block(s) at "
                        "the beginning of this message. Messages following tool_use blocks must begin "
                        "with a matching number of tool_result blocks.",
                    )
                )
            elif call_id in answered:
                violations.append(
                    Violation(
                        position=pos,
                        rule="multiple_results",
                        message="each tool_use must have a single result. "
                        f"Found multiple tool_result blocks with id: {call_id}",
                    )
                )
            elif call_id not in expected:
                violations.append(
                    Violation(
                        position=pos,
                        rule="unexpected_tool_result",
                        message=f"messages.{pos}.content.{index}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {call_id}. Each `tool_result` block must have a "
                        "corresponding `tool_use` block in the previous message.",
                    )
                )
            else:
                answered.append(str(call_id))
        missing = [c for c in expected if c not in answered]
        if missing:
            violations.append(_missing(self._expected_at, missing))
        self._expected = []

    def _call(self, blocks: _Blocks, *, final: bool) -> None:
        """Any other turn's server blocks and ``tool_use`` blocks (``final``: it ends the transcript)."""
        violations, seen_ids = self._violations, self._seen
        if self._expected:
            violations.append(_missing(self._expected_at, self._expected))
        expected: list[str] = []
        self._expected = expected
        calling = False
        last = final and all(field(block, "type") != "tool_use" for _, _, block in blocks)
        violations.extend(server_violations(blocks, last=last))
        for pos, index, block in blocks:
            kind = field(block, "type")
            if kind == "tool_use":
                call_id = field(block, "id")
                if not isinstance(call_id, str) or not call_id or not fits_anthropic_ids((call_id,)):
                    violations.append(
                        Violation(
                            position=pos,
                            rule="invalid_tool_use_id",
                            message=f"messages.{pos}.content.{index}.id: String should match pattern "
                            "'^[a-zA-Z0-9_-]+$'",
                        )
                    )
                elif call_id in seen_ids:
                    violations.append(
                        Violation(
                            position=pos,
                            rule="duplicate_tool_use_id",
                            message=f"messages.{pos}.content.{index}: `tool_use` ids must be unique",
                        )
                    )
                else:
                    seen_ids.add(call_id)
                    expected.append(call_id)
                    self._expected_at = pos
                calling = True
            elif calling:
                violations.append(
                    Violation(
                        position=pos,
                        rule="block_after_tool_use",
                        message=f"messages.{pos + 1}: Did not find {len(expected)} tool_result block(s) at the "
                        "beginning of this message. Messages following tool_use blocks must begin with a "
                        "matching number of tool_result blocks.",
                    )
                )
                calling = False


def _missing(position: int, ids: list[str]) -> Violation:
    return Violation(
        position=position,
        rule="missing_tool_result",
        message=f"messages.{position}: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {', '.join(ids)}. Each `tool_use` block must have a corresponding `tool_result` block "
        "in the next message.",
    )


ADAPTER: Final[AnthropicMessages] = AnthropicMessages()


class AnthropicHandoff:
    """The Messages spelling of a handoff's shapes: the last assistant message and its ``tool_use`` blocks."""

    def carrier(self, messages: Sequence[object]) -> request_parts.Carrier | None:
        """The last assistant message and its ``tool_use`` blocks, in order."""
        at = request_parts.last_assistant(messages)
        if at is None:
            return None
        content = field(messages[at], "content")
        blocks: Sequence[object] = content if isinstance(content, (list, tuple)) else ()
        found = tuple(
            request_parts.WireCall(
                name=request_parts.text_or_empty(field(block, "name")),
                call_id=request_parts.text_or_empty(field(block, "id")),
                position=at,
                slot=slot,
                kind="tool_use",
            )
            for slot, block in enumerate(blocks)
            if field(block, "type") == "tool_use"
        )
        return request_parts.Carrier(start=at, end=at, calls=found)

    def is_plain_assistant(self, message: object) -> bool:
        """An assistant message without a ``tool_use`` block."""
        if field(message, "role") != "assistant":
            return False
        content = field(message, "content")
        return not (isinstance(content, (list, tuple)) and any(field(block, "type") == "tool_use" for block in content))

    def holds_results(self, message: object) -> bool:
        """A user message whose first block is a ``tool_result``."""
        content = field(message, "content")
        return (
            field(message, "role") == "user"
            and isinstance(content, (list, tuple))
            and bool(content)
            and field(content[0], "type") == "tool_result"
        )

    def error_result(self, call: request_parts.WireCall, text: str) -> object:
        """A ``tool_result`` block with ``is_error``."""
        return {"type": "tool_result", "tool_use_id": call.call_id, "content": text, "is_error": True}

    def join_batch(
        self, messages: Sequence[object], carrier: request_parts.Carrier, end: int, result: object
    ) -> list[object]:
        """The block in a user message of its own, or after the leading results of a last message with other blocks.

        When the batch's last results message also holds other blocks (guard feedback), the block joins
        that message right after its leading results, so the results still lead the user turn the API reads.
        """
        if end > carrier.end + 1:
            last = messages[end - 1]
            blocks = request_parts.listed_field(last, "content")
            lead = 0
            while lead < len(blocks) and field(blocks[lead], "type") == "tool_result":
                lead += 1
            if lead < len(blocks):
                updated = replace(last, end - 1, content=[*blocks[:lead], result, *blocks[lead:]])
                return [*messages[: end - 1], updated, *messages[end:]]
        return request_parts.inserted(messages, end, {"role": "user", "content": [result]})

    def without_call(
        self, messages: Sequence[object], carrier: request_parts.Carrier, call: request_parts.WireCall
    ) -> list[object]:
        """Its ``tool_use`` block removed; the last call gone, the non-blank ``text`` blocks stay (none: no message)."""
        return request_parts.without_listed_call(messages, carrier, call, "content", _plain_text)


def _plain_text(content: object) -> object | None:
    """The non-blank ``text`` blocks of a content (a string: itself when not blank); ``None``: no text."""
    if isinstance(content, str):
        return content if content.strip() else None
    texts = [
        block
        for block in (content if isinstance(content, (list, tuple)) else ())
        if field(block, "type") == "text" and str(field(block, "text") or "").strip()
    ]
    return texts or None


HANDOFF: Final[AnthropicHandoff] = AnthropicHandoff()


_CLAIMED_BLOCKS: Final = frozenset({"tool_use", "tool_result", "server_tool_use", "thinking", "redacted_thinking"})
"""Block types only a Messages transcript holds (a body read without its lane is claimed by them)."""
