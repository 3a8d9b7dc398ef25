"""The options of ``init``: keyword first, then its ``OTEL_TOOLTURN_*`` variable, then the default.

Role: one pure resolver (``resolve_options``) from keywords and an environment mapping to one
frozen ``Options`` value. Reads nothing else; a value it cannot read raises
``ToolTurnInputError`` naming the option, what arrived and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, get_args

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._vocab import Lane
from otel_toolturn.instrument import names

Mode = Literal["repair", "observe"]
"""``repair``: send the repaired view. ``observe``: send the caller's request, report the would-be repairs."""
MODES: Final[tuple[Mode, ...]] = get_args(Mode)

Provider = Literal["openai", "anthropic"]
"""The SDKs otel-toolturn patches (also the ``gen_ai.provider.name`` values)."""
PROVIDERS: Final[tuple[Provider, ...]] = get_args(Provider)

LANES_OF: Final[Mapping[Provider, tuple[Lane, ...]]] = {
    "openai": ("openai.chat_completions", "openai.responses"),
    "anthropic": ("anthropic.messages",),
}

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


def _providers(raw: Sequence[str], source: str) -> tuple[Provider, ...]:
    out: list[Provider] = []
    for word in raw:
        matched = [p for p in PROVIDERS if p == word]
        if not matched:
            raise ToolTurnInputError(f"{source}: {word!r} is not a provider; expected any of {PROVIDERS}")
        if matched[0] not in out:
            out.append(matched[0])
    return tuple(out)


def _rounds(raw: object, source: str) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        if not raw.strip():
            return None
        if not raw.strip().isdigit():
            raise ToolTurnInputError(f"{source}={raw!r}: expected a positive whole number")
        raw = int(raw.strip())
    if not isinstance(raw, int) or isinstance(raw, bool) or raw < 1:
        raise ToolTurnInputError(f"{source}={raw!r}: expected a positive whole number or None")
    return raw


def _words(raw: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in raw.split(",") if w.strip())


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
    instrumentations' ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` says so.
    """
    resolved_mode: Mode = "repair"
    if mode is not None:
        resolved_mode = _mode(mode, "mode")
    elif names.ENV_MODE in environ:
        resolved_mode = _mode(environ[names.ENV_MODE].strip().lower(), names.ENV_MODE)

    if capture_content is None:
        capture = any(
            _flag(var, environ[var])
            for var in (names.ENV_CAPTURE_CONTENT, names.ENV_GENAI_CAPTURE_CONTENT)
            if var in environ
        )
    else:
        capture = bool(capture_content)

    if providers is not None:
        if isinstance(providers, str):
            raise ToolTurnInputError(f"providers={providers!r}: expected a sequence of provider names")
        resolved_providers = _providers(providers, "providers")
    elif names.ENV_PROVIDERS in environ:
        resolved_providers = _providers(_words(environ[names.ENV_PROVIDERS]), names.ENV_PROVIDERS)
    else:
        resolved_providers = PROVIDERS

    rounds = (
        _rounds(max_tool_rounds, "max_tool_rounds")
        if max_tool_rounds is not None
        else _rounds(environ.get(names.ENV_MAX_TOOL_ROUNDS), names.ENV_MAX_TOOL_ROUNDS)
    )

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
