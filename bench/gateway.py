"""The LiteLLM proxy's throughput with otel-toolturn's callback, side by side with the same proxy without it.

Three proxies run at once on loopback (``tests.e2e.litellm_proxy``, as the end-to-end test starts
one), in front of one provider simulator (``otel_toolturn.simulator``, in a process of its own), in
the same environment and with the same config but its callback (``proxies``): ``bare``, none;
``otel-toolturn``, the documented one; ``SDK only``, the floor any OpenTelemetry callback pays
(``bench._proxy_floor``: the SDK set up as otel-toolturn sets it up, so the proxy's own frameworks
trace themselves too, and a span and two metric points per call). The SDK exports traces, metrics
and logs as OTLP over HTTP to a sink in this process that reads each export and keeps nothing, as
a proxy exporting to a collector does.

The client sends the realistic session (``bench._session``: about 350 messages, 0.63 MB) to the
Anthropic-native ``/v1/messages`` route, ``--concurrency`` sessions at once, each its own (its
first message names it), one request in flight each, growing by one round per request and starting
over after ``SESSION_ROUNDS`` rounds (``Session``). The proxies take turns in blocks of a few
seconds, after a warm-up block each: rounds of one block per proxy, the order rotating from round
to round. A block's throughput is its requests answered / its seconds (its last answer included);
the proxy's CPU time per request is its process group's (from ``/proc``), which keeps other
processes' load out, as the overhead bench's CPU time does. Each measured proxy's figure is divided
by the bare proxy's in the same round. Reported: the median of these ratios over the rounds with
its 95% interval (throughput: 1.00x is free, higher is better; CPU per request: lower is better),
each proxy's median requests per second and CPU milliseconds per request, and the requests
answered. Every request must be answered 200: any other answer ends the run.

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

SIDES: Final = ("bare", "otel-toolturn", "SDK only")
"""The proxies: no callback, otel-toolturn's, and the floor's (``bench._proxy_floor``)."""
MEASURED: Final = SIDES[1:]
FLOOR: Final = "bench._proxy_floor.callback"
MODEL: Final = "claude-sim"
CONCURRENCY: Final = 8
BLOCK: Final = {False: 10.0, True: 5.0}
"""Seconds a block sends to one proxy (full run, ``--quick``)."""
ROUNDS: Final = {False: 12, True: 6}
"""Blocks per proxy after the warm-up (full run, ``--quick``): one each per round."""


def proxies(base_url: str, sink: str) -> dict[str, tuple[dict[str, object], dict[str, str]]]:
    """Each side's proxy config and environment: the simulator at ``base_url``, OTLP to ``sink``.

    They differ only in the config's callback: none, otel-toolturn's (``proxy_config``), the floor's.
    """
    env = proxy_environment(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": sink,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_SERVICE_NAME": "litellm-proxy",
        }
    )
    floor = {**proxy_config(base_url, callback=False), "litellm_settings": {"callbacks": FLOOR}}
    configs = {
        "bare": proxy_config(base_url, callback=False),
        "otel-toolturn": proxy_config(base_url),
        "SDK only": floor,
    }
    return {side: (configs[side], dict(env)) for side in SIDES}


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


def order(rounds: int) -> list[str]:
    """The sides' turns after the warm-up: ``rounds`` rounds of one block each, the order rotating per round."""
    return [side for r in range(rounds) for side in (SIDES * 2)[r % 3 : r % 3 + 3]]


@dataclass(frozen=True, kw_only=True)
class Figures:
    """A run's figures (see the module docstring), per side."""

    concurrency: int
    block_s: float
    rounds: int
    ratio: dict[str, float]
    """Per measured side, the median over rounds of its throughput / the bare proxy's."""
    interval: dict[str, tuple[float, float]]
    cpu_ratio: dict[str, float]
    """Per measured side, the median over rounds of its proxy CPU time per request / the bare proxy's."""
    cpu_interval: dict[str, tuple[float, float]]
    rates: dict[str, float]
    """Each side's median requests per second over its blocks."""
    cpu_ms: dict[str, float]
    """Each side's median proxy CPU milliseconds per request over its blocks."""
    answered: dict[str, int]
    """Each side's requests answered (200) over its blocks."""


def measure(*, quick: bool, concurrency: int) -> Figures:
    """The three proxies in front of one simulator, in turns (see the module docstring)."""
    seconds = BLOCK[quick]
    with tempfile.TemporaryDirectory() as folder, simulator() as base_url, sink() as otlp:
        servers = {
            side: start_proxy(config, env, workdir=_folder(Path(folder), side), name=f"litellm-proxy-{side}")
            for side, (config, env) in proxies(base_url, otlp).items()
        }
        with contextlib.ExitStack() as stack:
            for server in servers.values():
                stack.enter_context(running(server, "/health/liveliness", patience=PROXY_PATIENCE))
            sessions = [Session(i) for i in range(concurrency)]
            for side in SIDES:
                block(side, servers[side], sessions, seconds)
            blocks = [block(side, servers[side], sessions, seconds) for side in order(ROUNDS[quick])]
    rounds = [{b.side: b for b in blocks[i : i + 3]} for i in range(0, len(blocks), 3)]
    ratios = {side: [r[side].rate / r["bare"].rate for r in rounds] for side in MEASURED}
    cpu_ratios = {side: [r[side].cpu_per_request / r["bare"].cpu_per_request for r in rounds] for side in MEASURED}
    return Figures(
        concurrency=concurrency,
        block_s=seconds,
        rounds=len(rounds),
        ratio={side: statistics.median(values) for side, values in ratios.items()},
        interval={side: lockstep.median_interval(values) for side, values in ratios.items()},
        cpu_ratio={side: statistics.median(values) for side, values in cpu_ratios.items()},
        cpu_interval={side: lockstep.median_interval(values) for side, values in cpu_ratios.items()},
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
        f" {figures.rounds} rounds of {figures.block_s:.0f} s blocks per proxy."
    )
    print("requests/s, CPU ms/request: medians over a proxy's blocks. Ratios: / the bare proxy's in the same round,")
    print("median over rounds with its 95% interval (throughput: higher is better; CPU per request: lower).\n")
    print(f"{'proxy':<15}{'requests/s':>11}{'CPU ms/req':>11}{'answered':>9}{'throughput':>24}{'CPU per request':>24}")
    for side in SIDES:
        row = f"{side:<15}{figures.rates[side]:>11.2f}{figures.cpu_ms[side]:>11.1f}{figures.answered[side]:>9}"
        if side in MEASURED:
            (low, high), (cpu_low, cpu_high) = figures.interval[side], figures.cpu_interval[side]
            row += f"{f'{figures.ratio[side]:.3f}x ({low:.3f}-{high:.3f})':>24}"
            row += f"{f'{figures.cpu_ratio[side]:.3f}x ({cpu_low:.3f}-{cpu_high:.3f})':>24}"
        print(row)


if __name__ == "__main__":
    main()
