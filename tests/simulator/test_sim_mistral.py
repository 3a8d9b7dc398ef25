"""The simulator's Mistral route: Mistral's Chat Completions rules, words and 400 body, on a root of its own.

The ``mistralai`` SDK posts to ``{server_url}/v1/chat/completions``; under ``Simulator.mistral_base_url``
that path is judged in the ``mistral`` dialect. Mistral's body and words: ``{"object": "error", "message":
"Not the same number of function calls and responses", "type": "invalid_request_error", "param": null,
"code": null}`` (mistralai/client-ts#106, camel-ai/camel#1467) and ``Tool call id was … but must be a-z,
A-Z, 0-9, with a length of 9.`` (jackmpcollins/magentic#276, editor-code-assistant/eca#233).
"""

from __future__ import annotations

import re
from typing import Final

import httpx
import pytest

from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator

ROUTE: Final = "/v1/chat/completions"


def _call(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "search", "arguments": "{}"}}


OPENAI_IDS: Final[list[dict[str, object]]] = [
    {"role": "user", "content": "Search."},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_search")]},
    {"role": "tool", "tool_call_id": "call_search", "content": "found"},
]
UNANSWERED: Final[list[dict[str, object]]] = [
    {"role": "user", "content": "Search twice."},
    {"role": "assistant", "content": None, "tool_calls": [_call("D681PevKs"), _call("aB3dE6gH9")]},
    {"role": "tool", "tool_call_id": "D681PevKs", "content": "found"},
    {"role": "user", "content": "And?"},
]


def _post(base: str, messages: list[dict[str, object]], **extra: object) -> httpx.Response:
    return httpx.post(base + ROUTE, json={"model": "mistral-small-latest", "messages": messages, **extra})


@pytest.mark.parametrize(
    ("messages", "words"),
    [
        (OPENAI_IDS, "Tool call id was call_search but must be a-z, A-Z, 0-9, with a length of 9."),
        (UNANSWERED, "Not the same number of function calls and responses"),
    ],
    ids=["openai-ids", "unanswered"],
)
def test_mistrals_route_refuses_in_mistrals_words_and_body(
    sim: Simulator, messages: list[dict[str, object]], words: str
) -> None:
    """Under the Mistral root, a broken history is a 400 with Mistral's body; the Chat root takes OpenAI's ids."""
    refused = _post(sim.mistral_base_url, messages)
    assert refused.status_code == 400
    assert refused.json() == {
        "object": "error",
        "message": words,
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    assert sim.requests[-1].path == "/mistral" + ROUTE
    assert _post(sim.base_url, OPENAI_IDS).status_code == 200  # the same ids are plain Chat's


def test_mistrals_route_answers_with_ids_mistral_accepts(sim: Simulator) -> None:
    """A served reply's call ids are nine letters and digits, plain and streamed, so the next request is accepted."""
    sim.enqueue(ScriptedTurn(calls=(ScriptedCall(name="search"),)), ScriptedTurn(calls=(ScriptedCall(name="search"),)))
    reply = _post(sim.mistral_base_url, [{"role": "user", "content": "Search."}])
    assert reply.status_code == 200
    message = reply.json()["choices"][0]["message"]
    (call,) = message["tool_calls"]
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", call["id"])
    streamed = _post(sim.mistral_base_url, [{"role": "user", "content": "Search."}], stream=True)
    assert re.search(r'"id":"[a-zA-Z0-9]{9}","type":"function"', streamed.text)
    answered: list[dict[str, object]] = [
        {"role": "user", "content": "Search."},
        message,
        {"role": "tool", "tool_call_id": call["id"], "content": "found"},
    ]
    assert _post(sim.mistral_base_url, answered).status_code == 200
