"""When LiteLLM is imported, register otel-toolturn's LiteLLM integration; remove it on ``uninstrument``.

Role: the one place the instrumentation reaches the LiteLLM integration, without importing LiteLLM (a
slow import that an application not using it never pays). ``ToolTurnInstrumentor`` calls
``watch_litellm`` when it instruments with the ``litellm`` provider: it registers a post-import hook
once per process, which fires at once when LiteLLM is already imported, else right after the
application imports it, and registers the integration (``otel_toolturn.integrations.litellm.register``:
the callback and the entry-point wrappers) while an instrumentation with the ``litellm`` provider is
live. ``unwatch_litellm`` removes them (``unregister``) and ends the open records.
The integration is imported by name, when LiteLLM is: it imports the instrumentation's public
``calls`` module, never this one, so the two import each other in no cycle.
A failure here is logged at debug and never reaches the application's import.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from types import ModuleType
from typing import Final

import wrapt

_log = logging.getLogger("otel_toolturn.instrument")

INTEGRATION: Final = "otel_toolturn.integrations.litellm"
"""The module that holds the callback (it imports LiteLLM)."""

_LOCK = threading.Lock()
_HOOKED = [False]


def _loaded(module: ModuleType) -> None:
    """LiteLLM was imported: register the callback (guarded; the application's import never fails here)."""
    del module
    try:
        importlib.import_module(INTEGRATION).register()
    except Exception:  # noqa: BLE001 - never breaks the application's import
        _log.debug("otel-toolturn: could not register the LiteLLM callback", exc_info=True)


def watch_litellm() -> None:
    """Register the callback now if LiteLLM is imported, and on its import otherwise (hooked once)."""
    with _LOCK:
        hooked, _HOOKED[0] = _HOOKED[0], True
    if not hooked:
        wrapt.register_post_import_hook(_loaded, "litellm")
    elif "litellm" in sys.modules:
        _loaded(sys.modules["litellm"])


def unwatch_litellm() -> None:
    """Remove the callback (if it was ever registered) and end the records it holds open."""
    integration = sys.modules.get(INTEGRATION)
    if integration is None:
        return
    try:
        integration.unregister()
    except Exception:  # noqa: BLE001 - uninstrumenting never raises
        _log.debug("otel-toolturn: could not remove the LiteLLM callback", exc_info=True)
