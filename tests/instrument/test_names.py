"""The telemetry contract: every name defined once in ``names`` and documented in ``docs/telemetry.md``."""

from __future__ import annotations

from pathlib import Path

from otel_toolturn.instrument import names

DOC = (Path(__file__).resolve().parents[2] / "docs" / "telemetry.md").read_text(encoding="utf-8")


def _constants() -> dict[str, str]:
    return {k: v for k, v in vars(names).items() if k.isupper() and isinstance(v, str)}


def test_every_name_is_documented() -> None:
    """Each attribute key, event name, environment variable and instrument name appears in the document."""
    missing = [v for v in _constants().values() if f"`{v}`" not in DOC]
    missing += [i.name for i in (*names.INSTRUMENTS, *names.GENAI_INSTRUMENTS) if f"`{i.name}`" not in DOC]
    missing += [key for lane in names.REQUEST_PARAMETERS.values() for key, _ in lane if f"`{key}`" not in DOC]
    assert missing == []


def test_every_prometheus_name_is_documented() -> None:
    """Each instrument's Prometheus form is in the document, for dashboards and alerts."""
    assert [i.prometheus_name for i in names.INSTRUMENTS if f"`{i.prometheus_name}`" not in DOC] == []


def test_instruments_are_unique_and_described() -> None:
    """No two instruments share a name; each has a description and a unit; custom names stay out of ``gen_ai.*``."""
    assert len({i.name for i in names.INSTRUMENTS}) == len(names.INSTRUMENTS)
    assert all(i.description and i.unit for i in names.INSTRUMENTS)
    assert all(i.name.startswith("toolturn.") for i in names.INSTRUMENTS)
    assert all(e.startswith("toolturn.") for e in names.EVENTS)


def test_law_duration_buckets_span_ten_microseconds_to_one_second() -> None:
    """The law-duration histogram has explicit, increasing buckets from 10 µs to 1 s."""
    buckets = names.LAW_DURATION_BUCKETS
    assert buckets[0] == 0.00001
    assert buckets[-1] == 1.0
    assert list(buckets) == sorted(set(buckets))
