"""Append-stability: one long agent session against signed thinking and a prefix cache, per request policy.

The session: a coding agent talks to the embedded provider simulator (``otel_toolturn.simulator``)
through the real ``anthropic`` SDK with thinking enabled and appends every reply as returned, its
signed thinking block included. It is seeded (``SEED``) and made of episodes: ordinary clean tool
rounds; parallel calls interrupted (Ctrl-C: the slow call gets no result, sometimes the fast one
neither; the user types "continue"; the model answers over the close, sometimes by re-issuing the
slow call under a new id) whose slow tool's real result lands one or two episodes later, after an
assistant message; retries (the reply to a request is lost and the same request is resent); late
duplicates (a second, different result for a call recorded two episodes later). A request the
provider refuses (any 400) fails like an agent's does: nothing is appended, the rest of its episode
is skipped, and the session goes on with the next user message; results of tools already running
still land. About 46 requests (``--quick``: 8).

Policies, each on its own simulator (fresh cache and counts), the same session:

- ``otel-toolturn``: the product path: ``otel_toolturn.init(mode="repair")`` with in-memory tracer,
  meter and logger providers; the agent hands its transcript to the patched SDK as it is;
- ``turnsafe``: ``turnsafe.repair(transcript, "anthropic")`` with its defaults (its
  ``thinking="strip_after_change"`` option removes the thinking after a change instead);
- ``LiteLLM modify_params``: LiteLLM's own client path, ``litellm.completion(model="anthropic/…",
  api_base=<simulator>, thinking=…)`` with ``litellm.modify_params = True`` (its sanitiser reads that
  setting; a ``modify_params=True`` keyword is sent on to the provider) over an OpenAI-format transcript; the agent
  appends the returned message (its ``thinking_blocks`` included) and ``tool`` messages, as LiteLLM
  users do (the row says so when litellm is not installed);
- ``earlier move-up rule``: ``bench._move_up.move_up``, what the law did before it was append-stable;
- ``unrepaired, valid``: the reference: the same session recorded by an agent that never breaks the
  rules (every result in its batch, no late results, no duplicates), sent as it is.

Columns, from the simulator's own counts (``Simulator.summary``): requests sent; refused (any 400);
prefix fails (refused by the prefix check of signed thinking); cache = cached ÷ prompt tokens over
the served requests, and that share ÷ the reference's; lost = results the agent recorded whose
content no served request carried. Each policy runs a second time with
``thinking.block_binding.prefix_mismatch_behavior: "drop_block"`` (beta header set): there the
provider drops stale thinking instead of refusing, so ``dropped`` counts the thinking blocks it
dropped, summed over the session's requests (the agent keeps them in its history, as agents do, so
a stale block is dropped again from every later request), and the cache columns are read again.
Everything is deterministic: the figures are the same on every run.

Run: ``python -m bench.stability`` (``--quick`` for the short session).
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import anthropic
from anthropic.types import ThinkingConfigEnabledParam, ToolParam
from anthropic.types.beta import BetaThinkingConfigEnabledParam, BetaToolParam
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_toolturn
from bench._move_up import move_up
from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator

try:
    import turnsafe

    TURNSAFE_MISSING: str | None = None
except ImportError:  # the peer is an optional bench dependency
    TURNSAFE_MISSING = "turnsafe is not installed"

SEED: Final = 11
MODEL: Final = "claude-sonnet-4-5"
LANE: Final = "anthropic.messages"
SYSTEM: Final = (
    "You are a coding agent working in a Python repository. Read before you change anything, run the "
    "tests after every change, and answer with what you found and what you did."
)
THINK: Final[ThinkingConfigEnabledParam] = {"type": "enabled", "budget_tokens": 1024}
DROP: Final[BetaThinkingConfigEnabledParam] = {
    "type": "enabled",
    "budget_tokens": 1024,
    "block_binding": {"prefix_mismatch_behavior": "drop_block"},
}
BETA: Final = "thinking-binding-controls-2026-08-01"
TOOL_NAMES: Final = ("read_file", "run_tests", "grep")
TOOLS: Final[list[ToolParam]] = [
    {"name": name, "description": f"The {name} tool.", "input_schema": {"type": "object"}} for name in TOOL_NAMES
]
BETA_TOOLS: Final[list[BetaToolParam]] = [
    {"name": name, "description": f"The {name} tool.", "input_schema": {"type": "object"}} for name in TOOL_NAMES
]
OPENAI_TOOLS: Final[list[dict[str, Any]]] = [
    {
        "type": "function",
        "function": {"name": name, "description": f"The {name} tool.", "parameters": {"type": "object"}},
    }
    for name in TOOL_NAMES
]
POLICIES: Final = ("otel-toolturn", "turnsafe", "LiteLLM modify_params", "earlier move-up rule", "unrepaired, valid")
REFERENCE: Final = "unrepaired, valid"
FULL_EPISODES: Final = ("clean",) * 6 + ("interrupted",) * 4 + ("reissued",) * 3 + ("retry",) * 3 + ("duplicate",) * 4
QUICK_EPISODES: Final = ("clean", "interrupted", "duplicate", "clean")
Message = dict[str, Any]


# --- the session ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Say:
    """The user types ``text``."""

    text: str


@dataclass(frozen=True, slots=True)
class Ask:
    """A request over the transcript, answered with ``turn``; ``lost``: its first reply never arrives, it is resent."""

    turn: ScriptedTurn
    lost: bool = False


@dataclass(frozen=True, slots=True)
class Record:
    """A tool's result lands in the transcript (only for a call the agent received)."""

    call_id: str
    content: str


Step = Say | Ask | Record
Episode = tuple[Step, ...]


def session(*, quick: bool, valid: bool, seed: int = SEED) -> list[Episode]:
    """The seeded session (module docstring); ``valid``: the same session recorded without breaking a rule.

    Both variants draw the same random numbers, so they ask the same questions and make the same calls.
    """
    rng = random.Random(seed)
    kinds = list(QUICK_EPISODES if quick else FULL_EPISODES)
    if not quick:
        middle = kinds[1:-1]
        rng.shuffle(middle)
        kinds = [kinds[0], *middle, "clean"]
    pending: list[tuple[int, Record]] = []
    episodes: list[Episode] = []
    last = len(kinds) - 1
    for n, kind in enumerate(kinds):
        steps: list[Step] = [r for due, r in pending if due <= n]
        pending = [(due, r) for due, r in pending if due > n]
        calls = [
            ScriptedCall(name=rng.choice(TOOL_NAMES), arguments={"path": f"src/module_{n}_{k}.py"}, call_id=_id(n, k))
            for k in range(rng.randint(2, 3) if kind in ("interrupted", "reissued") else rng.randint(1, 3))
        ]
        outputs = [_output(rng, call.call_id or "", 1) for call in calls]
        steps += [Say(_question(rng, n)), Ask(ScriptedTurn(text="Let me look.", calls=tuple(calls)))]
        if kind in ("clean", "retry", "duplicate"):
            steps += [Record(c.call_id or "", out) for c, out in zip(calls, outputs, strict=True)]
            steps.append(Ask(ScriptedTurn(text=_answer(rng, n)), lost=kind == "retry"))
            second = Record(calls[0].call_id or "", _output(rng, calls[0].call_id or "", 2))
            if kind == "duplicate" and not valid:
                pending.append((min(n + 2, last), second))
            episodes.append(tuple(steps))
            continue
        fast_recorded = rng.random() < 0.5
        *fast, slow = zip(calls, outputs, strict=True)
        steps += [Record(c.call_id or "", out) for c, out in fast if fast_recorded or valid]
        late, due = Record(slow[0].call_id or "", slow[1]), min(n + rng.randint(1, 2), last)
        if valid:
            steps.append(late)
        else:
            pending.append((due, late))
        steps.append(Say("continue"))
        if kind == "interrupted":
            steps.append(Ask(ScriptedTurn(text="Carrying on without the slow result.")))
        else:
            again = ScriptedCall(name=slow[0].name, arguments=slow[0].arguments, call_id=_id(n, 9))
            steps += [
                Ask(ScriptedTurn(text="Running the slow one again.", calls=(again,))),
                Record(again.call_id or "", _output(rng, again.call_id or "", 1)),
                Ask(ScriptedTurn(text=_answer(rng, n))),
            ]
        episodes.append(tuple(steps))
    if pending:
        raise AssertionError(f"results scheduled past the session's end: {pending!r}")
    return episodes


def _id(episode: int, k: int) -> str:
    return f"toolu_{episode:02d}_{k}"


def _question(rng: random.Random, n: int) -> str:
    topic = rng.choice(("the config loader", "the retry logic", "the CLI flags", "the cache layer", "the exporter"))
    return f"Task {n}: look into {topic} and fix what the failing test points at. " + "Keep the change small. " * 3


def _answer(rng: random.Random, n: int) -> str:
    return f"Done with task {n}: " + rng.choice(("one line changed", "two tests added", "a guard added")) + "."


def _output(rng: random.Random, call_id: str, attempt: int) -> str:
    """A tool's output, opening with a marker unique in the session (``[call_id #attempt]``)."""
    lines = [f"line {k}: value = {rng.randint(0, 10_000)}" for k in range(rng.randint(8, 24))]
    return f"[{call_id} #{attempt}] " + "\n".join(lines)


# --- the agents -------------------------------------------------------------------------------------
class Agent(Protocol):
    """An agent's transcript and its one way to send it."""

    recorded: list[str]

    def say(self, text: str) -> None:
        """Append the user's text."""

    def record(self, call_id: str, content: str) -> None:
        """Append a tool's result, when the agent received the call; else nothing."""

    def send(self) -> object | None:
        """Send the transcript; the reply, or ``None`` when the provider refused it (HTTP 400)."""

    def keep(self, reply: object) -> None:
        """Append ``reply`` to the transcript as returned."""


@dataclass(kw_only=True, slots=True)
class SdkAgent:
    """An Anthropic-format transcript sent through the anthropic SDK after ``policy``."""

    client: anthropic.Anthropic
    policy: Callable[[list[Message]], list[Message]]
    drop: bool
    transcript: list[Message] = field(default_factory=list)
    calls: set[str] = field(default_factory=set)
    recorded: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        """Append the user's text as its own message."""
        self.transcript.append({"role": "user", "content": text})

    def record(self, call_id: str, content: str) -> None:
        """Add the result to the results message the transcript ends with, or open a new one."""
        if call_id not in self.calls:
            return
        self.recorded.append(content)
        block = {"type": "tool_result", "tool_use_id": call_id, "content": content}
        last = self.transcript[-1]
        blocks = last["content"]
        if last["role"] == "user" and isinstance(blocks, list) and all(b["type"] == "tool_result" for b in blocks):
            self.transcript[-1] = {**last, "content": [*blocks, block]}
        else:
            self.transcript.append({"role": "user", "content": [block]})

    def send(self) -> object | None:
        """One ``messages.create`` (``beta.messages.create`` with ``drop_block``) over the policy's request."""
        request: list[Any] = self.policy(self.transcript)
        try:
            if self.drop:
                beta = self.client.beta.messages.create(
                    model=MODEL,
                    max_tokens=2048,
                    system=SYSTEM,
                    tools=BETA_TOOLS,
                    messages=request,
                    thinking=DROP,
                    betas=[BETA],
                )
                return [b.model_dump(mode="json", exclude_none=True) for b in beta.content]
            reply = self.client.messages.create(
                model=MODEL,
                max_tokens=2048,
                system=SYSTEM,
                tools=TOOLS,
                messages=request,
                thinking=THINK,
            )
        except anthropic.BadRequestError:
            return None
        return [b.model_dump(mode="json", exclude_none=True) for b in reply.content]

    def keep(self, reply: object) -> None:
        """Append the reply's blocks as one assistant message; remember its calls."""
        if not isinstance(reply, list):
            raise TypeError(f"expected the reply's blocks as a list, got {type(reply).__name__}")
        self.transcript.append({"role": "assistant", "content": reply})
        self.calls.update(str(b["id"]) for b in reply if b.get("type") == "tool_use")


@dataclass(kw_only=True, slots=True)
class LiteLLMAgent:
    """An OpenAI-format transcript sent through ``litellm.completion`` with ``modify_params=True``."""

    base_url: str
    drop: bool
    transcript: list[Any] = field(default_factory=lambda: [{"role": "system", "content": SYSTEM}])
    calls: set[str] = field(default_factory=set)
    recorded: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        """Append a user message."""
        self.transcript.append({"role": "user", "content": text})

    def record(self, call_id: str, content: str) -> None:
        """Append a ``tool`` message, when the agent received the call."""
        if call_id not in self.calls:
            return
        self.recorded.append(content)
        self.transcript.append({"role": "tool", "tool_call_id": call_id, "content": content})

    def send(self) -> object | None:
        """One ``litellm.completion`` on the simulator; ``None`` on LiteLLM's ``BadRequestError``."""
        import litellm  # noqa: PLC0415 - optional, and slow to import

        extra = {"extra_headers": {"anthropic-beta": BETA}} if self.drop else {}
        try:
            response = litellm.completion(
                model=f"anthropic/{MODEL}",
                api_base=self.base_url,
                api_key="bench-key-not-used",
                messages=self.transcript,
                tools=OPENAI_TOOLS,
                thinking=DROP if self.drop else THINK,
                max_tokens=2048,
                num_retries=0,
                **extra,
            )
        except litellm.exceptions.BadRequestError:
            return None
        message: object = response.choices[0].message
        return message

    def keep(self, reply: object) -> None:
        """Append the returned message object; remember its calls."""
        self.transcript.append(reply)
        self.calls.update(str(c.id) for c in getattr(reply, "tool_calls", None) or ())


def play(agent: Agent, sim: Simulator, episodes: Sequence[Episode]) -> None:
    """Live through ``episodes``: a refused request skips the rest of its episode but the tools' results."""
    for episode in episodes:
        refused = False
        for step in episode:
            if isinstance(step, Record):
                agent.record(step.call_id, step.content)
            elif refused:
                continue
            elif isinstance(step, Say):
                agent.say(step.text)
            else:
                reply: object | None = None
                for _ in range(2 if step.lost else 1):
                    sim.enqueue(step.turn)
                    reply = agent.send()
                    if reply is None:
                        sim.clear_turns()  # a refused request takes no scripted turn
                        break
                if reply is None:
                    refused = True
                else:
                    agent.keep(reply)


# --- the policies -----------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class Measure:
    """One policy's run of the session in one mode, by the simulator's counts."""

    requests: int
    refused: int
    prefix_failures: int
    thinking_dropped: int
    prompt_tokens: int
    cached_tokens: int
    lost: int

    @property
    def cache_share(self) -> float:
        """Cached ÷ prompt tokens over the served requests."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def unavailable(policy: str) -> str | None:
    """Why ``policy`` cannot run here (its package is not installed), else ``None``."""
    if policy == "turnsafe":
        return TURNSAFE_MISSING
    if policy == "LiteLLM modify_params":
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")  # LiteLLM's tables from the package, not the network
        try:
            import litellm  # noqa: PLC0415
        except ImportError:
            return "litellm is not installed (pip install otel-toolturn[bench])"
        litellm.suppress_debug_info = True
    return None


def measure(policy: str, *, quick: bool, drop: bool) -> Measure:
    """Play the session under ``policy`` against a fresh simulator and read its counts."""
    episodes = session(quick=quick, valid=policy == REFERENCE)
    with Simulator() as sim:
        agent: Agent
        if policy == "LiteLLM modify_params":
            agent = LiteLLMAgent(base_url=sim.base_url, drop=drop)
            with _modify_params():
                play(agent, sim, episodes)
        else:
            with anthropic.Anthropic(base_url=sim.base_url, api_key="bench-key-not-used", max_retries=0) as client:
                agent = SdkAgent(client=client, policy=_policy(policy), drop=drop)
                with _instrumented(on=policy == "otel-toolturn"):
                    play(agent, sim, episodes)
        summary = sim.summary(LANE)
        served = [json.dumps(r.body) for r in sim.requests if r.status == 200]
    return Measure(
        requests=summary.served + summary.refused,
        refused=summary.refused,
        prefix_failures=summary.binding_refusals,
        thinking_dropped=summary.thinking_dropped,
        prompt_tokens=summary.prompt_tokens,
        cached_tokens=summary.cached_tokens,
        lost=sum(not any(_marker(content) in body for body in served) for content in agent.recorded),
    )


def _policy(policy: str) -> Callable[[list[Message]], list[Message]]:
    """What the agent hands the SDK: its transcript, or a peer's repair of it."""
    if policy == "turnsafe":
        return lambda messages: list(turnsafe.repair(messages, "anthropic"))
    if policy == "earlier move-up rule":
        return move_up
    return list


@contextmanager
def _instrumented(*, on: bool) -> Iterator[None]:
    """``otel_toolturn.init`` in repair mode on in-memory providers for the block (nothing when not ``on``)."""
    if not on:
        yield
        return
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    logger_provider = LoggerProvider()
    otel_toolturn.init(
        mode="repair", tracer_provider=tracer_provider, meter_provider=meter_provider, logger_provider=logger_provider
    )
    try:
        yield
    finally:
        otel_toolturn.shutdown()
        for provider in (tracer_provider, meter_provider, logger_provider):
            provider.shutdown()


@contextmanager
def _modify_params() -> Iterator[None]:
    """LiteLLM's ``litellm.modify_params = True`` for the block (a per-call keyword goes to the provider)."""
    import litellm  # noqa: PLC0415 - optional, and slow to import

    before = litellm.modify_params
    litellm.modify_params = True
    try:
        yield
    finally:
        litellm.modify_params = before


def _marker(content: str) -> str:
    """The unique marker a result's content opens with."""
    return content.split("]", 1)[0] + "]"


# --- the table --------------------------------------------------------------------------------------
def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the short session")
    args = parser.parse_args()
    rows: dict[str, tuple[Measure, Measure]] = {}
    missing: dict[str, str] = {}
    for policy in POLICIES:
        reason = unavailable(policy)
        if reason is not None:
            missing[policy] = reason
            continue
        rows[policy] = (measure(policy, quick=args.quick, drop=False), measure(policy, quick=args.quick, drop=True))
    reference = rows[REFERENCE]
    print(f"One Anthropic session, seed {SEED}, thinking on{' (--quick)' if args.quick else ''}.")
    header = (
        f"{'policy':24} {'requests':>8} {'refused':>8} {'prefix fails':>12} {'cache':>7} {'÷ valid':>8} "
        f"{'lost':>5} | {'drop_block: dropped':>19} {'cache':>7} {'÷ valid':>8}"
    )
    print(header)
    print("-" * len(header))
    for policy in POLICIES:
        if policy in missing:
            print(f"{policy:24} n/a: {missing[policy]}")
            continue
        refuse, drop = rows[policy]
        print(
            f"{policy:24} {refuse.requests:>8} {refuse.refused:>8} {refuse.prefix_failures:>12} "
            f"{refuse.cache_share:>7.1%} {_ratio(refuse, reference[0]):>8} {refuse.lost:>5} | "
            f"{drop.thinking_dropped:>19} {drop.cache_share:>7.1%} {_ratio(drop, reference[1]):>8}"
        )


def _ratio(row: Measure, reference: Measure) -> str:
    return f"{row.cache_share / reference.cache_share:.3f}x" if reference.cache_share else "n/a"


if __name__ == "__main__":
    main()
