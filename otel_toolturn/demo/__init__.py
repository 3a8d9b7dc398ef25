"""``otel-toolturn demo``: eleven real-world tool-turn breakages, refused, then repaired.

Role: a newcomer's first look. An agent talks to the embedded provider simulator through the real
``anthropic``, ``openai``, ``google-genai`` and ``boto3`` SDK clients (``base_url`` or
``endpoint_url`` on loopback, dummy keys and credentials, no network) and lives through eleven
breakages users report: interrupted parallel calls (Anthropic and Bedrock), a late result, text after
a ``tool_use``, a repeated call, a paused web search the user moved on from, an orphan left by
trimming, a cut stream, a preserved-thinking model whose tool result arrives after it answered, a
Gemini history whose summariser kept one of two function responses, and a Bedrock sliding window
that opens on a ``toolResult`` whose call it cut away. Each story is played twice:

1. without otel-toolturn — the provider's HTTP 400, as the simulator answers it (its verdict is the
   library's own ``validate``, so the figures are "per the simulator"), is printed; the preserved-thinking
   story also plays the move-up rule (the late result moved up into its call's batch), written
   out in the story, and the provider's prefix check refuses it;
2. with ``otel_toolturn.init(...)`` — every call succeeds; per request, the repairs and
   stream events read back from an in-memory span exporter attached beside the real one, and for
   the preserved-thinking story the prompt tokens the provider read from its cache.

Telemetry goes to the console by default (one line per span, printed at the end), to OTLP when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (protocol from ``OTEL_EXPORTER_OTLP_PROTOCOL``), or nowhere
but the summary with ``--telemetry none``. It finishes in seconds.

Each SDK brings its own stories (``_anthropic_stories``, ``_openai_stories``, ``_gemini_stories``,
``_bedrock_stories``); the stories of an SDK that is not installed are skipped, and one line says
which and the extra that brings them.
"""

from otel_toolturn.demo._agent import REPAIR_WORDS, Story
from otel_toolturn.demo._run import build_pipeline, installed, metric_totals, resolve_telemetry, run_demo

__all__ = ["REPAIR_WORDS", "Story", "build_pipeline", "installed", "metric_totals", "resolve_telemetry", "run_demo"]
