"""The stream observers' cost per event, as a ratio of the SDK's own cost of iterating the same stream.

For each lane, a 5,000-event stream is served by the HTTP client's mock transport (no network);
the real SDK client iterates it with ``stream=True`` — alone, with the lane's observer fed every
event (and finished at the end), and with a do-nothing callback as the control. Each round runs
the three back to back in a rotating order so drift hits all alike; the ratio is the median
with the observer over the median alone, and the control's ratio shows the noise floor; the
paired ratio is the median, over rounds, of each round's own ratio (what drift between rounds
leaves alone). The observer's own cost is also timed alone, on the SDK's event objects, beside
its cost in situ (the difference of the medians, per event): interleaved with the SDK's work,
the same instructions cost several times more than in a loop of their own. Run:
``python -m bench.stream [--rounds N | --quick] [--lane LANE] [--cpu]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable, Iterable

import anthropic
import httpx
import httpx2
import openai
from google import genai
from google.genai import types as genai_types

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import observer_for

CLOCK: list[Callable[[], float]] = [time.perf_counter]
"""The clock every timing reads: ``time.perf_counter``, or ``time.process_time`` with ``--cpu``."""
EVENTS = 5_000
TEXT_EVENTS = 2_500
Frame = dict[str, object]


def words(i: int) -> str:
    return f"word{i % 997} is {i} "


def anthropic_frames() -> list[Frame]:
    frames: list[Frame] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "model-a",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    frames += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": words(i)}}
        for i in range(TEXT_EVENTS)
    ]
    frames += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        },
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"k": "'}},
    ]
    tail: list[Frame] = [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5000}},
        {"type": "message_stop"},
    ]
    fill = EVENTS - len(frames) - len(tail)
    frames += [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": f"x{i}"}}
        for i in range(fill)
    ]
    return frames + tail


def chat_chunk(delta: Frame, finish: str | None = None, usage: Frame | None = None) -> Frame:
    choices = [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else []
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "model-a",
        "choices": choices,
        "usage": usage,
    }


def chat_frames() -> list[Frame]:
    frames = [chat_chunk({"role": "assistant", "content": ""})]
    frames += [chat_chunk({"content": words(i)}) for i in range(TEXT_EVENTS)]
    frames.append(
        chat_chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"k": "'}}
                ]
            }
        )
    )
    tail = [
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}),
        chat_chunk({}, finish="tool_calls"),
        chat_chunk({}, usage={"prompt_tokens": 10, "completion_tokens": 5000, "total_tokens": 5010}),
    ]
    fill = EVENTS - len(frames) - len(tail)
    frames += [chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": f"x{i}"}}]}) for i in range(fill)]
    return frames + tail


def responses_frames() -> list[Frame]:
    def response(status: str) -> Frame:
        usage = {"input_tokens": 10, "output_tokens": 5000, "total_tokens": 5010} if status == "completed" else None
        return {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": "model-a",
            "status": status,
            "output": [],
            "usage": usage,
        }

    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""}
    frames: list[Frame] = [{"type": "response.created", "sequence_number": 0, "response": response("in_progress")}]
    frames += [
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": words(i),
            "sequence_number": i + 1,
        }
        for i in range(TEXT_EVENTS)
    ]
    frames.append({"type": "response.output_item.added", "output_index": 1, "item": item, "sequence_number": 0})
    frames.append(
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 1,
            "delta": '{"k": "',
            "sequence_number": 0,
        }
    )
    tail: list[Frame] = [
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 1,
            "delta": '"}',
            "sequence_number": 0,
        },
        {"type": "response.completed", "response": response("completed"), "sequence_number": 0},
    ]
    fill = EVENTS - len(frames) - len(tail)
    frames += [
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 1,
            "delta": f"x{i}",
            "sequence_number": 0,
        }
        for i in range(fill)
    ]
    return frames + tail


def gemini_frames() -> list[Frame]:
    """Text chunks, then one chunk with a whole call, its finish reason and usage (Gemini streams calls whole)."""

    def chunk(parts: list[Frame], finish: str | None = None) -> Frame:
        candidate: Frame = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        frame: Frame = {"candidates": [candidate], "modelVersion": "model-a", "responseId": "r1"}
        if finish is not None:
            frame["usageMetadata"] = {"promptTokenCount": 10, "candidatesTokenCount": EVENTS, "totalTokenCount": 5010}
        return frame

    frames = [chunk([{"text": words(i)}]) for i in range(EVENTS - 1)]
    call: Frame = {"functionCall": {"name": "lookup", "args": {"k": "v"}, "id": "fc_1"}, "thoughtSignature": "c2ln"}
    return [*frames, chunk([call], finish="STOP")]


def sse(lane: Lane, frames: list[Frame]) -> bytes:
    prefix = lane == "anthropic.messages"
    body = "".join((f"event: {f['type']}\n" if prefix else "") + f"data: {json.dumps(f)}\n\n" for f in frames)
    return (body + ("data: [DONE]\n\n" if lane == "openai.chat_completions" else "")).encode()


def transport(body: bytes) -> httpx2.Client:
    def handler(_request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx2.Client(transport=httpx2.MockTransport(handler))


def iterator_for(lane: Lane, body: bytes) -> Callable[[], Iterable[object]]:
    if lane == "gemini.generate_content":

        def answer(_request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

        http = httpx.Client(transport=httpx.MockTransport(answer))
        g = genai.Client(api_key="k", http_options=genai_types.HttpOptions(httpx_client=http))
        return lambda: g.models.generate_content_stream(model="model-a", contents="hi")
    if lane == "anthropic.messages":
        a = anthropic.Anthropic(api_key="k", http_client=transport(body), max_retries=0)
        return lambda: a.messages.create(
            model="model-a", max_tokens=8192, messages=[{"role": "user", "content": "hi"}], stream=True
        )
    o = openai.OpenAI(api_key="k", http_client=transport(body), max_retries=0)
    if lane == "openai.chat_completions":
        return lambda: o.chat.completions.create(
            model="model-a", messages=[{"role": "user", "content": "hi"}], stream=True
        )
    return lambda: o.responses.create(model="model-a", input="hi", stream=True)


def sdk_only(stream: Callable[[], Iterable[object]]) -> tuple[float, int]:
    started = CLOCK[0]()
    count = 0
    for _event in stream():
        count += 1
    return CLOCK[0]() - started, count


def with_observer(lane: Lane, stream: Callable[[], Iterable[object]]) -> tuple[float, int]:
    started = CLOCK[0]()
    observer = observer_for(lane, requested_model="model-a")
    feed = observer.feed
    count = 0
    for event in stream():
        feed(event)
        count += 1
    report = observer.finish()
    elapsed = CLOCK[0]() - started
    if len(report.calls) != 1 or report.torn or report.drops:
        raise SystemExit(f"{lane}: the benchmark stream did not read whole: {report!r}")
    return elapsed, count


def observer_alone(lane: Lane, events: list[object]) -> float:
    started = CLOCK[0]()
    observer = observer_for(lane, requested_model="model-a")
    for event in events:
        observer.feed(event)
    observer.finish()
    return CLOCK[0]() - started


FRAMES: dict[Lane, Callable[[], list[Frame]]] = {
    "anthropic.messages": anthropic_frames,
    "openai.chat_completions": chat_frames,
    "openai.responses": responses_frames,
    "gemini.generate_content": gemini_frames,
}


def with_noop(stream: Callable[[], Iterable[object]]) -> tuple[float, int]:
    """The control: the same loop calling a do-nothing function per event (the harness's own cost and noise)."""

    def nothing(_event: object) -> None:
        return None

    started = CLOCK[0]()
    count = 0
    for event in stream():
        nothing(event)
        count += 1
    return CLOCK[0]() - started, count


def paired_rounds(
    lane: Lane, stream: Callable[[], Iterable[object]], rounds: int
) -> tuple[list[float], list[float], list[float]]:
    """Time the SDK alone, with the observer and with the control, in adjacent triples, rotating the order."""
    runs: list[Callable[[], float]] = [
        lambda: sdk_only(stream)[0],
        lambda: with_observer(lane, stream)[0],
        lambda: with_noop(stream)[0],
    ]
    timings: list[list[float]] = [[], [], []]
    for i in range(rounds):
        for offset in range(3):
            which = (i + offset) % 3
            gc.collect()
            timings[which].append(runs[which]())
    return timings[0], timings[1], timings[2]


def ratio(base: list[float], other: list[float], pick: Callable[[list[float]], float]) -> float:
    return pick(other) / pick(base)


def paired(base: list[float], other: list[float]) -> float:
    """The median over rounds of each round's ratio (the two runs of a round are adjacent in time)."""
    return statistics.median(o / b for o, b in zip(other, base, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--quick", action="store_true", help="5 rounds (a first reading; noisier)")
    parser.add_argument("--lane", action="append", choices=list(FRAMES), help="only this lane (repeatable)")
    parser.add_argument(
        "--cpu", action="store_true", help="time with process CPU time (steadier on a machine others share)"
    )
    options = parser.parse_args()
    rounds = 5 if options.quick else options.rounds
    lanes: list[Lane] = options.lane or list(FRAMES)
    if options.cpu:
        CLOCK[0] = time.process_time
    print(
        f"{'lane':<24}{'events':>7}{'SDK alone':>11}{'SDK+observer':>14}{'ratio':>7}{'control':>9}"
        f"{'paired':>8}{'ratio(min)':>12}{'control(min)':>14}{'in situ/event':>15}{'observer/event':>16}"
        f"{'observer/SDK':>14}"
    )
    for lane in lanes:
        stream = iterator_for(lane, sse(lane, FRAMES[lane]()))
        sdk_only(stream)  # warm-up: imports, pydantic caches
        with_observer(lane, stream)
        alone, observed, control = paired_rounds(lane, stream, rounds)
        events = list(stream())
        count = len(events)
        own = statistics.median(observer_alone(lane, events) for _ in range(rounds))
        base = statistics.median(alone)
        in_situ = (statistics.median(observed) - base) / count
        print(
            f"{lane:<24}{count:>7}{base * 1e3:>9.1f}ms{statistics.median(observed) * 1e3:>12.1f}ms"
            f"{ratio(alone, observed, statistics.median):>7.3f}{ratio(alone, control, statistics.median):>9.3f}"
            f"{paired(alone, observed):>8.3f}{ratio(alone, observed, min):>12.3f}{ratio(alone, control, min):>14.3f}"
            f"{in_situ * 1e6:>12.2f} µs{own / count * 1e6:>13.2f} µs{own / base:>13.1%}"
        )
    print(
        f"{rounds} rounds ({CLOCK[0].__name__}). ratio: median SDK+observer / median SDK alone; control: the same"
        " with a do-nothing callback instead of the observer (the noise floor of this machine); paired: the median"
        " of each round's own ratio; (min): fastest rounds instead of medians; in situ/event: (median SDK+observer"
        " - median SDK alone) / events; observer/event and observer/SDK: the observer alone (median), fed the"
        " SDK's own event objects."
    )


if __name__ == "__main__":
    main()
