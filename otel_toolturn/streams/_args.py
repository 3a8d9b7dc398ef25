"""The fail-closed judge of a streamed tool call: its arguments and its name.

A call runs only with arguments that are a complete JSON object and a tool name. Both helpers
take the lane's evidence that the wire ended the call as ``closed`` — keyword-only, no default:
a lane that does not state its evidence does not type-check. The evidence per lane:

- ``anthropic.messages``: the block's own ``content_block_stop``;
- ``openai.responses``: ``response.function_call_arguments.done`` or ``response.output_item.done``
  for the item;
- ``openai.chat_completions``: a finish reason that says the model finished its turn
  (``tool_calls``, ``stop``, ``function_call``) — not ``length``, not a missing finish.

Another call opening is no evidence: a gateway may open several calls before any argument byte
arrives.
"""

from __future__ import annotations

import json
from typing import Literal


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
