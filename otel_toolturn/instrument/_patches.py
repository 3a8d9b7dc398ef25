"""What is patched, from one table that ``instrument`` and ``uninstrument`` both read.

Role: the thin edge between the SDKs and the core. Each wrapper is ``(wrapped, instance, args,
kwargs)``; it converts the call's keyword arguments (``_request``), records (``_record``) and
hands back what the SDK returned, watched (``_proxies``). It never decides a repair or a stream
verdict itself.

The table (``TARGETS``) patches resource methods; the helpers route through them:

- openai ``chat.completions.create`` (plain, ``stream=True``; ``with_raw_response`` and
  ``with_streaming_response`` call it), ``chat.completions.stream()`` (calls ``create``),
  ``chat.completions.parse()`` (its own request: patched); ``responses.create`` / ``.stream()``
  (calls ``create``) / ``.parse()`` (patched). Sync and async.
- anthropic ``messages.create`` (plain and ``stream=True``), ``messages.stream()`` and
  ``messages.parse()`` (each its own request: patched), and the ``beta.messages`` equivalents.
- google-genai ``Models._generate_content`` / ``_generate_content_stream`` and their
  ``AsyncModels`` twins: each call of one is one HTTP request. The public ``generate_content`` /
  ``generate_content_stream`` call them once per request they send: once per automatic
  function calling round and per continuation hop, and chat sessions (``client.chats``) call the
  public methods. So every request such a loop sends is decided by the law on the ``contents`` it
  carries and recorded once, on its own span. The sync stream is a generator whose first step
  sends (``steps``: ``_proxies.watch_steps``); the async one returns an async generator once sent.
- groq, together, fireworks (``fireworks-ai``): each SDK's ``chat.completions.create`` (plain,
  ``stream=True``; ``with_raw_response`` and ``with_streaming_response`` call it), sync and async:
  Stainless-generated as the openai SDK is, speaking Chat Completions with HTTP code of their own. They
  hand each HTTP request (each retry) to httpx's ``Client.send`` / ``AsyncClient.send`` themselves, so
  that is their send hook.
- mistralai (Speakeasy-generated, HTTP code of its own over ``httpx2``): ``Chat.complete``,
  ``complete_async``, ``stream`` and ``stream_async``, each one call; it hands each HTTP request (each
  retry) to ``httpx2``'s ``Client.send`` / ``AsyncClient.send`` itself. Its calls are decided in the
  ``mistral`` dialect of the Chat lane; its streams' events carry the chunk in ``data``
  (``ResultTypes.read``).
- cohere: ``RawV2Client.chat`` and ``chat_stream`` and their ``AsyncRawV2Client`` twins, Fern-generated:
  every v2 chat goes through them (``V2Client.chat`` and ``chat_stream``, which ``ClientV2``,
  ``AsyncClientV2`` and ``Client.v2`` inherit and bind when made, call them; ``with_raw_response`` is
  them), so a client made before ``instrument`` is decided too. A Chat-shaped ``messages`` list (typed
  messages or dicts) read by the Chat lane, answered in Cohere's own format (read as
  ``_config.REPLY_FORMAT_OF`` says). ``chat`` returns the SDK's ``HttpResponse`` (its ``data`` the
  response); ``chat_stream`` returns a manager (``stream_manager``) whose entry sends and gives an
  ``HttpResponse`` whose ``data`` is the events' generator. The SDK hands each HTTP request (each
  retry) to httpx's ``Client.send`` / ``AsyncClient.send``.
- azure-ai-inference: ``ChatCompletionsClient.complete`` of ``azure.ai.inference`` and of
  ``azure.ai.inference.aio`` (plain, ``stream=True``: the SDK's ``StreamingChatCompletions`` /
  ``AsyncStreamingChatCompletions``; its responses and updates are its model objects, read as the wire's JSON
  by ``as_dict``). A call by ``messages`` is decided, and so is one by ``body`` as a dict (the whole payload,
  given by keyword or position: ``Target.payload``); a ``body`` of bytes or a file passes by unread. The SDK
  hands each HTTP request (each retry: azure-core's retry policy runs above it) to its pipeline's transport
  runner, azure-core's ``_TransportRunner.send`` / ``_AsyncTransportRunner.send``: its send hook. A
  ``TokenCredential`` fetches its token through a pipeline of its own while the call runs, so a call records
  only the sends of its own client's runner (``PendingCall``'s ``sender``).
- ollama: ``Client.chat`` and ``AsyncClient.chat`` (``call_or_steps``): Ollama's native ``/api/chat``, its
  ``messages`` decided in the ``ollama`` dialect of the Chat lane and its responses read in Ollama's own
  format. Not streamed, the response; with ``stream=True`` a generator (async: a coroutine returning an async
  generator) whose first step sends. The SDK hands each request to httpx's ``Client.send`` /
  ``AsyncClient.send`` (it sends with ``Client.stream``, which calls ``send``).
- The shared sends: an HTTP client's ``send`` that several SDKs hand their requests to is one target
  (``_http_sends``: httpx's for ``HTTPX_SDKS``, httpx2's for ``HTTPX2_SDKS``), patched when any SDK it
  serves is enabled. It records the pending call of any SDK it serves and passes every other send
  through untouched: a send with no call pending (every other user of the client), and a call of an SDK
  with a send hook of its own.
- botocore: ``BaseClient._make_api_call`` (every generated client method calls it; only bedrock-runtime's
  ``Converse`` and ``ConverseStream`` are instrumented) and ``Endpoint._send``, once per HTTP attempt
  (``_botocore`` says why these and not botocore's events); aiobotocore's subclasses of both
  (``AioBaseClient._make_api_call``, ``AioEndpoint._send``), coroutines, the same way.
- litellm: nothing here. With the ``litellm`` provider enabled, ``ToolTurnInstrumentor`` registers
  otel-toolturn's LiteLLM callback and wraps LiteLLM's entry points once LiteLLM is imported
  (``_litellm_watch``; their table: ``integrations._litellm_entries.ENTRIES``), and undoes both.

A call is recorded only once the SDK sends it. The wrapper decides the request at the call (the
law decides what is sent) and runs the SDK with the decision pending (``_pending``); the send
hooks, where the SDK hands each HTTP request to its HTTP client (openai ``_send_request``; for
anthropic, the ``httpx2`` client's shared ``send``; groq, together and fireworks, httpx's; google-genai
``BaseApiClient._request_once`` / ``_async_request_once``, botocore ``Endpoint._send``, azure-core's
transport runners' ``send``, once per attempt), make the record, count the request and make its span
current for the send. A call the SDK refuses before sending (the anthropic SDK's "Streaming is
required" for a large non-streamed ``max_tokens``, a missing ``model``, a body it cannot encode) and a
``stream()`` manager never entered start no span and count nothing; the SDK's exception reaches the caller unchanged. An
async call likewise: a coroutine never run records nothing. A transcript the law cannot read as the
SDK would send it (``_request.materialise``) goes to the SDK exactly as written, unrecorded.

Never breaking the host call: everything otel-toolturn does around the SDK call is guarded; on
any failure it is counted, logged at debug, and the call proceeds as uninstrumented. The SDK's
own exceptions reach the caller unchanged. A call made inside another patched call (a helper
that calls ``create``) is not recorded twice. A wrapper whose instrumentation was removed while
a bound copy of it was still held passes straight through.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import logging
import sys
import threading
import types
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from types import CoroutineType, ModuleType
from typing import Any, Final, Literal, cast
from urllib.parse import urlsplit

import wrapt
from opentelemetry.trace import Span

from otel_toolturn._vocab import Lane
from otel_toolturn.instrument._botocore import api_call_wrapper
from otel_toolturn.instrument._config import Provider, ProviderName, dialect_of, provider_by_host
from otel_toolturn.instrument._pending import PENDING, PendingCall, request_gate
from otel_toolturn.instrument._proxies import (
    ResultTypes,
    StreamManagerProxy,
    swap_http_data,
    swap_raw_stream,
    watch,
    watch_async_steps,
    watch_steps,
)
from otel_toolturn.instrument._request import Materialised, decide_request, law_reads, materialise, payload_reads
from otel_toolturn.instrument._telemetry import Telemetry
from otel_toolturn.instrument._withhold import current_scope

Kind = Literal["call", "steps", "call_or_steps", "stream_manager", "sdk_span", "send", "api_call", "gate"]
"""``call``: returns the response (or a stream, or a raw response). ``steps``: returns a generator
whose first step sends the request. ``call_or_steps``: a ``call``, or with ``stream=True`` a ``steps``
(async: a coroutine that, awaited, sends nothing and returns an async generator whose first step sends).
``stream_manager``: returns a manager whose entry sends. ``sdk_span``: a module function of the SDK that starts its
own call span (``owner`` empty).
``send``: where the SDK hands one HTTP request to its HTTP client (``lane``: unused). ``api_call``:
botocore's ``_make_api_call``, every operation of every client; only the lane's operations are
instrumented (``_botocore``). ``gate``: the SDK's method that sends a gated call's request
(``_pending.request_gate``; ``lane``: unused)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Target:
    """One patched method: where it lives, which lane it speaks, what it returns, sync or async."""

    provider: Provider | None
    """The SDK the method is of; ``None``: an HTTP client's ``send`` that the SDKs of ``serves`` share."""
    module: str
    owner: str
    method: str
    lane: Lane
    kind: Kind
    is_async: bool
    serves: frozenset[Provider] = frozenset()
    """A shared send: the SDKs whose pending calls it records; enabling any of them patches it."""
    gated: bool = False
    """A call whose SDK sends other requests while it runs: only sends inside its ``gate`` target are its request."""
    positional: tuple[str, ...] = ()
    """The parameters a caller may pass by position, in order (read as keywords; the SDK is called with keywords)."""
    payload: str | None = None
    """The parameter that, when given, is the whole request the SDK sends as it is, its other request parameters
    unused (azure-ai-inference's ``body``): a dict of it is the request read and decided, and the SDK is called
    with the decided dict in its place; anything else there (bytes, a file) passes by unread."""

    def enabled(self, providers: tuple[Provider, ...]) -> bool:
        """Whether the options' ``providers`` ask for this target."""
        if self.provider is None:
            return not self.serves.isdisjoint(providers)
        return self.provider in providers

    @property
    def sdk(self) -> Provider:
        """The SDK whose call this target decides (a call target's ``provider``)."""
        if self.provider is None:
            raise TypeError(f"{self.module}.{self.owner}.{self.method} is a shared send, of no one SDK")
        return self.provider

    @property
    def distribution(self) -> str:
        """The distribution the patched method ships in (a shared send: its HTTP client's, named as its module)."""
        return self.module if self.provider is None else _DISTRIBUTIONS[self.provider]


def _targets(
    provider: Provider,
    module: str,
    owners: tuple[str, str],
    lane: Lane,
    methods: Mapping[str, Kind],
) -> tuple[Target, ...]:
    """One target per method, for the sync owner and the async owner (in that order)."""
    return tuple(
        Target(
            provider=provider,
            module=module,
            owner=owner,
            method=method,
            lane=lane,
            kind=kind,
            is_async=is_async and kind in {"call", "send", "gate"},
        )
        for method, kind in methods.items()
        for owner, is_async in zip(owners, (False, True), strict=True)
    )


def _huggingface(module: str, owner: str, *, is_async: bool) -> tuple[Target, Target]:
    """huggingface_hub's ``chat_completion`` (gated: it may look a model up on the Hub first) and its gate."""
    chat = Target(
        provider="huggingface_hub",
        module=module,
        owner=owner,
        method="chat_completion",
        lane="openai.chat_completions",
        kind="call",
        is_async=is_async,
        gated=True,
        positional=("messages",),
    )
    return chat, dataclasses.replace(chat, method="_inner_post", kind="gate", gated=False, positional=())


def _genai(module: str, owner: str, method: str, kind: Kind, *, is_async: bool) -> Target:
    """One google-genai target (the ``gemini.generate_content`` lane)."""
    return Target(
        provider="google_genai",
        module=module,
        owner=owner,
        method=method,
        lane="gemini.generate_content",
        kind=kind,
        is_async=is_async,
    )


def _http_sends(module: str, serves: frozenset[Provider]) -> tuple[Target, ...]:
    """An HTTP client's ``send`` (sync, then async), one target serving every SDK of ``serves``."""
    return tuple(
        Target(
            provider=None,
            module=module,
            owner=owner,
            method="send",
            lane="openai.chat_completions",
            kind="send",
            is_async=is_async,
            serves=serves,
        )
        for owner, is_async in (("Client", False), ("AsyncClient", True))
    )


HTTPX_SDKS: Final[frozenset[Provider]] = frozenset(
    {"groq", "together", "fireworks", "cohere", "huggingface_hub", "ollama"}
)
"""The SDKs that hand each HTTP request to ``httpx``'s ``Client.send`` / ``AsyncClient.send`` themselves
(huggingface_hub before 2.0)."""
HTTPX2_SDKS: Final[frozenset[Provider]] = frozenset({"anthropic", "huggingface_hub", "mistralai"})
"""The SDKs that hand each HTTP request to ``httpx2``'s ``Client.send`` / ``AsyncClient.send`` themselves."""

_CALLS: Final[Mapping[str, Kind]] = {"create": "call", "parse": "call"}
_ANTHROPIC: Final[Mapping[str, Kind]] = {"create": "call", "parse": "call", "stream": "stream_manager"}
_SEND_REQUEST: Final[Mapping[str, Kind]] = {"_send_request": "send"}
_CREATE: Final[Mapping[str, Kind]] = {"create": "call"}
_CHAT: Final[Lane] = "openai.chat_completions"

TARGETS: Final[tuple[Target, ...]] = (
    *_targets(
        "openai",
        "openai.resources.chat.completions.completions",
        ("Completions", "AsyncCompletions"),
        "openai.chat_completions",
        _CALLS,
    ),
    *_targets(
        "openai", "openai.resources.responses.responses", ("Responses", "AsyncResponses"), "openai.responses", _CALLS
    ),
    *_targets(
        "anthropic",
        "anthropic.resources.messages.messages",
        ("Messages", "AsyncMessages"),
        "anthropic.messages",
        _ANTHROPIC,
    ),
    *_targets(
        "anthropic",
        "anthropic.resources.beta.messages.messages",
        ("Messages", "AsyncMessages"),
        "anthropic.messages",
        _ANTHROPIC,
    ),
    Target(
        provider="anthropic",
        module="anthropic._base_client",
        owner="",
        method="start_api_call_span",
        lane="anthropic.messages",
        kind="sdk_span",
        is_async=False,
    ),
    *_targets(
        "openai", "openai._base_client", ("SyncAPIClient", "AsyncAPIClient"), "openai.chat_completions", _SEND_REQUEST
    ),
    *_targets("groq", "groq.resources.chat.completions", ("Completions", "AsyncCompletions"), _CHAT, _CREATE),
    *_targets(
        "together",
        "together.resources.chat.completions",
        ("CompletionsResource", "AsyncCompletionsResource"),
        _CHAT,
        _CREATE,
    ),
    *_targets(
        "fireworks",
        "fireworks.resources.chat.completions",
        ("CompletionsResource", "AsyncCompletionsResource"),
        _CHAT,
        _CREATE,
    ),
    *(
        Target(
            provider="mistralai",
            module="mistralai.client.chat",
            owner="Chat",
            method=method,
            lane=_CHAT,
            kind="call",
            is_async=method.endswith("_async"),
        )
        for method in ("complete", "complete_async", "stream", "stream_async")
    ),
    *_huggingface("huggingface_hub.inference._client", "InferenceClient", is_async=False),
    *_huggingface("huggingface_hub.inference._generated._async_client", "AsyncInferenceClient", is_async=True),
    *_targets(
        "cohere",
        "cohere.v2.raw_client",
        ("RawV2Client", "AsyncRawV2Client"),
        _CHAT,
        {"chat": "call", "chat_stream": "stream_manager"},
    ),
    *(
        Target(
            provider="azure_ai_inference",
            module=module,
            owner="ChatCompletionsClient",
            method="complete",
            lane=_CHAT,
            kind="call",
            is_async=is_async,
            positional=("body",),
            payload="body",
        )
        for module, is_async in (("azure.ai.inference._patch", False), ("azure.ai.inference.aio._patch", True))
    ),
    *(
        Target(
            provider="azure_ai_inference",
            module=module,
            owner=owner,
            method="send",
            lane=_CHAT,
            kind="send",
            is_async=is_async,
        )
        for module, owner, is_async in (
            ("azure.core.pipeline._base", "_TransportRunner", False),
            ("azure.core.pipeline._base_async", "_AsyncTransportRunner", True),
        )
    ),
    *(
        Target(
            provider="ollama",
            module="ollama._client",
            owner=owner,
            method="chat",
            lane=_CHAT,
            kind="call_or_steps",
            is_async=is_async,
            positional=("model", "messages"),
        )
        for owner, is_async in (("Client", False), ("AsyncClient", True))
    ),
    *_http_sends("httpx", HTTPX_SDKS),
    *_http_sends("httpx2", HTTPX2_SDKS),
    _genai("google.genai.models", "Models", "_generate_content", "call", is_async=False),
    _genai("google.genai.models", "Models", "_generate_content_stream", "steps", is_async=False),
    _genai("google.genai.models", "AsyncModels", "_generate_content", "call", is_async=True),
    _genai("google.genai.models", "AsyncModels", "_generate_content_stream", "call", is_async=True),
    _genai("google.genai._api_client", "BaseApiClient", "_request_once", "send", is_async=False),
    _genai("google.genai._api_client", "BaseApiClient", "_async_request_once", "send", is_async=True),
    Target(
        provider="botocore",
        module="botocore.client",
        owner="BaseClient",
        method="_make_api_call",
        lane="bedrock.converse",
        kind="api_call",
        is_async=False,
    ),
    Target(
        provider="botocore",
        module="botocore.endpoint",
        owner="Endpoint",
        method="_send",
        lane="bedrock.converse",
        kind="send",
        is_async=False,
    ),
    Target(
        provider="botocore",
        module="aiobotocore.client",
        owner="AioBaseClient",
        method="_make_api_call",
        lane="bedrock.converse",
        kind="api_call",
        is_async=True,
    ),
    Target(
        provider="botocore",
        module="aiobotocore.endpoint",
        owner="AioEndpoint",
        method="_send",
        lane="bedrock.converse",
        kind="send",
        is_async=True,
    ),
)
"""Every patched method. ``instrument`` patches each one whose module imports; ``uninstrument`` restores them."""


BEDROCK_INVOKE_LANE: Final[Lane] = "anthropic.messages"
"""The lane of a bedrock-runtime ``InvokeModel`` body that is an Anthropic Messages request."""

_OWN_HTTP_CHAT: Final[frozenset[Provider]] = frozenset({"groq", "together", "fireworks"})
"""The Stainless SDKs of their own that speak Chat; each is importable by its provider's name."""


def result_types(provider: Provider) -> ResultTypes:
    """The classes ``provider``'s SDK returns for streams and raw responses (cohere, ollama: none; generators)."""
    if provider == "cohere":
        return ResultTypes(streams=(), async_streams=(), raw=(), read_response=_http_data, entered=swap_http_data)
    if provider == "ollama":
        return ResultTypes(streams=(), async_streams=(), raw=())
    if provider == "google_genai":
        return ResultTypes(streams=(), async_streams=(types.AsyncGeneratorType,), raw=())
    if provider == "huggingface_hub":
        return ResultTypes(streams=(types.GeneratorType,), async_streams=(types.AsyncGeneratorType,), raw=())
    if provider == "openai":
        sdk = importlib.import_module("openai")
        legacy = importlib.import_module("openai._legacy_response")
        response = importlib.import_module("openai._response")
        return ResultTypes(
            streams=(sdk.Stream,),
            async_streams=(sdk.AsyncStream,),
            raw=(legacy.LegacyAPIResponse, response.APIResponse, response.AsyncAPIResponse),
        )
    if provider == "mistralai":
        streams = importlib.import_module("mistralai.client.utils.eventstreaming")
        return ResultTypes(
            streams=(streams.EventStream,), async_streams=(streams.EventStreamAsync,), raw=(), read=_event_data
        )
    if provider == "azure_ai_inference":
        models = importlib.import_module("azure.ai.inference.models")
        return ResultTypes(
            streams=(models.StreamingChatCompletions,),
            async_streams=(models.AsyncStreamingChatCompletions,),
            raw=(),
            read=_as_dict,
            read_response=_as_dict,
        )
    stainless = provider if provider in _OWN_HTTP_CHAT else "anthropic"
    sdk = importlib.import_module(stainless)
    response = importlib.import_module(f"{stainless}._response")
    return ResultTypes(
        streams=(sdk.Stream,),
        async_streams=(sdk.AsyncStream,),
        raw=(response.APIResponse, response.AsyncAPIResponse),
        entered=swap_raw_stream if provider == "anthropic" else None,
    )


def _http_data(response: object) -> object:
    """What a cohere raw client's ``HttpResponse`` / ``AsyncHttpResponse`` holds: the SDK's response (``data``)."""
    return getattr(response, "data", response)


def _event_data(event: object) -> object:
    """The Chat chunk a mistralai stream event carries (``CompletionEvent.data``), as the wire's JSON."""
    data = getattr(event, "data", None)
    model_dump = getattr(data, "model_dump", None)
    return model_dump(mode="json", by_alias=True) if callable(model_dump) else data


def _as_dict(model: object) -> object:
    """An azure-ai-inference response or stream update as the wire's JSON (``Model.as_dict``).

    Its attributes read otherwise: ``finish_reason`` an enum, a tool call delta without its ``index``.
    """
    as_dict = getattr(model, "as_dict", None)
    return as_dict() if callable(as_dict) else model


_INSIDE: ContextVar[bool] = ContextVar("otel_toolturn_inside", default=False)


class State:
    """The live instrumentation: its telemetry (``None`` when uninstrumented) and what it patched."""

    def __init__(self) -> None:
        self.telemetry: Telemetry | None = None
        self.originals: list[tuple[object, str, object]] = []
        self.types: dict[Provider, ResultTypes] = {}
        self.lock = threading.RLock()
        """Held while targets are patched or restored (an import hook may patch from another thread)."""
        self.hooked: set[str] = set()
        """The target modules with a post-import hook (registered once per process)."""
        self.generation = 0
        """Counts the ``unpatch`` calls: a wrapper left beneath another instrumentation's by an earlier one is inert."""

    def result_types(self, provider: Provider) -> ResultTypes:
        """The classes ``provider``'s SDK returns, read at the first call that needs them (the SDK is whole by then)."""
        found = self.types.get(provider)
        if found is None:
            found = self.types[provider] = result_types(provider)
        return found


STATE: Final = State()


def _server(target: Target, instance: object) -> tuple[str | None, int | None]:
    """The host and port the client sends to (``server.address``, ``server.port``), from its base URL.

    huggingface_hub: its ``model`` when that is a URL (a ``base_url`` is one), else the HF router.
    """
    if target.provider == "huggingface_hub":
        model = getattr(instance, "model", None)
        url = model if isinstance(model, str) and model.startswith(("http://", "https://")) else _HF_ROUTER
        return server_of(url)
    api_client = getattr(instance, "_api_client", None)
    wrapper = getattr(instance, "_client_wrapper", None)  # cohere's raw clients (Fern)
    configuration = getattr(instance, "sdk_configuration", None)  # mistralai (Speakeasy)
    if target.provider == "azure_ai_inference":
        base_url = getattr(getattr(instance, "_config", None), "endpoint", None)
    elif configuration is not None:
        base_url = configuration.get_server_details()[0]
    elif api_client is not None:
        base_url = getattr(getattr(api_client, "_http_options", None), "base_url", None)
    elif wrapper is not None:  # cohere: its clients' wrapper holds the base URL
        base_url = wrapper.get_base_url()
    else:
        base_url = getattr(getattr(instance, "_client", None), "base_url", None)
    return server_of(str(base_url)) if base_url is not None else (None, None)


def server_of(url: str) -> tuple[str | None, int | None]:
    """A URL's host and port (the scheme's default when none is written); ``(None, None)`` when it has no host."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None, None
    if host is None:
        return None, None
    return host, port if port is not None else _DEFAULT_PORTS.get(parts.scheme)


_DEFAULT_PORTS: Final = {"https": 443, "http": 80}
_HF_ROUTER: Final = "https://router.huggingface.co"
"""Where huggingface_hub sends a chat completion for a model named by id."""


def _provider_name(target: Target, instance: object, host: str | None) -> ProviderName | None:
    """The call's ``gen_ai.provider.name`` when the client decides it (``None``: the SDK's own provider).

    google-genai: by its backend. The openai and anthropic SDKs: Azure, Bedrock and Vertex clients by their
    class, any other client by the host it sends to (``provider_by_host``).
    """
    if target.provider == "google_genai":
        return "gcp.vertex_ai" if getattr(getattr(instance, "_api_client", None), "vertexai", False) else "gcp.gemini"
    if target.provider == "mistralai":
        return "mistral_ai"
    if target.provider == "azure_ai_inference":
        return "azure.ai.inference"
    if target.provider == "ollama":
        return "ollama"
    client = type(getattr(instance, "_client", None)).__name__
    by_class = _PROVIDER_BY_CLIENT.get(client.removeprefix("Async"))
    return by_class if by_class is not None else provider_by_host(host)


_PROVIDER_BY_CLIENT: Final[Mapping[str, ProviderName]] = {
    "AzureOpenAI": "azure.ai.openai",
    "AnthropicBedrock": "aws.bedrock",
    "AnthropicVertex": "gcp.vertex_ai",
}
"""The SDK client classes (sync; the async ones are the same with ``Async`` ahead) whose provider is not the SDK's."""


def _sender(target: Target, instance: object) -> object | None:
    """The one object whose sends are the call's request (``None``: any send of its SDK in its context).

    azure-ai-inference: its client's pipeline's transport runner (the last policy's ``next``), never the
    runner of a credential's own pipeline. Not found: ``None``.
    """
    if target.provider != "azure_ai_inference":
        return None
    policies = getattr(getattr(getattr(instance, "_client", None), "_pipeline", None), "_impl_policies", None)
    return getattr(policies[-1], "next", None) if isinstance(policies, list) and policies else None


def _begin(telemetry: Telemetry, target: Target, instance: object, kwargs: dict[str, object]) -> PendingCall | None:
    """The request hook: decide what is sent; the record waits for the send. ``None`` ⇒ proceed uninstrumented."""
    try:
        server = _server(target, instance)
        provider_name = _provider_name(target, instance, server[0])
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("span", exc)
        return None
    try:
        dialect = dialect_of(target.lane, provider_name, target.sdk)
        decided = decide_request(
            kwargs, lane=target.lane, options=telemetry.options, scope=current_scope(), dialect=dialect
        )
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("law", exc)
        return None
    try:
        return PendingCall(
            telemetry,
            lane=target.lane,
            provider=target.sdk,
            decided=decided,
            caller_kwargs=kwargs,
            server=server,
            provider_name=provider_name,
            gated=target.gated,
            sender=_sender(target, instance),
        )
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("span", exc)
        return None


def _watched(telemetry: Telemetry, target: Target, call: PendingCall, result: object) -> object:
    """Hand back ``result`` watched; a call never sent (a middleware's answer) or any failure: the result itself."""
    if target.kind == "stream_manager":
        try:
            entered = STATE.result_types(target.sdk).entered
            assert entered is not None  # noqa: S101 - every provider with a manager has it
            return StreamManagerProxy(result, call, entered)
        except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
            telemetry.error("response", exc)
            return result
    record = call.record
    if record is None:
        return result
    try:
        return watch(result, record, STATE.result_types(target.sdk))
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("response", exc)
        record.finish()
        return result


def _materialised(telemetry: Telemetry, target: Target, kwargs: dict[str, object]) -> Materialised:
    """``materialise``, guarded: a failure of its own sends the caller's arguments as they are, unrecorded."""
    try:
        return materialise(kwargs, target.lane)
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("request", exc)
        return Materialised(kwargs=kwargs, readable=False)


def _by_payload(target: Target, kwargs: dict[str, object]) -> str | None:
    """The name of the parameter carrying the call's whole request (``Target.payload``), when the call gives it."""
    return target.payload if target.payload is not None and target.payload in kwargs else None


def _law_reads(telemetry: Telemetry, target: Target, kwargs: dict[str, object]) -> bool:
    """``law_reads`` (a call by its payload: ``payload_reads``), guarded (a failure of its own: not recorded)."""
    try:
        payload = _by_payload(target, kwargs)
        if payload is not None:
            return payload_reads(kwargs[payload], target.lane)
        return law_reads(kwargs, target.lane)
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        telemetry.error("request", exc)
        return False


def _decided(
    telemetry: Telemetry, target: Target, instance: object, kwargs: dict[str, Any]
) -> tuple[PendingCall | None, dict[str, Any]]:
    """The call decided and pending (else ``None``), and the keyword arguments to call the SDK with.

    A call by ``payload`` is decided on that dict, sent in its place; one the law cannot read is sent as it is.
    """
    payload = _by_payload(target, kwargs)
    if payload is not None:
        if not _law_reads(telemetry, target, kwargs):
            return None, kwargs
        call = _begin(telemetry, target, instance, kwargs[payload])
        return call, kwargs if call is None else {**kwargs, payload: call.kwargs}
    materialised = _materialised(telemetry, target, kwargs)
    if not materialised.readable:
        return None, materialised.kwargs
    call = _begin(telemetry, target, instance, materialised.kwargs)
    return call, materialised.kwargs if call is None else call.kwargs


def _keywords(target: Target, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The call's leading positional arguments that ``target`` names (``positional``) as keywords.

    A name given both ways is left as the caller wrote it (the SDK raises its own ``TypeError``).
    """
    count = min(len(args), len(target.positional))
    if not count or any(name in kwargs for name in target.positional[:count]):
        return args, kwargs
    return args[count:], {**dict(zip(target.positional[:count], args[:count], strict=True)), **kwargs}


def _sync_wrapper(target: Target) -> Callable[..., object]:
    def wrapper(
        wrapped: Callable[..., object], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> object:
        telemetry = STATE.telemetry
        if telemetry is None or _INSIDE.get():
            return wrapped(*args, **kwargs)
        args, kwargs = _keywords(target, args, kwargs)
        call, sent = _decided(telemetry, target, instance, kwargs)
        if call is None:
            return wrapped(*args, **sent)
        token = _INSIDE.set(True)
        try:
            with call.sending():
                result = wrapped(*args, **sent)
        except BaseException as exc:
            call.failed(exc)
            raise
        finally:
            _INSIDE.reset(token)
        return _watched(telemetry, target, call, result)

    return wrapper


def _steps_wrapper(target: Target) -> Callable[..., object]:
    def wrapper(wrapped: Callable[..., Any], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        """The SDK's generator, decided now and watched: its first step sends."""
        telemetry = STATE.telemetry
        if telemetry is None or _INSIDE.get():
            return wrapped(*args, **kwargs)
        call, sent = _decided(telemetry, target, instance, kwargs)
        if call is None:
            return wrapped(*args, **sent)
        return watch_steps(wrapped(*args, **sent), call)

    return wrapper


async def _run_async(  # noqa: PLR0917 - the wrapper's four, and what it read
    telemetry: Telemetry,
    target: Target,
    wrapped: Callable[..., Awaitable[object]],
    instance: object,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> object:
    """An async call, once it runs: everything the sync wrapper does, started at the first step.

    A coroutine closed, collected or cancelled before its first step therefore starts no span and
    counts nothing, nor does one cancelled before the SDK sends; one cancelled while the request
    is in flight ends its span once, as an error.
    """
    call, sent = _decided(telemetry, target, instance, kwargs)
    if call is None:
        return await wrapped(*args, **sent)
    token = _INSIDE.set(True)
    try:
        with call.sending():
            result = await wrapped(*args, **sent)
    except BaseException as exc:
        call.failed(exc)
        raise
    finally:
        _INSIDE.reset(token)
    return _watched(telemetry, target, call, result)


def _call_or_steps_wrapper(target: Target) -> Callable[..., object]:
    call_wrapper, steps_wrapper = _sync_wrapper(target), _steps_wrapper(target)

    def wrapper(wrapped: Callable[..., Any], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        """With ``stream=True`` the SDK returns a generator whose first step sends (``steps``); else a ``call``."""
        args, kwargs = _keywords(target, args, kwargs)
        chosen = steps_wrapper if kwargs.get("stream") is True else call_wrapper
        return chosen(wrapped, instance, args, kwargs)

    return wrapper


async def _async_steps_once_awaited(
    telemetry: Telemetry,
    target: Target,
    wrapped: Callable[..., Awaitable[object]],
    instance: object,
    kwargs: dict[str, Any],
) -> object:
    """A streamed async call, once it runs: decided now, and the async generator it returns watched."""
    call, sent = _decided(telemetry, target, instance, kwargs)
    if call is None:
        return await wrapped(**sent)
    steps = await wrapped(**sent)
    return watch_async_steps(cast("AsyncIterator[object]", steps), call)


def _async_call_or_steps_wrapper(target: Target) -> Callable[..., object]:
    call_wrapper = _async_wrapper(target)

    def wrapper(wrapped: Callable[..., Any], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        """With ``stream=True`` the coroutine returns an async generator whose first step sends; else a ``call``."""
        telemetry = STATE.telemetry
        args, kwargs = _keywords(target, args, kwargs)
        if telemetry is None or _INSIDE.get() or kwargs.get("stream") is not True or args:
            return call_wrapper(wrapped, instance, args, kwargs)
        if not _law_reads(telemetry, target, kwargs):
            return wrapped(**kwargs)
        run = cast(
            "CoroutineType[Any, Any, object]", _async_steps_once_awaited(telemetry, target, wrapped, instance, kwargs)
        )
        run.__name__ = getattr(wrapped, "__name__", run.__name__)
        run.__qualname__ = getattr(wrapped, "__qualname__", run.__qualname__)
        return run

    return wrapper


def _async_wrapper(target: Target) -> Callable[..., object]:
    def wrapper(wrapped: Callable[..., Any], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        telemetry = STATE.telemetry
        if telemetry is None or _INSIDE.get():
            return wrapped(*args, **kwargs)
        args, kwargs = _keywords(target, args, kwargs)
        if not _law_reads(telemetry, target, kwargs):
            return wrapped(*args, **kwargs)
        call = cast("CoroutineType[Any, Any, object]", _run_async(telemetry, target, wrapped, instance, args, kwargs))
        # named as the SDK's own coroutine, so a caller's "never awaited" warning reads as without us
        call.__name__ = getattr(wrapped, "__name__", call.__name__)
        call.__qualname__ = getattr(wrapped, "__qualname__", call.__qualname__)
        return call

    return wrapper


def _sdk_span_wrapper(
    wrapped: Callable[..., object], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> object:
    """The SDK started its own call span: the pending call will record onto it instead of its own."""
    del instance
    span = wrapped(*args, **kwargs)
    call = PENDING.get()
    if span is None or call is None:
        return span
    try:
        return call.keep_sdk_span(cast("Span", span))
    except Exception as exc:  # noqa: BLE001 - telemetry never breaks the host call
        call.telemetry.error("span", exc)
        return span


def _pending_of(target: Target, sender: object) -> PendingCall | None:
    """The call waiting for ``sender``'s send in this context that ``target`` records (another SDK's call: ``None``).

    An SDK's own send hook records its SDK's calls; a shared send (``serves``), the calls of each SDK it serves.
    """
    call = PENDING.get()
    if call is None or call.provider not in (target.serves or (target.provider,)):
        return None
    return call if call.sends_here(sender) else None


def _send_wrapper(target: Target) -> Callable[..., object]:
    def wrapper(
        wrapped: Callable[..., object], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> object:
        """The SDK sends one HTTP request: the call's record made, its span current; the request recorded after it."""
        call = _pending_of(target, instance)
        record = call.sent() if call is not None else None
        if call is None or record is None:
            return wrapped(*args, **kwargs)
        with record.current():
            try:
                return wrapped(*args, **kwargs)
            finally:
                call.handed_over()

    return wrapper


async def _send_async(
    call: PendingCall, wrapped: Callable[..., Awaitable[object]], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> object:
    """An async send, once it runs: as ``_send_wrapper``."""
    record = call.sent()
    if record is None:
        return await wrapped(*args, **kwargs)
    with record.current():
        try:
            return await wrapped(*args, **kwargs)
        finally:
            call.handed_over()


def _async_send_wrapper(target: Target) -> Callable[..., object]:
    def wrapper(wrapped: Callable[..., Any], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        """The async SDK sends one HTTP request: recorded when the send runs (see ``_send_wrapper``)."""
        call = _pending_of(target, instance)
        if call is None:
            return wrapped(*args, **kwargs)
        return _send_async(call, wrapped, args, kwargs)

    return wrapper


def _gate_wrapper(
    wrapped: Callable[..., object], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> object:
    """The SDK's request method runs: a gated call's sends inside it are its request."""
    del instance
    with request_gate():
        return wrapped(*args, **kwargs)


async def _gated_async(
    wrapped: Callable[..., Awaitable[object]], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> object:
    """An async request method, once it runs: as ``_gate_wrapper``."""
    with request_gate():
        return await wrapped(*args, **kwargs)


def _async_gate_wrapper(
    wrapped: Callable[..., Awaitable[object]], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> object:
    """The async SDK's request method: its coroutine runs with the gate open."""
    del instance
    return _gated_async(wrapped, args, kwargs)


def _wrapper_for(target: Target) -> Callable[..., object]:
    if target.kind == "gate":
        return _async_gate_wrapper if target.is_async else _gate_wrapper
    if target.kind == "api_call":
        return api_call_wrapper(
            target.lane, BEDROCK_INVOKE_LANE, lambda: STATE.telemetry, server_of, aio=target.is_async
        )
    if target.kind == "sdk_span":
        return _sdk_span_wrapper
    if target.kind == "send":
        return _async_send_wrapper(target) if target.is_async else _send_wrapper(target)
    if target.kind == "steps":
        return _steps_wrapper(target)
    if target.kind == "call_or_steps":
        return _async_call_or_steps_wrapper(target) if target.is_async else _call_or_steps_wrapper(target)
    return _async_wrapper(target) if target.is_async else _sync_wrapper(target)


def patch(telemetry: Telemetry) -> None:
    """Patch every target of an enabled provider when its module is imported: at once if it is, else on its import.

    Nothing is imported here: an SDK the application never imports costs nothing, and one imported after
    ``instrument`` is patched by a post-import hook (``wrapt.register_post_import_hook``) as its module loads.
    """
    with STATE.lock:
        STATE.telemetry = telemetry
        modules = dict.fromkeys(t.module for t in TARGETS if t.enabled(telemetry.options.providers))
        for name in modules:
            if name in STATE.hooked:
                module = sys.modules.get(name)
                if module is not None:
                    _patch_module(module)
            else:
                STATE.hooked.add(name)
                wrapt.register_post_import_hook(_patch_module, name)  # runs at once when already imported


def _patch_module(module: ModuleType) -> None:
    """Patch the targets ``module`` holds for the live instrumentation (none: nothing); never raises into an import."""
    try:
        with STATE.lock:
            telemetry = STATE.telemetry
            if telemetry is None:
                return
            patched = {(id(owner), method) for owner, method, _ in STATE.originals}
            for target in TARGETS:
                if target.module != module.__name__ or not target.enabled(telemetry.options.providers):
                    continue
                owner = getattr(module, target.owner, None) if target.owner else module
                original = vars(owner).get(target.method) if owner is not None else None
                if original is None or (id(owner), target.method) in patched:
                    if original is None:
                        _log.warning(
                            "otel-toolturn: %s.%s.%s not found in %s %s; calls through it are not instrumented",
                            target.module,
                            target.owner,
                            target.method,
                            target.distribution,
                            _version(target.distribution),
                        )
                    continue
                setattr(owner, target.method, wrapt.FunctionWrapper(original, _live(_wrapper_for(target))))
                STATE.originals.append((owner, target.method, original))
                for copy_owner, copy in _wrapped_copies(owner, target.method, original):
                    if (id(copy_owner), target.method) not in patched:
                        setattr(copy_owner, target.method, wrapt.FunctionWrapper(copy, _live(_wrapper_for(target))))
                        STATE.originals.append((copy_owner, target.method, copy))
    except Exception:  # noqa: BLE001 - the application's import never fails here
        _log.debug("otel-toolturn: could not patch %s", getattr(module, "__name__", module), exc_info=True)


def _live(wrapper: Callable[..., object]) -> Callable[..., object]:
    """``wrapper`` while this patch stands; once ``unpatch`` runs, a pass-through for good.

    A wrapper ``unpatch`` cannot take off (another instrumentation wrapped over it since) stays in the
    chain; a later ``patch`` wraps anew, and the one left must never read a call again.
    """
    generation = STATE.generation

    def live(wrapped: Callable[..., object], instance: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        if STATE.generation != generation:
            return wrapped(*args, **kwargs)
        return wrapper(wrapped, instance, args, kwargs)

    return live


def _wrapped_copies(owner: object, method: str, original: object) -> Iterator[tuple[type, Callable[..., object]]]:
    """The subclasses of ``owner`` holding a wrapper of ``original`` of their own under ``method``, with it.

    Another instrumentation that wraps an inherited method by the subclass's name (``ClientV2.chat``,
    inherited from ``V2Client``) sets its wrapper on the subclass, so a call through the subclass
    never reaches the parent's method; such a copy is patched too. A copy made over our wrapper
    already holds it and is not one of these.
    """
    if not isinstance(owner, type):
        return
    seen: set[type] = set()
    below: list[type] = list(owner.__subclasses__())
    while below:
        cls = below.pop()
        if cls in seen:
            continue
        seen.add(cls)
        below.extend(cls.__subclasses__())
        copy = vars(cls).get(method)
        inner = getattr(copy, "__wrapped__", None)
        for _ in range(_WRAPPER_DEPTH):
            if inner is None or inner is original:
                break
            inner = getattr(inner, "__wrapped__", None)
        if callable(copy) and inner is original:
            yield cls, copy


_WRAPPER_DEPTH: Final = 8
"""How many wrappers deep a copy is followed towards the method it wraps."""


_DISTRIBUTIONS: Final[Mapping[Provider, str]] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google_genai": "google-genai",
    "litellm": "litellm",
    "botocore": "botocore",
    "groq": "groq",
    "together": "together",
    "fireworks": "fireworks-ai",
    "huggingface_hub": "huggingface_hub",
    "cohere": "cohere",
    "mistralai": "mistralai",
    "azure_ai_inference": "azure-ai-inference",
    "ollama": "ollama",
}
"""The distribution each provider's SDK is installed as."""

_log = logging.getLogger("otel_toolturn.instrument")


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"


def unpatch() -> None:
    """Restore every patched method to the very object it was before ``patch`` (the import hooks then patch nothing).

    A method another instrumentation has wrapped over ours since keeps its wrappers: restoring it would undo
    theirs too. Ours stays beneath theirs and passes every call straight through, for good (``_live``).
    """
    with STATE.lock:
        STATE.telemetry = None
        STATE.generation += 1
        while STATE.originals:
            owner, method, original = STATE.originals.pop()
            if getattr(vars(owner).get(method), "__wrapped__", None) is original:
                setattr(owner, method, original)
        STATE.types.clear()
