"""The OpenAI Chat Completions lane: ``messages`` with assistant ``tool_calls`` and ``tool`` results.

Text and calls live in separate fields, so trailing text cannot occur. Every call id of an
assistant message needs one ``tool`` message before any other message; the order of results inside
the batch is free. Ids may recur across turns (some gateways number calls per request): they are
kept. Legacy ``function_call`` / role ``function`` messages pass through untouched.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Final

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._view import (
    CLEAN,
    INTERRUPTED_RESULT_TEXT,
    OTHER,
    REPLY,
    RESULT,
    TURN,
    Call,
    Clean,
    Emitted,
    Turn,
    UnitKind,
    ValidationStream,
    View,
    Violation,
    field,
    in_place_heading,
    replace,
)
from otel_toolturn._vocab import CallKind, Dialect, Lane
from otel_toolturn.lanes import request_parts
from otel_toolturn.lanes._common import (
    call_id_of,
    delivered_parts,
    fold_contents,
    interrupted,
    is_list,
    result_id_of,
    role_of,
)
from otel_toolturn.lanes._defaults import AdapterDefaults

ID_LIMIT: Final = 40
"""The longest ``tool_calls[].id`` the API accepts."""
_USER_PARTS: Final = frozenset({"text", "image_url", "input_audio", "file"})
"""The content parts a user message holds, where a delivered result stands."""


def _tool_calls(message: object, position: int) -> Sequence[object]:
    calls = field(message, "tool_calls")
    if calls is None:
        return ()
    if not is_list(calls):
        raise ToolTurnInputError(
            f"'tool_calls' must be a list of tool calls, got {type(calls).__name__!r}",
            position=position,
        )
    return calls


def _read_calls(messages: Sequence[object], position: int, calls: Sequence[object]) -> tuple[list[str], int]:
    """The ids of the assistant message's tool ``calls``, and where its clean turn ends (``0``: it is not clean).

    The turn is clean when its ids are distinct and the messages right after it are exactly one ``tool``
    message per call. A call without a readable id is rejected, naming where.
    """
    call_ids: list[str] = []
    for call in calls:
        call_id = call.get("id") if type(call) is dict else None
        if type(call_id) is not str or not call_id:
            call_id = call_id_of(call, "id", position, "tool call")
        call_ids.append(call_id)
    expected = set(call_ids)
    end = position + 1 + len(call_ids)
    if end > len(messages) or len(expected) != len(call_ids):
        return call_ids, 0
    for at in range(position + 1, end):
        message = messages[at]
        if type(message) is dict:
            role, call_id = message.get("role"), message.get("tool_call_id")
        else:
            role, call_id = role_of(message), field(message, "tool_call_id")
        if role != "tool" or type(call_id) is not str or call_id not in expected:
            return call_ids, 0
        expected.remove(call_id)
    return call_ids, end


class OpenAIChat(AdapterDefaults):
    """Reads and writes the Chat Completions wire list for the law."""

    lane: Lane = "openai.chat_completions"
    dialect: Dialect | None = None
    """The provider's variant of the lane's rules this adapter speaks (``None``: plain Chat Completions)."""
    id_limit = ID_LIMIT
    unique_ids = False
    results_anywhere = False

    def read(
        self, messages: Sequence[object], full: Container[int] = (), state: dict[str, object] | None = None
    ) -> View:
        """Assistant messages with ``tool_calls`` as turns, other assistant messages replies, tool messages results.

        A turn with distinct call ids followed by exactly one ``tool`` message per call is read with them
        as ``Clean``.
        """
        del state  # nothing of what came before a cut changes how this lane reads
        view = View()
        units, kinds, ids = view.units, view.kinds, view.ids
        position, stop = 0, len(messages)
        while position < stop:
            message = messages[position]
            role = message.get("role") if type(message) is dict else role_of(message)
            if role == "tool":
                ids[len(units)] = result_id_of(message, "tool_call_id")
                units.append(message)
                kinds.append(RESULT)
                position += 1
                continue
            if role == "assistant":
                tool_calls = message.get("tool_calls") if type(message) is dict else _tool_calls(message, position)
                if tool_calls is not None and type(tool_calls) is not list:
                    tool_calls = _tool_calls(message, position)
                if tool_calls:
                    call_ids, end = _read_calls(messages, position, tool_calls)
                    if end and position not in full:
                        units.append(Clean(position, call_ids, end))
                        view.clean_ids.extend(call_ids)
                        kinds.append(CLEAN)
                        position = end
                        continue
                    calls = [Call(call_id, call) for call_id, call in zip(call_ids, tool_calls, strict=True)]
                    units.append(Turn(position=position, calls=calls, items=(message,)))
                    kinds.append(TURN)
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
        """The message with exactly the kept calls in ``tool_calls``."""
        del trailing  # text and calls are separate fields: nothing trails a call
        message = items[0]
        originals = _tool_calls(message, position)
        written = [new for _, new in calls]
        if len(written) == len(originals) and all(a is b for a, b in zip(written, originals, strict=True)):
            return [message]
        return [replace(message, position, tool_calls=written)]

    def rename_call(self, call: Call, new_id: str) -> Call:
        """The tool call under ``new_id``."""
        return Call(call_id=new_id, ref=replace(call.ref, id=new_id))

    def rename_result(self, result: object, new_id: str) -> object:
        """The ``tool`` message answering ``new_id``."""
        return replace(result, tool_call_id=new_id)

    def call_kind(self, call: object) -> CallKind:
        """Every call here is a function call."""
        del call  # one kind of call
        return "function"

    def synthesize(self, call: Call) -> object:
        """A ``tool`` message saying the call was interrupted and its outcome is unknown."""
        return {"role": "tool", "tool_call_id": call.call_id, "content": INTERRUPTED_RESULT_TEXT}

    def fold(self, results: Sequence[object]) -> object:
        """One ``tool`` message: contents joined.

        The first result's message carries them; when it is an SDK's typed message (cohere's
        ``ToolChatMessageV2``) and the joined content is a list, the message is written as a dict
        with its ``tool_call_id`` (the parts as they are), so no SDK serialises dict parts under a typed field.
        """
        content = fold_contents([field(r, "content") for r in results], lambda text: {"type": "text", "text": text})
        first = results[0]
        if isinstance(content, list) and not isinstance(first, Mapping):
            return {"role": "tool", "tool_call_id": field(first, "tool_call_id"), "content": content}
        return replace(first, content=content)

    def call_name(self, call: object) -> str:
        """The ``function``'s ``name``."""
        function = field(call, "function")
        name = field(function, "name") if function is not None else None
        return name if isinstance(name, str) else ""

    def deliver(self, result: object, call_id: str, name: str, *, second: bool) -> tuple[UnitKind, object]:
        """A user message: a line naming the call, then the ``tool`` message's content.

        A string content follows the line in one string; parts a user message holds (text, image,
        audio, file) are kept as parts, any other part (or a content that is no list) as a text part
        of its JSON.
        """
        heading = in_place_heading(call_id, name, second=second, error=False)
        parts = delivered_parts(heading, field(result, "content"), _USER_PARTS, "text")
        if len(parts) == 1:
            return OTHER, {"role": "user", "content": field(parts[0], "text")}
        return OTHER, {"role": "user", "content": parts}

    def write(self, out: Emitted) -> list[object]:
        """Every emitted item is one whole message."""
        return out.items

    def validate(self, messages: Sequence[object], *, chained: bool = False) -> list[Violation]:
        """The provider rules ``messages`` breaks: ``validate_stream`` fed the whole list as its one segment."""
        stream = self.validate_stream(chained=chained)
        stream.feed(messages, last=True)
        return stream.close()

    def validate_stream(self, *, chained: bool = False) -> ValidationStream:
        """Chat Completions' tool-turn rules, in OpenAI's own words, fed one segment at a time."""
        del chained  # no server-held state continues this lane's transcript
        return ChatValidation()

    transcript_field: str = "messages"

    def system_pieces(
        self, request: request_parts.Request, transcript: Sequence[request_parts.SystemPromptPiece] | None = None
    ) -> tuple[request_parts.SystemPromptPiece, ...]:
        """The content of each ``system`` or ``developer`` message of ``messages`` (``transcript``: already read)."""
        return tuple(request_parts.request_transcript_pieces(request, self.transcript_field, transcript))

    def emitted_call_ids(self, item: object) -> tuple[str, ...]:
        """The ids of an assistant message's ``tool_calls``, in order (those without a string id left out)."""
        if field(item, "role") != "assistant":
            return ()
        calls = field(item, "tool_calls")
        if not isinstance(calls, Sequence) or isinstance(calls, str):
            return ()
        ids = (field(call, "id") for call in calls)
        return tuple(call_id for call_id in ids if isinstance(call_id, str))

    def speaks_as_user(self, message: object) -> bool:
        """A ``user`` message with text (a string, or a text part)."""
        return field(message, "role") == "user" and request_parts.has_text(field(message, "content"))

    @property
    def handoff(self) -> request_parts.HandoffWire:
        """The lane's handoff spelling (``HANDOFF``)."""
        return HANDOFF

    sdk_listed_parameters: tuple[tuple[str, str], ...] = (("messages", "openai_iterable"), ("tools", "openai_iterable"))
    sdk_listed_item_fields: tuple[str, ...] = ("content", "tool_calls")
    head_settings: tuple[str, ...] = ("tools",)

    cli_alias: str = "chat"

    def claims_body(self, body: request_parts.Request, transcript_field: str | None) -> bool:
        """Never: a Chat body has no field of its own (its transcript is ``messages``, as Messages and Converse)."""
        del body, transcript_field
        return False

    def claims_item(self, item: request_parts.Item) -> bool:
        """A message with ``tool_calls``, or a ``tool`` message."""
        return "tool_calls" in item or item.get("role") == "tool"


class ChatValidation:
    """Chat Completions' tool-turn rules over a transcript fed in segments (``ValidationStream``).

    Between segments it holds the ids of the last assistant message's calls not yet answered and those
    answered, where that message stands, and how many items came before: a cut falls before an assistant
    message, so a batch's ``tool`` messages never straddle one, but its missing ones are stated there.
    """

    __slots__ = ("_answered", "_batch_at", "_pending", "fed", "violations")

    def __init__(self) -> None:
        self.fed = 0
        """How many items the segments fed so far hold: the position the next segment starts at."""
        self.violations: list[Violation] = []
        """The rules broken so far, in the order ``validate`` states them."""
        self._pending: list[str] = []
        self._answered: list[str] = []
        self._batch_at = 0

    def feed(self, messages: Sequence[object], *, last: bool) -> None:
        """Judge the next segment; ``last``: the transcript ends with it (a batch still open is stated)."""
        violations, pending, answered, batch_at = self.violations, self._pending, self._answered, self._batch_at
        for position, message in enumerate(messages, self.fed):
            role = role_of(message)
            if role == "tool":
                call_id = field(message, "tool_call_id")
                if call_id in pending:
                    pending.remove(call_id)
                    answered.append(str(call_id))
                elif call_id in answered:
                    violations.append(
                        Violation(
                            position=position,
                            rule="multiple_tool_messages",
                            message=f"Invalid parameter: messages[{position}] is a second 'tool' message "
                            f"for tool_call_id {call_id}.",
                        )
                    )
                else:
                    violations.append(
                        Violation(
                            position=position,
                            rule="orphan_tool_message",
                            message="Invalid parameter: messages with role 'tool' must be a response to a "
                            "preceeding message with 'tool_calls'.",
                        )
                    )
                continue
            if pending:
                violations.append(_missing(batch_at, pending))
            pending, answered = [], []
            if role == "assistant":
                calls = field(message, "tool_calls")
                for index, call in enumerate(calls if is_list(calls) else ()):
                    call_id = field(call, "id")
                    if isinstance(call_id, str) and len(call_id) > ID_LIMIT:
                        violations.append(
                            Violation(
                                position=position,
                                rule="tool_call_id_too_long",
                                message=f"Invalid 'messages[{position}].tool_calls[{index}].id': string too long. "
                                f"Expected a string with maximum length {ID_LIMIT}, but got a string with length "
                                f"{len(call_id)} instead.",
                            )
                        )
                    if not isinstance(call_id, str) or call_id in pending:
                        violations.append(
                            Violation(
                                position=position,
                                rule="duplicate_tool_call_id",
                                message=f"Invalid parameter: messages[{position}].tool_calls has a repeated or "
                                f"missing id: {call_id!r}.",
                            )
                        )
                        continue
                    pending.append(call_id)
                batch_at = position
        if last and pending:
            violations.append(_missing(batch_at, pending))
            pending = []
        self.fed += len(messages)
        self._pending, self._answered, self._batch_at = pending, answered, batch_at

    def close(self) -> list[Violation]:
        """The rules the whole transcript breaks, in order: ``validate`` of the whole list."""
        return self.violations


def _missing(position: int, ids: list[str]) -> Violation:
    return Violation(
        position=position,
        rule="missing_tool_messages",
        message="An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(ids)}",
    )


ADAPTER: Final[OpenAIChat] = OpenAIChat()


class ChatHandoff(request_parts.ResultAfterBatch):
    """The Chat spelling of a handoff's shapes: the last assistant message and its ``tool_calls``."""

    def carrier(self, messages: Sequence[object]) -> request_parts.Carrier | None:
        """The last assistant message and its ``tool_calls``, in order."""
        at = request_parts.last_assistant(messages)
        if at is None:
            return None
        tool_calls = field(messages[at], "tool_calls")
        listed: Sequence[object] = tool_calls if isinstance(tool_calls, (list, tuple)) else ()
        found = tuple(
            request_parts.WireCall(
                name=request_parts.text_or_empty(field(field(call, "function"), "name")),
                call_id=request_parts.text_or_empty(field(call, "id")),
                position=at,
                slot=slot,
                kind="function",
            )
            for slot, call in enumerate(listed)
        )
        return request_parts.Carrier(start=at, end=at, calls=found)

    def is_plain_assistant(self, message: object) -> bool:
        """An assistant message without ``tool_calls``."""
        return field(message, "role") == "assistant" and not field(message, "tool_calls")

    def holds_results(self, message: object) -> bool:
        """A ``tool`` message."""
        return field(message, "role") == "tool"

    def error_result(self, call: request_parts.WireCall, text: str) -> object:
        """A ``tool`` message answering the call."""
        return {"role": "tool", "tool_call_id": call.call_id, "content": text}

    def without_call(
        self, messages: Sequence[object], carrier: request_parts.Carrier, call: request_parts.WireCall
    ) -> list[object]:
        """Its ``tool_calls`` entry removed; the last call gone, the text content stays (none: no message)."""
        return request_parts.without_listed_call(messages, carrier, call, "tool_calls", _plain_text)


def _plain_text(content: object) -> object | None:
    """A content that holds non-blank text (a string, or ``text`` parts), as it is; ``None``: no text."""
    if isinstance(content, str):
        return content if content.strip() else None
    parts = content if isinstance(content, (list, tuple)) else ()
    text = "".join(str(field(part, "text") or "") for part in parts if field(part, "type") == "text")
    return content if text.strip() else None


HANDOFF: Final[ChatHandoff] = ChatHandoff()
