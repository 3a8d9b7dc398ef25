"""The neutral view the law reads: a wire list cut into turns, results and other units.

A lane adapter (``otel_toolturn.lanes``) reads its wire list into this view and writes the law's
outcome back. The view knows no wire format; the law knows no lane.

- a turn (``Turn``): one assistant message (Responses: one run of call items; Gemini: one run of model
  contents) that emits calls;
- a result: one recorded result (an Anthropic ``tool_result`` block, a Chat ``tool`` message, a
  Responses ``function_call_output`` item), with the call id it answers;
- a part: the non-result blocks of an Anthropic user message that also held results (Gemini: of a user
  content that held function responses);
- a reply: any other message the model produced (an assistant message without calls), carried
  untouched — it ends the window in which a result may still move up to its call;
- a clean turn (``Clean``): a turn and the results right after it, read as one unit with no per-call
  objects, when the lane tells from the wire fields alone that the law has nothing to restore on it
  (its calls distinct, exactly one result per call right after it, nothing to move; the law asks
  whether the API accepts its ids);
- anything else, carried untouched as the wire item itself.

Also here, because every lane needs them: the interrupted-close texts, and ``field`` / ``replace`` /
``without``, which read and copy both plain dicts and the SDKs' own typed objects without mutating either.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, Protocol

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._vocab import CallKind, Lane, RepairForm

INTERRUPTED_RESULT_TEXT: Final = (
    "[tool call interrupted: no result was recorded, so its outcome is unknown. "
    "Verify its effect before relying on it or calling it again.]"
)
"""The synthetic interrupted result the law adds for a call that has no recorded result."""

KNOWN_INTERRUPTED_TEXTS: Final[tuple[str, ...]] = (
    INTERRUPTED_RESULT_TEXT,
    "[Tool result missing due to internal error]",
    "[Request interrupted by user for tool use]",
)
"""Texts recognised as an interrupted close: ours, and the ones other frameworks write."""

SECOND_RESULT_SEPARATOR: Final = "[another result was recorded for this same call:]"
"""The text standing between two results recorded for one call when the view folds them into one."""


def in_place_heading(call_id: str, name: str, *, second: bool, error: bool) -> str:
    """The line a result delivered where it stands begins with: which call it answers, and that it came late.

    ``second``: the call already had a result the model saw; ``error``: the result was an error.
    """
    which = "Another result" if second else "The result"
    flag = " (an error)" if error else ""
    return f"[{which} of tool call {call_id} ({name}){flag}, recorded after the model had answered:]"


def is_interrupted_text(text: str) -> bool:
    """Whether ``text`` is a recorded interrupted close (says only that no outcome was recorded)."""
    return text.strip() in KNOWN_INTERRUPTED_TEXTS


def field(obj: object, name: str) -> object:
    """Read ``name`` from a dict or a typed SDK object; ``None`` when absent.

    On a typed object, an SDK's "not given" sentinel reads as absent: a falsy value of a class that is
    not a builtin (the mistralai SDK's ``UNSET``, which its typed messages hold for every field left out).
    """
    if type(obj) is dict:
        return obj.get(name)
    if isinstance(obj, Mapping):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None or value or type(value).__module__ == "builtins":
        return value
    return None


def replace(obj: object, position: int | None = None, **updates: object) -> object:
    """A copy of ``obj`` with ``updates`` applied; ``obj`` itself is never mutated.

    Dicts are copied shallowly; pydantic models through ``model_copy``; dataclasses through
    ``dataclasses.replace``. Anything else cannot be copied faithfully and is rejected.
    """
    if isinstance(obj, Mapping):
        return {**obj, **updates}
    model_copy = getattr(obj, "model_copy", None)
    if callable(model_copy):
        return model_copy(update=updates)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **updates)
    raise ToolTurnInputError(
        f"cannot copy an item of type {type(obj).__name__!r} to repair it; "
        "expected a dict, a pydantic model or a dataclass",
        position=position,
    )


def without(obj: object, name: str, position: int | None = None) -> object:
    """A copy of ``obj`` with the field ``name`` absent; ``obj`` itself is never mutated.

    Dicts are copied without the key; a pydantic model gets ``None`` there and the field unset, so an
    SDK that sends only the fields set (``exclude_unset``) leaves it out; a dataclass gets ``None``.
    Anything else is rejected, as by ``replace``.
    """
    if isinstance(obj, Mapping):
        return {key: value for key, value in obj.items() if key != name}
    copied = replace(obj, position, **{name: None})
    fields_set = getattr(copied, "model_fields_set", None)
    if isinstance(fields_set, set):
        fields_set.discard(name)
    return copied


class Call:
    """One client tool call: its id and the wire object carrying it.

    Compared by value; mutable, so not hashable.
    """

    __slots__ = ("call_id", "ref")

    def __init__(self, call_id: str, ref: object) -> None:
        self.call_id = call_id
        self.ref = ref

    def __repr__(self) -> str:
        return f"Call(call_id={self.call_id!r}, ref={self.ref!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Call) and (self.call_id, self.ref) == (other.call_id, other.ref)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value, as a dataclass is


class TakenIds(set[str]):
    """The call ids a request uses so far, derived ones included, and where the search for a free id resumes.

    ``resume``: per base id, the ``n`` of ``<id>_<n>`` after the last one derived. The law adds every id it
    derives, and within one reading a candidate id, once taken, stays taken; so a search that resumes there
    finds what a search from ``_2`` would, and deriving ``k`` ids for one base costs ``k`` probes in all, not
    ``k²``.
    """

    __slots__ = ("resume",)

    def __init__(self) -> None:
        super().__init__()
        self.resume: dict[str, int] = {}


class Mark(NamedTuple):
    """What a lane's reading restores on a unit, and how it is reported: the form, the id, the kind of call."""

    form: RepairForm
    call_id: str
    """The id to report (a call id, or an item id for the Responses item forms)."""
    kind: CallKind = "function"


@dataclass(slots=True)
class Turn:
    """An assistant message (or Responses run of call items) that emits calls, in call order."""

    position: int
    calls: list[Call]
    items: tuple[object, ...]
    """The wire items the turn was read from (one message, or the Responses run)."""
    trailing: bool = False
    """Whether a non-call block stands after the first call (Anthropic; the other lanes keep them apart)."""
    marks: tuple[Mark, ...] = ()
    """What the lane restores on the turn's own items (Gemini:
    ``placeholder_signature``, by ``write_turn``; Responses: ``duplicate_item_id``, a call item already
    read without its repeated ``id`` in ``items``; Anthropic: ``missing_result`` and ``orphan_result`` of
    server tool and MCP blocks, the message already read with them restored in ``items``); a marked turn
    is rewritten."""


UnitKind = Literal["other", "turn", "result", "part", "reply", "clean"]
"""What a unit of the view is (``View.kinds``, ``Emitted.kinds``); each has its constant below."""
OTHER: Final = "other"
"""A unit carried untouched: the wire item itself."""
TURN: Final = "turn"
"""A unit that is a ``Turn``."""
RESULT: Final = "result"
"""A unit that is one recorded result's wire object (a block, a message or an item)."""
PART: Final = "part"
"""A unit that is a run of a message's non-result blocks (Anthropic), as a tuple."""
REPLY: Final = "reply"
"""A unit carried untouched that the model produced (an assistant message without calls): the wire item itself."""
CLEAN: Final = "clean"
"""A unit that is a ``Clean`` turn with its results."""


class Clean:
    """A turn the lane read as clean, with its results: carried untouched unless a later unit reaches it.

    The lane reads a turn this way only when, from the wire fields alone, the law has nothing to restore
    on it: its calls carry distinct ids, nothing is marked on its items, and the wire items right after
    it hold exactly one result per call and nothing else (Anthropic: but, after the last result in its
    message, blocks that are no result, which the full reading writes where they stand). What the lane
    does not look at — an id the API refuses (``fits_ids``, asked by the law once over every clean
    turn's ids), a later result answering one of its calls, or (unique-id lanes) an id an earlier turn
    already used — the law finds; the list is then read again with the turn in full (``read(full=...)``).
    """

    __slots__ = ("end", "ids", "position")

    def __init__(self, position: int, ids: Sequence[str], end: int) -> None:
        self.position = position
        """Where the turn stands in the wire list."""
        self.ids = ids
        """The turn's call ids, in call order."""
        self.end = end
        """Where the items holding its results end: its wire items are ``position`` up to ``end``."""


@dataclass(slots=True)
class View:
    """A wire list cut into units, as parallel lists, so an untouched item costs two appends.

    ``units[i]`` is read by ``kinds[i]``: the wire item (``OTHER``, ``REPLY``), a ``Turn`` (``TURN``),
    a result's wire object (``RESULT``), a tuple of blocks (``PART``), or a ``Clean`` turn with its
    results (``CLEAN``). For a result, ``ids[i]`` is the call id it answers (``None``: unreadable); for a
    result or a part, ``sources[i]`` is the wire message it stands in.
    """

    units: list[object] = dataclasses.field(default_factory=list)
    kinds: list[UnitKind] = dataclasses.field(default_factory=list)
    ids: dict[int, str | None] = dataclasses.field(default_factory=dict)
    sources: dict[int, object] = dataclasses.field(default_factory=dict)
    refused: dict[int, Mark] = dataclasses.field(default_factory=dict)
    """Units the wire cannot hold where they stand and no rule places (Responses: a repeated item id, reasoning
    with nothing to belong to): the form they are left out under, and the id to report."""
    marks: dict[int, Mark | tuple[Mark, ...]] = dataclasses.field(default_factory=dict)
    """Units kept where they stand that the lane restores (Gemini: text that stood after the responses of its
    content, ``text_after_results``, laid out anew by ``write``; Responses: an output item read without its
    repeated ``id``, ``duplicate_item_id``; Anthropic: an assistant message without client calls, read with
    its open server tool uses closed and its orphan server results left out): the form they are reported
    under, and the id to report — one mark, or one per id restored on the unit."""
    clean_ids: list[str] = dataclasses.field(default_factory=list)
    """The call ids of the ``Clean`` units, in the order read: the lane extends it with each one's ``ids``."""
    apart: set[int] = dataclasses.field(default_factory=set)
    """Results that open a later wire message than the results right before them, where the lane needs a
    turn's results in one message (Gemini): they are not in place, so they are moved up beside the others."""


@dataclass(slots=True)
class Emitted:
    """The law's output, as parallel lists: each item, its kind, and (results, parts) its source message.

    A turn is emitted as its written wire items (``OTHER``); a result the law made or changed has
    the source ``None``.
    """

    items: list[object] = dataclasses.field(default_factory=list)
    kinds: list[UnitKind] = dataclasses.field(default_factory=list)
    sources: list[object] = dataclasses.field(default_factory=list)
    breaks: set[int] = dataclasses.field(default_factory=set)
    """Where a unit the law left out (``View.refused``) stood: the index in ``items`` of what followed it. A lane
    that regroups result and part runs into messages does not join runs across one, so what stands before it
    is written as it was before the unit was there."""
    more: bool = False
    """Whether more of the transcript follows what is emitted (a segment of a stream, ``_law_stream``; the units
    before a stretch the law copies as it stands, ``_law._untouched``): it then follows where an answer starts."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SystemPromptPiece:
    """One piece of a system prompt: its text (absent or empty ⇒ it contributes nothing) and where it came from."""

    raw_content: str | None = None
    source: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class WireCall:
    """One client call of a handoff's carrier: its name, its id, and where it stands.

    ``position`` is the index in the message list of the message (Anthropic, Chat) or item
    (Responses) holding it; ``slot`` its index in that message's blocks / ``tool_calls``
    (``None`` for a Responses item, which is the call itself); ``kind`` its wire type (Responses:
    ``function_call`` or ``custom_tool_call``, which decides the type of the output answering it).
    """

    name: str
    call_id: str
    position: int
    slot: int | None
    kind: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Carrier:
    """The last assistant message (Responses: run of items ``start..end`` inclusive) and its calls."""

    start: int
    end: int
    calls: tuple[WireCall, ...]


class HandoffWire(Protocol):
    """A lane's spelling of the few shapes a handoff touches (``otel_toolturn.handoff``)."""

    def carrier(self, messages: Sequence[object]) -> Carrier | None:
        """The message (Responses: run of model-output items) carrying the round's calls; ``None``: no assistant."""

    def is_plain_assistant(self, message: object) -> bool:
        """An assistant message that carries no tool calls."""

    def holds_results(self, message: object) -> bool:
        """Whether a list entry is a result of a batch (a results message, a ``tool`` message, an output item)."""

    def error_result(self, call: WireCall, text: str) -> object:
        """The lane's error result answering ``call`` with ``text`` (Anthropic: the block alone)."""

    def join_batch(self, messages: Sequence[object], carrier: Carrier, end: int, result: object) -> list[object]:
        """A new list with ``result`` (an ``error_result``) joining the batch whose results end at ``end``."""

    def without_call(self, messages: Sequence[object], carrier: Carrier, call: WireCall) -> list[object]:
        """A new list with ``call`` removed from ``carrier`` (the last call: the carrier's text kept as plain text)."""


class ValidationStream(Protocol):
    """A lane's provider rules fed one segment of a transcript at a time (``LaneAdapter.validate_stream``).

    Segments are cut only where ``_law_stream.cut_here`` allows (before an item the model produced whose
    predecessor it did not produce). Positions count on across segments: every ``Violation`` and every
    ``ToolTurnInputError`` names the item's position in the whole transcript. What the stream keeps of the
    segments already fed is bounded by their calls and ids, never their content.
    """

    def feed(self, messages: Sequence[object], *, last: bool) -> None:
        """Judge the next segment; ``last``: the transcript ends with it."""

    def close(self) -> list[Violation]:
        """The rules the whole transcript breaks: exactly ``validate`` of the whole list, in its order."""


class LaneAdapter(Protocol):
    """One wire lane's reading and writing of the view: the only place its spelling lives."""

    lane: Lane
    unique_ids: bool
    """Whether the API rejects a call id repeated anywhere in the request (reused ids get derived ids)."""
    results_anywhere: bool
    """Whether the API accepts a result anywhere after its call (Responses) rather than only right after it."""

    def validate(self, messages: Sequence[object], *, chained: bool = False) -> list[Violation]:
        """The provider rules ``messages`` breaks, in the provider's words, in order of position (empty: none).

        ``chained``: the request continues server-held state (only Responses reads it).
        """

    def validate_stream(self, *, chained: bool = False) -> ValidationStream:
        """``validate`` fed one segment at a time: ``validate`` is this stream fed the whole list as one segment."""

    def read(
        self, messages: Sequence[object], full: Container[int] = (), state: dict[str, object] | None = None
    ) -> View:
        """Cut the wire list into units, in order (a list it cannot read is a ``ToolTurnInputError``).

        A turn the lane tells clean is one ``Clean`` unit, unless its position is in ``full``: then it is
        read as a ``Turn`` and its results, as any other. ``state``: the list is one segment of a transcript
        read in segments (``_law_stream``); what the lane's reading of the earlier segments bears on this one
        is kept there, and updated (Responses: the item ids so far; Gemini: the call matcher and whether a
        user turn stood yet; Ollama: the call matcher).
        """

    def interrupted(self, result: object) -> bool:
        """Whether the result is an interrupted close (it says only that no outcome was recorded)."""

    def write_turn(
        self, items: tuple[object, ...], position: int, calls: Sequence[tuple[object, object]], *, trailing: bool
    ) -> list[object]:
        """The turn's wire ``items`` holding exactly the kept calls, as ``(read, written)`` wire objects in call order.

        ``position``: where the turn stands; ``trailing``: whether a non-call block stands after its first
        call. Non-call blocks go ahead of the calls; items are the originals where nothing changed.
        """

    def rename_call(self, call: Call, new_id: str) -> Call:
        """A copy of the call carrying ``new_id``."""

    def rename_result(self, result: object, new_id: str) -> object:
        """A copy of the result's wire object answering ``new_id``."""

    def fits_ids(self, call_ids: Sequence[str]) -> bool:
        """Whether the API accepts every one of ``call_ids`` (non-empty: ids are read so) as a call id.

        Asked once per list, over the ids of its ``Clean`` turns, and once per turn read in full (Anthropic: each
        matches ``^[a-zA-Z0-9_-]+$``; Chat: each is at most 40 characters long); one id is asked as a list of one.
        """

    def derive_id(self, call_id: str, taken: TakenIds) -> str:
        """A deterministic id for ``call_id`` (a later reuse, or one the API refuses) that fits and is not taken."""

    def call_kind(self, call: object) -> CallKind:
        """The kind of call a call's wire object is (a ``Call.ref``)."""

    def synthesize(self, call: Call) -> object | None:
        """The interrupted result for a call with none; ``None``: no honest close exists, the call is left out."""

    def fold(self, results: Sequence[object]) -> object:
        """One result holding every byte of ``results`` (first first), joined by the separator."""

    def call_name(self, call: object) -> str:
        """The name a delivered result's heading gives its call (a ``Call.ref``): its tool's name, else ``""``."""

    def deliver(self, result: object, call_id: str, name: str, *, second: bool) -> tuple[UnitKind, object]:
        """A result the model had not seen when it answered, as a unit the lane accepts where it stands.

        ``call_id``: the call's id as the view writes it; ``name``: its ``call_name``.

        Not a result any more: text naming the call (``in_place_heading``), then every byte of the
        result's content (images and other parts kept as parts), as ``(kind, unit)`` — an Anthropic
        ``PART`` of blocks in the message it stood in, or a whole user message (``OTHER``).
        """

    def write(self, out: Emitted) -> list[object]:
        """The wire list for the law's output."""

    transcript_field: str
    """The request's keyword argument holding the wire list the law reads (``messages``, ``input``, ``contents``)."""

    def setting(self, request: Mapping[str, object], name: str) -> object:
        """A request setting by its SDK name (google-genai: a field of ``config``); ``None``: absent."""

    def tools(self, request: Mapping[str, object]) -> object:
        """The tool definitions a request carries, where the lane keeps them; ``None``: none."""

    def tool_choice(self, request: Mapping[str, object]) -> object:
        """The caller's tool choice as the request spells it; ``None``: none given."""

    def tool_choice_none(self) -> object | None:
        """The lane's own "call no tool", a fresh value each time; ``None``: the lane has no such choice."""

    def says_no_tool(self, tool_choice: object) -> bool:
        """Whether a caller's tool choice is the lane's "call no tool"."""

    def with_tool_choice(self, request: Mapping[str, object], choice: object) -> dict[str, object]:
        """A copy of ``request`` whose tool choice is ``choice``, where the lane keeps it; never in place."""

    def system_pieces(
        self, request: Mapping[str, object], transcript: Sequence[SystemPromptPiece] | None = None
    ) -> tuple[SystemPromptPiece, ...]:
        """Every system-prompt piece of a request, in wire order (``transcript``: its messages' pieces, if read)."""

    def continues_server_state(self, request: Mapping[str, object]) -> bool:
        """Whether the request continues state the server holds (names a previous response or a conversation)."""

    def is_model_output(self, item: object) -> bool:
        """Whether the model produced this transcript item."""

    def emitted_call_ids(self, item: object) -> tuple[str, ...]:
        """The client tool call ids a transcript item emits, in order (none: it emits no client call)."""

    def speaks_as_user(self, message: object) -> bool:
        """Whether a transcript item is the user speaking (text), not merely carrying tool results."""

    string_input: bool
    """Whether the transcript may be a string: one user turn, with no tool turn to read."""
    sdk_normalises_transcript: bool
    """Whether the lane's SDK reads the transcript into its own types before a request hook sees it."""
    sdk_listed_parameters: tuple[tuple[str, str], ...]
    """The parameters a request hook reads that the lane's SDK lists before it sends them, each with how it lists
    them (``openai_iterable``, ``openai_list``, ``anthropic``: see ``otel_toolturn.instrument``), in its own order."""
    sdk_listed_item_fields: tuple[str, ...]
    """The fields of the transcript's dict items the law reads and the lane's SDK lists when one holds an iterator."""
    head_settings: tuple[str, ...]
    """The request settings ahead of the transcript (its head), by SDK name (``setting``)."""
    instructions_in_transcript: bool
    """Whether a conversation's opening is read past the transcript's leading system / developer messages."""
    tools_field: str
    """The request setting holding the tool definitions, by SDK name (``setting``)."""
    tool_choice_field: str
    """The request setting holding the caller's tool choice, by SDK name (Converse: the ``toolConfig`` holding it)."""

    cli_alias: str
    """The lane's short name on the command line (``otel-toolturn check --lane``)."""

    def claims_body(self, body: Mapping[str, object], transcript_field: str | None) -> bool:
        """Whether a request body read without its lane is this lane's (``transcript_field``: where its list sat)."""

    def claims_item(self, item: Mapping[object, object]) -> bool:
        """Whether one transcript item read without its lane is this lane's beyond doubt."""

    def sdk_request(self, body: dict[str, object], model: str | None) -> dict[str, object]:
        """The wire body ``body`` read as the SDK call the request pipeline reads the lane in.

        ``body`` itself where the two are spelled alike; ``model``: the model the call names, where the body holds none.
        """

    def body_writes(
        self, body: Mapping[str, object], request: Mapping[str, object], sent: Mapping[str, object]
    ) -> dict[str, object]:
        """What to write into ``body`` so it sends ``sent``, decided from ``request`` (``sdk_request``'s reading)."""

    @property
    def handoff(self) -> HandoffWire | None:
        """The lane's handoff spelling; ``None``: no handoff runs on it (its system prompt lives outside the list)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Violation:
    """One provider rule a wire list breaks: where, which rule, and the provider's own words."""

    position: int
    rule: str
    message: str
