"""How the Gemini lane reads one content or part, in any of its three spellings.

REST camelCase dicts (``functionCall``, ``functionResponse``, ``thoughtSignature``), the SDK's
snake_case dicts and the SDK's typed ``Content`` / ``Part`` objects (snake_case attributes): each
accessor reads all three, so the lane (``lanes.gemini``) and its matcher (``_gemini_matching``) read a
part one way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._view import field
from otel_toolturn.lanes._common import describe, is_list, role_of


def parts_of(content: object, position: int) -> Sequence[object]:
    """A content's parts (none when absent); parts that are no list are a ``ToolTurnInputError``."""
    parts = content.get("parts") if type(content) is dict else field(content, "parts")
    if parts is None:
        return ()
    if not is_list(parts):
        raise ToolTurnInputError(
            f"item {position}: 'parts' must be a list of parts, got {describe(parts)}", position=position
        )
    return parts


def content_role(content: object) -> object:
    """A content's role (``None`` when absent, which Gemini reads as user)."""
    return content.get("role") if type(content) is dict else role_of(content)


def call_of(part: object) -> object:
    """The part's function call data (``None``: the part is no call)."""
    if type(part) is dict or isinstance(part, Mapping):
        value = part.get("functionCall")
        return value if value is not None else part.get("function_call")
    return getattr(part, "function_call", None)


def response_of(part: object) -> object:
    """The part's function response data (``None``: the part is no response)."""
    if type(part) is dict or isinstance(part, Mapping):
        value = part.get("functionResponse")
        return value if value is not None else part.get("function_response")
    return getattr(part, "function_response", None)


def signed(part: object) -> bool:
    """Whether the part carries a thought signature."""
    if type(part) is dict or isinstance(part, Mapping):
        value = part.get("thoughtSignature") or part.get("thought_signature")
    else:
        value = getattr(part, "thought_signature", None)
    return isinstance(value, (str, bytes)) and bool(value)


def name_of(data: object) -> str | None:
    """The call's or response's ``name`` (``None``: absent or empty)."""
    name = field(data, "name")
    return name if isinstance(name, str) and name else None


def id_of(data: object) -> str | None:
    """The call's or response's ``id`` (``None``: absent or empty)."""
    value = field(data, "id")
    return value if isinstance(value, str) and value else None
