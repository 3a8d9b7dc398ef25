"""Provider words as we repeat them, and the response-model rule.

The echo discipline: a word the provider sent (a stop reason, a model name, an event type) is
repeated only when it has the shape of a provider word — 1 to 128 characters of ASCII letters,
digits and ``. _ - : / @ +``, beginning with a letter or digit. Bytes outside that shape are
dropped, never rewritten: ``echo_folded_word`` keeps the fact that a word arrived as ``?``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, TypeGuard

_ECHO_SHAPE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}")
_SNAPSHOT_SUFFIX: Final = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})")
_ALIAS_SUFFIX: Final = "-latest"


def is_provider_echo_shape(word: object) -> TypeGuard[str]:
    """Whether ``word`` is a string in the provider echo shape (see the module docstring)."""
    return type(word) is str and _ECHO_SHAPE.fullmatch(word) is not None


def echo_folded_word(raw: object) -> str:
    r"""Return a provider word as a report carries it: the word in the echo shape, else ``?``.

    >>> echo_folded_word("end_turn"), echo_folded_word("end turn\\n"), echo_folded_word(None)
    ('end_turn', '?', '?')
    """
    return raw if is_provider_echo_shape(raw) else "?"


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSeat:
    """What a response has said so far about the model that answered.

    ``reported``: the last model name in the echo shape; ``substituted``: that name when it is
    not the requested model (``None``: no substitution); ``echo_dropped``: whether a name outside
    the echo shape arrived (counted once per response).
    """

    reported: str | None = None
    substituted: str | None = None
    echo_dropped: bool = False


EMPTY_SEAT: Final = ModelSeat()


def names_requested_model(reported: str, requested: str) -> bool:
    """Whether ``reported`` names the requested model: the same id, or a dated snapshot of it.

    Providers answer an alias with the dated snapshot it resolves to (``gpt-4o-mini`` →
    ``gpt-4o-mini-2024-07-18``; ``gpt-4`` → ``gpt-4-0613``; ``claude-haiku-4-5`` →
    ``claude-haiku-4-5-20251001``; ``claude-3-5-haiku-latest`` → ``claude-3-5-haiku-20241022``).
    That is the requested model, not a substitution: the snapshot suffix is ``-YYYY-MM-DD``,
    ``-YYYYMMDD`` or ``-MMDD`` after the requested id (a trailing ``-latest`` removed). Nothing
    else names it.
    """
    if reported == requested:
        return True
    stem = requested.removesuffix(_ALIAS_SUFFIX)
    return reported.startswith(stem) and _SNAPSHOT_SUFFIX.fullmatch(reported, len(stem)) is not None


def note_response_model(seat: ModelSeat, reported: object, requested: str | None) -> ModelSeat:
    """Fold one frame's model name into the seat; returns the new seat (``seat`` itself when unchanged).

    The rule, one for the three lanes (``message_start.message.model`` / ``chunk.model`` /
    ``response.model``):

    - the LAST frame that names a model decides;
    - naming nothing (``None``, a non-string, or ``""``) is not an update;
    - a name outside the echo shape is dropped — not an update — and counted once per response;
    - naming the requested model (``names_requested_model``) retracts an earlier substitution;
    - any other name is a substitution; with no requested model nothing is a substitution.
    """
    if type(reported) is not str or not reported:
        return seat
    if reported == seat.reported:
        return seat
    if _ECHO_SHAPE.fullmatch(reported) is None:
        if seat.echo_dropped:
            return seat
        return ModelSeat(reported=seat.reported, substituted=seat.substituted, echo_dropped=True)
    substituted = None if requested is None or names_requested_model(reported, requested) else reported
    return ModelSeat(reported=reported, substituted=substituted, echo_dropped=seat.echo_dropped)
