"""The PromQL the project ships, read from its files, and the names the library emits.

Shared by the offline checks (``tests/test_dashboards.py``) and the end-to-end run against a real
Prometheus (``tests/e2e/test_metrics.py``):

- ``shipped_queries()``: every PromQL expression in the Grafana dashboard (panel targets), the
  Grafana-managed alert rules and the Prometheus alert rules, each with where it came from;
- ``concrete(expr)``: the expression with Grafana's macros and template variables replaced by
  fixed values, so Prometheus and promtool can run it;
- ``emitted_series()``: metric name → the labels a scrape of an instrumented process carries,
  derived from ``otel_toolturn.instrument.names`` itself (never a copy of the names);
- ``names_used(expr)``: the metric and label names an expression reads, from its syntax tree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import promql_parser
import yaml

from otel_toolturn.instrument import names

REPO: Final = Path(__file__).resolve().parents[2]
DASHBOARDS: Final = REPO / "dashboards"
DASHBOARD_JSON: Final = DASHBOARDS / "grafana" / "otel-toolturn.json"
GRAFANA_ALERTS: Final = DASHBOARDS / "grafana" / "provisioning" / "alerting" / "otel-toolturn.yaml"
PROMETHEUS_RULES: Final = DASHBOARDS / "prometheus" / "toolturn-rules.yml"
PROMETHEUS_RULE_TESTS: Final = DASHBOARDS / "prometheus" / "toolturn-rules.test.yml"

SCRAPE_LABELS: Final = frozenset({"job", "instance"})
"""Labels Prometheus adds to every scraped series (the Collector's exporter sets the same two)."""

SCOPE_LABELS: Final = frozenset({"otel_scope_name", "otel_scope_version", "otel_scope_schema_url"})
"""Labels the OpenTelemetry Prometheus exporters add to every metric: the instrumentation scope."""

TARGET_INFO: Final = "target_info"
TARGET_INFO_LABELS: Final = frozenset({"service_name"}) | SCRAPE_LABELS
"""The exporter's resource series; the dashboards read only ``service.name`` from it."""

GRAFANA_VALUES: Final[Mapping[str, str]] = {
    "__rate_interval": "1m",
    "__interval": "1m",
    "__range": "1h",
    "service": ".*",
    "provider": ".*",
    "lane": ".*",
}
"""What each Grafana macro or dashboard variable stands for when a query is run outside Grafana."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Query:
    """One shipped PromQL expression: the file, the place in it, and the expression as written."""

    source: str
    where: str
    expr: str

    @property
    def label(self) -> str:
        """``file: place``, for test ids and failure messages."""
        return f"{self.source}: {self.where}"


def _load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def dashboard() -> dict[str, Any]:
    """The Grafana dashboard JSON as a dict."""
    loaded: dict[str, Any] = json.loads(DASHBOARD_JSON.read_text(encoding="utf-8"))
    return loaded


def dashboard_queries() -> list[Query]:
    """Every panel target's expression in the dashboard."""
    source = str(DASHBOARD_JSON.relative_to(REPO))
    return [
        Query(source=source, where=f"panel {panel['title']!r} target {target['refId']}", expr=target["expr"])
        for panel in dashboard()["panels"]
        for target in panel.get("targets", [])
    ]


def rule_queries() -> list[Query]:
    """Every rule's expression in the Prometheus rule file."""
    source = str(PROMETHEUS_RULES.relative_to(REPO))
    return [
        Query(source=source, where=f"rule {rule.get('alert') or rule.get('record')}", expr=rule["expr"])
        for group in _load_yaml(PROMETHEUS_RULES)["groups"]
        for rule in group["rules"]
    ]


def grafana_alert_queries() -> list[Query]:
    """Every Prometheus query of the Grafana-managed alert rules (server-side expressions excluded)."""
    source = str(GRAFANA_ALERTS.relative_to(REPO))
    return [
        Query(source=source, where=f"alert {rule['title']} query {data['refId']}", expr=data["model"]["expr"])
        for group in _load_yaml(GRAFANA_ALERTS)["groups"]
        for rule in group["rules"]
        for data in rule["data"]
        if data["datasourceUid"] != "__expr__"
    ]


def shipped_queries() -> list[Query]:
    """All PromQL the project ships: dashboard panels, Grafana alerts, Prometheus rules."""
    return dashboard_queries() + grafana_alert_queries() + rule_queries()


_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)")


def concrete(expr: str, **chosen: str) -> str:
    """``expr`` with every Grafana macro and variable replaced by a fixed value.

    The value is the one ``chosen`` for it (``concrete(expr, service="checkout")``), else the one
    in ``GRAFANA_VALUES``.

    Raises ``KeyError`` naming a variable that has no value, so a new variable cannot slip through.
    """
    values = {**GRAFANA_VALUES, **chosen}

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in values:
            raise KeyError(f"no value for Grafana variable ${name} in {expr!r}")
        return values[name]

    return _VARIABLE.sub(value, expr)


def _label(key: str) -> str:
    return key.replace(".", "_")


def emitted_series() -> dict[str, frozenset[str]]:
    """Metric name → labels, as a scrape of a process instrumented by otel-toolturn shows them.

    Counters appear as ``<prometheus_name>`` (``_total``); histograms as ``_bucket`` (with ``le``),
    ``_sum`` and ``_count``; every series also has ``job`` and ``instance`` (from the scrape) and the
    ``otel_scope_*`` labels (from the exporter); the resource is in ``target_info``.
    """
    series: dict[str, frozenset[str]] = {TARGET_INFO: TARGET_INFO_LABELS}
    for instrument in names.INSTRUMENTS:
        labels = frozenset(_label(key) for key in instrument.attributes) | SCRAPE_LABELS | SCOPE_LABELS
        match instrument.kind:
            case "counter":
                series[instrument.prometheus_name] = labels
            case "histogram":
                series[instrument.prometheus_name + "_bucket"] = labels | {"le"}
                series[instrument.prometheus_name + "_sum"] = labels
                series[instrument.prometheus_name + "_count"] = labels
    return series


@dataclass(frozen=True, kw_only=True, slots=True)
class NamesUsed:
    """What one expression reads.

    ``selectors``: each metric selected with the labels matched on it; ``grouping``: the labels it
    groups or joins by (``by``, ``without``, ``on``, ``ignoring``, ``group_left``/``group_right``).
    """

    selectors: tuple[tuple[str | None, frozenset[str]], ...]
    grouping: frozenset[str]

    @property
    def metrics(self) -> frozenset[str]:
        """Every metric name the expression selects."""
        return frozenset(name for name, _ in self.selectors if name is not None)


def _nodes(expr: promql_parser.Expr) -> Iterator[promql_parser.Expr]:
    found: list[promql_parser.Expr] = []

    def visit(node: promql_parser.Expr) -> bool:
        found.append(node)
        return True

    promql_parser.walk(expr, visit)
    return iter(found)


def names_used(expr: str) -> NamesUsed:
    """The metric and label names ``expr`` (already concrete) reads, from its syntax tree."""
    selectors: list[tuple[str | None, frozenset[str]]] = []
    grouping: set[str] = set()
    for node in _nodes(promql_parser.parse(expr)):
        if isinstance(node, promql_parser.VectorSelector):
            labels = frozenset(m.name for m in node.matchers.matchers if m.name != "__name__")
            selectors.append((node.name, labels))
        elif isinstance(node, promql_parser.AggregateExpr) and node.modifier is not None:
            grouping.update(node.modifier.labels)
        elif isinstance(node, promql_parser.BinaryExpr) and node.modifier is not None:
            if node.modifier.matching is not None:
                grouping.update(node.modifier.matching.labels)
            grouping.update(node.modifier.group_labels or ())
    return NamesUsed(selectors=tuple(selectors), grouping=frozenset(grouping))


def unknown_names(expr: str) -> list[str]:
    """Every metric or label in ``expr`` that no instrumented process emits, as readable lines.

    A selector must name an emitted metric and match only that metric's labels; a grouping or
    join label must belong to at least one metric the expression selects.
    """
    emitted = emitted_series()
    used = names_used(concrete(expr))
    problems: list[str] = []
    for metric, labels in used.selectors:
        if metric is None:
            problems.append(f"a selector without a metric name matches {sorted(labels)}")
            continue
        if metric not in emitted:
            problems.append(f"metric {metric!r} is not emitted")
            continue
        problems.extend(f"label {label!r} is not on {metric}" for label in sorted(labels - emitted[metric]))
    available = frozenset().union(*(emitted.get(metric, frozenset()) for metric in used.metrics))
    problems.extend(
        f"grouping label {label!r} is on none of {sorted(used.metrics)}" for label in sorted(used.grouping - available)
    )
    return problems


_LABEL_VALUES = re.compile(r"^label_values\(\s*(\w+)\s*,\s*(\w+)\s*\)$")


def variable_sources() -> dict[str, tuple[str, str]]:
    """Dashboard variable → (metric, label) its values are read from (``label_values(metric, label)``)."""
    sources: dict[str, tuple[str, str]] = {}
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] != "query":
            continue
        match = _LABEL_VALUES.match(variable["definition"])
        if match is None:
            raise ValueError(f"variable {variable['name']!r}: expected label_values(metric, label)")
        sources[variable["name"]] = (match.group(1), match.group(2))
    return sources
