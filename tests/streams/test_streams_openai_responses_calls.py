"""The Responses observer over calls the agent runs: local shell, shell, apply patch and computer calls."""

from __future__ import annotations

from typing import Final

import pytest

from otel_toolturn._vocab import Lane
from otel_toolturn.lanes.openai_responses import REQUEST_FIELDS
from otel_toolturn.streams._truncation_cause import TRANSPORT_CLAUSE
from tests.streams._drive import both, raw_report
from tests.streams._frames import Frame, r_created, r_end, r_item_added, r_item_done

LANE: Final[Lane] = "openai.responses"
REQUESTS: Final[dict[str, tuple[str, dict[str, object]]]] = {
    "local_shell_call": ("action", {"type": "exec", "command": ["ls", "-la"], "env": {}}),
    "shell_call": ("action", {"commands": ["ls -la"]}),
    "apply_patch_call": ("operation", {"type": "update_file", "path": "a.py", "diff": "@@\n-a\n+b"}),
    "computer_call": ("action", {"type": "click", "button": "left", "x": 10, "y": 20}),
}
"""One call item of each kind the agent runs: its request field and object."""
TYPES: Final = tuple(REQUESTS)


def _item(item_type: str, call_id: str, status: str) -> Frame:
    key, request = REQUESTS[item_type]
    item: Frame = {"type": item_type, "id": f"it_{call_id}", "call_id": call_id, key: request, "status": status}
    if item_type == "computer_call":
        item["pending_safety_checks"] = []
    return item


def _added(index: int, item_type: str, call_id: str) -> Frame:
    return {
        "type": "response.output_item.added",
        "output_index": index,
        "item": _item(item_type, call_id, "in_progress"),
    }


def _done(index: int, item_type: str, call_id: str) -> Frame:
    return {"type": "response.output_item.done", "output_index": index, "item": _item(item_type, call_id, "completed")}


def test_the_stream_reads_exactly_the_calls_the_lane_says_the_agent_runs() -> None:
    """The kinds this module drives are the lane's own table of calls with a request object."""
    assert set(REQUEST_FIELDS) == set(TYPES)
    assert {key for key, _ in REQUESTS.values()} == set(REQUEST_FIELDS.values())


@pytest.mark.parametrize("item_type", TYPES)
def test_a_whole_call_of_each_kind_is_a_call_named_by_its_type(item_type: str) -> None:
    """Added then done: one call, named by its item type, its arguments the object it asks with (SDK path agrees)."""
    r = both(LANE, [r_created(), _added(0, item_type, "call_1"), _done(0, item_type, "call_1"), r_end()])
    assert [(c.call_id, c.name, dict(c.arguments)) for c in r.calls] == [("call_1", item_type, REQUESTS[item_type][1])]
    assert (r.drops, r.torn) == ((), False)


@pytest.mark.parametrize("item_type", TYPES)
def test_a_torn_stream_with_one_open_is_counted_like_an_open_function_call(item_type: str) -> None:
    """Added, no done, no ending: a truncated drop naming the call, exactly as for a function call left open."""
    r = raw_report(LANE, [r_created(), _added(0, item_type, "call_1")])
    function = raw_report(LANE, [r_created(), r_item_added(0, "call_1", "f")])
    assert r.calls == function.calls == ()
    assert [(d.cause, d.count, d.call_ids) for d in r.drops] == [("truncated", 1, ("call_1",))]
    assert [(d.cause, d.count, d.call_ids) for d in function.drops] == [("truncated", 1, ("call_1",))]
    assert r.torn is function.torn is True
    assert r.truncation_clause == function.truncation_clause == TRANSPORT_CLAUSE


def test_a_run_mixing_kinds_keeps_each_call_and_drops_only_the_open_one() -> None:
    """A shell call done, a function call done, a computer call left open when the stream ends: two calls, one drop."""
    frames = [
        r_created(),
        _added(0, "shell_call", "call_s"),
        _done(0, "shell_call", "call_s"),
        r_item_added(1, "call_f", "f"),
        r_item_done(1, "call_f", "f", "{}"),
        _added(2, "computer_call", "call_k"),
        r_end(),
    ]
    r = raw_report(LANE, frames)
    assert [(c.call_id, c.name) for c in r.calls] == [("call_s", "shell_call"), ("call_f", "f")]
    assert [(d.cause, d.call_ids) for d in r.drops] == [("truncated", ("call_k",))]


def test_hosted_calls_are_no_calls_of_the_client() -> None:
    """A web search or MCP call the server runs opens no slot: nothing to judge, nothing dropped."""
    hosted: Frame = {"type": "web_search_call", "id": "ws_1", "status": "in_progress"}
    frames = [r_created(), {"type": "response.output_item.added", "output_index": 0, "item": hosted}]
    r = raw_report(LANE, [*frames, r_end()])
    assert (r.calls, r.drops) == ((), ())
