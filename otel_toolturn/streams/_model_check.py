"""Which model answered: the model names a response reports, and whether they name the requested one.

``note_response_model`` folds each model name a response reports into a ``ReportedModel``, one
rule for every lane (``message_start.message.model`` / ``chunk.model`` / ``response.model`` /
``modelVersion``):

- the LAST frame that names a model decides;
- naming nothing (``None``, a non-string, or ``""``) is not an update;
- a name outside the shape of a provider word (``is_provider_word``) is dropped — not an update —
  and counted once per response;
- naming the requested model (``names_requested_model``: the same id or a dated snapshot of it)
  retracts an earlier substitution;
- any other name is a substitution; with no requested model nothing is a substitution.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from otel_toolturn.streams._provider_word import is_provider_word

_SNAPSHOT_SUFFIX: Final = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|\d{3})")
_ALIAS_SUFFIX: Final = "-latest"
_BEDROCK_MODEL_ID: Final = re.compile(
    r"(?:arn:aws[\w-]*:bedrock:[^/]*/)?"  # an inference profile's or a foundation model's ARN
    r"(?:[a-z]{2,6}(?:-gov)?\.)?"  # a cross-region inference profile: us., eu., apac., us-gov., global.
    r"(?:ai21|amazon|anthropic|cohere|deepseek|meta|mistral|openai|qwen|stability|writer)\."  # the vendor
    r"(?P<model>.+?)"
    r"(?:-v\d+(?::\d+)?)?"  # the service's model version
)


@dataclass(frozen=True, kw_only=True, slots=True)
class ReportedModel:
    """What a response has said so far about the model that answered.

    ``name``: the last model name in the shape of a provider word (``None``: none yet);
    ``substituted``: that name when it does not name the requested model (``None``: no
    substitution); ``name_dropped``: whether a name outside that shape arrived.
    """

    name: str | None = None
    substituted: str | None = None
    name_dropped: bool = False


def names_requested_model(reported: str, requested: str) -> bool:
    """Whether ``reported`` names the requested model: the same id, or a dated snapshot of it.

    Providers answer an alias with the dated snapshot it resolves to (``gpt-4o-mini`` →
    ``gpt-4o-mini-2024-07-18``; ``gpt-4`` → ``gpt-4-0613``; ``claude-haiku-4-5`` →
    ``claude-haiku-4-5-20251001``; ``claude-3-5-haiku-latest`` → ``claude-3-5-haiku-20241022``;
    ``gemini-1.5-flash`` → ``gemini-1.5-flash-002``). That is the requested model, not a
    substitution: the snapshot suffix is ``-YYYY-MM-DD``, ``-YYYYMMDD``, ``-MMDD`` or a
    three-digit version ``-NNN`` after the requested id (a trailing ``-latest`` removed). A Bedrock
    model id names the vendor's model it wraps: ``anthropic.claude-3-5-haiku-20241022-v1:0``,
    ``us.anthropic.claude-…-v1:0`` and their ARNs are answered as ``claude-3-5-haiku-20241022``.
    Nothing else names it.
    """
    if reported == requested:
        return True
    bedrock = _BEDROCK_MODEL_ID.fullmatch(requested)
    stem = (bedrock.group("model") if bedrock else requested).removesuffix(_ALIAS_SUFFIX)
    if reported == stem:
        return True
    return reported.startswith(stem) and _SNAPSHOT_SUFFIX.fullmatch(reported, len(stem)) is not None


def note_response_model(model: ReportedModel, reported: object, requested: str | None) -> ReportedModel:
    """Fold one frame's model name into ``model`` by the module's rule; ``model`` itself when nothing changes."""
    if type(reported) is not str or not reported or reported == model.name:
        return model
    if not is_provider_word(reported):
        if model.name_dropped:
            return model
        return ReportedModel(name=model.name, substituted=model.substituted, name_dropped=True)
    substituted = None if requested is None or names_requested_model(reported, requested) else reported
    return ReportedModel(name=reported, substituted=substituted, name_dropped=model.name_dropped)
