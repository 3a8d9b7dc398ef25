"""The request hook's deciding half: from an SDK call's keyword arguments to what goes on the wire.

Role: converts and calls the core; decides nothing itself. Reads the call's keyword arguments,
runs the tool-turn law on its ``messages``/``input``, the tools rule and the strip rule, and
computes the request receipt (fingerprints). Emits nothing: ``PreparedRequest`` is a value the
recording half (``_record``) turns into telemetry. No OpenTelemetry here.

Cases:
- ``repair`` mode: the law's view (with framework fields stripped) replaces the list; the
  caller's list and items are never mutated (a new ``kwargs`` dict is returned).
- ``observe`` mode: the request is sent as the caller wrote it; the would-be repairs are reported.
- Tools: a ``withhold_tools`` scope withholds them in both modes (the caller asked for it);
  ``max_tool_rounds`` asks for a wrap-up only in repair mode (observe mode reports it, unapplied);
  a caller whose ``tool_choice`` already says none is recorded with reason ``caller``.
- A one-shot iterable is materialised once by ``materialise`` before anything reads it.
- A transcript of dict messages goes through the transcript memo (``_memo``): the decision and
  the receipt are the pure rules' own, worked out on the messages it has not seen before only.
  Any other transcript takes the rules whole (and ``DIGESTS`` for its prefix fingerprint).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from otel_toolturn import _law, compose
from otel_toolturn._law import ToolTurnView
from otel_toolturn._vocab import Lane
from otel_toolturn.instrument._config import Options
from otel_toolturn.instrument._digests import DigestCache
from otel_toolturn.instrument._memo import Transcript, TranscriptMemo

MESSAGES_KEY: Final[Mapping[Lane, str]] = {
    "anthropic.messages": "messages",
    "openai.chat_completions": "messages",
    "openai.responses": "input",
}
"""The keyword argument that carries the transcript, per lane."""

MEMO: Final = TranscriptMemo()
"""The transcripts of recent calls, shared by every call of the process: a resent transcript costs its new messages."""

DIGESTS: Final = DigestCache()
"""Prefix fingerprints of the transcripts the memo does not take (each message object is digested once)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PreparedRequest:
    """What the request hook decided for one call, and the receipt of what was sent."""

    kwargs: dict[str, object]
    view: ToolTurnView | None
    law_seconds: float
    withheld: compose.ToolsWithheldReason | None
    withheld_applied: bool
    tool_rounds: int
    system_fingerprints: tuple[str, ...]
    tools_fingerprint: str | None
    prefix_fingerprint: str | None
    system_prompt: str


def materialise(kwargs: dict[str, object], lane: Lane) -> dict[str, object]:
    """``kwargs`` with one-shot iterables (transcript, tools, system blocks) read once into lists.

    Lists, tuples, strings and mappings are kept as they are; the caller's objects are not touched.
    """
    out = kwargs
    for key in (MESSAGES_KEY[lane], "tools", "system"):
        value = kwargs.get(key)
        if value is None or isinstance(value, (list, tuple, str, Mapping)) or not isinstance(value, Iterable):
            continue
        if out is kwargs:
            out = dict(kwargs)
        out[key] = list(value)
    return out


def _withheld(
    kwargs: Mapping[str, object],
    *,
    scope: compose.ToolsWithheld | None,
    rounds: int,
    options: Options,
) -> tuple[compose.ToolsWithheldReason | None, bool]:
    """The withheld decision and whether it changes the request (see the module's cases)."""
    tools = kwargs.get("tools")
    if not tools:
        return None, False
    wrap_up = scope == "wrap-up" or (options.max_tool_rounds is not None and rounds >= options.max_tool_rounds)
    reason = compose.tools_withheld(wrap_up or None, scope == "evidence-revision" or None)
    if reason is not None:
        applied = scope is not None or options.mode == "repair"
        return reason, applied
    if compose.caller_withheld_tools(kwargs.get("tool_choice")):
        return "caller", False
    return None, False


def prepare_request(
    kwargs: dict[str, object],
    *,
    lane: Lane,
    options: Options,
    scope: compose.ToolsWithheld | None,
    receipt: bool,
) -> PreparedRequest:
    """Decide what this call sends (see the module's cases); ``receipt`` asks for the fingerprints."""
    key = MESSAGES_KEY[lane]
    messages = kwargs.get(key)
    view: ToolTurnView | None = None
    law_seconds = 0.0
    out = kwargs
    known: Transcript | None = None
    if isinstance(messages, (Sequence, str)):
        started = time.perf_counter()
        chained = lane == "openai.responses" and bool(kwargs.get("previous_response_id") or kwargs.get("conversation"))
        known = MEMO.recall(messages, lane=lane, owner=options)
        if known is not None:
            view = known.view(messages, chained=chained)
        else:
            view = _law.ensure_tool_turn_invariants(messages, lane=lane, chained=chained)
        law_seconds = time.perf_counter() - started
        if options.mode == "repair":
            sent = view.messages
            if known is not None:
                sent = known.strip(messages, view)
            elif not isinstance(sent, str):
                sent = compose.strip_framework_fields(sent)
            if sent is not messages:
                out = {**kwargs, key: sent}

    transcript: Sequence[object] | str = messages if isinstance(messages, (Sequence, str)) else ()
    rounds = compose.tool_rounds_since_user_text(transcript, lane=lane) if options.max_tool_rounds else 0
    withheld, applied = _withheld(kwargs, scope=scope, rounds=rounds, options=options)
    if applied:
        out = {**out, "tool_choice": compose.tool_choice_none(lane)}

    system_fingerprints: tuple[str, ...] = ()
    tools_fingerprint: str | None = None
    prefix_fingerprint: str | None = None
    system_prompt = ""
    if receipt:
        transcript_pieces = known.pieces if known is not None else None
        pieces = compose.contributing_pieces(compose.system_prompt_pieces(out, lane=lane, transcript=transcript_pieces))
        system_fingerprints = tuple(compose.fingerprint(p.raw_content) for p in pieces)
        system_prompt = compose.join_system_prompt(pieces) if options.capture_content else ""
        tools = out.get("tools")
        if tools:
            tools_fingerprint = compose.fingerprint(tools)
        sent_messages = out.get(key)
        if isinstance(sent_messages, Sequence) and not isinstance(sent_messages, str) and len(sent_messages) > 1:
            if known is not None and view is not None and isinstance(messages, Sequence):
                prefix_fingerprint = known.prefix_fingerprint(sent_messages, messages, view)
            else:
                source = messages if isinstance(messages, Sequence) and not isinstance(messages, str) else None
                prefix_fingerprint = DIGESTS.prefix_fingerprint(sent_messages, source=source)
    return PreparedRequest(
        kwargs=out,
        view=view,
        law_seconds=law_seconds,
        withheld=withheld,
        withheld_applied=applied,
        tool_rounds=rounds,
        system_fingerprints=system_fingerprints,
        tools_fingerprint=tools_fingerprint,
        prefix_fingerprint=prefix_fingerprint,
        system_prompt=system_prompt,
    )
