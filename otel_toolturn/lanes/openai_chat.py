"""The OpenAI Chat Completions lane: ``messages`` with assistant ``tool_calls`` and ``tool`` results.

Text and calls live in separate fields, so trailing text cannot occur. Every call id of an
assistant message needs one ``tool`` message before any other message; the order of results inside
the batch is free. Ids may recur across turns (some gateways number calls per request): they are
kept. Legacy ``function_call`` / role ``function`` messages pass through untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._view import (
    BREAK,
    INTERRUPTED_RESULT_TEXT,
    OTHER,
    RESULT,
    TURN,
    Batch,
    Call,
    Emitted,
    Stretch,
    Survey,
    SurveyState,
    Turn,
    View,
    Violation,
    field,
    replace,
)
from otel_toolturn._vocab import Lane
from otel_toolturn.lanes._common import (
    call_id_of,
    derive_id,
    fold_contents,
    interrupted,
    is_list,
    result_id_of,
    role_of,
)


def _tool_calls(message: object, position: int) -> Sequence[object]:
    calls = field(message, "tool_calls")
    if calls is None:
        return ()
    if not is_list(calls):
        raise ToolTurnInputError(
            f"item {position}: 'tool_calls' must be a list of tool calls, got {type(calls).__name__!r}",
            position=position,
        )
    return calls


class OpenAIChat:
    """Reads and writes the Chat Completions wire list for the law."""

    lane: Lane = "openai.chat_completions"
    unique_ids = False

    def survey(self, messages: Sequence[object], state: SurveyState | None = None) -> Survey | None:
        """A segment is a message and the ``tool`` messages right after it; dirty where its batch is off.

        Off: the ``tool`` messages right after a turn are not exactly one per call. One scan on the
        request path of every call: dicts are read inline, everything else through ``field``.
        ``state``: resume from a scan of the list's first ``state.position`` items (left unchanged);
        the survey's own ``state`` is at the list's end (its ``owner``: the latest turn emitting
        each id, as ids may recur).
        """
        scan = SurveyState() if state is None else state.copy()
        start, bounds, dirty, owner = scan.position, scan.bounds, scan.dirty, scan.owner
        pending, segment = scan.pending, scan.segment
        items: list[object] = messages if type(messages) is list else list(messages)  # indexed at C speed when compiled
        for position in range(start, len(items)):
            message = items[position]
            role = message.get("role") if type(message) is dict else role_of(message)
            if role == "tool":
                call_id = message.get("tool_call_id") if type(message) is dict else field(message, "tool_call_id")
                if call_id in pending:
                    pending.remove(call_id)
                else:
                    dirty.add(segment)
                    if type(call_id) is str and call_id in owner:
                        dirty.add(owner[call_id])
                continue
            if pending:
                dirty.add(segment)
                pending = []
            segment = position
            bounds.append(position)
            if role == "assistant":
                calls = message.get("tool_calls") if type(message) is dict else field(message, "tool_calls")
                if calls:
                    if not is_list(calls):
                        return None
                    for call in calls:
                        call_id = call.get("id") if type(call) is dict else field(call, "id")
                        if type(call_id) is not str or not call_id:
                            return None
                        if call_id in pending:
                            dirty.add(segment)
                        else:
                            pending.append(call_id)
                            owner[call_id] = segment
        paused = SurveyState(
            position=len(messages), bounds=bounds, dirty=dirty, owner=owner, pending=pending, segment=segment
        )
        return Survey(bounds=bounds, dirty=dirty | {segment} if pending else dirty, state=paused)

    def read(self, messages: Sequence[object], spans: Sequence[tuple[int, int]]) -> View:
        """Turns for assistant messages with ``tool_calls``; each ``tool`` message a result."""
        view = View()
        units, kinds, ids = view.units, view.kinds, view.ids
        for start, stop in spans:
            if units:
                units.append(BREAK)
                kinds.append(OTHER)
            for position in range(start, stop):
                message = messages[position]
                role = message.get("role") if type(message) is dict else role_of(message)
                if role == "tool":
                    ids[len(units)] = result_id_of(message, "tool_call_id")
                    units.append(message)
                    kinds.append(RESULT)
                    continue
                if role == "assistant":
                    calls = [
                        Call(call_id_of(c, "id", position, "tool call"), c) for c in _tool_calls(message, position)
                    ]
                    if calls:
                        units.append(Turn(position=position, calls=calls, items=(message,)))
                        kinds.append(TURN)
                        continue
                units.append(message)
                kinds.append(OTHER)
        return view

    def read_quick(self, messages: Sequence[object], start: int, stop: int) -> Stretch | None:
        """Assistant messages with ``tool_calls`` as turns, each ``tool`` message after one answering it."""
        stretch = Stretch()
        for position in range(start, stop):
            message = messages[position]
            if type(message) is not dict:
                return None
            role = message.get("role")
            if role == "tool":
                if not stretch.results(message, ((message.get("tool_call_id"), message),)):
                    return None
                continue
            if role == "assistant":
                calls = message.get("tool_calls")
                if calls:
                    if type(calls) is not list:
                        return None
                    ids: list[str] = []
                    for call in calls:
                        call_id = call.get("id") if type(call) is dict else None
                        if type(call_id) is not str or not call_id or call_id in ids:
                            return None
                        ids.append(call_id)
                    stretch.turn(Batch(position, (message,), ids, calls, False, [], [], {}, []))
                    continue
            stretch.other(message)
        return stretch

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

    def write_results(self, results: Sequence[tuple[object, object]]) -> list[object]:
        """Each result is one whole ``tool`` message."""
        return [result for result, _ in results]

    def rename_call(self, call: Call, new_id: str) -> Call:
        """The tool call under ``new_id``."""
        return Call(call_id=new_id, ref=replace(call.ref, id=new_id))

    def rename_result(self, result: object, new_id: str) -> object:
        """The ``tool`` message answering ``new_id``."""
        return replace(result, tool_call_id=new_id)

    def derive_id(self, call_id: str, taken: set[str]) -> str:
        """``<id>_<n>``."""
        return derive_id(call_id, taken, pattern_safe=False)

    def synthesize(self, call: Call) -> object:
        """A ``tool`` message saying the call was interrupted and its outcome is unknown."""
        return {"role": "tool", "tool_call_id": call.call_id, "content": INTERRUPTED_RESULT_TEXT}

    def fold(self, results: Sequence[object]) -> object:
        """One ``tool`` message: contents joined."""
        content = fold_contents([field(r, "content") for r in results], lambda text: {"type": "text", "text": text})
        return replace(results[0], content=content)

    def write(self, out: Emitted) -> list[object]:
        """Every emitted item is one whole message."""
        return out.items

    def validate(self, messages: Sequence[object]) -> list[Violation]:
        """Chat Completions' tool-turn rules, in OpenAI's own words."""
        violations: list[Violation] = []
        pending: list[str] = []
        answered: list[str] = []
        batch_at = 0
        for position, message in enumerate(messages):
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
                for call in calls if is_list(calls) else ():
                    call_id = field(call, "id")
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
        if pending:
            violations.append(_missing(batch_at, pending))
        return violations


def _missing(position: int, ids: list[str]) -> Violation:
    return Violation(
        position=position,
        rule="missing_tool_messages",
        message="An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(ids)}",
    )


ADAPTER: Final[OpenAIChat] = OpenAIChat()
