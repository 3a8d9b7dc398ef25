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
- a body with a ``contents`` list, from a chat or Responses call of a Gemini provider
  (``GEMINI_PROVIDERS``: the Developer API's ``gemini``, Vertex AI's ``vertex_ai`` and
  ``vertex_ai_beta``): ``gemini.generate_content`` (LiteLLM's REST ``generateContent`` body);
- the Anthropic-native messages route (``anthropic_messages``) is read earlier, by its own hook,
  never here (its body is serialised before the pre-call hook sees it);
- anything else (Bedrock, Cohere... whose wire is none of the lanes; embeddings, images):
  ``None``, and the request goes out untouched and unrecorded.

A Gemini body is REST: ``contents``, ``system_instruction``, ``tools`` and ``toolConfig`` at its top
level (either spelling of each). ``gemini_request`` reads it as the google-genai call the request
pipeline reads the lane in (``contents`` as they are, the rest under ``config``), and
``gemini_writes`` names what to write back into the body from that call as decided: the
``contents`` sent and, when tools are withheld, the tool config (under the key the body used).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from otel_toolturn._vocab import Lane

if TYPE_CHECKING:  # a type only: importing the instrumentation would load OpenTelemetry
    from otel_toolturn.instrument.calls import Provider, ProviderName

CHAT_CALLS: Final = frozenset({"completion", "acompletion"})
RESPONSES_CALLS: Final = frozenset({"responses", "aresponses"})
MESSAGES_CALLS: Final = frozenset({"anthropic_messages", "aanthropic_messages"})
"""The Anthropic-native messages route: read by its pre-request hook, not by ``lane_of``."""

CHAT_PROVIDERS: Final = frozenset({"openai", "azure", "custom_openai", "hosted_vllm", "litellm_proxy"})
"""LiteLLM providers whose chat and Responses wire is OpenAI's (beside LiteLLM's own list)."""

GEMINI_PROVIDERS: Final[Mapping[str, ProviderName]] = MappingProxyType(
    {"gemini": "gcp.gemini", "vertex_ai": "gcp.vertex_ai", "vertex_ai_beta": "gcp.vertex_ai"}
)
"""LiteLLM providers whose chat wire is Gemini's ``generateContent``, and their ``gen_ai.provider.name``."""

_TOOL_CONFIG_KEYS: Final = ("toolConfig", "tool_config")
_GEMINI_CONFIG: Final = (
    ("system_instruction", ("system_instruction", "systemInstruction")),
    ("tools", ("tools",)),
    ("tool_config", _TOOL_CONFIG_KEYS),
)
"""google-genai's ``config`` fields the request pipeline reads, and the REST body keys that carry each."""


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
    chat_call = call_type in CHAT_CALLS or call_type in RESPONSES_CALLS
    if chat_call and provider in GEMINI_PROVIDERS and isinstance(body.get("contents"), list):
        return "gemini.generate_content"
    if chat_call and isinstance(body.get("messages"), list):
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


def gemini_request(body: Mapping[str, object], model: str | None) -> dict[str, object]:
    """A Gemini REST body read as the google-genai call it stands for: ``model``, ``contents``, ``config``."""
    config: dict[str, object] = {}
    for name, keys in _GEMINI_CONFIG:
        value = next((body[key] for key in keys if body.get(key) is not None), None)
        if value is not None:
            config[name] = value
    request: dict[str, object] = {"contents": body.get("contents"), "config": config}
    if model is not None:
        request["model"] = model
    return request


def gemini_writes(
    body: Mapping[str, object], request: Mapping[str, object], sent: Mapping[str, object]
) -> dict[str, object]:
    """What to write into ``body`` so it sends ``sent`` (decided from ``request``, ``gemini_request``'s reading).

    The ``contents`` when they changed; the tool config when it changed, under the body's own key
    for it (``toolConfig`` when it had none). Nothing else is ever written.
    """
    writes: dict[str, object] = {}
    contents = sent.get("contents")
    if contents is not request.get("contents"):
        writes["contents"] = contents
    before, after = request.get("config"), sent.get("config")
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        tool_config = after.get("tool_config")
        if tool_config is not before.get("tool_config"):
            key = next((key for key in _TOOL_CONFIG_KEYS if key in body), _TOOL_CONFIG_KEYS[0])
            writes[key] = tool_config
    return writes


REST_BODY_LANE: Final[Lane] = "gemini.generate_content"
"""The lane whose LiteLLM body is REST, read as the google-genai call it stands for (``gemini_request``)."""

NATIVE_MESSAGES_LANE: Final[Lane] = "anthropic.messages"
"""The lane of the Anthropic-native messages route, read by its own pre-request hook."""

SHAPED_STREAM_LANES: Final[frozenset[Lane]] = frozenset({"openai.chat_completions", "openai.responses"})
"""Lanes whose streamed response LiteLLM assembles in the lane's own shape (checked on success)."""


def provider_of(lane: Lane) -> Provider:
    """The wire's provider family: every OpenAI-compatible wire is ``openai``, Gemini's ``google_genai``.

    It gives the call's ``gen_ai.provider.name``, except on Gemini, where LiteLLM's provider names
    the backend (``GEMINI_PROVIDERS``: ``gcp.gemini`` or ``gcp.vertex_ai``).
    """
    if lane == NATIVE_MESSAGES_LANE:
        return "anthropic"
    return "google_genai" if lane == REST_BODY_LANE else "openai"
