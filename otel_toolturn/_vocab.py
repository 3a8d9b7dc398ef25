"""The closed vocabularies of otel-toolturn, each defined once.

Every vocabulary is a ``Literal`` alias with its runtime tuple taken from ``typing.get_args``, so
the type checker and the code read the same list. A table keyed by a vocabulary has a test that
its keys are the whole vocabulary.

- ``Lane``: the wire formats the law speaks.
- ``Dialect``: a provider's own variant of a lane's rules, told from the client (its SDK, its base URL's
  host), never from the content: ``mistral``, Mistral's Chat Completions (call ids of exactly nine
  letters and digits; as many ``tool`` messages as calls); ``ollama``, Ollama's native ``/api/chat`` (calls
  usually without ids, ``tool`` messages answering by ``tool_name`` and order); ``deepseek``, DeepSeek's in
  thinking mode (an assistant message of a turn with tool calls carries its ``reasoning_content``);
  ``cohere``, Cohere's v2 chat (``tool_choice`` ``NONE``; its words after ``invalid request: ``).
- ``RepairForm``: what the tool-turn law restored. The six forms of the law; ``reused_id``, the
  derived id given to a later call that repeats an id in a lane whose API rejects repeats;
  ``invalid_id``, the derived id given to a call whose id the API's id pattern refuses; and the
  two forms of a result recorded after the model had answered its call's turn, delivered where it
  stands instead of moved up (``late_result_in_place``: the call had no result the model saw;
  ``duplicate_result_in_place``: it had one); and three Responses forms of items the API refuses
  where they stand: ``duplicate_item`` (an item, no call and no output, whose ``id`` repeats an
  earlier item's), ``duplicate_item_id`` (a call or output item whose ``id`` repeats an earlier
  item's: the item stays, without that optional ``id``) and ``dangling_reasoning`` (a
  ``reasoning`` item with nothing after it that it could belong to); and
  two Gemini forms: ``placeholder_signature`` (the first call of a call step carried no thought
  signature, so it gets the provider's documented placeholder that skips the check) and
  ``text_after_results`` (text that stood after the function responses of a user content moved
  ahead of them); and ``unanswerable_call``, a call left without a result for which no honest close
  exists (a Responses ``computer_call`` is answered only by a screenshot), left out with the reasoning
  that belonged to it.
- ``CallKind``: the kind of call a repair concerns, as the lane reads it: ``function`` (Anthropic
  ``tool_use``, Chat ``tool_calls``, Responses ``function_call``, Gemini ``functionCall``), ``custom``
  (Responses ``custom_tool_call``), ``server_tool`` (Anthropic ``server_tool_use``: web search, web
  fetch, code execution, tool search), ``mcp`` (Anthropic ``mcp_tool_use``), and the Responses calls the
  agent runs: ``shell``, ``local_shell``, ``apply_patch``, ``computer``.
- ``REPAIR_DROPS``: whether a form leaves recorded content out of the request (a lossy
  projection) rather than moving, folding, renaming or adding it.
- ``IncompleteCause`` / ``StreamDropCause``: why a tool turn reached the model incomplete.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final, Literal, NoReturn, get_args

Lane = Literal[
    "anthropic.messages", "openai.chat_completions", "openai.responses", "gemini.generate_content", "bedrock.converse"
]
LANES: Final[tuple[Lane, ...]] = get_args(Lane)

Dialect = Literal["mistral", "ollama", "deepseek", "cohere"]
DIALECTS: Final[tuple[Dialect, ...]] = get_args(Dialect)

RepairForm = Literal[
    "trailing_text",
    "late_result",
    "missing_result",
    "duplicate_result",
    "duplicate_call",
    "orphan_result",
    "reused_id",
    "invalid_id",
    "late_result_in_place",
    "duplicate_result_in_place",
    "duplicate_item",
    "duplicate_item_id",
    "dangling_reasoning",
    "placeholder_signature",
    "text_after_results",
    "unanswerable_call",
]
REPAIR_FORMS: Final[tuple[RepairForm, ...]] = get_args(RepairForm)

REPAIR_DROPS: Final[MappingProxyType[RepairForm, bool]] = MappingProxyType(
    {
        "trailing_text": False,
        "late_result": False,
        "missing_result": False,
        "duplicate_result": False,
        "duplicate_call": True,
        "orphan_result": True,
        "reused_id": False,
        "invalid_id": False,
        "late_result_in_place": False,
        "duplicate_result_in_place": False,
        "duplicate_item": True,
        "duplicate_item_id": False,
        "dangling_reasoning": True,
        "placeholder_signature": False,
        "text_after_results": False,
        "unanswerable_call": True,
    }
)
"""Does the form leave recorded content out of the request? A request that did is lossy."""

CallKind = Literal["function", "custom", "server_tool", "mcp", "shell", "local_shell", "apply_patch", "computer"]
CALL_KINDS: Final[tuple[CallKind, ...]] = get_args(CallKind)

IncompleteCause = Literal["truncated", "unnamed", "bad_frame", "missing_result_synthesized"]
INCOMPLETE_CAUSES: Final[tuple[IncompleteCause, ...]] = get_args(IncompleteCause)

StreamDropCause = Literal["truncated", "unnamed", "bad_frame"]
STREAM_DROP_CAUSES: Final[tuple[StreamDropCause, ...]] = get_args(StreamDropCause)

ReplyFormat = Literal["cohere.chat", "ollama.chat"]
"""A reply format of its own, answering a request of a lane (``cohere.chat``: Cohere's v2 chat, whose
request the Chat lane reads, answered by a ``V2ChatResponse`` or its ``chat_stream`` events;
``ollama.chat``: Ollama's native ``/api/chat``, answered by one ``ChatResponse`` or NDJSON lines of it)."""
REPLY_FORMATS: Final[tuple[ReplyFormat, ...]] = get_args(ReplyFormat)

DemoTelemetry = Literal["console", "otlp", "none"]
"""Where ``otel-toolturn demo`` sends its telemetry (its ``--telemetry`` choices)."""


def unreachable(value: NoReturn) -> AssertionError:
    """The error an exhaustive ``match`` raises past its last case: ``raise`` it with the value matched.

    The type checker proves no value reaches it, as ``typing.assert_never`` (which Python 3.10 lacks) does.
    """
    return AssertionError(f"unhandled value {value!r}")
