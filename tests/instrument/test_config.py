"""``init``'s options: keyword over ``OTEL_TOOLTURN_*`` over the default; unreadable values are typed errors."""

from __future__ import annotations

from typing import Any

import pytest

from otel_toolturn import ToolTurnInputError
from otel_toolturn.instrument import Options, names
from otel_toolturn.instrument._config import resolve_options


def test_defaults() -> None:
    """No keyword, no variable: repair mode, content off, every provider, no round limit, no handoffs."""
    assert resolve_options(environ={}) == Options()


def test_environment_is_read() -> None:
    """Every option has its variable."""
    environ = {
        names.ENV_MODE: "observe",
        names.ENV_CAPTURE_CONTENT: "true",
        names.ENV_PROVIDERS: "anthropic",
        names.ENV_MAX_TOOL_ROUNDS: "4",
        names.ENV_HANDOFF_TOOLS: "transfer_*, escalate",
    }
    assert resolve_options(environ=environ) == Options(
        mode="observe",
        capture_content=True,
        providers=("anthropic",),
        max_tool_rounds=4,
        handoff_tools=("transfer_*", "escalate"),
    )


def test_keyword_wins_over_environment() -> None:
    """A keyword overrides its variable."""
    environ = {names.ENV_MODE: "observe", names.ENV_CAPTURE_CONTENT: "true"}
    options = resolve_options(mode="repair", capture_content=False, environ=environ)
    assert (options.mode, options.capture_content) == ("repair", False)


@pytest.mark.parametrize("word", ["true", "SPAN_AND_EVENT", "span_only"])
def test_genai_content_capture_variable_turns_capture_on(word: str) -> None:
    """The GenAI instrumentations' content-capture variable is honoured."""
    assert resolve_options(environ={names.ENV_GENAI_CAPTURE_CONTENT: word}).capture_content is True


@pytest.mark.parametrize(
    ("keywords", "environ", "named"),
    [
        ({"mode": "fix"}, {}, "mode='fix'"),
        ({}, {names.ENV_MODE: "fix"}, names.ENV_MODE),
        ({"providers": ["gemini"]}, {}, "'gemini'"),
        ({"providers": "openai"}, {}, "providers='openai'"),
        ({"max_tool_rounds": 0}, {}, "max_tool_rounds=0"),
        ({}, {names.ENV_MAX_TOOL_ROUNDS: "many"}, names.ENV_MAX_TOOL_ROUNDS),
        ({}, {names.ENV_CAPTURE_CONTENT: "maybe"}, names.ENV_CAPTURE_CONTENT),
    ],
)
def test_unreadable_values_name_what_arrived(keywords: dict[str, Any], environ: dict[str, str], named: str) -> None:
    """An option that cannot be read raises ``ToolTurnInputError`` naming the option and the value."""
    with pytest.raises(ToolTurnInputError, match=named.replace("*", r"\*")):
        resolve_options(environ=environ, **keywords)
