r"""Gemini ``generateContent`` as the simulator speaks it (the model and the method are in the path).

Routes (``route``): ``POST /{version}/models/{model}:generateContent`` and
``…:streamGenerateContent`` (``?alt=sse``; query strings are not read), ``version`` one of
``v1beta``, ``v1``, ``v1alpha`` (the Developer API; the google-genai client with a ``base_url``
sends ``v1``), and the Vertex spellings ``/{version}/publishers/google/models/{model}:…`` and
``/{version}/projects/{project}/locations/{location}/publishers/google/models/{model}:…``
(``v1``, ``v1beta1``). The path's model and method become the request's ``model`` and ``stream``;
the body (camelCase REST: ``contents``, ``systemInstruction``, ``tools``, ``generationConfig``) is
read as sent. The ``x-goog-api-key`` header is accepted, not checked.

Plain reply: a ``GenerateContentResponse`` with one candidate whose ``content`` (role ``model``)
holds a text part (when the turn has text) and one ``functionCall`` part per call (``name``,
``args``, ``id``); the first call carries a ``thoughtSignature`` (``sign``), as Gemini 3 signs the
first call of a step; ``finishReason`` ``STOP``, or ``MAX_TOKENS`` when the arguments were cut (the
calls are left out: Gemini's arguments are an object, not text). ``malformed_call``: no content,
``finishReason`` ``MALFORMED_FUNCTION_CALL`` and a ``finishMessage`` quoting the call. Beside the
candidate: ``modelVersion`` (the turn's model, else the path's), ``responseId``, and
``usageMetadata``: ``promptTokenCount`` the prompt's estimate (``promptTokensDetails``: all of it
``TEXT``), ``cachedContentTokenCount`` its part served from cache (``_cache``; left out when 0, as
the provider does), ``candidatesTokenCount``, ``thoughtsTokenCount`` (the simulated model always
thinks a little), ``totalTokenCount`` the sum of prompt, candidates and thoughts.

Stream: SSE ``data:`` lines ending ``\r\n\r\n``, no ``event:`` lines, no ``[DONE]``; each chunk a
``GenerateContentResponse`` with the same ``modelVersion`` and ``responseId`` and the usage so far:
the text in pieces, each call whole in its own chunk, then a last chunk with an empty text part,
the ``finishReason`` and the whole usage. ``cut_arguments`` leaves the calls out and ends on
``MAX_TOKENS``; the frame misbehaviours apply as in every lane (``_frames``).

Signatures: ``sign`` is deterministic in the prefix the call was made after (``systemInstruction``,
``tools``, ``contents``); the simulator does not check the signatures it receives, it only refuses
a call step without one, through the tool-turn rules (``validate``).

Errors: ``{"error": {"code": 400, "message": …, "status": "INVALID_ARGUMENT"}}``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from typing import Final, Literal, TypedDict

from otel_toolturn.simulator._anthropic import thinking_text
from otel_toolturn.simulator._cache import PromptUsage
from otel_toolturn.simulator._canonical import digest
from otel_toolturn.simulator._frames import Frame, apply_misbehaviours, pieces
from otel_toolturn.simulator._script import Misbehaviour, ScriptedTurn, token_estimate
from otel_toolturn.simulator._wire import Json, NewId, Wire, admit_all

PATH: Final = "/v1beta/models/{model}:generateContent"
"""The lane's documented path; ``route`` reads every spelling of it."""

ROUTE: Final = re.compile(
    r"/(?:(?:v1|v1beta|v1alpha)/models"
    r"|(?:v1|v1beta1)/(?:projects/[^/]+/locations/[^/]+/)?publishers/google/models)"
    r"/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)"
)
"""The Developer API and Vertex paths of ``generateContent`` and ``streamGenerateContent``."""

SIGNATURE_TAG: Final = "g1"
"""How the text behind every signature the simulator makes starts (the signature is its base64)."""


def route(path: str) -> Mapping[str, object] | None:
    """The request fields ``path`` carries (``model``, ``stream``); ``None`` when it is not this lane's."""
    match = ROUTE.fullmatch(path)
    if match is None:
        return None
    return {"model": match["model"], "stream": match["method"] == "streamGenerateContent"}


def sign(request: Mapping[str, object]) -> str:
    """The thought signature of a call made after ``request``'s prefix (base64 text, letters and digits only)."""
    prefix = {
        "systemInstruction": request.get("systemInstruction"),
        "tools": request.get("tools"),
        "contents": request.get("contents"),
    }
    return base64.b64encode((SIGNATURE_TAG + digest(prefix)).encode()).decode()


def reply_body(
    turn: ScriptedTurn, *, request: Mapping[str, object], new_id: NewId, cut: bool, prompt: PromptUsage
) -> Json:
    """Build the ``GenerateContentResponse`` answering ``request`` with ``turn``."""
    reply_id = new_id("gsim-")
    parts: list[Json] = []
    candidate: Json
    if "malformed_call" in turn.misbehaviours:
        calls = ", ".join(_call_text(call.name, call.arguments) for call in turn.calls)
        candidate = {"finishReason": "MALFORMED_FUNCTION_CALL", "finishMessage": f"Malformed function call: {calls}"}
    else:
        if turn.text:
            parts.append({"text": turn.text})
        for index, call in enumerate(() if cut else turn.calls):
            part: Json = {
                "functionCall": {"name": call.name, "args": dict(call.arguments), "id": call.call_id or new_id("gc-")}
            }
            if index == 0:
                part["thoughtSignature"] = sign(request)
            parts.append(part)
        candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "MAX_TOKENS" if cut else "STOP"}
    candidate["index"] = 0
    usage: Json = {
        "promptTokenCount": prompt.tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt.tokens}],
    }
    if prompt.cached:
        usage["cachedContentTokenCount"] = prompt.cached
    usage["thoughtsTokenCount"] = token_estimate(thinking_text(turn))
    return {
        "candidates": [candidate],
        "usageMetadata": _with_candidates(usage, parts),
        "modelVersion": turn.model or str(request.get("model", "")),
        "responseId": reply_id,
    }


def reply_frames(
    reply: Mapping[str, object], *, request: Mapping[str, object], misbehaviours: Sequence[Misbehaviour]
) -> list[Frame]:
    """``reply`` as the ``streamGenerateContent`` chunk stream."""
    del request
    candidate = _first_candidate(reply)
    usage = reply.get("usageMetadata")
    usage = usage if isinstance(usage, Mapping) else {}
    finish = candidate.get("finishReason")
    content = candidate.get("content")
    given = content.get("parts") if isinstance(content, Mapping) else None
    parts = [p for p in given if isinstance(p, Mapping)] if isinstance(given, list) else []
    if "cut_arguments" in misbehaviours and any("functionCall" in p for p in parts):
        parts = [p for p in parts if "functionCall" not in p]
        finish = "MAX_TOKENS"

    def envelope(candidate: Json, so_far: Sequence[Mapping[str, object]]) -> Json:
        return {
            "candidates": [candidate],
            "usageMetadata": _with_candidates(usage, so_far),
            "modelVersion": reply.get("modelVersion"),
            "responseId": reply.get("responseId"),
        }

    def chunk(sent: Mapping[str, object], so_far: Sequence[Mapping[str, object]]) -> Frame:
        data = envelope({"content": {"role": "model", "parts": [dict(sent)]}, "index": 0}, so_far)
        return Frame(data=data, role="content", line_end="\r\n")

    def ending(so_far: Sequence[Mapping[str, object]]) -> Frame:
        last: Json = {"content": {"role": "model", "parts": [{"text": ""}]}} if content is not None else {}
        last.update(finishReason=finish, index=0)
        if "finishMessage" in candidate:
            last["finishMessage"] = candidate["finishMessage"]
        return Frame(data=envelope(last, so_far), role="finish", line_end="\r\n")

    frames: list[Frame] = []
    for index, part in enumerate(parts):
        if "text" not in part:
            frames.append(chunk(part, parts[: index + 1]))
            continue
        text, shown = str(part["text"]), 0
        for piece in pieces(text, 3):
            shown += len(piece)
            frames.append(chunk({**part, "text": piece}, [*parts[:index], {**part, "text": text[:shown]}]))
    frames.append(ending(parts))
    late = [*parts, {"text": " late"}]
    after_end = [chunk(late[-1], late), ending(late)]
    return apply_misbehaviours(frames, misbehaviours, after_end=after_end, bad_frame_event=None)


class ErrorDetail(TypedDict):
    """The ``error`` member of Google's error body."""

    code: int
    message: str
    status: Literal["INVALID_ARGUMENT"]


class ErrorBody(TypedDict):
    """Google's error body, as the Gemini API sends it with HTTP 400."""

    error: ErrorDetail


def error_body(message: str) -> ErrorBody:
    """Gemini's error body for an invalid request."""
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}


def _call_text(name: str, arguments: Mapping[str, object]) -> str:
    """A call as the model wrote it when the provider could not parse it (Python call syntax)."""
    listed = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return f"print(default_api.{name}({listed}))"


def _with_candidates(usage: Mapping[str, object], parts: Sequence[object]) -> Json:
    """``usage`` with the candidates' tokens for ``parts`` and the total that follows from them."""
    candidates = token_estimate(list(parts)) if parts else 0
    prompt = usage.get("promptTokenCount")
    thoughts = usage.get("thoughtsTokenCount")
    total = candidates + (prompt if isinstance(prompt, int) else 0) + (thoughts if isinstance(thoughts, int) else 0)
    return {**usage, "candidatesTokenCount": candidates, "totalTokenCount": total}


def _first_candidate(reply: Mapping[str, object]) -> Mapping[str, object]:
    candidates = reply.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], Mapping):
        return candidates[0]
    return {}


WIRE = Wire(
    lane="gemini.generate_content",
    path=PATH,
    transcript_field="contents",
    head_fields=("systemInstruction", "tools"),
    admit=admit_all,
    reply_body=reply_body,
    reply_frames=reply_frames,
    error_body=error_body,
    route=route,
)
