"""The LiteLLM proxy's entry point: importing this module initialises otel-toolturn and names its callback.

Name ``callback`` in the proxy's ``config.yaml``::

    litellm_settings:
      callbacks: otel_toolturn.integrations.litellm_proxy.callback

The proxy imports this module when it loads its config; the import calls ``otel_toolturn.init()``
(idempotent; options from the ``OTEL_TOOLTURN_*`` variables, telemetry to the exporters the
standard ``OTEL_*`` variables name, or to the providers the proxy process already set up), so
every request the proxy forwards, on its OpenAI-compatible routes and on its Anthropic-native
``/v1/messages`` route, goes out repaired and recorded. ``callback`` is the same logger ``init()``
registers, so it is never in LiteLLM's lists twice.
"""

from __future__ import annotations

from typing import Final

import otel_toolturn
from otel_toolturn.integrations.litellm import LOGGER, ToolTurnLogger, register

__all__ = ["callback"]

otel_toolturn.init()
register()

callback: Final[ToolTurnLogger] = LOGGER
