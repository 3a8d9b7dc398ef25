"""The simulator: a loopback HTTP server that answers like the providers, rules and all.

Role: the provider stand-in for the demo and the tests. It reads each request body, enforces the
lane's tool-turn rules exactly as the project's validator states them (``otel_toolturn.validate``:
the first violation is answered with HTTP 400 and the provider's own error body and words), and
answers a valid request with the next scripted turn (or ``default_turn``), as plain JSON or, when
the body says ``"stream": true`` (Gemini: the path names ``streamGenerateContent``), as the
lane's SSE stream (Bedrock: its event stream) with the turn's misbehaviours applied.
A request that passes the tool-turn rules then meets the lane's own checks (``Wire.admit``; the
Anthropic lane: the prefix check of signed thinking, ``_binding``), and every served reply reports
how much of its prompt was served from cache (``_cache``).

Reads: ``POST /v1/messages``, ``/v1/chat/completions`` (and any path ending ``/chat/completions``:
Groq's, the Hugging Face router's, an Azure AI inference endpoint's; ``_chat.SUFFIX``; Mistral's
``/mistral/v1/chat/completions``, judged in the ``mistral`` dialect, ``_mistral``; DeepSeek's
``/deepseek/chat/completions``, judged in the ``deepseek`` dialect, ``_deepseek``),
``/v1/responses``, and Gemini's
``/v1beta/models/{model}:generateContent`` and ``…:streamGenerateContent`` in their Developer API
and Vertex spellings (``_gemini.route``: the path's model and method are read as the request's
``model`` and ``stream``), and Bedrock Runtime's ``/model/{modelId}/converse`` and
``…/converse-stream`` (``_bedrock.route``, the same way), and its ``…/invoke`` and
``…/invoke-with-response-stream`` with an Anthropic Messages body (``_bedrock_invoke``: the Anthropic
lane), and Cohere's ``/v2/chat`` (``_cohere``: the ``cohere`` dialect's rules, Cohere's replies and 400 body),
and Ollama's ``/api/chat`` (``_ollama``: judged in the ``ollama`` dialect, Ollama's reply and NDJSON stream);
query strings ignored.
Keeps: every request received (``requests``); per lane, counts and token totals (``summary``) and
the last prompts for the cache accounting; for Responses, each reply's whole conversation under its
id so a later ``previous_response_id`` brings the earlier items back — a request is validated (and
its prompt measured) with them ahead of its own ``input``, as the provider does.
Does not: authenticate, count real tokens, or look at anything but the transcript and a few fields.

Example::

    with Simulator(turns=[ScriptedTurn(calls=(ScriptedCall(name="read"),))]) as sim:
        client = anthropic.Anthropic(base_url=sim.base_url, api_key="test")
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType, TracebackType
from typing import Final
from urllib.parse import urlsplit

from otel_toolturn._errors import ToolTurnError
from otel_toolturn._validate import validate
from otel_toolturn._vocab import Lane
from otel_toolturn.simulator import (
    _anthropic,
    _bedrock,
    _bedrock_invoke,
    _chat,
    _cohere,
    _deepseek,
    _gemini,
    _mistral,
    _ollama,
    _responses,
)
from otel_toolturn.simulator._cache import PromptCache, PromptUsage, prompt_units
from otel_toolturn.simulator._frames import Frame
from otel_toolturn.simulator._script import ScriptedTurn, default_turn
from otel_toolturn.simulator._wire import SSE_CONTENT_TYPE, Wire

WIRES: Final[Mapping[str, Wire]] = MappingProxyType(
    {
        w.path: w
        for w in (
            _anthropic.WIRE,
            _chat.WIRE,
            _mistral.WIRE,
            _deepseek.WIRE,
            _responses.WIRE,
            _gemini.WIRE,
            _bedrock.WIRE,
            _bedrock_invoke.WIRE,
            _cohere.WIRE,
            _ollama.WIRE,
        )
    }
)
"""The lanes the simulator speaks, by URL path (a lane with a ``route`` also by the paths it reads)."""
LISTEN_BACKLOG: Final = 1024
"""Connections the kernel queues before the server accepts them (the standard library's default, 5, refuses a burst)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordedRequest:
    """One request as received, and what the simulator answered.

    ``body`` is the parsed JSON (the raw text when it was not JSON); ``error`` the message of a
    4xx answer (``None`` when the request was served).
    """

    path: str
    lane: Lane | None
    body: object
    status: int
    error: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class LaneSummary:
    """What one lane of a simulator run served, by the simulator's own estimates.

    ``served``: requests answered 200; ``refused``: requests answered 400 (any rule);
    ``binding_refusals``: those refused by the lane's own checks (today: an invalid signed thinking
    block, Anthropic); ``thinking_dropped``: thinking blocks dropped under ``drop_block``;
    ``prompt_tokens`` and ``cached_tokens``: the served prompts' estimates and their cached parts.
    """

    served: int = 0
    refused: int = 0
    binding_refusals: int = 0
    thinking_dropped: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True, kw_only=True, slots=True)
class Answer:
    """What to send back: a status and a JSON body, or (streamed) a status and frames; the lane's extra headers.

    ``encode_frame`` writes one frame's bytes (SSE, or Bedrock's event stream framing), sent as
    ``stream_content_type``.
    """

    status: int
    body: Mapping[str, object] | None = None
    frames: tuple[Frame, ...] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    stream_content_type: str = SSE_CONTENT_TYPE
    encode_frame: Callable[[Frame], bytes] = Frame.encode


class Simulator:
    """The provider simulator; a context manager that serves on ``127.0.0.1`` while open.

    ``turns`` queue scripted replies; each valid request takes the next one (a rejected request
    takes none); with the queue empty, ``default_turn`` answers. ``port=0`` picks a free port.
    """

    def __init__(self, turns: Iterable[ScriptedTurn] = (), *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._lock = threading.Lock()
        self._turns: deque[ScriptedTurn] = deque(turns)
        self._requests: list[RecordedRequest] = []
        self._conversations: dict[str, list[object]] = {}
        self._cache = PromptCache()
        self._summaries: dict[Lane, LaneSummary] = {}
        self._next_id = 0
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Bind and serve in a daemon thread (a second call is a no-op)."""
        if self._server is not None:
            return
        self._server = _Server(self._address, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="toolturn-simulator", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and release the port (a second call is a no-op)."""
        server, thread = self._server, self._thread
        self._server, self._thread = None, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join()

    def __enter__(self) -> Simulator:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- what callers read ---------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` — the ``base_url`` of the Anthropic client and google-genai's ``HttpOptions``."""
        if self._server is None:
            raise RuntimeError("the simulator is not serving; use it as a context manager or call start()")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` — the OpenAI client's ``base_url``."""
        return self.base_url + "/v1"

    @property
    def mistral_base_url(self) -> str:
        """``http://127.0.0.1:PORT/mistral`` — the mistralai client's ``server_url`` (it adds ``/v1/…``)."""
        return self.base_url + _mistral.ROOT

    @property
    def deepseek_base_url(self) -> str:
        """``http://127.0.0.1:PORT/deepseek`` — an OpenAI client's ``base_url`` for DeepSeek (it adds ``/chat/…``)."""
        return self.base_url + _deepseek.ROOT

    @property
    def requests(self) -> tuple[RecordedRequest, ...]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return tuple(self._requests)

    @property
    def pending_turns(self) -> int:
        """How many scripted turns are still queued."""
        with self._lock:
            return len(self._turns)

    def summary(self, lane: Lane) -> LaneSummary:
        """The run so far on ``lane``: requests served and refused, prompt and cached tokens."""
        with self._lock:
            return self._summaries.get(lane, LaneSummary())

    def enqueue(self, *turns: ScriptedTurn) -> None:
        """Queue more scripted replies, answered in order."""
        with self._lock:
            self._turns.extend(turns)

    def clear_turns(self) -> int:
        """Forget every queued scripted turn; return how many there were."""
        with self._lock:
            count = len(self._turns)
            self._turns.clear()
            return count

    # --- the core ------------------------------------------------------------------------------
    def answer(self, path: str, raw: bytes) -> Answer:
        """Decide the answer to one ``POST`` (the HTTP handler only reads and writes bytes)."""
        routed = _route(path)
        if routed is None:
            message = f"Unknown request URL: POST {path}. Please check the URL for typos."
            self._record(
                RecordedRequest(path=path, lane=None, body=raw.decode(errors="replace"), status=404, error=message)
            )
            error = {"message": message, "type": "invalid_request_error", "param": None, "code": "unknown_url"}
            return Answer(status=404, body={"error": error})
        wire, path_fields = routed
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return self._reject(
                wire, path, raw.decode(errors="replace"), "The request body is not a valid JSON object."
            )
        transcript = body.get(wire.transcript_field)
        if transcript is None:
            return self._reject(wire, path, body, _missing_field(wire))
        if not isinstance(transcript, (list, str)):
            kind = type(transcript).__name__
            message = f"Invalid type for '{wire.transcript_field}': expected an array, but got {kind} instead."
            return self._reject(wire, path, body, message)
        with self._lock:
            earlier = self._conversations.get(str(body.get("previous_response_id")))
        if body.get("previous_response_id") is not None and earlier is None:
            message = f"Previous response with id '{body['previous_response_id']}' not found."
            return self._reject(wire, path, body, message)
        items: list[object] | str = transcript if earlier is None else [*earlier, *_as_items(transcript)]
        try:
            violations = validate(items, lane=wire.lane, dialect=wire.dialect)
        except ToolTurnError as error:
            return self._reject(wire, path, body, str(error))
        if violations:
            return self._reject(wire, path, body, violations[0].message)
        request = {**body, **path_fields} if path_fields else body
        admission = wire.admit(request)
        if admission.refusal is not None:
            return self._reject(wire, path, body, admission.refusal, by_lane_checks=True)
        seen = admission.request
        prompt_items = [*(earlier or []), *_as_items(seen.get(wire.transcript_field))]
        prompt = self._cache.account(wire.lane, prompt_units(seen, prompt_items, head_fields=wire.head_fields))
        with self._lock:
            turn = self._turns.popleft() if self._turns else default_turn(request, lane=wire.lane)
        streamed = request.get("stream") is True
        cut = not streamed and "cut_arguments" in turn.misbehaviours
        reply = {
            **wire.reply_body(turn, request=seen, new_id=self._new_id, cut=cut, prompt=prompt),
            **admission.reply_fields,
        }
        if wire.lane == "openai.responses":
            output = reply.get("output")
            with self._lock:
                self._conversations[str(reply["id"])] = [
                    *_as_items(items),
                    *(output if isinstance(output, list) else []),
                ]
        self._record(RecordedRequest(path=path, lane=wire.lane, body=body, status=200))
        self._count(wire, prompt=prompt, dropped=admission.dropped)
        if not streamed:
            return Answer(status=200, body=reply)
        frames = wire.reply_frames(reply, request=request, misbehaviours=turn.misbehaviours)
        return Answer(
            status=200,
            frames=tuple(frames),
            stream_content_type=wire.stream_content_type,
            encode_frame=wire.encode_frame,
        )

    def _reject(self, wire: Wire, path: str, body: object, message: str, *, by_lane_checks: bool = False) -> Answer:
        self._record(RecordedRequest(path=path, lane=wire.lane, body=body, status=400, error=message))
        with self._lock:
            was = self._summaries.get(wire.lane, LaneSummary())
            self._summaries[wire.lane] = replace(
                was, refused=was.refused + 1, binding_refusals=was.binding_refusals + int(by_lane_checks)
            )
        return Answer(status=400, body=wire.error_body(message), headers=wire.error_headers)

    def _count(self, wire: Wire, *, prompt: PromptUsage, dropped: int) -> None:
        with self._lock:
            was = self._summaries.get(wire.lane, LaneSummary())
            self._summaries[wire.lane] = replace(
                was,
                served=was.served + 1,
                thinking_dropped=was.thinking_dropped + dropped,
                prompt_tokens=was.prompt_tokens + prompt.tokens,
                cached_tokens=was.cached_tokens + prompt.cached,
            )

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            self._next_id += 1
            return f"{prefix}{self._next_id:04d}"


def _missing_field(wire: Wire) -> str:
    """Give the provider's words for a request without its transcript field."""
    if wire.lane == "anthropic.messages":
        return f"{wire.transcript_field}: Field required"
    if wire.lane == "gemini.generate_content":
        return f"* GenerateContentRequest.{wire.transcript_field}: contents is not specified\n"
    return f"Missing required parameter: '{wire.transcript_field}'."


def _route(path: str) -> tuple[Wire, Mapping[str, object]] | None:
    """The lane serving ``path`` and the request fields the path carries (``None``: no lane does)."""
    wire = WIRES.get(path)
    if wire is not None and wire.route is None:
        return wire, {}
    for candidate in WIRES.values():
        fields = candidate.route(path) if candidate.route is not None else None
        if fields is not None:
            return candidate, fields
    return None


def _as_items(transcript: object) -> list[object]:
    """Read a Responses ``input`` as a list of items (a string is one user message)."""
    if isinstance(transcript, str):
        return [{"type": "message", "role": "user", "content": transcript}]
    return list(transcript) if isinstance(transcript, list) else []


class _Server(ThreadingHTTPServer):
    """One thread per connection; a listen backlog of ``LISTEN_BACKLOG``, so a burst of hundreds of clients waits."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], simulator: Simulator) -> None:
        self.simulator = simulator
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    """Reads one request's bytes, asks the simulator, writes the answer (one request per connection)."""

    protocol_version = "HTTP/1.0"
    server: _Server

    def do_POST(self) -> None:
        """Answer one POST."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        answer = self.server.simulator.answer(urlsplit(self.path).path, raw)
        try:
            if answer.frames is None:
                payload = json.dumps(answer.body).encode()
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
                return
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.stream_content_type)
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for frame in answer.frames:
                self.wfile.write(answer.encode_frame(frame))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return  # the client stopped reading; nothing is owed to it

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        """Stay quiet: the simulator's traffic is recorded in ``Simulator.requests``."""
