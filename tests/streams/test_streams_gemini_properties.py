"""Properties over generated Gemini streams: whole calls run with their exact arguments; a cap-cut call never runs."""

from __future__ import annotations

from typing import Final

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.streams._drive import raw_report
from tests.streams._frames import Frame, g_call, g_chunk, snake
from tests.streams.test_streams_properties import arguments

LANE: Final = "gemini.generate_content"
calls = st.lists(arguments, min_size=1, max_size=4)
splits = st.lists(st.integers(min_value=1, max_value=3), max_size=4)


def chunks(all_args: list[dict[str, object]], sizes: list[int], finish: str) -> list[Frame]:
    """The calls as parts spread over chunks of ``sizes`` parts each (the rest in the last), ``finish`` on the last."""
    parts = [g_call(f"tool_{i}", args, call_id=f"c{i}") for i, args in enumerate(all_args)]
    frames: list[Frame] = []
    for size in sizes:
        if len(parts) <= 1:
            break
        frames.append(g_chunk(*parts[:size]))
        parts = parts[size:]
    frames.append(g_chunk(*parts, finish=finish))
    return frames


@settings(max_examples=100, deadline=None)
@given(all_args=calls, sizes=splits, spelled_snake=st.booleans())
def test_whole_calls_run_with_their_exact_arguments(
    all_args: list[dict[str, object]], sizes: list[int], spelled_snake: bool
) -> None:
    """Any calls, in any chunking and either dict spelling, under STOP: every call, arguments equal, in order."""
    frames = chunks(all_args, sizes, "STOP")
    r = raw_report(LANE, [snake(f) for f in frames] if spelled_snake else frames)  # type: ignore[misc]
    assert r.drops == ()
    assert [(c.call_id, dict(c.arguments)) for c in r.calls] == [(f"c{i}", a) for i, a in enumerate(all_args)]


@settings(max_examples=100, deadline=None)
@given(all_args=calls, sizes=splits)
def test_the_call_the_cap_cut_never_runs(all_args: list[dict[str, object]], sizes: list[int]) -> None:
    """Under MAX_TOKENS the last call is a truncated drop; every earlier call runs."""
    r = raw_report(LANE, chunks(all_args, sizes, "MAX_TOKENS"))
    last = len(all_args) - 1
    assert [(d.cause, d.count, d.call_ids) for d in r.drops] == [("truncated", 1, (f"c{last}",))]
    assert [c.call_id for c in r.calls] == [f"c{i}" for i in range(last)]
