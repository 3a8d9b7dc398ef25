"""The options of ``init``: keyword first, then its ``OTEL_TOOLTURN_*`` variable, then the default.

Role: one resolver (``resolve_options``) from keywords and an environment mapping to one frozen
``Options`` value. Reads nothing else. A keyword it cannot read raises ``ToolTurnInputError``
naming the option, what arrived and what was expected: the code is wrong, and says so. A
variable it cannot read is a logged warning (logger ``otel_toolturn.instrument``) naming the
variable, what arrived and what was expected, and the default is used, as the OpenTelemetry SDK
does with a bad ``OTEL_*`` value: a deployment's environment never stops the application.
Unknown words in ``OTEL_TOOLTURN_PROVIDERS`` are warned about and left out; when none is known,
the default applies.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, get_args

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._vocab import LANES, Dialect, Lane, ReplyFormat
from otel_toolturn.instrument import names
from otel_toolturn.lanes import DIALECT_ADAPTERS

Mode = Literal["repair", "observe"]
"""``repair``: send the repaired view. ``observe``: send the caller's request, report the would-be repairs."""
MODES: Final[tuple[Mode, ...]] = get_args(Mode)

Provider = Literal[
    "openai",
    "anthropic",
    "google_genai",
    "litellm",
    "botocore",
    "groq",
    "together",
    "fireworks",
    "huggingface_hub",
    "cohere",
    "mistralai",
    "azure_ai_inference",
    "ollama",
]
"""What otel-toolturn instruments: the SDKs it patches (``google_genai``: the ``google-genai`` SDK;
``botocore``: boto3's ``bedrock-runtime`` clients and aiobotocore's; ``groq``, ``together``, ``fireworks``
and ``mistralai``: the ``groq``, ``together``, ``fireworks-ai`` and ``mistralai`` SDKs, which send Chat
Completions with HTTP code of their own; ``huggingface_hub``: its ``InferenceClient.chat_completion`` and
``AsyncInferenceClient``'s, Chat Completions to the HF router or a ``base_url``; ``cohere``: the ``cohere``
SDK's v2 chat, a Chat-shaped ``messages`` list answered in Cohere's own response and stream format;
``azure_ai_inference``: the ``azure-ai-inference`` SDK's ``ChatCompletionsClient.complete``, sync and ``aio``,
Chat Completions over azure-core's pipeline; ``ollama``: the ``ollama`` SDK's ``Client.chat`` and
``AsyncClient.chat``, Ollama's native ``/api/chat`` in the ``ollama`` dialect of the Chat lane, answered in
Ollama's own response and NDJSON stream format) and ``litellm``, whose calls it reaches through LiteLLM's
callbacks (``otel_toolturn.integrations``)."""
PROVIDERS: Final[tuple[Provider, ...]] = get_args(Provider)

ProviderName = Literal[
    "openai",
    "anthropic",
    "gcp.gemini",
    "gcp.vertex_ai",
    "aws.bedrock",
    "azure.ai.openai",
    "azure.ai.inference",
    "cohere",
    "deepseek",
    "groq",
    "mistral_ai",
    "moonshot_ai",
    "ollama",
    "perplexity",
    "x_ai",
]
"""The ``gen_ai.provider.name`` values a call is recorded with (a closed set: a metric label), from the registry;
``ollama``, which the registry does not list, is the custom value the conventions ask for when none applies (the
ollama SDK's calls: Ollama's native API, no other provider's)."""

PROVIDER_BY_HOST: Final[tuple[tuple[str, ProviderName], ...]] = (
    ("openai.azure.com", "azure.ai.openai"),
    ("services.ai.azure.com", "azure.ai.inference"),
    ("inference.ai.azure.com", "azure.ai.inference"),
    ("amazonaws.com", "aws.bedrock"),
    ("aiplatform.googleapis.com", "gcp.vertex_ai"),
    ("generativelanguage.googleapis.com", "gcp.gemini"),
    ("api.cohere.ai", "cohere"),
    ("api.cohere.com", "cohere"),
    ("api.deepseek.com", "deepseek"),
    ("api.groq.com", "groq"),
    ("api.mistral.ai", "mistral_ai"),
    ("api.moonshot.ai", "moonshot_ai"),
    ("api.moonshot.cn", "moonshot_ai"),
    ("api.perplexity.ai", "perplexity"),
    ("api.x.ai", "x_ai"),
)
"""The provider an OpenAI- or Anthropic-SDK client talks to, by the end of its base URL's host: the conventions
ask for the provider by best knowledge, and a client pointed at another provider's compatible endpoint is
that provider's call. A host none of these ends is the SDK's own provider."""


def provider_by_host(host: str | None) -> ProviderName | None:
    """The provider whose API ``host`` is; ``None``: none known.

    A host is an entry's of ``PROVIDER_BY_HOST`` when it is the entry, or ends ``.entry`` or ``-entry`` (as
    Vertex's regional hosts do), in any case.
    """
    if not host:
        return None
    host = host.lower()
    for suffix, name in PROVIDER_BY_HOST:
        if host == suffix or host.endswith(("." + suffix, "-" + suffix)):
            return name
    return None


NAMES_OF: Final[Mapping[Provider, tuple[ProviderName, ...]]] = {
    "openai": ("openai",),
    "anthropic": ("anthropic",),
    "google_genai": ("gcp.gemini", "gcp.vertex_ai"),
    "litellm": ("openai", "anthropic"),
    "botocore": ("aws.bedrock",),
    "groq": ("groq",),
    "together": ("openai",),
    "fireworks": ("openai",),
    "huggingface_hub": ("openai",),
    "cohere": ("cohere",),
    "mistralai": ("mistral_ai",),
    "azure_ai_inference": ("azure.ai.inference",),
    "ollama": ("ollama",),
}
"""The ``gen_ai.provider.name`` values each provider's calls carry on its own lanes (google-genai: by the
client's backend, the Gemini Developer API or Vertex AI; LiteLLM: the wire's family). LiteLLM's Gemini and
Vertex calls carry ``gcp.gemini`` / ``gcp.vertex_ai`` on the Gemini lane, recorded with google-genai's names.
Together, Fireworks and Hugging Face have no registry value: their calls are named as an OpenAI-compatible
host outside ``PROVIDER_BY_HOST`` is, ``openai`` (a client of theirs pointed at a host of the table: that
host's name). The cohere SDK's calls carry ``cohere``; the azure-ai-inference SDK's, ``azure.ai.inference``
(whatever endpoint its client is given: the registry's name for the Azure AI Inference API it speaks); the ollama
SDK's, ``ollama`` (an OpenAI client pointed at Ollama's OpenAI-compatible ``/v1`` speaks plain Chat and is named as
any such host is, ``openai``)."""

_LANE_FAMILY: Final[Mapping[str, Provider]] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "google_genai",
    "bedrock": "botocore",
}

_CHAT_SDKS: Final[frozenset[Provider]] = frozenset(
    {"groq", "together", "fireworks", "huggingface_hub", "cohere", "mistralai", "azure_ai_inference", "ollama"}
)
"""The SDKs of their own whose requests are Chat Completions' ``messages``: the ``openai`` family's
``chat_completions`` lane (cohere: its v2 chat, read by the same adapter; its responses are its own)."""


def _speaks(provider: Provider, lane: Lane) -> bool:
    """Whether ``provider``'s SDK speaks ``lane`` (``<family>.<api>``)."""
    family, _, api = lane.partition(".")
    if provider in _CHAT_SDKS:
        return family == "openai" and api == "chat_completions"
    return _LANE_FAMILY.get(family) == provider


LANES_OF: Final[Mapping[Provider, tuple[Lane, ...]]] = {
    provider: tuple(lane for lane in LANES if _speaks(provider, lane)) for provider in PROVIDERS
}
"""The lanes each provider's SDK speaks: those of ``LANES`` named after its family (``<family>.<api>``;
``gemini.*`` lanes are the ``google_genai`` SDK's; ``bedrock.*`` botocore's); the Chat SDKs of their
own (``groq``, ``together``, ``fireworks``, ``huggingface_hub``, ``mistralai``, ``azure_ai_inference``, and
``cohere``'s v2 chat):
``openai.chat_completions``."""

REPLY_FORMAT_OF: Final[Mapping[Provider, ReplyFormat]] = {"cohere": "cohere.chat", "ollama": "ollama.chat"}
"""The SDKs whose requests speak a lane but whose responses and stream events are their own format
(``_vocab.REPLY_FORMATS``): their calls' responses are read in it, not in the lane's."""

DIALECT_OF: Final[Mapping[ProviderName, Dialect]] = {
    "mistral_ai": "mistral",
    "deepseek": "deepseek",
    "ollama": "ollama",
}
"""The dialect of the Chat lane a call's provider enforces, by its ``gen_ai.provider.name``: what the client
knows (its SDK, its base URL's host), never the content: the mistralai SDK or ``api.mistral.ai``; a client
pointed at ``api.deepseek.com``. Any other provider speaks plain Chat."""

DIALECT_OF_SDK: Final[Mapping[Provider, Dialect]] = {"cohere": "cohere"}
"""The dialect an SDK of its own speaks whatever its host: the cohere SDK's v2 chat (``tool_choice`` ``NONE``).
An OpenAI-SDK client pointed at Cohere's OpenAI-compatible endpoint is named ``cohere`` but speaks OpenAI's
Chat there, so it is told from the SDK, not from the provider name."""


def dialect_of(lane: Lane, provider_name: ProviderName | None, sdk: Provider | None = None) -> Dialect | None:
    """The dialect a call of ``lane`` through ``sdk`` to ``provider_name`` is decided in (``None``: the lane's own).

    >>> dialect_of("openai.chat_completions", "mistral_ai"), dialect_of("openai.chat_completions", None)
    ('mistral', None)
    >>> dialect_of("openai.chat_completions", "cohere", "cohere"), dialect_of("openai.chat_completions", "cohere")
    ('cohere', None)
    """
    dialect = DIALECT_OF_SDK.get(sdk) if sdk is not None else None
    if dialect is None and provider_name is not None:
        dialect = DIALECT_OF.get(provider_name)
    return dialect if dialect is not None and DIALECT_ADAPTERS[dialect].lane == lane else None


UNINSTRUMENTED_LANES: Final[frozenset[Lane]] = frozenset()
"""The lanes of ``LANES`` no instrumented SDK speaks (none: every lane is instrumented)."""

_log = logging.getLogger("otel_toolturn.instrument")

_TRUE: Final = frozenset({"1", "true", "yes", "on", "span_only", "event_only", "span_and_event"})
_FALSE: Final = frozenset({"", "0", "false", "no", "off", "no_content"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Options:
    """What ``init`` was asked for, resolved."""

    mode: Mode = "repair"
    capture_content: bool = False
    providers: tuple[Provider, ...] = PROVIDERS
    max_tool_rounds: int | None = None
    handoff_tools: tuple[str, ...] = ()


DEFAULTS: Final = Options()
"""Every option's default: what an unset or unreadable variable gives."""


def _flag(name: str, raw: str) -> bool:
    """An environment flag: true/false words (and the GenAI content-capture words)."""
    word = raw.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ToolTurnInputError(f"{name}={raw!r}: expected true or false")


def _mode(raw: object, source: str) -> Mode:
    for mode in MODES:
        if raw == mode:
            return mode
    raise ToolTurnInputError(f"{source}={raw!r}: expected one of {', '.join(MODES)}")


def _provider(word: str, source: str) -> Provider:
    for provider in PROVIDERS:
        if provider == word:
            return provider
    raise ToolTurnInputError(f"{source}: {word!r} is not a provider; expected any of {', '.join(PROVIDERS)}")


def _rounds(raw: object, source: str) -> int | None:
    """A positive whole number, or ``None`` (``None`` or a blank string)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    value = int(raw.strip()) if isinstance(raw, str) and raw.strip().isdigit() else raw
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ToolTurnInputError(f"{source}={raw!r}: expected a positive whole number")
    return value


def _words(raw: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in raw.split(",") if w.strip())


def _warn(error: ToolTurnInputError, default: object) -> None:
    """Log an unreadable variable and the value used instead."""
    _log.warning("otel-toolturn: %s; %r used", error, default)


def _env_mode(environ: Mapping[str, str]) -> Mode:
    raw = environ.get(names.ENV_MODE)
    if raw is None:
        return DEFAULTS.mode
    try:
        return _mode(raw.strip().lower(), names.ENV_MODE)
    except ToolTurnInputError as error:
        _warn(error, DEFAULTS.mode)
        return DEFAULTS.mode


def _env_capture(environ: Mapping[str, str]) -> bool:
    on = False
    for variable in (names.ENV_CAPTURE_CONTENT, names.ENV_GENAI_CAPTURE_CONTENT):
        if variable not in environ:
            continue
        try:
            on = _flag(variable, environ[variable]) or on
        except ToolTurnInputError as error:
            _warn(error, DEFAULTS.capture_content)
    return on


def _env_providers(environ: Mapping[str, str]) -> tuple[Provider, ...]:
    raw = environ.get(names.ENV_PROVIDERS)
    if raw is None:
        return DEFAULTS.providers
    known: list[Provider] = []
    unknown: list[ToolTurnInputError] = []
    for word in _words(raw):
        try:
            provider = _provider(word, names.ENV_PROVIDERS)
        except ToolTurnInputError as error:
            unknown.append(error)
            continue
        if provider not in known:
            known.append(provider)
    if not known:
        _warn(
            ToolTurnInputError(f"{names.ENV_PROVIDERS}={raw!r}: expected any of {', '.join(PROVIDERS)}"),
            DEFAULTS.providers,
        )
        return DEFAULTS.providers
    for unread in unknown:
        _log.warning("otel-toolturn: %s; ignored", unread)
    return tuple(known)


def _env_rounds(environ: Mapping[str, str]) -> int | None:
    try:
        return _rounds(environ.get(names.ENV_MAX_TOOL_ROUNDS), names.ENV_MAX_TOOL_ROUNDS)
    except ToolTurnInputError as error:
        _warn(error, DEFAULTS.max_tool_rounds)
        return DEFAULTS.max_tool_rounds


def resolve_options(
    *,
    mode: str | None = None,
    capture_content: bool | None = None,
    providers: Sequence[str] | None = None,
    max_tool_rounds: int | None = None,
    handoff_tools: Sequence[str] | None = None,
    environ: Mapping[str, str],
) -> Options:
    """Resolve ``init``'s options: a keyword wins over its variable, a variable over the default.

    Content capture is on when the keyword, ``OTEL_TOOLTURN_CAPTURE_CONTENT`` or the GenAI
    instrumentations' ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` says so. A keyword
    that cannot be read raises ``ToolTurnInputError``; a variable that cannot be read is warned
    about and its default used (see the module docstring).
    """
    resolved_mode = _mode(mode, "mode") if mode is not None else _env_mode(environ)
    capture = bool(capture_content) if capture_content is not None else _env_capture(environ)

    if providers is not None:
        if isinstance(providers, str):
            raise ToolTurnInputError(f"providers={providers!r}: expected a sequence of provider names")
        resolved_providers = tuple(dict.fromkeys(_provider(word, "providers") for word in providers))
    else:
        resolved_providers = _env_providers(environ)

    rounds = _rounds(max_tool_rounds, "max_tool_rounds") if max_tool_rounds is not None else _env_rounds(environ)

    if handoff_tools is not None:
        if isinstance(handoff_tools, str):
            raise ToolTurnInputError(f"handoff_tools={handoff_tools!r}: expected a sequence of names or globs")
        patterns = tuple(handoff_tools)
    else:
        patterns = _words(environ.get(names.ENV_HANDOFF_TOOLS, ""))

    return Options(
        mode=resolved_mode,
        capture_content=capture,
        providers=resolved_providers,
        max_tool_rounds=rounds,
        handoff_tools=patterns,
    )
