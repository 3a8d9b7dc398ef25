"""Which build of the hot modules runs: compiled with mypyc (``setup.py``) or the pure-Python source.

The law (``_law``), its neutral view (``_view``) and the lane adapters (``lanes``) are the request
path's own work: the one scan every request pays, and the repair of what it finds. The build
compiles exactly ``MODULES`` with mypyc into C extension modules, which Python imports in place of
the ``.py`` files beside them; the ``.py`` files stay the reference. ``OTEL_TOOLTURN_PURE_PYTHON=1``
loads the ``.py`` files even where compiled modules are installed (the test suite runs the law's
tests both ways; also a way to rule the compiled build out when looking into a problem).

This module imports the standard library only: the build reads ``MODULES`` from it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Final

MODULES: Final = (
    "otel_toolturn._view",
    "otel_toolturn.lanes._common",
    "otel_toolturn.lanes.anthropic_messages",
    "otel_toolturn.lanes.openai_chat",
    "otel_toolturn.lanes.openai_responses",
    "otel_toolturn._law",
)
"""The modules the build compiles, each after the ones it imports."""

PURE_PYTHON: Final = os.environ.get("OTEL_TOOLTURN_PURE_PYTHON") == "1"
"""Whether the ``.py`` files are loaded even where compiled modules are installed."""


def load_pure(qualified: str) -> None:
    """Load ``qualified`` (one of ``MODULES``) from its ``.py`` file, unless it is loaded already."""
    if qualified in sys.modules:
        return
    path = Path(__file__).resolve().parent.parent.joinpath(*qualified.split(".")).with_suffix(".py")
    spec = importlib.util.spec_from_file_location(qualified, path)
    if spec is None or spec.loader is None:  # pragma: no cover - the files ship with the package
        raise ImportError(f"cannot load {qualified} from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    parent, _, name = qualified.rpartition(".")
    setattr(sys.modules[parent], name, module)


def compiled(module: object) -> bool:
    """Whether ``module`` was loaded from a compiled extension rather than its ``.py`` file."""
    return not str(getattr(module, "__file__", "")).endswith(".py")
