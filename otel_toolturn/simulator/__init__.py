"""An embedded provider simulator on loopback: Anthropic Messages, Chat, Responses, Gemini, Bedrock.

Bedrock: Converse, and InvokeModel with an Anthropic body.

It enforces each provider's tool-turn rules with the provider's own 400 body and words, answers
valid requests with scripted turns (tool calls, text) as plain JSON or SSE (Bedrock: its event stream), can misbehave on
demand (cut arguments, no finish frame, frames after the end, a non-JSON frame, a substituted
model, Gemini's ``MALFORMED_FUNCTION_CALL``), and records every request it receives. On the
Anthropic lane it signs the thinking it returns and checks each signature against the prefix it
was made from (``_binding``); on Gemini it signs the first call of each step (unchecked); on every
lane each reply's usage reports the part of its prompt an earlier request already sent, as a prefix
cache would (``_cache``; totals per lane in ``Simulator.summary``). The demo runs against it; so do
the tests.

Example::

    from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator

    turn = ScriptedTurn(text="Reading both.", calls=(ScriptedCall(name="read", arguments={"path": "a"}),))
    with Simulator(turns=[turn]) as sim:
        client = openai.OpenAI(base_url=sim.openai_base_url, api_key="test")
        ...
        assert sim.requests[-1].status == 200
"""

from __future__ import annotations

from otel_toolturn.simulator._script import (
    DEFAULT_ANSWER,
    MISBEHAVIOURS,
    Misbehaviour,
    ScriptedCall,
    ScriptedTurn,
    default_turn,
)
from otel_toolturn.simulator._server import LaneSummary, RecordedRequest, Simulator

__all__ = [
    "DEFAULT_ANSWER",
    "MISBEHAVIOURS",
    "LaneSummary",
    "Misbehaviour",
    "RecordedRequest",
    "ScriptedCall",
    "ScriptedTurn",
    "Simulator",
    "default_turn",
]
