"""The ollama SDK's ``Client.chat`` and ``AsyncClient.chat`` (plain and ``stream=True``) through the instrumentation.

The real SDK talks to the simulator's ``/api/chat``, judged in the ``ollama`` dialect: a broken history is
refused (400 ``{"error": …}``, the SDK's ``ResponseError``) without the instrumentation and served with it,
one span per call carrying the repair. Ollama's calls carry no ids and its ``tool`` messages answer by
``tool_name`` (https://github.com/ollama/ollama/blob/main/docs/api.md); Ollama itself refuses none of these
histories, but models fed them lose track of the tool (ollama/ollama#11704, taketwo/llm-ollama#72).
"""

from __future__ import annotations

from typing import Any, Final

import httpx
import ollama
import pytest
from ollama._client import AsyncClient, Client

from otel_toolturn import INTERRUPTED_RESULT_TEXT
from otel_toolturn.instrument import names
from otel_toolturn.simulator import ScriptedTurn, Simulator
from tests.instrument import sdk_checks as checks
from tests.instrument.conftest import Instrument, Otel

MODEL: Final = "llama3.2"


def _call(path: str) -> dict[str, object]:
    return {"function": {"name": "read", "arguments": {"path": path}}}


BROKEN: Final[dict[str, list[Any]]] = {
    # Ctrl-C while the second of two parallel reads ran: it has no result, and the user spoke next
    "interrupted": [
        {"role": "user", "content": "Read a and b."},
        {"role": "assistant", "content": "", "tool_calls": [_call("a"), _call("b")]},
        {"role": "tool", "tool_name": "read", "content": "a=1"},
        {"role": "user", "content": "Never mind b; what is in a?"},
    ],
    # the window was cut between a call and its result: the result stands alone
    "orphan": [
        {"role": "user", "content": "Read a."},
        {"role": "tool", "tool_name": "read", "content": "a=1"},
        {"role": "user", "content": "What is in a?"},
    ],
    # the SDK's own typed messages: two results recorded for one call
    "typed": [
        ollama.Message(role="user", content="Read a."),
        ollama.Message(
            role="assistant",
            content="",
            tool_calls=[ollama.Message.ToolCall(function=ollama.Message.ToolCall.Function(name="read", arguments={}))],
        ),
        ollama.Message(role="tool", tool_name="read", content="a=1"),
        ollama.Message(role="tool", tool_name="read", content="a=2"),
    ],
}
REPAIRS_OF: Final = {
    "interrupted": ("missing_result",),
    "orphan": ("orphan_result",),
    "typed": ("duplicate_result",),
}
CASES: Final = sorted(BROKEN)


def _served(sim: Simulator, otel: Otel, case: str, messages: list[Any], *, streamed: bool) -> None:
    """One valid request served; one ``ollama`` span carries the repairs; the caller's list as it was."""
    sent = checks.served_request(sim.requests, messages, BROKEN[case], path="/api/chat", dialect="ollama")
    assert all("tool_call_id" not in message for message in sent)  # no id is written into an id-less history
    if case == "interrupted":
        assert sent[3] == {"role": "tool", "tool_name": "read", "content": INTERRUPTED_RESULT_TEXT}
    attributes = checks.one_repaired_span(otel, provider="ollama", forms=REPAIRS_OF[case], streamed=streamed)
    assert attributes[names.GEN_AI_USAGE_OUTPUT_TOKENS] > 0


@pytest.mark.parametrize("case", CASES)
def test_without_the_instrumentation_the_broken_history_is_refused(sim: Simulator, case: str) -> None:
    """Uninstrumented, the history goes out as written: the 400 comes back as the SDK's ``ResponseError``."""
    with pytest.raises(ollama.ResponseError) as refused:
        Client(host=sim.base_url).chat(model=MODEL, messages=BROKEN[case])
    assert refused.value.status_code == 400
    checks.refused_request(sim.requests)


def _send(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``Client.chat``, plain or ``stream=True``: the SDK's own ``ChatResponse`` objects come back."""
    client = Client(host=sim.base_url)
    if streamed:
        parts = list(client.chat(MODEL, messages, stream=True))  # model and messages by position
        assert all(isinstance(part, ollama.ChatResponse) for part in parts)
        assert parts[-1].done
    else:
        response = client.chat(model=MODEL, messages=messages)
        assert isinstance(response, ollama.ChatResponse)
        assert response.done_reason == "stop"


async def _send_async(sim: Simulator, messages: list[Any], *, streamed: bool) -> None:
    """``AsyncClient.chat``, plain or ``stream=True``: the SDK's own responses come back."""
    client = AsyncClient(host=sim.base_url)
    if streamed:
        parts = [part async for part in await client.chat(model=MODEL, messages=messages, stream=True)]
        assert parts[-1].done
    else:
        response = await client.chat(MODEL, messages)
        assert response.done_reason == "stop"


test_with_the_instrumentation_the_broken_history_is_repaired_and_served = checks.repaired_and_served(
    BROKEN, _send, _served
)
test_the_async_client_is_repaired_and_served = checks.async_repaired_and_served(BROKEN, _send_async, _served)


async def test_an_async_stream_never_read_sends_nothing_and_leaves_no_span(
    instrument: Instrument, sim: Simulator
) -> None:
    """The awaited ``chat(stream=True)`` returns the generator; nothing is sent nor recorded until it is read."""
    otel = instrument()
    stream = await AsyncClient(host=sim.base_url).chat(model=MODEL, messages=list(BROKEN["orphan"]), stream=True)
    assert sim.requests == ()
    assert otel.call_spans() == []
    await stream.aclose()  # type: ignore[attr-defined]  # the SDK's stream is an async generator
    assert otel.call_spans() == []


@checks.whole_and_streamed
def test_observe_mode_sends_the_history_as_written_and_the_sdks_error_comes_back(
    instrument: Instrument, sim: Simulator, *, streamed: bool
) -> None:
    """Observe mode: the history goes out as the SDK alone sends it, its own ``ResponseError`` is raised, one span."""
    messages = list(BROKEN["interrupted"])
    client = Client(host=sim.base_url)

    def send() -> object:
        return (
            list(client.chat(model=MODEL, messages=messages, stream=True)) if streamed else client.chat(MODEL, messages)
        )

    with pytest.raises(ollama.ResponseError):
        send()  # uninstrumented: the bytes the SDK alone sends
    otel = instrument(mode="observe")
    with pytest.raises(ollama.ResponseError):
        send()
    alone, observed = sim.requests
    assert (observed.status, observed.body) == (400, alone.body)
    checks.observed_refusal(otel, "ResponseError")


def test_a_stream_that_ends_without_its_done_line_is_torn_on_its_span(instrument: Instrument, sim: Simulator) -> None:
    """The simulator's stream stops before the ``done`` line: the SDK's lines come back, the span says torn."""
    otel = instrument()
    sim.enqueue(ScriptedTurn(text="Nearly.", misbehaviours=("no_finish",)))
    parts = list(Client(host=sim.base_url).chat(model=MODEL, messages=list(BROKEN["interrupted"]), stream=True))
    assert not parts[-1].done
    (span,) = otel.call_spans()
    assert (span.attributes or {})[names.STREAM_TORN] is True


def _patched() -> list[object]:
    """The attributes patched for ollama: both clients' ``chat``, httpx's ``send``."""
    return [
        vars(Client)["chat"],
        vars(AsyncClient)["chat"],
        vars(httpx.Client)["send"],
        vars(httpx.AsyncClient)["send"],
    ]


def test_uninstrument_restores_the_sdk(instrument: Instrument, sim: Simulator) -> None:
    """After ``uninstrument()`` the SDK's methods and httpx's ``send`` are the objects they were; refused again."""
    with checks.restored_by_uninstrument(instrument, _patched), pytest.raises(ollama.ResponseError):
        Client(host=sim.base_url).chat(model=MODEL, messages=list(BROKEN["interrupted"]))
