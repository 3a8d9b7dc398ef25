"""The ``withhold_tools`` scope: calls made inside it go out with their tools withheld.

Role: carries the caller's reason through a ``ContextVar``, so threads and asyncio tasks each see
only their own scope. The request hook reads it (``current_scope``); the tools rule
(``otel_toolturn.compose.tools_withheld``) decides.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn.compose import TOOLS_WITHHELD, ToolsWithheld

_SCOPE: ContextVar[ToolsWithheld | None] = ContextVar("otel_toolturn_withhold_tools", default=None)


@contextmanager
def withhold_tools(reason: ToolsWithheld) -> Iterator[None]:
    """Within this scope, provider calls go out with tools withheld (tool choice none) for ``reason``.

    >>> with withhold_tools("wrap-up"):
    ...     pass
    """
    if reason not in TOOLS_WITHHELD:
        raise ToolTurnInputError(f"withhold_tools({reason!r}): expected one of {', '.join(TOOLS_WITHHELD)}")
    token = _SCOPE.set(reason)
    try:
        yield
    finally:
        _SCOPE.reset(token)


def current_scope() -> ToolsWithheld | None:
    """The reason of the innermost ``withhold_tools`` scope of this context, if any."""
    return _SCOPE.get()
