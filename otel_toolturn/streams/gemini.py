"""The Gemini stream observer: a pure reducer over ``GenerateContentResponse`` chunks.

Reads each chunk of ``generateContent`` / ``streamGenerateContent`` (the SDK's own
``types.GenerateContentResponse``, or the JSON as a dict: the REST camelCase spelling or the SDK's
snake_case one; a raw ``data:`` string or bytes is decoded here and counted as ``bad_frame`` when
it is not JSON) and never alters it. The stream has no ``[DONE]``: it ends with the chunk carrying
each candidate's ``finishReason``. What it reads:

- every candidate by its ``index`` (several with ``candidateCount > 1``): the parts of its
  ``content`` — a ``functionCall`` part (``name``, ``args``, optional ``id``) is one whole call:
  its arrival is its close evidence; the text of parts that are not thoughts (candidate 0 feeds the
  repetition poll); a part's ``thoughtSignature`` is never read — and ``finishReason``;
- ``modelVersion`` (judged against the requested model with its resource path, ``models/`` or
  ``publishers/google/models/``, removed: ``note_response_model``), ``responseId``, and
  ``usageMetadata``: input tokens are ``promptTokenCount`` (cached tokens included, and stated as
  ``cachedContentTokenCount``), output tokens ``candidatesTokenCount`` plus ``thoughtsTokenCount``
  (the output cap counts both);
- ``promptFeedback.blockReason`` of a chunk without candidates: the provider refused the prompt,
  an ending whose reason is reported as the finish reason (read as a word only: the block
  reasons are numbered differently); an in-band ``error`` object: an ending.

Finish reasons, read onto the report's vocabulary. The report's finish reasons are the words of
the closed set ``FINISH_REASONS`` (the SDK's ``FinishReason`` values, read case-insensitively); a
word outside it, and a number outside the two APIs' common numbering (0 to 5, sent with
``enum-encoding=int``), is ``OTHER``, Gemini's own "unknown reason":

- every finish reason is an ending (end statement ``finish``); the first decides the stream;
- ``MAX_TOKENS`` is the cap stop: a call that is the candidate's last part is the one the cap cut
  (not closed: a ``truncated`` drop whose clause names the output limit); calls a later part
  followed were finished;
- ``MALFORMED_FUNCTION_CALL``: the provider withheld a call the model made that it could not
  read: one ``truncated`` drop (no id) and ``model_output_invalid`` with cause ``truncated``;
- ``STOP``, ``SAFETY``, ``RECITATION``, ``UNEXPECTED_TOOL_CALL``, ``TOO_MANY_TOOL_CALLS``,
  ``MISSING_THOUGHT_SIGNATURE``, ``OTHER`` and the rest: the ending's word only; the calls that
  arrived are whole calls.

After a candidate finished, its parts and a second finish reason are refused and counted; usage,
model and id are always read. A candidate that never finished (or a stream with no candidate, no
block reason and no error): torn — the calls that arrived stay whole calls (they came whole).
Partial-argument streaming (Vertex ``partialArgs`` / ``willContinue``) is not assembled: such a
part is judged as a call nothing closed, never run.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final, Literal, get_args

from otel_toolturn.streams._frame import Getter, int_or_none
from otel_toolturn.streams._model_check import note_response_model
from otel_toolturn.streams._observer_base import ObserverBase
from otel_toolturn.streams._report import StreamReport, Usage
from otel_toolturn.streams._tool_calls import NOT_AN_OBJECT, CallSlot

FinishReason = Literal[
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_OTHER",
    "NO_IMAGE",
    "IMAGE_RECITATION",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
    "MISSING_THOUGHT_SIGNATURE",
    "MALFORMED_RESPONSE",
    "ESCALATION",
    "PUP_LIMITED_DISABLED",
    "CONTINUATION",
    "MODEL_ARMOR",
]
"""The closed set a Gemini finish reason (or prompt block reason) is reported as."""
FINISH_REASONS: Final[tuple[FinishReason, ...]] = get_args(FinishReason)
UNKNOWN_FINISH: Final[FinishReason] = "OTHER"
CAP_STOP: Final[FinishReason] = "MAX_TOKENS"
WITHHELD_CALL: Final[FinishReason] = "MALFORMED_FUNCTION_CALL"
_BY_WORD: Final[dict[str, FinishReason]] = {word: word for word in FINISH_REASONS}
_BY_NUMBER: Final[dict[int, FinishReason]] = {
    0: "FINISH_REASON_UNSPECIFIED",
    1: "STOP",
    2: "MAX_TOKENS",
    3: "SAFETY",
    4: "RECITATION",
    5: "OTHER",
}


def read(obj: object, camel: str, snake: str) -> object:
    """Read one field in any spelling: a dict's camelCase key, else its snake_case one; an object's attribute."""
    if type(obj) is dict:
        value = obj.get(camel)
        return obj.get(snake) if value is None else value
    return getattr(obj, snake, None)


def finish_word(raw: object, *, numbered: bool = True) -> FinishReason:
    """A finish reason as the report carries it: a word of ``FINISH_REASONS``, else ``OTHER``.

    Reads the SDK's enum, a string in any case, or (``numbered``) the number ``enum-encoding=int``
    sends, where only 0 to 5 mean the same on both APIs.

    >>> finish_word("STOP"), finish_word("max_tokens"), finish_word("NEW_REASON"), finish_word(2)
    ('STOP', 'MAX_TOKENS', 'OTHER', 'MAX_TOKENS')
    """
    if isinstance(raw, enum.Enum):
        raw = raw.value
    if type(raw) is int:
        return _BY_NUMBER.get(raw, UNKNOWN_FINISH) if numbered else UNKNOWN_FINISH
    if isinstance(raw, str):
        return _BY_WORD.get(raw.upper(), UNKNOWN_FINISH)
    return UNKNOWN_FINISH


def model_id(requested: str | None) -> str | None:
    """The requested model without its resource path (``models/gemini-2.5-flash`` → ``gemini-2.5-flash``)."""
    return None if requested is None else requested.rpartition("/")[2]


def usage_of(metadata: object) -> Usage:
    """The token counts of one ``usageMetadata`` (see the module docstring); ``None`` where it states none."""
    prompt = int_or_none(read(metadata, "promptTokenCount", "prompt_token_count"))
    candidates = int_or_none(read(metadata, "candidatesTokenCount", "candidates_token_count"))
    thoughts = int_or_none(read(metadata, "thoughtsTokenCount", "thoughts_token_count"))
    output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    cached = int_or_none(read(metadata, "cachedContentTokenCount", "cached_content_token_count"))
    return Usage(input_tokens=prompt, output_tokens=output, cache_read_input_tokens=cached)


def _list(value: object) -> list[object]:
    return value if type(value) is list else []


def call_slot(function_call: object, *, index: int, choice: int) -> CallSlot:
    """The slot of one ``functionCall``: whole (``closed``) unless it streams its arguments in parts."""
    call_id, name = read(function_call, "id", "id"), read(function_call, "name", "name")
    slot = CallSlot(
        index=index,
        choice=choice,
        call_id=call_id if type(call_id) is str else "",
        name=name if type(name) is str else "",
    )
    args = read(function_call, "args", "args")
    if isinstance(args, Mapping):
        slot.initial = dict(args)
    elif args is not None:
        slot.final = NOT_AN_OBJECT
    partial = read(function_call, "willContinue", "will_continue") is True or bool(
        read(function_call, "partialArgs", "partial_args")
    )
    slot.closed = not partial
    return slot


class CandidateParts:
    """What one candidate's parts carried, read in order: its call slots, its text, its last part."""

    __slots__ = ("calls", "last", "texts")

    def __init__(self) -> None:
        self.calls: list[CallSlot] = []
        self.texts: list[str] = []
        self.last: CallSlot | None = None
        """The slot of the candidate's last part when that part is a call (an empty text part is no part)."""

    def read(self, parts: object, *, choice: int) -> list[str]:
        """Read ``parts`` (one content's list); returns the texts they added, in order."""
        added: list[str] = []
        for part in _list(parts):
            function_call = read(part, "functionCall", "function_call")
            if function_call is not None:
                slot = call_slot(function_call, index=len(self.calls), choice=choice)
                self.calls.append(slot)
                self.last = slot
                continue
            text = read(part, "text", "text")
            if type(text) is str and not text:
                continue
            self.last = None
            if type(text) is str and read(part, "thought", "thought") is not True:
                added.append(text)
        self.texts.extend(added)
        return added

    def closed(self, slot: CallSlot, finish: str | None) -> bool:
        """A call's close evidence: whole, and not the last part of a candidate the cap stopped."""
        return slot.closed and not (finish == CAP_STOP and slot is self.last)


class GeminiObserver(ObserverBase):
    """Observes one Gemini ``streamGenerateContent`` stream; ``finish()`` gives its ``StreamReport``."""

    __slots__ = (
        "_blocked",
        "_candidates",
        "_ended",
        "_finish",
        "_requested_id",
        "_withheld",
    )

    def __init__(self, *, requested_model: str | None, max_output_tokens: int | None = None) -> None:
        super().__init__(requested_model=requested_model, max_output_tokens=max_output_tokens)
        self._requested_id = model_id(requested_model)
        self._candidates: dict[int, CandidateParts] = {}
        self._finish: dict[int, FinishReason] = {}
        self._ended = False
        self._blocked: FinishReason | None = None
        self._withheld = 0

    def _read_fields(self, chunk: object, get: Getter) -> None:
        del get  # both spellings are read by ``read``
        candidates = read(chunk, "candidates", "candidates")
        if candidates is None and type(chunk) is dict and chunk.get("error") is not None:
            error = chunk["error"]
            if self._ledger.decide("error", read(error, "status", "status") or read(error, "code", "code")):
                self._ended = True
            return
        self._response(chunk)
        for position, candidate in enumerate(_list(candidates)):
            self._candidate(candidate, position)
        if not candidates:
            blocked = read(read(chunk, "promptFeedback", "prompt_feedback"), "blockReason", "block_reason")
            if blocked is not None:
                word = finish_word(blocked, numbered=False)
                if self._ledger.decide("finish", word):
                    self._ended = True
                    self._blocked = word

    def _response(self, chunk: object) -> None:
        model = read(chunk, "modelVersion", "model_version")
        if model != self._model.name:
            self._model = note_response_model(self._model, model, self._requested_id)
        if self._response_id is None:
            response_id = read(chunk, "responseId", "response_id")
            if type(response_id) is str:
                self._response_id = response_id
        metadata = read(chunk, "usageMetadata", "usage_metadata")
        if metadata is not None:
            self._take_usage(usage_of(metadata))

    def _candidate(self, candidate: object, position: int) -> None:
        index = read(candidate, "index", "index")
        if type(index) is not int:
            index = position
        parts = read(read(candidate, "content", "content"), "parts", "parts")
        reason = read(candidate, "finishReason", "finish_reason")
        if self._ended or index in self._finish:
            if _list(parts):
                self._ledger.note("content", "parts")
            if reason is not None:
                self._ledger.note("finish", finish_word(reason))
            return
        read_parts = self._candidates.get(index)
        if read_parts is None:
            read_parts = self._candidates[index] = CandidateParts()
        for text in read_parts.read(parts, choice=index):
            if index == 0:
                self._poll.feed(text)
        if reason is not None:
            word = finish_word(reason)
            if not self._finish:
                self._ledger.decide("finish", word)
            self._finish[index] = word
            if word == WITHHELD_CALL:
                self._withheld += 1

    def _closed(self, slot: CallSlot) -> bool:
        return self._candidates[slot.choice].closed(slot, self._finish.get(slot.choice))

    def finish(self) -> StreamReport:
        """Return the report of everything fed so far; calling it again returns an equal report."""
        reasons = tuple(self._finish[i] for i in sorted(self._finish))
        if self._blocked is not None:
            reasons = (self._blocked,)
        torn = not self._ended and (not self._finish or any(i not in self._finish for i in self._candidates))
        return self._report(
            slots=[slot for index in sorted(self._candidates) for slot in self._candidates[index].calls],
            closed_of=self._closed,
            finish_reasons=reasons,
            cap_stop=CAP_STOP in reasons,
            torn=torn,
            withheld_calls=self._withheld,
        )
