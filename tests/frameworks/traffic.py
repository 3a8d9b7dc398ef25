"""What every framework test checks of the traffic: each request valid, one span and one count per request."""

from __future__ import annotations

from otel_toolturn import Dialect, Lane, validate
from otel_toolturn.instrument import names
from otel_toolturn.simulator import RecordedRequest, Simulator
from tests.instrument.conftest import Otel


def _items(request: RecordedRequest) -> object:
    """The transcript a request carries: ``input`` on Responses, ``messages`` elsewhere."""
    assert isinstance(request.body, dict), request.body
    return request.body["input" if request.lane == "openai.responses" else "messages"]


def assert_traffic(sim: Simulator, otel: Otel, *, lane: Lane, requests: int, dialect: Dialect | None = None) -> None:
    """``requests`` requests of ``lane`` reached the simulator, each valid, each one span and one count.

    Valid: served (not refused) and ``validate`` finds nothing in its transcript (in ``dialect``, if
    given). Recorded once: one call span per request, carrying the lane, none in error;
    ``toolturn.requests`` equals the number of requests; ``toolturn.repairs`` equals the repairs the
    spans report.
    """
    received = sim.requests
    assert [(r.lane, r.status, r.error) for r in received] == [(lane, 200, None)] * requests
    for request in received:
        items = _items(request)
        assert isinstance(items, list | str)
        assert validate(items, lane=lane, dialect=dialect) == [], items
    spans = otel.call_spans()
    assert [s.attributes[names.LANE] for s in spans if s.attributes] == [lane] * requests
    assert [s.status.status_code.name for s in spans] == ["UNSET"] * requests
    assert otel.total(names.REQUESTS.name) == requests
    assert otel.total(names.REQUESTS.name, toolturn__lane=lane) == requests
    reported = [s.attributes.get(names.REPAIRS_COUNT, 0) for s in spans if s.attributes]
    assert all(isinstance(count, int) for count in reported), reported
    assert otel.total(names.REPAIRS.name) == sum(count for count in reported if isinstance(count, int))
