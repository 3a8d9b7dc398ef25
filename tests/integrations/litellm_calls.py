"""LiteLLM calls against the simulator, one per (entry point, provider), and the broken transcripts they send.

``CALLS`` names each way an application reaches a provider through LiteLLM; ``send`` makes one
call (plain or streamed, sync or async, read to its end) with a transcript built in that entry
point's own shape. LiteLLM reads the price and header tables locally (no network).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
import pytest

from otel_toolturn import Lane, validate
from otel_toolturn.simulator import Simulator
from tests.instrument.conftest import Otel
from tests.instrument.sdk_checks import one_repaired_span
from tests.transcripts import A, Event, R, U, build, c, t

__all__ = [
    "BREAKS",
    "CALLS",
    "Call",
    "litellm",
    "refused_in_the_laws_words",
    "request_kwargs",
    "send_async",
    "send_sync",
    "served_and_recorded_once",
]

OPENAI_MODEL: Final = "gpt-4o-mini"
ANTHROPIC_MODEL: Final = "claude-sonnet-4-5"


@dataclass(frozen=True)
class Call:
    """One LiteLLM entry point on one provider: the transcript shape it takes and the lane that goes out."""

    entry: str
    provider: str
    shape: Lane
    wire: Lane

    @property
    def is_async(self) -> bool:
        return self.entry.startswith("a")

    def __str__(self) -> str:
        return f"{self.entry}-{self.provider}"


CALLS: Final = (
    Call("completion", "openai", "openai.chat_completions", "openai.chat_completions"),
    Call("completion", "anthropic", "openai.chat_completions", "anthropic.messages"),
    Call("acompletion", "openai", "openai.chat_completions", "openai.chat_completions"),
    Call("acompletion", "anthropic", "openai.chat_completions", "anthropic.messages"),
    Call("responses", "openai", "openai.responses", "openai.responses"),
    Call("aresponses", "openai", "openai.responses", "openai.responses"),
    Call("amessages", "anthropic", "anthropic.messages", "anthropic.messages"),
)

BREAKS: Final[dict[str, tuple[Event, ...]]] = {
    "missing": (U("read a"), A(t("Reading."), c("call_1", "read")), U("and now?")),
    "late": (U("read a"), A(c("call_1", "read")), U("skip it"), A(t("Skipped.")), R("call_1", "a's text"), U("go on")),
    "orphan": (U("read a"), R("call_9", "stray"), U("go on")),
}
"""A result missing, a result arriving after the model answered, a result with no call."""


def _base(sim: Simulator, call: Call) -> str:
    return sim.openai_base_url if call.provider == "openai" else sim.base_url


def request_kwargs(sim: Simulator, call: Call, events: tuple[Event, ...], *, stream: bool) -> dict[str, Any]:
    """The keyword arguments of one call of ``call`` with ``events`` in its entry point's own shape."""
    model = OPENAI_MODEL if call.provider == "openai" else ANTHROPIC_MODEL
    kwargs: dict[str, Any] = {
        "model": f"{call.provider}/{model}",
        "api_base": _base(sim, call),
        "api_key": "sk-test",
        "stream": stream,
    }
    transcript = build(call.shape, events)
    if call.shape == "openai.responses":
        kwargs["input"] = transcript
    else:
        kwargs["messages"] = transcript
        kwargs["max_tokens"] = 64
    return kwargs


def send_sync(sim: Simulator, call: Call, events: tuple[Event, ...], *, stream: bool) -> object:
    """Make one sync call; a stream is read to its end."""
    kwargs = request_kwargs(sim, call, events, stream=stream)
    response: Any = litellm.completion(**kwargs) if call.entry == "completion" else litellm.responses(**kwargs)
    if stream:
        for _ in response:
            pass
    return response


async def send_async(sim: Simulator, call: Call, events: tuple[Event, ...], *, stream: bool) -> object:
    """Make one async call; a stream is read to its end."""
    kwargs = request_kwargs(sim, call, events, stream=stream)
    if call.entry == "acompletion":
        response: Any = await litellm.acompletion(**kwargs)
    elif call.entry == "aresponses":
        response = await litellm.aresponses(**kwargs)
    else:
        response = await litellm.anthropic.messages.acreate(**kwargs)  # type: ignore[attr-defined]
    if stream:
        async for _ in response:
            pass
    return response


async def completed(entry: str, kwargs: dict[str, Any], *, stream: bool) -> None:
    """One ``litellm.completion`` (``entry`` ``completion``) or ``acompletion`` call; a stream read to its end."""
    if entry == "acompletion":
        response: Any = await litellm.acompletion(**kwargs)
        if stream:
            async for _ in response:
                pass
        return
    response = litellm.completion(**kwargs)
    if stream:
        for _ in response:
            pass


def last_sent_list(sim: Simulator, key: str) -> list[object]:
    """The list the simulator's last request body held under ``key``."""
    body = sim.requests[-1].body
    assert isinstance(body, dict)
    sent = body[key]
    assert isinstance(sent, list)
    return sent


def entry_cases(breaks: Iterable[str]) -> list[Any]:
    """``(entry, break, stream)`` for every completion entry point, break and streaming, each with a readable id."""
    return [
        pytest.param(entry, brk, stream, id=f"{entry}-{brk}-{'stream' if stream else 'plain'}")
        for entry, brk, stream in itertools.product(("completion", "acompletion"), breaks, (False, True))
    ]


def served_and_recorded_once(
    otel: Otel, sim: Simulator, *, key: str, lane: Lane, provider: str, model: str, forms: Sequence[str]
) -> Mapping[str, Any]:
    """The last request was served, its ``key`` list valid in ``lane``; it is the only one, on one repaired span.

    The span: ``lane``, ``provider``, the request's ``model``, ``forms`` as its repairs (attribute and events, in
    order); the call counted once. Returns the span's attributes.
    """
    sent = sim.requests[-1]
    assert sent.status == 200, sent.error
    assert validate(last_sent_list(sim, key), lane=lane) == []
    attributes = one_repaired_span(otel, provider=provider, forms=forms, lane=lane, finish=None)
    assert attributes["gen_ai.request.model"] == model
    assert otel.total("toolturn.requests") == len(sim.requests) == 1
    return attributes


def refused_in_the_laws_words(sim: Simulator, *, key: str, lane: Lane) -> None:
    """The last request met a 400 in the words of the first rule its ``key`` list breaks in ``lane``."""
    refused = sim.requests[-1]
    assert refused.status == 400
    assert refused.error == validate(last_sent_list(sim, key), lane=lane)[0].message
