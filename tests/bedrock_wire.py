"""A real boto3 ``bedrock-runtime`` client on a simulator, and Converse transcripts in the service's spelling.

``bedrock_client(base_url)`` sends to the simulator with fake credentials (no network, no retries
unless asked). ``user``, ``assistant``, ``use``, ``result`` and ``text`` build messages and blocks;
``INTERRUPTED`` and ``TRIMMED`` are the two broken histories the Bedrock tests send: a call left
without its result, and a result whose call was trimmed away.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any, Final

import boto3  # type: ignore[import-untyped]
from botocore.config import Config

MODEL: Final = "anthropic.claude-3-haiku-20240307-v1:0"
"""A model id with a ``:`` in it, which botocore percent-encodes in the path."""


def bedrock_client(base_url: str, *, attempts: int = 1) -> Any:
    """A boto3 ``bedrock-runtime`` client on ``base_url`` (``attempts``: botocore's total attempts per call)."""
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=base_url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": attempts, "mode": "standard"}),
    )


@contextlib.asynccontextmanager
async def aio_bedrock_client(base_url: str, *, attempts: int = 1) -> AsyncIterator[Any]:
    """An aiobotocore ``bedrock-runtime`` client on ``base_url``, as ``bedrock_client`` (open while in use)."""
    from aiobotocore.config import AioConfig  # noqa: PLC0415 - only the aiobotocore tests need it
    from aiobotocore.session import get_session  # noqa: PLC0415

    async with get_session().create_client(
        "bedrock-runtime",
        endpoint_url=base_url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=AioConfig(retries={"total_max_attempts": attempts, "mode": "standard"}),
    ) as client:
        yield client


def text(value: str) -> dict[str, object]:
    return {"text": value}


def user(*blocks: object) -> dict[str, object]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: object) -> dict[str, object]:
    return {"role": "assistant", "content": list(blocks)}


def use(call_id: str, name: str = "lookup") -> dict[str, object]:
    return {"toolUse": {"toolUseId": call_id, "name": name, "input": {"key": "a"}}}


def result(call_id: str, output: str = "found") -> dict[str, object]:
    return {"toolResult": {"toolUseId": call_id, "content": [{"text": output}]}}


INTERRUPTED: Final = (
    user(text("Look both up.")),
    assistant(use("tooluse_1"), use("tooluse_2")),
    user(result("tooluse_1")),
    assistant(text("One is in.")),
    user(text("Go on.")),
)
"""A call left without its result: the second of two parallel calls was interrupted."""

TRIMMED: Final = (
    user(result("tooluse_gone")),
    user(text("Where were we?")),
)
"""A result whose call was trimmed away by a history window (the result now answers nothing)."""

BROKEN: Final = {"interrupted": INTERRUPTED, "trimmed": TRIMMED}
"""Each broken history by name, with the repair form it needs (``REPAIR_OF``)."""

REPAIR_OF: Final = {"interrupted": "missing_result", "trimmed": "orphan_result"}

TOOL_CONFIG: Final = {
    "tools": [{"toolSpec": {"name": "lookup", "inputSchema": {"json": {"type": "object"}}}}],
}

ANTHROPIC_VERSION: Final = "bedrock-2023-05-31"
INVOKE_BROKEN: Final[dict[str, list[dict[str, object]]]] = {
    "interrupted": [
        {"role": "user", "content": "Look both up."},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}},
                {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "found"}]},
        {"role": "assistant", "content": "One is in."},
        {"role": "user", "content": "Go on."},
    ],
    "trimmed": [
        {"role": "user", "content": "Look it up."},
        {"role": "assistant", "content": "Looking."},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "found"}]},
    ],
}
"""The two breaks in an Anthropic Messages body: a call left without its result, a result whose call was trimmed."""
INVOKE_CASES: Final = [(name, streamed) for name in sorted(INVOKE_BROKEN) for streamed in (False, True)]


def anthropic_body(messages: list[dict[str, object]]) -> bytes:
    """An InvokeModel body in Anthropic Messages JSON, as Bedrock takes it."""
    return json.dumps({"anthropic_version": ANTHROPIC_VERSION, "max_tokens": 256, "messages": messages}).encode()
