"""Prompt-cache accounting: each lane's usage reports the prefix an earlier request already sent."""

from __future__ import annotations

from collections.abc import Mapping

import anthropic
import openai
import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam, ChatCompletionToolParam
from openai.types.responses import Response, ResponseInputParam

from otel_toolturn.simulator import ScriptedTurn, Simulator
from otel_toolturn.simulator._cache import PromptCache
from otel_toolturn.simulator._script import token_estimate

SYSTEM = "You answer briefly."
CHAT_TOOLS: list[ChatCompletionToolParam] = [
    {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}
]


def units(sim: Simulator, index: int, head: tuple[str, ...], field: str) -> list[object]:
    """The documented cache units of request ``index`` as received: its head, then each transcript entry."""
    body = sim.requests[index].body
    assert isinstance(body, Mapping)
    transcript = body[field]
    items = [{"type": "message", "role": "user", "content": transcript}] if isinstance(transcript, str) else transcript
    return [{name: body.get(name) for name in head}, *items]


def estimate(some_units: list[object]) -> int:
    """The documented token estimate of a run of units: the sum of each unit's estimate."""
    return sum(token_estimate(unit) for unit in some_units)


def test_anthropic_growing_conversation_reads_its_prefix_from_cache(
    sim: Simulator, a_client: anthropic.Anthropic
) -> None:
    """Anthropic: cache_read is the shared prefix's estimate, input_tokens the rest; an edited first turn drops it."""
    head = ("system", "tools")
    sim.enqueue(*(ScriptedTurn(text=f"Answer {n}.") for n in range(4)))
    messages: list[MessageParam] = [{"role": "user", "content": "first question"}]
    first = a_client.messages.create(model="claude-test", max_tokens=64, system=SYSTEM, messages=messages)
    assert first.usage.cache_read_input_tokens == 0
    assert first.usage.input_tokens == estimate(units(sim, 0, head, "messages"))
    messages += [{"role": "assistant", "content": first.content}, {"role": "user", "content": "second question"}]
    second = a_client.messages.create(model="claude-test", max_tokens=64, system=SYSTEM, messages=messages)
    earlier, now = units(sim, 0, head, "messages"), units(sim, 1, head, "messages")
    assert now[: len(earlier)] == earlier
    assert second.usage.cache_read_input_tokens == estimate(earlier)
    assert second.usage.input_tokens == estimate(now) - estimate(earlier)
    assert second.usage.cache_creation_input_tokens == 0
    messages += [{"role": "assistant", "content": second.content}, {"role": "user", "content": "third question"}]
    with a_client.messages.stream(model="claude-test", max_tokens=64, system=SYSTEM, messages=messages) as stream:
        third = stream.get_final_message()
    assert third.usage.cache_read_input_tokens == estimate(units(sim, 1, head, "messages"))
    messages[0] = {"role": "user", "content": "first question, edited"}
    edited = a_client.messages.create(model="claude-test", max_tokens=64, system=SYSTEM, messages=messages)
    assert edited.usage.cache_read_input_tokens == estimate(units(sim, 3, head, "messages")[:1])


def test_anthropic_changed_system_prompt_drops_the_whole_prefix(sim: Simulator, a_client: anthropic.Anthropic) -> None:
    """A rebuilt system prompt changes the head, so nothing is read from cache."""
    messages: list[MessageParam] = [{"role": "user", "content": "first question"}]
    a_client.messages.create(model="claude-test", max_tokens=64, system=SYSTEM, messages=messages)
    again = a_client.messages.create(model="claude-test", max_tokens=64, system="Rebuilt.", messages=messages)
    assert again.usage.cache_read_input_tokens == 0


def chat(client: openai.OpenAI, messages: list[ChatCompletionMessageParam], *, streamed: bool) -> ChatCompletion:
    if not streamed:
        return client.chat.completions.create(model="gpt-test", messages=messages, tools=CHAT_TOOLS)
    with client.chat.completions.stream(
        model="gpt-test", messages=messages, tools=CHAT_TOOLS, stream_options={"include_usage": True}
    ) as stream:
        return stream.get_final_completion()


@pytest.mark.parametrize("streamed", [False, True])
def test_chat_growing_conversation_reports_cached_tokens(
    sim: Simulator, o_client: openai.OpenAI, streamed: bool
) -> None:
    """Chat: prompt_tokens_details.cached_tokens is the shared prefix's estimate; an edited system message drops it."""
    head = ("tools",)
    sim.enqueue(*(ScriptedTurn(text=f"Answer {n}.") for n in range(3)))
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "first question"},
    ]
    first = chat(o_client, messages, streamed=streamed)
    assert first.usage is not None
    assert first.usage.prompt_tokens == estimate(units(sim, 0, head, "messages"))
    assert first.usage.prompt_tokens_details is not None
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    messages += [
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "second question"},
    ]
    second = chat(o_client, messages, streamed=streamed)
    assert second.usage is not None
    assert second.usage.prompt_tokens_details is not None
    assert second.usage.prompt_tokens_details.cached_tokens == estimate(units(sim, 0, head, "messages"))
    assert second.usage.prompt_tokens == estimate(units(sim, 1, head, "messages"))
    messages[0] = {"role": "system", "content": "Rebuilt."}
    edited = chat(o_client, messages, streamed=streamed)
    assert edited.usage is not None
    assert edited.usage.prompt_tokens_details is not None
    assert edited.usage.prompt_tokens_details.cached_tokens == estimate(units(sim, 2, head, "messages")[:1])


@pytest.mark.parametrize("streamed", [False, True])
def test_responses_growing_input_reports_cached_tokens(sim: Simulator, o_client: openai.OpenAI, streamed: bool) -> None:
    """Responses: input_tokens_details.cached_tokens is the shared prefix's estimate; an edited first item drops it."""
    head = ("instructions", "tools")
    sim.enqueue(*(ScriptedTurn(text=f"Answer {n}.") for n in range(3)))
    inputs: list[ResponseInputParam] = [
        [{"role": "user", "content": "first question"}],
        [{"role": "user", "content": "first question"}, {"role": "user", "content": "second question"}],
        [{"role": "user", "content": "edited"}, {"role": "user", "content": "second question"}],
    ]
    cached: list[int] = []
    for given in inputs:
        response: Response
        if streamed:
            with o_client.responses.stream(model="gpt-test", instructions=SYSTEM, input=given) as stream:
                response = stream.get_final_response()
        else:
            response = o_client.responses.create(model="gpt-test", instructions=SYSTEM, input=given)
        assert response.usage is not None
        cached.append(response.usage.input_tokens_details.cached_tokens)
    assert cached == [
        0,
        estimate(units(sim, 0, head, "input")),
        estimate(units(sim, 2, head, "input")[:1]),
    ]


def test_responses_previous_response_counts_the_stored_items(sim: Simulator, o_client: openai.OpenAI) -> None:
    """With previous_response_id the stored items are part of the prompt and read from cache."""
    head = ("instructions", "tools")
    sim.enqueue(ScriptedTurn(text="Answer one."), ScriptedTurn(text="Answer two."))
    first = o_client.responses.create(model="gpt-test", instructions=SYSTEM, input="first question")
    second = o_client.responses.create(
        model="gpt-test", instructions=SYSTEM, input="second question", previous_response_id=first.id
    )
    assert second.usage is not None
    assert second.usage.input_tokens_details.cached_tokens == estimate(units(sim, 0, head, "input"))
    assert second.usage.input_tokens > second.usage.input_tokens_details.cached_tokens


def test_summary_totals_what_the_replies_reported(sim: Simulator, o_client: openai.OpenAI) -> None:
    """The lane summary sums the served prompts' tokens and cached tokens; a 400 counts as refused only."""
    sim.enqueue(ScriptedTurn(text="One."), ScriptedTurn(text="Two."))
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "first question"}]
    replies = [chat(o_client, messages, streamed=False), chat(o_client, messages, streamed=False)]
    with pytest.raises(openai.BadRequestError):
        o_client.chat.completions.create(
            model="gpt-test", messages=[{"role": "tool", "tool_call_id": "call_x", "content": "orphan"}]
        )
    summary = sim.summary("openai.chat_completions")
    prompt = sum(r.usage.prompt_tokens for r in replies if r.usage)
    cached = sum(
        r.usage.prompt_tokens_details.cached_tokens or 0 for r in replies if r.usage and r.usage.prompt_tokens_details
    )
    assert (summary.served, summary.refused, summary.prompt_tokens, summary.cached_tokens) == (2, 1, prompt, cached)
    assert cached == prompt // 2
    assert sim.summary("anthropic.messages").served == 0


def test_cache_forgets_prompts_beyond_its_depth() -> None:
    """A prompt older than the last ``depth`` prompts of the lane is no longer a source of cached tokens."""
    cache = PromptCache(depth=2)
    first = cache.account("openai.chat_completions", ["head", "a"])
    assert cache.account("openai.chat_completions", ["head", "a"]).cached == first.tokens
    cache.account("openai.chat_completions", ["other", "b"])
    cache.account("openai.chat_completions", ["other", "c"])
    assert cache.account("openai.chat_completions", ["head", "a"]).cached == 0
    assert cache.account("openai.responses", ["other", "b"]).cached == 0
