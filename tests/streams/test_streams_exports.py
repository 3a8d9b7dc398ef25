"""The streams package's public surface: ``__all__`` and the namespace agree."""

from __future__ import annotations

import types

from otel_toolturn import streams


def test_all_names_resolve_and_every_public_name_is_listed() -> None:
    """Each name in __all__ exists, and each public non-module name of the package is in __all__."""
    public = {
        name
        for name, value in vars(streams).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    public -= {"annotations", "NoReturn", "Final", "LANES", "Lane", "UnknownLaneError", "UnsupportedLaneError"}
    assert set(streams.__all__) == public
    assert len(streams.__all__) == len(set(streams.__all__))
