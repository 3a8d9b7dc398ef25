"""A real LiteLLM proxy in front of the simulator, otel-toolturn named in its config: it forwards repaired requests.

The test starts ``litellm --config`` (the ``litellm[proxy]`` extra) on loopback with the
documented config (``litellm_settings: callbacks: otel_toolturn.integrations.litellm_proxy.callback``)
and OTLP pointed at an in-test receiver, sends broken transcripts with the real openai and
anthropic SDKs (OpenAI-compatible route to an OpenAI and an Anthropic model; the Anthropic-native
``/v1/messages`` route, plain and streamed), and checks what the simulator received and what the
proxy process exported. A proxy that cannot start fails the test with the end of its log.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import anthropic
import openai
import pytest

from otel_toolturn import validate
from otel_toolturn.simulator import Simulator
from tests.transcripts import A, R, U, build, c, t

from .litellm_proxy import MASTER_KEY, PROXY_PATIENCE, proxy_config, proxy_environment, start_proxy
from .otlp_receiver import Received, otlp_receiver
from .servers import Server, running, wait_until

pytestmark = pytest.mark.e2e

EXPORT_PATIENCE: Final = 60.0
MISSING: Final = (U("read a"), A(t("Reading."), c("call_1", "read")), U("and now?"))
ORPHAN: Final = (U("read a"), R("call_9", "stray"), U("go on"))


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
    env = proxy_environment(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver[0],
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_METRICS_EXPORTER": "otlp",
            "OTEL_LOGS_EXPORTER": "none",
            "OTEL_BSP_SCHEDULE_DELAY": "200",
            "OTEL_METRIC_EXPORT_INTERVAL": "500",
            "OTEL_SERVICE_NAME": "litellm-proxy",
        }
    )
    workdir = tmp_path_factory.mktemp("litellm-proxy")
    server = start_proxy(proxy_config(sim.base_url), env, workdir=workdir, name="litellm-proxy")
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
