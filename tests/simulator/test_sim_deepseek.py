"""The simulator's DeepSeek route: thinking mode's ``reasoning_content`` rule, DeepSeek's words and 400 body.

An OpenAI client pointed at DeepSeek posts to ``{base_url}/chat/completions``; under
``Simulator.deepseek_base_url`` that path is judged in the ``deepseek`` dialect. DeepSeek's body and words:
``{"error": {"message": "Missing `reasoning_content` field in the assistant message at message index 1. For more
information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls", "type":
"invalid_request_error", "param": null, "code": "invalid_request_error"}}`` (hotovo/aider-desk#529,
continuedev/continue#10193; the rule: https://api-docs.deepseek.com/guides/thinking_mode#tool-calls).
"""

from __future__ import annotations

from typing import Any, Final

import openai
import pytest

from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator

MODEL: Final = "deepseek-v4-pro"
TOOLS: Final[list[Any]] = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]


def test_deepseek_refuses_a_tool_turn_sent_back_without_its_reasoning(sim: Simulator) -> None:
    """The openai SDK to DeepSeek: a tool-call message without ``reasoning_content`` is DeepSeek's 400, its words."""
    sim.enqueue(ScriptedTurn(calls=(ScriptedCall(name="search"),)))
    with openai.OpenAI(base_url=sim.deepseek_base_url, api_key="test", max_retries=0) as client:
        first = client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "Search."}],
            tools=TOOLS,
        )
        message = first.choices[0].message
        call = message.tool_calls[0]  # type: ignore[index]
        result = {"role": "tool", "tool_call_id": call.id, "content": "found"}
        dropped: list[Any] = [
            {"role": "user", "content": "Search."},
            {"role": "assistant", "content": message.content, "tool_calls": [call.model_dump()]},
            result,
        ]
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model=MODEL, messages=dropped, tools=TOOLS)
        assert refused.value.body == {
            "message": "Missing `reasoning_content` field in the assistant message at message index 1. "
            "For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_request_error",
        }
        kept: list[Any] = [dropped[0], message.model_dump(exclude_none=True), result]
        assert kept[1]["reasoning_content"]  # the reply carried thinking mode's reasoning
        client.chat.completions.create(model=MODEL, messages=kept, tools=TOOLS)
    assert [r.status for r in sim.requests] == [200, 400, 200]
    assert [r.path for r in sim.requests] == ["/deepseek/chat/completions"] * 3
