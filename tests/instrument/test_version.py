"""The version is written once, in ``otel_toolturn._version``: the package, the build and the telemetry read it."""

from __future__ import annotations

from pathlib import Path

import pytest

import otel_toolturn
from otel_toolturn import _version
from tests.instrument.conftest import Instrument
from tests.instrument.wire import MODEL, Wire

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_build_reads_the_package_version() -> None:
    """The pyproject names no version of its own: setuptools reads ``otel_toolturn._version.__version__``."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    assert "version" not in config["project"]
    assert "version" in config["project"]["dynamic"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "otel_toolturn._version.__version__"}


def test_the_package_exports_the_version_it_is_built_as() -> None:
    """``otel_toolturn.__version__`` is the version the build reads."""
    assert otel_toolturn.__version__ == _version.__version__


def test_the_instrumentation_scope_carries_the_package_version(
    instrument: Instrument, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tracer's and meter's instrumentation scope version is the package version as it stands."""
    monkeypatch.setattr(_version, "__version__", "9.8.7")
    otel = instrument()
    Wire().openai().chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    (span,) = otel.call_spans()
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.version == "9.8.7"
    data = otel.metric_reader.get_metrics_data()
    assert data is not None
    scopes = {s.scope.name: s.scope.version for r in data.resource_metrics for s in r.scope_metrics}
    assert scopes["otel_toolturn"] == "9.8.7"
