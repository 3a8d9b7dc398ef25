"""The build: the law and the lane adapters (the request path's own work) compiled with mypyc.

mypyc (part of mypy) compiles the modules ``otel_toolturn._native.MODULES`` names to C extension
modules, which Python then imports in their place; the ``.py`` files stay the reference and the
fallback.
Where no C compiler is at hand the extensions are optional: the build warns and the package runs
as pure Python. ``OTEL_TOOLTURN_PURE_PYTHON=1`` at build time skips compiling altogether (and at
run time loads the pure modules even where compiled ones are installed).
"""

from __future__ import annotations

import os
import runpy

from setuptools import Extension, setup

MODULES = runpy.run_path("otel_toolturn/_native.py")["MODULES"]
COMPILED = [module.replace(".", "/") + ".py" for module in MODULES]
"""``otel_toolturn._native.MODULES``, as files (that module imports the standard library only)."""


def _extensions() -> list[Extension]:
    if os.environ.get("OTEL_TOOLTURN_PURE_PYTHON") == "1":
        return []
    try:
        from mypyc.build import mypycify  # noqa: PLC0415 - a build-time dependency only
    except ImportError:
        return []
    try:
        # mypyc type-checks what it compiles; the runtime dependencies (OpenTelemetry, the SDKs) are
        # not in the build environment, and only the compiled modules' own errors matter here.
        options = ["--ignore-missing-imports", "--follow-imports=silent"]
        extensions: list[Extension] = mypycify([*options, *COMPILED], opt_level="3", group_name="otel_toolturn_native")
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - mypyc cannot compile them here: pure Python serves
        print(f"otel-toolturn: building pure Python ({exc!r})")  # noqa: T201 - the build's own log
        return []
    for extension in extensions:
        extension.optional = True  # no C compiler: the pure-Python modules serve
    return extensions


setup(ext_modules=_extensions())
