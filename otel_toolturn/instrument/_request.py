"""The request hook's deciding half: from an SDK call's keyword arguments to what goes on the wire.

Role: converts and calls the core; decides nothing itself. No OpenTelemetry here: a ``Decision``
(what is sent, and what it was read from) and then its ``Receipt`` (fingerprints, the
conversation's findings) are values passed forward, which the recording half (``_record``) turns
into telemetry. The stages,
in order, each on the call's input as it stands at this call (nothing remembered decides the wire):

1. **materialise** (``materialise``, called by the patch first, when the call runs): a value the
   SDK itself would read into a list (a one-shot transcript, tools, system blocks; ``listings``;
   a one-shot field of a transcript's item the law reads, ``LaneAdapter.sdk_listed_item_fields``; google-genai
   ``contents``: a string, a part, a content or a list of parts, through the SDK's own
   normaliser, ``_genai_contents.gemini_contents``) is read once, the same way, and the list sent on; any other
   value is passed on unread (an item that is a generator reaches the SDK as it was); a transcript
   the law cannot read as the SDK would send it (a dict outside google-genai, ``None``, a number,
   a string outside Responses and google-genai, a generator where the SDK takes only a list) and
   an iteration that raises make the call go out exactly as the caller wrote it, unrecorded, so
   the caller meets the SDK's own outcome;
2. **strip** (``compose.strip_framework_fields``): library-only fields leave the transcript's
   messages (copies; the caller's objects are never mutated);
3. **law** (``_law.ensure_tool_turn_invariants``) on the stripped transcript: the view and its repairs;
4. **compose**: ``repair`` mode sends the view in a new ``kwargs`` dict (the caller's dict, list
   and items are never mutated); ``observe`` mode sends the request as the caller wrote it and
   reports the would-be repairs. Tools: a ``withhold_tools`` scope withholds them in both modes
   (the caller asked for it); ``max_tool_rounds`` asks for a wrap-up only in repair mode (observe
   mode reports it, unapplied); a caller whose ``tool_choice`` already says none is recorded with
   reason ``caller``;
5. **record**: the receipt (fingerprints of the system prompt, the tools and the sent prefix, when
   ``receipt`` asks) and the conversation's findings (``_conversation``: repeats, prefix change).
   Their digests come from ``DIGESTS``, a telemetry cache (``_digests``). A failure here never
   changes the decision: it is handed to the recording half to count.

``decide_request`` runs stages 2 to 4, before the SDK call (they decide what is sent), and gives
the ``Decision``; ``record_sent`` reads only that decision and runs stage 5 once the SDK's first
send has returned (the transport has the request, so the digests never delay it), giving the
``Receipt``; a call the SDK refuses before sending leaves no trace in the conversation state.
``prepare_request`` runs both at once. A failure in stages 2
to 4 (the law refusing its input) raises to the caller, which proceeds uninstrumented.
"""

from __future__ import annotations

import io
import os
import time
from collections import UserString
from collections.abc import Iterable, Iterator, Mapping, MappingView, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import compress, repeat
from typing import Final, Literal, cast

from otel_toolturn import _law, compose
from otel_toolturn._law import ToolTurnView
from otel_toolturn._view import LaneAdapter
from otel_toolturn._vocab import Dialect, Lane
from otel_toolturn.instrument import _conversation
from otel_toolturn.instrument._config import Options
from otel_toolturn.instrument._conversation import Conversations, Findings, PrefixChange
from otel_toolturn.instrument._digests import DigestCache
from otel_toolturn.instrument._genai_contents import gemini_contents, gemini_normalisable
from otel_toolturn.lanes import adapter_for

DIGESTS: Final = DigestCache()
"""Message digests of recent caller transcripts, for the receipt and the conversation state (telemetry only)."""

CONVERSATIONS: Final = Conversations()
"""The conversations of recent requests, shared by every call of the process (telemetry only)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """What the request hook decided for one call (stages 2 to 4): what is sent, and what it was read from."""

    kwargs: dict[str, object]
    """The keyword arguments the SDK is called with."""
    transcript: Sequence[object] | str | None
    """The caller's transcript as it stood at the call (``None``: none the law could read)."""
    chained: bool
    """Whether the request continues server-held state (``compose.continues_server_state``)."""
    view: ToolTurnView | None
    law_seconds: float
    withheld: compose.ToolsWithheldReason | None
    withheld_applied: bool
    tool_rounds: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Receipt:
    """What was sent, as telemetry reads it (stage 5): its fingerprints and its conversation's findings."""

    system_fingerprints: tuple[str, ...] = ()
    tools_fingerprint: str | None = None
    prefix_fingerprint: str | None = None
    system_prompt: str = ""
    repeats: tuple[bool, ...] = ()
    """Per repair of the decision's view, in order: whether an earlier request of the conversation made it.

    A request whose conversation is not followed (chained, or the record stage failed) repeats nothing."""
    prefix_change: PrefixChange | None = None
    failures: tuple[Exception, ...] = ()
    """Errors of the record stage (the decision stands; the recording half counts them)."""


Listing = Literal["openai_iterable", "openai_list", "anthropic"]
"""How an SDK reads a parameter's value into a JSON array before it sends it.

``openai_iterable`` (openai, ``Iterable[...]`` parameters): any iterable but a string or a dict.
``openai_list`` (openai, ``List[...]`` parameters): nothing; a list or tuple is encoded as it is,
anything else is left to the JSON encoder (which refuses a generator or a set). ``anthropic``
(every body parameter): sequences, sets, dict views and iterators, never a mapping, a string,
bytes or a file.
"""


def listings(lane: Lane) -> tuple[tuple[str, Listing], ...]:
    """The parameters the request hook reads that the lane's SDK lists, and how it lists each (its own order).

    google-genai's ``contents`` is not listed but normalised (``gemini_contents``); its tools ride in ``config``.
    """
    return cast("tuple[tuple[str, Listing], ...]", adapter_for(lane).sdk_listed_parameters)


_NOT_LISTED_BY_ANTHROPIC: Final = (str, bytes, bytearray, memoryview, UserString, Mapping, io.IOBase, os.PathLike)


def sdk_lists(value: object, listing: Listing) -> bool:
    """Whether the SDK reads ``value`` into a new list (a list or tuple needs no reading: ``False``)."""
    if isinstance(value, (list, tuple)):
        return False
    if listing == "openai_iterable":
        return isinstance(value, Iterable) and not isinstance(value, (str, dict))
    if listing == "openai_list":
        return False
    return not isinstance(value, _NOT_LISTED_BY_ANTHROPIC) and isinstance(
        value, (Sequence, AbstractSet, MappingView, Iterator)
    )


def law_reads(kwargs: Mapping[str, object], lane: Lane) -> bool:
    """Whether the law can read the transcript the SDK would send, without reading it.

    Readable: a list or tuple (or a string in Responses) as it is, or once the SDK would have
    listed it (see ``materialise``).
    """
    adapter = adapter_for(lane)
    key = adapter.transcript_field
    value = kwargs.get(key)
    if adapter.sdk_normalises_transcript:
        return gemini_normalisable(value)
    return _readable(value, adapter) or sdk_lists(value, dict(listings(lane))[key])


def payload_reads(body: object, lane: Lane) -> bool:
    """Whether the law can read a whole request body the SDK sends as it is (azure-ai-inference's ``body``).

    Readable: a dict whose transcript is a list or tuple (or a string in Responses) as it is; the
    SDK encodes such a body without listing anything, so nothing in it is read ahead.
    """
    adapter = adapter_for(lane)
    return isinstance(body, dict) and _readable(body.get(adapter.transcript_field), adapter)


def _readable(value: object, adapter: LaneAdapter) -> bool:
    return isinstance(value, (list, tuple)) or (adapter.string_input and isinstance(value, str))


@dataclass(frozen=True, kw_only=True, slots=True)
class Materialised:
    """The call's keyword arguments once read as the SDK would read them, and whether the law reads them."""

    kwargs: dict[str, object]
    readable: bool
    """``False``: send ``kwargs`` as they are and record nothing (the SDK decides what becomes of them)."""


def _replay(items: list[object], error: Exception) -> Iterator[object]:
    """The items read before ``error``, then ``error``: the SDK meets the caller's failure where it would."""
    yield from items
    raise error


def _read_once(value: Iterable[object]) -> tuple[list[object] | Iterator[object], bool]:
    """``value``'s items in a list, and ``True``; an iteration that raises: its replay (``_replay``), and ``False``."""
    items: list[object] = []
    try:
        for item in value:
            items.append(item)  # noqa: PERF402 - keeps what was read when the iteration raises
    except Exception as error:  # noqa: BLE001 - the caller's error, handed to the SDK to raise
        return _replay(items, error), False
    return items, True


_NEVER_ONE_SHOT: Final = frozenset({str, list, tuple, dict, type(None), bool, int, float})


def _one_shot(value: object) -> bool:
    """An iterable that reading consumes: an iterator (a generator, ``map``, ``iter(...)``), never a file."""
    return type(value) not in _NEVER_ONE_SHOT and isinstance(value, Iterator) and not isinstance(value, io.IOBase)


def _field_types(items: Sequence[object], fields: tuple[str, ...]) -> set[type]:
    """The types of the values of ``fields`` in the dict items (``NoneType`` for a field left out)."""
    dicts = cast("Sequence[dict[str, object]]", items)
    try:
        return {kind for name in fields for kind in set(map(type, map(dict.get, dicts, repeat(name))))}
    except TypeError:  # an item that is no dict: only the dict items are read
        return _field_types(list(compress(dicts, map(isinstance, items, repeat(dict)))), fields)


def _items_listed(items: Sequence[object], fields: tuple[str, ...]) -> tuple[Sequence[object], bool]:
    """``items`` with each one-shot value of a dict item's ``fields`` read once into a list, and whether all read.

    Nothing to read gives back ``items`` itself; an item read is a new dict in a new list (the
    caller's are never mutated). An iteration that raises leaves its replay in place, the items
    after it untouched, and ``False``.
    """
    if _field_types(items, fields) <= _NEVER_ONE_SHOT:
        return items, True
    out = list(items)
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        read: dict[str, object] = {}
        for name in fields:
            value = item.get(name)
            if _one_shot(value):
                read[name], complete = _read_once(cast("Iterator[object]", value))
                if not complete:
                    out[index] = {**item, **read}
                    return out, False
        if read:
            out[index] = {**item, **read}
    return out, True


def materialise(kwargs: dict[str, object], lane: Lane) -> Materialised:
    """``kwargs`` with every one-shot value the SDK would list read once into a list, as the SDK would.

    Read: the parameters of ``listings``, then the fields of the transcript's items the lane's SDK
    lists (``LaneAdapter.sdk_listed_item_fields``: the anthropic SDK lists every iterator it
    serialises, the openai SDK every field its types declare ``Iterable``); the law reads those
    lists and the SDK sends them. Any other item or value is passed on unread. The caller's dict
    and objects are never mutated; nothing to list gives back ``kwargs`` itself. An iteration that
    raises leaves a replay of it in place (what was read, then the same error) and
    ``readable=False``, so the SDK meets the caller's error as it would without instrumentation.
    A transcript the law cannot read (``law_reads``) is
    ``readable=False`` too.
    """
    adapter = adapter_for(lane)
    if adapter.sdk_normalises_transcript:
        return _materialise_normalised(kwargs, adapter.transcript_field)
    out = kwargs
    for key, listing in listings(lane):
        value = kwargs.get(key)
        if not sdk_lists(value, listing):
            continue
        sent, complete = _read_once(cast("Iterable[object]", value))
        out = {**out, key: sent}
        if not complete:
            return Materialised(kwargs=out, readable=False)
    key = adapter.transcript_field
    transcript = out.get(key)
    if isinstance(transcript, (list, tuple)):
        listed, complete = _items_listed(transcript, adapter.sdk_listed_item_fields)
        if listed is not transcript:
            out = {**out, key: listed}
        if not complete:
            return Materialised(kwargs=out, readable=False)
    return Materialised(kwargs=out, readable=_readable(out.get(key), adapter))


def _materialise_normalised(kwargs: dict[str, object], key: str) -> Materialised:
    """``materialise`` for google-genai: the transcript at ``key`` as the SDK normalises it (``gemini_contents``)."""
    value = kwargs.get(key)
    contents = gemini_contents(value)
    if contents is None:
        return Materialised(kwargs=kwargs, readable=False)
    if contents is value:
        return Materialised(kwargs=kwargs, readable=True)
    return Materialised(kwargs={**kwargs, key: contents}, readable=True)


def _withheld(
    kwargs: Mapping[str, object],
    *,
    lane: Lane,
    scope: compose.ToolsWithheld | None,
    rounds: int,
    options: Options,
    dialect: Dialect | None,
) -> tuple[compose.ToolsWithheldReason | None, bool]:
    """The withheld decision and whether it changes the request (see the module's stage 4)."""
    if not compose.request_tools(kwargs, lane=lane) or adapter_for(lane, dialect).tool_choice_none() is None:
        return None, False  # no tools to withhold, or no way to call none (Converse): the rule does not apply
    wrap_up = scope == "wrap-up" or (options.max_tool_rounds is not None and rounds >= options.max_tool_rounds)
    reason = compose.tools_withheld(wrap_up or None, scope == "evidence-revision" or None)
    if reason is not None:
        applied = scope is not None or options.mode == "repair"
        return reason, applied
    if compose.caller_withheld_tools(compose.request_tool_choice(kwargs, lane=lane)):
        return "caller", False
    return None, False


def prepare_request(
    kwargs: dict[str, object],
    *,
    lane: Lane,
    options: Options,
    scope: compose.ToolsWithheld | None,
    receipt: bool,
) -> tuple[Decision, Receipt]:
    """Decide what this call sends and record it (the module's stages); ``receipt`` asks for the fingerprints."""
    decision = decide_request(kwargs, lane=lane, options=options, scope=scope)
    return decision, record_sent(decision, lane=lane, options=options, receipt=receipt)


def decide_request(
    kwargs: dict[str, object],
    *,
    lane: Lane,
    options: Options,
    scope: compose.ToolsWithheld | None,
    dialect: Dialect | None = None,
) -> Decision:
    """What this call sends (stages 2 to 4); ``dialect``: the provider's variant of the lane's rules, if any."""
    key = adapter_for(lane).transcript_field
    messages = kwargs.get(key)
    transcript = messages if isinstance(messages, (Sequence, str)) else None
    chained = compose.continues_server_state(kwargs, lane=lane)

    view: ToolTurnView | None = None
    law_seconds = 0.0
    if transcript is not None:
        stripped = transcript if isinstance(transcript, str) else compose.strip_framework_fields(transcript)
        started = time.perf_counter()
        view = _law.ensure_tool_turn_invariants(stripped, lane=lane, chained=chained, dialect=dialect)
        law_seconds = time.perf_counter() - started

    out = kwargs
    if options.mode == "repair" and view is not None and view.messages is not transcript:
        out = {**kwargs, key: view.messages}
    rounds = compose.tool_rounds_since_user_text(transcript or (), lane=lane) if options.max_tool_rounds else 0
    withheld, applied = _withheld(kwargs, lane=lane, scope=scope, rounds=rounds, options=options, dialect=dialect)
    if applied:
        out = compose.with_tools_withheld(out, lane=lane, dialect=dialect)

    return Decision(
        kwargs=out,
        transcript=transcript,
        chained=chained,
        view=view,
        law_seconds=law_seconds,
        withheld=withheld,
        withheld_applied=applied,
        tool_rounds=rounds,
    )


def record_sent(decision: Decision, *, lane: Lane, options: Options, receipt: bool) -> Receipt:
    """The receipt of ``decision`` as sent: its fingerprints and its conversation's findings (stage 5).

    Call it once per request that goes out: the conversation moves on to it. A failure is kept in
    ``failures``; the decision stands.
    """
    try:
        return _recorded(decision, lane=lane, options=options, receipt=receipt)
    except Exception as exc:  # noqa: BLE001 - telemetry never changes what is sent
        return Receipt(failures=(exc,))


def _recorded(decision: Decision, *, lane: Lane, options: Options, receipt: bool) -> Receipt:
    """The receipt of ``decision`` (the module's stage 5)."""
    out, view, transcript = decision.kwargs, decision.view, decision.transcript
    system_fingerprints: tuple[str, ...] = ()
    tools_fingerprint: str | None = None
    system_prompt = ""
    if receipt:
        pieces = compose.contributing_pieces(compose.system_prompt_pieces(out, lane=lane))
        system_fingerprints = tuple(compose.fingerprint(p.raw_content) for p in pieces)
        system_prompt = compose.join_system_prompt(pieces) if options.capture_content else ""
        tools = compose.request_tools(out, lane=lane)
        if tools:
            tools_fingerprint = compose.fingerprint(tools)

    prefix_fingerprint: str | None = None
    findings: Findings | None = None
    if view is not None and transcript is not None and not isinstance(transcript, str) and transcript:
        caller = DIGESTS.digests(transcript)
        viewed = view.messages
        assert not isinstance(viewed, str)  # noqa: S101 - a list's view is a list; narrows for the type checker
        seen = caller if viewed is transcript else DIGESTS.digests(viewed, source=transcript)
        sent = out[adapter_for(lane).transcript_field]
        if receipt and isinstance(sent, Sequence) and len(sent) > 1:
            prefix_fingerprint = compose.prefix_fingerprint((seen if sent is viewed else caller)[:-1])
        if not decision.chained:
            sighting = _conversation.Sighting(
                lane=lane,
                head=_conversation.head_digest(out, lane),
                caller=b"".join(caller),
                caller_last_output=_conversation.last_output(transcript, lane),
                opening=_conversation.opening(transcript, lane),
                view=b"".join(seen),
                view_last_output=_conversation.last_output(viewed, lane),
                keys=_conversation.repair_keys(view.repairs, transcript, caller, lane),
            )
            findings = CONVERSATIONS.follow(sighting, owner=options)
    return Receipt(
        system_fingerprints=system_fingerprints,
        tools_fingerprint=tools_fingerprint,
        prefix_fingerprint=prefix_fingerprint,
        system_prompt=system_prompt,
        repeats=findings.repeats if findings is not None else (),
        prefix_change=findings.prefix_change if findings is not None else None,
    )
