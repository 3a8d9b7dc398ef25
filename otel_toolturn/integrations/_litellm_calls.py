"""The records of LiteLLM calls in flight, by LiteLLM's call id: one per HTTP request, ended once.

Role: the bookkeeping between LiteLLM's hooks. A record starts when the request goes out
(``start``) and ends on the first of: the provider's response read (``take`` then ``response``),
the call's success or failure callback, the next request of the same call (a retry: the earlier
attempt ends), or eviction once more than ``capacity`` calls are open (a stream nobody finished:
its span ends then, not never). No OpenTelemetry here beyond ``CallRecord``'s own ``finish``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Final

from otel_toolturn.instrument._record import CallRecord

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
