"""The LiteLLM proxy on loopback in front of the simulator: its documented config, and its process.

``proxy_config`` is the config the README documents: two models on a simulator (an OpenAI one and
an Anthropic one) and, with ``callback``, otel-toolturn's callback in ``litellm_settings``; without
it the config is otherwise the same. ``start_proxy`` starts ``litellm --config`` (the
``litellm[proxy]`` extra, from this interpreter's environment) on a free loopback port, offline,
with this repository importable and the extra environment given; the caller waits for it
(``servers.running``). The end-to-end test and ``bench.gateway`` start their proxies here.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import pytest
import yaml

from .servers import SETUP_HINT, Server, free_port, start

MASTER_KEY: Final = "sk-proxy-test-0123456789abcdefghijklmnopqrstuvwxyz"
PROXY_PATIENCE: Final = 180.0
"""Seconds a proxy may take to answer its liveliness check (it imports much of LiteLLM first)."""
CALLBACK: Final = "otel_toolturn.integrations.litellm_proxy.callback"
REPO: Final = Path(__file__).resolve().parents[2]


def proxy_config(base_url: str, *, callback: bool = True) -> dict[str, object]:
    """The documented proxy config: ``gpt-sim`` and ``claude-sim`` on the simulator at ``base_url``, the callback."""
    config: dict[str, object] = {
        "model_list": [
            {
                "model_name": "gpt-sim",
                "litellm_params": {"model": "openai/gpt-4o-mini", "api_base": f"{base_url}/v1", "api_key": "sk-sim"},
            },
            {
                "model_name": "claude-sim",
                "litellm_params": {"model": "anthropic/claude-sonnet-4-5", "api_base": base_url, "api_key": "sk-sim"},
            },
        ],
    }
    if callback:
        config["litellm_settings"] = {"callbacks": CALLBACK}
    return config


def proxy_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The proxy's environment beyond the inherited one: its key, offline, this repository importable, ``extra``."""
    return {
        "LITELLM_MASTER_KEY": MASTER_KEY,
        "LITELLM_OFFLINE_MODE": "true",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": str(REPO),
        **extra,
    }


def start_proxy(config: Mapping[str, object], env: Mapping[str, str], *, workdir: Path, name: str) -> Server:
    """``litellm --config`` with ``config`` written in ``workdir``, on a free loopback port, with ``env`` added."""
    binary = shutil.which("litellm", path=str(Path(sys.executable).parent))
    if binary is None:
        pytest.fail(f"the litellm CLI is not installed (the litellm extra): {SETUP_HINT}", pytrace=False)
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(dict(config)), encoding="utf-8")
    port = free_port()
    argv = [binary, "--config", str(path), "--host", "127.0.0.1", "--port", str(port)]
    return start(name, argv, url=f"http://127.0.0.1:{port}", workdir=workdir, env=env)
