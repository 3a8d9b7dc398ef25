"""Per lane and per repair form, through the real SDK clients: what reaches the wire, what is recorded."""

from __future__ import annotations

import copy
from typing import Final

import pytest

from otel_toolturn import LANES, CallKind, Lane, RepairForm
from otel_toolturn._validate import validate
from otel_toolturn._vocab import REPAIR_DROPS, REPAIR_FORMS
from otel_toolturn.instrument import names
from otel_toolturn.instrument._config import UNINSTRUMENTED_LANES
from tests.instrument.conftest import Instrument
from tests.instrument.test_gemini import GEMINI_ONLY
from tests.instrument.wire import MODEL, Wire
from tests.transcripts import A, Event, R, U, build, c, su, t, th

CASES: Final[dict[RepairForm, list[Event]]] = {
    "trailing_text": [U("q"), A(t("a"), c("c1"), t("b")), R("c1")],
    "late_result": [U("go"), A(c("c1"), c("c2")), R("c1"), U("wait"), R("c2")],
    "missing_result": [U("go"), A(c("c1"), c("c2")), R("c1"), U("next")],
    "duplicate_result": [U("go"), A(c("c1")), R("c1", "a"), R("c1", "b")],
    "duplicate_call": [U("go"), A(c("c1"), c("c1")), R("c1")],
    "orphan_result": [R("c9"), U("hi"), A(t("hello")), U("bye")],
    "reused_id": [U("go"), A(c("c0")), R("c0"), U("more"), A(c("c0", "g")), R("c0", "ok2")],
    "invalid_id": [U("go"), A(c("functions.lookup:0")), R("functions.lookup:0")],
    "late_result_in_place": [U("go"), A(c("c1")), U("next"), A(t("ok")), R("c1", "late")],
    "duplicate_result_in_place": [U("go"), A(c("c1")), R("c1", "a"), A(t("ok")), U("more"), R("c1", "b")],
    "duplicate_item": [U("go"), A(th("plan", "rs_1"), t("a")), U("more"), A(th("again", "rs_1"), t("b"))],
    "duplicate_item_id": [
        U("go"),
        A(c("c1", item_id="fc_1")),
        R("c1"),
        U("retry"),
        A(c("c2", item_id="fc_1")),
        R("c2"),
    ],
    "dangling_reasoning": [U("go"), A(c("c1")), R("c1"), A(th("plan"))],
    "unanswerable_call": [U("go"), A(th("look"), c("k1", kind="computer")), U("next")],
}
"""One broken transcript per form (the worked examples in the neutral notation)."""

RESPONSES_ONLY: Final = ("duplicate_item", "duplicate_item_id", "dangling_reasoning", "unanswerable_call")
"""Forms of items only the Responses wire has: item ids, reasoning items of their own, and calls (a computer call)
that no made-up output can honestly answer."""
CALL_KIND: Final[dict[RepairForm, CallKind]] = {"unanswerable_call": "computer"}
"""The kind of call a case's repair concerns, where it is not a function call."""
APPLIES: Final[dict[Lane, tuple[RepairForm, ...]]] = {
    "anthropic.messages": tuple(f for f in CASES if f not in RESPONSES_ONLY),
    "openai.chat_completions": tuple(
        f for f in CASES if f not in ("trailing_text", "reused_id", "invalid_id", *RESPONSES_ONLY)
    ),
    "openai.responses": tuple(
        f for f in CASES if f not in ("trailing_text", "late_result", "late_result_in_place", "invalid_id")
    ),
}
"""Where each form exists: Chat keeps text and calls apart and accepts reused ids; Responses items are flat and
accept an output anywhere after its call; only Anthropic has an id pattern."""

MATRIX: Final = [(lane, form) for lane, forms in APPLIES.items() for form in forms]
KEY: Final[dict[Lane, str]] = {
    "anthropic.messages": "messages",
    "openai.chat_completions": "messages",
    "openai.responses": "input",
}


def send(wire: Wire, lane: Lane, messages: object) -> None:
    """One plain (not streamed) call in ``lane`` through the real SDK client."""
    if lane == "anthropic.messages":
        wire.anthropic().messages.create(model=MODEL, max_tokens=16, messages=messages)
    elif lane == "openai.chat_completions":
        wire.openai().chat.completions.create(model=MODEL, messages=messages)
    else:
        wire.openai().responses.create(model=MODEL, input=messages)


@pytest.mark.parametrize(("lane", "form"), MATRIX)
def test_repair_mode_sends_a_view_that_validates(instrument: Instrument, lane: Lane, form: RepairForm) -> None:
    """Repair mode: the body sent validates, the caller's list is untouched, the repair is recorded."""
    otel = instrument(mode="repair")
    messages = build(lane, CASES[form])
    before = copy.deepcopy(messages)
    wire = Wire()
    send(wire, lane, messages)
    assert messages == before
    assert validate(wire.body()[KEY[lane]], lane=lane) == []

    events = otel.events(names.EVENT_REPAIR)
    assert form in [e[names.REPAIR_FORM] for e in events if e]
    event = next(e for e in events if e and e[names.REPAIR_FORM] == form)
    assert event[names.LANE] == lane
    assert event[names.REPAIR_LOSSY] is REPAIR_DROPS[form]
    assert isinstance(event[names.REPAIR_TOOL_CALL_IDS], tuple)
    assert event[names.REPAIR_TOOL_CALL_IDS]
    assert names.REPAIR_BEFORE_RUN in event
    assert event[names.REPAIR_CALL_KIND] == CALL_KIND.get(form, "function")
    logged = otel.logs(names.EVENT_REPAIR)
    assert len(logged) == len(events)

    provider = lane.split(".")[0]
    assert otel.total(names.REPAIRS.name, toolturn__repair__form=form, toolturn__lane=lane) >= 1
    assert otel.total(names.REQUESTS.name, toolturn__lane=lane, gen_ai__provider__name=provider) == 1
    lossy = any(e[names.REPAIR_LOSSY] for e in events if e)
    assert otel.total(names.LOSSY_PROJECTIONS.name, toolturn__lane=lane) == (1 if lossy else 0)
    assert otel.points(names.LAW_DURATION.name)

    (span,) = otel.call_spans()
    assert span.attributes is not None
    assert span.attributes[names.REPAIRS_COUNT] == len(events)
    assert form in tuple(span.attributes[names.REPAIRS_FORMS])  # type: ignore[arg-type]
    assert span.attributes[names.REPAIRS_LOSSY] is lossy


@pytest.mark.parametrize(("lane", "form"), MATRIX)
def test_observe_mode_sends_the_callers_bytes(instrument: Instrument, lane: Lane, form: RepairForm) -> None:
    """Observe mode: the body is byte-identical to the uninstrumented call's, and the would-be repair is recorded."""
    plain = Wire()
    send(plain, lane, build(lane, CASES[form]))
    otel = instrument(mode="observe")
    observed = Wire()
    send(observed, lane, build(lane, CASES[form]))
    assert observed.bodies == plain.bodies
    assert form in [e[names.REPAIR_FORM] for e in otel.events(names.EVENT_REPAIR) if e]
    (span,) = otel.call_spans()
    assert span.attributes is not None
    assert span.attributes[names.MODE] == "observe"


@pytest.mark.parametrize("lane", list(APPLIES))
def test_clean_transcript_is_sent_as_is_and_records_no_repair(instrument: Instrument, lane: Lane) -> None:
    """A transcript that needs nothing goes out byte-identical in repair mode, with no repair event."""
    events: list[Event] = [U("go"), A(c("c1")), R("c1"), U("thanks")]
    plain = Wire()
    send(plain, lane, build(lane, events))
    otel = instrument(mode="repair")
    wire = Wire()
    send(wire, lane, build(lane, events))
    assert wire.bodies == plain.bodies
    assert otel.events(names.EVENT_REPAIR) == []
    assert otel.total(names.REPAIRS.name) == 0


def test_a_server_tool_use_closed_in_its_turn_is_reported_with_its_call_kind(instrument: Instrument) -> None:
    """Anthropic: a web search left open before the user speaks is closed on the wire, reported as ``server_tool``."""
    otel = instrument(mode="repair")
    wire = Wire()
    send(wire, "anthropic.messages", build("anthropic.messages", [U("q"), A(su("srvtoolu_1"), t("a")), U("more")]))
    assert validate(wire.body()["messages"], lane="anthropic.messages") == []
    (event,) = [e for e in otel.events(names.EVENT_REPAIR) if e]
    assert event[names.REPAIR_FORM] == "missing_result"
    assert event[names.REPAIR_CALL_KIND] == "server_tool"
    assert event[names.REPAIR_TOOL_CALL_IDS] == ("srvtoolu_1",)
    assert event[names.REPAIR_LOSSY] is False


def test_lossy_projections_start_at_zero_for_every_lane(instrument: Instrument) -> None:
    """Instrumenting creates a zero point of ``toolturn.lossy_projections`` per instrumented lane, before a request."""
    otel = instrument()
    lanes = {attrs[names.LANE] for attrs, value in otel.points(names.LOSSY_PROJECTIONS.name) if value == 0}
    assert lanes == set(LANES) - UNINSTRUMENTED_LANES


def test_one_shot_iterable_is_read_once_and_sent_whole(instrument: Instrument) -> None:
    """A generator passed as ``messages`` is consumed once, by the hook, and every message reaches the wire."""
    instrument()
    reads: list[int] = []
    messages = build("openai.chat_completions", CASES["missing_result"])

    def once() -> object:
        for index, message in enumerate(messages):
            reads.append(index)
            yield message

    wire = Wire()
    wire.openai().chat.completions.create(model=MODEL, messages=once())
    assert reads == list(range(len(messages)))
    assert validate(wire.body()["messages"], lane="openai.chat_completions") == []


@pytest.mark.parametrize("chain", ["previous_response_id", "conversation"])
def test_chained_responses_keep_outputs_for_calls_the_server_holds(instrument: Instrument, chain: str) -> None:
    """With previous_response_id or conversation, an output whose call lives on the server is sent, not dropped."""
    otel = instrument(mode="repair")
    given = [{"type": "function_call_output", "call_id": "call_held", "output": "42"}]
    wire = Wire()
    wire.openai().responses.create(
        model=MODEL, input=given, **{chain: "resp_1" if chain != "conversation" else "conv_1"}
    )
    assert wire.body()["input"] == given
    assert otel.events(names.EVENT_REPAIR) == []


def test_every_repair_form_has_a_case() -> None:
    """The cases above, with the forms only Gemini has (``test_gemini``), cover the whole closed set of forms."""
    assert set(CASES) | GEMINI_ONLY == set(REPAIR_FORMS)


def test_a_typed_call_item_repeating_an_item_id_reaches_the_wire_without_it(instrument: Instrument) -> None:
    """A typed call item retried under its item id is sent by the SDK without that id; the first keeps it."""
    from openai.types.responses import ResponseFunctionToolCall  # noqa: PLC0415 - only this test needs the type

    otel = instrument(mode="repair")
    first = ResponseFunctionToolCall(type="function_call", id="fc_1", call_id="c1", name="f", arguments="{}")
    retry = first.model_copy(update={"call_id": "c2"})
    given: list[object] = [
        {"role": "user", "content": "go"},
        first,
        {"type": "function_call_output", "call_id": "c1", "output": "a"},
        retry,
        {"type": "function_call_output", "call_id": "c2", "output": "b"},
    ]
    wire = Wire()
    wire.openai().responses.create(model=MODEL, input=given)
    sent = wire.body()["input"]
    assert sent[1]["id"] == "fc_1"
    assert sent[3] == {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"}
    assert validate(sent, lane="openai.responses") == []
    assert retry.id == "fc_1", "the caller's object is untouched"
    assert [e[names.REPAIR_FORM] for e in otel.events(names.EVENT_REPAIR) if e] == ["duplicate_item_id"]
