"""The Gemini lane: ``contents`` of ``{role: user | model, parts: [...]}`` (a missing role reads as user).

Three spellings are read: REST camelCase dicts (``functionCall``, ``functionResponse``,
``thoughtSignature``), the Python SDK's snake_case dicts (``function_call``, ``function_response``,
``thought_signature``) and the SDK's typed ``Content`` / ``Part`` objects (snake_case attributes). A
written part keeps the spelling it was read in and a new part takes that of the call it answers, within
one rule: a part written into a content is in that content's kind, a dict in a dict content (in the
spelling of the content's dicts: REST camelCase unless they are snake_case) and an SDK ``Part`` in a
typed ``Content`` (google-genai sends a dict inside a typed ``Content`` as ``{}``); a part that content
cannot hold is a ``ToolTurnInputError``. A new content takes the kind of its neighbours; untouched
contents are the same objects.

- A turn is one call step (``call_step``): consecutive ``model`` contents (the SDK's streaming chat
  stores one model content per chunk), those without calls ahead of the first call and then those
  with calls. A model content without calls after one with calls is the model's next answer and ends
  the step, and so does one whose first call is signed or that repeats a call id of the step. Its parts
  are never reordered; text after a call inside a content is normal model output. Model contents
  without calls outside a step are replies.
- Results are the ``functionResponse`` parts of a user content; its other parts are one part unit,
  written ahead of the responses (text after them is refused, text before them is accepted). All
  results of one turn stand in ONE user content right after the run: a result content that directly
  follows another is apart, and its results are moved up into the first.
- Matching: a response whose ``id`` an earlier call carries is matched by id, otherwise by ``name``,
  among the calls with that id (name) of the nearest run that used it. A content's responses each
  answer a call no earlier response answered, as many of them as can (by id, a call of the response's
  own name first; by name, the calls without an ``id`` first, then those whose id no response of the
  content carries, then the rest); one that cannot answers the last call it could answer again (a
  second result, so a real response recorded after an interrupted close of a lone call answers it).
  A call is known to the law, and reported, by its ``id``; a call without an ``id`` as ``<name>#<k>``,
  the k-th id-less call of that name in its run. A call repeating an id earlier in its content is a
  repeat the law leaves out (``duplicate_call``; no response answers it by name), unless it carries
  a signature: then it is the run's k-th call with that id, ``<id>#<k>``, and needs its own
  response. Ids may repeat across turns.
- Thought signatures: the first ``functionCall`` part of each run must carry one (Gemini 3). One
  without gets ``PLACEHOLDER_SIGNATURE``, the value the provider documents to skip the check
  (``placeholder_signature``); on SDK objects, whose field holds the decoded bytes, its base64url
  decoding. A part that carries a signature is never changed, split, moved or dropped.
- Written by the law: a synthetic close is a ``functionResponse`` with the call's ``name`` and ``id``
  and ``response: {"error": INTERRUPTED_RESULT_TEXT}``. Folded results are one response with the
  first's name and id: when every ``response`` is one text under the same key (``{"output": "..."}``),
  the texts joined by ``SECOND_RESULT_SEPARATOR`` on a line of its own under that key; otherwise
  ``{"output": [first, SECOND_RESULT_SEPARATOR, second, ...]}``, each ``response`` object kept whole.
  A result delivered where it stands is a text part, in the content it stood in: a line naming the call
  (``in_place_heading``), then its text when its ``response`` is one text under ``output``, ``result``
  or ``error`` (an error), else the ``response`` as JSON.
- A repair never leaves a content with no parts. Responses ahead of every call answer nothing; a
  content holding only such responses, with only model replies and such contents before it and a
  model content or the end of the list after it, keeps its place as a user content holding
  ``LEADING_RESULTS_TEXT`` — one text, whatever comes later — so leaving them out never makes a
  function call turn the first content nor leaves ``contents`` empty.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Container, Mapping, Sequence
from types import MappingProxyType
from typing import Final

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._view import (
    CLEAN,
    INTERRUPTED_RESULT_TEXT,
    OTHER,
    PART,
    REPLY,
    RESULT,
    SECOND_RESULT_SEPARATOR,
    TURN,
    Call,
    Clean,
    Emitted,
    Mark,
    Turn,
    UnitKind,
    View,
    Violation,
    field,
    in_place_heading,
    is_interrupted_text,
    replace,
)
from otel_toolturn._vocab import CallKind, Lane
from otel_toolturn.lanes import request_parts
from otel_toolturn.lanes._common import is_list
from otel_toolturn.lanes._defaults import AdapterDefaults
from otel_toolturn.lanes._gemini_matching import Matcher
from otel_toolturn.lanes._gemini_parts import (
    call_of,
    content_role,
    held_by,
    id_of,
    name_of,
    parts_of,
    response_of,
    signed,
)

PLACEHOLDER_SIGNATURE: Final = "skip_thought_signature_validator"
"""The thought signature the provider documents as skipping its check (at a cost in reasoning quality)."""

_PLACEHOLDER_BYTES: Final = base64.urlsafe_b64decode(PLACEHOLDER_SIGNATURE)
"""The placeholder as the SDK's ``Part.thought_signature`` holds it (the wire carries bytes as base64url)."""

LEADING_RESULTS_TEXT: Final = "[tool results that answer no call stood here; they were left out]"
"""The text that stands in for a response-only content ahead of every user turn, when a model content follows
it (``contents`` must not start with a function call turn)."""

_INTERRUPTED_KEYS: Final = ("error", "output", "result")

MISSING_SIGNATURE_WORDS: Final = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
    "function call `default_api:{name}` , position {position}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)


def _stamp(part: object) -> object:
    """A copy of the call part carrying the placeholder signature, in the part's own spelling."""
    if type(part) is dict or isinstance(part, Mapping):
        key = "functionCall" if part.get("functionCall") is not None else "function_call"
        sig = "thoughtSignature" if key == "functionCall" else "thought_signature"
        return {**part, sig: PLACEHOLDER_SIGNATURE}
    return replace(part, thought_signature=_PLACEHOLDER_BYTES)


def _payload(part: object) -> object:
    return field(response_of(part), "response")


def _is_close(part: object) -> bool:
    """Whether the response's payload says only that no outcome was recorded."""
    payload = _payload(part)
    if not isinstance(payload, Mapping):
        return False
    for key in _INTERRUPTED_KEYS:
        value = payload.get(key)
        if isinstance(value, str) and is_interrupted_text(value):
            return True
    return False


def _new_part(like: object, **fields: object) -> object:
    """A new part in the spelling of ``like`` (a part): REST dict, snake_case dict, or the SDK's part class.

    ``fields`` are snake_case; REST dicts get them camelCased one level deep.
    """
    if type(like) is dict or isinstance(like, Mapping):
        if like.get("functionCall") is not None or like.get("functionResponse") is not None:
            return {_camel(key): value for key, value in fields.items()}
        return dict(fields)
    return type(like)(**fields)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.title() for word in rest)


def call_step(
    contents: Sequence[object], first: int, *, offset: int = 0
) -> tuple[int, list[tuple[int, object, object]]]:
    """The model contents from ``first`` (a model content) read as one step: where it ends, and its calls.

    Each call as ``(content index, part, call data)``.
    A step is a run of consecutive model contents (the SDK's streaming chat stores one per chunk):
    contents without calls ahead of its first call (streamed text), then contents with calls. A later
    content ends the step ahead of it when it is the model's next answer: it holds no call (the model
    answered), its first call carries a thought signature (each answer signs its first call), or it
    repeats a call id of the step (one answer never repeats one). A run without calls is read whole.

    ``offset``: where ``contents`` stands in the whole transcript (a segment's), for the position a
    ``ToolTurnInputError`` names.
    """
    calls: list[tuple[int, object, object]] = []
    step_ids: set[str] | None = None  # the ids the step's calls carry, gathered once a second content has calls
    index, stop = first, len(contents)
    while True:  # the content at ``first`` is a model content
        content = contents[index]
        parts = content.get("parts") if type(content) is dict else None
        if type(parts) is not list:
            parts = parts_of(content, offset + index)
        found: list[tuple[int, object, object]] = [] if calls else calls  # a step's first calls are its own
        for part in parts:
            if type(part) is not dict:
                data = call_of(part)
            elif "functionCall" in part:
                data = part["functionCall"]
                if data is None:
                    data = part.get("function_call")
            elif "function_call" in part:
                data = part["function_call"]
            else:
                continue
            if data is not None:
                found.append((index, part, data))
        if found is not calls:
            if not found or signed(found[0][1]):
                return index, calls
            if step_ids is None:
                step_ids = set(_ids(calls))
            if not step_ids.isdisjoint(_ids(found)):
                return index, calls
            calls += found
            step_ids.update(_ids(found))
        index += 1
        if index == stop:
            return index, calls
        content = contents[index]
        if (content.get("role") if type(content) is dict else content_role(content)) != "model":
            return index, calls


def _ids(calls: list[tuple[int, object, object]]) -> list[str]:
    """The ids the calls carry (a call without an id carries none)."""
    return [call_id for _, _, data in calls if (call_id := id_of(data)) is not None]


_REST_TOOL_CONFIG: Final = ("toolConfig", "tool_config")
REST_CONFIG: Final = (
    ("system_instruction", ("system_instruction", "systemInstruction")),
    ("tools", ("tools",)),
    ("tool_config", _REST_TOOL_CONFIG),
)
"""google-genai's ``config`` fields the request pipeline reads, and the REST body keys that carry each."""


class GeminiGenerateContent(AdapterDefaults):
    """Reads and writes the Gemini ``contents`` list for the law."""

    lane: Lane = "gemini.generate_content"
    unique_ids = False
    results_anywhere = False

    def read(
        self, messages: Sequence[object], full: Container[int] = (), state: dict[str, object] | None = None
    ) -> View:
        """Runs of model contents with calls as turns, other model contents replies, responses and parts.

        Each ``functionResponse`` part of a user content is a result; the content's other parts are one
        part unit after them (marked ``text_after_results`` when one stood after a response). A result
        content right after another opens apart. A response-only content followed by a model content or the
        end, with only replies and responses before it, gets a part unit holding ``LEADING_RESULTS_TEXT``.
        A run whose first call is signed, followed by a user content of exactly one response per call, is
        read with that content as ``Clean`` when each response answers its call by its own ``id`` (distinct),
        or when no call or response carries an id and the responses name the calls, each name as often.
        """
        view = View()
        units, kinds, ids, sources = view.units, view.kinds, view.ids, view.sources
        matcher = Matcher() if state is None else state.setdefault("matcher", Matcher())
        assert isinstance(matcher, Matcher)  # noqa: S101 - what a stream keeps under that name
        index, stop = 0, len(messages)
        after_results = False  # the content right before held responses
        leading, scanned = True, 0  # whether every unit so far is a result or a reply; the units read for it
        if state is not None:
            leading = state.get("leading", True) is True
        while index < stop:
            content = messages[index]
            if (content.get("role") if type(content) is dict else content_role(content)) == "model":
                first = index
                index, found = call_step(messages, first)
                after_results = False
                if found:
                    if first not in full and index < stop and signed(found[0][1]):
                        datas = _responses_only(messages[index], len(found))
                        run = matcher.answered(found, datas) if datas is not None else None
                        if run is not None:
                            units.append(Clean(first, list(run), index + 1))
                            view.clean_ids.extend(run)
                            kinds.append(CLEAN)
                            after_results = True
                            index += 1
                            continue
                    keys = matcher.turn(first, found)
                    marks: tuple[Mark, ...] = ()
                    if not signed(found[0][1]):
                        marks = (Mark("placeholder_signature", keys[0]),)
                    units.append(
                        Turn(
                            position=first,
                            calls=[Call(key, part) for key, (_, part, _) in zip(keys, found, strict=True)],
                            items=tuple(messages[first:index]),
                            marks=marks,
                        )
                    )
                    kinds.append(TURN)
                    continue
                for position in range(first, index):
                    units.append(messages[position])
                    kinds.append(REPLY)
                if index == stop:
                    break
                content = messages[index]  # a step without calls ends at the end or at a content of another role
            parts = content.get("parts") if type(content) is dict else None
            if type(parts) is not list:
                parts = parts_of(content, index)
            for part in parts:  # a dict part without a response key is no response
                if type(part) is not dict or "functionResponse" in part or "function_response" in part:
                    datas = _responses_of(parts)
                    break
            else:
                datas = None
            if datas is None:
                units.append(content)
                kinds.append(OTHER)
                after_results = False
                index += 1
                continue
            for part, data in zip(parts, datas, strict=True):
                if data is not None and field(part, "text"):
                    raise ToolTurnInputError(
                        "a part holds both a functionResponse and a text; "
                        "expected one kind of data per part (Gemini reads a part's data as one of them)",
                        position=index,
                    )
            others: list[object] = []
            trails: str | None = None
            last: str | None = None
            mark = len(units)
            answers = iter(matcher.responses([data for data in datas if data is not None]))
            for part, data in zip(parts, datas, strict=True):
                if data is None:
                    others.append(part)
                    if last is not None and trails is None:
                        trails = last
                    continue
                last = next(answers) or ""
                if after_results and len(units) == mark:
                    view.apart.add(mark)
                ids[len(units)] = last or None
                sources[len(units)] = content
                units.append(part)
                kinds.append(RESULT)
            if leading:  # no user turn stays before it
                leading = all(kind in (RESULT, REPLY) for kind in kinds[scanned:])
                scanned = len(kinds)
            if leading and not others and (index + 1 == stop or content_role(messages[index + 1]) == "model"):
                others.append(_new_part(parts[0], text=LEADING_RESULTS_TEXT))
            if others:
                if trails is not None:
                    view.marks[len(units)] = Mark("text_after_results", trails)
                sources[len(units)] = content
                units.append(tuple(others))
                kinds.append(PART)
            after_results = True
            index += 1
        if state is not None:
            state["leading"] = leading and all(kind in (RESULT, REPLY) for kind in kinds[scanned:])
        return view

    def interrupted(self, result: object) -> bool:
        """Whether the response's payload (``error``, ``output`` or ``result``) is an interrupted close."""
        return _is_close(result)

    def write_turn(
        self, items: tuple[object, ...], position: int, calls: Sequence[tuple[object, object]], *, trailing: bool
    ) -> list[object]:
        """The run's contents with left-out repeated calls removed and the first call stamped when unsigned.

        No other part changes or moves; a content left with no parts is left out.
        """
        del trailing  # text after a call is model output here
        out: list[object] = []
        kept = 0
        for number, content in enumerate(items):
            new_parts: list[object] = []
            touched = False
            for part in parts_of(content, position + number):
                if call_of(part) is None:
                    new_parts.append(part)
                    continue
                if kept < len(calls) and calls[kept][0] is part:
                    new = calls[kept][1]
                    if kept == 0 and not signed(new):
                        new = _stamp(new)
                    kept += 1
                    touched = touched or new is not part
                    new_parts.append(new)
                    continue
                touched = True  # a repeated call, left out
            if not touched:
                out.append(content)
            elif new_parts:
                out.append(_with_parts(content, new_parts, position + number))
        return out

    def rename_call(self, call: Call, new_id: str) -> Call:
        """The call part under ``new_id`` (ids may repeat in this lane, so the law never asks)."""
        data = call_of(call.ref)
        key = "functionCall" if isinstance(call.ref, Mapping) and "functionCall" in call.ref else "function_call"
        if isinstance(call.ref, Mapping):
            return Call(new_id, {**call.ref, key: {**data, "id": new_id}} if isinstance(data, Mapping) else call.ref)
        return Call(new_id, replace(call.ref, function_call=replace(data, id=new_id)))

    def rename_result(self, result: object, new_id: str) -> object:
        """The response part answering ``new_id``."""
        data = response_of(result)
        if isinstance(result, Mapping):
            key = "functionResponse" if "functionResponse" in result else "function_response"
            return {**result, key: {**data, "id": new_id}} if isinstance(data, Mapping) else result
        return replace(result, function_response=replace(data, id=new_id))

    def call_kind(self, call: object) -> CallKind:
        """Every call here is a function call."""
        del call  # one kind of call
        return "function"

    def synthesize(self, call: Call) -> object:
        """A ``functionResponse`` with the call's name and id saying it was interrupted, in the call's spelling."""
        data = call_of(call.ref)
        response: dict[str, object] = {"name": name_of(data) or ""}
        if id_of(data) is not None:
            response["id"] = id_of(data)
        response["response"] = {"error": INTERRUPTED_RESULT_TEXT}
        return _new_part(call.ref, function_response=response)

    def fold(self, results: Sequence[object]) -> object:
        """One response: the first's name and id, the payloads joined (see the module docstring)."""
        payloads = [_payload(result) for result in results]
        texts = [text for text in map(_one_text, payloads) if text is not None]
        joined: object
        if len(texts) == len(payloads) and all(text[0] == texts[0][0] for text in texts):
            key = texts[0][0]
            joined = f"\n{SECOND_RESULT_SEPARATOR}\n".join(text for _, text in texts)
        else:
            key = "output"
            pieces: list[object] = []
            for number, payload in enumerate(payloads):
                if number:
                    pieces.append(SECOND_RESULT_SEPARATOR)
                pieces.append(payload)
            joined = pieces
        first = results[0]
        data = response_of(first)
        if isinstance(first, Mapping):
            spelled = "functionResponse" if "functionResponse" in first else "function_response"
            inner = {**data, "response": {key: joined}} if isinstance(data, Mapping) else data
            return {**first, spelled: inner}
        return replace(first, function_response=replace(data, response={key: joined}))

    def call_name(self, call: object) -> str:
        """The ``functionCall``'s ``name``."""
        return name_of(call_of(call)) or ""

    def deliver(self, result: object, call_id: str, name: str, *, second: bool) -> tuple[UnitKind, object]:
        """A text part, in the content the result stood in: a line naming the call, then the result's text."""
        payload = _payload(result)
        error = isinstance(payload, Mapping) and "error" in payload
        heading = in_place_heading(call_id, name, second=second, error=error)
        text = _one_text(payload)
        body = text[1] if text is not None else json.dumps(payload, ensure_ascii=False, default=str)
        like = result if not isinstance(result, Mapping) else {}
        return PART, (_new_part(like, text=f"{heading}\n{body}"),)

    def write(self, out: Emitted) -> list[object]:
        """Whole contents as they are; each run of result and part units regrouped into user contents.

        A run's results, with the parts of the contents they stood in ahead of them, form one content;
        the other parts of the run form one content per content they stood in. A content whose parts
        come back the same, in order, is that content object.
        """
        wire: list[object] = []
        run: list[tuple[UnitKind, object, object]] = []
        anchor: object = None
        for item, kind, source in zip(out.items, out.kinds, out.sources, strict=True):
            if kind == OTHER:
                if run:
                    _flush(run, anchor, wire)
                wire.append(item)
                anchor = item
            else:
                run.append((kind, item, source))
        if run:
            _flush(run, anchor, wire)
        return wire

    def validate(self, messages: Sequence[object], *, chained: bool = False) -> list[Violation]:
        """The Gemini API's tool-turn rules, in its own words."""
        stream = self.validate_stream(chained=chained)
        stream.feed(messages, last=True)
        return stream.close()

    def validate_stream(self, *, chained: bool = False) -> GeminiValidation:
        """``validate`` fed one segment of ``contents`` at a time (``GeminiValidation``)."""
        del chained  # no server-held state continues this lane's transcript
        return GeminiValidation()

    transcript_field: str = "contents"

    def setting(self, request: request_parts.Request, name: str) -> object:
        """A request setting: the field ``name`` of ``config`` (a dict or the SDK's typed config); ``None``: absent."""
        config = request.get("config")
        return None if config is None else field(config, name)

    def tool_choice_none(self) -> object:
        """``TOOLS_OFF``: a ``tool_config`` whose function calling mode is ``NONE``."""
        return TOOLS_OFF

    def says_no_tool(self, tool_choice: object) -> bool:
        """A ``tool_config`` whose ``function_calling_config.mode`` is ``NONE``."""
        calling = field(tool_choice, "function_calling_config") if tool_choice is not None else None
        return calling is not None and field(calling, "mode") == "NONE"

    def with_tool_choice(self, request: request_parts.Request, choice: object) -> dict[str, object]:
        """A copy of ``request`` whose ``config`` (a dict or the SDK's typed config, copied) has ``tool_config`` set."""
        config = request.get("config")
        tool_config = dict(choice) if isinstance(choice, Mapping) else choice
        if config is None:
            return {**request, "config": {"tool_config": tool_config}}
        if isinstance(config, Mapping):
            return {**request, "config": {**config, "tool_config": tool_config}}
        return {**request, "config": typed_copy(config, tool_config=tool_config)}

    def system_pieces(
        self, request: request_parts.Request, transcript: Sequence[request_parts.SystemPromptPiece] | None = None
    ) -> tuple[request_parts.SystemPromptPiece, ...]:
        """``config.system_instruction``: a string, or each text part of it (the contents hold none)."""
        del transcript  # the system prompt stands outside the transcript
        return tuple(instruction_pieces(self.setting(request, "system_instruction"), "config.system_instruction"))

    def is_model_output(self, item: object) -> bool:
        """A ``model`` content."""
        return field(item, "role") == "model"

    def emitted_call_ids(self, item: object) -> tuple[str, ...]:
        """The calls of one ``model`` content as this lane reads them (its id, or ``<name>#<k>`` without one)."""
        if field(item, "role") != "model":
            return ()
        try:
            view = self.read([item])
        except ToolTurnInputError:
            return ()
        return tuple(call.call_id for unit in view.units if isinstance(unit, Turn) for call in unit.calls)

    def speaks_as_user(self, message: object) -> bool:
        """A ``user`` content (or one without a role) with a non-empty text part."""
        parts = field(message, "parts")
        return (
            field(message, "role") in (None, "user")
            and isinstance(parts, Sequence)
            and any(isinstance(field(part, "text"), str) and bool(field(part, "text")) for part in parts)
        )

    @property
    def handoff(self) -> None:
        """None: no handoff runs here (the system prompt lives outside the list a handoff pushes it into)."""

    string_input: bool = True
    sdk_normalises_transcript: bool = True
    sdk_listed_parameters: tuple[tuple[str, str], ...] = ()
    head_settings: tuple[str, ...] = ("system_instruction", "tools")
    tool_choice_field: str = "tool_config"

    cli_alias: str = "gemini"

    def claims_body(self, body: request_parts.Request, transcript_field: str | None) -> bool:
        """A body whose transcript is its ``contents``."""
        del body
        return transcript_field == self.transcript_field

    def claims_item(self, item: request_parts.Item) -> bool:
        """A content with a ``parts`` list, or with the role ``model``."""
        return isinstance(item.get("parts"), list) or item.get("role") == "model"

    def sdk_request(self, body: dict[str, object], model: str | None) -> dict[str, object]:
        """A REST ``generateContent`` body read as the google-genai call: ``model``, ``contents``, ``config``.

        ``contents`` as they are; the system instruction, tools and tool config (either spelling of
        each, ``REST_CONFIG``) under ``config`` by their SDK names; nothing else of the body is read.
        """
        config: dict[str, object] = {}
        for name, keys in REST_CONFIG:
            value = next((body[key] for key in keys if body.get(key) is not None), None)
            if value is not None:
                config[name] = value
        request: dict[str, object] = {"contents": body.get("contents"), "config": config}
        if model is not None:
            request["model"] = model
        return request

    def body_writes(
        self, body: request_parts.Request, request: request_parts.Request, sent: request_parts.Request
    ) -> dict[str, object]:
        """The ``contents`` when they changed; the tool config when it changed, under the body's own key for it.

        The key is the one ``body`` used (``toolConfig`` when it had none). Nothing else is ever written.
        """
        writes: dict[str, object] = {}
        contents = sent.get("contents")
        if contents is not request.get("contents"):
            writes["contents"] = contents
        before, after = request.get("config"), sent.get("config")
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            tool_config = after.get("tool_config")
            if tool_config is not before.get("tool_config"):
                key = next((key for key in _REST_TOOL_CONFIG if key in body), _REST_TOOL_CONFIG[0])
                writes[key] = tool_config
        return writes


def _responses_of(parts: Sequence[object]) -> list[object] | None:
    """Each part's response data (``None``: the part is no response); ``None`` when no part is one."""
    datas: list[object] = []
    found = False
    for part in parts:
        if type(part) is dict:
            data = part.get("functionResponse")
            if data is None:
                data = part.get("function_response")
        else:
            data = response_of(part)
        if data is not None:
            found = True
        datas.append(data)
    return datas if found else None


def _responses_only(content: object, count: int) -> list[object] | None:
    """The responses' data of ``content`` when it is a user content of exactly ``count`` parts, each a response.

    ``None`` otherwise: a model content, another count, a part that is no response or also holds a text, or
    parts that are no list (refused where the content is read).
    """
    if type(content) is dict:
        if content.get("role") == "model":
            return None
        parts = content.get("parts")
    else:
        if content_role(content) == "model":
            return None
        parts = field(content, "parts")
    if (type(parts) is not list and not is_list(parts)) or len(parts) != count:
        return None
    datas: list[object] = []
    for part in parts:
        if type(part) is dict:
            data = part.get("functionResponse")
            if data is None:
                data = part.get("function_response")
            if data is None or part.get("text"):
                return None
        else:
            data = response_of(part)
            if data is None or field(part, "text"):
                return None
        datas.append(data)
    return datas


def _one_text(payload: object) -> tuple[str, str] | None:
    """``(key, text)`` when the payload is one text under ``output``, ``result`` or ``error``; else ``None``."""
    if isinstance(payload, Mapping) and len(payload) == 1:
        ((key, value),) = payload.items()
        if key in _INTERRUPTED_KEYS and isinstance(value, str):
            return key, value
    return None


def _same(a: Sequence[object], b: Sequence[object]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _with_parts(content: object, parts: list[object], position: int | None) -> object:
    """A copy of ``content`` holding ``parts``, each written in its kind (``held_by``)."""
    held = held_by(content, parts, position)
    if type(content) is dict:
        return {**content, "parts": held}
    return replace(content, position, parts=held)


def _user_content(parts: list[object], template: object, anchor: object) -> object:
    """A user content holding ``parts``: a copy of ``template`` (a content they stood in), else in the anchor's kind."""
    if template is not None:
        return _with_parts(template, parts, None)
    if anchor is None or isinstance(anchor, (Mapping, str)):
        return _with_parts({"role": "user", "parts": []}, parts, None)
    return _with_parts(replace(anchor, role="user", parts=[]), parts, None)


def _unit_parts(kind: UnitKind, item: object) -> list[object]:
    if kind == PART and isinstance(item, tuple):
        return list(item)
    return [item]


def _flush(run: list[tuple[UnitKind, object, object]], anchor: object, wire: list[object]) -> None:
    """One run of result and part units as user contents (see ``write``); ``anchor``: the content before it."""
    results = [(item, source) for kind, item, source in run if kind == RESULT]
    batch_sources = [source for _, source in results if source is not None]
    groups: list[tuple[object, list[object]]] = []  # (source, parts), in order of first appearance
    batch_parts: list[object] = []
    for kind, item, source in run:
        if kind == RESULT:
            continue
        if any(source is s for s in batch_sources):
            batch_parts.extend(_unit_parts(kind, item))
            continue
        for group_source, parts in groups:
            if group_source is source:
                parts.extend(_unit_parts(kind, item))
                break
        else:
            groups.append((source, _unit_parts(kind, item)))
    if results:
        parts = batch_parts + [item for item, _ in results]
        first = batch_sources[0] if batch_sources else None
        if first is not None and _same(parts_of(first, 0), parts):
            wire.append(first)
        else:
            wire.append(_user_content(parts, first, anchor))
    for source, parts in groups:
        if source is not None and _same(parts_of(source, 0), parts):
            wire.append(source)
        else:
            wire.append(_user_content(parts, source, anchor))
    run.clear()


_COUNT_WORDS: Final = (
    "Please ensure that the number of function response parts is equal to the number of function call parts "
    "of the function call turn."
)
_RESPONSE_POSITION_WORDS: Final = (
    "Please ensure that function response turn comes immediately after a function call turn."
)
_CALL_POSITION_WORDS: Final = (
    "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
)
_TRAILING_WORDS: Final = "Requests ending with a model turn are not supported."
_EMPTY_WORDS: Final = (
    "Unable to submit request because it must include at least one parts field, which describes the prompt input."
)


class GeminiValidation:
    """The Gemini API's tool-turn rules over ``contents`` fed one segment at a time (``_view.ValidationStream``).

    See ``validate`` in ``otel_toolturn._validate`` for the rule keys. Kept across a cut: the ``Matcher`` (which
    call each response answers), the keys of the run right before awaiting its responses and where it stood,
    the rules broken so far, and where the next segment starts. A cut falls before a model content after a
    non-model one, so a call step never spans two segments.
    """

    __slots__ = ("_matcher", "_offset", "_pending", "_pending_at", "_violations")

    def __init__(self) -> None:
        self._violations: list[Violation] = []
        self._matcher = Matcher()
        self._pending: list[str] | None = None  # the call keys of the run right before, awaiting its responses
        self._pending_at = 0
        self._offset = 0

    def feed(self, contents: Sequence[object], *, last: bool) -> None:
        """Judge the next segment; ``last``: ``contents`` ends with it."""
        violations, matcher, offset = self._violations, self._matcher, self._offset
        pending, pending_at = self._pending, self._pending_at
        index, stop = 0, len(contents)
        while index < stop:
            content = contents[index]
            parts = parts_of(content, offset + index)
            if content_role(content) == "model":
                first = index
                index, calls = call_step(contents, first, offset=offset)
                violations.extend(
                    Violation(position=offset + position, rule="empty_parts", message=_EMPTY_WORDS)
                    for position in range(first, index)
                    if not parts_of(contents[position], offset + position)
                )
                if not calls:
                    continue
                if offset + first == 0:
                    violations.append(Violation(position=0, rule="call_turn_position", message=_CALL_POSITION_WORDS))
                at, part, data = calls[0]
                if not signed(part):
                    words = MISSING_SIGNATURE_WORDS.format(name=name_of(data) or "", position=offset + at + 1)
                    violations.append(Violation(position=offset + at, rule="missing_thought_signature", message=words))
                pending = matcher.turn(offset + first, calls)
                pending_at = offset + first
                continue
            position = offset + index
            if not parts:
                violations.append(Violation(position=position, rule="empty_parts", message=_EMPTY_WORDS))
            datas = [response_of(part) for part in parts]
            keys = matcher.responses([data for data in datas if data is not None])
            trailing, seen = False, False
            for data in datas:
                if data is not None:
                    seen = True
                elif seen:
                    trailing = True
            if keys:
                if pending is None:
                    violations.append(
                        Violation(position=position, rule="response_turn_position", message=_RESPONSE_POSITION_WORDS)
                    )
                elif sorted(k or "" for k in keys) != sorted(pending):
                    violations.append(_count(position))
                if trailing:
                    violations.append(
                        Violation(position=position, rule="text_after_responses", message=_TRAILING_WORDS)
                    )
            elif pending is not None:
                violations.append(_count(pending_at))
            pending = None
            index += 1
        if last and pending is not None:
            violations.append(_count(pending_at))
            pending = None
        self._pending, self._pending_at, self._offset = pending, pending_at, offset + stop

    def close(self) -> list[Violation]:
        """Every rule ``contents`` breaks, in order of position: exactly ``validate`` of the whole list."""
        return sorted(self._violations, key=lambda v: v.position)


def _count(position: int) -> Violation:
    return Violation(position=position, rule="function_response_count", message=_COUNT_WORDS)


ADAPTER: Final[GeminiGenerateContent] = GeminiGenerateContent()


TOOLS_OFF: Final[Mapping[str, object]] = MappingProxyType({"function_calling_config": {"mode": "NONE"}})
"""google-genai's "call no tool": the ``tool_config`` of the request's ``config``."""


def typed_copy(model: object, **updates: object) -> object:
    """A pydantic model's copy with ``updates`` validated into its own field types (the fields it had set kept)."""
    fields_set: set[str] = getattr(model, "model_fields_set", set())
    values = {name: getattr(model, name) for name in fields_set}
    validate = getattr(type(model), "model_validate", None)
    if not callable(validate):
        raise TypeError(f"cannot copy a request config of type {type(model).__name__!r}")
    return validate({**values, **updates})


def instruction_pieces(instruction: object, source: str) -> list[request_parts.SystemPromptPiece]:
    """``system_instruction``'s pieces: a string, a part, a content (its parts) or a list of strings and parts."""
    if instruction is None:
        return []
    if isinstance(instruction, str):
        return [request_parts.SystemPromptPiece(raw_content=instruction, source=source)]
    parts = field(instruction, "parts")
    if parts is not None:
        return instruction_pieces(parts, f"{source}.parts")
    if isinstance(instruction, Sequence):
        out: list[request_parts.SystemPromptPiece] = []
        for index, part in enumerate(instruction):
            out.extend(instruction_pieces(part, f"{source}.{index}"))
        return out
    text = field(instruction, "text")
    return [request_parts.SystemPromptPiece(raw_content=text, source=source)] if isinstance(text, str) else []
