"""Calls that never run record nothing; input the law cannot read reaches the SDK as the caller wrote it."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import warnings
from collections.abc import Callable, Iterator
from typing import Any, Final

import anthropic
import httpx2
import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode

from otel_toolturn import Lane
from otel_toolturn.instrument import names
from otel_toolturn.simulator import Simulator
from tests.instrument.conftest import Instrument, Otel
from tests.instrument.wire import KEY, MODEL, Wire
from tests.transcripts import A, R, U, build, c

LANES: Final[tuple[Lane, ...]] = ("anthropic.messages", "openai.chat_completions", "openai.responses")
KEYS: Final[dict[Lane, str]] = {
    "anthropic.messages": "messages",
    "openai.chat_completions": "messages",
    "openai.responses": "input",
}
UNRUN: Final = 200
"""How many never-run coroutines each test drops (each would have started a span before the fix)."""


class _Started(SpanProcessor):
    """Counts spans started and ended (the in-memory exporter sees only ended ones)."""

    def __init__(self) -> None:
        self.started = 0
        self.ended = 0

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        del span, parent_context
        self.started += 1

    def on_end(self, span: ReadableSpan) -> None:
        del span
        self.ended += 1


def _broken(lane: Lane) -> list[object]:
    """A transcript the law repairs (a call without its result), so a recorded call counts a repair."""
    return build(lane, [U("go"), A(c("c1"), c("c2")), R("c1"), U("next")])


def _async_client(lane: Lane, wire: Wire) -> Any:
    return wire.async_anthropic() if lane == "anthropic.messages" else wire.async_openai()


def _sync_client(lane: Lane, wire: Wire) -> Any:
    return wire.anthropic() if lane == "anthropic.messages" else wire.openai()


def _create(client: Any, lane: Lane, transcript: object, **extra: object) -> Any:
    """``create`` of ``lane`` on ``client`` with ``transcript`` (a coroutine on an async client)."""
    if lane == "anthropic.messages":
        return client.messages.create(model=MODEL, max_tokens=16, messages=transcript, **extra)
    if lane == "openai.chat_completions":
        return client.chat.completions.create(model=MODEL, messages=transcript, **extra)
    return client.responses.create(model=MODEL, input=transcript, **extra)


def _watching(otel: Otel) -> _Started:
    started = _Started()
    otel.tracer_provider.add_span_processor(started)
    return started


def _nothing_recorded(otel: Otel, started: _Started, wire: Wire) -> None:
    assert started.started == 0
    assert otel.spans() == []
    assert otel.total(names.REQUESTS.name) == 0
    assert otel.total(names.REPAIRS.name) == 0
    assert wire.bodies == []


# --- item: async calls that never run ---------------------------------------------------------------
@pytest.mark.parametrize("lane", LANES)
def test_unawaited_coroutines_closed_and_collected_record_nothing(instrument: Instrument, lane: Lane) -> None:
    """Coroutines created and closed (or dropped) without running start no span, count nothing, send nothing."""
    otel = instrument()
    started = _watching(otel)
    wire = Wire()
    client = _async_client(lane, wire)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(UNRUN):
            coroutine = _create(client, lane, _broken(lane))
            coroutine.close()
            del coroutine
        gc.collect()
    assert [str(w.message) for w in caught] == []
    _nothing_recorded(otel, started, wire)


def _dropped_warnings(lane: Lane) -> list[str]:
    """The warnings raised when a ``create`` coroutine is dropped unawaited and collected."""
    client = _async_client(lane, Wire())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _create(client, lane, _broken(lane))
        gc.collect()
    return [f"{w.category.__name__}: {w.message}" for w in caught]


@pytest.mark.parametrize("lane", LANES)
def test_a_dropped_coroutine_warns_as_the_sdks_own(instrument: Instrument, lane: Lane) -> None:
    """A coroutine dropped unawaited warns exactly as the bare SDK's does (its name, not otel-toolturn's)."""
    bare = _dropped_warnings(lane)
    assert bare
    assert all("never awaited" in w for w in bare)
    otel = instrument()
    started = _watching(otel)
    assert _dropped_warnings(lane) == bare
    assert started.started == 0


@pytest.mark.parametrize("lane", LANES)
def test_tasks_cancelled_before_their_first_step_record_nothing(instrument: Instrument, lane: Lane) -> None:
    """Tasks cancelled before they first run start no span and count nothing; each ends cancelled."""
    otel = instrument()
    started = _watching(otel)
    wire = Wire()

    async def main() -> list[object]:
        client = _async_client(lane, wire)
        tasks = [asyncio.ensure_future(_create(client, lane, _broken(lane))) for _ in range(UNRUN)]
        for task in tasks:
            task.cancel()
        done: list[object] = await asyncio.gather(*tasks, return_exceptions=True)
        return done

    outcomes = asyncio.run(main())
    assert all(isinstance(o, asyncio.CancelledError) for o in outcomes)
    gc.collect()
    _nothing_recorded(otel, started, wire)


@pytest.mark.parametrize("lane", LANES)
def test_cancelled_mid_send_ends_its_span_once(instrument: Instrument, lane: Lane) -> None:
    """A call cancelled while the provider has not answered ends its one span once, as a cancelled error."""
    otel = instrument()
    started = _watching(otel)
    received: list[bytes] = []

    async def main() -> None:
        arrived = asyncio.Event()

        async def never_answers(request: httpx2.Request) -> httpx2.Response:
            received.append(await request.aread())
            arrived.set()
            await asyncio.Event().wait()
            raise AssertionError  # pragma: no cover - the wait ends only by cancellation

        transport = httpx2.MockTransport(never_answers)
        http = httpx2.AsyncClient(transport=transport)
        import anthropic  # noqa: PLC0415 - each lane's own SDK only where it is used
        import openai  # noqa: PLC0415

        client: Any = (
            anthropic.AsyncAnthropic(api_key=KEY, http_client=http, max_retries=0)
            if lane == "anthropic.messages"
            else openai.AsyncOpenAI(api_key=KEY, http_client=http, max_retries=0)
        )
        task = asyncio.ensure_future(_create(client, lane, _broken(lane)))
        await arrived.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert len(received) == 1
    assert (started.started, started.ended) == (1, 1)
    (span,) = otel.call_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None
    assert span.attributes[names.ERROR_TYPE] == "CancelledError"
    assert otel.total(names.REQUESTS.name) == 1
    assert otel.total(names.REPAIRS.name) >= 1


@pytest.mark.parametrize("lane", LANES)
def test_awaited_later_records_once_when_it_runs(instrument: Instrument, lane: Lane) -> None:
    """A coroutine created, then awaited later, records exactly one call: when it runs, not when it was made."""
    otel = instrument()
    started = _watching(otel)
    wire = Wire()

    async def main() -> None:
        client = _async_client(lane, wire)
        coroutine = _create(client, lane, _broken(lane))
        assert started.started == 0
        await coroutine

    asyncio.run(main())
    assert (started.started, started.ended) == (1, 1)
    assert len(otel.call_spans()) == 1
    assert otel.total(names.REQUESTS.name) == 1


# --- item: what the SDK refuses, the instrumented SDK refuses the same way --------------------------
class _PartwayError(RuntimeError):
    """The caller's own generator failing part-way."""


def _messages(lane: Lane) -> list[object]:
    """One valid user turn (nothing to repair: the bare and instrumented bodies can be compared)."""
    return build(lane, [U("hi")])


def _generator(lane: Lane) -> Iterator[object]:
    yield from _messages(lane)


def _raising(lane: Lane) -> Iterator[object]:
    yield from _messages(lane)
    raise _PartwayError("the caller's generator failed")


MALFORMED: Final[dict[str, Callable[[Lane], object]]] = {
    "generator": _generator,
    "set": lambda _lane: {"a", "b"},
    "frozenset": lambda _lane: frozenset(),
    "range": lambda _lane: range(3),
    "bytes": lambda _lane: b"abc",
    "bytearray": lambda _lane: bytearray(b"ab"),
    "dict": lambda lane: _messages(lane)[0],
    "dict_values": lambda lane: {"m": _messages(lane)[0]}.values(),
    "None": lambda _lane: None,
    "int": lambda _lane: 3,
    "str": lambda _lane: "hi",
    "tuple": lambda lane: tuple(_messages(lane)),
    "raising_generator": _raising,
}
"""Transcripts of every kind a caller might hand over; each is made fresh per call."""

Outcome = tuple[str, str, str, bool]


def _raised_inside_sdk(exc: BaseException) -> bool:
    """Whether the exception passed through the SDK's own code (not raised around it)."""
    frames = exc.__traceback__
    while frames is not None:
        module = str(frames.tb_frame.f_globals.get("__name__", ""))
        if module.startswith(("openai.", "anthropic.")):
            return True
        frames = frames.tb_next
    return False


def _outcome(lane: Lane, make: Callable[[Lane], object], *, is_async: bool, tools: object = None) -> Outcome:
    """What the caller meets: the exception (type, message, whether from inside the SDK), or the body sent."""
    wire = Wire()
    extra: dict[str, object] = {} if tools is None else {"tools": tools}
    try:
        if is_async:
            asyncio.run(_create(_async_client(lane, wire), lane, make(lane), **extra))
        else:
            _create(_sync_client(lane, wire), lane, make(lane), **extra)
    except Exception as exc:
        return ("raised", type(exc).__qualname__, str(exc), _raised_inside_sdk(exc))
    return ("sent", "", wire.bodies[-1].decode(), False)


def _law_reads(lane: Lane, outcome: Outcome) -> bool:
    """Whether the bare SDK sent a transcript the law reads (a JSON array; a string in Responses)."""
    if outcome[0] != "sent":
        return False
    sent = json.loads(outcome[2])[KEYS[lane]]
    return isinstance(sent, list) or (lane == "openai.responses" and isinstance(sent, str))


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("kind", list(MALFORMED))
@pytest.mark.parametrize("lane", LANES)
def test_malformed_transcript_meets_the_sdks_own_outcome(
    instrument: Instrument, lane: Lane, kind: str, is_async: bool
) -> None:
    """Per lane and kind of transcript: the instrumented call raises or sends exactly what the bare SDK does.

    A transcript the law cannot read as the SDK sends it leaves no span and counts nothing.
    """
    make = MALFORMED[kind]
    bare = _outcome(lane, make, is_async=is_async)
    otel = instrument()
    assert _outcome(lane, make, is_async=is_async) == bare
    recorded = len(otel.call_spans())
    assert recorded == (1 if _law_reads(lane, bare) else 0)
    assert otel.total(names.REQUESTS.name) == recorded
    assert otel.total(names.INSTRUMENTATION_ERRORS.name) == 0


def _raising_tools(lane: Lane) -> Iterator[object]:
    del lane
    yield {"type": "function", "name": "f", "parameters": {"type": "object"}}
    raise _PartwayError("the caller's tools failed")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("lane", LANES)
def test_tools_that_raise_part_way_meet_the_sdks_own_outcome(
    instrument: Instrument, lane: Lane, is_async: bool
) -> None:
    """Tools from a generator that fails part-way: the caller meets the SDK's own outcome, nothing is recorded."""
    bare = _outcome(lane, _messages, is_async=is_async, tools=_raising_tools(lane))
    otel = instrument()
    assert _outcome(lane, _messages, is_async=is_async, tools=_raising_tools(lane)) == bare
    assert bare[:2] == ("raised", "_PartwayError")
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0


@pytest.mark.parametrize("lane", ["anthropic.messages", "openai.chat_completions"])
def test_a_generator_transcript_is_read_once_and_repaired(instrument: Instrument, lane: Lane) -> None:
    """A transcript from a generator where the SDK lists it: read once, and the law's view is what is sent."""
    reads: list[int] = []

    def messages() -> Iterator[object]:
        reads.append(1)
        yield from _broken(lane)

    otel = instrument()
    wire = Wire()
    _create(_sync_client(lane, wire), lane, messages())
    assert reads == [1]
    assert otel.total(names.REPAIRS.name) >= 1
    assert wire.body()[KEYS[lane]] != json.loads(json.dumps(_broken(lane)))


def test_a_generator_message_reaches_the_simulator_as_the_bare_sdk_sends_it(
    sim: Simulator, instrument: Instrument
) -> None:
    """A message that is a generator is sent as its items, by the instrumented SDK as by the bare one."""

    def messages() -> Any:
        return [{"role": "user", "content": "hi"}, (letter for letter in "ab")]

    def sent() -> object:
        client = anthropic.Anthropic(base_url=sim.base_url, api_key=KEY, max_retries=0)
        with client, contextlib.suppress(anthropic.BadRequestError):
            client.messages.create(model=MODEL, max_tokens=16, messages=messages())
        body = sim.requests[-1].body
        assert isinstance(body, dict)
        return body["messages"]

    bare = sent()
    instrument()
    assert sent() == bare == [{"role": "user", "content": "hi"}, ["a", "b"]]


class _Counted:
    """A one-shot iterable that counts how often it is read."""

    def __init__(self, *items: object) -> None:
        self.items = items
        self.reads = 0

    def __iter__(self) -> Iterator[object]:
        self.reads += 1
        yield from self.items


def _call(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def _tool_use(call_id: str) -> dict[str, object]:
    return {"type": "tool_use", "id": call_id, "name": "f", "input": {}}


ONE_SHOT_FIELDS: Final[dict[str, tuple[Lane, Callable[[Callable[..., object]], list[object]]]]] = {
    "anthropic-result-in-content": (
        "anthropic.messages",
        lambda g: [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [_tool_use("t1")]},
            {"role": "user", "content": g({"type": "tool_result", "tool_use_id": "t1", "content": "r"})},
        ],
    ),
    "anthropic-call-in-content": (
        "anthropic.messages",
        lambda g: [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": g(_tool_use("t1"), _tool_use("t2"))},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]},
            {"role": "user", "content": "next"},
        ],
    ),
    "chat-tool-calls": (
        "openai.chat_completions",
        lambda g: [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": g(_call("c1"), _call("c2"))},
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
            {"role": "user", "content": "next"},
        ],
    ),
    "chat-result-content": (
        "openai.chat_completions",
        lambda g: [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [_call("c1")]},
            {"role": "tool", "tool_call_id": "c1", "content": g({"type": "text", "text": "r"})},
            {"role": "tool", "tool_call_id": "c1", "content": "again"},
        ],
    ),
    "responses-output": (
        "openai.responses",
        lambda g: [
            {"role": "user", "content": "go"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": g({"type": "input_text", "text": "r"})},
            {"type": "function_call_output", "call_id": "c1", "output": "again"},
        ],
    ),
}
"""Per lane, a transcript whose item holds a field the law reads as a one-shot iterable the SDK lists."""


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("case", list(ONE_SHOT_FIELDS))
def test_a_one_shot_field_is_read_once_and_sent_as_its_list(instrument: Instrument, case: str, is_async: bool) -> None:
    """A field the SDK lists, given as a generator: read once, judged and sent exactly as the same list would be."""
    lane, make = ONE_SHOT_FIELDS[case]
    instrument()
    as_list = _outcome(lane, lambda _lane: make(lambda *items: list(items)), is_async=is_async)
    counted: list[_Counted] = []

    def one_shot(*items: object) -> Iterator[object]:
        counted.append(_Counted(*items))
        return iter(counted[-1])

    assert _outcome(lane, lambda _lane: make(one_shot), is_async=is_async) == as_list
    assert as_list[0] == "sent"
    assert [c.reads for c in counted] == [1]


@pytest.mark.parametrize("case", list(ONE_SHOT_FIELDS))
def test_a_one_shot_field_that_raises_meets_the_sdks_own_error_unrecorded(instrument: Instrument, case: str) -> None:
    """A field's generator failing part-way: the caller meets the SDK's own outcome, and nothing is recorded."""
    lane, make = ONE_SHOT_FIELDS[case]

    def raising(*items: object) -> Iterator[object]:
        yield from items
        raise _PartwayError("the caller's content failed")

    bare = _outcome(lane, lambda _lane: make(raising), is_async=False)
    otel = instrument()
    assert _outcome(lane, lambda _lane: make(raising), is_async=False) == bare
    assert bare[:2] == ("raised", "_PartwayError")
    assert otel.call_spans() == []
    assert otel.total(names.REQUESTS.name) == 0


def test_a_transcript_the_law_refuses_leaves_no_content_in_the_debug_log(
    instrument: Instrument, caplog: pytest.LogCaptureFixture
) -> None:
    """A call id holding user text makes the law refuse the transcript: the debug log names types, never the text."""
    instrument(mode="repair")
    marker = "<user-text-4711>"
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": {"note": marker}, "name": "f", "input": {}}]},
    ]
    wire = Wire()
    with caplog.at_level(logging.DEBUG, logger="otel_toolturn"), contextlib.suppress(Exception):
        wire.anthropic().messages.create(model=MODEL, max_tokens=16, messages=messages)
    ours = [r for r in caplog.records if r.name.startswith("otel_toolturn")]
    assert ours, "the refusal was logged at debug"
    text = "\n".join(
        r.getMessage() + (logging.Formatter().formatException(r.exc_info) if r.exc_info else "") for r in ours
    )
    assert marker not in text
