"""The simulator's Ollama route: ``POST /api/chat`` judged in the ``ollama`` dialect, Ollama's reply and stream.

The real ``ollama`` SDK runs against it: plain replies are one JSON object, streams NDJSON lines of the same
shape ending in a ``done: true`` line (https://github.com/ollama/ollama/blob/main/docs/api.md). Ollama itself
refuses no tool turn; the simulator refuses the ones the law restores with ``{"error": …}`` and a 400, which the
SDK raises as its ``ResponseError``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import ollama
import pytest

from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator

MODEL: Final = "llama3.2"
UNANSWERED: Final[list[dict[str, object]]] = [
    {"role": "user", "content": "Search twice."},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"function": {"name": "search", "arguments": {"q": "a"}}},
            {"function": {"name": "search", "arguments": {"q": "b"}}},
        ],
    },
    {"role": "tool", "tool_name": "search", "content": "found a"},
    {"role": "user", "content": "And?"},
]


def test_a_call_answered_by_name_is_served_and_the_sdk_reads_the_reply(sim: Simulator) -> None:
    """A call and its ``tool`` message by ``tool_name``: served; the reply's call has object arguments and no id."""
    sim.enqueue(ScriptedTurn(text="On it.", calls=(ScriptedCall(name="search", arguments={"q": "otel"}),)))
    client = ollama.Client(host=sim.base_url)
    reply = client.chat(model=MODEL, messages=[{"role": "user", "content": "Search."}])
    assert reply.message.content == "On it."
    assert reply.done
    assert reply.done_reason == "stop"
    (call,) = reply.message.tool_calls or []
    assert (call.function.name, dict(call.function.arguments)) == ("search", {"q": "otel"})
    answered: list[Mapping[str, Any] | ollama.Message] = [
        {"role": "user", "content": "Search."},
        reply.message,
        {"role": "tool", "tool_name": "search", "content": "found"},
    ]
    assert client.chat(model=MODEL, messages=answered).message.content
    sent = sim.requests[-1]
    assert sent.path == "/api/chat"
    assert sent.status == 200
    assert isinstance(sent.body, dict)
    assert "id" not in json.dumps(sent.body["messages"][1])  # the SDK writes no call id


def test_an_unanswered_call_is_refused_with_ollamas_error_body(sim: Simulator) -> None:
    """The second ``search`` has no ``tool`` message: a 400 ``{"error": …}``, raised by the SDK as ``ResponseError``."""
    client = ollama.Client(host=sim.base_url)
    with pytest.raises(ollama.ResponseError) as raised:
        client.chat(model=MODEL, messages=UNANSWERED)
    assert raised.value.status_code == 400
    assert raised.value.error.startswith("messages[1] calls search with no 'tool' message")
    assert sim.requests[-1].status == 400


def test_the_stream_is_ndjson_ending_in_one_done_line(sim: Simulator) -> None:
    """Streamed: content pieces, the call whole in a line of its own, then one ``done`` line with the counts."""
    sim.enqueue(ScriptedTurn(text="Looking it up.", calls=(ScriptedCall(name="search"),)))
    client = ollama.Client(host=sim.base_url)
    parts = list(client.chat(model=MODEL, messages=[{"role": "user", "content": "Search."}], stream=True))
    assert "".join(part.message.content or "" for part in parts) == "Looking it up."
    assert [part.done for part in parts] == [False] * (len(parts) - 1) + [True]
    assert [c.function.name for part in parts for c in part.message.tool_calls or []] == ["search"]
    assert parts[-1].done_reason == "stop"
    assert (parts[-1].prompt_eval_count or 0) > 0


async def test_the_async_client_reads_the_stream_and_the_refusal(sim: Simulator) -> None:
    """``AsyncClient``: the stream reads the same; reading a broken history's stream raises ``ResponseError``."""
    client = ollama.AsyncClient(host=sim.base_url)
    stream = await client.chat(model=MODEL, messages=[{"role": "user", "content": "Hi."}], stream=True)
    parts = [part async for part in stream]
    assert parts[-1].done
    refused = await client.chat(model=MODEL, messages=UNANSWERED, stream=True)
    with pytest.raises(ollama.ResponseError) as raised:
        [part async for part in refused]  # the stream raises when read
    assert raised.value.status_code == 400


def test_a_cut_reply_says_length_and_carries_no_call(sim: Simulator) -> None:
    """A token cap cut the reply: ``done_reason`` is ``length`` and no half call is sent (Ollama parses calls whole)."""
    sim.enqueue(ScriptedTurn(text="Let me", calls=(ScriptedCall(name="search"),), misbehaviours=("cut_arguments",)))
    reply = ollama.Client(host=sim.base_url).chat(model=MODEL, messages=[{"role": "user", "content": "Search."}])
    assert reply.done_reason == "length"
    assert not reply.message.tool_calls
