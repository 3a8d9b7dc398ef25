"""``instrument.calls``: the seam integrations run their calls through names the instrumentation's own stages."""

from __future__ import annotations

from otel_toolturn.instrument import _patches, _proxies, _record, _request, calls
from otel_toolturn.instrument._patches import STATE
from tests.instrument.conftest import Instrument


def test_live_telemetry_is_the_live_instrumentations(instrument: Instrument) -> None:
    """``live_telemetry()`` is ``None`` while uninstrumented and the instrumentation's telemetry while live."""
    assert calls.live_telemetry() is None
    instrument()
    assert calls.live_telemetry() is STATE.telemetry is not None


def test_the_seam_hands_out_the_stages_themselves() -> None:
    """Each name of the seam is the very object its stage defines: no second copy to drift."""
    assert calls.CallRecord is _record.CallRecord
    assert calls.decide_request is _request.decide_request
    assert calls.record_sent is _request.record_sent
    assert calls.materialise is _request.materialise
    assert calls.StreamProxy is _proxies.StreamProxy
    assert calls.AsyncStreamProxy is _proxies.AsyncStreamProxy
    assert calls.when_collected is _proxies.when_collected
    assert calls.server_of is _patches.server_of
