"""The same checks for a response that was not streamed: one final message.

Reads the SDK's own response object or the raw JSON dict (never alters it) and judges its calls
as streamed ones are judged (``judge_call``): a call runs only with a name and arguments that
are a JSON object. The body arrived whole, so the transport cut nothing; the close evidence per
lane:

- ``anthropic.messages``: every ``tool_use`` block is closed, except the last content block of
  a response the output cap stopped (``max_tokens``) — the cap cut the output there;
- ``openai.chat_completions``: as when streamed, only a finish reason that says the model
  finished its turn;
- ``openai.responses``: a ``function_call`` item is closed unless its ``status`` says it is not
  ``completed``.
- ``gemini.generate_content``: as when streamed (``gemini``), every whole ``functionCall`` part
  is closed except the last part of a candidate the output cap stopped (``MAX_TOKENS``); a
  ``MALFORMED_FUNCTION_CALL`` finish counts the call the provider withheld;
- Cohere's v2 chat (its own reply format): every ``tool_calls`` entry is closed, except the last of a
  response the output cap stopped (``MAX_TOKENS``); its arguments are JSON text;
- Ollama's native chat (its own reply format): its calls arrive whole (``ollama_chat.slot_of``), each
  closed unless the output cap stopped the reply (``length``) at the last;
- ``bedrock.converse``: every ``toolUse`` block of ``output.message`` is closed, except the last
  block of a response the output cap stopped (``max_tokens``); its input must be a JSON object.

Also read: finish reasons, response id, usage, and the model (``note_response_model``); the
text's tail goes through the repetition poll once. An Anthropic message's
``input_transformations`` (read by ``input_transformations_of``, as when streamed) are reported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from otel_toolturn.streams import gemini
from otel_toolturn.streams._frame import field
from otel_toolturn.streams._ledger import StreamEndLedger
from otel_toolturn.streams._model_check import ReportedModel, note_response_model
from otel_toolturn.streams._provider_word import provider_word
from otel_toolturn.streams._repetition import RepetitionPoll
from otel_toolturn.streams._report import StreamReport, Usage
from otel_toolturn.streams._settle import settle
from otel_toolturn.streams._tool_calls import NOT_AN_OBJECT, CallSlot
from otel_toolturn.streams._truncation_cause import OutputCapFacts
from otel_toolturn.streams.anthropic_messages import CAP_STOP as ANTHROPIC_CAP_STOP
from otel_toolturn.streams.anthropic_messages import input_transformations_of
from otel_toolturn.streams.anthropic_messages import usage_of as anthropic_usage_of
from otel_toolturn.streams.bedrock_converse import CAP_STOP as CONVERSE_CAP_STOP
from otel_toolturn.streams.bedrock_converse import usage_of as converse_usage_of
from otel_toolturn.streams.cohere_chat import CAP_STOP as COHERE_CAP_STOP
from otel_toolturn.streams.cohere_chat import usage_of as cohere_usage_of
from otel_toolturn.streams.ollama_chat import CAP_STOP as OLLAMA_CAP_STOP
from otel_toolturn.streams.ollama_chat import slot_of as ollama_slot_of
from otel_toolturn.streams.ollama_chat import usage_of as ollama_usage_of
from otel_toolturn.streams.openai_chat import CAP_STOP as CHAT_CAP_STOP
from otel_toolturn.streams.openai_chat import TURN_FINISHED
from otel_toolturn.streams.openai_chat import usage_of as chat_usage_of
from otel_toolturn.streams.openai_responses import CAP_STOP as RESPONSES_CAP_STOP
from otel_toolturn.streams.openai_responses import finish_word
from otel_toolturn.streams.openai_responses import usage_of as responses_usage_of


def _list(value: object) -> list[object]:
    return value if type(value) is list else []


def _str(value: object) -> str:
    return value if type(value) is str else ""


def _set_arguments(slot: CallSlot, arguments: object) -> None:
    if type(arguments) is str:
        slot.final = arguments
    elif isinstance(arguments, Mapping):
        slot.initial = dict(arguments)
    else:
        slot.final = NOT_AN_OBJECT


def _closed(slot: CallSlot) -> bool:
    return slot.closed


def _report(
    *,
    slots: list[CallSlot],
    reasons: tuple[str, ...],
    requested_model: str | None,
    cap_stop: bool,
    usage: Usage,
    max_output_tokens: int | None,
    text: str,
    response_id: object,
    model: ReportedModel,
    withheld_calls: int = 0,
) -> StreamReport:
    """The report of one whole response: its id as read, its model as judged (``note_response_model``)."""
    ledger = StreamEndLedger()
    ledger.decide("finish", reasons[0] if reasons else None)
    poll = RepetitionPoll()
    poll.poll(text)
    return settle(
        slots=slots,
        closed_of=_closed,
        ledger=ledger,
        torn=False,
        finish_reasons=reasons,
        response_id=response_id if type(response_id) is str else None,
        requested_model=requested_model,
        model=model,
        cap=OutputCapFacts(cap_stop=cap_stop, output_tokens=usage.output_tokens, cap_tokens=max_output_tokens),
        repetition=poll.report(),
        usage=usage,
        bad_frames=0,
        frames_unread=0,
        events=1,
        withheld_calls=withheld_calls,
    )


def check_anthropic_message(
    response: object, *, requested_model: str | None, max_output_tokens: int | None = None
) -> StreamReport:
    """Return the report of one Anthropic ``Message``."""
    stop = field(response, "stop_reason")
    reasons = (provider_word(stop),) if stop is not None else ()
    cap_stop = stop == ANTHROPIC_CAP_STOP
    content = _list(field(response, "content"))
    slots: list[CallSlot] = []
    texts: list[str] = []
    for position, block in enumerate(content):
        kind = field(block, "type")
        if kind == "text":
            texts.append(_str(field(block, "text")))
        if kind != "tool_use":
            continue
        slot = CallSlot(index=position, call_id=_str(field(block, "id")), name=_str(field(block, "name")))
        _set_arguments(slot, field(block, "input"))
        slot.closed = not (cap_stop and position == len(content) - 1)
        slots.append(slot)
    report = _report(
        slots=slots,
        reasons=reasons,
        requested_model=requested_model,
        cap_stop=cap_stop,
        usage=anthropic_usage_of(field(response, "usage")),
        max_output_tokens=max_output_tokens,
        text="".join(texts),
        response_id=field(response, "id"),
        model=note_response_model(ReportedModel(), field(response, "model"), requested_model),
    )
    transformations = tuple(dict.fromkeys(input_transformations_of(response)))
    return dataclasses.replace(report, input_transformations=transformations) if transformations else report


def check_chat_completion(
    response: object, *, requested_model: str | None, max_output_tokens: int | None = None
) -> StreamReport:
    """Return the report of one ``ChatCompletion`` (every choice)."""
    slots: list[CallSlot] = []
    reasons: list[str] = []
    text = ""
    for position, choice in enumerate(_list(field(response, "choices"))):
        index = field(choice, "index")
        choice_index = index if type(index) is int else position
        reason = field(choice, "finish_reason")
        if reason is not None:
            reasons.append(provider_word(reason))
        message = field(choice, "message")
        if choice_index == 0:
            text = _str(field(message, "content"))
        for call_index, call in enumerate(_list(field(message, "tool_calls"))):
            function = field(call, "function")
            slot = CallSlot(
                index=call_index,
                choice=choice_index,
                call_id=_str(field(call, "id")),
                name=_str(field(function, "name")),
            )
            _set_arguments(slot, field(function, "arguments"))
            slot.closed = reason in TURN_FINISHED
            slots.append(slot)
    return _report(
        slots=slots,
        reasons=tuple(reasons),
        requested_model=requested_model,
        cap_stop=CHAT_CAP_STOP in reasons,
        usage=chat_usage_of(field(response, "usage")),
        max_output_tokens=max_output_tokens,
        text=text,
        response_id=field(response, "id"),
        model=note_response_model(ReportedModel(), field(response, "model"), requested_model),
    )


def check_responses_response(
    response: object, *, requested_model: str | None, max_output_tokens: int | None = None
) -> StreamReport:
    """Return the report of one Responses ``Response``."""
    word = finish_word(response)
    slots: list[CallSlot] = []
    texts: list[str] = []
    for position, item in enumerate(_list(field(response, "output"))):
        kind = field(item, "type")
        if kind == "message":
            texts.extend(
                _str(field(part, "text"))
                for part in _list(field(item, "content"))
                if field(part, "type") == "output_text"
            )
        if kind != "function_call":
            continue
        slot = CallSlot(index=position, call_id=_str(field(item, "call_id")), name=_str(field(item, "name")))
        _set_arguments(slot, field(item, "arguments"))
        status = field(item, "status")
        slot.closed = status is None or status == "completed"
        slots.append(slot)
    return _report(
        slots=slots,
        reasons=(word,) if field(response, "status") is not None else (),
        requested_model=requested_model,
        cap_stop=word == RESPONSES_CAP_STOP,
        usage=responses_usage_of(field(response, "usage")),
        max_output_tokens=max_output_tokens,
        text="".join(texts),
        response_id=field(response, "id"),
        model=note_response_model(ReportedModel(), field(response, "model"), requested_model),
    )


def check_gemini_response(
    response: object, *, requested_model: str | None, max_output_tokens: int | None = None
) -> StreamReport:
    """Return the report of one Gemini ``GenerateContentResponse`` (every candidate), read as a streamed chunk is."""
    slots: list[CallSlot] = []
    reasons: list[str] = []
    text = ""
    withheld = 0
    candidates = _list(gemini.read(response, "candidates", "candidates"))
    for position, candidate in enumerate(candidates):
        index = gemini.read(candidate, "index", "index")
        choice = index if type(index) is int else position
        raw = gemini.read(candidate, "finishReason", "finish_reason")
        finish = None if raw is None else gemini.finish_word(raw)
        if finish is not None:
            reasons.append(finish)
            withheld += finish == gemini.WITHHELD_CALL
        parts = gemini.CandidateParts()
        texts = parts.read(gemini.read(gemini.read(candidate, "content", "content"), "parts", "parts"), choice=choice)
        if choice == 0:
            text = "".join(texts)
        for slot in parts.calls:
            slot.closed = parts.closed(slot, finish)
            slots.append(slot)
    if not candidates:
        blocked = gemini.read(gemini.read(response, "promptFeedback", "prompt_feedback"), "blockReason", "block_reason")
        if blocked is not None:
            reasons.append(gemini.finish_word(blocked, numbered=False))
    model = gemini.read(response, "modelVersion", "model_version")
    return _report(
        slots=slots,
        reasons=tuple(reasons),
        requested_model=requested_model,
        cap_stop=gemini.CAP_STOP in reasons,
        usage=gemini.usage_of(gemini.read(response, "usageMetadata", "usage_metadata")),
        max_output_tokens=max_output_tokens,
        text=text,
        response_id=gemini.read(response, "responseId", "response_id"),
        model=note_response_model(ReportedModel(), model, gemini.model_id(requested_model)),
        withheld_calls=withheld,
    )


def check_converse_response(
    response: object, *, requested_model: str | None, max_output_tokens: int | None = None
) -> StreamReport:
    """Return the report of one whole ``converse`` response (the dict botocore returns, or the raw JSON)."""
    stop = field(response, "stopReason")
    cap_stop = stop == CONVERSE_CAP_STOP
    blocks = _list(field(field(field(response, "output"), "message"), "content"))
    slots: list[CallSlot] = []
    texts: list[str] = []
    for position, block in enumerate(blocks):
        texts.append(_str(field(block, "text")))
        use = field(block, "toolUse")
        if use is None:
            continue
        slot = CallSlot(index=position, call_id=_str(field(use, "toolUseId")), name=_str(field(use, "name")))
        arguments = field(use, "input")
        if type(arguments) is dict:
            slot.initial = dict(arguments)
        else:
            slot.final = NOT_AN_OBJECT
        slot.closed = not (cap_stop and position == len(blocks) - 1)
        slots.append(slot)
    return _report(
        slots=slots,
        reasons=(provider_word(stop),) if stop is not None else (),
        requested_model=requested_model,
        cap_stop=cap_stop,
        usage=converse_usage_of(field(response, "usage")),
        max_output_tokens=max_output_tokens,
        text="".join(texts),
        response_id=None,
        model=ReportedModel(),
    )


def check_cohere_chat_response(
    response: object, *, requested_model: str | None, max_output_tokens: int | None = None
) -> StreamReport:
    """Return the report of one whole Cohere v2 ``chat`` response (the SDK's ``V2ChatResponse`` or its JSON)."""
    reason = field(response, "finish_reason")
    cap_stop = reason == COHERE_CAP_STOP
    message = field(response, "message")
    calls = _list(field(message, "tool_calls"))
    slots: list[CallSlot] = []
    for position, call in enumerate(calls):
        function = field(call, "function")
        slot = CallSlot(index=position, call_id=_str(field(call, "id")), name=_str(field(function, "name")))
        arguments = field(function, "arguments")
        if type(arguments) is str:
            slot.final = arguments
        elif arguments is not None:
            slot.final = NOT_AN_OBJECT
        slot.closed = not (cap_stop and position == len(calls) - 1)
        slots.append(slot)
    return _report(
        slots=slots,
        reasons=(provider_word(reason),) if reason is not None else (),
        requested_model=requested_model,
        cap_stop=cap_stop,
        usage=cohere_usage_of(field(response, "usage")),
        max_output_tokens=max_output_tokens,
        text="".join(_str(field(part, "text")) for part in _list(field(message, "content"))),
        response_id=field(response, "id"),
        model=ReportedModel(),
    )


def check_ollama_chat_response(
    response: object, *, requested_model: str | None, max_output_tokens: int | None = None
) -> StreamReport:
    """Return the report of one whole Ollama chat reply (the SDK's ``ChatResponse`` or its JSON)."""
    reason = field(response, "done_reason")
    message = field(response, "message")
    calls = field(message, "tool_calls")
    return _report(
        slots=[
            ollama_slot_of(call, index) for index, call in enumerate(calls if isinstance(calls, (list, tuple)) else ())
        ],
        reasons=(provider_word(reason),) if type(reason) is str else (),
        requested_model=requested_model,
        cap_stop=reason == OLLAMA_CAP_STOP,
        usage=ollama_usage_of(response),
        max_output_tokens=max_output_tokens,
        text=_str(field(message, "content")),
        response_id=None,
        model=ReportedModel(),
    )
