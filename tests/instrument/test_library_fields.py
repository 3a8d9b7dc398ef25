"""Library-only message fields never reach the wire: what the SDK sends carries none of them."""

from __future__ import annotations

import json
from typing import Any, Final

import pytest

from otel_toolturn import Lane, compose
from tests.instrument.conftest import Instrument
from tests.instrument.test_repair import KEY, send
from tests.instrument.wire import Wire
from tests.transcripts import A, U, build, t

DIAGNOSTICS: Final = "toolturn_diagnostics"
STAMP: Final = [{"kind": "stream_drop", "cause": "truncated", "count": 1, "tool_call_ids": ["call_1"]}]
LANES: Final[tuple[Lane, ...]] = ("anthropic.messages", "openai.chat_completions", "openai.responses")
"""The lanes the mock wire speaks."""


def test_the_diagnostics_field_is_a_library_field() -> None:
    """The stream-drop diagnostics field is one the strip rule removes."""
    assert DIAGNOSTICS in compose.FRAMEWORK_FIELDS


@pytest.mark.parametrize("lane", LANES)
def test_stamped_stream_drops_are_not_sent(instrument: Instrument, lane: Lane) -> None:
    """An assistant message stamped with its stream drops goes out without the stamp, the rest as it was."""
    instrument()
    messages: list[Any] = build(lane, [U("go"), A(t("partial answer")), U("again")])
    at = next(i for i, m in enumerate(messages) if m.get("role") == "assistant")
    stamped = [*messages[:at], {**messages[at], DIAGNOSTICS: STAMP}, *messages[at + 1 :]]
    wire = Wire()
    send(wire, lane, stamped)
    body = wire.body()
    assert DIAGNOSTICS not in json.dumps(body)
    assert body[KEY[lane]] == messages
