"""The OpenAI stories: a late result and an orphan left by trimming (Chat Completions), a cut stream (Responses)."""

from __future__ import annotations

from typing import Final

import openai

from otel_toolturn.demo._agent import CARRY_ON, KEY, Agent, DemoSdk, Story, provider_message, scripted_calls
from otel_toolturn.simulator import ScriptedTurn, Simulator

CHAT_TOOLS: Final[list[openai.types.chat.ChatCompletionToolParam]] = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("run_tests", "run_linter", "add")
]
RESPONSES_TOOLS: Final[list[openai.types.responses.FunctionToolParam]] = [
    {"type": "function", "name": "write_file", "parameters": {"type": "object"}, "strict": False}
]
MODEL: Final = "gpt-4.1-mini"


def _said(reply: openai.types.chat.ChatCompletion | openai.types.responses.Response) -> str:
    """A short account of a reply: its text."""
    if isinstance(reply, openai.types.chat.ChatCompletion):
        return f'"{reply.choices[0].message.content or ""}"'
    return f'"{reply.output_text}"'


def late_result(agent: Agent[openai.OpenAI]) -> None:
    """Two parallel checks; the user speaks before the second result is recorded."""
    history: list[openai.types.chat.ChatCompletionMessageParam] = [
        {"role": "system", "content": "You are a build assistant."},
        {"role": "user", "content": "Run the tests and the linter."},
    ]
    reply: list[openai.types.chat.ChatCompletion] = []

    def ask() -> str:
        reply.append(agent.client.chat.completions.create(model=MODEL, messages=history, tools=CHAT_TOOLS))
        return f"{len(reply[0].choices[0].message.tool_calls or [])} tool calls"

    turn = ScriptedTurn(calls=scripted_calls(("run_tests", {}), ("run_linter", {})))
    if not agent.send("the model asks for two checks", ask, answer=turn):
        return
    message = reply[0].choices[0].message
    tests, linter = (c.id for c in message.tool_calls or [])
    history += [
        _assistant_param(message),
        {"role": "tool", "tool_call_id": tests, "content": "412 passed"},
        {"role": "user", "content": "Also check the docs build."},
        {"role": "tool", "tool_call_id": linter, "content": "no findings"},
    ]
    agent.send(
        "the user speaks before the 2nd result",
        lambda: _said(agent.client.chat.completions.create(model=MODEL, messages=history, tools=CHAT_TOOLS)),
        answer=CARRY_ON,
    )


def orphan_after_trimming(agent: Agent[openai.OpenAI]) -> None:
    """A history window keeps the system prompt and the last three messages, cutting a call from its result."""
    history: list[openai.types.chat.ChatCompletionMessageParam] = [
        {"role": "system", "content": "You add numbers."},
        {"role": "user", "content": "What is 3 + 4?"},
    ]
    reply: list[openai.types.chat.ChatCompletion] = []

    def ask() -> str:
        reply.append(agent.client.chat.completions.create(model=MODEL, messages=history, tools=CHAT_TOOLS))
        return "1 tool call"

    if not agent.send(
        "the model calls add(3, 4)", ask, answer=ScriptedTurn(calls=scripted_calls(("add", {"a": 3, "b": 4})))
    ):
        return
    message = reply[0].choices[0].message
    call_id = (message.tool_calls or [])[0].id
    history += [
        _assistant_param(message),
        {"role": "tool", "tool_call_id": call_id, "content": "7"},
        {"role": "assistant", "content": "3 + 4 = 7."},
        {"role": "user", "content": "And 3 + 3?"},
    ]
    trimmed = [history[0], *history[-3:]]
    agent.send(
        "history trimmed to the last 3",
        lambda: _said(agent.client.chat.completions.create(model=MODEL, messages=trimmed, tools=CHAT_TOOLS)),
        answer=CARRY_ON,
    )


def cut_stream(agent: Agent[openai.OpenAI]) -> None:
    """A streamed call is cut mid-arguments; the framework drops the call but keeps an error result for it."""
    history: list[openai.types.responses.ResponseInputItemParam] = [
        {"role": "user", "content": "Write the release notes to NOTES.md."}
    ]
    call_ids: list[str] = []

    def ask() -> str:
        stream = agent.client.responses.create(model=MODEL, input=history, tools=RESPONSES_TOOLS, stream=True)
        call_ids.extend(
            event.item.call_id
            for event in stream
            if event.type == "response.output_item.added" and event.item.type == "function_call"
        )
        return "the stream stops mid-arguments"

    notes = {"path": "NOTES.md", "text": "## 1.4.0\n- faster startup\n- fewer retries"}
    turn = ScriptedTurn(calls=scripted_calls(("write_file", notes)), misbehaviours=("cut_arguments",))
    if not agent.send("the model streams a call, cut", ask, answer=turn):
        return
    history += [
        {"type": "function_call_output", "call_id": call_ids[0], "output": "error: the arguments were cut off"},
        {"role": "user", "content": "Try again, please."},
    ]
    agent.send(
        "the cut call's error result is kept",
        lambda: _said(agent.client.responses.create(model=MODEL, input=history, tools=RESPONSES_TOOLS)),
        answer=CARRY_ON,
    )


def _assistant_param(
    message: openai.types.chat.ChatCompletionMessage,
) -> openai.types.chat.ChatCompletionAssistantMessageParam:
    """The assistant message as the agent keeps it in its history: its text and its function calls."""
    calls: list[openai.types.chat.ChatCompletionMessageFunctionToolCallParam] = [
        {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
        for c in message.tool_calls or []
        if c.type == "function"
    ]
    return {"role": "assistant", "content": message.content, "tool_calls": calls}


def _client(sim: Simulator) -> openai.OpenAI:
    return openai.OpenAI(base_url=sim.openai_base_url, api_key=KEY, max_retries=0)


def _refusal(error: Exception) -> tuple[int, str] | None:
    if isinstance(error, openai.BadRequestError):
        return error.status_code, provider_message(error.body)
    return None


SDK: Final = DemoSdk(
    client=_client,
    refusal=_refusal,
    stories=(
        Story(title="a late result", lane="openai chat", play=late_result),
        Story(title="an orphan after trimming", lane="openai chat", play=orphan_after_trimming),
        Story(title="a cut stream", lane="openai responses", play=cut_stream),
    ),
)
