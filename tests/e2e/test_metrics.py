"""Metrics end to end, against a real Prometheus and Alertmanager on loopback.

The instrumented application is scraped by Prometheus, which evaluates the project's alert rules
and notifies Alertmanager, which posts to a webhook.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any, Final

import pytest

from . import queries
from .app import LANE, PROVIDER, SERVICE
from .servers import Server, Webhook, http_get, require_binary, wait_until

pytestmark = pytest.mark.e2e

DATA_PATIENCE: Final = 90.0
ALERT_PATIENCE: Final = 90.0
SCREENSHOT_NAME: Final = "prometheus-lossy-alert.png"
"""The alert page's screenshot, written into each run's temporary folder; the tracked copy in
docs/images is documentation and no test writes it."""
PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"


def _query(prometheus: Server, expr: str) -> list[dict[str, Any]]:
    status, body = http_get(f"{prometheus.url}/api/v1/query?{urllib.parse.urlencode({'query': expr})}")
    answer = json.loads(body)
    if status != 200 or answer.get("status") != "success":
        prometheus.fail(f"query {expr!r} was refused: {answer}")
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result


def _scrape(app: Server) -> str:
    status, body = http_get(f"{app.url}/metrics")
    assert status == 200
    return body.decode()


def _positive(result: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """``result`` when it holds a finite value above zero, else ``None`` (keep polling)."""
    values = [float(sample["value"][1]) for sample in result]
    return result if any(math.isfinite(value) and value > 0 for value in values) else None


@pytest.mark.parametrize("query", queries.dashboard_queries(), ids=lambda query: query.where)
def test_every_dashboard_query_returns_data(metrics_app: Server, prometheus: Server, query: queries.Query) -> None:
    """The dashboard query, run by a real Prometheus on the scraped application, shows the scenario."""
    expr = queries.concrete(query.expr, service=SERVICE)
    # Fails (with the application's log) unless a series with a value above zero appears.
    wait_until(
        metrics_app, f"data for {query.label}", lambda: _positive(_query(prometheus, expr)), patience=DATA_PATIENCE
    )


def test_dashboard_variables_list_the_application(prometheus: Server) -> None:
    """The service, provider and lane variables' label values include the application's own."""
    expected = {"service": SERVICE, "provider": PROVIDER, "lane": LANE}
    for variable, (metric, label) in queries.variable_sources().items():

        def values(metric: str = metric, label: str = label) -> list[str] | None:
            status, body = http_get(f"{prometheus.url}/api/v1/label/{label}/values?match[]={metric}")
            found: list[str] = json.loads(body)["data"] if status == 200 else []
            return found or None

        found = wait_until(prometheus, f"values of {label} on {metric}", values, patience=DATA_PATIENCE)
        assert expected[variable] in found


def test_scraped_series_are_the_ones_the_checks_expect(metrics_app: Server, prometheus: Server) -> None:
    """Every otel-toolturn series on the scrape has a name and labels that the offline checks allow."""
    emitted = queries.emitted_series()
    result = wait_until(
        prometheus,
        "toolturn series",
        lambda: _query(prometheus, '{__name__=~"toolturn_.*", job="toolturn-e2e"}') or None,
        patience=DATA_PATIENCE,
    )
    for sample in result:
        labels = dict(sample["metric"])
        metric = labels.pop("__name__")
        assert metric in emitted, metric
        assert set(labels) <= emitted[metric], (metric, sorted(set(labels) - emitted[metric]))


def test_the_scrape_passes_promtool_check_metrics(metrics_app: Server) -> None:
    """`promtool check metrics` finds no problem (help text, unit suffixes) in the application's scrape."""
    promtool = require_binary("promtool", package="prometheus")
    result = subprocess.run(
        [promtool, "check", "metrics"], input=_scrape(metrics_app), capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def screenshot_path(folder: Path) -> Path:
    """Where a run writes the alert page's screenshot: ``folder`` (the test's temporary folder)."""
    return folder / SCREENSHOT_NAME


def _screenshot(url: str, out: Path, profile: Path) -> None:
    chromium = shutil.which("chromium") or require_binary("chromium", package="chromium")
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--screenshot={out}",
            "--window-size=1280,520",
            url,
        ],
        capture_output=True,
        check=True,
    )


def test_the_lossy_alert_reaches_the_webhook_through_alertmanager(
    prometheus: Server, alertmanager: Server, webhook: Webhook, tmp_path: Path
) -> None:
    """A lossy repair in the application fires ToolTurnLossyProjection, and Alertmanager delivers it."""
    alert = webhook.wait_for(
        lambda alert: alert["labels"].get("alertname") == "ToolTurnLossyProjection", patience=ALERT_PATIENCE
    )
    assert alert["status"] == "firing"
    assert alert["labels"]["toolturn_lane"] == LANE
    assert alert["labels"]["gen_ai_provider_name"] == PROVIDER
    assert alert["labels"]["job"] == "toolturn-e2e"
    assert alert["annotations"]["summary"] == f"Lossy tool-turn projection on {LANE}"

    shot = screenshot_path(tmp_path)
    _screenshot(f"{prometheus.url}/classic/alerts", shot, tmp_path / "chromium")
    assert shot.read_bytes().startswith(PNG_SIGNATURE)


def test_the_alert_screenshot_is_written_outside_the_repository(tmp_path: Path) -> None:
    """The screenshot goes to the run's temporary folder; the documentation's tracked image is never its target."""
    shot = screenshot_path(tmp_path)
    assert shot.parent == tmp_path
    assert queries.REPO.resolve() not in shot.resolve().parents
    assert (queries.REPO / "docs" / "images" / SCREENSHOT_NAME).is_file()
