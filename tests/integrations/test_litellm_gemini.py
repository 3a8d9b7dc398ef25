"""Through LiteLLM's Gemini providers, against the simulator: broken tool histories go out valid, recorded once.

Callers write OpenAI chat messages; LiteLLM converts them to Gemini ``contents``. The breaks here
are those that survive its conversion to the wire: a call with no result, results split around a
user message, a result arriving after the model answered. A result with no call never goes out
(LiteLLM refuses it itself), and two result messages in a row are merged by LiteLLM.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import pytest

from otel_toolturn import validate
from otel_toolturn.instrument import Options, ToolTurnInstrumentor, names
from otel_toolturn.simulator import Simulator
from tests.instrument.conftest import Otel, make_otel
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
]

LANE: Final = "gemini.generate_content"
GEMINI_MODEL: Final = "gemini-3-pro-preview"
VERTEX_MODEL: Final = "gemini-2.5-flash"

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
}
"""A result missing, results split around a user message, a result after the model answered."""

FORMS: Final = {
    "missing": ("missing_result",),
    "split": ("late_result",),
    "late": ("missing_result", "late_result_in_place"),
}
"""The repairs each break is recorded with: the late result is closed where due and delivered where it stands."""

CASES: Final = entry_cases(BREAKS)


def _kwargs(sim: Simulator, events: tuple[Event, ...], *, stream: bool, vertex: bool = False) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"messages": build("openai.chat_completions", events), "stream": stream}
    if vertex:
        kwargs.update(
            model=f"vertex_ai/{VERTEX_MODEL}", api_base=sim.base_url, vertex_project="p", vertex_location="us-central1"
        )
    else:
        kwargs.update(model=f"gemini/{GEMINI_MODEL}", api_base=f"{sim.base_url}/v1beta", api_key="sim")
    return kwargs


async def _send(
    sim: Simulator,
    entry: str,
    events: tuple[Event, ...],
    *,
    stream: bool,
    vertex: bool = False,
) -> None:
    """One LiteLLM call (a stream read to its end)."""
    await completed(entry, _kwargs(sim, events, stream=stream, vertex=vertex), stream=stream)


def _contents(sim: Simulator) -> list[object]:
    return last_sent_list(sim, "contents")


@pytest.mark.parametrize(("entry", "brk", "stream"), CASES)
async def test_a_broken_history_reaches_gemini_valid_recorded_once(
    instrumented: Otel, sim: Simulator, entry: str, brk: str, stream: bool
) -> None:
    """LiteLLM's Gemini call with a broken history is served; one span (``gcp.gemini``) with its repair; one request."""
    await _send(sim, entry, BREAKS[brk], stream=stream)
    attributes = served_and_recorded_once(
        instrumented, sim, key="contents", lane=LANE, provider="gcp.gemini", model=GEMINI_MODEL, forms=FORMS[brk]
    )
    if not stream:
        assert attributes["gen_ai.response.model"] == GEMINI_MODEL
        assert attributes["gen_ai.response.finish_reasons"] == ("STOP",)


@pytest.mark.parametrize(("entry", "brk", "stream"), CASES)
async def test_without_init_gemini_refuses_the_same_call(sim: Simulator, entry: str, brk: str, stream: bool) -> None:
    """Uninstrumented, the same LiteLLM call meets Gemini's 400 in the provider's words: the repair is ours."""
    assert not [cb for cb in litellm.callbacks if type(cb).__name__ == "ToolTurnLogger"]
    with pytest.raises(litellm.exceptions.BadRequestError):
        await _send(sim, entry, BREAKS[brk], stream=stream)
    refused_in_the_laws_words(sim, key="contents", lane=LANE)


async def test_a_history_litellm_already_sends_valid_goes_out_unrepaired(instrumented: Otel, sim: Simulator) -> None:
    """Two result messages in a row (LiteLLM merges them into one content): served, recorded with no repair."""
    events = (U("read a and b"), A(c("call_1", "read"), c("call_2", "read")), R("call_1", "a"), R("call_2", "b"))
    await _send(sim, "completion", (*events, U("go on")), stream=False)
    assert sim.requests[-1].status == 200
    (span,) = instrumented.call_spans()
    assert span.attributes is not None
    assert span.attributes["toolturn.repairs.count"] == 0
    assert not [e for e in span.events if e.name == "toolturn.repair"]


async def test_a_result_with_no_call_is_refused_by_litellm_and_records_nothing(
    instrumented: Otel, sim: Simulator
) -> None:
    """LiteLLM refuses an orphan result before sending: no request, no span, no request counted."""
    with pytest.raises(litellm.exceptions.APIConnectionError):
        await _send(sim, "completion", (U("read a"), R("call_9", "stray"), U("go on")), stream=False)
    assert sim.requests == ()
    assert instrumented.call_spans() == []
    assert instrumented.total("toolturn.requests") == 0


@pytest.fixture
def vertex_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """Vertex AI without Google credentials: LiteLLM's token lookup answers a fixed token and project."""
    from litellm.llms.vertex_ai.vertex_llm_base import VertexBase  # noqa: PLC0415 - LiteLLM's own module

    def token(self: object, credentials: object, project_id: object, custom_llm_provider: object) -> tuple[str, str]:
        del self, credentials, project_id, custom_llm_provider
        return "token", "p"

    async def token_async(
        self: object, credentials: object, project_id: object, custom_llm_provider: object
    ) -> tuple[str, str]:
        return token(self, credentials, project_id, custom_llm_provider)

    monkeypatch.setattr(VertexBase, "_ensure_access_token", token)
    monkeypatch.setattr(VertexBase, "_ensure_access_token_async", token_async)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_vertex_is_repaired_and_recorded_as_vertex_ai(
    instrumented: Otel, sim: Simulator, vertex_token: None, stream: bool
) -> None:
    """``vertex_ai/…`` goes out repaired on Vertex's path, its span ``gcp.vertex_ai``, signature and result repaired."""
    await _send(sim, "completion", BREAKS["missing"], stream=stream, vertex=True)
    sent = sim.requests[-1]
    assert sent.status == 200, sent.error
    assert sent.path.startswith("/v1/projects/p/locations/us-central1/publishers/google/models/")
    assert validate(_contents(sim), lane=LANE) == []
    (span,) = instrumented.call_spans()
    assert span.attributes is not None
    assert span.attributes["gen_ai.provider.name"] == "gcp.vertex_ai"
    assert set(span.attributes["toolturn.repairs.forms"]) == {"missing_result", "placeholder_signature"}  # type: ignore[arg-type]


async def test_without_init_vertex_refuses_the_unsigned_call(sim: Simulator, vertex_token: None) -> None:
    """Uninstrumented, the same Vertex call meets the 400 for its unsigned call step and missing result."""
    with pytest.raises(litellm.exceptions.BadRequestError):
        await _send(sim, "completion", BREAKS["missing"], stream=False, vertex=True)
    assert sim.requests[-1].status == 400


@pytest.fixture
def round_capped(caplog: pytest.LogCaptureFixture) -> Iterator[Otel]:
    """otel-toolturn instrumented with ``max_tool_rounds=1``; removed afterwards."""
    otel = make_otel()
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(
        options=Options(max_tool_rounds=1), tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
    )
    yield otel
    instrumentor.uninstrument()


async def test_past_the_tool_round_cap_the_body_calls_no_tool(round_capped: Otel, sim: Simulator) -> None:
    """A round past ``max_tool_rounds``: the body's own ``toolConfig`` says ``NONE``, its tools kept, recorded."""
    kwargs = _kwargs(sim, (U("read a"), A(c("call_1", "read")), R("call_1", "a's text")), stream=False)
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object", "properties": {}}}}]
    litellm.completion(**kwargs, tools=tools, tool_choice="auto")
    sent = sim.requests[-1]
    assert sent.status == 200, sent.error
    assert isinstance(sent.body, dict)
    assert sent.body["toolConfig"] == {"function_calling_config": {"mode": "NONE"}}
    assert sent.body["tools"]
    (span,) = round_capped.call_spans()
    (withheld,) = [e.attributes for e in span.events if e.name == names.EVENT_TOOLS_WITHHELD]
    assert withheld is not None
    assert withheld[names.TOOLS_WITHHELD_REASON] == "wrap-up"
    assert withheld[names.TOOLS_WITHHELD_APPLIED] is True
