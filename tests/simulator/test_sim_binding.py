"""Signed thinking bound to its prefix: the real anthropic SDK against the simulator's prefix check."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import anthropic
import httpx
import pytest
from anthropic.types import Message, MessageParam
from anthropic.types.beta import BetaMessage, BetaMessageParam, BetaThinkingConfigParam
from anthropic.types.beta.beta_thinking_dropped_input_transformation import BetaThinkingDroppedInputTransformation

from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator
from otel_toolturn.simulator._binding import review_binding

SYSTEM = "You answer briefly."
THINK: anthropic.types.ThinkingConfigParam = {"type": "enabled", "budget_tokens": 1024}
BETA = "thinking-binding-controls-2026-08-01"
DROP: BetaThinkingConfigParam = {
    "type": "enabled",
    "budget_tokens": 1024,
    "block_binding": {"prefix_mismatch_behavior": "drop_block"},
}
INVALID = "Invalid `signature` in `thinking` block. The block is bound to a different conversation."


@pytest.fixture
def client(sim: Simulator) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=sim.base_url, api_key="test-key", max_retries=0) as c:
        yield c


def expected_signature(system: object, tools: object, messages: list[object]) -> str:
    """The documented signature: ``sim1.`` + SHA-256 of the sorted, space-free JSON of the prefix."""
    prefix = {"system": system, "tools": tools, "messages": messages, "content": []}
    return "sim1." + hashlib.sha256(json.dumps(prefix, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def ask(client: anthropic.Anthropic, messages: list[MessageParam], system: str = SYSTEM) -> Message:
    return client.messages.create(model="claude-test", max_tokens=256, system=system, messages=messages, thinking=THINK)


def two_rounds(sim: Simulator, client: anthropic.Anthropic) -> list[MessageParam]:
    """User 0, assistant 1 (signed), user 2, assistant 3 (signed), user 4 — each assistant reply as returned."""
    sim.enqueue(ScriptedTurn(text="First answer."), ScriptedTurn(text="Second answer."))
    messages: list[MessageParam] = [{"role": "user", "content": "first question"}]
    first = ask(client, messages)
    messages += [{"role": "assistant", "content": first.content}, {"role": "user", "content": "second question"}]
    second = ask(client, messages)
    messages += [{"role": "assistant", "content": second.content}, {"role": "user", "content": "third question"}]
    return messages


def beta_two_rounds(sim: Simulator, client: anthropic.Anthropic) -> list[BetaMessageParam]:
    """``two_rounds`` through the beta client, with ``drop_block`` set."""
    sim.enqueue(ScriptedTurn(text="First answer."), ScriptedTurn(text="Second answer."))
    messages: list[BetaMessageParam] = [{"role": "user", "content": "first question"}]
    first = beta_ask(client, messages)
    messages += [{"role": "assistant", "content": first.content}, {"role": "user", "content": "second question"}]
    second = beta_ask(client, messages)
    messages += [{"role": "assistant", "content": second.content}, {"role": "user", "content": "third question"}]
    return messages


def beta_ask(client: anthropic.Anthropic, messages: list[BetaMessageParam]) -> BetaMessage:
    return client.beta.messages.create(
        model="claude-test", max_tokens=256, system=SYSTEM, messages=messages, thinking=DROP, betas=[BETA]
    )


def test_thinking_reply_opens_with_a_signed_block_plain_and_streamed(
    sim: Simulator, client: anthropic.Anthropic
) -> None:
    """With thinking on, plain and streamed replies open with a thinking block signed over the prefix."""
    sim.enqueue(ScriptedTurn(text="Sunny."), ScriptedTurn(text="Sunny."))
    messages: list[MessageParam] = [{"role": "user", "content": "weather?"}]
    plain = ask(client, messages)
    with client.messages.stream(
        model="claude-test", max_tokens=256, system=SYSTEM, messages=messages, thinking=THINK
    ) as stream:
        streamed = stream.get_final_message()
    signature = expected_signature(SYSTEM, None, [{"role": "user", "content": "weather?"}])
    for message in (plain, streamed):
        thinking, text = message.content
        assert thinking.type == "thinking"
        assert thinking.thinking
        assert thinking.signature == signature
        assert text.type == "text"
        assert text.text == "Sunny."


def test_reply_without_thinking_has_no_thinking_block(sim: Simulator, client: anthropic.Anthropic) -> None:
    """A request that does not enable thinking gets no thinking block."""
    sim.enqueue(ScriptedTurn(text="Sunny."))
    message = client.messages.create(model="claude-test", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    assert [b.type for b in message.content] == ["text"]


def test_conversation_resent_append_only_is_served(sim: Simulator, client: anthropic.Anthropic) -> None:
    """Each reply appended as returned, with new user text or tool results after it, passes the check."""
    messages = two_rounds(sim, client)
    sim.enqueue(ScriptedTurn(text="Looking.", calls=(ScriptedCall(name="lookup", call_id="toolu_look"),)))
    called = ask(client, messages)
    assert [b.type for b in called.content] == ["thinking", "text", "tool_use"]
    messages += [
        {"role": "assistant", "content": called.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_look", "content": "found"}]},
    ]
    sim.enqueue(ScriptedTurn(text="Found it."))
    with client.messages.stream(
        model="claude-test", max_tokens=256, system=SYSTEM, messages=messages, thinking=THINK
    ) as stream:
        final = stream.get_final_message()
    assert final.content[-1].type == "text"
    assert [r.status for r in sim.requests] == [200, 200, 200, 200]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ("first user message", "messages.1.content.0"),
        ("second user message", "messages.3.content.0"),
        ("system prompt", "messages.1.content.0"),
    ],
)
def test_changed_prefix_is_refused_naming_the_first_invalid_block(
    sim: Simulator, client: anthropic.Anthropic, change: str, path: str
) -> None:
    """A change ahead of signed thinking earns the provider's 400, naming the first block that follows it."""
    messages = two_rounds(sim, client)
    system = SYSTEM
    if change == "first user message":
        messages[0] = {"role": "user", "content": "first question, edited"}
    elif change == "second user message":
        messages[2] = {"role": "user", "content": "second question, edited"}
    else:
        system = "You answer at length."
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(client, messages, system=system)
    assert caught.value.status_code == 400
    assert f"{path}: {INVALID}" in str(caught.value)
    assert '`thinking.block_binding.prefix_mismatch_behavior` to "drop_block"' in str(caught.value)
    summary = sim.summary("anthropic.messages")
    assert (summary.served, summary.refused, summary.binding_refusals) == (2, 1, 1)


def test_foreign_signatures_are_not_checked(sim: Simulator, client: anthropic.Anthropic) -> None:
    """A thinking block whose signature is not the simulator's form passes, whatever precedes it."""
    sim.enqueue(ScriptedTurn(text="Fine."))
    messages: list[MessageParam] = [
        {"role": "user", "content": "anything"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Hm.", "signature": "sig"}]},
        {"role": "user", "content": "go on"},
    ]
    assert ask(client, messages).content[-1].type == "text"


def test_tool_turn_rules_are_checked_before_the_prefix(sim: Simulator, client: anthropic.Anthropic) -> None:
    """A request breaking a tool-turn rule and the prefix check gets the tool-turn 400."""
    messages = two_rounds(sim, client)
    messages[0] = {"role": "user", "content": "first question, edited"}
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_none", "content": "x"}]})
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(client, messages)
    assert "toolu_none" in str(caught.value)
    assert INVALID not in str(caught.value)


def test_drop_block_drops_every_invalid_block_and_lists_it(sim: Simulator, client: anthropic.Anthropic) -> None:
    """drop_block: the first invalid block and each later one are dropped and listed; the new signature skips them."""
    messages = beta_two_rounds(sim, client)
    messages[0] = {"role": "user", "content": "first question, edited"}
    sim.enqueue(ScriptedTurn(text="Third answer."))
    reply = beta_ask(client, messages)
    assert reply.input_transformations == [
        BetaThinkingDroppedInputTransformation(
            type="thinking_dropped", path="messages.1.content.0", reason="prefix_binding_mismatch"
        ),
        BetaThinkingDroppedInputTransformation(
            type="thinking_dropped", path="messages.3.content.0", reason="prefix_binding_mismatch"
        ),
    ]
    sent = sim.requests[-1].body
    assert isinstance(sent, dict)
    seen = [{**m, "content": m["content"][1:]} if m["role"] == "assistant" else m for m in sent["messages"]]
    assert reply.content[0].type == "thinking"
    assert reply.content[0].signature == expected_signature(SYSTEM, None, seen)
    summary = sim.summary("anthropic.messages")
    assert (summary.served, summary.refused, summary.thinking_dropped) == (3, 0, 2)


def test_history_without_the_dropped_blocks_keeps_later_thinking_valid(
    sim: Simulator, client: anthropic.Anthropic
) -> None:
    """A client that removes the dropped blocks and appends the reply is served with nothing dropped."""
    messages = beta_two_rounds(sim, client)
    messages[0] = {"role": "user", "content": "first question, edited"}
    sim.enqueue(ScriptedTurn(text="Third answer."), ScriptedTurn(text="Fourth answer."))
    reply = beta_ask(client, messages)
    kept: list[BetaMessageParam] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "assistant" and not isinstance(content, str):
            kept.append({"role": "assistant", "content": [b for b in content if getattr(b, "type", "") != "thinking"]})
        else:
            kept.append(message)
    kept += [{"role": "assistant", "content": reply.content}, {"role": "user", "content": "fourth question"}]
    again = beta_ask(client, kept)
    assert again.input_transformations is None
    assert sim.summary("anthropic.messages").thinking_dropped == 2


def test_drop_block_stream_carries_the_list_in_start_and_delta(sim: Simulator, client: anthropic.Anthropic) -> None:
    """Streamed, the dropped blocks are listed in ``message_start`` and again in ``message_delta``."""
    messages = beta_two_rounds(sim, client)
    messages[2] = {"role": "user", "content": "second question, edited"}
    sim.enqueue(ScriptedTurn(text="Third answer."))
    with client.beta.messages.stream(
        model="claude-test", max_tokens=256, system=SYSTEM, messages=messages, thinking=DROP, betas=[BETA]
    ) as stream:
        events = list(stream)
        final = stream.get_final_message()
    dropped = [
        BetaThinkingDroppedInputTransformation(
            type="thinking_dropped", path="messages.3.content.0", reason="prefix_binding_mismatch"
        )
    ]
    starts = [e.message.input_transformations for e in events if e.type == "message_start"]
    deltas = [e.input_transformations for e in events if e.type == "message_delta"]
    assert starts == deltas == [dropped]
    assert final.input_transformations == dropped
    assert final.content[0].type == "thinking"


def test_unchanged_request_is_reviewed_as_it_is() -> None:
    """A request whose signed thinking still matches its prefix is admitted as the very same object."""
    question = {"role": "user", "content": "q"}
    signature = expected_signature(None, None, [question])
    thinking = {"type": "thinking", "thinking": "t", "signature": signature}
    request: dict[str, object] = {"messages": [question, {"role": "assistant", "content": [thinking]}]}
    review = review_binding(request)
    assert review.request is request
    assert (review.invalid, review.refusal, review.dropped) == ((), None, ())


def test_blocks_after_an_invalid_one_are_invalid_even_when_their_own_prefix_matches() -> None:
    """Once one signed block fails, every later signed block is invalid too, in request order."""
    first = {"role": "user", "content": "q"}
    stale = {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "sim1.0"}]}
    second = {"role": "user", "content": "r"}
    fresh = {
        "type": "thinking",
        "thinking": "u",
        "signature": expected_signature(None, None, [first, stale, second]),
    }
    request: dict[str, object] = {"messages": [first, stale, second, {"role": "assistant", "content": [fresh]}]}
    review = review_binding(request)
    assert review.invalid == ("messages.1.content.0", "messages.3.content.0")
    assert review.refusal is not None
    assert review.refusal.startswith("messages.1.content.0: ")


def test_plain_http_refusal_has_anthropics_error_body(sim: Simulator, client: anthropic.Anthropic) -> None:
    """The refusal is Anthropic's error body: ``type`` error, ``invalid_request_error``, the message."""
    two_rounds(sim, client)
    wire = json.loads(json.dumps(sim.requests[-1].body))
    wire["messages"][0] = {"role": "user", "content": "edited"}
    response = httpx.post(sim.base_url + "/v1/messages", json=wire)
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"] == (
        f"messages.1.content.0: {INVALID} "
        'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
    )
