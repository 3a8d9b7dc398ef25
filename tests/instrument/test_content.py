"""No content leaves unless asked: every exported span, event, log record and metric point is searched."""

from __future__ import annotations

import json
from typing import Any, Final

import pytest

from otel_toolturn import Lane
from otel_toolturn.instrument import names
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.wire import KEY, MODEL, Call, Wire, respond

SECRET: Final = "PAYLOAD"
"""Every prompt, completion, argument and result text below contains this marker."""


def _transcript(lane: Lane) -> list[object]:
    """A transcript with a missing result (so a repair happens), every text marked."""
    if lane == "anthropic.messages":
        return [
            {"role": "user", "content": f"{SECRET} user question"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"{SECRET} assistant text"},
                    {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"q": f"{SECRET} argument"}},
                    {"type": "tool_use", "id": "t2", "name": "lookup", "input": {"q": f"{SECRET} argument 2"}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": f"{SECRET} result"}]},
        ]
    if lane == "openai.chat_completions":
        return [
            {"role": "system", "content": f"{SECRET} system prompt"},
            {"role": "user", "content": f"{SECRET} user question"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": f'{{"q": "{SECRET}"}}'},
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": f'{{"q": "{SECRET}2"}}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": f"{SECRET} result"},
        ]
    return [
        {"role": "user", "content": f"{SECRET} user question"},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": f'{{"q": "{SECRET}"}}'},
        {"type": "function_call", "call_id": "c2", "name": "lookup", "arguments": f'{{"q": "{SECRET}2"}}'},
        {"type": "function_call_output", "call_id": "c1", "output": f"{SECRET} result"},
    ]


def _reply(lane: Lane, body: dict[str, object]) -> Any:
    calls = [Call("c9", "lookup", f'{{"q": "{SECRET} streamed argument"}}')]
    return respond(lane, stream=bool(body.get("stream")), text=f"{SECRET} completion", calls=calls, model="model-b")


def _send(lane: Lane, *, stream: bool) -> None:
    wire = Wire(responder=_reply)
    messages = _transcript(lane)
    if lane == "anthropic.messages":
        system = f"{SECRET} anthropic system"
        result: Any = wire.anthropic().messages.create(
            model=MODEL, max_tokens=8, system=system, messages=messages, stream=stream
        )
    elif lane == "openai.chat_completions":
        result = wire.openai().chat.completions.create(model=MODEL, messages=messages, stream=stream)
    else:
        result = wire.openai().responses.create(
            model=MODEL, input=messages, instructions=f"{SECRET} instructions", stream=stream
        )
    if stream:
        for _ in result:
            pass


def _everything_exported(otel: Otel) -> str:
    spans = [s.to_json() for s in otel.spans()]
    logs = [r.to_json() for r in otel.logs()]
    data = otel.metric_reader.get_metrics_data()
    metrics = data.to_json() if data is not None else ""
    return json.dumps([spans, logs, metrics])


LANES: Final[tuple[Lane, ...]] = ("anthropic.messages", "openai.chat_completions", "openai.responses")


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_no_content_and_no_key_by_default(instrument: Instrument, lane: Lane, stream: bool) -> None:
    """With capture off, no payload text and never the API key appear in anything exported; repairs still do."""
    otel = instrument()
    _send(lane, stream=stream)
    exported = _everything_exported(otel)
    assert names.EVENT_REPAIR in exported
    assert SECRET not in exported
    assert KEY not in exported


@pytest.mark.parametrize("lane", LANES)
def test_capture_content_records_the_system_prompt_but_never_the_key(instrument: Instrument, lane: Lane) -> None:
    """With capture on, the joined system prompt is recorded (the search above can fail); the key still never is."""
    otel = instrument(capture_content=True)
    _send(lane, stream=False)
    exported = _everything_exported(otel)
    assert SECRET in exported
    assert KEY not in exported
    (span,) = otel.call_spans()
    assert span.attributes is not None
    assert SECRET in str(span.attributes[names.SYSTEM_PROMPT])
    (instruction,) = json.loads(str(span.attributes[names.GEN_AI_SYSTEM_INSTRUCTIONS]))
    assert instruction["type"] == "text"
    assert SECRET in instruction["content"]
