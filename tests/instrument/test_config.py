"""``init``'s options: keyword over ``OTEL_TOOLTURN_*`` over the default; a bad keyword raises, a bad variable warns."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from otel_toolturn import LANES, ToolTurnInputError
from otel_toolturn.instrument import Options, ToolTurnInstrumentor, names
from otel_toolturn.instrument._config import LANES_OF, PROVIDERS, UNINSTRUMENTED_LANES, Provider, resolve_options
from tests.instrument.conftest import Otel
from tests.instrument.wire import MODEL, Wire


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
    ("keywords", "named"),
    [
        ({"mode": "fix"}, "mode='fix': expected one of repair, observe"),
        ({"providers": ["gemini"]}, "'gemini' is not a provider"),
        ({"providers": "openai"}, "providers='openai'"),
        ({"max_tool_rounds": 0}, "max_tool_rounds=0"),
        ({"handoff_tools": "agent_*"}, "handoff_tools='agent_*'"),
    ],
)
def test_unreadable_keywords_name_what_arrived(keywords: dict[str, Any], named: str) -> None:
    """A keyword that cannot be read raises ``ToolTurnInputError`` naming the option, the value, what was expected."""
    with pytest.raises(ToolTurnInputError, match=named.replace("*", r"\*")):
        resolve_options(environ={}, **keywords)


@pytest.mark.parametrize(
    ("variable", "raw", "expected"),
    [
        (names.ENV_MODE, "bogus", Options()),
        (names.ENV_CAPTURE_CONTENT, "maybe", Options()),
        (names.ENV_GENAI_CAPTURE_CONTENT, "perhaps", Options()),
        (names.ENV_PROVIDERS, "gemini", Options()),
        (names.ENV_PROVIDERS, "anthropic, gemini", Options(providers=("anthropic",))),
        (names.ENV_MAX_TOOL_ROUNDS, "many", Options()),
        (names.ENV_MAX_TOOL_ROUNDS, "0", Options()),
    ],
)
def test_an_unreadable_variable_warns_and_its_default_is_used(
    variable: str, raw: str, expected: Options, caplog: pytest.LogCaptureFixture
) -> None:
    """A variable that cannot be read is a logged warning naming it and its value; the default is used."""
    with caplog.at_level(logging.WARNING, logger="otel_toolturn.instrument"):
        assert resolve_options(environ={variable: raw}) == expected
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert variable in record.getMessage()
    assert repr(raw.rsplit(",", maxsplit=1)[-1].strip()) in record.getMessage()


def test_instrumenting_with_a_bogus_mode_variable_records_in_the_default_mode(
    otel: Otel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OTEL_TOOLTURN_MODE=bogus``: instrumenting does not raise, and calls are recorded in repair mode."""
    monkeypatch.setenv(names.ENV_MODE, "bogus")
    instrumentor = ToolTurnInstrumentor()
    instrumentor.instrument(
        tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider, logger_provider=otel.logger_provider
    )
    try:
        Wire().openai().chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    finally:
        instrumentor.uninstrument()
    (span,) = otel.call_spans()
    assert span.attributes is not None
    assert span.attributes[names.MODE] == "repair"


def test_each_lane_belongs_to_exactly_one_provider() -> None:
    """The family SDKs' lanes, read from the vocabulary, are every lane once; every other SDK speaks Chat alone."""
    families: tuple[Provider, ...] = ("openai", "anthropic", "google_genai", "litellm", "botocore")
    chat_sdks = [sdk for sdk in PROVIDERS if sdk not in families]
    family = sorted(lane for sdk in families for lane in LANES_OF[sdk])
    assert family == sorted(set(LANES) - UNINSTRUMENTED_LANES)
    assert [LANES_OF[sdk] for sdk in chat_sdks] == [("openai.chat_completions",)] * len(chat_sdks)
    assert frozenset() == UNINSTRUMENTED_LANES
    assert LANES_OF["botocore"] == ("bedrock.converse",)
    assert LANES_OF["anthropic"] == ("anthropic.messages",)
