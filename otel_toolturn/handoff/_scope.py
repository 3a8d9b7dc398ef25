"""Scope keys: which messages a handoff's dispatch pushed, so closing it removes exactly those.

While a handoff's body runs on the caller's thread, the system messages it pushes (its persona,
its instructions) belong to that dispatch and expire with it. Each carries its dispatch's scope
key in a library-only field, ``SCOPE_FIELD`` (``"handoff_scope"``), on the message itself:

- the tag rides with the message through every list operation that keeps the message object
  (compaction that shifts every index, checkpoints that serialise the dict), so stripping is
  keyed on the tag, never on a recorded position; a message compaction summarised away is simply
  not there to remove;
- the field is the same in every lane, because it is not wire: it is one of the fields the
  request composition's strip rule removes before a request is sent (``compose.FRAMEWORK_FIELDS``),
  and neither the law nor ``validate`` reads it;
- only a dict message can carry it (the SDKs' typed objects cannot hold an unknown field).
  Anthropic ``messages`` has no system role: a dispatch's instructions there are a user-role
  message, tagged the same way. Stripping removes every tagged message, whatever its role.

The key is ``<tool>:<call id>:<depth>``. The depth is the number of dispatches open when this one
enters (``HandoffScopes``): a provider that sends no call ids leaves a handoff nested inside
itself with the same name and the same empty id, and the depth keeps the two apart. Computed
before entering and again after leaving, the key is the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from otel_toolturn._errors import HandoffError, ToolTurnInputError
from otel_toolturn._view import field

SCOPE_FIELD: Final = "handoff_scope"
"""The library-only message field holding the scope key of the dispatch that pushed the message."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HandoffScopes:
    """The dispatches open on a thread, outermost first. A value: ``enter`` and ``exit`` return new ones.

    >>> outer = HandoffScopes().enter("explorer::0")
    >>> outer.depth, outer.current
    (1, 'explorer::0')
    >>> outer.exit().depth
    0
    """

    open: tuple[str, ...] = ()

    @property
    def depth(self) -> int:
        """How many dispatches are open: the nesting a new dispatch's key records."""
        return len(self.open)

    @property
    def current(self) -> str | None:
        """The innermost open dispatch's key, which tags every message pushed now; ``None`` when none is open."""
        return self.open[-1] if self.open else None

    def enter(self, scope_key: str) -> HandoffScopes:
        """The scopes with ``scope_key`` opened inside the current ones."""
        return HandoffScopes(open=(*self.open, scope_key))

    def exit(self) -> HandoffScopes:
        """The scopes with the innermost dispatch closed; closing with none open is a ``HandoffError``."""
        if not self.open:
            raise HandoffError("cannot leave a handoff scope: no handoff scope is open")
        return HandoffScopes(open=self.open[:-1])


def _require_list(messages: object) -> None:
    """A message list: a string or a non-sequence is a ``ToolTurnInputError`` naming what arrived."""
    if isinstance(messages, str) or not isinstance(messages, Sequence):
        raise ToolTurnInputError(f"expected a list of messages, got {type(messages).__name__!r}")


def handoff_scope_key(scopes: HandoffScopes, tool_name: str, tool_call_id: str) -> str:
    """The key one dispatch tags its body's system messages with: ``<tool>:<call id>:<depth>``.

    >>> handoff_scope_key(HandoffScopes(), "explorer", "c1")
    'explorer:c1:0'
    """
    return f"{tool_name}:{tool_call_id}:{scopes.depth}"


def scope_of(message: object) -> str | None:
    """The scope key a message is tagged with, or ``None`` when it belongs to no dispatch."""
    value = field(message, SCOPE_FIELD)
    return value if isinstance(value, str) else None


def tag_scoped(message: object, scope_key: str) -> dict[str, object]:
    """A copy of a dict ``message`` tagged with ``scope_key``; the message itself is not changed.

    Only dict messages can carry the library-only field: anything else is a ``HandoffError``
    naming its type.
    """
    if not isinstance(message, Mapping):
        raise HandoffError(
            f"cannot tag a message of type {type(message).__name__!r} with a handoff scope; "
            "expected a dict message (typed SDK objects cannot carry a library-only field)"
        )
    return {**message, SCOPE_FIELD: scope_key}


def push_scoped(messages: Sequence[object], message: object, *, scopes: HandoffScopes) -> list[object]:
    """A new list: ``messages`` followed by ``message``, tagged with the innermost open dispatch (if any).

    This is how a body pushes a system message while its dispatch is open; with no dispatch open
    the message is pushed as it is.
    """
    _require_list(messages)
    current = scopes.current
    return [*messages, message if current is None else tag_scoped(message, current)]


def strip_handoff_system_messages(messages: Sequence[object], scope_key: str) -> list[object]:
    """A new list of every message except those tagged with ``scope_key``; kept messages are the same objects.

    Other dispatches' messages and untagged messages stay, in order. Nothing tagged with the key
    (a dispatch whose messages compaction summarised away) ⇒ an equal list.
    """
    _require_list(messages)
    return [message for message in messages if scope_of(message) != scope_key]
