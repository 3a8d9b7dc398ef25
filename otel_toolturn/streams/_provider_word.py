"""Provider words as a report repeats them: a stop reason, a model name, an event type.

A word the provider sent is repeated only when it has the shape of a provider word: 1 to 128
characters of ASCII letters, digits and ``. _ - : / @ +``, beginning with a letter or digit.
Anything else is never rewritten: ``provider_word`` keeps only the fact that a word arrived, as
``?``. Reports, events and metric labels therefore never carry free provider text.
"""

from __future__ import annotations

import re
from typing import Final, TypeGuard

_SHAPE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}")
UNREADABLE_WORD: Final = "?"
"""What a report carries in place of a word outside the shape."""


def is_provider_word(word: object) -> TypeGuard[str]:
    """Whether ``word`` is a string in the shape of a provider word (see the module docstring)."""
    return type(word) is str and _SHAPE.fullmatch(word) is not None


def provider_word(raw: object) -> str:
    r"""Return a provider word as a report carries it: the word in its shape, else ``?``.

    >>> provider_word("end_turn"), provider_word("end turn\\n"), provider_word(None)
    ('end_turn', '?', '?')
    """
    return raw if is_provider_word(raw) else UNREADABLE_WORD
