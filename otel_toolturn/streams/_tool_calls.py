"""A streamed tool call: the slot its frames fill, and the fail-closed judgement of it.

A call runs only with arguments that are a complete JSON object and a tool name. Both judges
take the lane's evidence that the wire ended the call as ``closed`` — keyword-only, no default:
a lane that does not state its evidence does not type-check. The evidence per lane:

- ``anthropic.messages``: the block's own ``content_block_stop``;
- ``openai.responses``: ``response.function_call_arguments.done`` or ``response.output_item.done``
  for the item;
- ``openai.chat_completions``: a finish reason that says the model finished its turn
  (``tool_calls``, ``stop``, ``function_call``) — not ``length``, not a missing finish.
- ``gemini.generate_content``: a ``functionCall`` part arrives whole, its own evidence — except
  the candidate's last part when ``MAX_TOKENS`` stopped it, and a part that streams its
  arguments in pieces (``willContinue``).

Another call opening is no evidence: a gateway may open several calls before any argument byte
arrives.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Final, Literal

from otel_toolturn.streams._report import StreamDrop, StreamedCall

NOT_AN_OBJECT: Final = "<arguments that are not a JSON object>"
"""Argument text standing for a call whose arguments arrived neither as text nor as an object."""


def _reject_constant(word: str) -> object:
    raise ValueError(f"not JSON: {word}")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def parse_streamed_tool_args(text: str, *, closed: bool) -> dict[str, object] | None:
    """Turn a streamed call's accumulated argument text into its arguments object, fail-closed.

    Reads the whole accumulation (join fragments before calling). The rule:

    - valid JSON **object** → that object (a complete ``{}`` included);
    - no bytes (``""``) → ``{}`` when ``closed`` (the wire closed a call that carried no
      arguments: a no-argument call); ``None`` when not (the stream stopped before the first
      argument byte, and nothing says the call had no arguments rather than being cut);
    - anything else — cut or invalid JSON, ``NaN``/``Infinity``, a top-level string, array,
      number or null, whitespace only — → ``None``.

    ``None`` means "this call must not run". Never cache it: judge again on the complete
    accumulation. Returns a fresh dict on every call.

    >>> parse_streamed_tool_args('{"city": "Paris"}', closed=False)
    {'city': 'Paris'}
    >>> parse_streamed_tool_args("", closed=True), parse_streamed_tool_args("", closed=False)
    ({}, None)
    """
    if not text:
        return {} if closed else None
    try:
        value = _DECODER.decode(text)
    except ValueError:
        return None
    return value if type(value) is dict else None


def name_missing_cause(*, closed: bool) -> Literal["unnamed", "truncated"]:
    """Return the drop cause of a call slot that never received its tool name.

    Judged by the same evidence as the arguments: a slot the wire closed has no name because
    none was sent (``unnamed``); a slot nothing closed was cut before its name arrived
    (``truncated``). A missing part on an unclosed call is a cut call, whichever part is missing.
    """
    return "unnamed" if closed else "truncated"


class CallSlot:
    """One streamed tool call as the wire built it: identity, name, argument fragments, close evidence.

    ``parts`` are the argument text fragments in the order the frames carried them; ``final``
    is the complete argument text a done frame stated (it wins over the fragments); ``initial``
    is an arguments object the call's opening frame already carried.
    """

    __slots__ = ("call_id", "choice", "closed", "final", "index", "initial", "name", "parts")

    def __init__(self, *, index: int, choice: int = 0, call_id: str = "", name: str = "") -> None:
        self.index = index
        self.choice = choice
        self.call_id = call_id
        self.name = name
        self.parts: list[str] = []
        self.closed = False
        self.final: str | None = None
        self.initial: dict[str, object] | None = None

    def text(self) -> str:
        """Return the whole argument text: the done frame's, else the fragments joined."""
        if self.final is not None:
            return self.final
        return "".join(self.parts)


def judge_call(slot: CallSlot, *, closed: bool) -> StreamedCall | StreamDrop:
    """One slot's verdict: a whole call, or a one-call drop with its cause.

    The name is judged first (``name_missing_cause``), then the arguments
    (``parse_streamed_tool_args``). An opening frame's arguments object stands for a call whose
    wire sent no argument text, under the same ``closed`` evidence.
    """
    ids = (slot.call_id,) if slot.call_id else ()
    if not slot.name:
        return StreamDrop(cause=name_missing_cause(closed=closed), count=1, call_ids=ids)
    text = slot.text()
    if not text and slot.initial is not None:
        arguments = dict(slot.initial) if closed else None
    else:
        arguments = parse_streamed_tool_args(text, closed=closed)
    if arguments is None:
        return StreamDrop(cause="truncated", count=1, call_ids=ids)
    return StreamedCall(
        call_id=slot.call_id,
        name=slot.name,
        arguments=MappingProxyType(arguments),
        index=slot.index,
        choice=slot.choice,
    )
