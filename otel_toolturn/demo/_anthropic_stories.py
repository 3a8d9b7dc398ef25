"""The Anthropic stories.

Interrupted parallel calls, text after a ``tool_use``, a repeated call, a paused web search the
user moved on from, and a preserved-thinking model whose tool result arrives after it answered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import anthropic
from anthropic.types import Message, MessageParam

import otel_toolturn
from otel_toolturn.demo._agent import CARRY_ON, KEY, Agent, DemoSdk, Story, provider_message, scripted_calls
from otel_toolturn.simulator import ScriptedTurn, Simulator

TOOLS: Final[list[anthropic.types.ToolParam]] = [
    {"name": "read_file", "description": "Read a file.", "input_schema": {"type": "object"}},
    {"name": "bash", "description": "Run a shell command.", "input_schema": {"type": "object"}},
]
MODEL: Final = "claude-sonnet-4-5"
THINKING: Final[anthropic.types.ThinkingConfigEnabledParam] = {"type": "enabled", "budget_tokens": 1024}


def _ask(agent: Agent[anthropic.Anthropic], history: list[MessageParam]) -> Message:
    """One request of the demo's agent over ``history``, with its tools."""
    return agent.client.messages.create(model=MODEL, max_tokens=512, messages=history, tools=TOOLS)


def _ask_thinking(agent: Agent[anthropic.Anthropic], history: list[MessageParam]) -> Message:
    """One request over ``history`` with thinking on (each reply's thinking is signed)."""
    return agent.client.messages.create(model=MODEL, max_tokens=2048, messages=history, tools=TOOLS, thinking=THINKING)


def _said(reply: Message) -> str:
    """A short account of a reply: its text."""
    return '"' + "".join(b.text for b in reply.content if b.type == "text") + '"'


def interrupted_parallel_calls(agent: Agent[anthropic.Anthropic]) -> None:
    """Two parallel reads; Ctrl-C after the first; the user types "continue"."""
    history: list[MessageParam] = [{"role": "user", "content": "Tidy up the config loader."}]
    reply: list[Message] = []

    def ask() -> str:
        reply.append(_ask(agent, history))
        return f"{len(reply[0].content) - 1} tool calls"

    turn = ScriptedTurn(
        text="Reading both files.",
        calls=scripted_calls(("read_file", {"path": "loader.py"}), ("read_file", {"path": "schema.py"})),
    )
    if not agent.send("the model asks for two reads", ask, answer=turn):
        return
    first = next(b for b in reply[0].content if b.type == "tool_use")
    history += [
        {"role": "assistant", "content": reply[0].content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.id, "content": "def load(): ..."}]},
        {"role": "user", "content": "continue"},
    ]
    agent.send(
        'Ctrl-C, then "continue"',
        lambda: _said(_ask(agent, history)),
        answer=CARRY_ON,
    )


def text_after_tool_use(agent: Agent[anthropic.Anthropic]) -> None:
    """A retry after an abort appends text to the assistant message, after its tool_use."""
    history: list[MessageParam] = [{"role": "user", "content": "Rename utils.py to helpers.py."}]
    reply: list[Message] = []

    def ask() -> str:
        with agent.client.messages.stream(model=MODEL, max_tokens=512, messages=history, tools=TOOLS) as stream:
            reply.append(stream.get_final_message())
        return "1 tool call (streamed)"

    turn = ScriptedTurn(text="Renaming.", calls=scripted_calls(("bash", {"command": "git mv utils.py helpers.py"})))
    if not agent.send("the model asks to run a command", ask, answer=turn):
        return
    call = next(b for b in reply[0].content if b.type == "tool_use")
    said: list[anthropic.types.ContentBlockParam] = [
        {"type": "text", "text": b.text} for b in reply[0].content if b.type == "text"
    ]
    content: list[anthropic.types.ContentBlockParam] = [
        *said,
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input},
        {"type": "text", "text": "Retrying the rename after the abort."},
    ]
    history += [
        {"role": "assistant", "content": content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "renamed"}]},
    ]
    agent.send(
        "retry text lands after the tool_use",
        lambda: _said(_ask(agent, history)),
        answer=CARRY_ON,
    )


def repeated_call(agent: Agent[anthropic.Anthropic]) -> None:
    """The same tool_use arrives twice in one message; the agent answers it once."""
    history: list[MessageParam] = [{"role": "user", "content": "Open the README."}]
    reply: list[Message] = []

    def ask() -> str:
        reply.append(_ask(agent, history))
        return "the same tool call twice"

    twice = ("read_file", {"path": "README.md"})
    if not agent.send(
        "the model repeats one call",
        ask,
        answer=ScriptedTurn(calls=scripted_calls(twice, twice, same_id="toolu_twice")),
    ):
        return
    history += [
        {"role": "assistant", "content": reply[0].content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_twice", "content": "# Project"}]},
    ]
    agent.send(
        "one result for the repeated call",
        lambda: _said(_ask(agent, history)),
        answer=CARRY_ON,
    )


def result_after_answer(agent: Agent[anthropic.Anthropic]) -> None:
    """Thinking on; Ctrl-C leaves the slow suite unanswered; its result lands after the model answered.

    Without otel-toolturn the unanswered call is refused; the move-up rule is then written out
    (close the call, and once the result lands move it up in place of the close): the provider's
    prefix check refuses it, because the model's signed thinking was produced after the close.
    With otel-toolturn the close stays and the result is delivered where it stands.
    """
    history: list[MessageParam] = [{"role": "user", "content": "Build it and run the integration suite."}]
    replies: list[Message] = []

    def ask(messages: list[MessageParam]) -> Callable[[], str]:
        def call() -> str:
            replies.append(_ask_thinking(agent, messages))
            return _with_cache(replies[-1])

        return call

    commands = (("bash", {"command": "make build"}), ("bash", {"command": "make integration"}))
    if not agent.send(
        "the model asks for two commands", ask(history), answer=ScriptedTurn(calls=scripted_calls(*commands))
    ):
        return
    calls = replies[-1].content
    build, suite = (b for b in calls if b.type == "tool_use")
    build_result: anthropic.types.ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": build.id,
        "content": "build ok",
    }
    suite_result: anthropic.types.ToolResultBlockParam = {
        "type": "tool_result",
        "tool_use_id": suite.id,
        "content": "212 passed, 1 failed: test_upload_retry",
    }
    history += [
        {"role": "assistant", "content": calls},
        {"role": "user", "content": [build_result]},
        {"role": "user", "content": "continue"},
    ]
    answered = agent.send('Ctrl-C in the suite, then "continue"', ask(history), answer=CARRY_ON)
    later: list[MessageParam] = [{"role": "user", "content": "Is anything failing?"}]
    if not agent.instrumented:
        # The move-up rule, written out. First the unanswered call is closed ...
        close: anthropic.types.ToolResultBlockParam = {
            "type": "tool_result",
            "tool_use_id": suite.id,
            "content": otel_toolturn.INTERRUPTED_RESULT_TEXT,
        }
        closed: list[MessageParam] = [*history[:2], {"role": "user", "content": [build_result, close]}, history[3]]
        if not agent.send("move-up rule: the call closed", ask(closed), answer=CARRY_ON):
            return
        # ... then, when the suite's result lands, it is moved up in place of the close.
        moved: list[MessageParam] = [
            *history[:2],
            {"role": "user", "content": [build_result, suite_result]},
            history[3],
            {"role": "assistant", "content": replies[-1].content},
            *later,
        ]
        agent.send("move-up rule: the result moved up", ask(moved), answer=CARRY_ON)
        return
    if not answered:
        return
    history += [
        {"role": "assistant", "content": replies[-1].content},
        {"role": "user", "content": [suite_result]},
        *later,
    ]
    agent.send("the suite's result lands late", ask(history), answer=CARRY_ON)


def paused_web_search(agent: Agent[anthropic.Anthropic]) -> None:
    """The server pauses a web search (``pause_turn``); the user asks something else instead of continuing."""
    history: list[MessageParam] = [{"role": "user", "content": "What changed in the latest httpx release?"}]
    tools: list[anthropic.types.ToolUnionParam] = [*TOOLS, {"type": "web_search_20250305", "name": "web_search"}]
    reply: list[Message] = []

    def ask() -> str:
        reply.append(agent.client.messages.create(model=MODEL, max_tokens=512, messages=history, tools=tools))
        return f"a web search, stop reason {reply[0].stop_reason}"

    search = ScriptedTurn(
        text="Searching the web.", server_calls=scripted_calls(("web_search", {"query": "httpx release notes"}))
    )
    if not agent.send("the server pauses a web search", ask, answer=search):
        return
    history += [
        {"role": "assistant", "content": reply[0].content},
        {"role": "user", "content": "Never mind, just summarise the README."},
    ]

    def moved_on() -> str:
        return _said(agent.client.messages.create(model=MODEL, max_tokens=512, messages=history, tools=tools))

    agent.send("the user asks something else", moved_on, answer=CARRY_ON)


def _with_cache(reply: Message) -> str:
    """A reply's account with the provider's cache figures: prompt tokens read from cache, of all."""
    usage = reply.usage
    cached = usage.cache_read_input_tokens or 0
    prompt = usage.input_tokens + cached + (usage.cache_creation_input_tokens or 0)
    said = _said(reply) if any(b.type == "text" for b in reply.content) else "2 tool calls"
    return f"{said}; {cached} of {prompt} prompt tokens read from cache"


def _client(sim: Simulator) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=sim.base_url, api_key=KEY, max_retries=0)


def _refusal(error: Exception) -> tuple[int, str] | None:
    if isinstance(error, anthropic.BadRequestError):
        return error.status_code, provider_message(error.body)
    return None


SDK: Final = DemoSdk(
    client=_client,
    refusal=_refusal,
    stories=(
        Story(title="interrupted parallel calls", lane="anthropic", play=interrupted_parallel_calls),
        Story(title="text after a tool_use", lane="anthropic", play=text_after_tool_use),
        Story(title="a repeated call", lane="anthropic", play=repeated_call),
        Story(title="a paused web search the user moved on from", lane="anthropic", play=paused_web_search),
        Story(
            title="a preserved-thinking model: a tool's result arrives after the model answered",
            lane="anthropic",
            play=result_after_answer,
        ),
    ),
)
