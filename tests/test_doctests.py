"""The examples in the package's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import otel_toolturn

STARTS_ON_IMPORT = frozenset({"otel_toolturn.integrations.litellm_proxy"})
"""Modules whose import calls ``otel_toolturn.init()`` (the LiteLLM proxy's callback module; it holds no examples)."""


def _modules() -> list[str]:
    walked = pkgutil.walk_packages(otel_toolturn.__path__, prefix=f"{otel_toolturn.__name__}.")
    names = (m.name for m in walked if not m.name.endswith("__main__") and m.name not in STARTS_ON_IMPORT)
    return sorted([otel_toolturn.__name__, *names])


def test_the_modules_left_out_exist_and_hold_no_examples() -> None:
    """A module left out for its import's side effect exists and has no ``>>>`` example that would go unchecked."""
    for name in STARTS_ON_IMPORT:
        spec = importlib.util.find_spec(name)
        assert spec is not None
        assert spec.origin is not None
        assert ">>>" not in Path(spec.origin).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_hold(name: str) -> None:
    """Every ``>>>`` example in the module's docstrings gives the output written under it."""
    module = importlib.import_module(name)
    failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failed == 0, f"{failed} docstring example(s) of {name} failed (run python -m doctest -v on it)"
