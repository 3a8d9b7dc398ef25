"""What ``otel_toolturn.init()`` costs a process at start, beside importing the OpenTelemetry SDK.

Each run is a fresh interpreter with every supported SDK installed (none imported by the
application) and the exporters set to ``none``, timing in one process, in order: importing the
OpenTelemetry SDK (traces, metrics, logs), importing ``otel_toolturn.instrument``, and the
``init()`` call itself. Then whether ``init()`` imported an SDK (it must not: each one is patched
when the application imports it). Medians over ``--runs`` processes (7 by default).

Run: ``python -m bench.init [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Final

_PROBE: Final = """
import json, sys, time
start = time.perf_counter()
import opentelemetry.sdk.trace, opentelemetry.sdk.metrics, opentelemetry.sdk._logs
sdk = time.perf_counter()
import otel_toolturn.instrument
imported = time.perf_counter()
import otel_toolturn
otel_toolturn.init()
done = time.perf_counter()
print(json.dumps({
    "sdk_import": sdk - start,
    "instrument_import": imported - sdk,
    "init": done - imported,
    "sdks_imported": sorted(m for m in ("openai", "anthropic", "google.genai", "litellm") if m in sys.modules),
}))
"""

_ENV: Final = {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}


def probe() -> dict[str, object]:
    """One fresh process's timings (seconds) and the SDKs ``init()`` left imported."""
    done = subprocess.run(  # noqa: S603 - this interpreter running the probe above
        [sys.executable, "-c", _PROBE],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **_ENV},
    )
    loaded: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def main(argv: list[str] | None = None) -> int:
    """Run the probes and print the medians side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    runs = [probe() for _ in range(args.runs)]
    medians = {
        key: statistics.median(float(str(run[key])) for run in runs)
        for key in ("sdk_import", "instrument_import", "init")
    }
    imported = sorted({name for run in runs for name in run["sdks_imported"]})  # type: ignore[attr-defined]
    print(f"import the OpenTelemetry SDK      {medians['sdk_import'] * 1000:8.1f} ms   1.00x")
    for key, label in (("instrument_import", "import otel_toolturn.instrument"), ("init", "otel_toolturn.init()")):
        print(f"{label:33} {medians[key] * 1000:8.1f} ms   {medians[key] / medians['sdk_import']:.2f}x")
    print(f"SDKs imported by init(): {', '.join(imported) or 'none'}  (medians of {args.runs} processes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
