"""Append-stable sessions end to end: the real anthropic SDK, instrumented, against the simulator's prefix check.

The simulator signs each thinking block over the prefix it was produced from and refuses a request
whose returned block no longer matches it, as Anthropic's preserved-thinking models do.
"""

from __future__ import annotations

from typing import Any, Final

import anthropic
import pytest
from anthropic.types import MessageParam

from otel_toolturn.instrument import names
from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator
from tests.instrument.conftest import Instrument

SYSTEM: Final = "You answer briefly."
THINK: Final[anthropic.types.ThinkingConfigParam] = {"type": "enabled", "budget_tokens": 1024}
BETA: Final = "thinking-binding-controls-2026-08-01"
INVALID: Final = "Invalid `signature` in `thinking` block"


def _client(sim: Simulator) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=sim.base_url, api_key="test-key", max_retries=0)


def _ask(client: anthropic.Anthropic, messages: list[MessageParam]) -> Any:
    return client.messages.create(model="claude-test", max_tokens=256, system=SYSTEM, messages=messages, thinking=THINK)


def _result(call_id: str, text: str) -> MessageParam:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text}]}


def _interrupted_session(sim: Simulator, client: anthropic.Anthropic) -> tuple[list[MessageParam], list[MessageParam]]:
    """Parallel calls, Ctrl-C before the slow one returns, "continue", answered over the close; then it lands.

    Returns the caller's transcript before the slow result landed and after (with a new question).
    """
    sim.enqueue(
        ScriptedTurn(
            calls=(ScriptedCall(name="fast", call_id="toolu_fast"), ScriptedCall(name="slow", call_id="toolu_slow"))
        ),
        ScriptedTurn(text="The slow tool was interrupted; carrying on."),
    )
    messages: list[MessageParam] = [{"role": "user", "content": "check both"}]
    calls = _ask(client, messages)
    messages += [{"role": "assistant", "content": calls.content}, _result("toolu_fast", "fast: 1")]
    messages.append({"role": "user", "content": "continue"})
    answered = _ask(client, messages)
    before: list[MessageParam] = [*messages, {"role": "assistant", "content": answered.content}]
    landed: list[MessageParam] = [*before, _result("toolu_slow", "slow: 2"), {"role": "user", "content": "and now?"}]
    return before, landed


def test_a_late_result_after_the_answer_passes_the_prefix_check(sim: Simulator, instrument: Instrument) -> None:
    """Repair mode: interrupted calls, the answer over the close, the real result, a late duplicate — none refused."""
    otel = instrument()
    with _client(sim) as client:
        _, landed = _interrupted_session(sim, client)
        sim.enqueue(ScriptedTurn(text="Slow said 2."), ScriptedTurn(text="Noted."))
        third = _ask(client, landed)
        grown: list[MessageParam] = [
            *landed,
            {"role": "assistant", "content": third.content},
            _result("toolu_fast", "fast: 1 again"),
        ]
        grown.append({"role": "user", "content": "anything else?"})
        _ask(client, grown)
    summary = sim.summary("anthropic.messages")
    assert (summary.served, summary.refused, summary.binding_refusals) == (4, 0, 0)
    forms = [e[names.REPAIR_FORM] for e in otel.events(names.EVENT_REPAIR)]
    assert "late_result_in_place" in forms
    assert "duplicate_result_in_place" in forms
    assert "late_result" not in forms, "nothing the model answered from was moved"


def test_a_late_result_moved_up_over_the_answer_fails_the_same_check(sim: Simulator, instrument: Instrument) -> None:
    """Moving the late result up into its call's batch, in place of the close the model answered over, is refused.

    The moved-up list breaks no tool-turn rule, so otel-toolturn sends it as it is; only the prefix check refuses it.
    """
    otel = instrument()
    with _client(sim) as client:
        before, _ = _interrupted_session(sim, client)
        moved = list(before)
        moved[2] = {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_fast", "content": "fast: 1"},
                {"type": "tool_result", "tool_use_id": "toolu_slow", "content": "slow: 2"},
            ],
        }
        moved.append({"role": "user", "content": "and now?"})
        with pytest.raises(anthropic.BadRequestError, match=INVALID):
            _ask(client, moved)
    assert sim.summary("anthropic.messages").binding_refusals == 1
    assert otel.call_spans()[-1].attributes[names.REPAIRS_COUNT] == 0  # type: ignore[index]


def test_thinking_the_provider_dropped_is_recorded_from_the_simulator(sim: Simulator, instrument: Instrument) -> None:
    """drop_block after the caller edited an earlier message: one toolturn.input_transformation event and point."""
    otel = instrument()
    drop: Any = {"type": "enabled", "budget_tokens": 1024, "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    sim.enqueue(ScriptedTurn(text="First."), ScriptedTurn(text="Second."))
    with _client(sim) as client:

        def ask(messages: list[Any]) -> Any:
            return client.beta.messages.create(
                model="claude-test", max_tokens=256, system=SYSTEM, messages=messages, thinking=drop, betas=[BETA]
            )

        messages: list[Any] = [{"role": "user", "content": "first question"}]
        first = ask(messages)
        messages += [{"role": "assistant", "content": first.content}, {"role": "user", "content": "second question"}]
        messages[0] = {"role": "user", "content": "first question, edited"}
        ask(messages)
    events = otel.events(names.EVENT_INPUT_TRANSFORMATION)
    assert [(e[names.INPUT_TRANSFORMATION_PATH], e[names.INPUT_TRANSFORMATION_REASON]) for e in events] == [
        ("messages.1.content.0", "prefix_binding_mismatch")
    ]
    assert otel.total(names.INPUT_TRANSFORMATIONS.name, toolturn__input_transformation__type="thinking_dropped") == 1
