"""Append-stability: one long agent session, in every lane, against the provider simulator, per request policy.

The session: a coding agent talks to the embedded provider simulator (``otel_toolturn.simulator``)
through a real SDK and appends every reply as returned. It is seeded (``SEED``), the same in every
lane, and made of episodes: ordinary clean tool rounds; parallel calls interrupted (Ctrl-C: the
slow call gets no result, sometimes the fast one neither; the user types "continue"; the model
answers over the close, sometimes by re-issuing the slow call under a new id) whose slow tool's
real result lands one or two episodes later, after an assistant message; timeouts (the tool runner
gives up on a whole round and the agent asks the model again at once, with no result and no user
turn between, so the model answers right over its own calls; the real results land one or two
episodes later); retries (the reply to a request is lost and the same request is resent); late
duplicates (a second, different result for a call recorded two episodes later). A request the
provider refuses (any 400) fails like an agent's does: nothing is appended, the rest of its episode
is skipped, and the session goes on with the next user message; results of tools already running
still land. 52 requests (``--quick``: 10).

The lanes, each agent keeping its transcript as that SDK's users do (``bench._stability_agents``):

- ``anthropic.messages``: the ``anthropic`` SDK with thinking on; every reply's signed thinking
  block is kept and sent back, so the simulator's prefix check of signed thinking applies;
- ``openai.responses``: the ``openai`` SDK's ``responses.create``; the response's ``output`` items
  are appended as returned, results as ``function_call_output`` items;
- ``gemini.generate_content``: the ``google-genai`` SDK's ``models.generate_content``; the
  candidate's content is appended as returned (its first call signed), results as user contents of
  ``function_response`` parts.

Policies, each on its own simulator (fresh cache and counts), the same session:

- ``otel-toolturn`` (every lane): the product path: ``otel_toolturn.init(mode="repair")`` with
  in-memory tracer, meter and logger providers; the agent hands its transcript to the patched SDK
  as it is;
- ``turnsafe`` (Anthropic): ``turnsafe.repair(transcript, "anthropic")`` with its defaults (its
  ``thinking="strip_after_change"`` option removes the thinking after a change instead);
- ``LiteLLM modify_params`` (Anthropic): LiteLLM's own client path, ``litellm.completion(
  model="anthropic/…", api_base=<simulator>, thinking=…)`` with ``litellm.modify_params = True``
  (its sanitiser reads that setting; a ``modify_params=True`` keyword is sent on to the provider)
  over an OpenAI-format transcript; the agent appends the returned message (its
  ``thinking_blocks`` included) and ``tool`` messages, as LiteLLM users do (the row says so when
  litellm is not installed);
- ``earlier move-up rule`` (Anthropic): ``bench._move_up.move_up``, what the law did before it was
  append-stable;
- ``unrepaired`` (every lane): the session's transcript sent as it is;
- ``unrepaired, valid`` (every lane): the reference: the same session recorded by an agent that
  never breaks the rules (every result in its batch, no late results, no duplicates), sent as it is.

Columns: requests sent; refused: answered 400 by the simulator, which refuses with the library's
own ``validate`` (Anthropic also with the prefix check of signed thinking: ``prefix fails``), so
it is the simulator's verdict, not a provider's; prefix kept: the share of served requests (after
the first) whose wire list (the body's ``messages``, ``input`` or ``contents`` as the simulator
received it) starts with the previous served request's; cache: cached ÷ prompt tokens over the
served requests (``Simulator.summary``: the simulator's prefix cache per lane), and that share ÷
the reference's; lost: results the agent recorded whose content no served request carried. On
Anthropic each policy runs a second time with
``thinking.block_binding.prefix_mismatch_behavior: "drop_block"`` (beta header set): there the
provider drops stale thinking instead of refusing, so ``dropped`` counts the thinking blocks it
dropped, summed over the session's requests (the agent keeps them in its history, as agents do, so
a stale block is dropped again from every later request), and the refused, prefix kept and cache
columns are read again (a request refused there broke a tool-turn rule).
Everything is deterministic: the figures are the same on every run.

Run: ``python -m bench.stability`` (``--quick`` for the short session, ``--lane`` for one lane).
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

import anthropic
import openai
from google import genai
from google.genai import types as genai_types
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_toolturn
from bench._move_up import move_up
from bench._stability_agents import (
    TOOL_NAMES,
    Agent,
    AnthropicAgent,
    GeminiAgent,
    LiteLLMAgent,
    Policy,
    ResponsesAgent,
)
from otel_toolturn import Lane
from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator

try:
    import turnsafe

    TURNSAFE_MISSING: str | None = None
except ImportError:  # the peer is an optional bench dependency
    TURNSAFE_MISSING = "turnsafe is not installed"

SEED: Final = 11
REFERENCE: Final = "unrepaired, valid"
POLICIES: Final[Mapping[Lane, tuple[str, ...]]] = {
    "anthropic.messages": (
        "otel-toolturn",
        "turnsafe",
        "LiteLLM modify_params",
        "earlier move-up rule",
        "unrepaired",
        REFERENCE,
    ),
    "openai.responses": ("otel-toolturn", "unrepaired", REFERENCE),
    "gemini.generate_content": ("otel-toolturn", "unrepaired", REFERENCE),
}
"""The policies each lane's table compares (the lanes the bench plays, in order)."""
WIRE_LIST: Final[Mapping[Lane, str]] = {
    "anthropic.messages": "messages",
    "openai.responses": "input",
    "gemini.generate_content": "contents",
}
"""The request body's field holding the lane's transcript."""
FULL_EPISODES: Final = (
    ("clean",) * 6 + ("interrupted",) * 4 + ("timeout",) * 3 + ("reissued",) * 3 + ("retry",) * 3 + ("duplicate",) * 4
)
QUICK_EPISODES: Final = ("clean", "interrupted", "timeout", "duplicate", "clean")


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
        if kind == "timeout":
            due = min(n + rng.randint(1, 2), last)
            results = [Record(c.call_id or "", out) for c, out in zip(calls, outputs, strict=True)]
            if valid:
                steps += results
            else:
                pending += [(due, r) for r in results]
            steps.append(Ask(ScriptedTurn(text="The tools timed out; answering from what I have read so far.")))
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
    return f"call_{episode:02d}_{k}"


def _question(rng: random.Random, n: int) -> str:
    topic = rng.choice(("the config loader", "the retry logic", "the CLI flags", "the cache layer", "the exporter"))
    return f"Task {n}: look into {topic} and fix what the failing test points at. " + "Keep the change small. " * 3


def _answer(rng: random.Random, n: int) -> str:
    return f"Done with task {n}: " + rng.choice(("one line changed", "two tests added", "a guard added")) + "."


def _output(rng: random.Random, call_id: str, attempt: int) -> str:
    """A tool's output, opening with a marker unique in the session (``[call_id #attempt]``)."""
    lines = [f"line {k}: value = {rng.randint(0, 10_000)}" for k in range(rng.randint(8, 24))]
    return f"[{call_id} #{attempt}] " + "\n".join(lines)


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
    """One policy's run of the session in one lane and mode, by the simulator's counts and records."""

    requests: int
    refused: int
    prefix_failures: int
    thinking_dropped: int
    prompt_tokens: int
    cached_tokens: int
    followers: int
    kept: int
    lost: int

    @property
    def cache_share(self) -> float:
        """Cached ÷ prompt tokens over the served requests."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    @property
    def prefix_kept(self) -> float:
        """The share of the served requests after the first whose wire list starts with the one before."""
        return self.kept / self.followers if self.followers else 1.0


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


def measure(policy: str, *, lane: Lane, quick: bool, drop: bool) -> Measure:
    """Play the session under ``policy`` in ``lane`` against a fresh simulator and read its counts."""
    if policy not in POLICIES.get(lane, ()):
        raise ValueError(f"the policy {policy!r} is not played in the lane {lane!r}; expected one of {POLICIES!r}")
    if drop and lane != "anthropic.messages":
        raise ValueError(f"drop_block is Anthropic's setting; the lane {lane!r} has none")
    episodes = session(quick=quick, valid=policy == REFERENCE)
    with Simulator() as sim:
        with _agent(policy, lane=lane, sim=sim, drop=drop) as agent, _instrumented(on=policy == "otel-toolturn"):
            play(agent, sim, episodes)
        summary = sim.summary(lane)
        served = [r.body for r in sim.requests if r.status == 200 and r.lane == lane]
    texts = [json.dumps(body) for body in served]
    wire = [_wire_list(body, lane) for body in served]
    return Measure(
        requests=summary.served + summary.refused,
        refused=summary.refused,
        prefix_failures=summary.binding_refusals,
        thinking_dropped=summary.thinking_dropped,
        prompt_tokens=summary.prompt_tokens,
        cached_tokens=summary.cached_tokens,
        followers=max(len(wire) - 1, 0),
        kept=sum(later[: len(earlier)] == earlier for earlier, later in pairwise(wire)),
        lost=sum(not any(_marker(content) in text for text in texts) for content in agent.recorded),
    )


@contextmanager
def _agent(policy: str, *, lane: Lane, sim: Simulator, drop: bool) -> Iterator[Agent]:
    """The lane's agent on ``sim`` under ``policy``, its client closed after the block."""
    if policy == "LiteLLM modify_params":
        with _modify_params():
            yield LiteLLMAgent(base_url=sim.base_url, drop=drop)
        return
    send = _policy(policy)
    if lane == "anthropic.messages":
        with anthropic.Anthropic(base_url=sim.base_url, api_key="bench-key-not-used", max_retries=0) as client:
            yield AnthropicAgent(client=client, policy=send, drop=drop)
    elif lane == "openai.responses":
        with openai.OpenAI(base_url=sim.openai_base_url, api_key="bench-key-not-used", max_retries=0) as openai_client:
            yield ResponsesAgent(client=openai_client, policy=send)
    elif lane == "gemini.generate_content":
        options = genai_types.HttpOptions(base_url=sim.base_url, retry_options=genai_types.HttpRetryOptions(attempts=1))
        with genai.Client(api_key="bench-key-not-used", http_options=options) as genai_client:
            yield GeminiAgent(client=genai_client, policy=send)
    else:
        raise ValueError(f"the bench plays no session in the lane {lane!r}; expected one of {list(POLICIES)!r}")


def _policy(policy: str) -> Policy:
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


def _wire_list(body: object, lane: Lane) -> list[object]:
    """The transcript a served request carried, as the simulator received it."""
    items = body.get(WIRE_LIST[lane]) if isinstance(body, dict) else None
    if not isinstance(items, list):
        raise TypeError(f"expected the request's {WIRE_LIST[lane]!r} as a list, got {type(items).__name__}")
    return items


def _marker(content: str) -> str:
    """The unique marker a result's content opens with."""
    return content.split("]", 1)[0] + "]"


# --- the tables -------------------------------------------------------------------------------------
LEGEND: Final = (
    "refused: answered 400 by the simulator, which refuses with otel-toolturn's own validate (Anthropic also with "
    "the prefix check of signed thinking: prefix fails), the simulator's verdict, not a provider's; prefix kept: "
    "served requests after the first whose wire list starts with the previous served request's; cache: cached ÷ "
    "prompt tokens (the simulator's prefix cache), ÷ valid: that share ÷ the reference's; lost: recorded results "
    "no served request carried."
)


def table(lane: Lane, *, quick: bool) -> list[str]:
    """The lines of one lane's table: every policy of the lane, run on the same session."""
    anthropic_lane = lane == "anthropic.messages"
    modes = (False, True) if anthropic_lane else (False,)
    rows: dict[str, tuple[Measure, ...]] = {}
    missing: dict[str, str] = {}
    for policy in POLICIES[lane]:
        reason = unavailable(policy)
        if reason is not None:
            missing[policy] = reason
            continue
        rows[policy] = tuple(measure(policy, lane=lane, quick=quick, drop=drop) for drop in modes)
    reference = rows[REFERENCE]
    extra = " with signed thinking" if anthropic_lane else ""
    fails_head = f" {'prefix fails':>12}" if anthropic_lane else ""
    header = (
        f"{'policy':24} {'requests':>8} {'refused':>8}{fails_head} "
        f"{'prefix kept':>11} {'cache':>7} {'÷ valid':>8} {'lost':>5}"
    )
    if anthropic_lane:
        header += f" | {'drop_block: refused':>19} {'dropped':>7} {'prefix kept':>11} {'cache':>7} {'÷ valid':>8}"
    lines = [f"{lane}: seed {SEED}{extra}{' (--quick)' if quick else ''}.", header, "-" * len(header)]
    for policy in POLICIES[lane]:
        if policy in missing:
            lines.append(f"{policy:24} n/a: {missing[policy]}")
            continue
        row = rows[policy][0]
        fails = f" {row.prefix_failures:>12}" if anthropic_lane else ""
        line = (
            f"{policy:24} {row.requests:>8} {row.refused:>8}{fails} {row.prefix_kept:>11.1%} "
            f"{row.cache_share:>7.1%} {_ratio(row, reference[0]):>8} {row.lost:>5}"
        )
        if anthropic_lane:
            drop = rows[policy][1]
            line += (
                f" | {drop.refused:>19} {drop.thinking_dropped:>7} {drop.prefix_kept:>11.1%} {drop.cache_share:>7.1%} "
                f"{_ratio(drop, reference[1]):>8}"
            )
        lines.append(line)
    return lines


def main() -> None:
    """Print one table per lane."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the short session")
    parser.add_argument("--lane", action="append", choices=list(POLICIES), help="only this lane (repeatable)")
    args = parser.parse_args()
    lanes: list[Lane] = args.lane or list(POLICIES)
    print(LEGEND)
    for lane in lanes:
        print()
        print("\n".join(table(lane, quick=args.quick)))


def _ratio(row: Measure, reference: Measure) -> str:
    return f"{row.cache_share / reference.cache_share:.3f}x" if reference.cache_share else "n/a"


if __name__ == "__main__":
    main()
