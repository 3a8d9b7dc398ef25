"""Broken transcripts of the shapes users report, in each lane's wire format (the project's own data).

Each ``Case`` names the real-world shape it stands for, the lane, the transcript as a client would
send it, and stable fragments of the provider error it must earn. ``chained`` cases are sent after a
first request whose reply the provider keeps (``previous_response_id``): ``transcript`` is then a
function of that first reply's call id and item id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from otel_toolturn import Lane

Message = dict[str, object]


@dataclass(frozen=True, kw_only=True, slots=True)
class Case:
    """One broken shape: where it comes from, its lane, its messages and the error words it earns."""

    name: str
    lane: Lane
    messages: list[Message]
    fragments: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class ChainedCase:
    """A Responses shape that needs the provider's stored state: built from the first reply's ids."""

    name: str
    build: Callable[[str, str], list[Message]]
    """``(call_id, item_id)`` of the call the first reply made → the next request's ``input``."""
    fragments: Callable[[str, str], tuple[str, ...]]


# --- Anthropic Messages ----------------------------------------------------------------------------
def a_user(text: str) -> Message:
    return {"role": "user", "content": text}


def a_assistant(*blocks: Message) -> Message:
    return {"role": "assistant", "content": list(blocks)}


def a_text(text: str) -> Message:
    return {"type": "text", "text": text}


def a_use(call_id: str, name: str, **arguments: object) -> Message:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def a_result(call_id: str, content: str) -> Message:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": content}]}


# --- Chat Completions --------------------------------------------------------------------------------
def c_system(text: str) -> Message:
    return {"role": "system", "content": text}


def c_user(text: str) -> Message:
    return {"role": "user", "content": text}


def c_calls(*calls: tuple[str, str]) -> Message:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
            for call_id, name in calls
        ],
    }


def c_text(text: str) -> Message:
    return {"role": "assistant", "content": text}


def c_tool(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


# --- Responses ------------------------------------------------------------------------------------------
def r_user(text: str) -> Message:
    return {"type": "message", "role": "user", "content": text}


def r_call(call_id: str, name: str, item_id: str | None = None) -> Message:
    item: Message = {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}
    if item_id is not None:
        item["id"] = item_id
    return item


def r_output(call_id: str, output: str) -> Message:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


MISSING_A = "`tool_use` ids were found without `tool_result` blocks immediately after"
MISSING_C = "must be followed by tool messages responding to each 'tool_call_id'"
ORPHAN_C = "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"

CASES: tuple[Case, ...] = (
    Case(
        name="1 interrupted parallel calls, then 'continue' (anthropic)",
        lane="anthropic.messages",
        messages=[
            a_user("tidy up the config loader"),
            a_assistant(
                a_text("Reading the three files involved."),
                a_use("toolu_read_a", "Read", path="loader.py"),
                a_use("toolu_read_b", "Read", path="schema.py"),
                a_use("toolu_run_c", "Bash", command="pytest -q"),
            ),
            a_result("toolu_read_a", "def load(): ..."),
            a_user("continue"),
        ],
        fragments=(MISSING_A, "toolu_read_b", "toolu_run_c"),
    ),
    Case(
        name="1 interrupted parallel calls, then 'continue' (chat)",
        lane="openai.chat_completions",
        messages=[
            c_user("tidy up the config loader"),
            c_calls(("call_read_a", "read"), ("call_read_b", "read"), ("call_run_c", "bash")),
            c_tool("call_read_a", "def load(): ..."),
            c_user("continue"),
        ],
        fragments=(MISSING_C, "call_read_b", "call_run_c"),
    ),
    Case(
        name="1 interrupted parallel calls, then 'continue' (responses)",
        lane="openai.responses",
        messages=[
            r_user("tidy up the config loader"),
            r_call("call_read_a", "read"),
            r_call("call_read_b", "read"),
            r_output("call_read_a", "def load(): ..."),
            r_user("continue"),
        ],
        fragments=("No tool output found for function call call_read_b",),
    ),
    Case(
        name="2 text and thinking after the tool_use on a retry (anthropic)",
        lane="anthropic.messages",
        messages=[
            a_user("rename the module"),
            a_assistant(
                a_use("toolu_mv", "Bash", command="git mv old.py new.py"),
                a_text("Retrying after the abort."),
                {"type": "thinking", "thinking": "The move may have happened already.", "signature": "c2lnbmF0dXJl"},
            ),
            a_result("toolu_mv", "ok"),
        ],
        fragments=("Did not find 1 tool_result block(s) at the beginning of this message",),
    ),
    Case(
        name="3 plain user text right after a tool_use (anthropic)",
        lane="anthropic.messages",
        messages=[
            a_user("what's the weather in Lyon?"),
            a_assistant(a_use("toolu_wx", "weather", city="Lyon")),
            a_user("never mind, tell me a joke instead"),
        ],
        fragments=(MISSING_A, "toolu_wx"),
    ),
    Case(
        name="4 history starts with a tool_result whose call was compacted away (anthropic)",
        lane="anthropic.messages",
        messages=[
            a_result("toolu_gone", "42 rows"),
            a_assistant(a_text("The query returned 42 rows.")),
            a_user("and how many are active?"),
        ],
        fragments=("toolu_gone",),
    ),
    Case(
        name="5 the same tool_use twice in one message (anthropic)",
        lane="anthropic.messages",
        messages=[
            a_user("open the readme"),
            a_assistant(a_use("toolu_twice", "Read", path="README.md"), a_use("toolu_twice", "Read", path="README.md")),
            a_result("toolu_twice", "# Project"),
        ],
        fragments=("`tool_use` ids must be unique",),
    ),
    Case(
        name="6 a converter turned content blocks plus tool_calls into two blocks with one id (anthropic)",
        lane="anthropic.messages",
        messages=[
            a_user("search the docs for retries"),
            a_assistant(
                a_text("Searching."),
                a_use("toolu_conv", "search", query="retries"),
                a_use("toolu_conv", "search", query="retries"),
            ),
            a_result("toolu_conv", "3 hits"),
            a_user("summarise them"),
        ],
        fragments=("`tool_use` ids must be unique",),
    ),
    Case(
        name="7 the user answers a confirmation call with an ordinary message (chat)",
        lane="openai.chat_completions",
        messages=[
            c_system("You book trains."),
            c_user("book it"),
            c_calls(("call_confirm", "confirm_booking")),
            c_user("actually, next week"),
        ],
        fragments=(MISSING_C, "call_confirm"),
    ),
    Case(
        name="8 a history window cut between a call and its result (chat)",
        lane="openai.chat_completions",
        messages=[
            c_system("You add numbers."),
            c_tool("call_sum", "7"),
            c_text("The answer is 7."),
            c_user("and 3+3?"),
        ],
        fragments=(ORPHAN_C,),
    ),
    Case(
        name="13 a cut call dropped but its synthetic result kept (anthropic)",
        lane="anthropic.messages",
        messages=[
            a_user("write the report"),
            a_assistant(a_text("Writing it now.")),
            a_result("toolu_cut", "error: the arguments were incomplete"),
            a_user("try again"),
        ],
        fragments=("toolu_cut",),
    ),
    Case(
        name="13 a cut call dropped but its synthetic result kept (chat)",
        lane="openai.chat_completions",
        messages=[
            c_user("write the report"),
            c_text("Writing it now."),
            c_tool("call_cut", "error: the arguments were incomplete"),
            c_user("try again"),
        ],
        fragments=(ORPHAN_C,),
    ),
    Case(
        name="13 a cut call dropped but its synthetic result kept (responses)",
        lane="openai.responses",
        messages=[
            r_user("write the report"),
            r_output("call_cut", "error: the arguments were incomplete"),
            r_user("try again"),
        ],
        fragments=("No tool call found for function call output with call_id call_cut",),
    ),
)

CHAINED_CASES: tuple[ChainedCase, ...] = (
    ChainedCase(
        name="9 the run ended before the output was posted; the next request chains (responses)",
        build=lambda _call_id, _item_id: [r_user("what else can you do?")],
        fragments=lambda call_id, _item_id: (f"No tool output found for function call {call_id}",),
    ),
    ChainedCase(
        name="10 items the server already holds are sent again (responses)",
        build=lambda call_id, item_id: [r_call(call_id, "lookup", item_id), r_output(call_id, "found")],
        fragments=lambda _call_id, item_id: (f"Duplicate item found with id {item_id}",),
    ),
)
