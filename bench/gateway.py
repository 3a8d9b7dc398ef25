"""The LiteLLM proxy's throughput with otel-toolturn's callback, side by side with the same proxy without it.

Two proxies run at once on loopback (``tests.e2e.litellm_proxy``, as the end-to-end test starts
one), in front of one provider simulator (``otel_toolturn.simulator``, in a process of its own):
the documented config with otel-toolturn's callback, and the same config without it, in the same
environment (``proxies``). There the OpenTelemetry SDK the callback sets up exports traces,
metrics and logs as OTLP over HTTP to a sink in this process that reads each export and keeps
nothing, as a proxy exporting to a collector does.

The client sends the realistic session (``bench._session``: about 350 messages, 0.63 MB) to the
Anthropic-native ``/v1/messages`` route, ``--concurrency`` sessions at once, each its own (its
first message names it), one request in flight each, growing by one round per request and starting
over after ``SESSION_ROUNDS`` rounds (``Session``). The proxies take turns in blocks of a few
seconds, in the order A B B A A B ... (after a warm-up block each), and each block's throughput
(requests answered / the block's seconds, its last answer included) is divided by that of the
adjacent block of the other proxy. Reported: the median of these ratios (callback / bare; 1.00x is
free, higher is better) with its 95% interval, each proxy's median requests per second, and the
requests answered. Alongside, as the overhead bench reads CPU time to keep other processes' load
out: the proxy's own CPU time per request (its process group's, from ``/proc``), compared the
same way (callback / bare; lower is better). Every request must be answered 200: any other answer ends the run.

Run: ``python -m bench.gateway`` (``--quick`` for fewer, shorter blocks; ``--concurrency N``).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Final

from bench import lockstep
from bench._session import session, session_round
from bench.overhead import SESSION_ROUNDS, Conversation
from otel_toolturn.simulator import RecordedRequest, Simulator
from tests.e2e.litellm_proxy import (
    MASTER_KEY,
    PROXY_PATIENCE,
    proxy_config,
    proxy_environment,
    start_proxy,
)
from tests.e2e.servers import Server, running

SIDES: Final = ("bare", "otel-toolturn")
MODEL: Final = "claude-sim"
CONCURRENCY: Final = 8
BLOCK: Final = {False: 10.0, True: 5.0}
"""Seconds a block sends to one proxy (full run, ``--quick``)."""
PAIRS: Final = {False: 16, True: 6}
"""Blocks per proxy after the warm-up (full run, ``--quick``), taken in adjacent pairs."""


def proxies(base_url: str, sink: str) -> dict[str, tuple[dict[str, object], dict[str, str]]]:
    """Each side's proxy config and environment: the simulator at ``base_url``, OTLP to ``sink``.

    The two differ only in the config's callback (``proxy_config``).
    """
    env = proxy_environment(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": sink,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_SERVICE_NAME": "litellm-proxy",
        }
    )
    return {side: (proxy_config(base_url, callback=side == "otel-toolturn"), dict(env)) for side in SIDES}


class Session:
    """One client's session as request bodies: the realistic session, one round longer per request.

    ``index`` is written into its first message, so no two clients send the same conversation.
    Each message is serialised once; a body joins the messages of its request.
    """

    def __init__(self, index: int) -> None:
        base = session()
        base[0] = {**base[0], "content": f"{base[0]['content']} (session {index})"}
        rounds = [[json.dumps(m) for m in session_round(n)] for n in range(SESSION_ROUNDS)]
        self._messages = Conversation([json.dumps(m) for m in base], rounds)

    def next(self) -> bytes:
        """The body of the next request."""
        messages = ",".join(self._messages.next())
        return f'{{"model": "{MODEL}", "max_tokens": 64, "messages": [{messages}]}}'.encode()


class _Forgetful(Simulator):
    """The simulator, keeping each request's lane and status but not its body (a run sends gigabytes)."""

    def _record(self, request: RecordedRequest) -> None:
        super()._record(replace(request, body=None))


def serve_simulator() -> None:
    """Serve the simulator in this process: its base URL on the first line out, until standard input closes."""
    with _Forgetful() as sim:
        print(sim.base_url, flush=True)
        sys.stdin.read()


@contextlib.contextmanager
def simulator() -> Iterator[str]:
    """The simulator in a process of its own (``serve_simulator``); its base URL. Ended with its input."""
    root = str(Path(__file__).resolve().parents[1])
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.gateway", "--simulator"],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None  # noqa: S101 - set by Popen(stdin=PIPE)
    assert process.stdout is not None  # noqa: S101 - set by Popen(stdout=PIPE)
    try:
        yield process.stdout.readline().strip()
    finally:
        process.stdin.close()
        process.wait(timeout=60)


class _Discard(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        """Nothing logged."""


@contextlib.contextmanager
def sink() -> Iterator[str]:
    """An OTLP/HTTP endpoint on loopback that reads every export and answers 200, keeping nothing; its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Discard)
    thread = threading.Thread(target=server.serve_forever, name="otlp-sink", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@dataclass(frozen=True, kw_only=True)
class Block:
    """One block's requests to one proxy: how many were answered, in how many seconds, the proxy's CPU seconds."""

    side: str
    answered: int
    seconds: float
    cpu_s: float

    @property
    def rate(self) -> float:
        """Requests answered per second."""
        return self.answered / self.seconds

    @property
    def cpu_per_request(self) -> float:
        """The proxy's CPU seconds per request answered."""
        return self.cpu_s / self.answered


def cpu_seconds(group: int) -> float:
    """CPU seconds (user and system) so far of the live processes of process group ``group`` (Linux ``/proc``)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[2]) == group:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def block(side: str, server: Server, sessions: Sequence[Session], seconds: float) -> Block:
    """Each session sends to ``server``, one request at a time, until ``seconds`` have passed; every answer read."""
    host, port = server.url.removeprefix("http://").split(":")
    headers = {"content-type": "application/json", "x-api-key": MASTER_KEY, "anthropic-version": "2023-06-01"}
    answered = [0] * len(sessions)
    failures: list[str] = []
    deadline = time.monotonic() + seconds

    def drive(index: int) -> None:
        connection = http.client.HTTPConnection(host, int(port), timeout=300)
        try:
            while time.monotonic() < deadline and not failures:
                connection.request("POST", "/v1/messages", body=sessions[index].next(), headers=headers)
                response = connection.getresponse()
                reply = response.read()
                if response.status != 200:
                    failures.append(f"{side}: {response.status} {reply[:500]!r}")
                    return
                answered[index] += 1
        finally:
            connection.close()

    cpu = cpu_seconds(server.process.pid)
    started = time.perf_counter()
    threads = [threading.Thread(target=drive, args=(i,)) for i in range(len(sessions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - started
    cpu = cpu_seconds(server.process.pid) - cpu
    if failures:
        raise RuntimeError(f"a request was not answered 200: {failures[0]}")
    return Block(side=side, answered=sum(answered), seconds=took, cpu_s=cpu)


def order(pairs: int) -> list[str]:
    """The sides' turns after the warm-up: A B B A A B ..., ``pairs`` blocks each."""
    return [SIDES[(i + 1) // 2 % 2] for i in range(2 * pairs)]


@dataclass(frozen=True, kw_only=True)
class Figures:
    """A run's figures: the median ratio of adjacent blocks (callback / bare) and its interval, per side the rest."""

    concurrency: int
    block_s: float
    pairs: int
    ratio: float
    interval: tuple[float, float]
    cpu_ratio: float
    """The median over adjacent blocks of the callback's proxy CPU time per request / the bare proxy's."""
    cpu_interval: tuple[float, float]
    rates: dict[str, float]
    """Each side's median requests per second over its blocks."""
    cpu_ms: dict[str, float]
    """Each side's median proxy CPU milliseconds per request over its blocks."""
    answered: dict[str, int]
    """Each side's requests answered (200) over its blocks."""


def measure(*, quick: bool, concurrency: int) -> Figures:
    """Both proxies in front of one simulator, in turns (see the module docstring)."""
    seconds = BLOCK[quick]
    with tempfile.TemporaryDirectory() as folder, simulator() as base_url, sink() as otlp:
        servers = {
            side: start_proxy(config, env, workdir=_folder(Path(folder), side), name=f"litellm-proxy-{side}")
            for side, (config, env) in proxies(base_url, otlp).items()
        }
        with (
            running(servers["bare"], "/health/liveliness", patience=PROXY_PATIENCE),
            running(servers["otel-toolturn"], "/health/liveliness", patience=PROXY_PATIENCE),
        ):
            sessions = [Session(i) for i in range(concurrency)]
            for side in SIDES:
                block(side, servers[side], sessions, seconds)
            blocks = [block(side, servers[side], sessions, seconds) for side in order(PAIRS[quick])]
    pairs = [(a, b) if a.side == "otel-toolturn" else (b, a) for a, b in zip(blocks[0::2], blocks[1::2], strict=True)]
    ratios = [hooked.rate / bare.rate for hooked, bare in pairs]
    cpu_ratios = [hooked.cpu_per_request / bare.cpu_per_request for hooked, bare in pairs]
    return Figures(
        concurrency=concurrency,
        block_s=seconds,
        pairs=len(ratios),
        ratio=statistics.median(ratios),
        interval=lockstep.median_interval(ratios),
        cpu_ratio=statistics.median(cpu_ratios),
        cpu_interval=lockstep.median_interval(cpu_ratios),
        rates={side: statistics.median(b.rate for b in blocks if b.side == side) for side in SIDES},
        cpu_ms={side: 1000 * statistics.median(b.cpu_per_request for b in blocks if b.side == side) for side in SIDES},
        answered={side: sum(b.answered for b in blocks if b.side == side) for side in SIDES},
    )


def _folder(root: Path, side: str) -> Path:
    """A folder of its own for one proxy's config and log."""
    path = root / side
    path.mkdir()
    return path


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--simulator", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="fewer, shorter blocks")
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY, help="sessions sending at once (default: 8)")
    args = parser.parse_args(argv)
    if args.simulator:
        serve_simulator()
        return
    figures = measure(quick=args.quick, concurrency=args.concurrency)
    print(
        f"LiteLLM proxy, /v1/messages, the realistic session (350 msgs) growing, {figures.concurrency} at once;"
        f" {figures.pairs} pairs of {figures.block_s:.0f} s blocks."
    )
    print(f"{'proxy':<16}{'requests/s':>12}{'CPU ms/request':>16}{'answered 200':>14}  (medians over blocks)")
    for side in SIDES:
        print(f"{side:<16}{figures.rates[side]:>12.2f}{figures.cpu_ms[side]:>16.1f}{figures.answered[side]:>14}")
    low, high = figures.interval
    print(f"throughput, otel-toolturn / bare: {figures.ratio:.3f}x ({low:.3f}-{high:.3f})")
    low, high = figures.cpu_interval
    print(f"proxy CPU per request, otel-toolturn / bare: {figures.cpu_ratio:.3f}x ({low:.3f}-{high:.3f})")
    print("(median over adjacent blocks, with its 95% interval)")


if __name__ == "__main__":
    main()
