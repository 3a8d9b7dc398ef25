"""Real servers for the end-to-end tests: found, started on loopback, awaited, stopped by pid.

Each server runs as its own process in a temporary folder, on a free high port of 127.0.0.1, with
its output in a log file. A server that is missing or does not become ready fails the test with
the reason and the end of its log; nothing is skipped. ``Server.stop`` ends exactly the process
(and its process group) that ``start`` created.

Also the handles the fixtures yield: ``Webhook`` (what Alertmanager posted) and ``Phoenix``
(the trace backend's URLs), and ``APP``, the instrumented application the tests run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NoReturn, TypeVar

import pytest

SETUP_HINT: Final = "run `bash tests/setup.sh`, which installs it"
PHOENIX_VENV_ENV: Final = "OTEL_TOOLTURN_PHOENIX_VENV"
APP: Final = Path(__file__).with_name("app.py")
"""The instrumented application the tests run (see its docstring)."""

T = TypeVar("T")


def require_binary(name: str, *, package: str) -> str:
    """The path of executable ``name``; fails the test (never skips) when it is not installed."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed (Debian package {package}): {SETUP_HINT}", pytrace=False)
    return found


def phoenix_binary() -> str:
    """``phoenix`` from its own virtual environment, found by the same rule as tests/setup.sh."""
    venv = os.environ.get(PHOENIX_VENV_ENV)
    if not venv:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        venv = str(Path(cache) / "otel-toolturn" / "phoenix-venv")
    binary = Path(venv) / "bin" / "phoenix"
    if not binary.is_file():
        pytest.fail(f"arize-phoenix is not installed at {binary}: {SETUP_HINT}", pytrace=False)
    return str(binary)


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now (from the kernel's high range)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(kw_only=True)
class Server:
    """One started server process: its name, base URL, process and log file."""

    name: str
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the server's output."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def fail(self, reason: str) -> NoReturn:
        """Fail the test with ``reason`` and the end of the server's log."""
        pytest.fail(f"{self.name}: {reason}\n--- last lines of {self.log.name}:\n{self.log_tail()}", pytrace=False)

    def stop(self) -> None:
        """Stop the process started for this server (SIGTERM to its group, SIGKILL after 10 s)."""
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def start(
    name: str,
    argv: Sequence[str],
    *,
    url: str,
    workdir: Path,
    env: Mapping[str, str] | None = None,
) -> Server:
    """Start ``argv`` in ``workdir`` in a process group of its own, output to ``<workdir>/<name>.log``."""
    log = workdir / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            list(argv),
            cwd=workdir,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Server(name=name, url=url, process=process, log=log)


def http_get(url: str, *, timeout: float = 5.0) -> tuple[int, bytes]:
    """GET ``url``: the status and the body (an HTTP error status is returned, not raised)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:  # the error holds the response and its socket: closed here, not left to the collector
            return error.code, error.read()


def wait_until(server: Server, what: str, probe: Callable[[], T | None], *, patience: float) -> T:
    """Poll ``probe`` until it returns a value; fail naming ``what`` if the server exits first.

    ``patience`` bounds the wait for a server that hangs (seconds); it is not a performance check.
    """
    deadline = time.monotonic() + patience
    while True:
        if server.process.poll() is not None:
            server.fail(f"exited with status {server.process.returncode} while waiting for {what}")
        try:
            found = probe()
        except (OSError, urllib.error.URLError):
            found = None
        if found is not None:
            return found
        if time.monotonic() > deadline:
            server.fail(f"no {what} after {patience:.0f} s")
        time.sleep(0.2)


@contextlib.contextmanager
def running(server: Server, path: str, *, patience: float) -> Iterator[Server]:
    """The started ``server`` once ``GET <url><path>`` answers 200; stopped by pid on the way out."""
    try:
        wait_ready(server, path, patience=patience)
        yield server
    finally:
        server.stop()


def wait_ready(server: Server, path: str, *, patience: float) -> None:
    """Wait until ``GET <url><path>`` answers 200."""

    def ready() -> bool | None:
        status, _ = http_get(server.url + path, timeout=2)
        return True if status == 200 else None

    wait_until(server, f"200 from {path}", ready, patience=patience)


@dataclass(kw_only=True)
class Webhook:
    """The alert receiver: every JSON body posted to it, in arrival order."""

    url: str
    received: list[dict[str, Any]] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, match: Callable[[dict[str, Any]], bool], *, patience: float) -> dict[str, Any]:
        """The first posted alert (one entry of a body's ``alerts``) that ``match`` accepts."""

        def first() -> dict[str, Any] | None:
            alerts = (alert for body in self.received for alert in body.get("alerts", []))
            return next((dict(alert) for alert in alerts if match(alert)), None)

        with self.arrived:
            found = self.arrived.wait_for(first, timeout=patience)
        if found is None:
            pytest.fail(f"no matching alert reached the webhook in {patience:.0f} s; received: {self.received}")
        return found


@dataclass(frozen=True, kw_only=True)
class Phoenix:
    """The running trace backend: its HTTP server (UI, API, OTLP/HTTP) and its OTLP/gRPC port."""

    server: Server
    grpc_port: int
