"""Mistral's Chat Completions as the simulator speaks it (``POST /mistral/v1/chat/completions``).

The ``mistralai`` SDK posts to ``{server_url}/v1/chat/completions``, the path OpenAI's clients use,
so the simulator serves Mistral under a root of its own, ``Simulator.mistral_base_url`` (its root
and ``/mistral``), the way it serves Groq under ``/openai/v1``. A request there is judged in the
``mistral`` dialect of the Chat lane (``validate(..., dialect="mistral")``: nine-character ids, the
count of calls and ``tool`` messages, in Mistral's words). Replies and streams are Chat's
(``_chat``), with call ids of nine letters and digits as Mistral writes them and each streamed
call whole in one chunk. A refusal is
Mistral's 400 body, ``{"object": "error", "message": …, "type": "invalid_request_error", "param":
null, "code": null}`` (mistralai/client-ts#106, camel-ai/camel#1467, jackmpcollins/magentic#276).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, TypedDict

from otel_toolturn.simulator import _chat
from otel_toolturn.simulator._cache import PromptUsage
from otel_toolturn.simulator._frames import Frame
from otel_toolturn.simulator._script import Misbehaviour, ScriptedTurn
from otel_toolturn.simulator._wire import Json, NewId

ROOT: Final = "/mistral"
"""Where Mistral's API root sits on the simulator (``Simulator.mistral_base_url``)."""


def reply_body(
    turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool, prompt: PromptUsage
) -> Json:
    """Chat's ``chat.completion`` answering ``request``, its new call ids nine letters and digits (``call00001``)."""

    def mistral_id(prefix: str) -> str:
        return new_id("call0") if prefix == "call_" else new_id(prefix)

    return _chat.reply_body(turn, request=request, new_id=mistral_id, cut=cut, prompt=prompt)


def reply_frames(
    reply: Mapping[str, object], *, request: Mapping[str, object], misbehaviours: Sequence[Misbehaviour]
) -> list[Frame]:
    """Chat's chunk stream with each tool call whole in one chunk, as Mistral streams it.

    The mistralai SDK's stream chunk requires a call's ``function.name`` and ``arguments`` in every
    ``tool_calls`` delta (``FunctionCall``), so Chat's argument pieces would not parse.
    """
    return _chat.reply_frames(reply, request=request, misbehaviours=misbehaviours, whole_calls=True)


class ErrorBody(TypedDict):
    """Mistral's error body, as its API sends it with a 400."""

    object: str
    message: str
    type: str
    param: str | None
    code: str | None


def error_body(message: str) -> ErrorBody:
    """Mistral's error body for an invalid chat request."""
    return {"object": "error", "message": message, "type": "invalid_request_error", "param": None, "code": None}


WIRE = _chat.chat_wire(
    f"{ROOT}/v1/chat/completions",
    dialect="mistral",
    reply_body=reply_body,
    reply_frames=reply_frames,
    error_body=error_body,
)
