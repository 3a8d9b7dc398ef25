"""Mistral's dialect of the Chat Completions lane: only what Mistral's API enforces beyond Chat's rules.

Reading, writing and the law are the Chat lane's (``openai_chat``); the lane stays
``openai.chat_completions``. What differs:

- **Call ids.** A tool call id is exactly nine letters and digits (``^[a-zA-Z0-9]{9}$``). An id the API
  refuses (the ``call_…`` ids of a transcript that moves from OpenAI to Mistral, a framework's own) is
  renamed on its call and on every result answering it (``invalid_id``, not lossy) to nine letters and
  digits taken from a hash of the id: the same id, after the same messages, always gets the same new one,
  so a request the model answered is never rewritten by a later one.
- **Its words.** ``Tool call id was call_search but must be a-z, A-Z, 0-9, with a length of 9.`` for an
  id of a call or of a ``tool`` message, and ``Not the same number of function calls and responses`` for
  a turn whose calls and ``tool`` messages do not pair up (a call with no ``tool`` message, a second one
  for a call, a ``tool`` message answering no call before it).

>>> ADAPTER.fits_ids(["call_search"]), ADAPTER.fits_ids(["D681PevKs", "x7Yq0Lm2Z"])
(False, True)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Final

from otel_toolturn._view import TakenIds, ValidationStream, Violation, field
from otel_toolturn._vocab import Dialect
from otel_toolturn.lanes._common import is_list, role_of
from otel_toolturn.lanes.openai_chat import ChatValidation, OpenAIChat

_ID_LENGTH: Final = 9
_ID_CHARACTERS: Final = re.compile(r"[a-zA-Z0-9]*")
"""With ``_ID_LENGTH``, the call ids Mistral's API accepts (``^[a-zA-Z0-9]{9}$``), matched over a turn's ids joined."""
_DIGITS: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
COUNT_WORDS: Final = "Not the same number of function calls and responses"
"""Mistral's refusal of a turn whose calls and ``tool`` messages do not pair up."""
_COUNTED: Final = frozenset({"missing_tool_messages", "multiple_tool_messages", "orphan_tool_message"})
"""The Chat rules Mistral states as one count."""


def id_words(call_id: object) -> str:
    """Mistral's refusal of a call id outside its pattern."""
    return f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9."


def hashed_id(call_id: str, attempt: int = 0) -> str:
    """Nine letters and digits from the SHA-256 of ``call_id`` (``attempt`` > 0: of the id and the attempt).

    >>> hashed_id("call_search") == hashed_id("call_search") != hashed_id("call_search", 1)
    True
    """
    text = call_id if attempt == 0 else f"{call_id}\x00{attempt}"
    number = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "big")
    digits = []
    for _ in range(9):
        number, digit = divmod(number, len(_DIGITS))
        digits.append(_DIGITS[digit])
    return "".join(digits)


class MistralChat(OpenAIChat):
    """The Chat Completions adapter with Mistral's id pattern and words (see the module docstring)."""

    dialect: Dialect | None = "mistral"

    def fits_ids(self, call_ids: Sequence[str]) -> bool:
        """Whether every id is exactly nine letters and digits."""
        return all(len(call_id) == _ID_LENGTH for call_id in call_ids) and (
            _ID_CHARACTERS.fullmatch("".join(call_ids)) is not None
        )

    def derive_id(self, call_id: str, taken: TakenIds) -> str:
        """``hashed_id`` of the id, the first attempt not in ``taken``."""
        attempt = 0
        while True:
            candidate = hashed_id(call_id, attempt)
            if candidate not in taken:
                return candidate
            attempt += 1

    def validate_stream(self, *, chained: bool = False) -> ValidationStream:
        """Chat's tool-turn rules in Mistral's words, and Mistral's id pattern, fed one segment at a time."""
        del chained  # no server-held state continues this lane's transcript
        return MistralValidation(self.fits_ids)


class MistralValidation(ChatValidation):
    """Chat's rules in Mistral's words and its id pattern over a transcript fed in segments.

    Beyond Chat's state it holds only the id violations found so far: each is judged within its message.
    """

    __slots__ = ("_fits", "_invalid")

    def __init__(self, fits: Callable[[Sequence[str]], bool]) -> None:
        super().__init__()
        self._fits = fits
        """The adapter's ``fits_ids``: whether Mistral accepts the ids."""
        self._invalid: list[Violation] = []
        """The ids outside the pattern so far, in order of position (a message's ids in order)."""

    def feed(self, messages: Sequence[object], *, last: bool) -> None:
        """Judge the next segment by Chat's rules, then each id it carries by Mistral's pattern."""
        start = self.fed
        super().feed(messages, last=last)
        invalid, fits = self._invalid, self._fits
        for position, message in enumerate(messages, start):
            role = role_of(message)
            if role == "tool":
                ids = [field(message, "tool_call_id")]
            elif role == "assistant":
                calls = field(message, "tool_calls")
                ids = [field(call, "id") for call in (calls if is_list(calls) else ())]
            else:
                continue
            invalid.extend(
                Violation(position=position, rule="invalid_tool_call_id", message=id_words(call_id))
                for call_id in ids
                if isinstance(call_id, str) and not fits((call_id,))
            )

    def close(self) -> list[Violation]:
        """Chat's violations in Mistral's words and the ids outside its pattern, in order of position."""
        violations = [
            Violation(position=v.position, rule="function_call_count", message=COUNT_WORDS) if v.rule in _COUNTED else v
            for v in super().close()
            if v.rule != "tool_call_id_too_long"  # the pattern's length says it
        ]
        violations.extend(self._invalid)
        violations.sort(key=lambda violation: violation.position)
        return violations


ADAPTER: Final[MistralChat] = MistralChat()
