"""The simulator's rules against the real broken shapes: the provider's error, then the law's view accepted."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from otel_toolturn import Lane, ensure_tool_turn_invariants
from otel_toolturn.simulator import Simulator
from tests.simulator.sim_cases import CASES, CHAINED_CASES, Case, ChainedCase
from tests.simulator.sim_wire import PATHS, request_body


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator() as simulator:
        yield simulator


def post(sim: Simulator, lane: Lane, body: dict[str, object]) -> httpx.Response:
    return httpx.post(sim.base_url + PATHS[lane], json=body)


def error_message(lane: Lane, response: httpx.Response) -> str:
    """The error's message, after checking the body has the provider's own error shape."""
    body = response.json()
    if lane == "anthropic.messages":
        assert body["type"] == "error"
        assert body["error"]["type"] == "invalid_request_error"
        return str(body["error"]["message"])
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["param"] == ("messages" if lane == "openai.chat_completions" else "input")
    assert body["error"]["code"] is None
    return str(body["error"]["message"])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_broken_shape_gets_the_providers_400(sim: Simulator, case: Case) -> None:
    """Each real broken shape is refused with HTTP 400, the provider's error body and its words."""
    response = post(sim, case.lane, request_body(case.lane, case.messages))
    assert response.status_code == 400
    message = error_message(case.lane, response)
    for fragment in case.fragments:
        assert fragment in message


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_repaired_view_is_accepted(sim: Simulator, case: Case) -> None:
    """The law's view of each real broken shape is served (HTTP 200), after at least one repair."""
    view = ensure_tool_turn_invariants(case.messages, lane=case.lane)
    assert view.repairs
    response = post(sim, case.lane, request_body(case.lane, list(view.messages)))
    assert response.status_code == 200, response.text


def first_call(sim: Simulator) -> tuple[str, list[object], str, str]:
    """Send a first Responses request that earns a call; return the reply id, the held items and the call's ids."""
    opening = [{"type": "message", "role": "user", "content": "find order 1187"}]
    reply = post(sim, "openai.responses", request_body("openai.responses", opening)).json()
    call = reply["output"][-1]
    assert call["type"] == "function_call"
    return str(reply["id"]), [*opening, *reply["output"]], str(call["call_id"]), str(call["id"])


@pytest.mark.parametrize("case", CHAINED_CASES, ids=[c.name for c in CHAINED_CASES])
def test_chained_broken_shape_gets_the_providers_400(sim: Simulator, case: ChainedCase) -> None:
    """A chained request is judged with the items the provider holds: the real chained shapes are refused."""
    reply_id, _, call_id, item_id = first_call(sim)
    body = request_body("openai.responses", case.build(call_id, item_id), previous_response_id=reply_id)
    response = post(sim, "openai.responses", body)
    assert response.status_code == 400
    message = error_message("openai.responses", response)
    for fragment in case.fragments(call_id, item_id):
        assert fragment in message


@pytest.mark.parametrize("case", CHAINED_CASES, ids=[c.name for c in CHAINED_CASES])
def test_chained_repaired_view_is_accepted(sim: Simulator, case: ChainedCase) -> None:
    """The law over held items plus input keeps the held part as it is; the rest, sent chained, is served."""
    reply_id, held, call_id, item_id = first_call(sim)
    view = ensure_tool_turn_invariants([*held, *case.build(call_id, item_id)], lane="openai.responses")
    assert view.repairs
    assert list(view.messages[: len(held)]) == held
    body = request_body("openai.responses", list(view.messages[len(held) :]), previous_response_id=reply_id)
    response = post(sim, "openai.responses", body)
    assert response.status_code == 200, response.text
