"""otel-toolturn for LiteLLM: its SDK calls and its proxy go out repaired and recorded.

Importing this module imports LiteLLM. Public here:

- ``LOGGER``: the one ``ToolTurnLogger`` (a LiteLLM ``CustomLogger``) of the process. It acts
  while ``otel_toolturn.init()`` (with the ``litellm`` provider, on by default) is live and passes
  every call through otherwise. Which LiteLLM hook serves which path: ``_litellm_logger``.
- ``register()`` / ``unregister()``: add it to (remove it from) ``litellm.callbacks``;
  ``init()`` and ``shutdown()`` call them, so an application needs neither.

For the LiteLLM proxy, name ``otel_toolturn.integrations.litellm_proxy.callback`` under
``litellm_settings: callbacks:`` in its ``config.yaml`` (see that module).
"""

from __future__ import annotations

from typing import Final

import litellm

from otel_toolturn.integrations._litellm_logger import ToolTurnLogger

__all__ = ["LOGGER", "ToolTurnLogger", "register", "unregister"]

LOGGER: Final = ToolTurnLogger()

_LISTS: Final = (
    "callbacks",
    "input_callback",
    "success_callback",
    "failure_callback",
    "_async_input_callback",
    "_async_success_callback",
    "_async_failure_callback",
)
"""LiteLLM's callback lists: ``callbacks`` is read by its hooks, the others are copies it makes from it."""


def register() -> None:
    """Add ``LOGGER`` to ``litellm.callbacks`` (once; LiteLLM copies it to its other lists on each call)."""
    if not any(callback is LOGGER for callback in litellm.callbacks):
        litellm.callbacks.append(LOGGER)


def unregister() -> None:
    """Remove ``LOGGER`` from every LiteLLM callback list and end the records it holds open."""
    for name in _LISTS:
        found = getattr(litellm, name, None)
        if isinstance(found, list):
            found[:] = [callback for callback in found if callback is not LOGGER]
    LOGGER.calls.close_all()
