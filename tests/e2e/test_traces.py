"""Traces end to end, against a real trace backend (arize-phoenix) on loopback.

The instrumented application exports over OTLP (HTTP and gRPC); the span and its ``toolturn.*``
events are read back through the backend's own API.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
from typing import Any, Final, Literal

import pytest

from otel_toolturn.instrument import names

from .app import LANE, ORPHAN_ID
from .servers import APP, Phoenix, http_get, wait_until

pytestmark = pytest.mark.e2e

SPANS_PATIENCE: Final = 60.0


def _endpoint(phoenix: Phoenix, protocol: Literal["http", "grpc"]) -> str:
    if protocol == "http":
        return f"{phoenix.server.url}/v1/traces"
    return f"http://127.0.0.1:{phoenix.grpc_port}"


def _spans(phoenix: Phoenix, project: str) -> list[dict[str, Any]] | None:
    status, body = http_get(f"{phoenix.server.url}/v1/projects/{urllib.parse.quote(project)}/spans")
    if status != 200:
        return None
    spans: list[dict[str, Any]] = json.loads(body)["data"]
    return spans or None


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_the_repair_event_reaches_the_trace_backend(phoenix: Phoenix, protocol: Literal["http", "grpc"]) -> None:
    """Over OTLP/<protocol>, the span arrives with its toolturn.repair event and the event's attributes."""
    project = f"toolturn-e2e-{protocol}"
    run = subprocess.run(
        [
            sys.executable,
            str(APP),
            "traces",
            f"--endpoint={_endpoint(phoenix, protocol)}",
            f"--protocol={protocol}",
            f"--project={project}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr

    spans = wait_until(
        phoenix.server, f"spans of project {project}", lambda: _spans(phoenix, project), patience=SPANS_PATIENCE
    )
    repaired = [span for span in spans if any(e["name"] == names.EVENT_REPAIR for e in span["events"])]
    assert len(repaired) == 1, spans
    span = repaired[0]
    assert span["attributes"][names.REPAIRS_COUNT] == 1
    assert span["attributes"][names.REPAIRS_FORMS] == ["orphan_result"]
    assert span["attributes"][names.REPAIRS_LOSSY] is True
    assert span["attributes"][names.LANE] == LANE
    repairs = [event for event in span["events"] if event["name"] == names.EVENT_REPAIR]
    assert len(repairs) == 1, span["events"]
    attributes = repairs[0]["attributes"]
    assert attributes[names.REPAIR_FORM] == "orphan_result"
    assert attributes[names.REPAIR_LOSSY] is True
    assert attributes[names.REPAIR_TOOL_CALL_IDS] == [ORPHAN_ID]
    assert attributes[names.LANE] == LANE
