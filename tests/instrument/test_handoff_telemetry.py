"""Handoff calls in responses, recorded: the same match as the handoff package, bounded metric labels."""

from __future__ import annotations

from typing import Final

from otel_toolturn.instrument import names
from tests.instrument.conftest import Instrument
from tests.instrument.wire import MODEL, Call, Wire, respond

Q: Final = [{"role": "user", "content": "go"}]


def _answering(*calls: Call) -> Wire:
    """A wire whose every response carries ``calls``."""
    return Wire(responder=lambda lane, _body: respond(lane, stream=False, calls=list(calls)))


def _chat(wire: Wire) -> None:
    wire.openai().chat.completions.create(model=MODEL, messages=Q)


def test_a_name_with_glob_characters_is_a_handoff_when_configured_as_it_is(instrument: Instrument) -> None:
    """``agent[1]`` configured as ``agent[1]`` is a handoff to the instrumentation, as to ``is_handoff_tool``."""
    otel = instrument(handoff_tools=("agent[1]",))
    _chat(Wire(responder=lambda ln, _body: respond(ln, stream=False, calls=[Call("call_1", "agent[1]")])))
    (event,) = otel.events(names.EVENT_HANDOFF)
    assert event[names.HANDOFF_TOOL] == "agent[1]"
    assert event[names.HANDOFF_PATTERN] == "agent[1]"


def test_the_handoff_counter_is_labelled_by_the_pattern_that_matched(instrument: Instrument) -> None:
    """Many tool names under one glob give one label set: the configured pattern, never the tool name."""
    otel = instrument(handoff_tools=("explorer", "agent_*"))
    for index, name in [*((i, f"agent_{i}") for i in range(5)), (5, "explorer")]:
        _chat(_answering(Call(f"call_{index}", name)))
    points = otel.points(names.HANDOFFS.name)
    assert sorted((attrs[names.HANDOFF_PATTERN], value) for attrs, value in points) == [
        ("agent_*", 5.0),
        ("explorer", 1.0),
    ]
    assert all(names.HANDOFF_TOOL not in attrs for attrs, _ in points)
    assert set(names.HANDOFFS.attributes) == {names.HANDOFF_PATTERN, names.LANE, names.PROVIDER}


def test_a_long_tool_name_with_control_characters_is_cut_and_cleaned_on_the_event(instrument: Instrument) -> None:
    """The event's tool name is at most ``HANDOFF_TOOL_MAX_LENGTH`` characters, control characters replaced."""
    otel = instrument(handoff_tools=("agent_*",))
    name = "agent_\x1b[31m\n" + "x" * 10_000
    _chat(Wire(responder=lambda ln, _body: respond(ln, stream=False, calls=[Call("call_1", name)])))
    (event,) = otel.events(names.EVENT_HANDOFF)
    shown = event[names.HANDOFF_TOOL]
    assert len(shown) == names.HANDOFF_TOOL_MAX_LENGTH
    assert shown.startswith("agent_\ufffd[31m\ufffd")
    assert shown.endswith("\u2026")
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in shown)


def test_refused_handoffs_carry_their_patterns(instrument: Instrument) -> None:
    """A refused response's event lists each handoff call's cleaned tool name and the pattern it matched."""
    otel = instrument(handoff_tools=("explorer", "agent_*"))
    calls = [Call("call_1", "explorer"), Call("call_2", "agent_\tb")]
    _chat(Wire(responder=lambda ln, _body: respond(ln, stream=False, calls=calls)))
    (refused,) = otel.events(names.EVENT_HANDOFF_REFUSED)
    assert refused[names.HANDOFF_TOOL] == ("explorer", "agent_\ufffdb")
    assert refused[names.HANDOFF_PATTERN] == ("explorer", "agent_*")
