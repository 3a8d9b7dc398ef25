"""The Gemini story: a history summariser kept one of two function responses."""

from __future__ import annotations

from typing import Final

from google import genai
from google.genai import errors, types

from otel_toolturn.demo._agent import CARRY_ON, KEY, Agent, DemoSdk, Story, scripted_calls
from otel_toolturn.simulator import ScriptedTurn, Simulator


def _said(reply: types.GenerateContentResponse) -> str:
    """A short account of a reply: its text."""
    return f'"{reply.text or ""}"'


MODEL: Final = "gemini-3-pro-preview"
CONFIG: Final = types.GenerateContentConfig(
    tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="read_file", description="Read a file.")])],
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)


def pruned_result(agent: Agent[genai.Client]) -> None:
    """Two parallel reads on Gemini; a history summariser keeps only one of the two function responses."""
    history: list[types.Content] = [
        types.Content(role="user", parts=[types.Part(text="Compare the dev and prod configs.")])
    ]
    reply: list[types.GenerateContentResponse] = []

    def ask() -> str:
        reply.append(agent.client.models.generate_content(model=MODEL, contents=history, config=CONFIG))
        return f"{len(reply[0].function_calls or [])} function calls"

    reads = scripted_calls(("read_file", {"path": "dev.toml"}), ("read_file", {"path": "prod.toml"}))
    if not agent.send("the model asks for two reads", ask, answer=ScriptedTurn(calls=reads)):
        return
    called = reply[0].candidates[0].content if reply[0].candidates else None
    calls = reply[0].function_calls or []
    if called is None or not calls:
        return
    first = calls[0]
    kept = types.Part.from_function_response(name=first.name or "", response={"output": "debug = true"})
    kept.function_response.id = first.id  # type: ignore[union-attr]  # from_function_response always sets it
    history += [called, types.Content(role="user", parts=[kept])]
    agent.send(
        "the summariser kept 1 of 2 responses",
        lambda: _said(agent.client.models.generate_content(model=MODEL, contents=history, config=CONFIG)),
        answer=CARRY_ON,
    )


def _client(sim: Simulator) -> genai.Client:
    options = types.HttpOptions(base_url=sim.base_url, retry_options=types.HttpRetryOptions(attempts=1))
    return genai.Client(api_key=KEY, http_options=options)


def _refusal(error: Exception) -> tuple[int, str] | None:
    if isinstance(error, errors.ClientError):
        return error.code, str(error.message)
    return None


SDK: Final = DemoSdk(
    client=_client,
    refusal=_refusal,
    stories=(Story(title="a summariser pruned one of two results", lane="gemini", play=pruned_result),),
)
