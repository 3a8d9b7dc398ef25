"""Fuzz and soak the law: N generated transcripts per lane and flavour, counted by what went wrong.

Transcripts (``bench._fuzz_make``): ``random`` (any sequence of the lane's items from small id pools,
so every break occurs and ids are reused across turns), ``near`` (a clean session with one to three
named faults: a result dropped, late, split over two messages or duplicated, an item dropped, an
orphan result, a user message between, a call left unanswered, the very same object twice, an
assistant message cut in two as streamed chunks; Gemini: a call's thought signature dropped;
Responses: a call item with another call item's ``id``; Anthropic and Bedrock: a result nested in a
result's content), ``malformed`` (items of the wrong type, fields missing or of the wrong type, mixed in).
Gemini transcripts are drawn in one of four spellings each: REST camelCase dicts, the SDK's
snake_case dicts, ``google.genai.types.Content`` objects, or mixed (each content in one of the
three); its rows are split by spelling. Every text, call argument and result payload is a unique
``<…>`` marker.

Each transcript is checked, and counted under the first outcome that applies:

- ``refused``: the law raised ``ToolTurnInputError`` (typed, not a failure); anything else it
  raises is an ``internal error``;
- ``mutated``: the input is not left exactly as it was;
- ``invalid output``: the view breaks a tool-turn rule of the lane's ``validate``, or a rule of
  ``PASSED_THROUGH`` more often than the input did;
- ``non-idempotent``: a second pass does not return the very same list with no repairs;
- ``unreported loss``: a marker of the input is not in the view and no lossy repair was reported;
- on the wire (``--no-wire`` leaves these out): the view and the input are sent through each SDK's
  own client (``anthropic``, ``openai`` Chat and Responses, ``google-genai``'s
  ``models.generate_content``, botocore's ``bedrock-runtime`` ``converse`` with fake credentials) over a
  mock transport (botocore: a ``before-send`` hook), and the request bytes it sends are read back.
  ``unsendable``: the SDK refuses to build the view's request but builds the input's;
  ``warned on the wire``: the SDK warns while serialising the view but not the input (a part it does
  not recognise in a typed object); ``lost on the wire``: a marker or an interrupted close of the view
  is not in the bytes, unless the SDK's bytes for the input lack it as well. When the SDK refuses
  the input itself, only what the law wrote is judged, and only for loss.

A view that is the input itself is what the caller sends, and is not sent again. Otherwise the
items the law wrote (those of the view that are not the caller's own objects) are sent first: each
SDK builds a message's bytes from that message alone, so when they arrive whole, unwarned, with every
token, the whole view's request holds them the same way; only when they do not are the whole view
and the whole input sent and compared.

The dialects of the Chat lane (``DIALECTS``: Mistral's, Ollama's, DeepSeek's, Cohere's) have rows of
their own, ``<flavour> (<dialect>)``: Chat transcripts with the dialect's features (Mistral: ids it
accepts mixed with ids it refuses; Ollama: calls without ids, answered by ``tool_name``; DeepSeek: most
assistant messages with a ``reasoning_content`` marker), decided and checked in the dialect (its
``validate``; DeepSeek's ``missing_reasoning_content`` is a rule the law cannot repair, passed through).
On the wire they go through the openai SDK's Chat client, as a client pointed at the provider's base URL
sends them; the mistralai, ollama and cohere SDKs are not in the fuzz.

Run: ``python -m bench.fuzz`` (100,000 per lane and flavour: a maintainer's soak, about two hours of
CPU with the wire check, twenty minutes without), or ``--count N``, ``--lane LANE``, ``--flavour
FLAVOUR``, ``--no-wire``, ``--examples`` (the smallest transcript, by its JSON, of each failing row
and outcome, with its faults). It prints the outcomes per lane and generator, each lane's CPU seconds
per 1,000 transcripts, and the failures. The test suite (``tests/test_bench.py``) runs a
deterministic sample, and the same generators under hypothesis, so that a failure shrinks.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
import time
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

from bench._fuzz_make import FLAVOURS, SPELLINGS, Flavour, Transcript, transcript
from otel_toolturn import (
    DIALECTS,
    INTERRUPTED_RESULT_TEXT,
    LANES,
    Dialect,
    Lane,
    ToolTurnInputError,
    ensure_tool_turn_invariants,
    validate,
)
from otel_toolturn.lanes import DIALECT_ADAPTERS

Outcome = Literal[
    "checked",
    "refused",
    "internal error",
    "invalid output",
    "non-idempotent",
    "unreported loss",
    "mutated",
    "unsendable",
    "warned on the wire",
    "lost on the wire",
]
OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)
"""What a run counts: ``checked`` and ``refused`` (typed) are fine; the rest are failures."""
FAILURES: Final[tuple[Outcome, ...]] = OUTCOMES[2:]
WIRE_FAILURES: Final[tuple[Outcome, ...]] = ("unsendable", "warned on the wire", "lost on the wire")
"""The failures only the wire check finds."""

CONTENT_RULES: Final = frozenset({"empty_message", "empty_text", "empty_parts"})
"""Rules about content, not tool turns: a violation of them the caller sent passes through as sent."""
UNREPAIRED_RULES: Final = frozenset(
    {"call_turn_position", "roles_not_alternating", "first_message_not_user", "missing_reasoning_content"}
)
"""Tool-turn rules the law documents it does not repair: Gemini's call turn at the start of ``contents``
(the law would have to invent a user turn); Bedrock's two messages of one role in a row, or an assistant
message first, that the caller sent (the law merges only what it writes). A violation of them the caller
sent passes through as sent."""
PASSED_THROUGH: Final = CONTENT_RULES | UNREPAIRED_RULES
"""The rules the law's view may break, each no more often than the input did."""

_MARKER: Final = re.compile(r"<[a-z]+\d+>")
_CLOSE: Final = json.dumps(INTERRUPTED_RESULT_TEXT)[1:-1]
"""The interrupted close as JSON writes it inside a string."""
MODEL: Final = "model-fuzz"


def tokens(value: object) -> Counter[str]:
    """The markers and interrupted closes in ``value`` (plain data or SDK objects), each with its count."""
    text = json.dumps(value, default=_plain)
    found = Counter(_MARKER.findall(text))
    if closes := text.count(_CLOSE):
        found[INTERRUPTED_RESULT_TEXT] = closes
    return found


def _plain(value: object) -> object:
    """A value ``json`` cannot write, as it can: a pydantic model's fields (its ``str`` abbreviates deep values)."""
    model_dump = getattr(value, "model_dump", None)
    return model_dump(exclude_none=True, warnings=False) if callable(model_dump) else str(value)


@dataclass(frozen=True, kw_only=True)
class Sent:
    """What an SDK made of a list: the request body it sent (decoded), or the error it raised; and if it warned."""

    body: object = None
    refusal: str | None = None
    warned: bool = False


class Sender:
    """Each lane's SDK client over one mock transport (``tests.instrument.wire.Wire``), sending lists as they are."""

    def __init__(self) -> None:
        from tests.instrument.wire import Wire  # noqa: PLC0415 - the SDKs load only for the wire check

        self.wire = Wire()
        self.clients: dict[str, Any] = {
            "anthropic": self.wire.anthropic(open_telemetry={"traces": {"enabled": False}}),
            "openai": self.wire.openai(),
            "gemini": self.wire.gemini(),
            "bedrock": bedrock_client(self.wire.bodies),
        }

    def close(self) -> None:
        """Closes each client and its HTTP client."""
        for client in self.clients.values():
            client.close()

    def send(self, lane: Lane, items: list[object]) -> Sent:
        """Sends ``items`` as the request's whole message list of ``lane``; what went onto the wire."""
        clients, bodies = self.clients, self.wire.bodies
        bodies.clear()
        self.wire.headers.clear()
        refusal = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                if lane == "anthropic.messages":
                    clients["anthropic"].messages.create(model=MODEL, max_tokens=8, messages=items)
                elif lane == "openai.chat_completions":
                    clients["openai"].chat.completions.create(model=MODEL, messages=items)
                elif lane == "openai.responses":
                    clients["openai"].responses.create(model=MODEL, input=items)
                elif lane == "bedrock.converse":
                    clients["bedrock"].converse(modelId=MODEL, messages=items)
                else:
                    clients["gemini"].models.generate_content(model=MODEL, contents=items)
            except Exception as error:  # the SDK's own refusal of the list, whatever its type
                refusal = f"{type(error).__name__}: {error}"
        if not bodies:
            return Sent(refusal=refusal or "nothing sent", warned=bool(caught))
        return Sent(body=json.loads(bodies[-1]), warned=bool(caught))


_CONVERSE_ANSWER: Final = json.dumps(
    {
        "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "metrics": {"latencyMs": 1},
    }
).encode()


class _Canned:
    """A raw HTTP body botocore reads a response from."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: object) -> Iterator[bytes]:
        yield self.body


def bedrock_client(bodies: list[bytes]) -> Any:  # noqa: ANN401 - botocore builds its client classes at run time
    """A botocore ``bedrock-runtime`` client that sends nothing (fake credentials, no network).

    Each ``converse`` body it would send is appended to ``bodies``, and a canned answer comes back.
    """
    import botocore.session  # noqa: PLC0415 - botocore loads only for the wire check
    from botocore.awsrequest import AWSResponse  # noqa: PLC0415

    client = botocore.session.get_session().create_client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="fuzz",
        aws_secret_access_key="fuzz",  # noqa: S106 - a fake
    )

    def capture(request: Any, **_: object) -> AWSResponse:  # noqa: ANN401 - botocore's prepared request
        bodies.append(request.body)
        return AWSResponse(request.url, 200, {"content-type": "application/json"}, _Canned(_CONVERSE_ANSWER))

    client.meta.events.register("before-send.bedrock-runtime.Converse", capture)
    return client


def wire_outcome(lane: Lane, items: list[object], view: Sequence[object] | str, sender: Sender) -> Outcome:
    """What the SDK puts on the wire for ``view``, judged against what it puts there for ``items`` (the input)."""
    if view is items or isinstance(view, str):
        return "checked"
    mine = {id(item) for item in items}
    written = [item for item in view if id(item) not in mine]
    if not written:
        return "checked"
    alone = sender.send(lane, written)
    if alone.refusal is None and not alone.warned and not tokens(written) - tokens(alone.body):
        return "checked"
    caller = sender.send(lane, items)
    if caller.refusal is not None:
        return "lost on the wire" if alone.refusal is None and tokens(written) - tokens(alone.body) else "checked"
    whole = sender.send(lane, list(view))
    if whole.refusal is not None:
        return "unsendable"
    if whole.warned and not caller.warned:
        return "warned on the wire"
    dropped_anyway = tokens(items) - tokens(caller.body)
    if (tokens(view) - tokens(whole.body)) - dropped_anyway:
        return "lost on the wire"
    return "checked"


def check(lane: Lane, items: list[object], *, sender: Sender | None = None, dialect: Dialect | None = None) -> Outcome:
    """The outcome of one transcript (see ``OUTCOMES``); ``sender``: also what the SDK puts on the wire.

    ``dialect``: decided and checked in the provider's variant of the lane's rules.
    """
    before = copy.deepcopy(items)
    try:
        view = ensure_tool_turn_invariants(items, lane=lane, dialect=dialect)
    except ToolTurnInputError:
        return "refused"
    except Exception:
        return "internal error"
    if items != before:
        return "mutated"
    try:
        broken = Counter(v.rule for v in validate(view.messages, lane=lane, dialect=dialect))
        sent = Counter(v.rule for v in validate(items, lane=lane, dialect=dialect) if v.rule in PASSED_THROUGH)
        if any(rule not in PASSED_THROUGH for rule in broken) or broken.total() > sent.total():
            return "invalid output"
        if any(broken[rule] > sent[rule] for rule in UNREPAIRED_RULES):
            return "invalid output"
        again = ensure_tool_turn_invariants(view.messages, lane=lane, dialect=dialect)
    except Exception:
        return "internal error"
    if again.repairs or again.messages is not view.messages:
        return "non-idempotent"
    if not view.lossy:
        kept = set(_MARKER.findall(json.dumps(view.messages, default=_plain)))
        if not set(_MARKER.findall(json.dumps(items, default=_plain))) <= kept:
            return "unreported loss"
    return "checked" if sender is None else wire_outcome(lane, items, view.messages, sender)


@dataclass(kw_only=True)
class Tally:
    """One row's outcomes, and the smallest transcript (by its JSON) of each failing outcome."""

    counts: Counter[Outcome] = field(default_factory=Counter)
    smallest: dict[Outcome, Transcript] = field(default_factory=dict)

    def add(self, outcome: Outcome, made: Transcript) -> None:
        """Counts ``made`` under ``outcome``, and keeps it when it is the smallest of a failing outcome so far."""
        self.counts[outcome] += 1
        if outcome in FAILURES:
            kept = self.smallest.get(outcome)
            if kept is None or _size(made) < _size(kept):
                self.smallest[outcome] = made


def _size(made: Transcript) -> int:
    return len(shown(made.items))


def shown(items: object) -> str:
    """``items`` as JSON, each SDK object as ``{"<its class>": <its fields>}`` (unset fields left out)."""

    def typed(value: object) -> object:
        model_dump = getattr(value, "model_dump", None)
        if callable(model_dump):
            return {type(value).__name__: model_dump(exclude_none=True, warnings=False)}
        return str(value)

    return json.dumps(items, default=typed)


def row_name(flavour: Flavour, made: Transcript) -> str:
    """The generator a transcript comes from: its flavour, and its spelling when it has one."""
    return flavour if made.spelling is None else f"{flavour}, {made.spelling}"


@dataclass(frozen=True, kw_only=True)
class Run:
    """A run's rows by lane and generator, and each lane's CPU seconds (making and checking its transcripts)."""

    rows: dict[tuple[Lane, str], Tally]
    seconds: dict[Lane, float]
    count: int

    def failures(self) -> dict[tuple[Lane, str], dict[Outcome, int]]:
        """The failing outcomes of each row that has any."""
        found = {key: {o: tally.counts[o] for o in FAILURES if tally.counts[o]} for key, tally in self.rows.items()}
        return {key: counts for key, counts in found.items() if counts}


def run(
    count: int,
    *,
    seed: int = 1,
    lanes: Sequence[Lane] = LANES,
    flavours: Sequence[Flavour] = FLAVOURS,
    wire: bool = True,
    dialects: Sequence[Dialect] = DIALECTS,
) -> Run:
    """``count`` transcripts per lane and flavour, each lane and flavour from its own seeded generator.

    Each of ``dialects`` whose lane is among ``lanes``: ``count`` more per flavour, in rows of their own.
    """
    sender = Sender() if wire else None
    rows: dict[tuple[Lane, str], Tally] = {}
    seconds: dict[Lane, float] = {}
    try:
        for lane in lanes:
            started = time.process_time()
            for flavour in flavours:
                rng = random.Random(f"{seed}:{lane}:{flavour}")
                for _ in range(count):
                    made = transcript(lane, flavour, rng)
                    outcome = check(lane, made.items, sender=sender)
                    rows.setdefault((lane, row_name(flavour, made)), Tally()).add(outcome, made)
                for dialect in dialects:
                    if DIALECT_ADAPTERS[dialect].lane != lane:
                        continue
                    rng = random.Random(f"{seed}:{lane}:{dialect}:{flavour}")
                    for _ in range(count):
                        made = transcript(lane, flavour, rng, dialect)
                        outcome = check(lane, made.items, sender=sender, dialect=dialect)
                        rows.setdefault((lane, f"{flavour} ({dialect})"), Tally()).add(outcome, made)
            seconds[lane] = time.process_time() - started
    finally:
        if sender is not None:
            sender.close()
    return Run(rows=dict(sorted(rows.items(), key=lambda kv: _row_order(*kv[0]))), seconds=seconds, count=count)


def _row_order(lane: Lane, generator: str) -> tuple[int, int, int, int]:
    generator, _, dialect = generator.partition(" (")
    flavour, _, spelling = generator.partition(", ")
    dialects: tuple[str, ...] = DIALECTS
    order = dialects.index(dialect.rstrip(")")) if dialect else -1
    return LANES.index(lane), order, FLAVOURS.index(flavour), SPELLINGS.index(spelling) if spelling else -1


_SHORT: Final[dict[Outcome, str]] = {
    "internal error": "internal",
    "invalid output": "invalid",
    "non-idempotent": "non-idem",
    "unreported loss": "unrep loss",
    "warned on the wire": "wire warn",
    "lost on the wire": "wire loss",
}


def table(result: Run) -> str:
    """The outcomes, one row per lane and generator, then each lane's CPU seconds per 1,000 transcripts."""
    heads = [_SHORT.get(o, o) for o in OUTCOMES]
    header = f"{'lane':<24} {'generator':<22}" + "".join(f"{h:>12}" for h in heads)
    rows = [header, "-" * len(header)]
    for (lane, generator), tally in result.rows.items():
        rows.append(f"{lane:<24} {generator:<22}" + "".join(f"{tally.counts[o]:>12,}" for o in OUTCOMES))
    rows.append("")
    for lane, seconds in result.seconds.items():
        generators = len({generator.split(",")[0] for row_lane, generator in result.rows if row_lane == lane})
        per = seconds / max(1, result.count * generators) * 1000
        rows.append(f"{lane}: {per:.2f} s of CPU per 1,000 transcripts")
    return "\n".join(rows)


def examples(result: Run) -> str:
    """The smallest transcript of each failing row and outcome, with the faults put in it."""
    out = []
    for (lane, generator), tally in result.rows.items():
        for outcome, made in tally.smallest.items():
            faults = f" (faults: {', '.join(made.faults)})" if made.faults else ""
            out.append(f"{lane} / {generator} / {outcome}{faults}:\n  {shown(made.items)}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000, help="transcripts per lane and flavour")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--lane", choices=LANES, action="append", help="only this lane (repeatable)")
    parser.add_argument("--flavour", choices=FLAVOURS, action="append", help="only this flavour (repeatable)")
    parser.add_argument("--no-wire", action="store_true", help="leave out what the SDKs put on the wire")
    parser.add_argument("--dialect", choices=DIALECTS, action="append", help="only this dialect (repeatable)")
    parser.add_argument("--no-dialects", action="store_true", help="leave out the dialects' rows")
    parser.add_argument("--examples", action="store_true", help="print the smallest transcript of each failure")
    args = parser.parse_args()
    result = run(
        args.count,
        seed=args.seed,
        lanes=args.lane or LANES,
        flavours=args.flavour or FLAVOURS,
        wire=not args.no_wire,
        dialects=() if args.no_dialects else args.dialect or DIALECTS,
    )
    print(table(result))
    failures = sum(n for counts in result.failures().values() for n in counts.values())
    print(f"\nfailures: {failures:,}")
    if args.examples and failures:
        print(examples(result))


if __name__ == "__main__":
    main()
