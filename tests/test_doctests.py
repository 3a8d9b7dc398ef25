"""The examples in the package's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import otel_toolturn


def _modules() -> list[str]:
    walked = pkgutil.walk_packages(otel_toolturn.__path__, prefix=f"{otel_toolturn.__name__}.")
    return sorted([otel_toolturn.__name__, *(m.name for m in walked if not m.name.endswith("__main__"))])


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_hold(name: str) -> None:
    """Every ``>>>`` example in the module's docstrings gives the output written under it."""
    module = importlib.import_module(name)
    failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failed == 0, f"{failed} docstring example(s) of {name} failed (run python -m doctest -v on it)"
