"""Ollama's dialect of the Chat Completions lane: its native ``/api/chat`` messages, calls matched by name.

An assistant message carries ``tool_calls`` of ``{"function": {"name": ..., "arguments": {...}}}`` (the
arguments an object, not a string), usually without an ``id``; a result is a ``{"role": "tool", "content":
..., "tool_name": ...}`` message. So a result answers a call by its tool name and its order, as Gemini's
unsigned calls are matched (``lanes._gemini_matching``, the one rule shared by reading and ``validate``):

- **Reading.** Each call gets a key from its position within its message alone: its ``id`` when it carries
  one, else ``<name>#<n>``, the n-th call of that name in the message (``search#1``, ``search#2``). The keys
  depend on nothing after the message, so the view stays append-stable; the law's reports name calls by them.
  A ``tool`` message answers, by ``tool_call_id`` when it carries one that a call carries, else by
  ``tool_name``, the first call of that name in the nearest message that called it which nothing answered
  yet (a second result for the last such call, when every one was answered).
- **Writing.** What the law decides is written in Ollama's spelling: a call without a result is closed with
  ``{"role": "tool", "tool_name": <its name>, "content": <the interrupted text>}``; a ``tool_call_id`` is
  written only when the call itself carries an ``id``. Calls are never renamed (no id pattern to fit).
- **Rules.** Ollama itself refuses none of this: the server renders whatever history it is sent into the
  model's prompt template, and an unanswered call or a result with no call before it is sent as it stands.
  Models then lose track: a tool result the model sees no call for is read as noise or makes the model call
  the tool again (ollama/ollama#11704, taketwo/llm-ollama#72). ``validate`` states, in neutral words, the
  rules the law restores: each assistant message's calls answered by the ``tool`` messages right after it, one
  each (``missing_tool_messages``, ``multiple_tool_messages``), no id twice in one message
  (``duplicate_tool_call_id``), and no ``tool`` message that answers no call
  right before it (``orphan_tool_message``). The simulator refuses with them, as a strict server would.

>>> call = {"function": {"name": "search", "arguments": {"q": "otel"}}}
>>> [v.rule for v in ADAPTER.validate([{"role": "assistant", "content": "", "tool_calls": [call]}])]
['missing_tool_messages']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Sequence
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
    TakenIds,
    Turn,
    ValidationStream,
    View,
    Violation,
    field,
)
from otel_toolturn._vocab import Dialect
from otel_toolturn.lanes._common import describe, is_list, nonempty_str, role_of
from otel_toolturn.lanes._gemini_matching import Calls, Matcher
from otel_toolturn.lanes.openai_chat import OpenAIChat

_UNANSWERED_WORDS: Final = (
    "messages[{position}] calls {names} with no 'tool' message answering it right after; each tool call needs one."
)
_REPEAT_WORDS: Final = "messages[{position}].tool_calls repeats the id {call_id}; each call needs its own."
_SECOND_WORDS: Final = "messages[{position}] is a second 'tool' message for the tool call {name} before it."
_ORPHAN_WORDS: Final = (
    "messages[{position}] is a 'tool' message for {name}, which no tool call right before it made; "
    "a 'tool' message answers a call of the assistant message before it."
)


def _name(call: object) -> str | None:
    """The call's function name (``None``: absent or empty)."""
    return nonempty_str(field(field(call, "function"), "name"))


def _own_id(item: object, key: str) -> str | None:
    """The id an item carries under ``key`` (``None``: absent or empty)."""
    return nonempty_str(field(item, key))


def _calls(message: object, position: int) -> Calls:
    """The message's tool calls as the matcher reads them: ``(position, call, {"name", "id"})``, in order.

    A call with neither a function name nor an id is rejected, naming where.
    """
    return _calls_of(field(message, "tool_calls"), position)


def _calls_of(calls: object, position: int) -> Calls:
    """``_calls`` of the message's ``tool_calls`` value."""
    if not is_list(calls):
        raise ToolTurnInputError(
            f"'tool_calls' must be a list of tool calls, got {type(calls).__name__!r}",
            position=position,
        )
    found: list[tuple[int, object, object]] = []
    for call in calls:
        if type(call) is dict and type(function := call.get("function")) is dict:  # JSON: no accessors, same values
            name, call_id = nonempty_str(function.get("name")), nonempty_str(call.get("id"))
        else:
            name, call_id = _name(call), _own_id(call, "id")
        if name is None and call_id is None:
            raise ToolTurnInputError(
                f"a tool call needs a non-empty string 'function.name', "
                f"got {describe(field(field(call, 'function'), 'name'))}",
                position=position,
            )
        found.append((position, call, {"name": name, "id": call_id}))
    return found


def _answer(message: object) -> dict[str, str | None]:
    """A ``tool`` message as the matcher reads a response: the name and the id it answers."""
    if type(message) is dict:
        return {"name": nonempty_str(message.get("tool_name")), "id": nonempty_str(message.get("tool_call_id"))}
    return {"name": _own_id(message, "tool_name"), "id": _own_id(message, "tool_call_id")}


def _answers(messages: Sequence[object], start: int, end: int) -> list[dict[str, str | None]] | None:
    """The items from ``start`` up to ``end`` as responses (``_answer``); ``None``: one is no ``tool`` message."""
    answers: list[dict[str, str | None]] = []
    for message in messages[start:end]:
        if role_of(message) != "tool":
            return None
        answers.append(_answer(message))
    return answers


class OllamaChat(OpenAIChat):
    """The Chat Completions adapter in Ollama's spelling, calls matched by name (see the module docstring)."""

    dialect: Dialect | None = "ollama"

    def read(
        self, messages: Sequence[object], full: Container[int] = (), state: dict[str, object] | None = None
    ) -> View:
        """Assistant messages with calls as turns, other assistant messages replies, ``tool`` messages results.

        A call is keyed by its place in its message, a result by the call it answers. A turn followed by
        exactly one ``tool`` message per call, answering the calls each once (``Matcher.answered``: each by
        its call's own id, or, where no call carries one, by name), is read with them as ``Clean``.
        """
        view = View()
        units, kinds, ids = view.units, view.kinds, view.ids
        matcher = Matcher() if state is None else state.setdefault("matcher", Matcher())
        assert isinstance(matcher, Matcher)  # noqa: S101 - what a stream keeps under that name
        position, stop = 0, len(messages)
        while position < stop:
            message = messages[position]
            if type(message) is dict:
                role, tool_calls = message.get("role"), message.get("tool_calls")
            else:
                role, tool_calls = role_of(message), field(message, "tool_calls")
            if role == "tool":
                (key,) = matcher.responses([_answer(message)])
                ids[len(units)] = key or None
                units.append(message)
                kinds.append(RESULT)
                position += 1
                continue
            if role == "assistant" and tool_calls is not None:
                found = _calls_of(tool_calls, position)
                if found:
                    end = position + 1 + len(found)
                    run = None
                    if position not in full and end <= stop:
                        answers = _answers(messages, position + 1, end)
                        if answers is not None:
                            run = matcher.answered(found, answers)
                    if run is not None:
                        units.append(Clean(position, list(run), end))
                        view.clean_ids.extend(run)
                        kinds.append(CLEAN)
                        position = end
                        continue
                    keys = matcher.turn(position, found)
                    calls = [Call(key, call) for key, (_, call, _) in zip(keys, found, strict=True)]
                    units.append(Turn(position=position, calls=calls, items=(message,)))
                    kinds.append(TURN)
                    position += 1
                    continue
            units.append(message)
            kinds.append(REPLY if role == "assistant" else OTHER)
            position += 1
        return view

    def fits_ids(self, call_ids: Sequence[str]) -> bool:
        """Every key fits: Ollama has no id pattern."""
        del call_ids  # no pattern to fit
        return True

    def derive_id(self, call_id: str, taken: TakenIds) -> str:
        """Never asked (every key fits); the Chat lane's derivation, were it."""
        return super().derive_id(call_id, taken)

    def synthesize(self, call: Call) -> object:
        """A ``tool`` message naming the call's tool, saying it was interrupted (its ``id``, when it has one)."""
        call_id = _own_id(call.ref, "id")
        carried = {"tool_call_id": call_id} if call_id is not None else {}
        return {"role": "tool", "tool_name": _name(call.ref) or "", **carried, "content": INTERRUPTED_RESULT_TEXT}

    def emitted_call_ids(self, item: object) -> tuple[str, ...]:
        """The keys of an assistant message's ``tool_calls``, in order, as ``read`` gives them."""
        if role_of(item) != "assistant" or field(item, "tool_calls") is None:
            return ()
        try:
            found = _calls(item, 0)
        except ToolTurnInputError:
            return ()
        return tuple(Matcher().turn(0, found))

    def validate_stream(self, *, chained: bool = False) -> ValidationStream:
        """The rules the law restores, in neutral words, fed one segment at a time (Ollama enforces none)."""
        del chained  # no server-held state continues this lane's transcript
        return OllamaValidation()


class OllamaValidation:
    """The rules the law restores in Ollama's spelling, over a transcript fed in segments (``ValidationStream``).

    Between segments it holds the ``Matcher`` (which call each ``tool`` message answers), the keys of the
    last assistant message's calls not yet answered and those answered, their names, where that message
    stands, and how many items came before.
    """

    __slots__ = ("_answered", "_batch_at", "_matcher", "_named", "_pending", "fed", "violations")

    def __init__(self) -> None:
        self.fed = 0
        """How many items the segments fed so far hold: the position the next segment starts at."""
        self.violations: list[Violation] = []
        """The rules broken so far, in the order ``validate`` states them."""
        self._matcher = Matcher()
        self._pending: Counter[str] = Counter()  # the keys of the calls right before, not yet answered
        self._named: dict[str, str] = {}  # key -> the call's name, for the words
        self._answered: set[str] = set()
        self._batch_at = 0

    def feed(self, messages: Sequence[object], *, last: bool) -> None:
        """Judge the next segment; ``last``: the transcript ends with it (calls still unanswered are stated)."""
        violations, matcher = self.violations, self._matcher
        pending, named, answered, batch_at = self._pending, self._named, self._answered, self._batch_at
        for position, message in enumerate(messages, self.fed):
            role = role_of(message)
            if role == "tool":
                (key,) = matcher.responses([_answer(message)])
                name = _own_id(message, "tool_name") or _own_id(message, "tool_call_id") or ""
                if key is not None and pending[key] > 0:
                    pending[key] -= 1
                    answered.add(key)
                elif key is not None and key in answered:
                    words = _SECOND_WORDS.format(position=position, name=name)
                    violations.append(Violation(position=position, rule="multiple_tool_messages", message=words))
                else:
                    words = _ORPHAN_WORDS.format(position=position, name=name)
                    violations.append(Violation(position=position, rule="orphan_tool_message", message=words))
                continue
            if +pending:
                violations.append(_unanswered(batch_at, pending, named))
            pending, answered = Counter(), set()
            if role == "assistant" and field(message, "tool_calls") is not None:
                found = _calls(message, position)
                keys = matcher.turn(position, found)
                pending = Counter(dict.fromkeys(keys, 1))  # each key once, in call order
                violations.extend(
                    Violation(
                        position=position,
                        rule="duplicate_tool_call_id",
                        message=_REPEAT_WORDS.format(position=position, call_id=key),
                    )
                    for key, count in Counter(keys).items()
                    if count > 1
                )
                named = {key: _name(call) or key for key, (_, call, _) in zip(keys, found, strict=True)}
                batch_at = position
        if last and +pending:
            violations.append(_unanswered(batch_at, pending, named))
            pending = Counter()
        self.fed += len(messages)
        self._pending, self._named, self._answered, self._batch_at = pending, named, answered, batch_at

    def close(self) -> list[Violation]:
        """The rules the whole transcript breaks, in order: ``validate`` of the whole list."""
        return self.violations


def _unanswered(position: int, pending: Counter[str], named: dict[str, str]) -> Violation:
    names = ", ".join(named[key] for key in pending if pending[key] > 0)
    words = _UNANSWERED_WORDS.format(position=position, names=names)
    return Violation(position=position, rule="missing_tool_messages", message=words)


ADAPTER: Final[OllamaChat] = OllamaChat()
