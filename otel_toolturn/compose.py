"""Request composition rules: which call is served its tools, what system prompt a provider reads.

Role: pure functions over request values, called by the instrumentation on the way out and by any
reader that rebuilds a served request afterwards, so the two cannot disagree. No SDK, no
OpenTelemetry, no I/O; nothing here mutates its arguments.

The rules, each in one function:

- **The tools rule** (``tools_withheld``): a call is served no tools when a wrap-up was asked
  (``"wrap-up"``, checked first) or the tools went off after the evidence revision
  (``"evidence-revision"``). Only a literal ``True`` counts as asked: an unknown value keeps the
  tools on. ``tool_choice_none`` spells "no tools" in each lane (tool definitions stay in the
  request, so a prompt cache keyed on them still holds); ``caller_withheld_tools`` recognises a
  caller who already spelled it.
- **The system-prompt join** (``join_system_prompt``): empty pieces are dropped *before* joining,
  the survivors joined with ``SYSTEM_PROMPT_SEPARATOR``; ``contributing_pieces`` returns exactly
  those survivors, in order, so a list of fingerprints and the joined text always agree on which
  piece was at which position. ``system_prompt_pieces`` reads each lane's pieces (Anthropic
  ``system``, Chat system/developer messages, Responses ``instructions`` and system/developer
  items); ``transcript_system_pieces`` reads those of transcript items, so a list read in parts
  (a remembered prefix, then its new messages) gives the pieces of the whole.
- **The strip rule** (``strip_framework_fields``): fields that exist for a library and never for
  the model are removed from a message before the request exists. Stripping removes a field,
  never a message: the list keeps its length and order, and a message without such a field is
  passed on as the very same object (nothing to strip ⇒ the same list object). It works message by
  message, so it may run on part of a list.
- **Fingerprints** (``fingerprint``, ``message_digest``, ``prefix_fingerprint``): a short, stable
  digest of a JSON-shaped value (SDK objects read through their ``model_dump``), for comparing two
  requests piece by piece without recording their content. A message prefix is fingerprinted
  from its messages' digests, so a caller can digest each message once.
- **Server-held state** (``continues_server_state``): a Responses request continues state the
  server holds when it names a previous response or a conversation — a truthy
  ``previous_response_id`` or ``conversation``; ``None``, ``""`` and the SDKs' "not given"
  sentinels (which are falsy) name none. Chat and Anthropic requests never do. The law and
  ``validate`` take the answer as ``chained=``.
- **Tool rounds** (``tool_rounds_since_user_text``): how many consecutive tool rounds the
  assistant made since the last user text, the count ``max_tool_rounds`` is compared with.
- **Who said it** (``is_instruction``, ``is_model_output``, ``emitted_call_ids``): whether a
  transcript item is a system / developer message, whether the model produced it (Anthropic and
  Chat: an ``assistant`` message; Responses: an assistant message item, a ``reasoning`` item or any
  ``*_call`` item), and which client tool call ids it emits, for readers that follow a
  conversation from request to request.

Every function that reads a lane takes one of ``LANES`` and asks that lane's adapter
(``otel_toolturn.lanes.adapter_for``), which holds the spelling; any other value is an
``UnknownLaneError``, never read as the nearest lane.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Final, Literal, cast, get_args

try:
    import orjson
except ImportError:  # pragma: no cover - the standard encoder writes the canonical form instead
    orjson = None  # type: ignore[assignment]

from otel_toolturn._errors import ToolTurnInputError, UnsupportedLaneError
from otel_toolturn._view import CLEAN, TURN, SystemPromptPiece
from otel_toolturn._vocab import LANES, Dialect, Lane
from otel_toolturn.lanes import DIALECT_ADAPTERS, adapter_for, gemini, listed, openai_responses, request_parts

ToolsWithheld = Literal["wrap-up", "evidence-revision"]
"""Why the tools rule withholds a call's tools: the out-of-budget wrap-up, or tools off after revision."""
TOOLS_WITHHELD: Final[tuple[ToolsWithheld, ...]] = get_args(ToolsWithheld)

ToolsWithheldReason = Literal["wrap-up", "evidence-revision", "caller"]
"""Every reason a request goes out without tools: the tools rule's two, or the caller's own choice."""
TOOLS_WITHHELD_REASONS: Final[tuple[ToolsWithheldReason, ...]] = get_args(ToolsWithheldReason)

SYSTEM_PROMPT_SEPARATOR: Final = "\n\n"
"""Between two system-prompt pieces: a blank line, so the model reads them as separate sections."""

FRAMEWORK_FIELDS: Final[frozenset[str]] = frozenset(
    {
        "injectedBy",
        "notDispatched",
        "toolResultOrigin",
        "toolChars",
        "foldedExempt",
        "injected_by",
        "not_dispatched",
        "tool_result_origin",
        "tool_chars",
        "folded_exempt",
        "handoff_scope",
        "toolturn_diagnostics",
    }
)
"""Message fields that only libraries read (delivery marker, settlement marker, result origin,
tool-bytes boundary, compaction lineage, in both spellings; the handoff dispatch's scope tag; the
stream-drop diagnostics a stored assistant message may carry). They never reach the wire."""

FINGERPRINT_LENGTH: Final = 12
"""Hex characters kept of a SHA-256 digest: short enough for a span, long enough to tell pieces apart."""


def tools_withheld(wrap_up_asked: object, tools_off_after_revision: object) -> ToolsWithheld | None:
    """The tools rule: why this call is served no tools, or ``None`` when it is served its tools.

    >>> tools_withheld(None, True)
    'evidence-revision'
    >>> tools_withheld(None, None) is None
    True
    """
    if wrap_up_asked is True:
        return "wrap-up"
    if tools_off_after_revision is True:
        return "evidence-revision"
    return None


GEMINI_TOOLS_OFF: Final[Mapping[str, object]] = gemini.TOOLS_OFF
"""google-genai's "call no tool": the ``tool_config`` of the request's ``config``."""


TOOL_CHOICE_LANES: Final[tuple[Lane, ...]] = tuple(
    lane for lane in LANES if adapter_for(lane).tool_choice_none() is not None
)
"""The lanes with a spelling of "call no tool": every lane but Bedrock Converse, whose ``toolChoice`` is
``auto``, ``any`` or one ``tool``, and whose ``toolConfig`` must stay while the messages hold tool blocks."""


def tool_choice_none(lane: Lane, dialect: Dialect | None = None) -> object:
    """The lane's own spelling of "call no tool": ``tool_choice`` (google-genai: ``config.tool_config``).

    ``dialect``: the provider's variant of the lane's rules (``cohere``: ``"NONE"``). A lane outside
    ``TOOL_CHOICE_LANES`` has none: ``UnsupportedLaneError``.
    """
    none = adapter_for(lane, dialect).tool_choice_none()
    if none is None:
        raise UnsupportedLaneError(
            f"{lane} has no tool choice that calls no tool; lanes that have one: {', '.join(TOOL_CHOICE_LANES)}"
        )
    return none


def request_field(request: Mapping[str, object], name: str, *, lane: Lane) -> object:
    """A request setting by its SDK name: a keyword argument (google-genai: a field of ``config``); ``None``: absent.

    google-genai carries the system instruction, the tools and the tool choice in ``config`` (a
    dict or the SDK's typed config); the other SDKs take them as keyword arguments.
    """
    return adapter_for(lane).setting(request, name)


def request_tools(request: Mapping[str, object], *, lane: Lane) -> object:
    """The tool definitions a request carries (google-genai: ``config.tools``; Converse: ``toolConfig.tools``)."""
    return adapter_for(lane).tools(request)


def request_tool_choice(request: Mapping[str, object], *, lane: Lane) -> object:
    """The caller's tool choice: ``tool_choice`` (google-genai: ``config.tool_config``; Bedrock: ``toolConfig``)."""
    return adapter_for(lane).tool_choice(request)


def with_tools_withheld(
    request: Mapping[str, object], *, lane: Lane, dialect: Dialect | None = None
) -> dict[str, object]:
    """A copy of ``request`` that calls no tool, in the lane's spelling (``tool_choice_none``); never in place.

    The tool definitions stay, so a prompt cache keyed on them still holds. google-genai: the
    ``config`` (a dict or the SDK's typed config, copied) gets ``tool_config`` set. ``dialect``: in the
    provider's spelling (``cohere``: ``"NONE"``).
    """
    return adapter_for(lane, dialect).with_tool_choice(request, tool_choice_none(lane, dialect))


def caller_withheld_tools(tool_choice: object) -> bool:
    """Whether a caller's tool choice already says "no tool".

    ``"none"``, ``{"type": "none"}``, google-genai's ``tool_config`` whose
    ``function_calling_config.mode`` is ``NONE``, or a dialect's (Cohere's ``"NONE"``).
    """
    adapters = (*(adapter_for(lane) for lane in LANES), *DIALECT_ADAPTERS.values())
    return any(adapter.says_no_tool(tool_choice) for adapter in adapters)


def contributing_pieces(pieces: Sequence[SystemPromptPiece]) -> tuple[SystemPromptPiece, ...]:
    """The pieces that reach the joined string, in order: exactly the survivors ``join_system_prompt`` joins.

    >>> len(contributing_pieces([SystemPromptPiece(raw_content="a"), SystemPromptPiece(raw_content="")]))
    1
    """
    return tuple(p for p in pieces if p.raw_content)


def join_system_prompt(pieces: Sequence[SystemPromptPiece]) -> str:
    r"""The system-prompt join: empty pieces dropped first, survivors joined with a blank line.

    >>> join_system_prompt([SystemPromptPiece(raw_content="You are a bot."), SystemPromptPiece(),
    ...                     SystemPromptPiece(raw_content="Be brief.")])
    'You are a bot.\n\nBe brief.'
    """
    return SYSTEM_PROMPT_SEPARATOR.join(p.raw_content or "" for p in contributing_pieces(pieces))


def system_prompt_pieces(
    request: Mapping[str, object],
    *,
    lane: Lane,
    transcript: Sequence[SystemPromptPiece] | None = None,
) -> tuple[SystemPromptPiece, ...]:
    """Every system-prompt piece of a request in the lane's own shape, in wire order.

    Anthropic: the ``system`` string or each text block of it (Bedrock: each ``text`` block). Chat
    Completions: the content of each ``system`` or ``developer`` message. google-genai:
    ``config.system_instruction`` (a string, or each text part of it). Responses: ``instructions``, then
    each ``system`` or ``developer`` message item of ``input``. ``source`` names where each piece sits.
    ``transcript``: the pieces of the request's messages (``input``) when already read with
    ``transcript_system_pieces``; otherwise they are read from the request.
    """
    return adapter_for(lane).system_pieces(request, transcript)


def transcript_system_pieces(items: Sequence[object], *, key: str, start: int = 0) -> list[SystemPromptPiece]:
    """The system-prompt pieces of transcript items (Chat ``messages``, Responses ``input``), in order.

    ``items`` stand at positions ``start``, ``start + 1``, ... of the request's ``key`` list, so
    the pieces of a list read in two parts, concatenated, are the pieces of the whole list.
    """
    return request_parts.transcript_pieces(items, key=key, start=start)


def strip_framework_fields(messages: Sequence[object]) -> Sequence[object]:
    """The strip rule: drop ``FRAMEWORK_FIELDS`` from dict messages; never a message, never in place.

    A message without such a field is the same object in the output; nothing to strip ⇒ the same
    list object. Typed SDK objects cannot carry unknown fields and pass through. Only mappings are
    read: any other item (a generator the SDK will list, a string) is passed on unread.

    >>> strip_framework_fields([{"role": "user", "content": "hi", "injectedBy": "memory"}])
    [{'role': 'user', 'content': 'hi'}]
    """
    # The common case in one read of the keys: every item a plain dict and no framework field among
    # all their keys, gathered into one set.
    if list(map(type, messages)).count(dict) == len(messages) and FRAMEWORK_FIELDS.isdisjoint(
        set().union(*cast("Sequence[dict[str, object]]", messages))
    ):
        return messages
    out: list[object] | None = None
    for index, message in enumerate(messages):
        if isinstance(message, Mapping) and not FRAMEWORK_FIELDS.isdisjoint(message.keys()):
            if out is None:
                out = list(messages[:index])
            out.append({k: v for k, v in message.items() if k not in FRAMEWORK_FIELDS})
        elif out is not None:
            out.append(message)
    return messages if out is None else out


def _jsonable(value: object) -> object:
    """``value`` as JSON: an SDK object's ``model_dump``, an enum's value, a function's qualified name, else ``str``."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_unset=True)
    if isinstance(value, Enum):
        return value.value
    qualname = getattr(value, "__qualname__", None)
    if callable(value) and isinstance(qualname, str):
        return f"{getattr(value, '__module__', '')}.{qualname}"
    return str(value)


_CANONICAL: Final = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_jsonable)
"""The canonical form without ``orjson`` (see ``canonical_json``)."""

_ORJSON_OPTIONS: Final = (
    0 if orjson is None else orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)


def canonical_json(value: object) -> bytes:
    """``value``'s canonical JSON, the bytes every fingerprint is taken of: keys sorted, no spaces, text as it is.

    Written by ``orjson`` where it is installed (a dependency on CPython), else by the standard
    encoder; both give the same bytes for every JSON value but a float of magnitude below 1e-4,
    which ``orjson`` writes without an exponent. A value ``orjson`` cannot write (a non-string
    key, an integer beyond 64 bits, a lone surrogate, nesting past 254 levels) is written by the
    standard encoder, so the same value always gives the same bytes in one installation.
    """
    if orjson is not None:
        try:
            return orjson.dumps(value, default=_jsonable, option=_ORJSON_OPTIONS)
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            pass
    return _CANONICAL.encode(value).encode("utf-8", "surrogatepass")


def canonical_json_array(values: Sequence[object]) -> bytes:
    """``values`` as one JSON array whose items are each value's ``canonical_json``, comma-joined in brackets.

    One ``orjson`` call where it writes the whole list (each item then reads as it does alone, a
    value it cannot write making the whole list fail); else item by item, so the items are always
    ``canonical_json``'s bytes.

    >>> canonical_json_array([{"b": 1, "a": 2}, "x"])
    b'[{"a":2,"b":1},"x"]'
    """
    if orjson is not None:
        try:
            return orjson.dumps(
                values if isinstance(values, (list, tuple)) else list(values), default=_jsonable, option=_ORJSON_OPTIONS
            )
        except TypeError:
            pass
    return b"[" + b",".join(map(canonical_json, values)) + b"]"


def fingerprint(value: object) -> str:
    """A short stable digest of a JSON-shaped value: the same value gives the same text in every process."""
    return hashlib.sha256(canonical_json(value)).hexdigest()[:FINGERPRINT_LENGTH]


def message_digest(message: object) -> bytes:
    """A message's digest (16 bytes of the SHA-256 of its canonical JSON), the unit of ``prefix_fingerprint``."""
    return hashlib.sha256(canonical_json(message)).digest()[:16]


def prefix_fingerprint(digests: Sequence[bytes]) -> str:
    """The fingerprint of a message prefix from its messages' digests, in order.

    Two prefixes have the same fingerprint exactly when their messages have the same digests in
    the same order; a prefix extended by new messages changes it.
    """
    return hashlib.sha256(b"".join(digests)).hexdigest()[:FINGERPRINT_LENGTH]


SERVER_STATE_FIELDS: Final = openai_responses.SERVER_STATE_FIELDS
"""The Responses request fields that name state the server holds."""


def continues_server_state(request: Mapping[str, object], *, lane: Lane) -> bool:
    """Whether a request continues server-held state (see the module docstring): the law's ``chained``.

    >>> continues_server_state({"previous_response_id": "resp_1"}, lane="openai.responses")
    True
    >>> continues_server_state({"previous_response_id": ""}, lane="openai.responses")
    False
    """
    return adapter_for(lane).continues_server_state(request)


def tool_rounds_since_user_text(messages: Sequence[object] | str, *, lane: Lane) -> int:
    """Consecutive tool rounds the assistant made since the last user text.

    A round is a call turn as the lane reads it for the law (Anthropic and Chat: an assistant
    message that emits client calls; Responses: a run of call items, so parallel calls are one
    round; Gemini: one call step). User messages that only carry tool results do not reset the
    count; a user message with text does. Only the stretch after the last user text is read.
    """
    adapter = adapter_for(lane)
    items = listed(messages, lane=lane)
    if items is None:
        return 0
    start = next((index + 1 for index in range(len(items) - 1, -1, -1) if adapter.speaks_as_user(items[index])), 0)
    try:
        view = adapter.read(items[start:])
    except ToolTurnInputError:
        return 0  # the law refuses such a list before the tools rule reads it
    return sum(kind in (TURN, CLEAN) for kind in view.kinds)


def is_instruction(item: object) -> bool:
    """Whether a transcript item (Chat, Responses) is a ``system`` or ``developer`` message."""
    return request_parts.is_instruction(item)


def is_model_output(item: object, *, lane: Lane) -> bool:
    """Whether the model produced this transcript item (see the module docstring's "who said it")."""
    return adapter_for(lane).is_model_output(item)


def emitted_call_ids(item: object, *, lane: Lane) -> tuple[str, ...]:
    """The client tool call ids a transcript item emits, in order (none: it emits no client call).

    Anthropic: the ``tool_use`` blocks of an assistant message; Chat: its ``tool_calls``;
    Responses: a call item's ``call_id`` (``function_call``, ``custom_tool_call``, ``shell_call``, ...);
    Bedrock: the client ``toolUse`` blocks of an assistant message; Gemini: the calls of a ``model`` content
    as the lane knows them (its id, or ``<name>#<k>`` without one).
    """
    return adapter_for(lane).emitted_call_ids(item)
