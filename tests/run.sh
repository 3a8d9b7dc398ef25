#!/usr/bin/env bash
# The whole test suite: installs what it needs (tests/setup.sh), then runs pytest.
# The end-to-end tests start their own servers on loopback and stop them by pid.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh
.venv/bin/python -m pytest "$@"
