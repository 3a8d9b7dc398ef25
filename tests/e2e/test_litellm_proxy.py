"""A real LiteLLM proxy in front of the simulator, otel-toolturn named in its config: it forwards repaired requests.

The test starts ``litellm --config`` (the ``litellm[proxy]`` extra) on loopback with the
documented config (``litellm_settings: callbacks: otel_toolturn.integrations.litellm_proxy.callback``)
and OTLP pointed at an in-test receiver, sends broken transcripts with the real openai and
anthropic SDKs (OpenAI-compatible route to an OpenAI and an Anthropic model; the Anthropic-native
``/v1/messages`` route, plain and streamed), and checks what the simulator received and what the
proxy process exported. A proxy that cannot start fails the test with the end of its log.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import anthropic
import openai
import pytest
import yaml

from otel_toolturn import validate
from otel_toolturn.simulator import Simulator
from tests.transcripts import A, R, U, build, c, t

from .otlp_receiver import Received, otlp_receiver
from .servers import SETUP_HINT, Server, free_port, running, start, wait_until

pytestmark = pytest.mark.e2e

MASTER_KEY: Final = "sk-proxy-test-0123456789abcdefghijklmnopqrstuvwxyz"
PROXY_PATIENCE: Final = 180.0
EXPORT_PATIENCE: Final = 60.0
MISSING: Final = (U("read a"), A(t("Reading."), c("call_1", "read")), U("and now?"))
ORPHAN: Final = (U("read a"), R("call_9", "stray"), U("go on"))
REPO: Final = Path(__file__).resolve().parents[2]


def proxy_config(sim: Simulator) -> dict[str, object]:
    """The documented proxy config: two models on the simulator, otel-toolturn's callback."""
    return {
        "model_list": [
            {
                "model_name": "gpt-sim",
                "litellm_params": {"model": "openai/gpt-4o-mini", "api_base": sim.openai_base_url, "api_key": "sk-sim"},
            },
            {
                "model_name": "claude-sim",
                "litellm_params": {
                    "model": "anthropic/claude-sonnet-4-5",
                    "api_base": sim.base_url,
                    "api_key": "sk-sim",
                },
            },
        ],
        "litellm_settings": {"callbacks": "otel_toolturn.integrations.litellm_proxy.callback"},
    }


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator() as simulator:
        yield simulator


@pytest.fixture(scope="module")
def receiver() -> Iterator[tuple[str, Received]]:
    with otlp_receiver() as found:
        yield found


@pytest.fixture(scope="module")
def proxy(sim: Simulator, receiver: tuple[str, Received], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The LiteLLM proxy, started by pid on a free loopback port, exporting OTLP to the receiver."""
    binary = shutil.which("litellm", path=str(Path(sys.executable).parent))
    if binary is None:
        pytest.fail(f"the litellm CLI is not installed (the litellm extra): {SETUP_HINT}", pytrace=False)
    workdir = tmp_path_factory.mktemp("litellm-proxy")
    config = workdir / "config.yaml"
    config.write_text(yaml.safe_dump(proxy_config(sim)), encoding="utf-8")
    port = free_port()
    env = {
        "LITELLM_MASTER_KEY": MASTER_KEY,
        "LITELLM_OFFLINE_MODE": "true",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": str(REPO),
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver[0],
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_BSP_SCHEDULE_DELAY": "200",
        "OTEL_METRIC_EXPORT_INTERVAL": "500",
        "OTEL_SERVICE_NAME": "litellm-proxy",
    }
    argv = [binary, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    server = start("litellm-proxy", argv, url=f"http://127.0.0.1:{port}", workdir=workdir, env=env)
    with running(server, "/health/liveliness", patience=PROXY_PATIENCE):
        yield server


def _wait_for_spans(proxy: Server, received: Received, count: int) -> list[dict[str, object]]:
    def enough() -> list[dict[str, object]] | None:
        with received.lock:
            spans = [s for s in received.spans if "toolturn.lane" in s["attributes"]]
        return spans if len(spans) >= count else None

    return wait_until(proxy, f"{count} exported call spans", enough, patience=EXPORT_PATIENCE)


def test_every_route_forwards_valid_requests_and_exports_their_repairs(
    proxy: Server, sim: Simulator, receiver: tuple[str, Received]
) -> None:
    """Chat to OpenAI and Anthropic models and native /v1/messages (plain, streamed) reach the provider valid."""
    _, received = receiver
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=MASTER_KEY, max_retries=0)
    native = anthropic.Anthropic(base_url=proxy.url, api_key=MASTER_KEY, max_retries=0)
    chat = build("openai.chat_completions", MISSING)
    messages = build("anthropic.messages", ORPHAN)
    checks: list[tuple[str, object]] = []

    with client, native:  # their connection pools closed with them, not left to the collector
        client.chat.completions.create(model="gpt-sim", messages=chat)  # type: ignore[arg-type]
        checks.append(("openai.chat_completions", sim.requests[-1]))
        client.chat.completions.create(model="claude-sim", messages=chat, max_tokens=64)  # type: ignore[arg-type]
        checks.append(("anthropic.messages", sim.requests[-1]))
        native.messages.create(model="claude-sim", messages=messages, max_tokens=64)  # type: ignore[arg-type]
        checks.append(("anthropic.messages", sim.requests[-1]))
        with native.messages.stream(model="claude-sim", messages=messages, max_tokens=64) as stream:  # type: ignore[arg-type]
            stream.get_final_message()
        checks.append(("anthropic.messages", sim.requests[-1]))

    for lane, request in checks:
        assert request.status == 200, request.error  # type: ignore[attr-defined]
        assert validate(request.body["messages"], lane=lane) == []  # type: ignore[attr-defined, arg-type]
    assert len(sim.requests) == 4

    spans = _wait_for_spans(proxy, received, 4)
    assert sorted(s["attributes"]["toolturn.lane"] for s in spans) == [  # type: ignore[index]
        "anthropic.messages",
        "anthropic.messages",
        "anthropic.messages",
        "openai.chat_completions",
    ]
    assert all("toolturn.repair" in s["events"] for s in spans)  # type: ignore[operator]

    def counted() -> bool | None:
        return True if received.total("toolturn.requests") == 4 else None

    wait_until(proxy, "toolturn.requests == 4 exported", counted, patience=EXPORT_PATIENCE)
