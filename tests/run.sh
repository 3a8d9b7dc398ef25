#!/usr/bin/env bash
# The whole test suite: installs what it needs (tests/setup.sh), then runs pytest, then runs the
# law's tests once more on the pure-Python lane adapters (OTEL_TOOLTURN_PURE_PYTHON=1), so both
# builds of the lanes (compiled with mypyc where a C compiler is at hand, see setup.py) meet them.
# The end-to-end tests start their own servers on loopback and stop them by pid.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh
.venv/bin/python -m pytest "$@"
if [ $# -eq 0 ]; then
    echo "--- the law's tests on the pure-Python lanes"
    OTEL_TOOLTURN_PURE_PYTHON=1 .venv/bin/python -m pytest -q tests/test_law_examples.py tests/test_law_input.py \
        tests/test_law_properties.py tests/test_law_real_cases.py tests/test_lanes_build.py tests/instrument/test_memo.py
fi
