"""Offline checks of dashboards/.

The alert rules under promtool, every shipped query against the telemetry contract, the Grafana
JSON and provisioning, and the compose stack's configuration.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from otel_toolturn.instrument import names
from tests.e2e import queries
from tests.e2e.servers import require_binary

STACK = queries.DASHBOARDS / "stack"
GRAFANA = queries.DASHBOARDS / "grafana"
RUNBOOKS = queries.REPO / "docs" / "runbooks"
RUNBOOK_SECTIONS = ("## Meaning", "## Impact", "## Diagnosis", "## Mitigation")
REQUIRED_RULE_CASES = (
    "lossy repair fires, then resolves",
    "lossless repairs stay silent",
    "brand-new lossy series fires",
    "a resent lossy break does not fire again",
    "brand-new dropped-thinking series fires",
    "dropped thinking fires when the count rises",
    "a repeating dropped-thinking count stays silent",
)


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _promtool() -> str:
    return require_binary("promtool", package="prometheus")


def test_promtool_checks_the_alert_rules() -> None:
    """The Prometheus alert rules pass `promtool check rules`."""
    result = _run([_promtool(), "check", "rules", str(queries.PROMETHEUS_RULES)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_rule_tests_pass() -> None:
    """Every case of the rule tests passes `promtool test rules` (fires, silent, resolves, new series)."""
    result = _run(
        [_promtool(), "test", "rules", queries.PROMETHEUS_RULE_TESTS.name], cwd=queries.PROMETHEUS_RULES.parent
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_rule_tests_cover_every_alert_and_the_required_cases() -> None:
    """The promtool cases exercise every alert, and include the lossy, lossless and new-series cases."""
    tests = _yaml(queries.PROMETHEUS_RULE_TESTS)["tests"]
    tested = {case["alertname"] for test in tests for case in test.get("alert_rule_test", [])}
    alerts = {rule["alert"] for group in _yaml(queries.PROMETHEUS_RULES)["groups"] for rule in group["rules"]}
    assert tested == alerts
    assert set(REQUIRED_RULE_CASES) <= {test["name"] for test in tests}


def _alert_rules() -> list[tuple[str, dict[str, Any]]]:
    """Every alert of both rule files: (its name, its annotations)."""
    prometheus = [
        (rule["alert"], rule.get("annotations", {}))
        for group in _yaml(queries.PROMETHEUS_RULES)["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]
    grafana = [
        (rule["title"], rule.get("annotations", {}))
        for group in _yaml(queries.GRAFANA_ALERTS)["groups"]
        for rule in group["rules"]
    ]
    return prometheus + grafana


def _runbook_queries() -> list[tuple[str, str]]:
    """Every ```promql block of the runbooks: (the runbook's file name, the expression)."""
    block = re.compile(r"^\s*```promql\n(.*?)^\s*```", re.MULTILINE | re.DOTALL)
    return [
        (path.name, " ".join(found.group(1).split()))
        for path in sorted(RUNBOOKS.glob("*.md"))
        for found in block.finditer(path.read_text(encoding="utf-8"))
    ]


def test_every_alert_links_to_its_runbook_in_the_repository() -> None:
    """Each alert of both rule files has a runbook_url ``docs/runbooks/<alert>.md`` naming a file that exists."""
    for alert, notes in _alert_rules():
        assert notes.get("runbook_url") == f"docs/runbooks/{alert}.md", alert
        assert (queries.REPO / notes["runbook_url"]).is_file(), alert


def test_every_runbook_names_its_alert_and_has_its_sections() -> None:
    """Each runbook belongs to an alert, is titled with its name, and says meaning, impact, diagnosis, mitigation."""
    alerts = {alert for alert, _ in _alert_rules()}
    runbooks = sorted(RUNBOOKS.glob("*.md"))
    assert {path.stem for path in runbooks} == alerts
    for path in runbooks:
        text = path.read_text(encoding="utf-8")
        assert text.startswith(f"# {path.stem}\n"), path.name
        assert f"`{path.stem}`" in text, path.name
        positions = [text.find(section + "\n") for section in RUNBOOK_SECTIONS]
        assert -1 not in positions, path.name
        assert positions == sorted(positions), path.name


def test_runbook_queries_name_only_what_the_library_emits() -> None:
    """Every query a runbook gives parses and selects only emitted metrics and labels; each runbook but one has some."""
    found = _runbook_queries()
    assert {name for name, _ in found} >= {f"{alert}.md" for alert, _ in _alert_rules()}
    for name, expr in found:
        assert queries.unknown_names(expr) == [], (name, expr)


def test_every_shipped_query_parses(tmp_path: Path) -> None:
    """Every dashboard, Grafana-alert and rule expression, macros replaced, parses under promtool."""
    shipped = queries.shipped_queries()
    rules = [
        {"record": f"shipped:query_{index}", "expr": queries.concrete(query.expr)}
        for index, query in enumerate(shipped)
    ]
    path = tmp_path / "shipped.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "shipped", "rules": rules}]}), encoding="utf-8")
    result = _run([_promtool(), "check", "rules", str(path)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(shipped)} rules found" in result.stdout


@pytest.mark.parametrize("query", queries.shipped_queries(), ids=lambda query: query.label)
def test_shipped_query_names_only_what_the_library_emits(query: queries.Query) -> None:
    """The expression selects only emitted metrics, with only their labels, per the telemetry module."""
    assert queries.unknown_names(query.expr) == []


@pytest.mark.parametrize(
    ("expr", "problem"),
    [
        ("rate(toolturn_repair_total[1m])", "metric 'toolturn_repair_total' is not emitted"),
        ('toolturn_repairs_total{toolturn_repair_kind="x"}', "label 'toolturn_repair_kind' is not on"),
        ("sum by (toolturn_lane) (toolturn_instrumentation_errors_total)", "grouping label 'toolturn_lane'"),
        ('{__name__=~"toolturn_.*"}', "a selector without a metric name"),
    ],
)
def test_the_name_check_rejects_names_the_library_does_not_emit(expr: str, problem: str) -> None:
    """The checker itself reports a misspelt metric, a foreign label and a nameless selector."""
    assert any(problem in line for line in queries.unknown_names(expr))


def test_an_unknown_grafana_variable_is_refused() -> None:
    """A query using a variable the checks cannot fill in is an error, not a silent pass."""
    with pytest.raises(KeyError, match=r"\$cluster"):
        queries.concrete('toolturn_requests_total{instance=~"$cluster"}')


def test_the_dashboard_shows_every_instrument() -> None:
    """Each metric instrument of the telemetry contract has at least one panel."""
    shown = set().union(*(queries.names_used(queries.concrete(q.expr)).metrics for q in queries.dashboard_queries()))
    suffixes = {"counter": ("",), "histogram": ("_bucket", "_sum", "_count")}
    missing = [
        instrument.name
        for instrument in names.INSTRUMENTS
        if not any(instrument.prometheus_name + suffix in shown for suffix in suffixes[instrument.kind])
    ]
    assert missing == []


def test_the_dashboard_variables_read_emitted_labels() -> None:
    """The service, provider and lane variables read labels that the scraped series carry."""
    variables = {variable["name"]: variable for variable in queries.dashboard()["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    sources = queries.variable_sources()
    assert set(sources) == {"service", "provider", "lane"}
    emitted = queries.emitted_series()
    for variable, (metric, label) in sources.items():
        assert label in emitted[metric], f"{variable}: {label} is not on {metric}"


def test_every_panel_reads_the_datasource_variable_and_links_to_traces() -> None:
    """Each panel queries the chosen Prometheus and links to the selected service's traces in Jaeger."""
    for panel in queries.dashboard()["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert all(target["datasource"]["uid"] == "${datasource}" for target in panel["targets"]), panel["title"]
        urls = [link["url"] for link in panel["links"]]
        assert any("jaeger" in url and "${service}" in url for url in urls), panel["title"]


def test_the_dashboard_json_has_unique_panel_ids_and_a_fixed_uid() -> None:
    """Panels have distinct ids and grid positions inside the 24-column grid; the dashboard uid is fixed."""
    board = queries.dashboard()
    assert board["uid"] == "otel-toolturn"
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]


def test_provisioned_datasources_match_the_uids_the_dashboards_use() -> None:
    """The datasources file defines the Prometheus and Jaeger uids the alerts and trace links refer to."""
    datasources = {
        ds["uid"]: ds["type"]
        for ds in _yaml(GRAFANA / "provisioning" / "datasources" / "otel-toolturn.yaml")["datasources"]
    }
    assert datasources == {"prometheus": "prometheus", "jaeger": "jaeger"}
    for group in _yaml(queries.GRAFANA_ALERTS)["groups"]:
        for rule in group["rules"]:
            uids = {data["datasourceUid"] for data in rule["data"]}
            assert uids <= {"prometheus", "__expr__"}, rule["title"]
            assert rule["condition"] in {data["refId"] for data in rule["data"]}, rule["title"]


def test_grafana_alerts_mirror_the_prometheus_alerts() -> None:
    """The Grafana-managed rules are the same alerts as the Prometheus rules (one set or the other)."""
    grafana = {rule["title"] for group in _yaml(queries.GRAFANA_ALERTS)["groups"] for rule in group["rules"]}
    prometheus = {rule["alert"] for group in _yaml(queries.PROMETHEUS_RULES)["groups"] for rule in group["rules"]}
    assert grafana == prometheus


def test_the_dashboards_provider_loads_the_path_the_stack_mounts() -> None:
    """The dashboards provider reads the folder the compose file mounts the dashboard JSON into."""
    provider = _yaml(GRAFANA / "provisioning" / "dashboards" / "otel-toolturn.yaml")["providers"][0]
    grafana = _yaml(STACK / "compose.yaml")["services"]["grafana"]
    mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in grafana["volumes"]}
    source = mounts[provider["options"]["path"]]
    assert (STACK / source / queries.DASHBOARD_JSON.name).resolve() == queries.DASHBOARD_JSON


def test_the_compose_stack_has_its_services_and_mounts_existing_files() -> None:
    """The compose file runs the Collector, Jaeger, Prometheus, Alertmanager and Grafana from files in the repo."""
    services = _yaml(STACK / "compose.yaml")["services"]
    assert set(services) == {"otel-collector", "jaeger", "prometheus", "alertmanager", "grafana"}
    for name, service in services.items():
        for volume in service.get("volumes", []):
            assert (STACK / volume.split(":")[0]).exists(), f"{name}: {volume}"
        for argument in [*service.get("command", [])]:
            if "/etc/otel-toolturn/" in argument:
                relative = argument.split("/etc/otel-toolturn/", 1)[1]
                assert (queries.DASHBOARDS / relative).is_file(), f"{name}: {argument}"


def test_the_stack_prometheus_config_and_its_rules_pass_promtool() -> None:
    """`promtool check config` accepts the stack's Prometheus configuration and the rules it loads."""
    result = _run([_promtool(), "check", "config", str(STACK / "prometheus.yml")])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 1 rule files found" in result.stdout


def test_the_stack_alertmanager_config_passes_amtool() -> None:
    """`amtool check-config` accepts the stack's Alertmanager configuration."""
    amtool = require_binary("amtool", package="prometheus-alertmanager")
    result = _run([amtool, "check-config", str(STACK / "alertmanager.yml")])
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_collector_pipelines_send_traces_to_jaeger_and_metrics_to_prometheus() -> None:
    """The Collector config receives OTLP, exports traces to Jaeger, exposes metrics, and accepts log records."""
    config = _yaml(STACK / "otel-collector.yaml")
    pipelines = config["service"]["pipelines"]
    assert pipelines["traces"]["receivers"] == ["otlp"] == pipelines["metrics"]["receivers"]
    assert config["exporters"]["otlp/jaeger"]["endpoint"].startswith("jaeger:")
    assert pipelines["traces"]["exporters"] == ["otlp/jaeger"]
    assert pipelines["metrics"]["exporters"] == ["prometheus"]
    assert pipelines["logs"]["receivers"] == ["otlp"]
    assert pipelines["logs"]["exporters"] == ["debug"]
    scraped = _yaml(STACK / "prometheus.yml")["scrape_configs"][0]["static_configs"][0]["targets"]
    port = config["exporters"]["prometheus"]["endpoint"].rsplit(":", 1)[1]
    assert scraped == [f"otel-collector:{port}"]
