"""Session fixtures that start the real servers of the end-to-end tests, once per run.

- ``webhook``: a stdlib HTTP server on loopback recording what Alertmanager posts to it.
- ``alertmanager``: a real Alertmanager routing every alert to the webhook at once.
- ``metrics_app``: the instrumented application (``app.py metrics``), serving its metrics.
- ``prometheus``: a real Prometheus scraping the application every second and evaluating the
  project's own alert rules (dashboards/prometheus/toolturn-rules.yml) every second.
- ``phoenix``: a real arize-phoenix trace backend (OTLP over HTTP and gRPC), from its own venv.

Everything listens on 127.0.0.1 on a free high port, keeps its data in a temporary folder and is
stopped by the pid it was started with. A server that is missing or never becomes ready fails the
test with the reason and the end of its log.
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from . import queries
from .servers import APP, Phoenix, Server, Webhook, free_port, phoenix_binary, require_binary, running, start

SERVER_PATIENCE: Final = 60.0
PHOENIX_PATIENCE: Final = 180.0


def _handler(webhook: Webhook) -> type[BaseHTTPRequestHandler]:
    class Receive(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with webhook.arrived:
                webhook.received.append(json.loads(body))
                webhook.arrived.notify_all()
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
            """Keep the test output quiet."""

    return Receive


@pytest.fixture(scope="session")
def webhook() -> Iterator[Webhook]:
    """A stdlib HTTP server on loopback that records the alerts Alertmanager sends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    receiver = Webhook(url=f"http://127.0.0.1:{server.server_address[1]}/alerts")
    server.RequestHandlerClass = _handler(receiver)
    thread = threading.Thread(target=server.serve_forever, name="alert-webhook", daemon=True)
    thread.start()
    yield receiver
    server.shutdown()
    server.server_close()
    thread.join()


def _write_yaml(path: Path, content: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def alertmanager(webhook: Webhook, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A real Alertmanager on loopback that sends every alert to the webhook without delay."""
    binary = require_binary("prometheus-alertmanager", package="prometheus-alertmanager")
    workdir = tmp_path_factory.mktemp("alertmanager")
    config = _write_yaml(
        workdir / "alertmanager.yml",
        {
            "route": {
                "receiver": "webhook",
                "group_by": ["alertname", "toolturn_lane"],
                "group_wait": "0s",
                "group_interval": "1s",
                "repeat_interval": "1h",
            },
            "receivers": [{"name": "webhook", "webhook_configs": [{"url": webhook.url}]}],
        },
    )
    port = free_port()
    server = start(
        "alertmanager",
        [
            binary,
            f"--config.file={config}",
            f"--storage.path={workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",
        ],
        url=f"http://127.0.0.1:{port}",
        workdir=workdir,
    )
    with running(server, "/-/ready", patience=SERVER_PATIENCE):
        yield server


@pytest.fixture(scope="session")
def metrics_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The instrumented application, serving its metrics for Prometheus on loopback."""
    workdir = tmp_path_factory.mktemp("metrics-app")
    port = free_port()
    server = start(
        "metrics-app",
        [sys.executable, str(APP), "metrics", f"--port={port}"],
        url=f"http://127.0.0.1:{port}",
        workdir=workdir,
    )
    with running(server, "/metrics", patience=SERVER_PATIENCE):
        yield server


@pytest.fixture(scope="session")
def prometheus(metrics_app: Server, alertmanager: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A real Prometheus scraping the application and evaluating the project's rules every second."""
    binary = require_binary("prometheus", package="prometheus")
    workdir = tmp_path_factory.mktemp("prometheus")
    # The rules are copied beside the configuration and named relatively, so Prometheus's pages
    # (and the screenshot taken of them) show the file's own name.
    shutil.copyfile(queries.PROMETHEUS_RULES, workdir / queries.PROMETHEUS_RULES.name)
    _write_yaml(
        workdir / "prometheus.yml",
        {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [queries.PROMETHEUS_RULES.name],
            "alerting": {
                "alertmanagers": [{"static_configs": [{"targets": [alertmanager.url.removeprefix("http://")]}]}]
            },
            "scrape_configs": [
                {
                    "job_name": "toolturn-e2e",
                    "static_configs": [{"targets": [metrics_app.url.removeprefix("http://")]}],
                }
            ],
        },
    )
    port = free_port()
    server = start(
        "prometheus",
        [
            binary,
            "--config.file=prometheus.yml",
            "--storage.tsdb.path=data",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        url=f"http://127.0.0.1:{port}",
        workdir=workdir,
    )
    with running(server, "/-/ready", patience=SERVER_PATIENCE):
        yield server


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    """A real arize-phoenix on loopback, from its own virtual environment, started once per run."""
    binary = phoenix_binary()
    workdir = tmp_path_factory.mktemp("phoenix")
    port, grpc_port = free_port(), free_port()
    server = start(
        "phoenix",
        [binary, "serve"],
        url=f"http://127.0.0.1:{port}",
        workdir=workdir,
        env={
            "PHOENIX_WORKING_DIR": str(workdir),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(grpc_port),
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
        },
    )
    with running(server, "/healthz", patience=PHOENIX_PATIENCE):
        yield Phoenix(server=server, grpc_port=grpc_port)
