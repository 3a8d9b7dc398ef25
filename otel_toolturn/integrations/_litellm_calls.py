"""The records of LiteLLM calls in flight, by LiteLLM's call id: one per HTTP request, ended once.

Role: the bookkeeping between LiteLLM's hooks and its entry points. A record starts when the
request goes out (``start``) and ends on the first of: the provider's response read (``take``
then ``response``), the entry-point call it belongs to returning, raising or handing back a
stream (``take_all``: the call's own end, see ``_litellm_entries``), the call's success or failure
callback (a call made through no patched entry point), the next request of the same call (a
retry: the earlier attempt ends), or eviction once more than ``capacity`` calls are open (a stream
nobody finished: its span ends then, not never). No OpenTelemetry here beyond ``CallRecord``'s
own ``finish``.

Which entry-point call a request belongs to: ``CallScope``, made current (``SCOPE``) while a
patched entry point runs; the hook that starts a record notes its call id there (``join``).
LiteLLM runs its hooks in the call's own context (a copy of it on its worker threads, which shares
the scope), so a scope holds exactly the requests its call sent.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from contextvars import ContextVar
from typing import Final

from otel_toolturn.instrument.calls import CallRecord

CAPACITY: Final = 1024
"""The most calls kept open at once; the oldest is ended past it."""


class OpenCalls:
    """Open ``CallRecord``s by LiteLLM call id (thread-safe: LiteLLM calls back from its own threads)."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()
        self._records: OrderedDict[str, CallRecord] = OrderedDict()

    def start(self, call_id: str, record: CallRecord) -> None:
        """Keep ``record`` as the call's open request; an earlier one of the call, or the oldest past capacity, ends."""
        ended: list[CallRecord] = []
        with self._lock:
            earlier = self._records.pop(call_id, None)
            if earlier is not None:
                ended.append(earlier)
            self._records[call_id] = record
            while len(self._records) > self._capacity:
                ended.append(self._records.popitem(last=False)[1])
        for old in ended:
            old.finish()

    def peek(self, call_id: str) -> CallRecord | None:
        """The call's open record, left open."""
        with self._lock:
            return self._records.get(call_id)

    def take(self, call_id: str) -> CallRecord | None:
        """The call's open record, no longer kept (the caller ends it)."""
        with self._lock:
            return self._records.pop(call_id, None)

    def take_all(self, call_ids: Iterable[str]) -> list[CallRecord]:
        """The open records of ``call_ids``, in that order (each id once), no longer kept (the caller ends them)."""
        with self._lock:
            taken = (self._records.pop(call_id, None) for call_id in dict.fromkeys(call_ids))
            return [record for record in taken if record is not None]

    def close_all(self) -> None:
        """End every open record (the integration is being removed)."""
        with self._lock:
            records = list(self._records.values())
            self._records.clear()
        for record in records:
            record.finish()

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)


class CallScope:
    """The call ids of the requests one entry-point call sent, in the order they went out."""

    __slots__ = ("call_ids",)

    def __init__(self) -> None:
        self.call_ids: list[str] = []


SCOPE: Final[ContextVar[CallScope | None]] = ContextVar("otel_toolturn_litellm_scope", default=None)
"""The entry-point call running in this context (``None``: none, or one made through no patched entry point)."""


def join(call_id: str) -> None:
    """Note ``call_id`` as a request of the entry-point call running in this context (none: nothing to do)."""
    scope = SCOPE.get()
    if scope is not None:
        scope.call_ids.append(call_id)
