"""A stdlib OTLP/HTTP receiver on loopback: keeps every span and metric point a process exports to it.

Decodes ``POST /v1/traces`` and ``/v1/metrics`` (protobuf) with the OpenTelemetry proto package;
answers every other path 200 with nothing kept.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def _value(value: AnyValue) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    return getattr(value, kind) if kind else None


@dataclass
class Received:
    """What arrived: spans (name, attributes, event names) and counter points (name, attributes, value)."""

    spans: list[dict[str, Any]] = field(default_factory=list)
    points: list[tuple[str, dict[str, object], float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def total(self, name: str, **match: object) -> float:
        """The latest cumulative value of counter ``name``, summed over attribute sets including ``match``."""
        wanted = {k.replace("__", "."): v for k, v in match.items()}
        latest: dict[tuple[tuple[str, object], ...], float] = {}
        with self.lock:
            for point_name, attributes, value in self.points:
                if point_name == name and all(attributes.get(k) == w for k, w in wanted.items()):
                    latest[tuple(sorted(attributes.items()))] = value
        return sum(latest.values())


def _handler(received: Received) -> type[BaseHTTPRequestHandler]:
    class Receive(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path == "/v1/traces":
                request = ExportTraceServiceRequest.FromString(body)
                spans = [
                    {
                        "name": span.name,
                        "attributes": {a.key: _value(a.value) for a in span.attributes},
                        "events": [event.name for event in span.events],
                    }
                    for resource in request.resource_spans
                    for scope in resource.scope_spans
                    for span in scope.spans
                ]
                with received.lock:
                    received.spans.extend(spans)
            elif self.path == "/v1/metrics":
                metrics = ExportMetricsServiceRequest.FromString(body)
                points = [
                    (metric.name, {a.key: _value(a.value) for a in point.attributes}, float(point.as_int))
                    for resource in metrics.resource_metrics
                    for scope in resource.scope_metrics
                    for metric in scope.metrics
                    if metric.WhichOneof("data") == "sum"
                    for point in metric.sum.data_points
                ]
                with received.lock:
                    received.points.extend(points)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            del format, args

    return Receive


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, Received]]:
    """A running receiver: its base URL and what it received; stopped on the way out."""
    received = Received()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(received))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
