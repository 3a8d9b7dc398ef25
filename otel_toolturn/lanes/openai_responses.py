"""The OpenAI Responses lane: ``input``, a flat list of items (or a plain string).

Calls are the items the client answers, one kind each (``_SPELLING``): ``function_call``,
``custom_tool_call``, and the calls the agent runs itself — ``local_shell_call``, ``shell_call``,
``apply_patch_call``, ``computer_call``; each is answered by its own output item
(``function_call_output``, ``custom_tool_call_output``, ``local_shell_call_output``,
``shell_call_output``, ``apply_patch_call_output``, ``computer_call_output``), matched by
``call_id``. What an output holds differs by kind, and so do the interrupted close, the fold of two
outputs and the delivery of a late one (see ``synthesize``, ``fold``, ``deliver``); a
``computer_call`` has no honest close (its output is a screenshot), so an unanswered one is left out
with the reasoning right ahead of it (``unanswerable_call``, lossy). A turn is one run of call items,
together with the ``reasoning`` items that stand directly ahead of a call in it; its outputs follow
the run. A call repeating a call id of its run opens the next run (with the reasoning right ahead of
it): one answer of the model never repeats an id, so the repeat is a later answer, and its id is
derived. The same item again (the very object, or one equal to it) is a replay and stays in the run,
where the law leaves it out (``duplicate_call``). A ``reasoning`` item is never separated from the
item right after it: when a call is left out, the reasoning directly ahead of it goes with it
(inside the same lossy repair). Call ids and item ids must be unique in the request; an output may
stand anywhere after its call. Hosted-tool items the server runs and answers itself
(``web_search_call``, ``file_search_call``, ``code_interpreter_call``, ``image_generation_call``,
``mcp_call``, ...) pass through untouched; with assistant messages and reasoning they are what the
model produced (replies). An item that is no
call and no output and repeats an earlier item's ``id``, and a ``reasoning`` item with nothing after
it to belong to, are read as refused where they stand (the law leaves them out, reported).

A call or output item whose ``id`` repeats an earlier item's (a retry that rewrote the ``call_id``
and kept the item id, or an item replayed) is kept, read without that ``id`` (``duplicate_item_id``,
not lossy): the item carries the call and what the model reads, and ``id`` is optional on an input
call or output item, where the API takes an item without one as sent. A derived id instead would name
an item the server never stored, and the server looks an item id up (``Item with id … not found``
when it did not store it). The first item to use an id keeps it and only later repeats lose theirs,
so an item appended later never changes an earlier one.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Final, NamedTuple

from otel_toolturn._view import (
    CLEAN,
    INTERRUPTED_RESULT_TEXT,
    OTHER,
    REPLY,
    RESULT,
    SECOND_RESULT_SEPARATOR,
    TURN,
    Call,
    Clean,
    Emitted,
    Mark,
    Turn,
    UnitKind,
    View,
    Violation,
    field,
    in_place_heading,
    replace,
    without,
)
from otel_toolturn._vocab import CallKind, Lane
from otel_toolturn.lanes import request_parts
from otel_toolturn.lanes._common import (
    call_id_of,
    delivered_parts,
    fold_contents,
    interrupted,
    is_list,
    json_text,
    result_id_of,
)
from otel_toolturn.lanes._defaults import AdapterDefaults


class _Kind(NamedTuple):
    """How one kind of call is spelled on the wire: its call item's type, its output item's type, what it says."""

    call: str
    output: str
    what: str
    """The provider's name for the call in its errors (``No tool output found for <what> <call_id>.``)."""
    request: str | None = None
    """The call item's field holding what it asks for as one object (``None``: ``function_call`` arguments are
    JSON text, streamed in pieces; ``custom_tool_call`` input is free text)."""


_SPELLING: Final[dict[CallKind, _Kind]] = {
    "function": _Kind("function_call", "function_call_output", "function call"),
    "custom": _Kind("custom_tool_call", "custom_tool_call_output", "custom tool call"),
    "local_shell": _Kind("local_shell_call", "local_shell_call_output", "local shell call", "action"),
    "shell": _Kind("shell_call", "shell_call_output", "shell call", "action"),
    "apply_patch": _Kind("apply_patch_call", "apply_patch_call_output", "apply patch call", "operation"),
    "computer": _Kind("computer_call", "computer_call_output", "computer call", "action"),
}
"""Every kind of call the client answers in this lane, and its spelling: the only place it lives."""

CALL_TYPES: Final = tuple(kind.call for kind in _SPELLING.values())
OUTPUT_TYPES: Final = tuple(kind.output for kind in _SPELLING.values())
REQUEST_FIELDS: Final[dict[object, str]] = {
    spelled.call: spelled.request for spelled in _SPELLING.values() if spelled.request is not None
}
"""The call item types whose request is one object, and its field: the calls the agent runs (the stream reads them)."""
_KIND_OF: Final[dict[object, CallKind]] = {spelled.call: kind for kind, spelled in _SPELLING.items()}
"""The kind of call each call item type is."""
_OUTPUT_KIND: Final[dict[object, CallKind]] = {spelled.output: kind for kind, spelled in _SPELLING.items()}
"""The kind of call each output item type answers."""
ID_LIMIT: Final = 64
"""The longest ``call_id`` the API accepts."""
_USER_PARTS: Final = frozenset({"input_text", "input_image", "input_file"})
"""The content parts a user message item holds, where a delivered output stands."""
INTERRUPTED_EXIT_CODE: Final = 130
"""The exit code of the interrupted close of a ``shell_call``: a shell's code for a command ended by an interrupt."""


def _type(item: object) -> object:
    return item.get("type") if type(item) is dict else field(item, "type")


def _call_after(items: Sequence[object], start: int) -> int:
    """Where the reasoning run starting at ``start`` ends (the item after it; ``len(items)`` at the end)."""
    index = start
    while index < len(items) and _type(items[index]) == "reasoning":
        index += 1
    return index


def _opens_next_run(call: object, call_ids: Sequence[str], refs: Sequence[object]) -> bool:
    """Whether a call item ends the run of calls ahead of it (their ids and items) and opens the next one.

    It does when it repeats a call id of the run and is no replay of that call (the same item, or one
    equal to it): one answer of the model never repeats an id, so it is a later answer.
    """
    call_id = call.get("call_id") if type(call) is dict else field(call, "call_id")
    if not (isinstance(call_id, str) and call_id in call_ids):
        return False
    return not any(ref is call or ref == call for known, ref in zip(call_ids, refs, strict=True) if known == call_id)


def _leads_to_call(items: Sequence[object], start: int) -> bool:
    """Whether the reasoning run starting at ``start`` is directly followed by a call item."""
    index = _call_after(items, start)
    return index < len(items) and _type(items[index]) in CALL_TYPES


def _item_id(item: object) -> str:
    """The item's own ``id`` (``fc_…``, ``msg_…``, ``rs_…``), or ``""`` when it has none."""
    value = item.get("id") if type(item) is dict else field(item, "id")
    return value if isinstance(value, str) else ""


def _refuse_dangling_reasoning(view: View) -> None:
    """Refuse each kept reasoning reply that only reasoning, then the end or an output, follows (read from the end)."""
    follows_nothing = True  # what the kept items after this one begin with: nothing, or an output
    for index in range(len(view.units) - 1, -1, -1):
        if index in view.refused:
            continue
        kind = view.kinds[index]
        if kind == REPLY and _type(view.units[index]) == "reasoning":
            if follows_nothing:
                view.refused[index] = Mark("dangling_reasoning", _item_id(view.units[index]))
            continue
        follows_nothing = kind == RESULT


_REPLY_TYPES: Final = frozenset({"reasoning", "mcp_list_tools", "mcp_approval_request"})


def _replied(item: object, kind: object) -> bool:
    """Whether ``item``, whose ``type`` is ``kind``, is a reply: model output that is no call the client answers.

    An assistant message, reasoning, an MCP tool listing or approval request, or a hosted ``*_call``
    item the server answers itself (``web_search_call``, ``mcp_call``, ...). A call of ``_SPELLING``
    is no reply: it is read as a call.
    """
    if kind is None or kind == "message":
        pass
    elif kind in CALL_TYPES:
        return False
    elif isinstance(kind, str) and (kind in _REPLY_TYPES or kind.endswith("_call")):
        return True
    return (item.get("role") if type(item) is dict else field(item, "role")) == "assistant"


def model_made(item: object) -> bool:
    """Whether the model produced a Responses item.

    A call of any kind (``function_call``, ``shell_call``, ``computer_call``, ...), or a reply (see
    ``_replied``). Outside a run, such an item ends a call's window.
    """
    kind = field(item, "type")
    return kind in CALL_TYPES or _replied(item, kind)


def _reasoning_ahead(view: View) -> tuple[object, ...]:
    """Reasoning read as replies that only refused items separate from the run read next: taken into its turn.

    Refused items are left out, so the reasoning stands right ahead of the run's first item: it belongs to it,
    and goes with it if its calls are left out (a computer call nothing answered). The refused units stay
    units of their own, ahead of the turn.
    """
    units, kinds, refused = view.units, view.kinds, view.refused
    start = len(units)
    while start and (start - 1 in refused or (kinds[start - 1] == REPLY and _type(units[start - 1]) == "reasoning")):
        start -= 1
    taken = [index for index in range(start, len(units)) if index not in refused]
    if not taken or len(taken) == len(units) - start:
        return ()  # nothing to take, or nothing refused between (then the reasoning was read as the run's already)
    tail = [(units[index], kinds[index], refused.pop(index, None)) for index in range(start, len(units))]
    del units[start:], kinds[start:]
    for unit, kind, mark in tail:
        if mark is not None:
            refused[len(units)] = mark
            units.append(unit)
            kinds.append(kind)
    return tuple(unit for unit, _, mark in tail if mark is None)


class _Run:
    """A run of call items as ``_read_run`` reads it: its calls (ids and items as read, in order), and its marks.

    ``read_as``: the items read otherwise than they stand (without a repeated ``id``), by position.
    """

    __slots__ = ("call_ids", "marks", "read_as", "refs")

    def __init__(
        self,
        call_ids: list[str],
        refs: list[object],
        marks: list[Mark],
        read_as: dict[int, object],
    ) -> None:
        self.call_ids = call_ids
        self.refs = refs
        self.marks = marks
        self.read_as = read_as

    def items(self, messages: Sequence[object], first: int, end: int) -> tuple[object, ...]:
        """The run's items as read, from ``first`` to ``end``."""
        if not self.read_as:
            return tuple(messages[first:end])
        return tuple(self.read_as.get(position, messages[position]) for position in range(first, end))


def _read_run(messages: Sequence[object], first: int, seen: set[str]) -> tuple[int, _Run] | None:
    """The run of call items (and the reasoning ahead of each) from ``first``: where it ends, and the run.

    A run ends at its last call: reasoning after it belongs to what follows. ``None``: no call is read
    from ``first`` (reasoning whose call is kept from it by a replayed item), so ``first`` is no run.
    ``seen`` (the item ids so far) gains the run's ids. A call item repeating an earlier item's ``id``
    is read without it (``duplicate_item_id``), unless it repeats a call id of its own run.
    """
    call_ids: list[str] = []
    run_ids: set[str] = set()  # the same ids, to look one up
    refs: list[object] = []
    marks: list[Mark] = []
    read_as: dict[int, object] = {}
    added: list[str] = []
    end = index = first
    after = first  # where the reasoning stretch around ``index`` ends: read once per stretch
    while index < len(messages):
        inner = messages[index]
        if type(inner) is dict:
            kind, inner_id = inner.get("type"), inner.get("id")
        else:
            kind, inner_id = field(inner, "type"), field(inner, "id")
        if kind not in CALL_TYPES and kind != "reasoning":
            break
        if not isinstance(inner_id, str):
            inner_id = ""
        if kind in CALL_TYPES:
            call_id = inner.get("call_id") if type(inner) is dict else None
            if type(call_id) is not str or not call_id:
                call_id = call_id_of(inner, "call_id", index, f"{kind} item")
            if call_id in run_ids and _opens_next_run(inner, call_ids, refs):
                break
            if inner_id in seen and call_id not in run_ids:
                marks.append(Mark("duplicate_item_id", call_id, _KIND_OF.get(kind, "function")))
                inner = read_as[index] = without(inner, "id", index)
            call_ids.append(call_id)
            run_ids.add(call_id)
            refs.append(inner)
            end = index + 1
        else:
            if after <= index:
                after = _call_after(messages, index)
            if (
                after == len(messages)
                or _type(messages[after]) not in CALL_TYPES
                or inner_id in seen
                or _opens_next_run(messages[after], call_ids, refs)
            ):
                break
        if inner_id and inner_id not in seen:
            seen.add(inner_id)
            added.append(inner_id)
        index += 1
    if not call_ids:
        seen.difference_update(added)
        return None
    for item in messages[end:index]:  # reasoning after the last call: not the run's
        seen.discard(_item_id(item))
    return end, _Run(call_ids, refs, marks, read_as)


def _clean_turn(messages: Sequence[object], first: int, seen: set[str]) -> Clean | None:
    """The run of call items from ``first`` (a call or a reasoning item) with its outputs, as one ``Clean`` unit.

    ``None``: it is not clean. Clean: the run (call items, and reasoning ahead of a call) ends at a call, its call
    ids are distinct, and the items right after it are exactly one output item per call, each answering one of them;
    no item ``id`` of the run or its outputs repeats another or one of ``seen`` (the item ids so far). Then
    ``_read_run`` reads the same run with nothing marked, and ``seen`` gains the ids; otherwise ``seen`` is left as
    it was. Run and outputs are read in one pass.
    """
    call_ids: list[str] = []  # the run's, in order
    answered: list[str] = []  # the call ids the outputs after the run answer, in order
    item_ids: list[str] = []
    run_end = first  # where the run ends if the next item is no call and no reasoning
    for index in range(first, len(messages)):
        item = messages[index]
        if type(item) is dict:
            kind, call_id, item_id = item.get("type"), item.get("call_id"), item.get("id")
        else:
            kind, call_id, item_id = field(item, "type"), field(item, "call_id"), field(item, "id")
        if item_id is not None and isinstance(item_id, str) and item_id:
            item_ids.append(item_id)
        if not answered:  # still in the run
            if kind in CALL_TYPES:
                if not (isinstance(call_id, str) and call_id):
                    return None  # unreadable: the run is read in full, which refuses it
                call_ids.append(call_id)
                run_end = index + 1
                continue
            if kind == "reasoning":
                continue
            if run_end != index:
                return None  # reasoning after the last call
        if kind not in OUTPUT_TYPES or type(call_id) is not str:
            return None
        answered.append(call_id)
        if len(answered) == len(call_ids):
            break
    else:
        return None  # the list ends before every call is answered
    if answered != call_ids:
        expected = set(call_ids)
        if len(expected) != len(call_ids) or set(answered) != expected:
            return None  # as many outputs as distinct calls, and every call answered: one output each
    elif len(call_ids) > 1 and len(set(call_ids)) != len(call_ids):
        return None
    if item_ids:
        if not seen.isdisjoint(item_ids) or len(set(item_ids)) != len(item_ids):
            return None
        seen.update(item_ids)
    return Clean(first, call_ids, index + 1)


def _read_turn(view: View, messages: Sequence[object], first: int, seen: set[str]) -> int:
    """Read the run of call items at ``first`` (a call, or reasoning ahead of one) into ``view`` as a ``Turn``.

    Where the run ends; ``first``: no run stands there (reasoning no call follows, or whose call a replayed
    item keeps from it). ``seen`` gains the run's item ids.
    """
    if _type(messages[first]) == "reasoning" and not _leads_to_call(messages, first):
        return first
    read = _read_run(messages, first, seen)
    if read is None:
        return first
    end, run = read
    calls = [Call(call_id, ref) for call_id, ref in zip(run.call_ids, run.refs, strict=True)]
    items = (*_reasoning_ahead(view), *run.items(messages, first, end))
    view.units.append(Turn(position=first, calls=calls, items=items, marks=tuple(run.marks)))
    view.kinds.append(TURN)
    return end


class OpenAIResponses(AdapterDefaults):
    """Reads and writes the Responses ``input`` list for the law."""

    lane: Lane = "openai.responses"
    id_limit = ID_LIMIT
    unique_ids = True
    results_anywhere = True

    def read(
        self, messages: Sequence[object], full: Container[int] = (), state: dict[str, object] | None = None
    ) -> View:
        """Runs of call items (with their reasoning) as turns; each output item a result; model output replies.

        A run with distinct call ids and nothing marked, followed by exactly one output item per call, is
        read with them as ``Clean``. Refused where they stand: an item that is no call and no output and
        repeats an earlier item's ``id`` (a replayed reasoning item ends the run it stood in), and reasoning
        that only reasoning, then the end or an output, follows. A call or output item that repeats an
        earlier item's ``id`` is read without it, marked ``duplicate_item_id`` (a call that repeats a call
        id of its own run is left whole: the law leaves it out).
        """
        view = View()
        units, kinds, ids = view.units, view.kinds, view.ids
        seen: set[str] = set() if state is None else state.setdefault("seen", set())  # type: ignore[assignment]
        # the item ids so far (a stream's: those of its earlier segments too)
        reasoning = False  # whether a reasoning item is read as a reply
        no_run_until = 0  # the end of a stretch of reasoning that no call follows
        index, stop = 0, len(messages)
        while index < stop:
            item = messages[index]
            if type(item) is dict:
                kind, item_id, role = item.get("type"), item.get("id"), item.get("role")
            else:
                kind, item_id, role = field(item, "type"), field(item, "id"), field(item, "role")
            if item_id is not None and not isinstance(item_id, str):
                item_id = None  # an id that is no string is no id
            if (kind is None or kind == "message") and not (item_id and item_id in seen):
                if item_id:
                    seen.add(item_id)
                units.append(item)
                kinds.append(REPLY if role == "assistant" else OTHER)
                index += 1
                continue
            if kind == "reasoning" and index >= no_run_until:
                after = _call_after(messages, index)
                if after == stop or _type(messages[after]) not in CALL_TYPES:
                    no_run_until = after  # reasoning no call follows opens no run: each item is read alone
            if kind in CALL_TYPES or (
                kind == "reasoning" and index >= no_run_until and not (item_id and item_id in seen)
            ):
                clean = None if index in full else _clean_turn(messages, index, seen)
                if clean is not None:
                    units.append(clean)
                    kinds.append(CLEAN)
                    view.clean_ids.extend(clean.ids)
                    index = clean.end
                    continue
                end = _read_turn(view, messages, index, seen)
                if end != index:
                    index = end
                    continue
            if kind in OUTPUT_TYPES:
                call_id = result_id_of(item, "call_id")
                if item_id in seen:
                    answering = _OUTPUT_KIND.get(kind, "function")
                    view.marks[len(units)] = Mark("duplicate_item_id", call_id or "", answering)
                    item = without(item, "id", index)
                elif item_id:
                    seen.add(item_id)
                ids[len(units)] = call_id
                units.append(item)
                kinds.append(RESULT)
                index += 1
                continue
            if item_id and item_id in seen:  # no call: a call item always reads a run
                view.refused[len(units)] = Mark("duplicate_item", item_id)
                units.append(item)
                kinds.append(REPLY if _replied(item, kind) else OTHER)
                index += 1
                continue
            if item_id:
                seen.add(item_id)
            units.append(item)
            kinds.append(REPLY if _replied(item, kind) else OTHER)
            reasoning = reasoning or kind == "reasoning"
            index += 1
        if reasoning:
            _refuse_dangling_reasoning(view)
        return view

    def interrupted(self, result: object) -> bool:
        """Whether the output is an interrupted close: its text (a shell output: its one chunk's ``stderr``) says so.

        A ``computer_call_output`` is never one: it holds a screenshot.
        """
        output = field(result, "output")
        kind = _answers(result)
        if kind == "computer":
            return False
        if kind == "shell":
            chunks = output if is_list(output) else ()
            return len(chunks) == 1 and not field(chunks[0], "stdout") and interrupted(field(chunks[0], "stderr"))
        return interrupted(output)

    def write_turn(
        self, items: tuple[object, ...], position: int, calls: Sequence[tuple[object, object]], *, trailing: bool
    ) -> list[object]:
        """The run's items in order with left-out calls (and the reasoning right ahead of them) removed."""
        del position, trailing  # a run is rewritten item by item; nothing trails a call in it
        out: list[object] = []
        changed = False
        kept = 0  # the kept calls are matched in order, so one object twice in the run is kept once
        for item in items:
            if _type(item) not in CALL_TYPES:
                out.append(item)
                continue
            if kept < len(calls) and calls[kept][0] is item:
                new = calls[kept][1]
                kept += 1
                changed = changed or new is not item
                out.append(new)
                continue
            changed = True
            while out and _type(out[-1]) == "reasoning":
                out.pop()
        return out if changed else list(items)

    def rename_call(self, call: Call, new_id: str) -> Call:
        """The call item under ``new_id``; its item ``id`` as read (a repeated one was already removed)."""
        return Call(call_id=new_id, ref=replace(call.ref, call_id=new_id))

    def rename_result(self, result: object, new_id: str) -> object:
        """The output item answering ``new_id``."""
        if type(result) is _Screenshots:
            return _Screenshots(replace(result.first, call_id=new_id), result.later)
        return replace(result, call_id=new_id)

    def call_kind(self, call: object) -> CallKind:
        """The kind of call the call item's ``type`` names."""
        return _KIND_OF.get(_type(call), "function")

    def synthesize(self, call: Call) -> object | None:
        """An output of the call's kind saying it was interrupted, its outcome unknown; ``None`` for a computer call.

        ``local_shell_call_output``: the text as ``output`` (under ``call_id``, which the API matches, not
        the ``id`` its published type names); ``shell_call_output``: one chunk, no stdout, the text as
        stderr, and the outcome ``exit`` with code 130 — what a shell reports for a command ended by an
        interrupt; ``timeout`` would claim the command ran into its time limit, which nothing recorded
        says; ``apply_patch_call_output``: ``status`` ``failed`` (the patch is not known to have applied)
        with the text as ``output``. A ``computer_call_output`` holds only a screenshot of the screen
        after the action, which cannot be made up: there is no honest close, and the call is left out.
        """
        kind = _KIND_OF.get(_type(call.ref), "function")
        if kind == "computer":
            return None
        close: dict[str, object] = {"type": _SPELLING[kind].output, "call_id": call.call_id}
        if kind == "shell":
            outcome = {"type": "exit", "exit_code": INTERRUPTED_EXIT_CODE}
            close["output"] = [{"stdout": "", "stderr": INTERRUPTED_RESULT_TEXT, "outcome": outcome}]
            return close
        if kind == "apply_patch":
            close["status"] = "failed"
        close["output"] = INTERRUPTED_RESULT_TEXT
        return close

    def fold(self, results: Sequence[object]) -> object:
        """One output item of the first's kind holding every output, first first, in that kind's schema.

        Function and custom outputs: contents joined by the separator (a list of parts when any is one);
        a local shell output, or an apply-patch output's text: texts joined by the separator on a line
        of its own, an apply-patch ``status`` ``failed`` when any was; shell outputs: their chunks in
        order, a chunk between two outputs carrying the separator as its ``stderr`` with the outcome of
        the chunk before it (so no outcome is made up). A computer output holds one screenshot, so two
        cannot be one item: the first stays the output, and each later screenshot is delivered right
        after it in a user message, named by the separator (``write`` lays it out).
        """
        first = results[0]
        outputs = [field(r, "output") for r in results]
        kind = _answers(first)
        if kind == "shell":
            return replace(first, output=_shell_chunks(outputs))
        if kind == "local_shell":
            return replace(first, output=_joined(outputs))
        if kind == "apply_patch":
            failed = any(field(r, "status") == "failed" for r in results)
            return replace(first, output=_joined(outputs), status="failed" if failed else field(first, "status"))
        if kind == "computer":
            return _Screenshots(first, tuple(results[1:]))
        return replace(first, output=fold_contents(outputs, _input_text))

    def call_name(self, call: object) -> str:
        """The item's ``name``; a call with none (shell, patch, computer) is named by its type."""
        name = field(call, "name")
        return name if isinstance(name, str) else str(_type(call))

    def deliver(self, result: object, call_id: str, name: str, *, second: bool) -> tuple[UnitKind, object]:
        """A user message item: a line naming the call, then the output.

        Parts a user message holds (``input_text``, ``input_image``, ``input_file``) are kept as parts,
        any other part (or an output that is no string and no list) as an ``input_text`` of its JSON: a
        shell output's chunks so become text; a computer output's screenshot an ``input_image``; an
        apply-patch output that failed is named an error.
        """
        output = field(result, "output")
        failed = _answers(result) == "apply_patch" and field(result, "status") == "failed"
        heading = in_place_heading(call_id, name, second=second, error=failed)
        if _answers(result) == "computer":
            output = [_screenshot_part(output)]
        content = delivered_parts(heading, output, _USER_PARTS, "input_text")
        return OTHER, {"type": "message", "role": "user", "content": content}

    def write(self, out: Emitted) -> list[object]:
        """Every emitted item is one whole item; folded screenshots are laid out as ``fold`` says."""
        if not any(type(item) is _Screenshots for item in out.items):
            return out.items
        written: list[object] = []
        for item in out.items:
            if type(item) is _Screenshots:
                written.extend(item.items())
            else:
                written.append(item)
        return written

    def validate(self, messages: Sequence[object], *, chained: bool = False) -> list[Violation]:
        """The Responses API's rules, in its own words (``chained``: outputs may answer server-held calls).

        A call with no output, or an output with no call, is named by its kind as the API names it
        (``_Kind.what``: ``No tool output found for local shell call …``).
        """
        stream = self.validate_stream(chained=chained)
        stream.feed(messages, last=True)
        return stream.close()

    def validate_stream(self, *, chained: bool = False) -> ResponsesValidation:
        """``validate`` fed one segment of ``input`` at a time (``ResponsesValidation``)."""
        return ResponsesValidation(chained=chained)

    transcript_field: str = "input"

    def system_pieces(
        self, request: request_parts.Request, transcript: Sequence[request_parts.SystemPromptPiece] | None = None
    ) -> tuple[request_parts.SystemPromptPiece, ...]:
        """``instructions``, then each ``system`` or ``developer`` message item of ``input`` (``transcript``: read)."""
        instructions = request_parts.text_pieces(request.get("instructions"), "instructions")
        return (*instructions, *request_parts.request_transcript_pieces(request, self.transcript_field, transcript))

    def continues_server_state(self, request: request_parts.Request) -> bool:
        """A truthy ``previous_response_id`` or ``conversation`` (``None``, ``""``, the SDK's "not given": none)."""
        return any(bool(request.get(key)) for key in SERVER_STATE_FIELDS)

    def is_model_output(self, item: object) -> bool:
        """An assistant message item, a ``reasoning`` item or any ``*_call`` item (``model_made``)."""
        return model_made(item)

    def emitted_call_ids(self, item: object) -> tuple[str, ...]:
        """A client call item's ``call_id`` (``function_call``, ``custom_tool_call``, ``shell_call``, ...)."""
        call_id = field(item, "call_id") if field(item, "type") in CALL_TYPES else None
        return (call_id,) if isinstance(call_id, str) else ()

    def speaks_as_user(self, message: object) -> bool:
        """A ``user`` message item with text (a string, or an ``input_text`` part)."""
        if field(message, "role") != "user" or field(message, "type") not in (None, "message"):
            return False
        return request_parts.has_text(field(message, "content"))

    @property
    def handoff(self) -> request_parts.HandoffWire:
        """The lane's handoff spelling (``HANDOFF``)."""
        return HANDOFF

    string_input: bool = True
    sdk_listed_parameters: tuple[tuple[str, str], ...] = (("input", "openai_list"), ("tools", "openai_iterable"))
    sdk_listed_item_fields: tuple[str, ...] = ("output",)
    head_settings: tuple[str, ...] = ("instructions", "tools")

    cli_alias: str = "responses"

    def claims_body(self, body: request_parts.Request, transcript_field: str | None) -> bool:
        """A body whose transcript is its ``input``."""
        del body
        return transcript_field == self.transcript_field

    def claims_item(self, item: request_parts.Item) -> bool:
        """A Responses item: a call or output of any kind, reasoning, a hosted tool call or an item reference."""
        return request_parts.kind_of(item) in _CLAIMED_ITEMS


class ResponsesValidation:
    """The Responses API's rules over ``input`` fed one segment at a time (``_view.ValidationStream``).

    Kept across a cut: the item ids so far; the call ids so far, each with its call's position and what the
    API calls it until an output answers it; the call ids outputs answered that no call had yet; the rules
    broken so far; where the next segment starts; and a ``reasoning`` item ending a segment (its position
    and id) until the item after it is read. A call no output answered when the transcript ends is
    ``missing_output``.
    """

    __slots__ = ("_calls", "_chained", "_item_ids", "_offset", "_outputs", "_reasoning", "_violations")

    def __init__(self, *, chained: bool = False) -> None:
        self._chained = chained
        self._violations: list[Violation] = []
        self._calls: dict[str, tuple[int, str] | None] = {}
        """Call id -> its call's position and what the API calls it; ``None`` once an output answered it."""
        self._outputs: set[str] = set()
        """The call ids an output answered while no call had them (an id-less output's as ``"None"``)."""
        self._item_ids: set[str] = set()
        self._offset = 0
        self._reasoning: tuple[int, object] | None = None

    def feed(self, messages: Sequence[object], *, last: bool) -> None:
        """Judge the next segment; ``last``: ``input`` ends with it."""
        violations, calls, outputs, item_ids = self._violations, self._calls, self._outputs, self._item_ids
        chained, offset, stop = self._chained, self._offset, len(messages)
        if self._reasoning is not None:
            at, reasoning_id = self._reasoning
            self._reasoning = None
            if not stop or _type(messages[0]) in OUTPUT_TYPES:
                violations.append(_no_following_item(at, reasoning_id))
        for index, item in enumerate(messages):
            position = offset + index
            kind = _type(item)
            item_id = field(item, "id")
            if isinstance(item_id, str) and item_id:
                if item_id in item_ids:
                    violations.append(_duplicate(position, item_id))
                item_ids.add(item_id)
            if kind == "reasoning":
                if index + 1 == stop and not last:
                    self._reasoning = (position, item_id)  # judged by the item after it, in the next segment
                elif not (index + 1 < stop and _type(messages[index + 1]) not in OUTPUT_TYPES):
                    violations.append(_no_following_item(position, item_id))
            call_id = field(item, "call_id")
            if kind in (*CALL_TYPES, *OUTPUT_TYPES) and isinstance(call_id, str) and len(call_id) > ID_LIMIT:
                violations.append(
                    Violation(
                        position=position,
                        rule="call_id_too_long",
                        message=f"Invalid 'input[{position}].call_id': string too long. Expected a string with "
                        f"maximum length {ID_LIMIT}, but got a string with length {len(call_id)} instead.",
                    )
                )
            if kind in (*CALL_TYPES, *OUTPUT_TYPES) and call_id is not None and not isinstance(call_id, str):
                violations.append(_invalid_type(position, "call_id", call_id))
            elif kind in CALL_TYPES:
                key = str(call_id)  # an id-less call is kept as "None", and never found a duplicate
                if call_id in calls:
                    violations.append(_duplicate(position, key))
                elif key in outputs or (key in calls and calls[key] is None):
                    calls[key] = None  # an output before it answered it
                else:
                    calls[key] = (position, _SPELLING[_KIND_OF.get(kind, "function")].what)
            elif kind in OUTPUT_TYPES:
                if call_id in outputs or (isinstance(call_id, str) and call_id in calls and calls[call_id] is None):
                    violations.append(
                        Violation(
                            position=position,
                            rule="multiple_outputs",
                            message=f"Duplicate item found with id {call_id}. Remove duplicate items from your "
                            "input and try again.",
                        )
                    )
                elif call_id not in calls and not chained:
                    violations.append(
                        Violation(
                            position=position,
                            rule="orphan_output",
                            message=f"No tool call found for {_SPELLING[_answers(item)].what} output "
                            f"with call_id {call_id}.",
                        )
                    )
                if isinstance(call_id, str) and call_id in calls:
                    calls[call_id] = None
                else:
                    outputs.add(str(call_id))  # an id-less output is kept as "None", as an id-less call is
        self._offset = offset + stop

    def close(self) -> list[Violation]:
        """Every rule ``input`` breaks, in order of position: exactly ``validate`` of the whole list."""
        missing = [
            Violation(
                position=position,
                rule="missing_output",
                message=f"No tool output found for {what} {call_id}.",
            )
            for call_id, pending in self._calls.items()
            if pending is not None and call_id not in self._outputs  # an id-less output answers an id-less call
            for position, what in (pending,)
        ]
        return sorted([*self._violations, *missing], key=lambda v: v.position)


def _no_following_item(position: int, item_id: object) -> Violation:
    return Violation(
        position=position,
        rule="reasoning_without_following_item",
        message=f"Item '{item_id}' of type 'reasoning' was provided without its required following item.",
    )


def _answers(result: object) -> CallKind:
    """The kind of call an output item answers, by its ``type``."""
    return _OUTPUT_KIND.get(_type(result), "function")


def _input_text(text: str) -> object:
    return {"type": "input_text", "text": text}


def _joined(outputs: Sequence[object]) -> str:
    """Texts (anything else as its JSON, none as empty) joined by the separator on a line of its own."""
    texts = ["" if output is None else output if isinstance(output, str) else json_text(output) for output in outputs]
    return f"\n{SECOND_RESULT_SEPARATOR}\n".join(texts)


def _shell_chunks(outputs: Sequence[object]) -> list[object]:
    """Shell outputs' chunks in order, a separator chunk between two (see ``OpenAIResponses.fold``)."""
    chunks: list[object] = []
    for number, output in enumerate(outputs):
        own = list(output) if is_list(output) else [] if output is None else [output]
        if number:
            before = field(chunks[-1], "outcome") if chunks else None
            after = field(own[0], "outcome") if own else None
            outcome = before or after or {"type": "exit", "exit_code": INTERRUPTED_EXIT_CODE}
            chunks.append({"stdout": "", "stderr": SECOND_RESULT_SEPARATOR, "outcome": outcome})
        chunks.extend(own)
    return chunks


def _screenshot_part(output: object) -> object:
    """A computer output's screenshot as an ``input_image`` part (its ``image_url`` or ``file_id``); else as it is."""
    if field(output, "type") == "computer_screenshot":
        for key in ("image_url", "file_id"):
            value = field(output, key)
            if isinstance(value, str) and value:
                return {"type": "input_image", "detail": "auto", key: value}
    return output


class _Screenshots:
    """Computer outputs of one call, folded: the first stays the output, each later one is delivered after it."""

    __slots__ = ("first", "later")

    def __init__(self, first: object, later: tuple[object, ...]) -> None:
        self.first = first
        self.later = later

    def items(self) -> list[object]:
        """The first output, then a user message per later one: the separator naming the call, then its screenshot."""
        call_id = field(self.first, "call_id")
        heading = f"{SECOND_RESULT_SEPARATOR} (computer call {call_id})"
        items = [self.first]
        for result in self.later:
            parts = delivered_parts(heading, [_screenshot_part(field(result, "output"))], _USER_PARTS, "input_text")
            items.append({"type": "message", "role": "user", "content": parts})
        return items


_JSON_TYPES: Final = ((bool, "a boolean"), (int, "an integer"), (float, "a decimal"), ((list, tuple), "an array"))


def _invalid_type(position: int, key: str, value: object) -> Violation:
    """A field of the wrong JSON type, refused in OpenAI's words (never the value itself)."""
    got = next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "an object")
    return Violation(
        position=position,
        rule="invalid_type",
        message=f"Invalid type for 'input[{position}].{key}': expected a string, but got {got} instead.",
    )


def _duplicate(position: int, item_id: str) -> Violation:
    return Violation(
        position=position,
        rule="duplicate_item",
        message=f"Duplicate item found with id {item_id}. Remove duplicate items from your input and try again.",
    )


ADAPTER: Final[OpenAIResponses] = OpenAIResponses()


SERVER_STATE_FIELDS: Final = ("previous_response_id", "conversation")
"""The request fields that name state the server holds."""


_OUTPUT_OF: Final = dict(zip(CALL_TYPES, OUTPUT_TYPES, strict=True))


class ResponsesHandoff(request_parts.ResultAfterBatch):
    """The Responses spelling of a handoff's shapes: the last run of model-output items and its call items."""

    def carrier(self, messages: Sequence[object]) -> request_parts.Carrier | None:
        """The last run of model-output items (``model_made``) and its client call items, in order."""
        end = next((i for i in range(len(messages) - 1, -1, -1) if model_made(messages[i])), None)
        if end is None:
            return None
        start = end
        while start > 0 and model_made(messages[start - 1]):
            start -= 1
        calls = tuple(
            request_parts.WireCall(
                name=request_parts.text_or_empty(field(item, "name")),
                call_id=request_parts.text_or_empty(field(item, "call_id")),
                position=position,
                slot=None,
                kind=str(field(item, "type")),
            )
            for position, item in enumerate(messages[start : end + 1], start)
            if field(item, "type") in CALL_TYPES
        )
        return request_parts.Carrier(start=start, end=end, calls=calls)

    def is_plain_assistant(self, message: object) -> bool:
        """An assistant message item."""
        return field(message, "role") == "assistant" and field(message, "type") in (None, "message")

    def holds_results(self, message: object) -> bool:
        """An output item of any call kind."""
        return field(message, "type") in OUTPUT_TYPES

    def error_result(self, call: request_parts.WireCall, text: str) -> object:
        """The output item answering the call's kind (``function_call_output`` for a kind it does not know)."""
        return {"type": _OUTPUT_OF.get(call.kind, "function_call_output"), "call_id": call.call_id, "output": text}

    def without_call(
        self, messages: Sequence[object], carrier: request_parts.Carrier, call: request_parts.WireCall
    ) -> list[object]:
        """The call item removed with the ``reasoning`` items right ahead of it (within the run)."""
        start = call.position
        while start > carrier.start and field(messages[start - 1], "type") == "reasoning":
            start -= 1
        return [*messages[:start], *messages[call.position + 1 :]]


HANDOFF: Final[ResponsesHandoff] = ResponsesHandoff()


_CLAIMED_ITEMS: Final = frozenset(
    {
        *CALL_TYPES,
        *OUTPUT_TYPES,
        "reasoning",
        "web_search_call",
        "file_search_call",
        "mcp_call",
        "item_reference",
    }
)
"""Item types only a Responses transcript holds (a body read without its lane is claimed by them)."""
