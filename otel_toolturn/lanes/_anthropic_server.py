"""Anthropic server tools and MCP blocks: which use each result answers, and the close of an open use.

One reading, shared by the lane's ``read`` and its ``validate``. A server tool use (``server_tool_use``:
web search, web fetch, code execution, tool search, advisor, …) or an MCP tool use (``mcp_tool_use``)
is answered by the server in the SAME assistant turn, by its result block (``web_search_tool_result``,
…, ``mcp_tool_result``) carrying the use's id in ``tool_use_id``. The API combines consecutive
assistant messages into one turn first, so a ``pause_turn`` continuation sent as another assistant
message answers the uses the paused message left open.

The *run* of an assistant message is the consecutive assistant messages around it, ending after the
first one that holds a client ``tool_use`` (its results, or the law's closes, always follow it). In a run:

- a use whose result block follows it is answered (a result answers every use of its id before it);
  one without is *open*: valid where the run ends
  the list (a ``pause_turn`` response sent back to be continued), otherwise closed right after the use
  by the tool's error result (``error_code: "unavailable"``; MCP: ``is_error`` with the interrupted
  text), reported as ``missing_result`` (not lossy);
- a result block with no earlier use of its id (of its family: a server result answers a
  ``server_tool_use``, an ``mcp_tool_result`` an ``mcp_tool_use``) is left out (``orphan_result``,
  lossy). A second result for an answered use answers a use too and stays as it is (the README's
  Limitations).

Reading a message reads the run behind it (for orphans) and ahead of it up to the run's end (for open
uses): what stands up to the next non-assistant message, so it is append-stable as the law requires.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from otel_toolturn._view import INTERRUPTED_RESULT_TEXT, Mark, Violation, field
from otel_toolturn._vocab import CallKind
from otel_toolturn.lanes._common import call_id_of, is_list, result_id_of, role_of

SERVER_USE: Final = "server_tool_use"
MCP_USE: Final = "mcp_tool_use"
MCP_RESULT: Final = "mcp_tool_result"

RESULT_OF: Final = {
    "web_search": "web_search_tool_result",
    "web_fetch": "web_fetch_tool_result",
    "code_execution": "code_execution_tool_result",
    "bash_code_execution": "bash_code_execution_tool_result",
    "text_editor_code_execution": "text_editor_code_execution_tool_result",
    "tool_search_tool_regex": "tool_search_tool_result",
    "tool_search_tool_bm25": "tool_search_tool_result",
    "advisor": "advisor_tool_result",
}
"""The result block of each server tool the SDK lists (any other ``name`` is answered by ``<name>_tool_result``)."""

PLAIN: Final = frozenset({"text", "thinking", "redacted_thinking", "image", "document", "tool_use", "tool_result"})
"""Blocks that are surely no server block: a message of only these costs one lookup per block."""


SERVED: Final = frozenset({SERVER_USE, MCP_USE, MCP_RESULT, *RESULT_OF.values()})
"""The server and MCP block types the SDK lists (any other ``*_tool_result`` but ``tool_result`` is one too)."""


def served(kind: str) -> bool:
    """Whether a block's ``type`` is a server or MCP tool use or result."""
    return kind in SERVED or (kind not in PLAIN and kind.endswith("_tool_result"))


def family(kind: object) -> CallKind | None:
    """``server_tool`` or ``mcp`` for a server or MCP use or result block's ``type``; ``None`` for any other."""
    if type(kind) is not str or not served(kind):
        return None
    return "mcp" if kind in (MCP_USE, MCP_RESULT) else "server_tool"


def _kind(block: object) -> object:
    return block.get("type") if type(block) is dict else field(block, "type")


def _is_use(kind: object) -> bool:
    return kind in (SERVER_USE, MCP_USE)


def _content(message: object) -> Sequence[object]:
    content = field(message, "content")
    return content if is_list(content) else ()


def _calls_client(content: Sequence[object]) -> bool:
    return any(_kind(block) == "tool_use" for block in content)


def _run_uses(messages: Sequence[object], position: int) -> set[tuple[CallKind, str]]:
    """The uses (family, id) in the messages of the run ahead of ``position``."""
    uses: set[tuple[CallKind, str]] = set()
    index = position - 1
    while index >= 0 and role_of(messages[index]) == "assistant":
        content = _content(messages[index])
        if _calls_client(content):
            break  # it ends the run before this one
        for block in content:
            kind = _kind(block)
            if _is_use(kind):
                use_id = result_id_of(block, "id")
                if use_id is not None:
                    uses.add(("mcp" if kind == MCP_USE else "server_tool", use_id))
        index -= 1
    return uses


def _run_answers(messages: Sequence[object], position: int) -> set[tuple[CallKind, str]] | None:
    """The results (family, id) in the messages of the run after ``position``; ``None``: the run ends the list.

    A run that ends with a message holding a client ``tool_use`` is followed by its results, never the end.
    """
    answers: set[tuple[CallKind, str]] = set()
    for index in range(position + 1, len(messages)):
        message = messages[index]
        if role_of(message) != "assistant":
            return answers
        content = _content(message)
        for block in content:
            kind = _kind(block)
            found = family(kind)
            if found is not None and not _is_use(kind):
                answer_id = result_id_of(block, "tool_use_id")
                if answer_id is not None:
                    answers.add((found, answer_id))
        if _calls_client(content):
            return answers
    return None


def close(use: object, position: int) -> object:
    """The error result block answering an open use: the tool's ``unavailable`` error, or an MCP error result."""
    use_id = call_id_of(use, "id", position, f"{_kind(use)} block")
    if _kind(use) == MCP_USE:
        return {"type": MCP_RESULT, "tool_use_id": use_id, "is_error": True, "content": INTERRUPTED_RESULT_TEXT}
    return {
        "type": result_type(use),
        "tool_use_id": use_id,
        "content": {"type": f"{result_type(use)}_error", "error_code": "unavailable"},
    }


def result_type(use: object) -> str:
    """The result block type that answers a use (``mcp_tool_result`` for an MCP use)."""
    if _kind(use) == MCP_USE:
        return MCP_RESULT
    name = field(use, "name")
    return RESULT_OF.get(name, f"{name}_tool_result") if isinstance(name, str) else "server_tool_result"


def _paired(served: Sequence[object]) -> bool:
    """Whether the blocks are uses each followed at once by its own result, as the API writes them (nothing to do)."""
    blocks = iter(served)
    for use in blocks:
        result = next(blocks, None)
        if type(use) is not dict or type(result) is not dict:
            return False
        use_id, kind, answer = use.get("id"), use.get("type"), result.get("type")
        if type(use_id) is not str or not use_id or use_id != result.get("tool_use_id"):
            return False
        if kind == "server_tool_use":
            if answer in ("server_tool_use", "mcp_tool_use", "mcp_tool_result"):
                return False
        elif kind != "mcp_tool_use" or answer != "mcp_tool_result":
            return False
    return True


def restore(
    messages: Sequence[object],
    position: int,
    content: Sequence[object],
    served: Sequence[object],
    *,
    calls_client: bool,
) -> tuple[list[object], tuple[Mark, ...]] | None:
    """The blocks of the assistant message at ``position`` with its open uses closed and its orphans left out.

    ``served``: the message's server and MCP blocks, in order (the lane's reading gathers them while it
    reads the message). ``None``: nothing to restore. Otherwise the blocks (the originals where they stay)
    and a mark per restored id, in block order: ``missing_result`` for a use closed, ``orphan_result`` for
    a result left out.
    """
    if _paired(served):
        return None
    behind: set[tuple[CallKind, str]] | None = None
    uses: dict[tuple[CallKind, str], list[object]] = {}  # each key's uses no result has answered yet
    orphans: list[object] = []
    marks: list[Mark] = []
    for block in served:
        if type(block) is dict:
            kind, use_id, answer_id = block.get("type"), block.get("id"), block.get("tool_use_id")
        else:
            kind, use_id, answer_id = field(block, "type"), None, field(block, "tool_use_id")
        found: CallKind = "mcp" if kind in (MCP_USE, MCP_RESULT) else "server_tool"
        if kind in (SERVER_USE, MCP_USE):
            if type(use_id) is not str or not use_id:
                use_id = call_id_of(block, "id", position, f"{kind} block")
            key = (found, use_id)
            if key in uses:
                uses[key].append(block)
            else:
                uses[key] = [block]
            continue
        if type(answer_id) is not str or not answer_id:
            answer_id = None
        key = (found, answer_id or "")
        if key in uses:
            uses[key] = []
            continue
        if behind is None:
            behind = _run_uses(messages, position)
        if answer_id is not None and key in behind:
            continue
        orphans.append(block)
        if Mark("orphan_result", key[1], found) not in marks:
            marks.append(Mark("orphan_result", key[1], found))
    closing: list[object] = []
    ahead: set[tuple[CallKind, str]] | None = set()
    for key, left in uses.items():
        if not left:
            continue
        if not calls_client and ahead is not None and not ahead:
            ahead = _run_answers(messages, position)
        if ahead is None or key in ahead:
            continue
        closing.extend(left)
        marks.append(Mark("missing_result", key[1], key[0]))
    if not marks:
        return None
    gone = {id(block) for block in orphans}
    closed = {id(block) for block in closing}
    blocks: list[object] = []
    for block in content:
        if id(block) in gone:
            continue
        blocks.append(block)
        if id(block) in closed:
            blocks.append(close(block, position))
    return blocks, tuple(marks)


def violations(turn: Sequence[tuple[int, int, object]], *, last: bool) -> list[Violation]:
    """The server and MCP rules on one merged assistant turn's blocks ``(position, index, block)``, in the API's words.

    ``last``: the turn ends the list and calls no client tool, so an open use there is a ``pause_turn``
    response sent back to be continued.
    """
    found: list[Violation] = []
    used: set[tuple[CallKind, str]] = set()
    opened: dict[tuple[CallKind, str], list[tuple[int, object]]] = {}  # the open uses of each key
    for position, index, block in turn:
        kind = _kind(block)
        which = family(kind)
        if which is None:
            continue
        if _is_use(kind):
            use_id = field(block, "id")
            if isinstance(use_id, str):
                used.add((which, use_id))
                opened.setdefault((which, use_id), []).append((position, block))
            continue
        answer_id = field(block, "tool_use_id")
        if isinstance(answer_id, str) and (which, answer_id) in used:
            opened.pop((which, answer_id), None)
            continue
        wanted = MCP_USE if which == "mcp" else SERVER_USE
        found.append(
            Violation(
                position=position,
                rule="unexpected_server_tool_result",
                message=f"messages.{position}.content.{index}: unexpected `tool_use_id` found in `{kind}` blocks: "
                f"{answer_id}. Each `{kind}` block must have a corresponding `{wanted}` block before it.",
            )
        )
    if last:
        return found
    for (_, use_id), uses in opened.items():
        for position, use in uses:
            found.append(
                Violation(
                    position=position,
                    rule="missing_server_tool_result",
                    message=f"messages.{position}: `{field(use, 'name')}` tool use with id `{use_id}` was found "
                    f"without a corresponding `{result_type(use)}` block",
                )
            )
    return found
