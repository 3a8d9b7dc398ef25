"""How the Gemini lane reads one content or part, in any of its three spellings.

REST camelCase dicts (``functionCall``, ``functionResponse``, ``thoughtSignature``), the SDK's
snake_case dicts and the SDK's typed ``Content`` / ``Part`` objects (snake_case attributes): each
accessor reads all three, so the lane (``lanes.gemini``) and its matcher (``_gemini_matching``) read a
part one way.

Writing: a part the lane writes into a content is in that content's kind (``held_by``), since
google-genai sends a dict part inside a typed ``Content`` as ``{}``. Two conversions, one per direction:
``as_typed`` (a dict part, either spelling, read by the content's own model) and ``as_dict`` (a typed
part as the SDK dumps it, in the dict content's spelling).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._view import field
from otel_toolturn.lanes._common import describe, is_list, role_of


def parts_of(content: object, position: int) -> Sequence[object]:
    """A content's parts (none when absent); parts that are no list are a ``ToolTurnInputError``."""
    parts = content.get("parts") if type(content) is dict else field(content, "parts")
    if type(parts) is list:
        return parts
    if parts is None:
        return ()
    if not is_list(parts):
        raise ToolTurnInputError(f"'parts' must be a list of parts, got {describe(parts)}", position=position)
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
    name = data.get("name") if type(data) is dict else field(data, "name")
    return name if isinstance(name, str) and name else None


def id_of(data: object) -> str | None:
    """The call's or response's ``id`` (``None``: absent or empty)."""
    value = data.get("id") if type(data) is dict else field(data, "id")
    return value if isinstance(value, str) and value else None


def _typed(part: object) -> bool:
    """Whether the part is a typed SDK object (a pydantic model: it has ``model_dump``)."""
    return callable(getattr(part, "model_dump", None))


def _snake_spelled(parts: Sequence[object]) -> bool:
    """Whether the dict parts among ``parts`` are in the SDK's snake_case (a top-level key with ``_``), not REST's."""
    return any("_" in key for part in parts if isinstance(part, Mapping) for key in part)


def as_dict(part: object, *, snake: bool, position: int | None) -> object:
    """A typed part as a dict part: REST camelCase, or snake_case when ``snake``; any other part as it is.

    The dict is the SDK's own JSON dump of the part, ``None`` fields left out (a thought signature as its
    base64url text, as REST carries it). A part the SDK cannot dump as JSON, or dumps with a serialisation
    warning (a field holding a value of another type), is a ``ToolTurnInputError``.
    """
    dump = getattr(part, "model_dump", None)
    if not callable(dump):
        return part
    try:
        return dump(mode="json", by_alias=not snake, exclude_none=True, warnings="error")
    except (TypeError, ValueError) as error:
        raise ToolTurnInputError(
            f"a {type(part).__name__} to write into a dict content cannot be dumped as JSON: {error}",
            position=position,
        ) from error


def as_typed(part: object, content: object, position: int | None) -> object:
    """A part as a part of the typed ``content``, read by the content's own model (its ``parts`` validation).

    A typed part is returned as it is, and so is any part when the content is no pydantic model. A part
    the content's model refuses is a ``ToolTurnInputError``.
    """
    validate = getattr(type(content), "model_validate", None)
    if _typed(part) or not callable(validate):
        return part
    try:
        read = field(validate({"parts": [part]}), "parts")
    except (TypeError, ValueError) as error:
        raise ToolTurnInputError(
            f"part {describe(part)} cannot be written into a {type(content).__name__}: {error}",
            position=position,
        ) from error
    return read[0] if is_list(read) and len(read) == 1 else part


def held_by(content: object, parts: Sequence[object], position: int | None) -> list[object]:
    """``parts`` as ``content`` holds them: each part that does not stand in it already, in its kind.

    A dict content holds dict parts (``as_dict``, in the spelling of its dict parts: REST camelCase unless
    they are snake_case); a typed content holds typed parts (``as_typed``). A part standing in ``content``
    is kept as it is, even of the other kind (a signed part is never changed). ``position``: the content's
    index in the list handed over, for errors (``None``: a content the lane makes).
    """
    stood = field(content, "parts")
    stood = stood if is_list(stood) else ()
    kept = {id(part) for part in stood}
    if isinstance(content, Mapping):
        snake = _snake_spelled([*stood, *parts])
        return [part if id(part) in kept else as_dict(part, snake=snake, position=position) for part in parts]
    return [part if id(part) in kept else as_typed(part, content, position) for part in parts]
