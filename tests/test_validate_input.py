"""Bad input to ``validate``, the law and ``check``: a typed error or the provider's refusal, never a crash."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_toolturn import cli
from otel_toolturn._errors import ToolTurnInputError, UnknownLaneError
from otel_toolturn._law import ensure_tool_turn_invariants
from otel_toolturn._validate import validate
from otel_toolturn._vocab import LANES, Lane

JSON: Final = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["", "c1", "c2", "user", "assistant", "x"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "id", "type"]), inner, max_size=3)
    ),
    max_leaves=6,
)
"""Arbitrary JSON values (small)."""

TEMPLATES: Final[tuple[Mapping[str, object], ...]] = (
    {"role": "user", "content": "q"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "r"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "t", "signature": "s"},
            {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "r"}]},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "r"},
    {"type": "custom_tool_call", "call_id": "c2", "name": "g", "input": "x"},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
)
"""One well-formed item of each kind the lanes read, for the strategy to bend."""

_DROPPED: Final = object()


def _bent(value: object) -> st.SearchStrategy[object]:
    """``value`` with any part of it kept, bent in turn, replaced by arbitrary JSON, or (in a dict) left out."""
    if isinstance(value, Mapping):
        fields = {key: st.one_of(_bent(item), JSON, st.just(_DROPPED)) for key, item in value.items()}
        return st.fixed_dictionaries(fields).map(lambda d: {k: v for k, v in d.items() if v is not _DROPPED})
    if isinstance(value, list):
        return st.lists(st.one_of(*(_bent(item) for item in value), JSON), max_size=3)
    return st.one_of(st.just(value), JSON)


ITEMS: Final = st.lists(st.one_of(*(_bent(t) for t in TEMPLATES), JSON), max_size=6)
"""Transcripts of JSON-shaped items: each a bent well-formed item of some lane, or arbitrary JSON."""


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(items=ITEMS, lane=st.sampled_from(LANES), chained=st.booleans())
def test_validate_raises_nothing_but_a_typed_input_error(items: list[object], lane: Lane, chained: bool) -> None:
    """``validate`` over any JSON-shaped items in any lane answers violations or ``ToolTurnInputError``."""
    with contextlib.suppress(ToolTurnInputError):
        validate(items, lane=lane, chained=chained)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(items=ITEMS, lane=st.sampled_from(LANES), chained=st.booleans())
def test_the_law_raises_nothing_but_a_typed_input_error(items: list[object], lane: Lane, chained: bool) -> None:
    """``ensure_tool_turn_invariants`` over any JSON-shaped items in any lane: a view or ``ToolTurnInputError``."""
    with contextlib.suppress(ToolTurnInputError):
        ensure_tool_turn_invariants(items, lane=lane, chained=chained)


@contextlib.contextmanager
def _quiet() -> Iterator[io.StringIO]:
    """Standard output dropped and standard error kept, while the command runs."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        yield err


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(items=ITEMS, lane=st.sampled_from([None, *LANES]))
def test_check_never_reports_an_internal_error(items: list[object], lane: Lane | None) -> None:
    """``otel-toolturn check`` on any such file exits with a documented code, never an internal error."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.json"
        path.write_text(json.dumps(items), encoding="utf-8")
        argv = ["check", str(path), "--json", *(["--lane", lane] if lane else [])]
        with _quiet() as err:
            code = cli.main(argv)
    assert code in {0, 1, 2, cli.EXIT_UNREADABLE}
    assert "internal error" not in err.getvalue()
    assert len(err.getvalue().splitlines()) == (1 if code == cli.EXIT_UNREADABLE else 0)


@pytest.mark.parametrize(
    ("call_id", "got"), [(["c1"], "an array"), ({"id": "c1"}, "an object"), (7, "an integer"), (True, "a boolean")]
)
@pytest.mark.parametrize("kind", ["function_call", "function_call_output"])
def test_a_call_id_of_another_type_is_the_providers_refusal(call_id: object, got: str, kind: str) -> None:
    """A Responses ``call_id`` that is no string (a list, an object, a number) is refused as OpenAI refuses it."""
    extra = {"name": "f", "arguments": "{}"} if kind == "function_call" else {"output": "r"}
    items = [
        {"type": "function_call", "call_id": "c0", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c0", "output": "r"},
        {"type": kind, "call_id": call_id, **extra},
    ]
    (violation,) = validate(items, lane="openai.responses")
    assert (violation.position, violation.rule) == (2, "invalid_type")
    assert violation.message == f"Invalid type for 'input[2].call_id': expected a string, but got {got} instead."


@pytest.mark.parametrize("lane", [None, 3, "", "openai", ["openai.responses"]])
def test_an_unknown_lane_is_a_typed_error(lane: object) -> None:
    """``lane`` outside the closed set (``None``, a number, a near miss, a list) raises ``UnknownLaneError``."""
    with pytest.raises(UnknownLaneError, match="expected one of"):
        validate([], lane=lane)  # type: ignore[arg-type]
    with pytest.raises(UnknownLaneError, match="expected one of"):
        ensure_tool_turn_invariants([], lane=lane)  # type: ignore[arg-type]


def test_the_simulator_refuses_a_list_call_id_with_a_400() -> None:
    """The provider simulator answers a list ``call_id`` with OpenAI's 400, not a dropped connection."""
    openai = pytest.importorskip("openai", reason="the openai SDK is not installed")
    from otel_toolturn.simulator import Simulator  # noqa: PLC0415 - the simulator only where it is used

    items = [{"type": "function_call", "call_id": ["c1"], "name": "f", "arguments": "{}"}]
    with (
        Simulator() as sim,
        openai.OpenAI(base_url=sim.openai_base_url, api_key="test-key", max_retries=0) as client,
        pytest.raises(openai.BadRequestError, match=r"Invalid type for 'input\[0\]\.call_id'"),
    ):
        client.responses.create(model="gpt-test", input=items)
