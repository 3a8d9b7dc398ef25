"""The simulator's Gemini lane: the real google-genai client reads its replies, rules, streams and misbehaviours."""

from __future__ import annotations

import base64
import itertools
from typing import Final

import httpx
import pytest
import yaml
from google import genai
from google.genai import errors, types

from otel_toolturn import ensure_tool_turn_invariants
from otel_toolturn.simulator import DEFAULT_ANSWER, ScriptedCall, ScriptedTurn, Simulator
from otel_toolturn.simulator._gemini import route, sign
from tests.simulator.sim_wire import (
    AIOHTTP_SUBCLASS_WARNING,
    GEMINI_PATH,
    GEMINI_STREAM_PATH,
    gemini_client,
    parse_sse,
)
from tests.streams._recordings import RECORDED, present

MODEL = "gemini-test"
TWO_CALLS = ScriptedTurn(
    text="Looking both up.",
    calls=(
        ScriptedCall(name="lookup", arguments={"key": "alpha", "depth": 2}),
        ScriptedCall(name="lookup", arguments={"key": "beta"}, call_id="call_fixed_beta"),
    ),
)
ONE_CALL = ScriptedTurn(calls=(ScriptedCall(name="lookup", arguments={"key": "alpha"}),))
LOOKUP = types.FunctionDeclaration(
    name="lookup",
    description="Look a key up.",
    parameters_json_schema={"type": "object", "properties": {"key": {"type": "string"}}},
)
TOOLS: list[types.ToolUnion] = [types.Tool(function_declarations=[LOOKUP])]
REST_TOOLS = [{"functionDeclarations": [{"name": "lookup", "description": "Look a key up."}]}]

RESPONSES_MISMATCH = (
    "Please ensure that the number of function response parts is equal to the number of function call parts"
)
RESPONSE_NOT_AFTER_CALL = "Please ensure that function response turn comes immediately after a function call turn."
MISSING_SIGNATURE = "Function call is missing a thought_signature in functionCall parts."


def user(text: str) -> dict[str, object]:
    return {"role": "user", "parts": [{"text": text}]}


def calls(*names: str, signature: str | None = "c2lnbmVk") -> dict[str, object]:
    """A model content calling ``names`` in parallel (ids ``id_<name>``); the first call signed unless ``None``."""
    parts: list[dict[str, object]] = []
    for index, name in enumerate(names):
        part: dict[str, object] = {"functionCall": {"name": name, "args": {}, "id": f"id_{name}"}}
        if index == 0 and signature is not None:
            part["thoughtSignature"] = signature
        parts.append(part)
    return {"role": "model", "parts": parts}


def results(*names: str) -> dict[str, object]:
    parts = [{"functionResponse": {"name": n, "response": {"result": "ok"}, "id": f"id_{n}"}} for n in names]
    return {"role": "user", "parts": parts}


def post(sim: Simulator, body: dict[str, object], path: str = GEMINI_PATH) -> httpx.Response:
    return httpx.post(sim.base_url + path, json=body, headers={"x-goog-api-key": "sim"})


def first_candidate(reply: types.GenerateContentResponse) -> types.Candidate:
    assert reply.candidates
    return reply.candidates[0]


# --- the google-genai client reads every reply --------------------------------------------------------------
def assert_two_calls(reply: types.GenerateContentResponse) -> None:
    """The reply to ``TWO_CALLS``: the text, both calls with their ids, only the first signed, STOP, usage."""
    candidate = first_candidate(reply)
    assert candidate.finish_reason == types.FinishReason.STOP
    assert candidate.content is not None
    text, first, second = candidate.content.parts or []
    assert text.text == "Looking both up."
    assert first.function_call is not None
    assert second.function_call is not None
    assert (first.function_call.name, first.function_call.args) == ("lookup", {"key": "alpha", "depth": 2})
    assert (second.function_call.id, second.function_call.args) == ("call_fixed_beta", {"key": "beta"})
    assert first.function_call.id
    assert first.thought_signature
    assert second.thought_signature is None
    assert reply.model_version == MODEL
    assert reply.response_id
    usage = reply.usage_metadata
    assert usage is not None
    assert usage.prompt_token_count
    assert usage.candidates_token_count
    assert usage.thoughts_token_count
    assert (
        usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count + usage.thoughts_token_count
    )


def test_generate_content_reads_text_parallel_calls_and_usage(sim: Simulator, g_client: genai.Client) -> None:
    """``models.generate_content`` parses the reply: text, parallel calls with ids, the first signed, usage."""
    sim.enqueue(TWO_CALLS)
    assert_two_calls(g_client.models.generate_content(model=MODEL, contents="look these up"))
    assert sim.requests[-1].path == f"/v1/models/{MODEL}:generateContent"
    assert sim.summary("gemini.generate_content").served == 1


@AIOHTTP_SUBCLASS_WARNING
async def test_async_generate_content_reads_the_same_reply(sim: Simulator) -> None:
    """``client.aio.models.generate_content`` (aiohttp) parses the same reply as the sync client."""
    sim.enqueue(TWO_CALLS)
    client = gemini_client(sim.base_url)
    try:
        assert_two_calls(await client.aio.models.generate_content(model=MODEL, contents="look these up"))
    finally:
        await client.aio.aclose()
        client.close()


def assert_streamed(chunks: list[types.GenerateContentResponse]) -> None:
    """The stream of ``TWO_CALLS``: text over several chunks, each call whole in its own, STOP and usage last."""
    parts = [part for chunk in chunks for part in (first_candidate(chunk).content or types.Content()).parts or []]
    texts = [p.text for p in parts if p.text]
    assert len(texts) >= 2
    assert "".join(texts) == "Looking both up."
    call_chunks = [c for c in chunks if c.function_calls]
    assert [len(c.function_calls or []) for c in call_chunks] == [1, 1]
    assert [c.function_calls[0].args for c in call_chunks if c.function_calls] == [
        {"key": "alpha", "depth": 2},
        {"key": "beta"},
    ]
    finishes = [first_candidate(c).finish_reason for c in chunks]
    assert finishes[-1] == types.FinishReason.STOP
    assert all(f is None for f in finishes[:-1])
    assert {c.response_id for c in chunks} == {chunks[0].response_id}
    assert all(c.model_version == MODEL for c in chunks)
    last = chunks[-1].usage_metadata
    assert last is not None
    assert last.candidates_token_count
    assert all(
        (c.usage_metadata.candidates_token_count or 0) <= last.candidates_token_count
        for c in chunks
        if c.usage_metadata
    )


def test_generate_content_stream_splits_text_and_sends_calls_whole(sim: Simulator, g_client: genai.Client) -> None:
    """``generate_content_stream`` yields text pieces, one whole call per chunk, and the finish reason last."""
    sim.enqueue(TWO_CALLS)
    assert_streamed(list(g_client.models.generate_content_stream(model=MODEL, contents="look these up")))
    assert sim.requests[-1].path == f"/v1/models/{MODEL}:streamGenerateContent"


@AIOHTTP_SUBCLASS_WARNING
async def test_async_generate_content_stream_reads_the_same_chunks(sim: Simulator) -> None:
    """``client.aio.models.generate_content_stream`` (aiohttp) yields the same chunks as the sync client."""
    sim.enqueue(TWO_CALLS)
    client = gemini_client(sim.base_url)
    try:
        stream = await client.aio.models.generate_content_stream(model=MODEL, contents="look these up")
        assert_streamed([chunk async for chunk in stream])
    finally:
        await client.aio.aclose()
        client.close()


def test_vertex_client_is_served_on_its_own_path(sim: Simulator) -> None:
    """A client with ``vertexai=True`` is served on the Vertex path (``publishers/google/models``)."""
    sim.enqueue(ONE_CALL)
    with gemini_client(sim.base_url, vertexai=True) as client:
        reply = client.models.generate_content(model=MODEL, contents="look it up")
    assert [c.args for c in reply.function_calls or []] == [{"key": "alpha"}]
    assert sim.requests[-1].path == f"/v1beta1/publishers/google/models/{MODEL}:generateContent"


# --- tool rounds ------------------------------------------------------------------------------------------
def test_chat_session_function_round_sends_the_signed_call_back(sim: Simulator, g_client: genai.Client) -> None:
    """A chat session: the call, its result sent back with the signed call as it arrived, then the answer."""
    sim.enqueue(ONE_CALL)
    chat = g_client.chats.create(model=MODEL, config=types.GenerateContentConfig(tools=TOOLS))
    first = chat.send_message("look alpha up")
    call = (first.function_calls or [])[0]
    response = types.Part.from_function_response(name="lookup", response={"value": 1})
    assert response.function_response is not None
    response.function_response.id = call.id
    answer = chat.send_message(response)
    assert answer.text == DEFAULT_ANSWER
    sent = sim.requests[-1]
    assert sent.status == 200
    assert isinstance(sent.body, dict)
    model_content = sent.body["contents"][1]
    assert (
        model_content["parts"][0]["thoughtSignature"]
        == base64.b64encode(
            (first_candidate(first).content or types.Content()).parts[0].thought_signature or b""  # type: ignore[index]
        ).decode()
    )
    assert sent.body["contents"][2]["parts"][0]["functionResponse"]["id"] == call.id


def test_chat_stream_history_is_accepted_on_the_next_turn(sim: Simulator, g_client: genai.Client) -> None:
    """A streamed chat stores one model content per chunk; the next request carrying them all is served."""
    sim.enqueue(TWO_CALLS)
    chat = g_client.chats.create(model=MODEL, config=types.GenerateContentConfig(tools=TOOLS))
    streamed = list(chat.send_message_stream("look these up"))
    ids = [c.id for chunk in streamed for c in chunk.function_calls or []]
    parts = [types.Part(function_response=types.FunctionResponse(name="lookup", response={}, id=i)) for i in ids]
    answer = chat.send_message(parts)
    assert answer.text == DEFAULT_ANSWER
    assert sim.requests[-1].status == 200


def lookup(key: str) -> str:
    """Look a key up (the automatic function calling test's tool)."""
    return f"value of {key}"


def test_automatic_function_calling_round(sim: Simulator, g_client: genai.Client) -> None:
    """Automatic function calling: the SDK runs the called function and sends its result; the answer follows."""
    sim.enqueue(ONE_CALL)
    reply = g_client.models.generate_content(
        model=MODEL, contents="look alpha up", config=types.GenerateContentConfig(tools=[lookup])
    )
    assert reply.text == DEFAULT_ANSWER
    sent = sim.requests[-1].body
    assert isinstance(sent, dict)
    assert sent["contents"][-1]["parts"][0]["functionResponse"]["response"] == {"result": "value of alpha"}


def test_default_turn_calls_the_first_declared_tool_then_answers(sim: Simulator) -> None:
    """With nothing scripted: user text earns a signed call to the first declared tool, its result a text answer."""
    reply = post(sim, {"contents": [user("go")], "tools": REST_TOOLS}).json()
    part = reply["candidates"][0]["content"]["parts"][0]
    assert part["functionCall"]["name"] == "lookup"
    assert part["thoughtSignature"] == sign({"contents": [user("go")], "tools": REST_TOOLS})
    follow = [user("go"), {"role": "model", "parts": [part]}, results("lookup")]
    follow[2]["parts"][0]["functionResponse"]["id"] = part["functionCall"]["id"]  # type: ignore[index]
    answer = post(sim, {"contents": follow, "tools": REST_TOOLS}).json()
    assert answer["candidates"][0]["content"]["parts"] == [{"text": DEFAULT_ANSWER}]


# --- the rules ---------------------------------------------------------------------------------------------
BROKEN: list[tuple[str, list[dict[str, object]], str]] = [
    ("a summariser pruned one of two results", [user("go"), calls("a", "b"), results("a")], RESPONSES_MISMATCH),
    (
        "results split over two contents",
        [user("go"), calls("a", "b"), results("a"), results("b")],
        RESPONSES_MISMATCH,
    ),
    (
        "the call turn was dropped by history curation",
        [user("go"), results("a"), user("next")],
        RESPONSE_NOT_AFTER_CALL,
    ),
    ("the call step lost its signature", [user("go"), calls("a", signature=None), results("a")], MISSING_SIGNATURE),
]


@pytest.mark.parametrize(("name", "contents", "words"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_contents_get_geminis_400(
    sim: Simulator, name: str, contents: list[dict[str, object]], words: str
) -> None:
    """Each broken shape is refused with HTTP 400, Google's error body and Gemini's words; no turn is taken."""
    del name
    sim.enqueue(ONE_CALL)
    response = post(sim, {"contents": contents, "tools": REST_TOOLS})
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    assert words in error["message"]
    assert sim.pending_turns == 1
    assert sim.requests[-1].error == error["message"]


@pytest.mark.parametrize(("name", "contents", "words"), BROKEN, ids=[b[0] for b in BROKEN])
def test_repaired_contents_are_served(sim: Simulator, name: str, contents: list[dict[str, object]], words: str) -> None:
    """The law's view of each broken shape is served (HTTP 200), after at least one repair."""
    del name, words
    view = ensure_tool_turn_invariants(contents, lane="gemini.generate_content")
    assert view.repairs
    response = post(sim, {"contents": list(view.messages), "tools": REST_TOOLS})
    assert response.status_code == 200, response.text


def test_sdk_raises_client_error_with_geminis_words(sim: Simulator, g_client: genai.Client) -> None:
    """The SDK raises ``ClientError`` 400 ``INVALID_ARGUMENT`` with Gemini's words; the simulator counts a refusal."""
    contents = [
        types.Content(role="user", parts=[types.Part(text="go")]),
        types.Content(
            role="model",
            parts=[
                types.Part(function_call=types.FunctionCall(name="a", args={}, id="id_a"), thought_signature=b"sig"),
                types.Part(function_call=types.FunctionCall(name="b", args={}, id="id_b")),
            ],
        ),
        types.Content(
            role="user", parts=[types.Part(function_response=types.FunctionResponse(name="a", response={}, id="id_a"))]
        ),
    ]
    with pytest.raises(errors.ClientError) as raised:
        g_client.models.generate_content(model=MODEL, contents=contents)
    assert raised.value.code == 400
    assert raised.value.status == "INVALID_ARGUMENT"
    assert RESPONSES_MISMATCH in (raised.value.message or "")
    summary = sim.summary("gemini.generate_content")
    assert (summary.served, summary.refused) == (0, 1)


def test_missing_contents_is_refused(sim: Simulator) -> None:
    """A request without ``contents`` gets a 400 in Google's body."""
    response = post(sim, {"tools": REST_TOOLS})
    assert response.status_code == 400
    assert "contents is not specified" in response.json()["error"]["message"]


# --- the wire -----------------------------------------------------------------------------------------------
def test_stream_wire_is_crlf_sse_without_events_or_done(sim: Simulator) -> None:
    """The stream: CRLF-ended ``data:`` chunks, no ``event:``, no ``[DONE]``; the last has the plain reply's usage."""
    sim.enqueue(TWO_CALLS)
    response = post(sim, {"contents": [user("go")]}, GEMINI_STREAM_PATH)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.text.startswith("data: {")
    assert response.text.endswith("}\r\n\r\n")
    assert response.text.count("data: ") == response.text.count("\r\n\r\n")
    frames = parse_sse(response.text)
    assert all(f.event is None and isinstance(f.payload, dict) for f in frames)
    assert "[DONE]" not in response.text
    last = frames[-1].payload
    assert isinstance(last, dict)
    assert last["candidates"][0]["finishReason"] == "STOP"
    sim.enqueue(TWO_CALLS)
    plain = post(sim, {"contents": [user("go")]}).json()["usageMetadata"]
    assert {k: v for k, v in last["usageMetadata"].items() if k != "cachedContentTokenCount"} == {
        k: v for k, v in plain.items() if k != "cachedContentTokenCount"
    }


@pytest.mark.parametrize(
    ("path", "fields"),
    [
        ("/v1beta/models/gemini-3-pro:generateContent", {"model": "gemini-3-pro", "stream": False}),
        ("/v1/models/m:streamGenerateContent", {"model": "m", "stream": True}),
        ("/v1beta1/publishers/google/models/m:generateContent", {"model": "m", "stream": False}),
        (
            "/v1/projects/p/locations/us-central1/publishers/google/models/m:generateContent",
            {"model": "m", "stream": False},
        ),
        ("/v1beta/models/m:countTokens", None),
        ("/v1beta/tunedModels/m:generateContent", None),
        ("/v1/messages", None),
    ],
)
def test_route_reads_the_model_and_method_from_the_path(path: str, fields: dict[str, object] | None) -> None:
    """The Developer API and Vertex paths give the model and whether to stream; other paths are not Gemini's."""
    assert route(path) == fields


def test_cached_prefix_is_reported_as_cached_content_tokens(sim: Simulator) -> None:
    """A prompt sharing an earlier one's prefix reports it in ``cachedContentTokenCount``; the first reports none."""
    body: dict[str, object] = {"contents": [user("go")], "systemInstruction": {"parts": [{"text": "Be brief."}]}}
    first = post(sim, body).json()["usageMetadata"]
    second = post(sim, {**body, "contents": [user("go"), {"role": "model", "parts": [{"text": "ok"}]}, user("more")]})
    usage = second.json()["usageMetadata"]
    assert "cachedContentTokenCount" not in first
    assert usage["cachedContentTokenCount"] == first["promptTokenCount"]
    assert sim.summary("gemini.generate_content").cached_tokens == first["promptTokenCount"]


# --- misbehaviours ------------------------------------------------------------------------------------------
def test_no_finish_tears_the_stream_before_the_finish_reason(sim: Simulator, g_client: genai.Client) -> None:
    """``no_finish``: every text piece and call arrives, then the stream ends with no finish reason."""
    sim.enqueue(ScriptedTurn(text=TWO_CALLS.text, calls=TWO_CALLS.calls, misbehaviours=("no_finish",)))
    chunks = list(g_client.models.generate_content_stream(model=MODEL, contents="go"))
    assert "".join(c.text or "" for c in chunks if not c.function_calls) == TWO_CALLS.text
    assert len([c for c in chunks if c.function_calls]) == 2
    assert all(first_candidate(c).finish_reason is None for c in chunks)


def test_cut_arguments_is_max_tokens_without_the_calls(sim: Simulator, g_client: genai.Client) -> None:
    """``cut_arguments``: plain and streamed, the calls are left out and the finish reason is ``MAX_TOKENS``."""
    cut = ScriptedTurn(text="Looking.", calls=ONE_CALL.calls, misbehaviours=("cut_arguments",))
    sim.enqueue(cut, cut)
    plain = g_client.models.generate_content(model=MODEL, contents="go")
    chunks = list(g_client.models.generate_content_stream(model=MODEL, contents="go"))
    assert first_candidate(plain).finish_reason == types.FinishReason.MAX_TOKENS
    assert plain.function_calls is None
    assert plain.text == "Looking."
    assert [first_candidate(c).finish_reason for c in chunks][-1] == types.FinishReason.MAX_TOKENS
    assert not any(c.function_calls for c in chunks)


def test_malformed_call_has_no_content_and_its_finish_reason(sim: Simulator, g_client: genai.Client) -> None:
    """``malformed_call``: plain and streamed, no content and ``MALFORMED_FUNCTION_CALL``; the wire quotes the call."""
    malformed = ScriptedTurn(calls=ONE_CALL.calls, misbehaviours=("malformed_call",))
    sim.enqueue(malformed, malformed)
    plain = g_client.models.generate_content(model=MODEL, contents="go")
    chunks = list(g_client.models.generate_content_stream(model=MODEL, contents="go"))
    for candidate in (first_candidate(plain), first_candidate(chunks[-1])):
        assert candidate.finish_reason == types.FinishReason.MALFORMED_FUNCTION_CALL
        assert candidate.content is None
    assert len(chunks) == 1
    sim.enqueue(malformed)
    wire = post(sim, {"contents": [user("go")]}).json()["candidates"][0]
    assert wire["finishMessage"] == "Malformed function call: print(default_api.lookup(key='alpha'))"


def test_substituted_model_is_reported_in_model_version(sim: Simulator, g_client: genai.Client) -> None:
    """A turn scripted with another model reports it in ``modelVersion`` instead of the path's model."""
    sim.enqueue(ScriptedTurn(text="hi", model="gemini-other"))
    assert g_client.models.generate_content(model=MODEL, contents="hi").model_version == "gemini-other"


def test_frames_after_end_sends_content_and_a_second_finish(sim: Simulator) -> None:
    """``frames_after_end``: after the finishing chunk come a text chunk and a second finishing chunk."""
    sim.enqueue(ScriptedTurn(text="hello there", misbehaviours=("frames_after_end",)))
    frames = parse_sse(post(sim, {"contents": [user("go")]}, GEMINI_STREAM_PATH).text)
    finishing = [
        i for i, f in enumerate(frames) if isinstance(f.payload, dict) and "finishReason" in f.payload["candidates"][0]
    ]
    assert len(finishing) == 2
    late = frames[finishing[0] + 1].payload
    assert isinstance(late, dict)
    assert late["candidates"][0]["content"]["parts"] == [{"text": " late"}]


def test_bad_frame_makes_the_sdk_raise(sim: Simulator, g_client: genai.Client) -> None:
    """``bad_frame``: one ``data:`` line is not JSON; the SDK iterating the stream raises on it."""
    sim.enqueue(ScriptedTurn(text="hello there", misbehaviours=("bad_frame",)))
    frames = parse_sse(post(sim, {"contents": [user("go")]}, GEMINI_STREAM_PATH).text)
    assert [f.payload is None for f in frames].count(True) == 1
    sim.enqueue(ScriptedTurn(text="hello there", misbehaviours=("bad_frame",)))
    with pytest.raises(errors.UnknownApiResponseError):
        list(g_client.models.generate_content_stream(model=MODEL, contents="go"))


# --- the recorded stream ------------------------------------------------------------------------------------
NOT_SIMULATED: Final = frozenset({"serviceTier"})
"""Usage fields a recording may carry that the simulator does not model (the account's service tier)."""


def chunk_shape(payload: dict[str, object]) -> str:
    """What a chunk carries: ``finish``, ``signed_call``, ``call`` or ``text``."""
    candidate = payload["candidates"][0]  # type: ignore[index]
    if "finishReason" in candidate:
        return "finish"
    part = candidate["content"]["parts"][0]
    if "functionCall" in part:
        return "signed_call" if "thoughtSignature" in part else "call"
    return "text"


def chunk_fields(payload: dict[str, object]) -> set[str]:
    """The chunk's field paths: top level, candidate, content, usage (unmodelled usage fields left out)."""
    candidate = payload["candidates"][0]  # type: ignore[index]
    usage = payload.get("usageMetadata", {})
    assert isinstance(usage, dict)
    return {
        *payload,
        *(f"candidate.{k}" for k in candidate),
        *(f"content.{k}" for k in candidate.get("content", {})),
        *(f"usage.{k}" for k in set(usage) - NOT_SIMULATED),
    }


def test_stream_matches_the_recorded_gemini_3_parallel_call_stream(sim: Simulator) -> None:
    """As Gemini 3 streams parallel calls: a signed call, a call, an empty finishing chunk, with at least its fields."""
    path = present(RECORDED / "gemini" / "extra_openinference_test_streaming_reasoning_with_multiple_tool_calls.yaml")
    cassette = yaml.safe_load(path.read_text())
    real = [f.payload for f in parse_sse(str(cassette["interactions"][0]["response"]["body"]["string"]))]
    sim.enqueue(
        ScriptedTurn(
            calls=(
                ScriptedCall(name="get_weather", arguments={"location": "Boston"}),
                ScriptedCall(name="get_weather", arguments={"location": "New Delhi"}),
            )
        )
    )
    ours = [f.payload for f in parse_sse(post(sim, {"contents": [user("weather?")]}, GEMINI_STREAM_PATH).text)]
    assert all(isinstance(p, dict) for p in [*real, *ours])
    shapes = [
        [k for k, _ in itertools.groupby(chunk_shape(p) for p in frames if isinstance(p, dict))]
        for frames in (real, ours)
    ]
    assert shapes[0] == shapes[1] == ["signed_call", "call", "finish"]
    for real_chunk, our_chunk in zip(real, ours, strict=True):
        assert isinstance(real_chunk, dict)
        assert isinstance(our_chunk, dict)
        assert chunk_fields(real_chunk) <= chunk_fields(our_chunk)
