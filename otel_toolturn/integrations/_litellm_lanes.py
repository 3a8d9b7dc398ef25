"""Which lane the provider body LiteLLM is about to send speaks, from what its logging hook reads.

Pure: no LiteLLM, no OpenTelemetry. LiteLLM names each call by its ``call_type`` and its
``custom_llm_provider``; the body it hands its pre-call hook is already the provider's wire body.
The rule:

- a body with a ``messages`` list, from a chat call (``completion``/``acompletion``, or a
  Responses call LiteLLM bridges to chat): ``anthropic.messages`` for the ``anthropic`` provider,
  ``openai.chat_completions`` for an OpenAI-compatible one (``CHAT_PROVIDERS`` and the names the
  caller adds, LiteLLM's own list of OpenAI-compatible providers);
- a body with an ``input`` (list or string) from a Responses call (``responses``/``aresponses``)
  of an OpenAI-compatible provider: ``openai.responses``;
- the Anthropic-native messages route (``anthropic_messages``) is read earlier, by its own hook,
  never here (its body is serialised before the pre-call hook sees it);
- anything else (Bedrock, Vertex, Gemini, Cohere... whose wire is none of the lanes; embeddings,
  images): ``None``, and the request goes out untouched and unrecorded.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Final

from otel_toolturn._vocab import Lane

CHAT_CALLS: Final = frozenset({"completion", "acompletion"})
RESPONSES_CALLS: Final = frozenset({"responses", "aresponses"})
MESSAGES_CALLS: Final = frozenset({"anthropic_messages", "aanthropic_messages"})
"""The Anthropic-native messages route: read by its pre-request hook, not by ``lane_of``."""

CHAT_PROVIDERS: Final = frozenset({"openai", "azure", "custom_openai", "hosted_vllm", "litellm_proxy"})
"""LiteLLM providers whose chat and Responses wire is OpenAI's (beside LiteLLM's own list)."""


def lane_of(
    call_type: object,
    provider: object,
    body: Mapping[str, object],
    *,
    openai_compatible: Collection[str] = (),
) -> Lane | None:
    """The lane ``body`` speaks, or ``None`` when it is none of ours (see the module docstring)."""
    if not isinstance(provider, str) or call_type in MESSAGES_CALLS:
        return None
    openai_wire = provider in CHAT_PROVIDERS or provider in openai_compatible
    if call_type in RESPONSES_CALLS and openai_wire and isinstance(body.get("input"), (list, str)):
        return "openai.responses"
    if (call_type in CHAT_CALLS or call_type in RESPONSES_CALLS) and isinstance(body.get("messages"), list):
        if provider == "anthropic":
            return "anthropic.messages"
        if openai_wire:
            return "openai.chat_completions"
    return None


def bare_model(model: object, provider: str) -> str | None:
    """The model a request names, without LiteLLM's ``<provider>/`` routing prefix."""
    if not isinstance(model, str) or not model:
        return None
    prefix = f"{provider}/"
    return model[len(prefix) :] if model.startswith(prefix) else model
