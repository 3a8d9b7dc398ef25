"""The request verbs most lanes answer alike, written once; a lane overrides what it spells otherwise.

A lane's adapter subclasses ``AdapterDefaults`` and states the fields it spells otherwise. The
defaults are those of an SDK whose keyword arguments are the wire body's fields (Anthropic
Messages, Chat Completions, Responses, Bedrock Converse): a setting is the keyword argument of its
name, the tools sit in ``tools``, the tool choice in ``tool_choice`` and "call no tool" is OpenAI's
``"none"``, the model speaks as ``assistant``, the server holds no conversation state, the input is
a list the SDK sends as it is given, and instructions may stand in it.
"""

from __future__ import annotations

from collections.abc import Sequence

from otel_toolturn._view import TakenIds, field
from otel_toolturn.lanes import request_parts
from otel_toolturn.lanes._common import derive_id


class AdapterDefaults:
    """The verbs of ``LaneAdapter`` most lanes share (see the module docstring)."""

    __slots__ = ()

    tools_field: str = "tools"
    """The request setting holding the tool definitions, by SDK name (``setting``)."""
    tool_choice_field: str = "tool_choice"
    """The request setting holding the caller's tool choice, by SDK name."""
    string_input: bool = False
    """Whether the transcript may be a string: one user turn, with no tool turn to read."""
    sdk_normalises_transcript: bool = False
    """Whether the lane's SDK reads the transcript into its own types before a request hook sees it."""
    sdk_listed_item_fields: tuple[str, ...] = ()
    """The fields of the transcript's dict items the law reads and the lane's SDK lists when one holds an iterator."""
    instructions_in_transcript: bool = True
    """Whether a conversation's opening is read past the transcript's leading system / developer messages."""

    id_limit: int | None = None
    """The longest call id the API accepts (``None``: any non-empty string), for ``fits_ids`` and ``derive_id``."""

    def fits_ids(self, call_ids: Sequence[str]) -> bool:
        """Whether every id is at most ``id_limit`` characters long (the limit read once for the ids)."""
        limit = self.id_limit
        return limit is None or max(map(len, call_ids), default=0) <= limit

    def derive_id(self, call_id: str, taken: TakenIds) -> str:
        """``<id>_<n>``, cut to at most ``id_limit`` characters."""
        return derive_id(call_id, taken, pattern_safe=False, limit=self.id_limit)

    def setting(self, request: request_parts.Request, name: str) -> object:
        """A request setting: the keyword argument ``name``; ``None``: absent."""
        return request.get(name)

    def tools(self, request: request_parts.Request) -> object:
        """The tool definitions the request carries: the setting ``tools_field``; ``None``: none."""
        return self.setting(request, self.tools_field)

    def tool_choice(self, request: request_parts.Request) -> object:
        """The caller's tool choice: the setting ``tool_choice_field``; ``None``: none given."""
        return self.setting(request, self.tool_choice_field)

    def with_tool_choice(self, request: request_parts.Request, choice: object) -> dict[str, object]:
        """A copy of ``request`` with its ``tool_choice_field`` set to ``choice``."""
        return request_parts.with_setting(request, self.tool_choice_field, choice)

    def tool_choice_none(self) -> object:
        """OpenAI's ``"none"``: call no tool."""
        return "none"

    def says_no_tool(self, tool_choice: object) -> bool:
        """OpenAI's ``"none"``."""
        return tool_choice == "none"

    def continues_server_state(self, request: request_parts.Request) -> bool:
        """Never: the API holds no conversation state."""
        del request  # nothing in it names server state
        return False

    def is_model_output(self, item: object) -> bool:
        """An ``assistant`` message."""
        return field(item, "role") == "assistant"

    def sdk_request(self, body: dict[str, object], model: str | None) -> dict[str, object]:
        """``body`` itself: the SDK call's keyword arguments are the wire body's fields."""
        del model  # the body (or, on Converse, the URL) names the model
        return body

    def body_writes(
        self, body: request_parts.Request, request: request_parts.Request, sent: request_parts.Request
    ) -> dict[str, object]:
        """Each field of ``sent`` that is not the very object ``body`` holds (``changed_fields``)."""
        del request  # the body is the request
        return request_parts.changed_fields(body, sent)
