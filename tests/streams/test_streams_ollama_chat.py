"""Ollama's native chat stream observer and whole-reply check, fed NDJSON lines as the SDK and the wire give them.

Lines are Ollama's ``/api/chat`` objects (https://github.com/ollama/ollama/blob/main/docs/api.md): content
pieces with ``done: false``, each call whole with its arguments an object, one ``done: true`` line with
``done_reason`` and the counts.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Final

import ollama

from otel_toolturn.streams import StreamReport, check_response, observer_for

LANE: Final = "openai.chat_completions"
MODEL: Final = "llama3.2"


def line(
    content: str = "", calls: Sequence[object] = (), *, done: bool = False, reason: str = "stop"
) -> dict[str, object]:
    """One NDJSON line of Ollama's chat stream (``done``: the last, with its reason and counts)."""
    message: dict[str, object] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = list(calls)
    found: dict[str, object] = {"model": MODEL, "created_at": "2025-01-01T00:00:00Z", "message": message, "done": done}
    if done:
        found |= {"done_reason": reason, "prompt_eval_count": 12, "eval_count": 7}
    return found


def call(name: str, arguments: object) -> dict[str, object]:
    return {"function": {"name": name, "arguments": arguments}}


def fed(lines: Sequence[object]) -> StreamReport:
    """Each line fed as it is to a new Ollama observer; unaltered; ``finish`` repeatable."""
    before = copy.deepcopy(list(lines))
    observer = observer_for(LANE, requested_model=MODEL, reply_format="ollama.chat")
    for each in lines:
        observer.feed(each)
    report = observer.finish()
    assert observer.finish() == report
    assert list(lines) == before
    return report


def test_a_whole_call_and_the_done_line_are_read_from_dicts_typed_lines_and_raw_text() -> None:
    """A call with object arguments runs; ``stop`` and the counts are read, whether dicts, ``ChatResponse`` or text."""
    lines = [line("Looking"), line(calls=[call("search", {"q": "otel"})]), line(done=True)]
    for spelled in (
        lines,
        [ollama.ChatResponse.model_validate(each) for each in lines],
        [json.dumps(each) for each in lines],
    ):
        report = fed(spelled)
        assert [(c.name, dict(c.arguments)) for c in report.calls] == [("search", {"q": "otel"})]
        assert (report.drops, report.finish_reasons, report.torn) == ((), ("stop",), False)
        assert (report.usage.input_tokens, report.usage.output_tokens) == (12, 7)


def test_no_done_line_is_torn_and_content_after_it_is_counted() -> None:
    """No ``done`` line: torn. A line with content after the ``done`` line is an ending ignored, counted."""
    assert fed([line("Nearly")]).torn
    report = fed([line("Done."), line(done=True), line(" late"), line(done=True)])
    assert report.torn is False
    assert report.ends_ignored is not None
    assert report.ends_ignored.statement == "content"


def test_a_whole_reply_cut_by_the_cap_says_length_and_arguments_that_are_no_object_do_not_run() -> None:
    """``check_response``: ``length`` is the cap's stop; a call whose arguments are a string is dropped."""
    reply = line("", [call("search", '{"q": "otel"}')], done=True, reason="length")
    report = check_response(LANE, reply, requested_model=MODEL, reply_format="ollama.chat")
    assert report.finish_reasons == ("length",)
    assert report.calls == ()
    assert len(report.drops) == 1
