"""Through LiteLLM's ``bedrock/`` route, against the simulator: broken tool histories go out valid, recorded once.

Callers write OpenAI chat messages; LiteLLM converts them to a Bedrock Converse body, serialises and
signs it in its own HTTP code (no boto3), and sends it to ``/model/{modelId}/converse`` or
``/converse-stream``. The law runs on that Converse body as LiteLLM builds it, in the
``bedrock.converse`` lane, as it runs on the Anthropic and Gemini bodies of LiteLLM's other routes: the
service's rules are the Converse body's (one user message per turn, call ids unique in the request), and
a history valid as Chat messages may still be refused once converted.
"""

from __future__ import annotations

from typing import Any, Final

import pytest

from otel_toolturn import validate
from otel_toolturn.simulator import Simulator
from tests.instrument.conftest import Otel
from tests.integrations.litellm_calls import (
    completed,
    entry_cases,
    last_sent_list,
    litellm,
    refused_in_the_laws_words,
    served_and_recorded_once,
)
from tests.transcripts import A, Event, R, U, build, c, t

pytestmark = [
    # LiteLLM's own: pydantic notes its ReadOnly TypedDict items when it builds their schemas
    pytest.mark.filterwarnings("ignore:Items? .* using the `ReadOnly` qualifier:UserWarning"),
    # LiteLLM's own: its stream handler reads a pydantic attribute deprecated on instances, on Bedrock's chunks
    pytest.mark.filterwarnings("ignore:Accessing the '.*' attribute on the instance is deprecated:DeprecationWarning"),
]

LANE: Final = "bedrock.converse"
MODEL: Final = "anthropic.claude-3-5-sonnet-20240620-v1:0"
TOOLS: Final = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object", "properties": {}}}}]

BREAKS: Final[dict[str, tuple[Event, ...]]] = {
    "missing": (U("read a"), A(t("Reading."), c("call_1", "read")), U("and now?")),
    "split": (
        U("read a and b"),
        A(c("call_1", "read"), c("call_2", "read")),
        R("call_1", "a's text"),
        U("hmm"),
        R("call_2", "b's text"),
        U("go on"),
    ),
    "late": (U("read a"), A(c("call_1", "read")), U("skip it"), A(t("Skipped.")), R("call_1", "a's text"), U("go on")),
    "orphan": (U("read a"), R("call_9", "stray"), U("go on")),
    "reused": (
        U("read a"),
        A(c("call_1", "read")),
        R("call_1", "a"),
        A(c("call_1", "read")),
        R("call_1", "b"),
        U("go on"),
    ),
}
"""A result missing, results split around a user message, a result after the model answered, a result with
no call, a call id used again in a later turn."""

FORMS: Final = {
    "missing": ("missing_result",),
    "split": ("late_result",),
    "late": ("missing_result", "late_result_in_place"),
    "orphan": ("orphan_result",),
    "reused": ("reused_id",),
}
"""The repairs each break is recorded with, read on the Converse body LiteLLM built."""

CASES: Final = entry_cases(BREAKS)


def _kwargs(sim: Simulator, events: tuple[Event, ...], *, stream: bool, route: str = "bedrock/") -> dict[str, Any]:
    return {
        "model": f"{route}{MODEL}",
        "messages": build("openai.chat_completions", events),
        "tools": TOOLS,
        "stream": stream,
        "aws_bedrock_runtime_endpoint": sim.base_url,
        "aws_access_key_id": "x",
        "aws_secret_access_key": "x",
        "aws_region_name": "us-east-1",
    }


async def _send(
    sim: Simulator, entry: str, events: tuple[Event, ...], *, stream: bool, route: str = "bedrock/"
) -> None:
    """One LiteLLM call (a stream read to its end)."""
    await completed(entry, _kwargs(sim, events, stream=stream, route=route), stream=stream)


def _messages(sim: Simulator) -> list[object]:
    return last_sent_list(sim, "messages")


@pytest.mark.parametrize(("entry", "brk", "stream"), CASES)
async def test_a_broken_history_reaches_bedrock_valid_recorded_once(
    instrumented: Otel, sim: Simulator, entry: str, brk: str, stream: bool
) -> None:
    """LiteLLM's Bedrock call with a broken history is served; one span (``aws.bedrock``) with its repair."""
    await _send(sim, entry, BREAKS[brk], stream=stream)
    assert sim.requests[-1].path.endswith("/converse-stream" if stream else "/converse")
    attributes = served_and_recorded_once(
        instrumented, sim, key="messages", lane=LANE, provider="aws.bedrock", model=MODEL, forms=FORMS[brk]
    )
    if not stream:
        assert attributes["gen_ai.response.finish_reasons"]
        assert attributes["gen_ai.usage.output_tokens"]


@pytest.mark.parametrize(("entry", "brk", "stream"), CASES)
async def test_without_init_bedrock_refuses_the_same_call(sim: Simulator, entry: str, brk: str, stream: bool) -> None:
    """Uninstrumented, the same LiteLLM call meets the service's 400 in its own words: the repair is ours."""
    assert not [cb for cb in litellm.callbacks if type(cb).__name__ == "ToolTurnLogger"]
    with pytest.raises(litellm.exceptions.BadRequestError):
        await _send(sim, entry, BREAKS[brk], stream=stream)
    refused_in_the_laws_words(sim, key="messages", lane=LANE)


def test_a_history_valid_as_chat_messages_is_refused_once_converted_and_repaired_on_the_converse_body(
    instrumented: Otel, sim: Simulator
) -> None:
    """An id used again in a later turn: valid in the Chat lane, a duplicate on Bedrock; the Converse law renames it."""
    events = BREAKS["reused"]
    assert validate(build("openai.chat_completions", events), lane="openai.chat_completions") == []
    litellm.completion(**_kwargs(sim, events, stream=False))
    assert sim.requests[-1].status == 200
    ids = [
        block["toolUse"]["toolUseId"]
        for message in _messages(sim)
        for block in message["content"]  # type: ignore[index]
        if "toolUse" in block
    ]
    assert ids == ["call_1", "call_1_2"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_the_converse_route_prefix_is_the_same_lane(instrumented: Otel, sim: Simulator, stream: bool) -> None:
    """``bedrock/converse/…`` is repaired and recorded as ``bedrock/…`` is, its model named without the prefix."""
    litellm.completion(**_kwargs(sim, BREAKS["missing"], stream=stream, route="bedrock/converse/"))
    assert sim.requests[-1].status == 200
    assert validate(_messages(sim), lane=LANE) == []
    (span,) = instrumented.call_spans()
    assert span.attributes is not None
    assert span.attributes["toolturn.lane"] == LANE
    assert span.attributes["gen_ai.request.model"] == MODEL


async def test_a_valid_history_goes_out_as_litellm_built_it(instrumented: Otel, sim: Simulator) -> None:
    """Nothing to repair: the body LiteLLM built is sent unchanged, recorded with no repair."""
    events = (U("read a"), A(c("call_1", "read")), R("call_1", "a"), U("go on"))
    await _send(sim, "acompletion", events, stream=False)
    assert sim.requests[-1].status == 200
    (span,) = instrumented.call_spans()
    assert span.attributes is not None
    assert span.attributes["toolturn.repairs.count"] == 0


def test_a_responses_call_bridged_to_bedrock_is_repaired_on_the_converse_body(
    instrumented: Otel, sim: Simulator
) -> None:
    """``litellm.responses`` on ``bedrock/…`` (LiteLLM bridges it to Converse): repaired, one ``aws.bedrock`` span."""
    kwargs = _kwargs(sim, BREAKS["missing"], stream=False)
    del kwargs["messages"], kwargs["stream"]
    litellm.responses(**kwargs, input=build("openai.responses", BREAKS["missing"]))
    assert sim.requests[-1].status == 200, sim.requests[-1].error
    assert validate(_messages(sim), lane=LANE) == []
    (span,) = instrumented.call_spans()
    assert span.attributes is not None
    assert span.attributes["toolturn.lane"] == LANE
    assert span.attributes["gen_ai.provider.name"] == "aws.bedrock"
    assert span.attributes["toolturn.repairs.forms"] == ("missing_result",)
