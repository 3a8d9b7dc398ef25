"""The ``otel-toolturn`` command: ``check`` saved transcripts, run the ``demo``, write out the ``dashboards``.

``otel-toolturn check FILE...`` reads saved request bodies or transcripts and says, per transcript,
what the provider would refuse (``validate``: position, rule, the provider's own words) and what
the law would restore (``ensure_tool_turn_invariants``: each repair's form, call ids, whether it
is lossy). ``--fix OUT`` writes the repaired copy in the shape it was read.

Input, per file (``-`` is stdin):

- JSON: a list of messages (or Responses items, or Gemini contents), or a request body holding
  ``messages``, ``input`` or ``contents`` (the rest of the body is kept as it is in the ``--fix`` copy);
- JSONL: one such value per line (blank lines skipped).

A message is a JSON object with a ``role``, a ``type`` or ``parts``; a list with none is no
transcript, and is refused. Only regular files and stdin are read (a FIFO, a device or a directory
is refused before it is read), at most ``--max-size`` bytes each (64 MiB unless raised: a file's
size is checked before it is read, stdin is read no further than the limit). The text is strict
JSON: ``NaN``, ``Infinity`` and numbers beyond a float's range are refused, and the ``--fix`` copy
is strict JSON too, one message a line. A byte-order mark is skipped. The top-level value and
each list right inside a top-level object are read member by member, so the text is never held
whole beside the values read from it, and a string of up to 32 characters read again soon after (a
role, a type, a call's id in its result) is the same object.

A transcript is never held whole either, nor is its report (written a finding at a time). A file is read
twice, the two readings side by side a transcript at a time (``surveyed`` one value ahead, then
``judge_streamed``; stdin is first kept in a temporary file): the first reading keeps a body without its
transcript and learns, from the transcript's items one at a time, its lane (``lanes.LaneClues``), its
length and whether it holds a message; the second keeps none of the body's other fields and feeds the
transcript to the provider rules (``LaneAdapter.validate_stream``) and the law
(``_law_stream.LawStream``) in segments of about ``SEGMENT`` items or ``SEGMENT_TEXT`` characters of
text, whichever comes first, cut where an answer starts, and the view to the rules again (until the law
first changes a segment, the view is the input, item for item, and its verdict the input's). What is
held is a segment and what the streams carry (per call its ids, per turn its calls' names and kinds,
never their content); the reports and the ``--fix`` copy wait, in memory up to ``SPOOLED_IN_MEMORY``
bytes each and then in a temporary file, until every transcript of the file was judged: a file found
unreadable part way gets its one line, and no copy.

A Responses body that continues server-held state (a non-empty ``previous_response_id`` or
``conversation``: ``compose.continues_server_state``) is judged as such: an output whose call is
not in the list may answer a call the server holds.

The lane, unless ``--lane`` names it, is read from the shape, first match wins:
a body with ``input`` → ``openai.responses``; a body with ``contents`` → ``gemini.generate_content``;
a body with a Converse field (``modelId``, ``toolConfig``, ``inferenceConfig``,
``additionalModelRequestFields``) or a ``system`` list of blocks without a ``type`` →
``bedrock.converse``; a body with a top-level ``system`` → ``anthropic.messages``; then any item that
is a Responses item (``function_call``, ``function_call_output``, ``reasoning``, …) → Responses; an
item with a ``parts`` list or the role ``model`` → Gemini; a Converse block (a ``toolUse``,
``toolResult``, ``reasoningContent`` or ``cachePoint`` key, no ``type``) → Bedrock Converse; a
``tool_use``/``tool_result`` block → Anthropic; ``tool_calls`` or role ``tool`` → Chat Completions;
then a ``system``/``developer`` role message → Chat Completions. A list with none of these has no
tool turn to judge: it is read as Chat Completions and the report says the lane was a guess.

``--dialect`` judges in a provider's variant of its lane's rules (``mistral``: Mistral's Chat
Completions, its id pattern and its words; ``deepseek``: thinking mode's ``reasoning_content``; ``cohere``:
Cohere's words), and names the lane itself (a ``--lane`` of another lane
is a usage error).

Exit codes (the highest over all transcripts): 0 clean; 1 repaired without loss; 2 a lossy
repair was needed (or, never expected, the law's view would still be refused); 3 unreadable input
(not a regular file, over the size limit, not UTF-8, not strict JSON, nested too deeply, no
messages) or a usage error (an unknown option, a ``--fix`` target that cannot be written) — always
one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import functools
import io
import itertools
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO, Final, Literal, NoReturn, TextIO, get_args

from otel_toolturn import __version__, lanes
from otel_toolturn._errors import ToolTurnError, ToolTurnInputError
from otel_toolturn._law import ToolTurnRepair
from otel_toolturn._law_stream import LawStream, cut_here
from otel_toolturn._validate import Violation
from otel_toolturn._view import ValidationStream
from otel_toolturn._vocab import DIALECTS, DemoTelemetry, Dialect, Lane
from otel_toolturn.compose import continues_server_state
from otel_toolturn.lanes import CLI_ALIASES, DIALECT_ADAPTERS, body_transcript

Outcome = Literal["clean", "repaired", "lossy"]
OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)
EXIT_CODES: Final[Mapping[Outcome, int]] = {"clean": 0, "repaired": 1, "lossy": 2}
EXIT_UNREADABLE: Final = 3
DEFAULT_MAX_SIZE: Final = 64 * 1024 * 1024
"""The most bytes ``check`` reads of one input unless ``--max-size`` says otherwise."""
VERDICTS: Final[Mapping[Outcome, str]] = {
    "clean": "clean: the provider would accept it as it is",
    "repaired": "repaired without loss",
    "lossy": "a lossy repair was needed",
}
LANE_ALIASES: Final[Mapping[str, Lane]] = CLI_ALIASES
"""Every name ``--lane`` takes: a lane's short alias, or the lane itself."""

Container = Literal["list", "body"]
Format = Literal["json", "jsonl"]


# --- reading ------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class Entry:
    """One transcript as read: where it came from, the container it sat in, and the list itself."""

    source: str
    container: Container
    body: Mapping[str, object] | None
    field: str | None
    messages: list[object] | str
    listed: Listed | None = None
    """When the list was read as a stream (``check``): what it held; ``messages`` is then empty."""
    alone: bool = True
    """Whether it is its file's one value (JSON); else it is one line of JSONL."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Document:
    """One input file: its format and its transcripts, in order."""

    name: str
    format: Format
    entries: tuple[Entry, ...]


Read = Callable[[int], bytes]
"""A byte source: ``read(n)`` returns at most ``n`` bytes, and ``b""`` at the end."""

Sink = Callable[[object], None]
"""Where the members of a list read as a stream go, one at a time, instead of into the list."""

Sinks = Callable[[int, str | None], Sink | None]
"""For the top-level value at an index, and the key of one of its members (``None``: the value itself is the
list), the sink a list's members go to; ``None``: the list is held. ``discard``: the member is read (and
must be JSON) but not kept, a list of it an item at a time."""


def discard(item: object) -> None:
    """The sink of a member read and not kept: nothing is held of it."""


class Listed:
    """What a list read as a stream held: how many items, whether one is a message, and what they tell of the lane."""

    __slots__ = ("clues", "count", "has_message")

    def __init__(self) -> None:
        self.count = 0
        self.has_message = False
        self.clues = lanes.LaneClues()

    def add(self, item: object) -> None:
        """Take the next item (not kept)."""
        self.count += 1
        if not self.has_message and _is_message(item):
            self.has_message = True
        if self.clues.claimed is None:
            self.clues.read(item)


def _is_message(item: object) -> bool:
    """Whether a list's item is a message: a JSON object with a role, a type or parts."""
    return isinstance(item, dict) and any(key in item for key in _MESSAGE_KEYS)


_TRANSCRIPT_FIELDS: Final = frozenset(lanes.ADAPTERS[lane].transcript_field for lane in lanes.BODY_TRANSCRIPT_LANES)
"""The body fields a transcript list may stand in."""


class _Survey:
    """The first reading of a file by ``check``: every list that may be a transcript is read as a stream, not kept."""

    __slots__ = ("lists",)

    def __init__(self) -> None:
        self.lists: dict[int, dict[str | None, Listed]] = {}
        """Per top-level value, what each list read as a stream held, by its key (``None``: the value itself)."""

    def sink(self, index: int, key: str | None) -> Sink | None:
        """Where the members of that list go: a ``Listed`` of it (a field no transcript stands in: held)."""
        if key is not None and key not in _TRANSCRIPT_FIELDS:
            return None
        listed = self.lists.setdefault(index, {})[key] = Listed()
        return listed.add


_CHUNK: Final = 1 << 20
_SPACE: Final = re.compile(r"[ \t\n\r]*")
_BLANK: Final = re.compile(r"[ \t\r]*")
_GOES_ON: Final = re.compile(r"[0-9.eE+-]*")
_COMMA: Final = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")
_SIZE: Final = re.compile(r"(\d+)([KMG]?)", re.IGNORECASE)
_UNITS: Final[Mapping[str, int]] = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_MESSAGE_KEYS: Final = ("role", "type", "parts")


_SHARED_UP_TO: Final = 32
"""Strings no longer than this are read as one object where they recur (roles, types, ids, short words)."""
_SHARED_AT_MOST: Final = 4096
"""How many short strings the reader keeps to share, at most: it forgets them all when it has more."""


class _Shared:
    """The ``object_pairs_hook`` of a reading: one string per key name, and one per recent short string value.

    Key names are interned. A short value read again soon after (a role, a type, a call's id in its result)
    is the same object as before; the values kept for that are forgotten every ``_SHARED_AT_MOST``, so what
    is held for sharing stays bounded, never one entry per id of the file.
    """

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[str, str] = {}

    def __call__(self, pairs: list[tuple[str, object]]) -> dict[str, object]:
        values = self._values
        if len(values) > _SHARED_AT_MOST:
            values.clear()
        return {
            sys.intern(key): values.setdefault(value, value)
            if type(value) is str and len(value) <= _SHARED_UP_TO
            else value
            for key, value in pairs
        }


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON (strict JSON has no NaN or Infinity)")


def _finite(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:40]} is beyond a float's range")
    return number


class _Reader:
    """The JSON values of a UTF-8 byte source, read in chunks and never more than ``limit`` bytes of it.

    The top-level value, and each list right inside a top-level object, are read member by member;
    each member (a message, or a body's field) is decoded whole by the standard JSON decoder
    (strict: ``NaN``, ``Infinity`` and out-of-range numbers refused). Only the text not yet decoded
    is kept, so memory holds the values read plus about a chunk of text, never the whole text beside
    them.
    """

    def __init__(self, name: str, read: Read, *, limit: int, sinks: Sinks | None = None) -> None:
        self._name = name
        self._read = read
        self._limit = limit
        self._sinks = sinks
        self._index = 0  # the top-level value being read
        self._bytes = 0
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self._json = json.JSONDecoder(object_pairs_hook=_Shared(), parse_constant=_no_constant, parse_float=_finite)
        self._text = ""
        self._pos = 0
        self._eof = False
        self._offset = 0  # characters dropped ahead of ``_text``
        self._counted = 0  # index in ``_text`` the line count has reached
        self._counted_line = 1
        self._line_start = 0  # absolute character offset where that line starts
        self.line = 1
        """The line the value being read starts on."""
        self.first_line = 0
        """The line the first value starts on (0 before it)."""

    def values(self) -> Iterator[tuple[int, object]]:
        """Each top-level value with the line it starts on; one value a line after the first."""
        while self._peek():
            self.line = self._where(self._pos)[0]
            self.first_line = self.first_line or self.line
            yield self.line, self._value("[{", self._sink(None))
            self._end_of_line()
            self._index += 1

    def _sink(self, key: str | None) -> Sink | None:
        return self._sinks(self._index, key) if self._sinks is not None else None

    def _more(self, at_least: int = _CHUNK) -> bool:
        """Append the next chunk of text (at least ``at_least`` bytes when there are); ``False`` at the end."""
        if self._eof:
            return False
        self._forget()
        data = self._read(min(max(at_least, _CHUNK), self._limit - self._bytes + 1))
        if self._bytes + len(data) > self._limit:
            raise ToolTurnInputError(_too_large(self._name, self._limit))
        pending = len(self._utf8.getstate()[0])
        try:
            self._text += self._utf8.decode(data, final=not data)
        except UnicodeDecodeError as error:
            at = self._bytes - pending + error.start
            raise ToolTurnInputError(f"{self._name}: not UTF-8 text ({error.reason} at byte {at})") from error
        self._bytes += len(data)
        self._eof = not data
        return True

    def _forget(self) -> None:
        """Drop the text already decoded."""
        if self._pos:
            self._where(self._pos)
            self._text = self._text[self._pos :]
            self._offset += self._pos
            self._counted -= self._pos
            self._pos = 0

    def _where(self, index: int) -> tuple[int, int]:
        """The line and column of ``_text[index]`` (``index`` never behind an earlier call's)."""
        text, counted = self._text, self._counted
        newlines = text.count("\n", counted, index)  # counted in place: never a copy of a long value's text
        if newlines:
            self._counted_line += newlines
            self._line_start = self._offset + text.rfind("\n", counted, index) + 1
        self._counted = index
        return self._counted_line, self._offset + index - self._line_start + 1

    def _malformed(self, message: str, index: int) -> ToolTurnInputError:
        """Text that is not JSON, in the JSON decoder's words, at its line and column in the whole input."""
        line, column = self._where(index)
        where = f"{message}: line {line} column {column} (char {self._offset + index})"
        if self.line == self.first_line:
            return ToolTurnInputError(f"{self._name}: not JSON or JSONL ({where})")
        return ToolTurnInputError(f"{self._name}: line {self.line} is not JSON ({where})")

    def _peek(self) -> str:
        """The next character after JSON whitespace, or ``""`` at the end."""
        while True:
            match = _SPACE.match(self._text, self._pos)
            self._pos = match.end() if match else self._pos
            if self._pos < len(self._text):
                return self._text[self._pos]
            if not self._more():
                return ""

    def _end_of_line(self) -> None:
        """Nothing but blanks may follow a top-level value on its line."""
        while True:
            match = _BLANK.match(self._text, self._pos)
            self._pos = match.end() if match else self._pos
            if self._pos < len(self._text) or not self._more():
                break
        if self._pos < len(self._text) and self._text[self._pos] != "\n":
            raise self._malformed("Extra data", self._pos)

    def _value(self, streamed: str, sink: Sink | None = None) -> object:
        """The next value: a container whose opening is in ``streamed`` member by member, else whole.

        ``sink``: a list's members go there, and the list reads as empty.
        """
        char = self._peek()
        if char and char in streamed:
            self._pos += 1
            return self._list(sink) if char == "[" else self._object()
        return self._whole()

    def _list(self, sink: Sink | None) -> list[object]:
        items: list[object] = []
        add = items.append if sink is None else sink
        if self._peek() == "]":
            self._pos += 1
            return items
        while True:
            self._members_held(add)
            add(self._value(""))
            if self._next_member("]"):
                return items

    def _members_held(self, add: Sink) -> None:
        """Take the next members of a list that the text held has whole, each with its comma after it.

        Only the decoding is tried: what ``add`` raises (the rules refusing a member) reaches the caller.
        """
        text, decode = self._text, self._json.raw_decode
        space = _SPACE.match(text, self._pos)
        pos = space.end() if space else self._pos
        while True:
            try:
                member, end = decode(text, pos)
            except ValueError:  # cut off, or not JSON: read member by member, which says which
                break
            comma = _COMMA.match(text, end)
            if comma is None:
                break
            self._pos = end
            add(member)
            pos = comma.end()
        self._pos = pos

    @property
    def characters_read(self) -> int:
        """How many characters of the text the values read so far span."""
        return self._offset + self._pos

    def _object(self) -> dict[str, object]:
        members: dict[str, object] = {}
        if self._peek() == "}":
            self._pos += 1
            return members
        while True:
            if self._peek() != '"':
                raise self._malformed("Expecting property name enclosed in double quotes", self._pos)
            key = self._whole()
            if self._peek() != ":":
                raise self._malformed("Expecting ':' delimiter", self._pos)
            self._pos += 1
            sink = self._sink(str(key))
            value = self._value("[", sink)
            if sink is not discard:
                members[str(key)] = value
            if self._next_member("}"):
                return members

    def _next_member(self, close: str) -> bool:
        """Past a ``,`` (``False``) or the container's ``close`` (``True``); anything else is malformed."""
        char = self._peek()
        if char not in (",", close):
            raise self._malformed("Expecting ',' delimiter", self._pos)
        self._pos += 1
        return char == close

    def _whole(self) -> object:
        """One value decoded whole, reading on while it may be cut off at the end of the text held."""
        while True:
            try:
                value, end = self._json.raw_decode(self._text, self._pos)
            except json.JSONDecodeError as error:
                if self._more(len(self._text) - self._pos):
                    continue
                raise self._malformed(error.msg, error.pos) from None
            if _GOES_ON.fullmatch(self._text, end) and self._more(len(self._text) - self._pos):
                continue  # what is held may end inside a number ("1" of "1.5e3"): decode it again with more
            self._pos = end
            if end > _CHUNK:
                self._forget()  # a long value's text is not held beside the value while it is judged
            return value


def read_document(name: str, read: Read, *, limit: int = DEFAULT_MAX_SIZE, streamed: bool = False) -> Document:
    """Read one input (JSON, else JSONL) of at most ``limit`` bytes; ``ToolTurnInputError`` says what is wrong.

    ``streamed``: each list that may be a transcript is read as a stream and not kept (``Entry.listed``).
    """
    entries = tuple(surveyed(name, read, limit=limit, streamed=streamed))
    return Document(name=name, format="json" if entries[0].alone else "jsonl", entries=entries)


def surveyed(name: str, read: Read, *, limit: int = DEFAULT_MAX_SIZE, streamed: bool = False) -> Iterator[Entry]:
    """Each transcript of one input (JSON, else JSONL), as read; ``ToolTurnInputError`` says what is wrong.

    One value is read ahead (whether a value is the file's only one names it), so at most two are held.
    ``streamed``: each list that may be a transcript is read as a stream and not kept (``Entry.listed``).
    """
    survey = _Survey() if streamed else None
    reader = _Reader(name, read, limit=limit, sinks=survey.sink if survey is not None else None)
    values = reader.values()

    def following() -> tuple[int, object] | None:
        try:
            return next(values, None)
        except ToolTurnInputError:
            raise
        except RecursionError:
            raise ToolTurnInputError(f"{name}: nested too deeply to read (line {reader.line})") from None
        except ValueError as error:
            raise ToolTurnInputError(f"{name}: {error} (line {reader.line})") from None

    ahead = following()
    if ahead is None:
        raise ToolTurnInputError(f"{name}: empty input; expected JSON or JSONL")
    index = 0
    while ahead is not None:
        (line, value), ahead = ahead, following()
        alone = index == 0 and ahead is None
        lists = survey.lists.pop(index, {}) if survey is not None else {}
        yield _entry(name if alone else f"{name}:{line}", value, lists, alone=alone)
        index += 1


def _entry(
    source: str, value: object, listed: Mapping[str | None, Listed] | None = None, *, alone: bool = True
) -> Entry:
    """Read one JSON value as a transcript: a list of messages, or a body with ``messages``/``input``.

    ``listed``: what the lists read as a stream held, by their key in the body (``None``: the value itself);
    ``alone``: it is its file's one value.
    """
    listed = listed or {}
    if isinstance(value, list):
        streamed = listed.get(None)
        held = _messages(source, value, streamed)
        return Entry(
            source=source, container="list", body=None, field=None, messages=held, listed=streamed, alone=alone
        )
    if isinstance(value, dict):
        found = body_transcript(value)
        if found is not None:
            field, inner = found
            streamed = None if isinstance(inner, str) else listed.get(field)
            messages = inner if isinstance(inner, str) else _messages(f"{source}: '{field}'", inner, streamed)
            return Entry(
                source=source,
                container="body",
                body=value,
                field=field,
                messages=messages,
                listed=streamed,
                alone=alone,
            )
        keys = ", ".join(sorted(str(k) for k in value)[:6]) or "none"
        raise ToolTurnInputError(
            f"{source}: a JSON object without a 'messages' or 'contents' list or an 'input'; keys: {keys}; "
            "expected a list of messages or a request body"
        )
    raise ToolTurnInputError(f"{source}: a JSON {type(value).__name__}; expected a list of messages or a request body")


def _messages(where: str, items: list[object], streamed: Listed | None) -> list[object]:
    """``items`` when one of them is a message (a JSON object with a role, a type or parts); else refused.

    ``streamed``: the list was read as a stream, and this is what it held.
    """
    if streamed is not None:
        has_message, count = streamed.has_message, streamed.count
    else:
        has_message, count = any(_is_message(item) for item in items), len(items)
    if has_message:
        return items
    what = f"no message in a list of {count} items" if count else "an empty list"
    raise ToolTurnInputError(f"{where}: {what}; expected messages (JSON objects with a 'role', 'type' or 'parts')")


def detect_lane(entry: Entry) -> tuple[Lane, bool]:
    """The lane ``entry`` is written for, and whether that was a guess (see the module docstring)."""
    if entry.listed is not None:
        return entry.listed.clues.lane(entry.body or {}, entry.field)
    items = entry.messages if isinstance(entry.messages, list) else []
    return lanes.detect_lane(entry.body or {}, entry.field, items)


# --- judging --------------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """What ``check`` found for one transcript."""

    source: str
    container: Container
    count: int
    """How many messages (items, contents) it holds; 1 for a string ``input``."""
    lane: Lane
    lane_guessed: bool
    violations: tuple[Violation, ...]
    repairs: tuple[ToolTurnRepair, ...]
    still_refused: tuple[Violation, ...]
    dialect: Dialect | None = None
    """With ``--dialect``: the provider's variant of the lane's rules it was judged in."""
    shape_lane: Lane | None = None
    """With ``--lane``: the lane the shape reads as when it is plainly another (``None``: it agrees, or tells none)."""

    @property
    def lossy(self) -> bool:
        """Whether a repair left recorded content out."""
        return any(repair.lossy for repair in self.repairs)

    @property
    def outcome(self) -> Outcome:
        """``clean`` (nothing to do), ``repaired`` (no loss), or ``lossy`` (content left out, or still refused)."""
        if self.lossy or self.still_refused:
            return "lossy"
        return "repaired" if self.repairs else "clean"


SEGMENT: Final = 1024
"""About how many items ``check`` judges at a time: a transcript is cut at the first answer's start after them."""
SEGMENT_TEXT: Final = 1 << 18
"""Or about how many characters of their text, whichever comes first: items of many blocks each (a message of
fifty calls) are judged a quarter of a megabyte of text at a time, not a thousand of them."""

Segment = tuple[list[object], int]
"""Items of a transcript and about how many characters of text they were read from."""


class _Segments:
    """Items taken one at a time, given back in segments cut where an answer starts.

    A segment is cut once it holds ``SEGMENT`` items or ``SEGMENT_TEXT`` characters of text.
    """

    __slots__ = ("_held", "_lane", "_size")

    def __init__(self, lane: Lane) -> None:
        self._lane = lane
        self._held: list[object] = []
        self._size = 0

    def add(self, item: object, size: int) -> Segment | None:
        """Take the next item, read from about ``size`` characters; the segment it closes, if it opens the next one."""
        held = self._held
        if held and (len(held) >= SEGMENT or self._size >= SEGMENT_TEXT) and cut_here(held[-1], item, lane=self._lane):
            closed = held, self._size
            self._held, self._size = [item], size
            return closed
        held.append(item)
        self._size += size
        return None

    def rest(self) -> Segment:
        """The last segment: what was taken since the last one given back."""
        rest = self._held, self._size
        self._held, self._size = [], 0
        return rest


def _same_items(view: list[object], segment: list[object]) -> bool:
    """Whether the view is the segment, item for item (the same objects, in order)."""
    return len(view) == len(segment) and all(a is b for a, b in zip(view, segment, strict=True))


class _Judging:
    """One transcript judged as it is read: the provider's rules on it, the law's view, and the rules on the view.

    ``copy``: where the view's items are written, one compact JSON a line (``written`` counts them).
    """

    __slots__ = (
        "_characters",
        "_given",
        "_law",
        "_read",
        "_read_to",
        "_sent",
        "_viewed",
        "copy",
        "entry",
        "lane",
        "shape",
        "taken",
        "written",
    )

    def __init__(
        self,
        entry: Entry,
        *,
        lane: Lane | None,
        dialect: Dialect | None,
        copy: IO[str] | None,
        characters: Callable[[], int] | None = None,
    ) -> None:
        self.entry = entry
        self._characters = characters
        """How many characters of text were read so far, where the items are read from text (``None``: they are not)."""
        self._read_to = characters() if characters is not None else 0
        chosen, guessed = (lane, False) if lane is not None else detect_lane(entry)
        shape_lane: Lane | None = None
        if lane is not None:
            read_as, read_guessed = detect_lane(entry)
            shape_lane = read_as if read_as != lane and not read_guessed else None
        self.lane = chosen
        self.shape = (guessed, shape_lane, dialect)
        chained = continues_server_state(entry.body or {}, lane=chosen)
        adapter = lanes.adapter_for(chosen, dialect)
        self._given = adapter.validate_stream(chained=chained)
        self._sent: ValidationStream | None = None
        """The rules on the view, from the first segment the law changed; until then the view is the input,
        item for item, and so is its verdict."""
        self._law = LawStream(chosen, chained=chained, dialect=dialect)
        self._read = _Segments(chosen)
        self._viewed = _Segments(chosen)
        self.copy = copy
        self.written = 0
        self.taken = 0
        """How many items of the transcript were taken."""

    def add(self, item: object) -> None:
        """Take the transcript's next item."""
        self.taken += 1
        size = 0
        if self._characters is not None:
            read_to = self._characters()
            size, self._read_to = read_to - self._read_to, read_to
        segment = self._read.add(item, size)
        if segment is not None:
            self._judge(segment, last=False)

    def finding(self, count: int) -> Finding:
        """What was found, once every item was taken (``count`` of them)."""
        self._judge(self._read.rest(), last=True)
        guessed, shape_lane, dialect = self.shape
        repairs = self._law.close()  # first: the law lets go of what only later segments needed
        violations = tuple(self._given.close())
        return Finding(
            source=self.entry.source,
            container=self.entry.container,
            count=count,
            lane=self.lane,
            lane_guessed=guessed,
            violations=violations,
            repairs=repairs,
            still_refused=violations if self._sent is None else tuple(self._sent.close()),
            dialect=dialect,
            shape_lane=shape_lane,
        )

    def _judge(self, read: Segment, *, last: bool) -> None:
        """The segment's verdict, view and copy; a bad input is refused with the input's rules' error first."""
        segment, size = read
        try:
            view = self._law.feed(segment, last=last)
        except ToolTurnInputError:
            self._given.feed(segment, last=last)  # its error, where it has one, is the one the input gets
            raise
        if self._sent is None and not _same_items(view, segment):
            self._sent = deepcopy(self._given)  # the view parts from the input here
        self._given.feed(segment, last=last)
        if self.copy is not None:
            for item in view:  # the item's text, then its line's end: never a second copy of a long item's text
                self.copy.write(_compact(item))
                self.copy.write("\n")
            self.written += len(view)
        sent = self._sent
        if sent is None:
            return
        share = size // max(len(view), 1)  # the view's items, of about the segment's text between them
        for item in view:
            part = self._viewed.add(item, share)
            if part is not None:
                sent.feed(part[0], last=False)
        if last:
            sent.feed(self._viewed.rest()[0], last=True)


def judge(entry: Entry, *, lane: Lane | None, dialect: Dialect | None = None) -> Finding:
    """Run the provider rules and the law on one transcript held whole (chained when its body says; in ``dialect``)."""
    judging = _Judging(entry, lane=lane, dialect=dialect, copy=None)
    if isinstance(entry.messages, str):  # a Responses ``input`` string: no tool turn to judge or repair
        return judging.finding(1)
    for item in entry.messages:
        judging.add(item)
    return judging.finding(judging.taken)


Judged = tuple[Finding, Mapping[str, object], int]
"""A transcript judged as it was read: what was found, the body's fields the first reading read as a stream
(lists another transcript may stand in, read whole the second time), and how many items of its view were
written."""


def judge_streamed(
    name: str,
    read: Read,
    entries: Iterable[Entry],
    *,
    limit: int,
    lane: Lane | None,
    dialect: Dialect | None,
    copy: IO[str] | None,
) -> Iterator[tuple[Entry, Judged]]:
    """Judge each transcript of ``entries`` (``surveyed``'s, streamed) as ``read`` gives its text a second time.

    ``entries`` is taken one at a time, each as the second reading reaches it, so the two readings go side
    by side and only the first holds a body: the second keeps none of its other fields but the lists the
    first read as a stream. Per transcript: what was found, those lists, and how many items of its view
    were written to ``copy``.
    """
    changed = ToolTurnInputError(f"{name}: changed while it was read; check it again")
    reached: dict[int, Entry] = {}
    """The transcript the second reading is in, by its index (none: it reads past the transcripts)."""
    judgings: dict[int, _Judging] = {}

    def sink(index: int, key: str | None) -> Sink | None:
        entry = reached.get(index)
        if entry is None:
            raise changed
        if key != entry.field:
            # a body's other fields are the first reading's, but for lists it read as a stream (not kept)
            return None if key in _TRANSCRIPT_FIELDS else discard
        if entry.listed is None:
            return None
        judging = judgings[index] = _Judging(
            entry, lane=lane, dialect=dialect, copy=copy, characters=lambda: reader.characters_read
        )
        return judging.add

    reader = _Reader(name, read, limit=limit, sinks=sink)
    values = reader.values()
    for index, entry in enumerate(entries):
        reached[index] = entry
        with _named_in(entry):
            got = next(values, None)
            reached.clear()
            if got is None:
                raise changed
            kept = {k: v for k, v in got[1].items() if k != entry.field} if isinstance(got[1], dict) else {}
            judging = judgings.pop(index, None)
            if judging is None:
                if not isinstance(entry.messages, str):
                    raise changed
                judged = (judge(entry, lane=lane, dialect=dialect), kept, 0)  # a string ``input``: no tool turn
            elif entry.listed is None or judging.taken != entry.listed.count:
                raise changed
            else:
                judged = (judging.finding(judging.taken), kept, judging.written)
        yield entry, judged
    if next(values, None) is not None:
        raise changed


@contextlib.contextmanager
def _named_in(entry: Entry) -> Iterator[None]:
    """An item the law cannot read named with the transcript it stands in (``file:line`` in JSONL)."""
    try:
        yield
    except ToolTurnInputError as error:
        if error.position is None or entry.alone:
            raise
        raise ToolTurnInputError(f"{entry.source}: {error}") from None


def write_repaired(entry: Entry, judged: Judged, lines: IO[str], out: IO[str]) -> None:
    """Write one transcript's part of the ``--fix`` copy: replaced by its view, in the container and format it came in.

    ``lines``: its view's items, one compact JSON a line, as ``judge_streamed`` wrote them; the body's other
    fields are the entry's (the first reading's), with the lists it read as a stream from the second.
    Strict JSON, written item by item and never built whole: JSONL one value a line; JSON with each item
    of the top-level list, and of each list in a top-level body, on a line of its own.
    """
    _, kept, written = judged
    body = {**entry.body, **kept} if entry.body is not None and kept else entry.body
    view = (line.rstrip("\n") for line in itertools.islice(lines, written))
    jsonl = not entry.alone
    if body is None or entry.field is None:
        _write_view(view, out, indent="", compact=jsonl)
    elif jsonl:
        out.write("{")
        for number, (key, member) in enumerate(body.items()):
            out.write((", " if number else "") + _compact(key) + ": ")
            if key == entry.field and not isinstance(entry.messages, str):
                _write_view(view, out, indent="", compact=True)
            else:
                out.write(_compact(member))
        out.write("}")
    else:
        out.write("{")
        for number, (key, member) in enumerate(body.items()):
            out.write(("," if number else "") + "\n  " + _compact(key) + ": ")
            if key == entry.field and not isinstance(entry.messages, str):
                _write_view(view, out, indent="  ", compact=False)
            else:
                _write_items(member, out, indent="  ")
        out.write("\n}" if body else "}")
    out.write("\n")


def _write_view(items: Iterator[str], out: IO[str], *, indent: str, compact: bool) -> None:
    """A list of items already written as compact JSON: on one line (``compact``), else one item a line."""
    first = next(items, None)
    if first is None:
        out.write("[]")
        return
    if compact:
        out.write("[" + first)
        for item in items:
            out.write(", " + item)
        out.write("]")
        return
    out.write("[\n" + indent + "  " + first)
    for item in items:
        out.write(",\n" + indent + "  " + item)
    out.write("\n" + indent + "]")


def _write_items(value: object, out: IO[str], *, indent: str) -> None:
    """``value``, a non-empty list one item a line, anything else on the line it starts."""
    if not isinstance(value, list) or not value:
        out.write(_compact(value))
        return
    _write_view(iter(map(_compact, value)), out, indent=indent, compact=False)


_STRICT: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def _compact(value: object) -> str:
    return _STRICT.encode(value)


# --- rendering ------------------------------------------------------------------------------------
def text_report(finding: Finding) -> Iterator[str]:
    """A short, readable report of one transcript, line by line (each finding a line as it is written)."""
    guessed = ", guessed: no tool turn to tell the lanes apart" if finding.lane_guessed else ""
    what = "request body" if finding.container == "body" else "list"
    dialect = f" in the {finding.dialect} dialect" if finding.dialect is not None else ""
    yield f"{finding.source}: {finding.lane}{dialect} ({what}, {finding.count} messages{guessed})"
    if finding.shape_lane is not None:
        yield f"  note: its shape reads as {finding.shape_lane}; judged as {finding.lane}, as --lane asked"
    if finding.violations:
        yield "  the provider would refuse it (HTTP 400):"
        yield from (f"    #{v.position:<4} {v.rule:<24} {v.message}" for v in finding.violations)
    if finding.repairs:
        yield "  the law's repairs:"
        yield f"    {'form':<18} {'lossy':<6} {'before run':<11} call ids"
        yield from (
            f"    {r.form:<18} {'yes' if r.lossy else 'no':<6} {'yes' if r.before_run else 'no':<11} "
            + (", ".join(r.tool_call_ids) or "-")
            for r in finding.repairs
        )
    if finding.still_refused:
        yield "  the repaired view would still be refused:"
        yield from (f"    #{v.position:<4} {v.rule:<24} {v.message}" for v in finding.still_refused)
    outcome = finding.outcome
    yield f"  verdict: {VERDICTS[outcome]} (exit {EXIT_CODES[outcome]})"


def json_report(finding: Finding) -> Iterator[str]:
    """One transcript's report as one line of JSON, in pieces: each finding a piece as it is written."""
    yield _compact(
        {
            "source": finding.source,
            "lane": finding.lane,
            "lane_guessed": finding.lane_guessed,
            "dialect": finding.dialect,
            "shape_lane": finding.shape_lane,
        }
    )[:-1]
    yield ', "violations": '
    yield from _json_list(map(_violation_json, finding.violations))
    yield ', "repairs": '
    yield from _json_list(
        {"form": r.form, "tool_call_ids": list(r.tool_call_ids), "lossy": r.lossy, "before_run": r.before_run}
        for r in finding.repairs
    )
    yield ', "still_refused": '
    yield from _json_list(map(_violation_json, finding.still_refused))
    outcome = finding.outcome
    yield ", " + _compact({"lossy": finding.lossy, "outcome": outcome, "exit_code": EXIT_CODES[outcome]})[1:]


def _violation_json(violation: Violation) -> dict[str, object]:
    return {"position": violation.position, "rule": violation.rule, "message": violation.message}


def _json_list(items: Iterator[object]) -> Iterator[str]:
    """A JSON list written item by item."""
    yield "["
    for number, item in enumerate(items):
        yield (", " if number else "") + _compact(item)
    yield "]"


# --- the command ----------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors as one line and exit code 3 (2 means a lossy repair here)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_UNREADABLE, f"otel-toolturn: {message} (see otel-toolturn --help)\n")


def parse_size(text: str) -> int:
    """A byte count written as digits with an optional ``K``, ``M`` or ``G`` (binary multiples): ``64M``."""
    match = _SIZE.fullmatch(text.strip())
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size; expected bytes such as 500000, 512K, 64M or 1G")
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def _size_text(size: int) -> str:
    for unit in ("G", "M", "K"):
        if size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]} {unit}iB"
    return f"{size:,} bytes"


def _too_large(name: str, limit: int) -> str:
    return f"{name}: over the size limit of {_size_text(limit)} (raise it with --max-size)"


CHECK_HELP: Final = f"""\
Each FILE is a regular file (or - for stdin) of at most --max-size bytes ({_size_text(DEFAULT_MAX_SIZE)} unless
raised) holding strict JSON or JSONL; a FIFO, a device or a directory is refused unread.

exit codes (the highest over all FILEs):
  0  clean: the provider would accept every transcript as it is
  1  repaired without loss
  2  a lossy repair was needed
  3  unreadable input (no such file, not a regular file, over the size limit, not UTF-8, not strict
     JSON or JSONL, nested too deeply, no messages) or a usage error (an unknown option, a --fix
     target that cannot be written); one line on stderr each
"""


def build_parser() -> argparse.ArgumentParser:
    """The ``otel-toolturn`` argument parser with its ``check``, ``demo`` and ``dashboards`` subcommands."""
    parser = _Parser(
        prog="otel-toolturn",
        description="Keep LLM tool turns valid at the provider boundary, and see every repair.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    check = commands.add_parser(
        "check",
        help="say what a provider would refuse in saved transcripts, and what the law would repair",
        description="Say what a provider would refuse in saved transcripts, and what the law would repair.",
        epilog=CHECK_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument(
        "files", nargs="+", metavar="FILE", help="JSON or JSONL transcripts or request bodies; - for stdin"
    )
    check.add_argument("--lane", choices=sorted(LANE_ALIASES), help="the wire lane (default: read from the shape)")
    check.add_argument(
        "--dialect",
        choices=DIALECTS,
        help="a provider's variant of its lane's rules (mistral: Mistral's Chat Completions; names the lane)",
    )
    check.add_argument("--json", action="store_true", help="print the reports as JSON Lines: one report per line")
    check.add_argument("--fix", metavar="OUT", help="write the repaired copy to OUT (- for stdout); one FILE only")
    check.add_argument(
        "--max-size",
        type=parse_size,
        default=DEFAULT_MAX_SIZE,
        metavar="SIZE",
        help=f"read at most SIZE bytes of each FILE: 500000, 512K, 64M, 1G (default: {_size_text(DEFAULT_MAX_SIZE)})",
    )
    demo = commands.add_parser(
        "demo", help="watch an agent's broken tool turns refused, then repaired, on a local provider simulator"
    )
    demo.add_argument(
        "--telemetry",
        choices=get_args(DemoTelemetry),
        help="where spans go (default: otlp when OTEL_EXPORTER_OTLP_ENDPOINT is set, else console)",
    )
    dashboards = commands.add_parser(
        "dashboards",
        help="write the Grafana dashboard, the Prometheus alert rules and the local stack into a folder",
        description="Write the Grafana dashboard and provisioning, the Prometheus alert rules (with their promtool "
        "tests) and the local Collector/Prometheus/Alertmanager/Grafana stack into DIR, as the package holds them.",
    )
    dashboards.add_argument("dir", metavar="DIR", help="the folder to write into (made if missing)")
    dashboards.add_argument("--force", action="store_true", help="overwrite files already there")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")  # a lone surrogate read from JSON is printed escaped
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "check" and args.dialect is not None and args.lane is not None:
        own = DIALECT_ADAPTERS[args.dialect].lane
        if LANE_ALIASES[args.lane] != own:
            parser.error(f"--dialect {args.dialect} is of {own}, not of --lane {LANE_ALIASES[args.lane]}")
    try:
        if args.command == "demo":
            return _demo(args.telemetry)
        if args.command == "dashboards":
            return _write_dashboards(Path(args.dir), force=args.force)
        return _check(args)
    except BrokenPipeError:
        _silence_stdout()  # the reader went away (``| head``): stop quietly, as other tools do
        return EXIT_UNREADABLE
    except KeyboardInterrupt:
        print("otel-toolturn: interrupted", file=sys.stderr)
        return EXIT_UNREADABLE
    except Exception as error:  # noqa: BLE001 - the command promises one line, never a traceback
        print(f"otel-toolturn: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_UNREADABLE


def _demo(telemetry: DemoTelemetry | None) -> int:
    """Run the demo: the stories of every installed SDK (see ``otel_toolturn.demo``)."""
    from otel_toolturn.demo import run_demo  # noqa: PLC0415 - the demo loads the SDKs and the OTel SDK; check does not

    return run_demo(telemetry=telemetry)


def _write_dashboards(target: Path, *, force: bool) -> int:
    """Write the package's ``dashboards`` folder into ``target``; one line per file written, or why none was."""
    source = resources.files("otel_toolturn") / "dashboards"
    files: list[tuple[str, bytes]] = []
    folders = [("", source)]
    while folders:
        prefix, folder = folders.pop()
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            name = f"{prefix}{entry.name}"
            if entry.is_dir():
                folders.append((f"{name}/", entry))
            else:
                files.append((name, entry.read_bytes()))
    clashes = [name for name, _ in files if (target / name).exists()]
    if clashes and not force:
        print(
            f"otel-toolturn: {target / clashes[0]} is already there ({len(clashes)} of the {len(files)} files); "
            "pass --force to overwrite",
            file=sys.stderr,
        )
        return EXIT_UNREADABLE
    for name, data in sorted(files):
        path = target / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as error:
            print(f"otel-toolturn: cannot write {path}: {error.strerror or error}", file=sys.stderr)
            return EXIT_UNREADABLE
        print(path)
    return 0


def _check(args: argparse.Namespace) -> int:
    files: list[str] = args.files
    if args.fix is not None and len(files) != 1:
        print(f"otel-toolturn: --fix writes one copy; got {len(files)} files, expected one", file=sys.stderr)
        return EXIT_UNREADABLE
    dialect: Dialect | None = args.dialect
    lane: Lane | None = LANE_ALIASES[args.lane] if args.lane else None
    lane = DIALECT_ADAPTERS[dialect].lane if dialect is not None else lane
    report = sys.stderr if args.fix == "-" else sys.stdout
    worst = 0
    for name in files:
        worst = max(worst, _check_one(args, name, lane=lane, dialect=dialect, report=report))
    return worst


class _Unwritable(Exception):  # noqa: N818 - a reason the copy cannot be written, not an error of the input
    """The ``--fix`` copy cannot be written: the one line that says why."""


def _check_one(
    args: argparse.Namespace, name: str, *, lane: Lane | None, dialect: Dialect | None, report: TextIO
) -> int:
    """Judge one FILE, report it and (``--fix``) write its copy; the exit code it earns.

    Its transcripts are judged one at a time, as the file is read; their reports, and their parts of the
    copy, wait until the whole file is judged (``_spooled``: in memory, then in a temporary file), so a
    file found unreadable part way gets its one line, and no copy.
    """
    shown = "<stdin>" if name == "-" else name
    fixing = args.fix is not None
    with (
        _spooled() as reports,
        _spooled() if fixing else contextlib.nullcontext() as items,
        _spooled() if fixing else contextlib.nullcontext() as fixed,
    ):
        worst = 0
        try:
            with _opened(name, limit=args.max_size) as rewound:
                limit = args.max_size
                entries = surveyed(shown, rewound(), limit=limit, streamed=True)
                for entry, judged in judge_streamed(
                    shown, rewound(), entries, limit=limit, lane=lane, dialect=dialect, copy=items
                ):
                    finding = judged[0]
                    worst = max(worst, EXIT_CODES[finding.outcome])
                    pieces = json_report(finding) if args.json else (line + "\n" for line in text_report(finding))
                    for piece in pieces:  # one write a piece: the spool moves to disk once it holds too much
                        reports.write(piece)
                    if args.json:
                        reports.write("\n")
                    if items is not None and fixed is not None:
                        _fixed_part(entry, judged, items, fixed, target=args.fix)
        except _Unwritable as reason:
            print(f"otel-toolturn: {reason}", file=sys.stderr)
            return EXIT_UNREADABLE
        except (ToolTurnError, OSError) as error:
            _unreadable(_one_line(error, name), name, as_json=args.json, report=report)
            return EXIT_UNREADABLE
        except RecursionError:
            _unreadable(f"{name}: nested too deeply to judge", name, as_json=args.json, report=report)
            return EXIT_UNREADABLE
        reports.seek(0)
        shutil.copyfileobj(reports, report)
        if fixed is None:
            return worst
        try:
            fixed.seek(0)
            _write(args.fix, fixed)
        except OSError as error:
            print(f"otel-toolturn: --fix {args.fix}: cannot write ({error.strerror or error})", file=sys.stderr)
            return EXIT_UNREADABLE
    if not args.json:
        print(f"repaired copy written to {'<stdout>' if args.fix == '-' else args.fix}", file=report)
    return worst


SPOOLED_IN_MEMORY: Final = 1 << 18
"""How many bytes of a report or a copy ``check`` keeps in memory before it moves them to a temporary file."""


class _Spool(tempfile.SpooledTemporaryFile[str]):
    """Text kept in memory up to ``SPOOLED_IN_MEMORY`` bytes, then in a temporary file; gone once closed.

    A text longer than that is written straight to the file (moved there first), never copied in memory.
    """

    def write(self, s: str) -> int:
        if len(s) > SPOOLED_IN_MEMORY:
            self.rollover()
        return super().write(s)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)


def _spooled() -> tempfile.SpooledTemporaryFile[str]:
    """A new ``_Spool``."""
    return _Spool(SPOOLED_IN_MEMORY, "w+", encoding="utf-8", errors="surrogatepass", newline="\n")


def _fixed_part(entry: Entry, judged: Judged, items: IO[str], fixed: IO[str], *, target: str) -> None:
    """Write one transcript's part of the copy into ``fixed`` from its view's ``items``, then empty ``items``."""
    items.seek(0)
    try:
        write_repaired(entry, judged, items, fixed)
    except RecursionError:
        raise _Unwritable(f"--fix {target}: nested too deeply to write") from None
    items.seek(0)
    items.truncate()


def _unreadable(reason: str, name: str, *, as_json: bool, report: TextIO) -> None:
    """Say on stderr in one line why ``name`` was not judged; with ``--json``, its report line too."""
    print(f"otel-toolturn: {reason}", file=sys.stderr)
    if as_json:
        record = {"source": name, "outcome": "unreadable", "error": reason, "exit_code": EXIT_UNREADABLE}
        print(json.dumps(record, ensure_ascii=False), file=report)


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


@contextlib.contextmanager
def _opened(name: str, *, limit: int) -> Iterator[Callable[[], Read]]:
    """The bytes of ``name`` (``-`` is stdin), from the start each time asked.

    A regular file no larger than ``limit``, opened without blocking; stdin is kept in a temporary file
    (read no further than ``limit``).
    """
    if name == "-":
        if sys.stdin is None:
            raise ToolTurnInputError("<stdin>: no standard input to read")
        with tempfile.TemporaryFile() as kept:
            taken = 0
            while chunk := sys.stdin.buffer.read(min(_CHUNK, limit + 1 - taken)):
                taken += len(chunk)
                kept.write(chunk)
                if taken > limit:
                    raise ToolTurnInputError(_too_large("<stdin>", limit))
            kept.flush()
            yield functools.partial(_rewound, kept.fileno())
        return
    descriptor = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO opens without a writer
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            kind = next((text for test, text in _KINDS if test(status.st_mode)), "not a file")
            raise ToolTurnInputError(f"{name}: {kind}, not a regular file; check reads regular files and - (stdin)")
        if status.st_size > limit:
            raise ToolTurnInputError(_too_large(name, limit))
        yield functools.partial(_rewound, descriptor)
    finally:
        os.close(descriptor)


def _rewound(descriptor: int) -> Read:
    """A byte source reading the open file from its start, at an offset of its own (two may read side by side)."""
    offset = 0

    def read(size: int) -> bytes:
        nonlocal offset
        os.lseek(descriptor, offset, os.SEEK_SET)
        data = os.read(descriptor, size)
        offset += len(data)
        return data

    return read


def _write(target: str, fixed: IO[str]) -> None:
    """The copy, as ``fixed`` holds it, into ``target`` (``-``: stdout)."""
    if target == "-":
        shutil.copyfileobj(fixed, sys.stdout)
        return
    with open(target, "w", encoding="utf-8", errors="backslashreplace") as out:  # noqa: PTH123 - one text stream
        shutil.copyfileobj(fixed, out)


def _one_line(error: BaseException, name: str) -> str:
    """A one-line reason for an unreadable input."""
    if isinstance(error, FileNotFoundError):
        return f"{name}: no such file"
    if isinstance(error, OSError):
        return f"{name}: cannot read ({error.strerror or error})"
    text = " ".join(str(error).split())
    return text if text.startswith(name) or name == "-" else f"{name}: {text}"


if __name__ == "__main__":
    raise SystemExit(main())
