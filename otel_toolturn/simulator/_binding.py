"""Signed thinking bound to its prefix, as Anthropic's preserved-thinking models check it.

Signing. When a ``/v1/messages`` request enables thinking (``thinking.type`` ``enabled`` or
``adaptive``), the reply opens with a ``thinking`` block whose ``signature`` is
``sim1.`` + ``digest(prefix)`` (64 hex digits; see ``_canonical``), where the prefix is
``{"system": …, "tools": …, "messages": […], "content": […]}``: the request's top-level ``system``
and ``tools`` (``null`` when absent), the messages the model saw (the request's, less any blocks
dropped below), and the blocks ahead of the thinking block in its own message (none: the reply's
thinking block comes first).

Checking, on every ``/v1/messages`` request, after the tool-turn rules: each ``thinking`` block of
an assistant message, at ``messages[N].content[M]``, whose signature starts with ``sim1.`` is checked
against the digest of ``system``, ``tools``, ``messages[:N]`` and ``content[:M]`` as they are in this
request. The first block that fails, and every later ``sim1.`` block, are invalid:

- by default the request is refused (HTTP 400) naming the first invalid block, in the provider's
  words (``refusal``);
- with ``thinking.block_binding.prefix_mismatch_behavior`` ``"drop_block"`` the invalid blocks are
  left out of what the model sees, and the reply lists each, in request order, in
  ``input_transformations``: ``{"type": "thinking_dropped", "path": "messages.N.content.M",
  "reason": "prefix_binding_mismatch"}``.

Not checked: signatures in any other form (a test's ``"sig"``, a real provider's signature),
``redacted_thinking`` blocks, the thinking text itself. Not modelled: the model binding
(``model_binding_mismatch``), the beta header the setting needs on the real API (the simulator
reads the setting without it). A client that removes the dropped blocks from its history keeps
the thinking produced after them valid: that thinking was signed over the messages without them.

Example::

    review = review_binding(request)
    if review.refusal is not None:
        ...  # answer HTTP 400 with review.refusal
    prompt = review.request  # what the model sees; review.dropped lists the input_transformations
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from otel_toolturn.simulator._canonical import digest

SIGNATURE_PREFIX: Final = "sim1."
"""How every signature the simulator makes starts; only these are checked."""

DROP_BLOCK: Final = "drop_block"
"""The ``thinking.block_binding.prefix_mismatch_behavior`` value that drops instead of refusing."""


@dataclass(frozen=True, kw_only=True, slots=True)
class BindingReview:
    """The prefix check of one request.

    ``request`` is what the model sees (the request itself when nothing was dropped); ``invalid``
    the paths ``messages.N.content.M`` of the invalid blocks, in request order; ``refusal`` the
    400 message when they refuse the request (``None``: served); ``dropped`` the
    ``input_transformations`` entries when they were dropped instead.
    """

    request: Mapping[str, object]
    invalid: tuple[str, ...] = ()
    refusal: str | None = None
    dropped: tuple[dict[str, object], ...] = ()


def thinking_enabled(request: Mapping[str, object]) -> bool:
    """Whether the request turns thinking on (``thinking.type`` ``enabled`` or ``adaptive``)."""
    thinking = request.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")


def sign(request: Mapping[str, object], messages: Sequence[object], ahead: Sequence[object] = ()) -> str:
    """The signature of a thinking block produced after ``messages`` and ``ahead`` in ``request``."""
    prefix = {
        "system": request.get("system"),
        "tools": request.get("tools"),
        "messages": list(messages),
        "content": list(ahead),
    }
    return SIGNATURE_PREFIX + digest(prefix)


def review_binding(request: Mapping[str, object]) -> BindingReview:
    """Check every ``sim1.`` thinking block of ``request`` against its prefix (module docstring)."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        return BindingReview(request=request)
    invalid: list[tuple[int, int]] = []
    for n, message in enumerate(messages):
        content = message.get("content") if _is_assistant(message) else None
        if not isinstance(content, list):
            continue
        for m, block in enumerate(content):
            signature = _simulator_signature(block)
            if signature is None:
                continue
            if invalid or signature != sign(request, messages[:n], content[:m]):
                invalid.append((n, m))
    if not invalid:
        return BindingReview(request=request)
    paths = tuple(f"messages.{n}.content.{m}" for n, m in invalid)
    if not _drops(request):
        return BindingReview(request=request, invalid=paths, refusal=refusal_message(paths[0]))
    dropped = tuple(_dropped_entry(path) for path in paths)
    return BindingReview(request=_without(request, messages, invalid), invalid=paths, dropped=dropped)


def refusal_message(path: str) -> str:
    """The provider's 400 message for the invalid block at ``path``."""
    return (
        f"{path}: Invalid `signature` in `thinking` block. The block is bound to a different conversation. "
        'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
    )


def _dropped_entry(path: str) -> dict[str, object]:
    """The ``input_transformations`` entry for a thinking block dropped at ``path``."""
    return {"type": "thinking_dropped", "path": path, "reason": "prefix_binding_mismatch"}


def _is_assistant(message: object) -> bool:
    return isinstance(message, Mapping) and message.get("role") == "assistant"


def _simulator_signature(block: object) -> str | None:
    """The block's signature when it is a thinking block signed by the simulator, else ``None``."""
    if not isinstance(block, Mapping) or block.get("type") != "thinking":
        return None
    signature = block.get("signature")
    return signature if isinstance(signature, str) and signature.startswith(SIGNATURE_PREFIX) else None


def _drops(request: Mapping[str, object]) -> bool:
    """Whether the request asks for ``drop_block`` (``thinking.block_binding.prefix_mismatch_behavior``)."""
    thinking = request.get("thinking")
    binding = thinking.get("block_binding") if isinstance(thinking, Mapping) else None
    return isinstance(binding, Mapping) and binding.get("prefix_mismatch_behavior") == DROP_BLOCK


def _without(
    request: Mapping[str, object], messages: list[object], invalid: list[tuple[int, int]]
) -> Mapping[str, object]:
    """``request`` with the blocks at ``invalid`` left out (new lists; the request is not touched)."""
    by_message: dict[int, set[int]] = {}
    for n, m in invalid:
        by_message.setdefault(n, set()).add(m)
    kept: list[object] = []
    for n, message in enumerate(messages):
        drop = by_message.get(n)
        if drop is None or not isinstance(message, Mapping):
            kept.append(message)
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        kept.append({**message, "content": [b for m, b in enumerate(blocks) if m not in drop]})
    return {**request, "messages": kept}
