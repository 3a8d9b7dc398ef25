"""boto3 ``bedrock-runtime`` ``converse`` / ``converse_stream`` and Anthropic ``invoke_model``, instrumented."""

from __future__ import annotations

import json
from typing import Any, Final

import botocore.client
import botocore.endpoint
import pytest
from botocore.exceptions import ClientError, ParamValidationError
from botocore.stub import Stubber

from otel_toolturn.instrument import ToolTurnInstrumentor, _botocore, names
from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator
from tests.bedrock_wire import (
    ANTHROPIC_VERSION,
    BROKEN,
    INVOKE_BROKEN,
    INVOKE_CASES,
    MODEL,
    REPAIR_OF,
    anthropic_body,
    assistant,
    bedrock_client,
    result,
    text,
    use,
    user,
)
from tests.instrument.bedrock_checks import (
    INVOKE_LANE,
    LANE,
    STUBBED_CONVERSE,
    busy_once,
    check_refused,
    check_repaired,
    check_retried_once,
    the_span,
)
from tests.instrument.conftest import Instrument

CASES: Final = [(name, streamed) for name in sorted(BROKEN) for streamed in (False, True)]


def converse(client: Any, messages: list[dict[str, object]], *, streamed: bool) -> list[object]:
    """One call, plain or streamed; the response's content blocks (plain) or every stream event (streamed)."""
    if not streamed:
        return list(client.converse(modelId=MODEL, messages=messages)["output"]["message"]["content"])
    return list(client.converse_stream(modelId=MODEL, messages=messages)["stream"])


@pytest.mark.parametrize(("name", "streamed"), CASES)
def test_repair_mode_repairs_a_broken_history_and_the_service_answers(
    instrument: Instrument, sim: Simulator, name: str, streamed: bool
) -> None:
    """Repair mode: the history reaches the wire valid and is answered; span, event and metric say what was repaired."""
    otel = instrument(mode="repair")
    messages = list(BROKEN[name])
    assert converse(bedrock_client(sim.base_url), messages, streamed=streamed)
    assert messages == list(BROKEN[name])  # the caller's list is never changed
    check_repaired(otel, sim, name, streamed=streamed)


@pytest.mark.parametrize(("name", "streamed"), CASES)
def test_observe_mode_sends_the_history_unchanged_and_the_service_refuses_it(
    instrument: Instrument, sim: Simulator, name: str, streamed: bool
) -> None:
    """Observe mode: the history goes out as written, botocore raises ``ValidationException``, the findings recorded."""
    otel = instrument(mode="observe")
    messages = list(BROKEN[name])
    with pytest.raises(ClientError) as refused:
        converse(bedrock_client(sim.base_url), messages, streamed=streamed)
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    check_refused(otel, sim, name, messages)


def test_a_valid_history_is_sent_as_the_very_same_list(instrument: Instrument, sim: Simulator) -> None:
    """Nothing to repair: no repair event, and the span still records the call and its usage."""
    otel = instrument(mode="repair")
    converse(bedrock_client(sim.base_url), [user(text("Hello."))], streamed=False)
    assert otel.events(names.EVENT_REPAIR) == []
    assert the_span(otel).attributes[names.GEN_AI_RESPONSE_FINISH_REASONS] == ("end_turn",)


def test_a_retried_call_is_recorded_once(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Botocore retries a 503 over HTTP: two attempts go out, one span and one request are recorded."""
    otel = instrument(mode="repair")
    attempts: list[int] = []
    monkeypatch.setattr(sim, "answer", busy_once(sim, attempts))
    response = bedrock_client(sim.base_url, attempts=2).converse(modelId=MODEL, messages=list(BROKEN["interrupted"]))
    check_retried_once(otel, response, attempts)


def test_a_call_never_sent_leaves_no_span(instrument: Instrument, sim: Simulator) -> None:
    """A call botocore's ``Stubber`` answers, and one it refuses before sending, record nothing; its error unchanged."""
    otel = instrument(mode="repair")
    client = bedrock_client(sim.base_url)
    with Stubber(client) as stub:
        stub.add_response("converse", STUBBED_CONVERSE)
        client.converse(modelId=MODEL, messages=list(BROKEN["interrupted"]))
    with pytest.raises(ParamValidationError):
        client.converse(modelId=MODEL, messages=[{"role": "user", "content": "not a list of blocks"}])
    assert sim.requests == ()
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0


def test_a_streamed_reply_without_message_stop_is_torn(instrument: Instrument, sim: Simulator) -> None:
    """A ``converse_stream`` that ends without ``messageStop`` marks the span torn; a cut call is a drop event."""
    otel = instrument(mode="repair")
    sim.enqueue(
        ScriptedTurn(
            calls=(ScriptedCall(name="lookup", arguments={"key": "a long value"}),), misbehaviours=("cut_arguments",)
        )
    )
    events = converse(bedrock_client(sim.base_url), [user(text("Go."))], streamed=True)
    assert not any("messageStop" in e for e in events)  # type: ignore[operator]
    span = the_span(otel)
    assert span.attributes[names.STREAM_TORN] is True
    (drop,) = otel.events(names.EVENT_STREAM_DROP)
    assert drop[names.STREAM_DROP_CAUSE] == "truncated"


def test_a_failure_inside_is_counted_and_the_call_proceeds(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The law failing inside otel-toolturn: counted by stage, and the call goes out as written (here refused)."""
    otel = instrument(mode="repair")

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("inside")

    monkeypatch.setattr(_botocore, "decide_request", broken)
    with pytest.raises(ClientError, match="Expected toolResult blocks"):
        converse(bedrock_client(sim.base_url), list(BROKEN["interrupted"]), streamed=False)
    assert otel.total(names.INSTRUMENTATION_ERRORS.name, toolturn__error__stage="law") == 1
    assert otel.call_spans() == []


def test_other_botocore_operations_pass_through(instrument: Instrument, sim: Simulator) -> None:
    """Only Converse and ConverseStream of bedrock-runtime are instrumented; other operations record nothing."""
    otel = instrument(mode="repair")
    with pytest.raises(ClientError):
        bedrock_client(sim.base_url).invoke_model(modelId=MODEL, body=b"{}")
    assert otel.call_spans() == []


def test_uninstrument_restores_botocore(instrument: Instrument, sim: Simulator) -> None:
    """After ``uninstrument()`` botocore's patched functions are the very objects they were; calls go out as written."""
    before = (vars(botocore.client.BaseClient)["_make_api_call"], vars(botocore.endpoint.Endpoint)["_send"])
    client = bedrock_client(sim.base_url)  # made before instrument: instrumented all the same
    otel = instrument(mode="repair")
    converse(client, list(BROKEN["trimmed"]), streamed=False)
    assert len(otel.call_spans()) == 1
    ToolTurnInstrumentor().uninstrument()
    assert (vars(botocore.client.BaseClient)["_make_api_call"], vars(botocore.endpoint.Endpoint)["_send"]) == before
    with pytest.raises(ClientError, match="exceeds the number of toolUse blocks"):
        converse(client, list(BROKEN["trimmed"]), streamed=False)
    assert len(otel.call_spans()) == 1


TOOL_CONFIG: Final = {
    "tools": [{"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object", "properties": {}}}}}]
}


def test_the_tools_in_tool_config_are_fingerprinted(instrument: Instrument, sim: Simulator) -> None:
    """The tool definitions Converse nests in ``toolConfig.tools`` give the span its tools fingerprint."""
    otel = instrument(mode="repair")
    client = bedrock_client(sim.base_url)
    client.converse(modelId=MODEL, messages=[user(text("Hi."))], toolConfig=TOOL_CONFIG)
    client.converse(modelId=MODEL, messages=[user(text("Hi."))])
    with_tools, without = (dict(span.attributes or {}) for span in otel.call_spans())
    assert isinstance(with_tools[names.FINGERPRINT_TOOLS], str)
    assert names.FINGERPRINT_TOOLS not in without


def test_the_tools_rule_leaves_converse_tools_in_place(instrument: Instrument, sim: Simulator) -> None:
    """Past ``max_tool_rounds`` Converse keeps its ``toolConfig`` (no choice calls no tool); nothing fails."""
    otel = instrument(mode="repair", max_tool_rounds=1)
    history = [user(text("Look it up.")), assistant(use("tooluse_1")), user(result("tooluse_1"))]
    bedrock_client(sim.base_url).converse(modelId=MODEL, messages=history, toolConfig=TOOL_CONFIG)
    (request,) = sim.requests
    assert request.body["toolConfig"] == TOOL_CONFIG  # type: ignore[index]
    attributes = the_span(otel).attributes
    assert names.TOOLS_WITHHELD_REASON not in attributes
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0


@pytest.mark.parametrize("streamed", [False, True])
def test_the_inference_config_goes_on_the_span_in_the_conventions_names(
    instrument: Instrument, sim: Simulator, streamed: bool
) -> None:
    """``inferenceConfig``'s maxTokens, temperature, topP and stopSequences become the gen_ai.request.* attributes."""
    otel = instrument(mode="repair")
    config = {"maxTokens": 256, "temperature": 0.25, "topP": 0.5, "stopSequences": ["END", "STOP"]}
    client = bedrock_client(sim.base_url)
    if streamed:
        list(client.converse_stream(modelId=MODEL, messages=[user(text("Hi."))], inferenceConfig=config)["stream"])
    else:
        client.converse(modelId=MODEL, messages=[user(text("Hi."))], inferenceConfig=config)
    (request,) = sim.requests
    assert request.body["inferenceConfig"] == config  # type: ignore[index]
    attributes = the_span(otel).attributes
    assert attributes["gen_ai.request.max_tokens"] == 256
    assert attributes["gen_ai.request.temperature"] == 0.25
    assert attributes["gen_ai.request.top_p"] == 0.5
    assert attributes["gen_ai.request.stop_sequences"] == ("END", "STOP")


def test_a_call_without_inference_config_carries_no_request_parameters(instrument: Instrument, sim: Simulator) -> None:
    """No ``inferenceConfig``, or an empty one: no gen_ai.request.* parameter on the span."""
    otel = instrument(mode="repair")
    client = bedrock_client(sim.base_url)
    client.converse(modelId=MODEL, messages=[user(text("Hi."))])
    client.converse(modelId=MODEL, messages=[user(text("Hi."))], inferenceConfig={})
    parameters = {key for key, _ in names.REQUEST_PARAMETERS[LANE]}
    for span in otel.call_spans():
        assert parameters.isdisjoint(span.attributes or {})


def invoke(client: Any, body: bytes | str, *, streamed: bool) -> dict[str, Any]:
    """One invoke call, plain or streamed; the Anthropic message (plain) or its events by type (streamed)."""
    if not streamed:
        return dict(json.loads(client.invoke_model(modelId=MODEL, body=body)["body"].read()))
    response = client.invoke_model_with_response_stream(modelId=MODEL, body=body)
    events = [json.loads(event["chunk"]["bytes"]) for event in response["body"]]
    return {"types": [event["type"] for event in events]}


def wire_bodies(client: Any) -> list[bytes]:
    """The bytes of every invoke body ``client`` puts on the wire, in order (botocore's ``before-send``)."""
    bodies: list[bytes] = []

    def capture(request: Any, **_: object) -> None:
        bodies.append(request.body)

    client.meta.events.register("before-send.bedrock-runtime", capture)
    return bodies


@pytest.mark.parametrize(("name", "streamed"), INVOKE_CASES)
def test_invoke_model_with_an_anthropic_body_is_repaired_and_answered(
    instrument: Instrument, sim: Simulator, name: str, streamed: bool
) -> None:
    """Repair mode, ``invoke_model`` (plain, streamed), a broken Anthropic body: sent valid, one span, repaired."""
    otel = instrument(mode="repair")
    answer = invoke(bedrock_client(sim.base_url), anthropic_body(INVOKE_BROKEN[name]), streamed=streamed)
    if streamed:
        assert (answer["types"][0], answer["types"][-1]) == ("message_start", "message_stop")
    else:
        assert answer["type"] == "message"
    check_repaired(otel, sim, name, streamed=streamed, lane=INVOKE_LANE)


@pytest.mark.parametrize(("name", "streamed"), INVOKE_CASES)
def test_invoke_model_in_observe_mode_is_sent_as_written_and_refused(
    instrument: Instrument, sim: Simulator, name: str, streamed: bool
) -> None:
    """Observe mode: the caller's very bytes go out, botocore raises ``ValidationException``, the finding recorded."""
    otel = instrument(mode="observe")
    client = bedrock_client(sim.base_url)
    sent = wire_bodies(client)
    body = anthropic_body(INVOKE_BROKEN[name])
    with pytest.raises(ClientError) as refused:
        invoke(client, body, streamed=streamed)
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert sent == [body]
    assert [(r.lane, r.status) for r in sim.requests] == [("anthropic.messages", 400)]
    assert the_span(otel).attributes[names.ERROR_TYPE] == "ValidationException"
    (event,) = otel.events(names.EVENT_REPAIR)
    assert event[names.REPAIR_FORM] == REPAIR_OF[name]


def test_a_valid_anthropic_body_goes_out_as_the_very_same_bytes(instrument: Instrument, sim: Simulator) -> None:
    """Nothing to repair: the body is not re-encoded (the caller's own spacing reaches the wire); the call recorded."""
    otel = instrument(mode="repair")
    client = bedrock_client(sim.base_url)
    sent = wire_bodies(client)
    body = json.dumps(
        {"anthropic_version": ANTHROPIC_VERSION, "max_tokens": 64, "messages": [{"role": "user", "content": "Hi."}]},
        indent=2,
    )
    invoke(client, body, streamed=False)
    assert sent == [body.encode()]
    assert otel.events(names.EVENT_REPAIR) == []
    assert len(otel.call_spans()) == 1


def test_a_repaired_string_body_is_sent_as_a_string(
    instrument: Instrument, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken body given as a string is repaired and handed to botocore as a string again (bytes stay bytes)."""
    instrument(mode="repair")
    kinds: list[type] = []
    encoded = _botocore.encoded_body

    def spy(request: Any, like: object) -> bytes | str:
        out = encoded(request, like)
        kinds.append(type(out))
        return out

    monkeypatch.setattr(_botocore, "encoded_body", spy)
    client = bedrock_client(sim.base_url)
    invoke(client, anthropic_body(INVOKE_BROKEN["interrupted"]).decode(), streamed=False)
    invoke(client, anthropic_body(INVOKE_BROKEN["interrupted"]), streamed=False)
    assert kinds == [str, bytes]
    assert [r.status for r in sim.requests] == [200, 200]


@pytest.mark.parametrize(
    "body",
    [
        b'{"inputText": "Hello.", "textGenerationConfig": {"maxTokenCount": 8}}',
        b'{"anthropic_version": "bedrock-2023-05-31", "prompt": "Human: hi"}',
        b"not json",
        b"\xff\xfe",
    ],
)
def test_an_invoke_body_that_is_not_anthropic_messages_passes_untouched(
    instrument: Instrument, sim: Simulator, body: bytes
) -> None:
    """Another model's body, a prompt without ``messages``, text that is not JSON: sent as is, nothing recorded."""
    otel = instrument(mode="repair")
    client = bedrock_client(sim.base_url)
    sent = wire_bodies(client)
    with pytest.raises(ClientError):
        client.invoke_model(modelId=MODEL, body=body)
    assert sent == [body]
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0
