"""Proxies around what the SDKs return, so the caller gets exactly what it would have got.

Role: every proxy is a ``wrapt.ObjectProxy`` of the SDK's own object, so ``isinstance``,
attributes, helpers (``get_final_message``, ``text_stream``, ``until_done``) and ``with`` /
``async with`` behave as without instrumentation. A proxy only watches: each event it passes on
is fed to the call's observer (``CallRecord.feed``) unchanged (``for`` reads through a generator
over the SDK's own iteration, as the SDK's streams do; ``next()`` through ``__next__``), and the
call is finished exactly once on the first of: exhaustion, an exception, ``close()``, context
exit, the HTTP response being closed through ``.response``, or the proxy being collected unread
(``weakref.finalize``).

Who ended a stream is stated to the record: the SDK's iteration ending (exhaustion) or raising an
``Exception`` (a connection cut, a timeout, an error frame) is the provider's stream ending, torn
when it came before the lane's final frame; ``close()``, context exit, closing ``.response``,
collection, and a read cancelled or interrupted (a ``BaseException`` that is not an
``Exception``) are the caller's stop (``caller_closed``): closed early, never torn.

- ``StreamProxy`` / ``AsyncStreamProxy``: the SDKs' ``Stream`` / ``AsyncStream`` (``read``: what the
  observer reads of each event, when the lane's event rides inside the SDK's, as
  in Bedrock's ``InvokeModelWithResponseStream`` chunks).
- ``RawResponseProxy``: ``with_raw_response`` / ``with_streaming_response`` results; ``parse()``
  hands back the parsed object, watched in turn (a stream is proxied; a whole response checked).
- ``watch_steps``: a generator of the SDK whose first step sends the request (google-genai's
  sync stream); that step runs with the call pending, so it is recorded when it sends; a
  generator never started records nothing. The caller reads the SDK's own chunks.
- ``watch_async_steps``: an SDK async generator whose first step sends (ollama's ``AsyncClient.chat`` with
  ``stream=True``, once awaited), watched the same way.
- ``StreamManagerProxy``: managers whose entry sends the call, Anthropic's ``messages.stream()`` and
  cohere's raw ``chat_stream``; the call is recorded then (``_pending``); the SDK's own ``MessageStream``
  (cohere: its ``HttpResponse``) is returned, reading its events through a ``StreamProxy``.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from types import AsyncGeneratorType, GeneratorType, TracebackType
from typing import Any, cast

import wrapt

from otel_toolturn.instrument._pending import PendingCall
from otel_toolturn.instrument._record import CallRecord


@dataclass(frozen=True, kw_only=True, slots=True)
class ResultTypes:
    """The SDK classes a provider's calls can return, to tell streams and raw responses apart."""

    streams: tuple[type, ...]
    async_streams: tuple[type, ...]
    raw: tuple[type, ...]
    read: Callable[[object], object] | None = None
    """What the observer reads of each streamed event, when the lane's chunk rides inside the SDK's event."""
    read_response: Callable[[object], object] | None = None
    """What the check reads of a whole response, when the SDK's object reads otherwise than the wire's JSON."""
    entered: Callable[[object, CallRecord], None] | None = None
    """How what a stream manager's entry gives is made to read its events through a proxy (``StreamManagerProxy``)."""


def _finish_unless_streaming(record: CallRecord, streaming: list[bool]) -> None:
    """Finalizer of an intermediate object: finish the call unless a stream took it over."""
    if not streaming:
        record.finish()


def when_collected(proxy: object, callback: Callable[..., None], *args: object, **kwargs: object) -> None:
    """Call ``callback(*args, **kwargs)`` when ``proxy`` is garbage-collected (never at interpreter exit)."""
    finalizer = weakref.finalize(proxy, callback, *args, **kwargs)
    finalizer.atexit = False


def _read_failed(record: CallRecord, exc: BaseException) -> None:
    """The SDK's read raised ``exc``: an ``Exception`` ends the provider's stream; anything else is the caller's."""
    record.finish(exc, caller_closed=not isinstance(exc, Exception))


def _feed(record: CallRecord, read: Callable[[object], object] | None, event: object) -> None:
    """Feed ``event`` to ``record``, or what ``read`` takes of it; a ``read`` that raises is counted, never raised."""
    if read is not None:
        try:
            event = read(event)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            record.telemetry.error("stream", exc)
            return
    record.feed(event)


def watch(result: object, record: CallRecord, types: ResultTypes) -> object:
    """What the caller receives for ``result``: a proxy for a stream or raw response; else the result, checked.

    A generator (async: async generator) is a stream whatever the SDK: no call returns one for a whole
    response, and another instrumentation wrapped beneath ours hands back the SDK's stream as one
    (OpenLLMetry's groq instrumentation does).
    """
    if isinstance(result, types.streams) or type(result) is GeneratorType:
        return StreamProxy(result, record, read=types.read)
    if isinstance(result, types.async_streams) or type(result) is AsyncGeneratorType:
        return AsyncStreamProxy(result, record, read=types.read)
    if isinstance(result, types.raw):
        return RawResponseProxy(result, record, types)
    record.response(result if types.read_response is None else types.read_response(result))
    return result


class _ClosingResponse(wrapt.ObjectProxy[Any]):
    """The HTTP response of a stream: closing it (as the SDK's stream helpers do) finishes the call."""

    def __init__(self, wrapped: object, record: CallRecord) -> None:
        super().__init__(wrapped)
        self._self_record = record

    def close(self) -> object:
        try:
            return self.__wrapped__.close()
        finally:
            self._self_record.finish(caller_closed=True)

    async def aclose(self) -> object:
        try:
            return await self.__wrapped__.aclose()
        finally:
            self._self_record.finish(caller_closed=True)


class StreamProxy(wrapt.ObjectProxy[Any]):
    """A synchronous SDK stream, watched (see the module docstring)."""

    def __init__(self, wrapped: object, record: CallRecord, *, read: Callable[[object], object] | None = None) -> None:
        super().__init__(wrapped)
        self._self_record = record
        self._self_read = read
        record.start_stream()
        when_collected(self, record.finish, caller_closed=True)

    @property
    def response(self) -> object:
        return _ClosingResponse(self.__wrapped__.response, self._self_record)

    def __iter__(self) -> Iterator[object]:
        return self._self_events()

    def _self_feed(self, event: object) -> None:
        """Feed ``event`` to the record, or what ``read`` takes of it (a wrapper's payload: the lane's own event)."""
        _feed(self._self_record, self._self_read, event)

    def _self_events(self) -> Iterator[object]:
        """What ``for`` reads: the SDK's own iteration, each event fed on the way (a generator, as the SDK's is).

        Per event: ``CallRecord.feed`` and nothing else; an observer that raises is dropped and the
        stream passes through.
        """
        record = self._self_record
        try:
            for event in self.__wrapped__:
                self._self_feed(event)
                yield event
        except GeneratorExit:
            raise
        except BaseException as exc:
            _read_failed(record, exc)
            raise
        record.finish()

    def __next__(self) -> object:
        record = self._self_record
        try:
            event = self.__wrapped__.__next__()
        except StopIteration:
            record.finish()
            raise
        except BaseException as exc:
            _read_failed(record, exc)
            raise
        self._self_feed(event)
        return event

    def __enter__(self) -> StreamProxy:
        self.__wrapped__.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        try:
            return cast("bool | None", self.__wrapped__.__exit__(exc_type, exc, tb))
        finally:
            self._self_record.finish(caller_closed=True)

    def close(self) -> object:
        try:
            return self.__wrapped__.close()
        finally:
            self._self_record.finish(caller_closed=True)


class AsyncStreamProxy(wrapt.ObjectProxy[Any]):
    """An asynchronous SDK stream, watched (see the module docstring)."""

    def __init__(self, wrapped: object, record: CallRecord, *, read: Callable[[object], object] | None = None) -> None:
        super().__init__(wrapped)
        self._self_record = record
        self._self_read = read
        record.start_stream()
        when_collected(self, record.finish, caller_closed=True)

    @property
    def response(self) -> object:
        return _ClosingResponse(self.__wrapped__.response, self._self_record)

    def __aiter__(self) -> AsyncIterator[object]:
        return self._self_async_events()

    def _self_feed(self, event: object) -> None:
        """Feed ``event`` to the record, or what ``read`` takes of it (as ``StreamProxy``)."""
        _feed(self._self_record, self._self_read, event)

    async def _self_async_events(self) -> AsyncIterator[object]:
        """What ``async for`` reads: the SDK's own iteration, each event fed on the way (as ``StreamProxy``)."""
        record = self._self_record
        try:
            async for event in self.__wrapped__:
                self._self_feed(event)
                yield event
        except GeneratorExit:
            raise
        except BaseException as exc:
            _read_failed(record, exc)
            raise
        record.finish()

    async def __anext__(self) -> object:
        record = self._self_record
        try:
            event = await self.__wrapped__.__anext__()
        except StopAsyncIteration:
            record.finish()
            raise
        except BaseException as exc:
            _read_failed(record, exc)
            raise
        self._self_feed(event)
        return event

    async def __aenter__(self) -> AsyncStreamProxy:
        await self.__wrapped__.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        try:
            return cast("bool | None", await self.__wrapped__.__aexit__(exc_type, exc, tb))
        finally:
            self._self_record.finish(caller_closed=True)

    async def close(self) -> object:
        try:
            return await self.__wrapped__.close()
        finally:
            self._self_record.finish(caller_closed=True)


class RawResponseProxy(wrapt.ObjectProxy[Any]):
    """A raw SDK response (``with_raw_response``/``with_streaming_response``); ``parse()`` is watched."""

    def __init__(self, wrapped: object, record: CallRecord, types: ResultTypes) -> None:
        super().__init__(wrapped)
        self._self_record = record
        self._self_types = types
        self._self_parsed: list[tuple[object, object]] = []
        self._self_streaming: list[bool] = []
        when_collected(self, _finish_unless_streaming, record, self._self_streaming)

    def _self_watch(self, parsed: object) -> object:
        for raw, seen in self._self_parsed:
            if raw is parsed:
                return seen
        types = self._self_types
        if isinstance(parsed, types.streams + types.async_streams):
            self._self_streaming.append(True)
        watched = watch(parsed, self._self_record, types)
        self._self_parsed.append((parsed, watched))
        return watched

    async def _self_watch_later(self, parsed: Awaitable[object]) -> object:
        return self._self_watch(await parsed)

    def parse(self, *args: object, **kwargs: object) -> object:
        parsed = self.__wrapped__.parse(*args, **kwargs)
        if inspect.isawaitable(parsed):
            return self._self_watch_later(parsed)
        return self._self_watch(parsed)

    def close(self) -> object:
        result = self.__wrapped__.close()
        if inspect.isawaitable(result):
            return self._self_close_later(result)
        self._self_record.finish(caller_closed=True)
        return result

    async def _self_close_later(self, result: Awaitable[object]) -> object:
        try:
            return await result
        finally:
            self._self_record.finish(caller_closed=True)


class _Steps:
    """What ``watch_steps`` and ``watch_async_steps`` tell the call's record of each step; nothing when unrecorded."""

    __slots__ = ("_record",)

    def __init__(self, call: PendingCall) -> None:
        """The first step is over (it sent the call, or the SDK had nothing to send): a stream starts if recorded."""
        self._record = call.record
        if self._record is not None:
            self._record.start_stream()

    def fed(self, chunk: object) -> object:
        """``chunk``, fed to the record on its way to the caller."""
        if self._record is not None:
            self._record.feed(chunk)
        return chunk

    def closed(self) -> None:
        """The caller closed the generator (``close()``, collection): the caller's stop."""
        if self._record is not None:
            self._record.finish(caller_closed=True)

    def failed(self, exc: BaseException) -> None:
        """The SDK's generator raised ``exc`` (or the read was interrupted)."""
        if self._record is not None:
            _read_failed(self._record, exc)

    def ended(self) -> None:
        """The SDK's generator is exhausted: the provider's stream ended."""
        if self._record is not None:
            self._record.finish()


def watch_steps(steps: Iterator[object], call: PendingCall) -> Iterator[object]:
    """``steps`` (an SDK generator whose first step sends), watched: each chunk fed, the call finished once.

    Ends as a stream does (see the module docstring): exhausted or raising an ``Exception``, the
    provider's end; closed (``close()``, collected) or interrupted, the caller's stop. Closing it
    closes ``steps``, as ``yield from`` would. A first step that raises before the send (the SDK
    refusing its arguments) records nothing.
    """
    try:
        with call.sending():
            first = next(steps)
    except StopIteration:
        _Steps(call).ended()
        return
    except BaseException as exc:
        call.failed(exc)
        raise
    watched = _Steps(call)
    try:
        yield watched.fed(first)
        for chunk in steps:
            yield watched.fed(chunk)
    except GeneratorExit:
        watched.closed()
        close = getattr(steps, "close", None)
        if callable(close):
            close()
        raise
    except BaseException as exc:
        watched.failed(exc)
        raise
    watched.ended()


async def watch_async_steps(steps: AsyncIterator[object], call: PendingCall) -> AsyncGenerator[object, None]:
    """``steps`` (an SDK async generator whose first step sends), watched as ``watch_steps`` watches a generator.

    Closing it (``aclose()``, collection) closes ``steps`` with its ``aclose()``.
    """
    try:
        with call.sending():
            first = await anext(steps)
    except StopAsyncIteration:
        _Steps(call).ended()
        return
    except BaseException as exc:
        call.failed(exc)
        raise
    watched = _Steps(call)
    try:
        yield watched.fed(first)
        async for chunk in steps:
            yield watched.fed(chunk)
    except GeneratorExit:
        watched.closed()
        close = getattr(steps, "aclose", None)
        if callable(close):
            await close()
        raise
    except BaseException as exc:
        watched.failed(exc)
        raise
    watched.ended()


def swap_raw_stream(stream: object, record: CallRecord) -> None:
    """Have an Anthropic ``MessageStream`` read its raw events through a ``StreamProxy``."""
    raw = stream._raw_stream  # type: ignore[attr-defined]
    proxy_type = AsyncStreamProxy if hasattr(raw, "__aiter__") else StreamProxy
    stream._raw_stream = proxy_type(raw, record)  # type: ignore[attr-defined]


def swap_http_data(response: object, record: CallRecord) -> None:
    """Have a cohere ``HttpResponse`` / ``AsyncHttpResponse`` of a stream give its events through a ``StreamProxy``.

    Its ``data`` is the SDK's generator (async: async generator) of the stream's events.
    """
    data = response._data  # type: ignore[attr-defined]
    proxy_type = AsyncStreamProxy if hasattr(data, "__aiter__") else StreamProxy
    response._data = proxy_type(data, record)  # type: ignore[attr-defined]


class StreamManagerProxy(wrapt.ObjectProxy[Any]):
    """A manager whose entry sends the call (Anthropic's ``messages.stream()``, cohere's raw ``chat_stream``).

    The request was decided when the manager was made; the SDK sends it only on entry, so a manager
    never entered records nothing. What the entry gives is the SDK's own object, made by ``entered``
    to read its events through a ``StreamProxy``.
    """

    def __init__(self, wrapped: object, call: PendingCall, entered: Callable[[object, CallRecord], None]) -> None:
        super().__init__(wrapped)
        self._self_call = call
        self._self_enter = entered

    def _self_entered(self, stream: object) -> object:
        record = self._self_call.record
        if record is None:
            return stream
        try:
            self._self_enter(stream, record)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            record.telemetry.error("stream", exc)
        return stream

    def __enter__(self) -> object:
        call = self._self_call
        try:
            with call.sending():
                stream = self.__wrapped__.__enter__()
        except BaseException as exc:
            call.failed(exc)
            raise
        return self._self_entered(stream)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        try:
            return cast("bool | None", self.__wrapped__.__exit__(exc_type, exc, tb))
        finally:
            self._self_call.finish()

    async def __aenter__(self) -> object:
        call = self._self_call
        try:
            with call.sending():
                stream = await self.__wrapped__.__aenter__()
        except BaseException as exc:
            call.failed(exc)
            raise
        return self._self_entered(stream)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        try:
            return cast("bool | None", await self.__wrapped__.__aexit__(exc_type, exc, tb))
        finally:
            self._self_call.finish()
