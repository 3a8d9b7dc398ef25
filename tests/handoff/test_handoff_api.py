"""The handoff package's public surface: ``__all__`` and the namespace agree."""

from __future__ import annotations

import types

from otel_toolturn import handoff


def test_all_matches_the_public_namespace() -> None:
    """Every public name is exported and every export exists."""
    public = {
        name
        for name, value in vars(handoff).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    public.discard("annotations")
    assert set(handoff.__all__) == public
