"""DeepSeek's Chat Completions as the simulator speaks it (``POST /deepseek/chat/completions``).

An OpenAI client pointed at DeepSeek (``base_url="https://api.deepseek.com"``) posts to
``{base_url}/chat/completions``, so the simulator serves DeepSeek under a root of its own,
``Simulator.deepseek_base_url`` (its root and ``/deepseek``). A request there is judged in the
``deepseek`` dialect of the Chat lane (``validate(..., dialect="deepseek")``: Chat's rules, and thinking
mode's ``reasoning_content`` on every assistant message of a turn with tool calls). Replies and streams
are Chat's (``_chat``); a plain reply's message carries a ``reasoning_content`` as thinking mode's does,
so a client that sends the message back as it came passes. A refusal is DeepSeek's 400 body,
``{"error": {"message": …, "type": "invalid_request_error", "param": null, "code":
"invalid_request_error"}}`` (hotovo/aider-desk#529, liyupi/yu-ai-code-mother#5).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, TypedDict

from otel_toolturn.simulator import _chat
from otel_toolturn.simulator._cache import PromptUsage
from otel_toolturn.simulator._script import ScriptedTurn
from otel_toolturn.simulator._wire import Json, NewId

ROOT: Final = "/deepseek"
"""Where DeepSeek's API root sits on the simulator (``Simulator.deepseek_base_url``)."""
REASONING: Final = "The user's request needs the tools; I call them."
"""The ``reasoning_content`` of each plain reply."""


def reply_body(
    turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool, prompt: PromptUsage
) -> Json:
    """Chat's ``chat.completion`` answering ``request``, its message with thinking mode's ``reasoning_content``."""
    body = _chat.reply_body(turn, request=request, new_id=new_id, cut=cut, prompt=prompt)
    choices = body.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict):
            message["reasoning_content"] = REASONING
    return body


class _Error(TypedDict):
    message: str
    type: str
    param: str | None
    code: str


class ErrorBody(TypedDict):
    """DeepSeek's error body, as its API sends it with a 400."""

    error: _Error


def error_body(message: str) -> ErrorBody:
    """DeepSeek's error body for an invalid chat request."""
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}
    }


WIRE = _chat.chat_wire(
    f"{ROOT}/chat/completions",
    dialect="deepseek",
    reply_body=reply_body,
    reply_frames=_chat.reply_frames,
    error_body=error_body,
)
