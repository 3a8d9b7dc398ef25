"""The google-genai SDK, patched: what reaches the simulator's Gemini routes, and what is recorded.

Through the real client (``genai.Client`` with the simulator's base URL): ``generate_content`` and
``generate_content_stream``, sync and async, a chat session and an automatic function calling
round. One span per HTTP request the SDK sends, counted once; a call the SDK refuses before it
sends records nothing; the SDK's own objects and exceptions reach the caller unchanged.
"""

from __future__ import annotations

import copy
from collections.abc import Generator
from typing import Any, Final, cast

import pytest
from google.genai import _api_client, errors, models, types
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from otel_toolturn import RepairForm
from otel_toolturn.instrument import Mode, Options, ToolTurnInstrumentor, names
from otel_toolturn.simulator import Simulator
from tests.instrument.conftest import Instrument, Otel
from tests.simulator.sim_wire import AIOHTTP_SUBCLASS_WARNING, gemini_client

MODEL: Final = "gemini-test"
SIGNATURE: Final = "c2lnbmVk"
"""A thought signature (base64) on the first call of each step, as Gemini 3 asks."""

LOOKUP: Final = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(name="lookup", description="Look a thing up.", parameters_json_schema={})
    ]
)


def _call(call_id: str, *, signed: bool = False) -> dict[str, object]:
    part: dict[str, object] = {"functionCall": {"name": "lookup", "args": {"q": call_id}, "id": call_id}}
    if signed:
        part["thoughtSignature"] = SIGNATURE
    return part


def _result(call_id: str) -> dict[str, object]:
    return {"functionResponse": {"name": "lookup", "response": {"value": call_id}, "id": call_id}}


def _user(*parts: dict[str, object]) -> dict[str, object]:
    return {"role": "user", "parts": list(parts)}


def _model(*parts: dict[str, object]) -> dict[str, object]:
    return {"role": "model", "parts": list(parts)}


ASK: Final = _user({"text": "look up a and b"})
STEP: Final = _model(_call("a", signed=True), _call("b"))

BROKEN: Final[dict[str, list[dict[str, object]]]] = {
    "missing_response": [ASK, STEP, _user(_result("a"))],
    "text_after_responses": [ASK, STEP, _user(_result("a"), _result("b"), {"text": "and now?"})],
    "split_responses": [ASK, STEP, _user(_result("a")), _user(_result("b"))],
    "unsigned_call": [ASK, _model(_call("a")), _user(_result("a"))],
}
"""Contents Gemini refuses (REST camelCase), each one the law repairs."""

FORM: Final[dict[str, RepairForm]] = {
    "missing_response": "missing_result",
    "text_after_responses": "text_after_results",
    "split_responses": "late_result",
    "unsigned_call": "placeholder_signature",
}
"""The one repair form each broken case is recorded with."""

GEMINI_ONLY: Final = frozenset({"text_after_results", "placeholder_signature"})
"""The forms only this lane has (the other lanes' forms: ``test_repair``)."""

VALID: Final = [ASK, STEP, _user(_result("a"), _result("b"))]


def _spans(otel: Otel) -> list[ReadableSpan]:
    return otel.call_spans()


def _attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _only_span(otel: Otel) -> dict[str, Any]:
    (span,) = _spans(otel)
    return _attributes(span)


def _served(sim: Simulator) -> list[int]:
    return [request.status for request in sim.requests]


@pytest.mark.parametrize("case", sorted(BROKEN))
@pytest.mark.parametrize("mode", ["repair", "observe"])
def test_broken_contents_arrive_valid_in_repair_mode_and_refused_in_observe_mode(
    sim: Simulator, instrument: Instrument, case: str, mode: Mode
) -> None:
    """Repair mode sends the law's view (served); observe mode the caller's (400 ``ClientError``); both recorded."""
    otel = instrument(mode=mode)
    contents = copy.deepcopy(BROKEN[case])
    before = copy.deepcopy(contents)
    items = list(contents)
    client = gemini_client(sim.base_url)
    if mode == "repair":
        response = client.models.generate_content(model=MODEL, contents=contents)
        assert isinstance(response, types.GenerateContentResponse)
        assert response.text
        assert _served(sim) == [200]
    else:
        with pytest.raises(errors.ClientError) as refused:
            client.models.generate_content(model=MODEL, contents=contents)
        assert refused.value.code == 400
        assert _served(sim) == [400]
    assert contents == before
    assert all(a is b for a, b in zip(contents, items, strict=True))
    attributes = _only_span(otel)
    assert attributes[names.LANE] == "gemini.generate_content"
    assert attributes[names.MODE] == mode
    assert attributes[names.REPAIRS_FORMS] == (FORM[case],)
    assert otel.total(names.REQUESTS.name, toolturn__lane="gemini.generate_content") == 1
    assert otel.total(names.REPAIRS.name, gen_ai__provider__name="gcp.gemini") == attributes[names.REPAIRS_COUNT]
    if mode == "observe":
        assert attributes[names.ERROR_TYPE] == "ClientError"


@pytest.mark.parametrize("typed", [False, True], ids=["dict config", "typed config"])
def test_withheld_tools_reach_gemini_as_function_calling_mode_none(
    sim: Simulator, instrument: Instrument, typed: bool
) -> None:
    """``withhold_tools`` on google-genai: the wire's ``toolConfig`` says NONE, the tools stay, the event recorded."""
    import otel_toolturn  # noqa: PLC0415 - the scope loads the instrumentation on first use

    otel = instrument()
    config: types.GenerateContentConfigOrDict = (
        types.GenerateContentConfig(tools=[LOOKUP])
        if typed
        else cast("types.GenerateContentConfigDict", {"tools": [LOOKUP]})
    )
    client = gemini_client(sim.base_url)
    with otel_toolturn.withhold_tools("wrap-up"):
        client.models.generate_content(model=MODEL, contents=copy.deepcopy(VALID), config=config)
    (request,) = sim.requests
    assert isinstance(request.body, dict)
    assert request.body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}
    assert request.body["tools"][0]["functionDeclarations"][0]["name"] == "lookup"
    (event,) = otel.events(names.EVENT_TOOLS_WITHHELD)
    assert event[names.TOOLS_WITHHELD_REASON] == "wrap-up"
    assert event[names.TOOLS_WITHHELD_APPLIED] is True


def test_every_broken_case_has_its_form_and_the_lane_only_forms_a_case() -> None:
    """The cases give the forms they are recorded with, and cover the forms only this lane has."""
    assert set(FORM) == set(BROKEN)
    assert set(FORM.values()) >= GEMINI_ONLY


def test_a_valid_call_is_recorded_with_the_gemini_attributes(sim: Simulator, instrument: Instrument) -> None:
    """A served call: ``generate_content``, provider ``gcp.gemini``, models, finish reason, usage, server and port."""
    otel = instrument()
    client = gemini_client(sim.base_url)
    response = client.models.generate_content(model=MODEL, contents=copy.deepcopy(VALID))
    assert isinstance(response, types.GenerateContentResponse)
    assert response.text
    assert _served(sim) == [200]
    (span,) = _spans(otel)
    assert span.name == f"generate_content {MODEL}"
    assert (span.attributes or {})[names.GEN_AI_OPERATION_NAME] == "generate_content"
    assert span.status.status_code is not StatusCode.ERROR
    attributes: dict[str, Any] = dict(span.attributes or {})
    usage = response.usage_metadata
    assert usage is not None
    assert attributes[names.PROVIDER] == "gcp.gemini"
    assert attributes[names.GEN_AI_REQUEST_MODEL] == MODEL
    assert attributes[names.GEN_AI_RESPONSE_MODEL] == response.model_version
    assert attributes[names.GEN_AI_USAGE_INPUT_TOKENS] == usage.prompt_token_count
    assert attributes[names.GEN_AI_USAGE_OUTPUT_TOKENS] >= (usage.candidates_token_count or 0)
    assert list(attributes[names.GEN_AI_RESPONSE_FINISH_REASONS])
    assert attributes[names.SERVER_ADDRESS] == "127.0.0.1"
    assert attributes[names.SERVER_PORT] == int(sim.base_url.rsplit(":", 1)[1].split("/")[0])
    assert attributes[names.REPAIRS_COUNT] == 0
    assert otel.total(names.REQUESTS.name, gen_ai__provider__name="gcp.gemini") == 1


def test_a_vertex_client_is_recorded_as_vertex_ai(sim: Simulator, instrument: Instrument) -> None:
    """A client with ``vertexai=True`` is recorded as ``gcp.vertex_ai``, on the span and the counters."""
    otel = instrument()
    client = gemini_client(sim.base_url, vertexai=True)
    client.models.generate_content(model=MODEL, contents="hello")
    assert _only_span(otel)[names.PROVIDER] == "gcp.vertex_ai"
    assert otel.total(names.REQUESTS.name, gen_ai__provider__name="gcp.vertex_ai") == 1


def test_a_string_and_sdk_objects_are_read_as_the_sdk_sends_them(sim: Simulator, instrument: Instrument) -> None:
    """A string is normalised as the SDK does; ``types.Content`` objects are repaired, the caller's left untouched."""
    otel = instrument()
    client = gemini_client(sim.base_url)
    client.models.generate_content(model=MODEL, contents="hello")
    contents = [types.Content.model_validate(item) for item in BROKEN["missing_response"]]
    dumped = [item.model_dump() for item in contents]
    client.models.generate_content(model=MODEL, contents=contents)
    assert _served(sim) == [200, 200]
    assert [item.model_dump() for item in contents] == dumped
    first, second = (_attributes(span) for span in _spans(otel))
    assert first[names.REPAIRS_COUNT] == 0
    assert second[names.REPAIRS_COUNT] >= 1


@pytest.mark.parametrize("case", ["split_responses", "missing_response"])
def test_sdk_contents_appended_to_a_rest_history_are_repaired_and_sent_whole(
    sim: Simulator, instrument: Instrument, case: str
) -> None:
    """REST dicts with an SDK ``Content`` of responses among them: the merged content reaches the provider whole."""
    otel = instrument()
    contents: list[object] = [*copy.deepcopy(BROKEN[case])]
    contents[2] = types.Content.model_validate(contents[2])
    client = gemini_client(sim.base_url)
    client.models.generate_content(model=MODEL, contents=contents)
    assert _served(sim) == [200]
    (request,) = sim.requests
    assert isinstance(request.body, dict)
    sent = request.body["contents"][2]["parts"]
    assert [part["functionResponse"]["id"] for part in sent] == ["a", "b"]
    assert all(part["functionResponse"]["response"] for part in sent)
    assert _only_span(otel)[names.REPAIRS_COUNT] == 1


def test_a_stream_is_repaired_and_recorded_once_with_the_sdk_chunks(sim: Simulator, instrument: Instrument) -> None:
    """``generate_content_stream``: the SDK's own chunks, one span ended at exhaustion with its finish reason."""
    otel = instrument()
    client = gemini_client(sim.base_url)
    chunks = list(client.models.generate_content_stream(model=MODEL, contents=copy.deepcopy(BROKEN["split_responses"])))
    assert chunks
    assert all(isinstance(chunk, types.GenerateContentResponse) for chunk in chunks)
    assert "".join(chunk.text or "" for chunk in chunks)
    assert _served(sim) == [200]
    attributes = _only_span(otel)
    assert attributes[names.REPAIRS_COUNT] >= 1
    assert list(attributes[names.GEN_AI_RESPONSE_FINISH_REASONS])
    assert names.STREAM_TORN not in attributes
    assert otel.total(names.REQUESTS.name) == 1


def test_a_stream_never_iterated_records_nothing(sim: Simulator, instrument: Instrument) -> None:
    """A ``generate_content_stream`` generator never started sends nothing and records nothing."""
    otel = instrument()
    client = gemini_client(sim.base_url)
    stream = client.models.generate_content_stream(model=MODEL, contents="hello")
    del stream
    assert sim.requests == ()
    assert _spans(otel) == []
    assert otel.total(names.REQUESTS.name) == 0


def test_a_stream_closed_after_its_first_chunk_is_closed_early(sim: Simulator, instrument: Instrument) -> None:
    """Closing the SDK's stream after one chunk ends the span once, closed early, never torn."""
    otel = instrument()
    client = gemini_client(sim.base_url)
    stream = cast(
        "Generator[types.GenerateContentResponse]",
        client.models.generate_content_stream(model=MODEL, contents="tell me a story"),
    )
    next(stream)
    stream.close()
    attributes = _only_span(otel)
    assert names.STREAM_TORN not in attributes
    assert otel.total(names.STREAM_TORN_COUNT.name) == 0


def test_a_call_the_sdk_refuses_before_sending_records_nothing(sim: Simulator, instrument: Instrument) -> None:
    """The SDK's own ``ValueError`` raised before any request reaches the caller; nothing is recorded."""
    otel = instrument()
    client = gemini_client(sim.base_url)
    config = types.GenerateContentConfig(should_return_http_response=True)
    with pytest.raises(ValueError, match="raw HTTP response is not supported"):
        list(client.models.generate_content_stream(model=MODEL, contents=copy.deepcopy(VALID), config=config))
    with pytest.raises(ValueError, match="contents are required"):
        client.models.generate_content(model=MODEL, contents=[])
    assert sim.requests == ()
    assert _spans(otel) == []
    assert otel.total(names.REQUESTS.name) == 0


def test_a_chat_session_records_each_message_it_sends(sim: Simulator, instrument: Instrument) -> None:
    """``client.chats``: each ``send_message`` is one request and one span, on the same lane and provider."""
    otel = instrument()
    client = gemini_client(sim.base_url)
    chat = client.chats.create(model=MODEL)
    first = chat.send_message("hello")
    second = chat.send_message("and again")
    assert first.text
    assert second.text
    assert _served(sim) == [200, 200]
    spans = _spans(otel)
    assert len(spans) == 2
    assert {dict(s.attributes or {})[names.PROVIDER] for s in spans} == {"gcp.gemini"}
    assert otel.total(names.REQUESTS.name) == 2


def test_each_automatic_function_calling_round_is_its_own_request(sim: Simulator, instrument: Instrument) -> None:
    """AFC with a Python function: the call round and the answer round are two requests, two spans, counted twice."""
    otel = instrument()
    called: list[str] = []

    def lookup(q: str = "") -> str:
        """Look a thing up."""
        called.append(q)
        return f"found {q}"

    client = gemini_client(sim.base_url)
    response = client.models.generate_content(
        model=MODEL, contents="look it up", config=types.GenerateContentConfig(tools=[lookup])
    )
    assert isinstance(response, types.GenerateContentResponse)
    assert response.text
    assert len(called) == 1
    assert _served(sim) == [200, 200]
    assert len(_spans(otel)) == 2
    assert otel.total(names.REQUESTS.name) == 2


def test_the_sdk_response_helpers_are_unchanged(sim: Simulator, instrument: Instrument) -> None:
    """A response with a call: ``function_calls`` and ``candidates`` read as without instrumentation."""
    instrument()
    client = gemini_client(sim.base_url)
    response = client.models.generate_content(
        model=MODEL, contents="look it up", config=types.GenerateContentConfig(tools=[LOOKUP])
    )
    assert type(response) is types.GenerateContentResponse
    assert response.function_calls
    assert response.function_calls[0].name == "lookup"


@AIOHTTP_SUBCLASS_WARNING
async def test_async_generate_content_is_repaired_and_recorded(sim: Simulator, instrument: Instrument) -> None:
    """``client.aio.models.generate_content``: the view is served, one span with the Gemini attributes."""
    otel = instrument()
    client = gemini_client(sim.base_url)
    try:
        response = await client.aio.models.generate_content(
            model=MODEL, contents=copy.deepcopy(BROKEN["missing_response"])
        )
    finally:
        await client.aio.aclose()
    assert isinstance(response, types.GenerateContentResponse)
    assert _served(sim) == [200]
    attributes = _only_span(otel)
    assert attributes[names.PROVIDER] == "gcp.gemini"
    assert attributes[names.REPAIRS_COUNT] >= 1
    assert otel.total(names.REQUESTS.name) == 1


@AIOHTTP_SUBCLASS_WARNING
async def test_async_stream_is_repaired_and_recorded(sim: Simulator, instrument: Instrument) -> None:
    """``client.aio.models.generate_content_stream``: the SDK's chunks, one span ended at exhaustion."""
    otel = instrument()
    client = gemini_client(sim.base_url)
    try:
        stream = await client.aio.models.generate_content_stream(
            model=MODEL, contents=copy.deepcopy(BROKEN["text_after_responses"])
        )
        chunks = [chunk async for chunk in stream]
    finally:
        await client.aio.aclose()
    assert chunks
    assert all(isinstance(chunk, types.GenerateContentResponse) for chunk in chunks)
    assert _served(sim) == [200]
    attributes = _only_span(otel)
    assert attributes[names.REPAIRS_COUNT] >= 1
    assert list(attributes[names.GEN_AI_RESPONSE_FINISH_REASONS])
    assert otel.total(names.REQUESTS.name) == 1


@AIOHTTP_SUBCLASS_WARNING
async def test_an_async_call_never_awaited_records_nothing(sim: Simulator, instrument: Instrument) -> None:
    """A coroutine of ``client.aio.models.generate_content`` closed unawaited sends nothing and records nothing."""
    otel = instrument()
    client = gemini_client(sim.base_url)
    try:
        pending = client.aio.models.generate_content(model=MODEL, contents="hello")
        pending.close()
    finally:
        await client.aio.aclose()
    assert sim.requests == ()
    assert _spans(otel) == []


def test_uninstrument_restores_the_sdk(otel: Otel) -> None:
    """After ``uninstrument`` every patched google-genai method is the very function it was before."""
    owners = {
        models.Models: ("_generate_content", "_generate_content_stream"),
        models.AsyncModels: ("_generate_content", "_generate_content_stream"),
        _api_client.BaseApiClient: ("_request_once", "_async_request_once"),
    }
    originals = {(owner, method): vars(owner)[method] for owner, methods in owners.items() for method in methods}
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(options=Options(), tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    try:
        assert all(vars(owner)[method] is not original for (owner, method), original in originals.items())
    finally:
        instrumentor.uninstrument()
    assert all(vars(owner)[method] is original for (owner, method), original in originals.items())
