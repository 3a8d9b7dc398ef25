"""The envelope of an OpenAI body as the API writes it, for tests that build one: Chat and Responses.

Each test support module fills the envelope with the choices, output and usage its case needs.
"""

from __future__ import annotations


def chat_envelope(model: str, choices: list[dict[str, object]], *, chunk: bool = False) -> dict[str, object]:
    """A ``chat.completion`` (``chunk``: a ``chat.completion.chunk``) with id ``chatcmpl-1`` holding ``choices``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk" if chunk else "chat.completion",
        "created": 1,
        "model": model,
        "choices": choices,
    }


def response_envelope(model: str, status: str, output: list[dict[str, object]]) -> dict[str, object]:
    """A ``response`` with id ``resp_1`` in ``status`` holding ``output``."""
    return {"id": "resp_1", "object": "response", "created_at": 1, "model": model, "status": status, "output": output}
