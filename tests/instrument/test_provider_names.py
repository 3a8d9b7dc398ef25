"""``gen_ai.provider.name`` by best knowledge: the client's class, else the host it sends to, from a bounded table."""

from __future__ import annotations

from typing import Any, Final, get_args

import httpx2
import openai
import pytest

from otel_toolturn.instrument import names
from otel_toolturn.instrument._config import PROVIDER_BY_HOST, ProviderName, provider_by_host
from tests.instrument.conftest import Instrument
from tests.instrument.wire import KEY, Wire

_MESSAGES: Final[Any] = [{"role": "user", "content": "go"}]


def test_the_host_table_names_only_registry_values_and_every_name_has_a_host_or_a_client() -> None:
    """Each table entry is a closed-set provider name; every name but the SDKs' own is reachable by a host.

    ``ollama`` is its SDK's alone: an OpenAI client pointed at Ollama's ``/v1`` speaks plain Chat.
    """
    assert {name for _, name in PROVIDER_BY_HOST} <= set(get_args(ProviderName))
    assert set(get_args(ProviderName)) - {name for _, name in PROVIDER_BY_HOST} == {"openai", "anthropic", "ollama"}


@pytest.mark.parametrize(
    ("host", "name"),
    [
        ("api.groq.com", "groq"),
        ("my-resource.openai.azure.com", "azure.ai.openai"),
        ("bedrock-runtime.us-east-1.amazonaws.com", "aws.bedrock"),
        ("us-central1-aiplatform.googleapis.com", "gcp.vertex_ai"),
        ("aiplatform.googleapis.com", "gcp.vertex_ai"),
        ("API.DEEPSEEK.COM", "deepseek"),
        ("api.openai.com", None),
        ("notapi.groq.com.evil.example", None),
        (None, None),
    ],
)
def test_a_host_is_named_by_its_suffix_on_a_dot_boundary(host: str | None, name: str | None) -> None:
    """The host's end must be a whole table entry (a look-alike host is no provider of the table); any case."""
    assert provider_by_host(host) == name


def test_an_openai_client_pointed_at_groq_records_groq(instrument: Instrument) -> None:
    """The openai SDK with Groq's base URL: the span and the counters say ``groq``."""
    otel = instrument()
    client = openai.OpenAI(
        api_key=KEY,
        base_url="https://api.groq.com/openai/v1",
        http_client=httpx2.Client(transport=Wire().transport()),
        max_retries=0,
    )
    client.chat.completions.create(model="llama", messages=_MESSAGES)
    (span,) = otel.call_spans()
    assert (span.attributes or {})[names.PROVIDER] == "groq"
    assert otel.total(names.REQUESTS.name, gen_ai__provider__name="groq") == 1


def test_an_azure_openai_client_records_azure_ai_openai(instrument: Instrument) -> None:
    """``AzureOpenAI`` is Azure's provider whatever its endpoint's host."""
    otel = instrument()
    client = openai.AzureOpenAI(
        api_key=KEY,
        api_version="2024-10-21",
        azure_endpoint="https://proxy.internal.example",
        http_client=httpx2.Client(transport=Wire().transport()),
        max_retries=0,
    )
    client.chat.completions.create(model="gpt-4o", messages=_MESSAGES)
    (span,) = otel.call_spans()
    assert (span.attributes or {})[names.PROVIDER] == "azure.ai.openai"
