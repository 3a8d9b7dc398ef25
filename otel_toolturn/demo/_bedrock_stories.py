"""The Amazon Bedrock stories, on boto3's ``bedrock-runtime`` client and its ``converse`` call.

A sliding window (as Strands' conversation manager keeps one) that opens on a ``toolResult`` whose
call it trimmed away, and parallel calls interrupted by Ctrl-C after the first result.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

import boto3  # type: ignore[import-untyped]
from botocore.config import Config
from botocore.exceptions import ClientError

from otel_toolturn.demo._agent import CARRY_ON, KEY, Agent, DemoSdk, Story, scripted_calls
from otel_toolturn.simulator import ScriptedTurn, Simulator

MODEL: Final = "anthropic.claude-sonnet-4-5-20250929-v1:0"
REGION: Final = "us-east-1"


def _tool(name: str, description: str) -> dict[str, object]:
    """A ``toolSpec`` taking any JSON object."""
    return {"toolSpec": {"name": name, "description": description, "inputSchema": {"json": {"type": "object"}}}}


TOOL_CONFIG: Final = {"tools": [_tool("read_file", "Read a file."), _tool("bash", "Run a shell command.")]}
WINDOW: Final = 5
"""The sliding window's size in messages: the agent sends only the last ``WINDOW`` of its history."""

Message = dict[str, Any]


class BedrockRuntime(Protocol):
    """What the stories use of boto3's ``bedrock-runtime`` client."""

    def converse(self, **request: object) -> dict[str, Any]: ...

    def close(self) -> None: ...


def _ask(agent: Agent[BedrockRuntime], history: list[Message]) -> Message:
    """One ``converse`` request of the demo's agent over ``history``, with its tools; the reply's message."""
    reply = agent.client.converse(modelId=MODEL, messages=history, toolConfig=TOOL_CONFIG)
    message: Message = reply["output"]["message"]
    return message


def _said(message: Message) -> str:
    """A short account of a reply: its text."""
    return '"' + "".join(b["text"] for b in message["content"] if "text" in b) + '"'


def _uses(message: Message) -> list[Message]:
    """The ``toolUse`` blocks of a reply, in order."""
    return [b["toolUse"] for b in message["content"] if "toolUse" in b]


def _result(call_id: str, output: str) -> Message:
    """A ``toolResult`` block answering ``call_id`` with ``output`` as text."""
    return {"toolResult": {"toolUseId": call_id, "content": [{"text": output}]}}


def sliding_window(agent: Agent[BedrockRuntime]) -> None:
    """The agent keeps the last ``WINDOW`` messages; the cut falls between a call and its result."""
    history: list[Message] = [
        {"role": "user", "content": [{"text": "Why did last night's deploy fail?"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "tooluse_log", "name": "read_file", "input": {}}}]},
        {"role": "user", "content": [_result("tooluse_log", "upload: timed out after 30s")]},
        {"role": "assistant", "content": [{"text": "The upload step timed out after 30 seconds."}]},
        {"role": "user", "content": [{"text": "Raise its timeout to 60 seconds."}]},
    ]
    reply: list[Message] = []

    def ask() -> str:
        reply.append(_ask(agent, history[-WINDOW:]))
        return f"{len(_uses(reply[0]))} tool call"

    turn = ScriptedTurn(text="Editing the config.", calls=scripted_calls(("bash", {"command": "sed -i s/30/60/"})))
    if not agent.send("the model asks to run a command", ask, answer=turn):
        return
    (call,) = _uses(reply[0])
    history += [reply[0], {"role": "user", "content": [_result(call["toolUseId"], "done")]}]
    agent.send(
        f"the window keeps the last {WINDOW} messages",
        lambda: _said(_ask(agent, history[-WINDOW:])),
        answer=CARRY_ON,
    )


def interrupted_parallel_calls(agent: Agent[BedrockRuntime]) -> None:
    """Two parallel reads; Ctrl-C after the first; the user types "continue"."""
    history: list[Message] = [{"role": "user", "content": [{"text": "Tidy up the config loader."}]}]
    reply: list[Message] = []

    def ask() -> str:
        reply.append(_ask(agent, history))
        return f"{len(_uses(reply[0]))} tool calls"

    turn = ScriptedTurn(
        text="Reading both files.",
        calls=scripted_calls(("read_file", {"path": "loader.py"}), ("read_file", {"path": "schema.py"})),
    )
    if not agent.send("the model asks for two reads", ask, answer=turn):
        return
    first = _uses(reply[0])[0]
    history += [
        reply[0],
        {"role": "user", "content": [_result(first["toolUseId"], "def load(): ..."), {"text": "continue"}]},
    ]
    agent.send('Ctrl-C, then "continue"', lambda: _said(_ask(agent, history)), answer=CARRY_ON)


def _client(sim: Simulator) -> BedrockRuntime:
    """boto3's ``bedrock-runtime`` client on the simulator: dummy credentials, one attempt per call."""
    client: BedrockRuntime = boto3.client(
        "bedrock-runtime",
        endpoint_url=sim.base_url,
        region_name=REGION,
        aws_access_key_id=KEY,
        aws_secret_access_key=KEY,
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
    return client


def _refusal(error: Exception) -> tuple[int, str] | None:
    if isinstance(error, ClientError) and error.response.get("Error", {}).get("Code") == "ValidationException":
        return int(error.response["ResponseMetadata"]["HTTPStatusCode"]), str(error.response["Error"]["Message"])
    return None


SDK: Final[DemoSdk[BedrockRuntime]] = DemoSdk(
    client=_client,
    refusal=_refusal,
    stories=(
        Story(title="a sliding window that cut a call from its result", lane="bedrock converse", play=sliding_window),
        Story(title="interrupted parallel calls", lane="bedrock converse", play=interrupted_parallel_calls),
    ),
)
