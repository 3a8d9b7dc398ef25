"""Which lane the provider body LiteLLM is about to send speaks, from what its logging hook reads.

Pure: no LiteLLM, no OpenTelemetry. LiteLLM names each call by its ``call_type`` and its
``custom_llm_provider``; the body it hands its pre-call hook is already the provider's wire body.
What each provider's bodies may speak is LiteLLM's table (``_litellm_entries.ROUTES``: a ``Route``
per provider); the rule that reads a body with it:

- a chat call (``completion``/``acompletion``) asks the route's ``chat`` lanes, a Responses call
  (``responses``/``aresponses``) its ``responses`` lanes, in order: the first lane whose transcript
  the body holds (``lanes.wire_transcript``: a list at the lane's transcript field, or a string where
  the lane's body takes one) is the body's lane;
- the Anthropic-native messages route (``anthropic_messages``) is read earlier, by its own hook,
  never here (its body is serialised before the pre-call hook sees it);
- a provider with no route, another call type (embeddings, images), or a body holding no transcript
  of the route's lanes: ``None``, and the request goes out untouched and unrecorded.

A body that is the lane's own but not its SDK's call (Gemini's REST body) is read as that call, and the
decision written back, by the lane's adapter (``sdk_request`` and ``body_writes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from otel_toolturn._vocab import Lane
from otel_toolturn.lanes import wire_transcript

if TYPE_CHECKING:  # types only: importing the instrumentation would load OpenTelemetry
    from otel_toolturn.instrument.calls import Provider, ProviderName

CHAT_CALLS: Final = frozenset({"completion", "acompletion"})
RESPONSES_CALLS: Final = frozenset({"responses", "aresponses"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Route:
    """What one LiteLLM provider's bodies speak, and how its calls are recorded."""

    chat: tuple[Lane, ...]
    """The lanes a chat call's body may be in, asked in order."""
    responses: tuple[Lane, ...]
    """The lanes a Responses call's body may be in, asked in order (LiteLLM bridges some to chat)."""
    provider: Provider
    """The wire's family (``gen_ai.provider.name`` by default: ``CallRecord``)."""
    provider_name: ProviderName | None = None
    """The call's ``gen_ai.provider.name`` where the route, not the wire's family, names it."""


def lane_of(call_type: object, route: Route | None, body: Mapping[str, object]) -> Lane | None:
    """The lane ``body`` speaks, or ``None`` when it is none of ours (see the module docstring)."""
    if route is None:
        return None
    if call_type in CHAT_CALLS:
        lanes = route.chat
    elif call_type in RESPONSES_CALLS:
        lanes = route.responses
    else:
        return None
    return next((lane for lane in lanes if wire_transcript(body, lane) is not None), None)


def bare_model(model: object, provider: str) -> str | None:
    """The model a request names, without LiteLLM's ``<provider>/`` routing prefix."""
    if not isinstance(model, str) or not model:
        return None
    prefix = f"{provider}/"
    return model[len(prefix) :] if model.startswith(prefix) else model
