"""Instrument and uninstrument, init and shutdown, spans that end on every path, threads and tasks kept apart."""

from __future__ import annotations

import asyncio
import gc
import importlib
import threading
from typing import Any

import anthropic
import httpx2
import pytest

import otel_toolturn.instrument as instrument_module
from otel_toolturn.instrument import ToolTurnInstrumentor, names
from otel_toolturn.instrument._patches import TARGETS
from tests.instrument.conftest import Instrument, Otel, cut_event_stream
from tests.instrument.wire import MODEL, Wire, respond
from tests.transcripts import A, R, U, build, c


def _patched_objects() -> list[object]:
    out: list[object] = []
    for target in TARGETS:
        module = importlib.import_module(target.module)
        owner = getattr(module, target.owner) if target.owner else module
        out.append(vars(owner)[target.method])
    return out


def test_uninstrument_restores_every_patched_function(instrument: Instrument) -> None:
    """After ``uninstrument()`` every patched attribute is the very object it was before."""
    before = _patched_objects()
    instrument()
    during = _patched_objects()
    assert all(a is not b for a, b in zip(before, during, strict=True))
    ToolTurnInstrumentor().uninstrument()
    after = _patched_objects()
    assert all(a is b for a, b in zip(before, after, strict=True))


def test_init_twice_is_a_no_op_and_shutdown_restores(otel: Otel) -> None:
    """A second ``init()`` changes nothing (one span per call); ``shutdown()`` removes the patches."""
    before = _patched_objects()
    providers: dict[str, Any] = {
        "tracer_provider": otel.tracer_provider,
        "meter_provider": otel.meter_provider,
        "logger_provider": otel.logger_provider,
    }
    try:
        instrument_module.init(**providers)
        first = _patched_objects()
        instrument_module.init(mode="observe", **providers)
        assert all(a is b for a, b in zip(first, _patched_objects(), strict=True))
        Wire().openai().chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "q"}])
        (span,) = otel.call_spans()
        assert span.attributes is not None
        assert span.attributes[names.MODE] == "repair"
    finally:
        instrument_module.shutdown()
    assert all(a is b for a, b in zip(before, _patched_objects(), strict=True))


def test_a_wrapper_held_past_uninstrument_passes_through(instrument: Instrument) -> None:
    """A bound method captured while instrumented records nothing once instrumentation is removed."""
    otel = instrument()
    client = Wire().openai()
    create = client.chat.completions.with_raw_response.create
    ToolTurnInstrumentor().uninstrument()
    create(model=MODEL, messages=[{"role": "user", "content": "q"}]).parse()
    assert otel.spans() == []


def _stream(client: Any) -> Any:
    return client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "q"}], stream=True)


def test_break_then_drop_ends_the_span(instrument: Instrument) -> None:
    """A stream left after ``break`` and then dropped ends its span (collected), once."""
    otel = instrument()
    stream = _stream(Wire().openai())
    for _ in stream:
        break
    assert otel.spans() == []
    del stream
    gc.collect()
    assert len(otel.call_spans()) == 1


def test_stream_never_read_ends_its_span_when_collected(instrument: Instrument) -> None:
    """A stream never iterated ends its span once it is collected."""
    otel = instrument()
    _stream(Wire().openai())
    gc.collect()
    assert len(otel.call_spans()) == 1


def test_close_ends_the_span(instrument: Instrument) -> None:
    """``close()`` after a partial read ends the span at once."""
    otel = instrument()
    stream = _stream(Wire().openai())
    next(iter(stream))
    stream.close()
    assert len(otel.call_spans()) == 1


def _cut_stream(lane: object, body: dict[str, object]) -> httpx2.Response:
    del lane, body
    whole = respond("openai.chat_completions", stream=True).content
    first = whole.split(b"\n\n")[0] + b"\n\n"
    return cut_event_stream(first)


def _read_cut(client: Any) -> str:
    try:
        for _ in _stream(client):
            pass
    except Exception as exc:
        return f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
    return "no error"


def test_exception_mid_stream_reaches_the_caller_unchanged_and_ends_the_span(instrument: Instrument) -> None:
    """A transport failure mid-stream reaches the caller as uninstrumented; the span ends with ``error.type``."""
    plain = _read_cut(Wire(responder=_cut_stream).openai())
    otel = instrument()
    seen = _read_cut(Wire(responder=_cut_stream).openai())
    assert seen == plain
    assert plain != "no error"
    (span,) = otel.call_spans()
    assert span.attributes is not None
    assert span.attributes[names.ERROR_TYPE]


def _rejecting(lane: object, body: dict[str, object]) -> httpx2.Response:
    del lane, body
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "messages.1: bad"}}
    return httpx2.Response(400, json=error)


def _call_rejected(client: Any) -> tuple[type, str]:
    try:
        client.messages.create(model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "q"}])
    except anthropic.BadRequestError as exc:
        return type(exc), str(exc)
    pytest.fail("the provider's 400 did not reach the caller")


def test_sdk_error_reaches_the_caller_unchanged(instrument: Instrument) -> None:
    """The SDK's own exception (a 400) reaches the caller with the same type and message; the span records it."""
    plain = _call_rejected(Wire(responder=_rejecting).anthropic())
    otel = instrument()
    seen = _call_rejected(Wire(responder=_rejecting).anthropic())
    assert seen == plain
    (span,) = otel.call_spans()
    assert span.attributes is not None
    assert span.attributes[names.ERROR_TYPE] == "BadRequestError"
    assert not span.status.is_ok


def _missing(call_id: str) -> list[object]:
    return build("openai.chat_completions", [U("go"), A(c(call_id)), R(call_id), U("go on"), A(c(call_id + "x"))])


def _ids_by_model(otel: Otel) -> dict[str, set[object]]:
    out: dict[str, set[object]] = {}
    for span in otel.call_spans():
        assert span.attributes is not None
        assert span.parent is None
        ids: set[object] = {
            i
            for e in span.events
            if e.name == names.EVENT_REPAIR and e.attributes
            for i in tuple(e.attributes[names.REPAIR_TOOL_CALL_IDS])  # type: ignore[arg-type]
        }
        out[str(span.attributes[names.GEN_AI_REQUEST_MODEL])] = ids
    return out


def test_threads_never_mix_spans_or_events(instrument: Instrument) -> None:
    """Eight threads calling at once: each span is a root carrying only its own thread's repair ids."""
    otel = instrument()
    wire = Wire()
    client = wire.openai()

    def work(n: int) -> None:
        client.chat.completions.create(model=f"m{n}", messages=_missing(f"call{n}"))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _ids_by_model(otel) == {f"m{n}": {f"call{n}x"} for n in range(8)}


def test_asyncio_tasks_never_mix_spans_or_events(instrument: Instrument) -> None:
    """Eight tasks interleaved on one loop: each span is a root carrying only its own task's repair ids."""
    otel = instrument()
    client = Wire().async_openai()

    async def work(n: int) -> None:
        await client.chat.completions.create(model=f"m{n}", messages=_missing(f"call{n}"))

    async def main() -> None:
        await asyncio.gather(*(work(n) for n in range(8)))

    asyncio.run(main())
    assert _ids_by_model(otel) == {f"m{n}": {f"call{n}x"} for n in range(8)}
