"""The exceptions otel-toolturn raises, one tree.

::

    ToolTurnError                 base of everything raised on purpose
    ├── ToolTurnInputError        the caller handed over something the law cannot read
    ├── UnknownLaneError          a lane name outside ``LANES`` (or a dialect outside ``DIALECTS`` or its lane)
    │   └── UnsupportedLaneError  a lane of ``LANES`` that part of the library does not speak yet
    └── HandoffError              a handoff operation's precondition does not hold

Messages say what arrived and what was expected.
"""

from __future__ import annotations


class ToolTurnError(Exception):
    """Base class of every error otel-toolturn raises on purpose."""


class ToolTurnInputError(ToolTurnError, ValueError):
    """An input the law cannot read: names where it is and what was expected.

    ``position`` is the index of the offending item in the list handed over (or ``None`` for
    the container itself); the message then starts with it (``item 3: ...``), ahead of ``detail``.
    """

    def __init__(self, message: str, *, position: int | None = None) -> None:
        super().__init__(message if position is None else f"item {position}: {message}")
        self.position = position
        self.detail = message
        """What is wrong, without where."""

    def moved(self, by: int) -> ToolTurnInputError:
        """The same error in a longer list, where the list it was raised on starts ``by`` items in."""
        if self.position is None or not by:
            return self
        return ToolTurnInputError(self.detail, position=self.position + by)


class UnknownLaneError(ToolTurnError, ValueError):
    """A lane name outside the closed set, or a dialect outside its set or asked of a lane it is not of."""


class UnsupportedLaneError(UnknownLaneError):
    """A lane of ``LANES`` that the part asked does not speak yet (it names the lanes it does speak).

    Every part speaks every lane but one: ``compose``'s tool choice has none for ``bedrock.converse``
    (Converse has no tool choice that calls no tool).
    """


class HandoffError(ToolTurnError):
    """A handoff operation was asked for something its thread does not hold."""
