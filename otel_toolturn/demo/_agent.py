"""The demo's agent: one SDK client on the simulator, and a ``send`` that prints each request's outcome.

A ``Session`` is one pass over the stories (with or without otel-toolturn): it keeps what each
request came to and reads the telemetry events back. An ``Agent`` is the session seen through one
SDK's client. A ``DemoSdk`` is what one SDK brings: its client on the simulator, how it says the
provider refused a request, and its stories.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Generic, Protocol, TypeVar

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_toolturn._vocab import RepairForm
from otel_toolturn.instrument import names
from otel_toolturn.simulator import ScriptedCall, ScriptedTurn, Simulator

KEY: Final = "demo-key-not-used"
CARRY_ON: Final = ScriptedTurn(text="Carrying on from where we were.")
REPAIR_WORDS: Final[Mapping[RepairForm, str]] = MappingProxyType(
    {
        "trailing_text": "text after the call moved ahead of it",
        "late_result": "the late result moved up behind its call",
        "late_result_in_place": "the result that came after the answer delivered where it stands",
        "duplicate_result_in_place": "a second result that came after the answer delivered where it stands",
        "missing_result": 'an "interrupted" result added for the unanswered call',
        "duplicate_result": "the second result folded into the first",
        "duplicate_call": "the repeated call left out",
        "orphan_result": "the result whose call is gone left out",
        "reused_id": "a reused call id renamed",
        "invalid_id": "a call id the provider's pattern refuses renamed",
        "duplicate_item": "an item replayed under the same id left out",
        "duplicate_item_id": "a call or output item sent without the item id it repeated",
        "dangling_reasoning": "reasoning with nothing after it left out",
        "placeholder_signature": "the documented placeholder set on a call that lost its thought signature",
        "text_after_results": "text after the function responses moved ahead of them",
        "unanswerable_call": "a call no honest result exists for left out",
    }
)
"""Each repair form in a newcomer's words."""


class _Closable(Protocol):
    def close(self) -> None: ...


Client = TypeVar("Client", bound=_Closable)

Refusal = Callable[[Exception], "tuple[int, str] | None"]
"""An SDK's reading of an exception: the provider's status and words when it refused the request, else ``None``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Sent:
    """One request's outcome: the status, and either a short account of the reply or the provider's error."""

    status: int
    text: str
    events: tuple[str, ...] = ()


@dataclass(kw_only=True, slots=True)
class Session:
    """One pass over the stories: the simulator, each request's outcome, and the telemetry read back."""

    sim: Simulator
    spans: InMemorySpanExporter | None
    refusals: tuple[Refusal, ...]
    seen: int = 0
    log: list[Sent] = field(default_factory=list)

    def send(self, label: str, call: Callable[[], str], *, answer: ScriptedTurn | None = None) -> bool:
        """Run one SDK call, print its outcome (and its telemetry events); ``answer`` scripts the reply."""
        if answer is not None:
            self.sim.enqueue(answer)
        try:
            status, text = 200, call()
        except Exception as error:
            refused = [said for said in (read(error) for read in self.refusals) if said is not None]
            if not refused:
                raise
            self.sim.clear_turns()  # a refused request takes no scripted turn: drop the one queued for it
            status, text = refused[0]
        sent = Sent(status=status, text=text, events=self._new_events())
        self.log.append(sent)
        mark = "ok     " if sent.status == 200 else "refused"
        print(f"     {label:<38} {sent.status} {mark}  {sent.text}")
        for event in sent.events:
            print(f"         {event}")
        return sent.status == 200

    def _new_events(self) -> tuple[str, ...]:
        if self.spans is None:
            return ()
        finished = self.spans.get_finished_spans()
        fresh, self.seen = finished[self.seen :], len(finished)
        return tuple(describe(event.name, event.attributes or {}) for span in fresh for event in span.events)


@dataclass(frozen=True, kw_only=True, slots=True)
class Agent(Generic[Client]):
    """The demo's agent on one SDK: its client, and the session's ``send``."""

    session: Session
    client: Client

    def send(self, label: str, call: Callable[[], str], *, answer: ScriptedTurn | None = None) -> bool:
        """``Session.send``."""
        return self.session.send(label, call, answer=answer)

    @property
    def instrumented(self) -> bool:
        """Whether this pass runs with otel-toolturn (its spans are read back)."""
        return self.session.spans is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class Story(Generic[Client]):
    """One breakage: its title, the wire lane it happens in, and the play."""

    title: str
    lane: str
    play: Callable[[Agent[Client]], None]


@dataclass(frozen=True, kw_only=True, slots=True)
class DemoSdk(Generic[Client]):
    """One SDK's part in the demo: its client on the simulator, how it says "refused", and its stories."""

    client: Callable[[Simulator], Client]
    """The SDK's client on the simulator (closed once the SDK's stories are played)."""
    refusal: Refusal
    stories: tuple[Story[Client], ...]

    def play(self, session: Session, first: int) -> None:
        """Play this SDK's stories in ``session``, numbered from ``first``."""
        with closing(self.client(session.sim)) as client:
            agent = Agent(session=session, client=client)
            for number, story in enumerate(self.stories, start=first):
                print(f"  {number}. {story.title} ({story.lane})")
                story.play(agent)


def provider_message(body: object) -> str:
    """The provider's own error words, from an SDK's parsed error body."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(body)


def describe(name: str, attributes: Mapping[str, object]) -> str:
    """One telemetry event as a short line."""
    if name == names.EVENT_REPAIR:
        ids = attributes.get(names.REPAIR_TOOL_CALL_IDS, ())
        joined = ", ".join(str(i) for i in ids) if isinstance(ids, Sequence) and not isinstance(ids, str) else ids
        form = attributes.get(names.REPAIR_FORM)
        words = next((w for f, w in REPAIR_WORDS.items() if f == form), "")
        lossy = " (lossy)" if attributes.get(names.REPAIR_LOSSY) else ""
        return f"{name}: {form} [{joined}]: {words}{lossy}"
    if name == names.EVENT_STREAM_DROP:
        cause, count = attributes.get(names.STREAM_DROP_CAUSE), attributes.get(names.STREAM_DROP_COUNT)
        return f"{name}: {cause} x{count}: a call without whole arguments dropped, never run"
    if name == names.EVENT_STREAM_TORN:
        return f"{name}: the stream ended without its final frame"
    if name == names.EVENT_STREAM_END_IGNORED:
        return f"{name}: {attributes.get(names.STREAM_END_STATEMENT)} x{attributes.get(names.STREAM_END_COUNT)}"
    return name


def scripted_calls(*specs: tuple[str, Mapping[str, object]], same_id: str | None = None) -> tuple[ScriptedCall, ...]:
    """The calls a scripted turn makes: (name, arguments) each, all under ``same_id`` when given."""
    return tuple(ScriptedCall(name=name, arguments=args, call_id=same_id) for name, args in specs)
