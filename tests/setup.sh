#!/usr/bin/env bash
# Installs everything the test suite needs, idempotently: the project with its dev extras in .venv,
# and the real servers the end-to-end tests start (Prometheus, Alertmanager, promtool and Chromium
# from Debian; the trace backend arize-phoenix in a virtual environment of its own, test-only).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'

# Debian packages for the end-to-end tests (root, as on CI; otherwise sudo must be available).
need_apt=()
command -v prometheus >/dev/null 2>&1 || need_apt+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || need_apt+=(prometheus-alertmanager)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# The trace backend, kept outside the project's environment (its licence is not ours to ship).
PHOENIX_VENV=${OTEL_TOOLTURN_PHOENIX_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/otel-toolturn/phoenix-venv}
if [ ! -x "$PHOENIX_VENV/bin/phoenix" ]; then
    mkdir -p "$(dirname "$PHOENIX_VENV")"
    "$PY" -m venv "$PHOENIX_VENV"
    "$PHOENIX_VENV/bin/python" -m pip install -q --disable-pip-version-check arize-phoenix
fi
