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
# the LiteLLM proxy's server, for tests/e2e/test_litellm_proxy.py (litellm[proxy] pins a litellm-proxy
# release the package index does not carry, so its server dependencies are named here)
.venv/bin/python -m pip install -q --disable-pip-version-check 'fastapi>=0.136.3,<1.0' 'starlette>=1.0.1,<2.0' \
    'uvicorn>=0.33.0,<1.0' 'uvloop>=0.22.1,<1.0' 'gunicorn>=23.0.0,<24.0' 'backoff>=2.2.1,<3.0' 'orjson>=3.11.6,<4.0' \
    'apscheduler>=3.11.2,<4.0' 'pyjwt>=2.13.0,<3.0' 'python-multipart>=0.0.27,<1.0' 'cryptography>=49.0.0,<51.0' \
    'websockets>=15.0.1,<16.0' 'rq>=2.7.0,<3.0' 'pynacl>=1.6.2,<2.0' 'fastapi-sso>=0.19.0,<1.0' 'rich>=13.9.4,<14.0' \
    'tomlkit>=0.13.3,<1.0' 'semver>=3.0.4,<4' 'expression>=5.6.0,<6.0' 'soundfile>=0.12.1,<1.0' \
    'polars>=1.38.1,<2.0' 'restrictedpython>=8.5,<9.0' 'mcp>=2.3.0,<3' 'inquirerpy>=0.3.4,<1.0'

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
