"""otel-toolturn for LiteLLM: its SDK calls and its proxy go out repaired and recorded.

Importing this module imports LiteLLM. Public here:

- ``LOGGER``: the one ``ToolTurnLogger`` (a LiteLLM ``CustomLogger``) of the process. It acts
  while ``otel_toolturn.init()`` (with the ``litellm`` provider, on by default) is live and passes
  every call through otherwise. Which LiteLLM hook serves which path: ``_litellm_logger``.
- ``register()`` / ``unregister()``: add it to (remove it from) ``litellm.callbacks`` and wrap
  (restore) LiteLLM's entry points (``_litellm_entries.ENTRIES``), so each call's span ends with
  the call: when it returns or raises, or when its stream ends, and the body builders whose bodies
  LiteLLM serialises before its hooks see them (``_litellm_entries.BUILDERS``: Bedrock Converse),
  so those bodies are decided as they are built; ``init()`` and ``shutdown()`` call them, so an
  application needs neither. A function taken from LiteLLM before ``register()``
  (``from litellm import acompletion`` ahead of ``init()``) keeps LiteLLM's own: its span ends on
  LiteLLM's success or failure callback instead.

For the LiteLLM proxy, name ``otel_toolturn.integrations.litellm_proxy.callback`` under
``litellm_settings: callbacks:`` in its ``config.yaml`` (see that module).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Final

import litellm
import wrapt

from otel_toolturn.integrations._litellm_entries import BUILDERS, ENTRIES, builder_wrapper, wrapper_for
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


_ORIGINALS: Final[list[tuple[object, str, object]]] = []
"""What ``register`` replaced: (module or class, name, LiteLLM's own function), restored by ``unregister``."""


def _wrap(module: str, owner: str | None, name: str, wrapper: Callable[..., object]) -> None:
    """Put ``wrapper`` around ``name`` of ``module`` (or of its class ``owner``), noted for ``unregister``.

    A module that does not import, or a name it does not define, is left alone.
    """
    try:
        found: object = importlib.import_module(module)
        if owner is not None:
            found = getattr(found, owner)
        original = vars(found)[name]
    except (ImportError, AttributeError, KeyError):
        return
    setattr(found, name, wrapt.FunctionWrapper(original, wrapper))
    _ORIGINALS.append((found, name, original))


def _wrap_entries() -> None:
    """Wrap each entry point of ``ENTRIES`` and builder of ``BUILDERS`` (once: a second call finds them wrapped)."""
    if _ORIGINALS:
        return
    for entry in ENTRIES:
        _wrap(entry.module, None, entry.name, wrapper_for(entry, LOGGER.calls))
    for builder in BUILDERS:
        _wrap(builder.module, builder.owner, builder.name, builder_wrapper(builder, LOGGER.built))


def register() -> None:
    """Add ``LOGGER`` to ``litellm.callbacks`` (once; LiteLLM copies it to its other lists); wrap the entry points."""
    if not any(callback is LOGGER for callback in litellm.callbacks):
        litellm.callbacks.append(LOGGER)
    _wrap_entries()


def unregister() -> None:
    """Remove ``LOGGER`` from every LiteLLM callback list, restore the entry points, end the records held open."""
    for name in _LISTS:
        found = getattr(litellm, name, None)
        if isinstance(found, list):
            found[:] = [callback for callback in found if callback is not LOGGER]
    while _ORIGINALS:
        module, name, original = _ORIGINALS.pop()
        setattr(module, name, original)
    LOGGER.calls.close_all()
