"""Tools withheld: the scope, ``max_tool_rounds`` and the caller's own choice, in each lane's spelling."""

from __future__ import annotations

import asyncio
from typing import Any, Final

import pytest

from otel_toolturn import Lane, ToolTurnInputError
from otel_toolturn.instrument import names, withhold_tools
from tests.instrument.conftest import Instrument
from tests.instrument.wire import MODEL, Wire
from tests.transcripts import A, Event, R, U, build, c

LANES: Final[tuple[Lane, ...]] = ("anthropic.messages", "openai.chat_completions", "openai.responses")
TOOLS: Final[dict[Lane, list[dict[str, object]]]] = {
    "anthropic.messages": [{"name": "f", "description": "d", "input_schema": {"type": "object", "properties": {}}}],
    "openai.chat_completions": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "openai.responses": [{"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": False}],
}
NONE: Final[dict[Lane, object]] = {
    "anthropic.messages": {"type": "none"},
    "openai.chat_completions": "none",
    "openai.responses": "none",
}
TWO_ROUNDS: Final[list[Event]] = [U("go"), A(c("c1")), R("c1"), A(c("c2")), R("c2")]


def _send(wire: Wire, lane: Lane, messages: object, **extra: Any) -> None:
    tools = TOOLS[lane]
    if lane == "anthropic.messages":
        wire.anthropic().messages.create(model=MODEL, max_tokens=8, messages=messages, tools=tools, **extra)
    elif lane == "openai.chat_completions":
        wire.openai().chat.completions.create(model=MODEL, messages=messages, tools=tools, **extra)
    else:
        wire.openai().responses.create(model=MODEL, input=messages, tools=tools, **extra)


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("reason", ["wrap-up", "evidence-revision"])
def test_scope_withholds_tools_in_the_lanes_spelling(instrument: Instrument, lane: Lane, reason: str) -> None:
    """In ``withhold_tools(reason)``: tool choice none in the lane's spelling, tools kept, the decision recorded."""
    otel = instrument()
    wire = Wire()
    with withhold_tools(reason):  # type: ignore[arg-type]
        _send(wire, lane, build(lane, [U("q")]))
    _send(wire, lane, build(lane, [U("q")]))
    inside, outside = wire.body(0), wire.body(1)
    assert inside["tool_choice"] == NONE[lane]
    assert inside["tools"] == outside["tools"]
    assert "tool_choice" not in outside
    (event,) = otel.events(names.EVENT_TOOLS_WITHHELD)
    assert event is not None
    assert event[names.TOOLS_WITHHELD_REASON] == reason
    assert event[names.TOOLS_WITHHELD_APPLIED] is True
    assert otel.total(names.TOOLS_WITHHELD.name, toolturn__tools_withheld__reason=reason, toolturn__lane=lane) == 1


@pytest.mark.parametrize("lane", LANES)
def test_max_tool_rounds_asks_for_a_wrap_up(instrument: Instrument, lane: Lane) -> None:
    """Two consecutive tool rounds since the user spoke reach ``max_tool_rounds=2``: tools withheld, reason wrap-up."""
    otel = instrument(max_tool_rounds=2)
    wire = Wire()
    _send(wire, lane, build(lane, TWO_ROUNDS[:3]))
    _send(wire, lane, build(lane, TWO_ROUNDS))
    assert "tool_choice" not in wire.body(0)
    assert wire.body(1)["tool_choice"] == NONE[lane]
    reasons = [e[names.TOOLS_WITHHELD_REASON] for e in otel.events(names.EVENT_TOOLS_WITHHELD) if e]
    assert reasons == ["wrap-up"]


def test_max_tool_rounds_in_observe_mode_reports_without_changing_the_request(instrument: Instrument) -> None:
    """Observe mode: the wrap-up is recorded as not applied and the request goes out as written."""
    otel = instrument(max_tool_rounds=1, mode="observe")
    wire = Wire()
    _send(wire, "openai.chat_completions", build("openai.chat_completions", TWO_ROUNDS))
    assert "tool_choice" not in wire.body()
    (event,) = otel.events(names.EVENT_TOOLS_WITHHELD)
    assert event is not None
    assert event[names.TOOLS_WITHHELD_APPLIED] is False


@pytest.mark.parametrize("lane", LANES)
def test_caller_who_withholds_tools_is_recorded(instrument: Instrument, lane: Lane) -> None:
    """A caller sending tool choice none itself: recorded with reason ``caller``, request unchanged."""
    otel = instrument()
    wire = Wire()
    _send(wire, lane, build(lane, [U("q")]), tool_choice=NONE[lane])
    assert wire.body()["tool_choice"] == NONE[lane]
    reasons = [e[names.TOOLS_WITHHELD_REASON] for e in otel.events(names.EVENT_TOOLS_WITHHELD) if e]
    assert reasons == ["caller"]


def test_scope_belongs_to_its_task(instrument: Instrument) -> None:
    """A scope entered in one asyncio task does not reach a task running beside it."""
    instrument()
    wire = Wire()
    client = wire.async_openai()
    lane: Lane = "openai.chat_completions"

    async def inside() -> None:
        with withhold_tools("wrap-up"):
            await asyncio.sleep(0)
            await client.chat.completions.create(
                model="in", messages=[{"role": "user", "content": "q"}], tools=TOOLS[lane]
            )

    async def outside() -> None:
        await asyncio.sleep(0)
        await client.chat.completions.create(
            model="out", messages=[{"role": "user", "content": "q"}], tools=TOOLS[lane]
        )

    async def main() -> None:
        await asyncio.gather(inside(), outside())

    asyncio.run(main())
    by_model = {wire.body(i)["model"]: wire.body(i).get("tool_choice") for i in range(2)}
    assert by_model == {"in": "none", "out": None}


def test_unknown_reason_is_rejected() -> None:
    """``withhold_tools`` with a reason outside the closed set raises a typed error naming it."""
    with pytest.raises(ToolTurnInputError, match="'later'"), withhold_tools("later"):  # type: ignore[arg-type]
        pass
