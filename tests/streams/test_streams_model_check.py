"""Provider words as reports repeat them, and which model answered: substitution, snapshots, retraction."""

from __future__ import annotations

import pytest

from otel_toolturn.streams._model_check import ReportedModel, names_requested_model, note_response_model
from otel_toolturn.streams._provider_word import is_provider_word, provider_word


@pytest.mark.parametrize(
    ("raw", "folded"),
    [
        ("end_turn", "end_turn"),
        ("claude-3-7-sonnet-20250219", "claude-3-7-sonnet-20250219"),
        ("accounts/fireworks/models/llama-v3:0", "accounts/fireworks/models/llama-v3:0"),
        ("response.output_text.delta", "response.output_text.delta"),
        ("", "?"),
        ("end turn", "?"),
        ("stop\n", "?"),
        ("-leading-dash", "?"),
        ("x" * 129, "?"),
        ("é", "?"),
        (None, "?"),
        (7, "?"),
    ],
)
def test_provider_word(raw: object, folded: str) -> None:
    """A word in the shape of a provider word is kept as it is; anything else becomes `?`."""
    assert provider_word(raw) == folded
    assert is_provider_word(raw) is (folded != "?")


MODEL_CASES: list[tuple[str, list[object], str | None, str | None, bool]] = [
    # (case, frames' model names in order, requested, expected substituted, expected name_dropped)
    ("same model", ["gpt-4o"], "gpt-4o", None, False),
    ("dated snapshot of the alias", ["gpt-4o-mini-2024-07-18"], "gpt-4o-mini", None, False),
    ("compact snapshot", ["claude-haiku-4-5-20251001"], "claude-haiku-4-5", None, False),
    ("four-digit snapshot", ["gpt-4-0613"], "gpt-4", None, False),
    ("latest alias", ["claude-3-5-haiku-20241022"], "claude-3-5-haiku-latest", None, False),
    ("three-digit version", ["gemini-1.5-flash-002"], "gemini-1.5-flash", None, False),
    ("substitution", ["gpt-4o-mini"], "gpt-4o", "gpt-4o-mini", False),
    ("a longer name is not a snapshot", ["gpt-4o-mini"], "gpt-4", "gpt-4o-mini", False),
    ("substitution then retraction", ["other-model", "gpt-4o"], "gpt-4o", None, False),
    ("retraction then substitution: the last name decides", ["gpt-4o", "other"], "gpt-4o", "other", False),
    ("naming nothing is not an update", ["other", None, ""], "gpt-4o", "other", False),
    ("a non-string is not an update", ["other", 12], "gpt-4o", "other", False),
    ("outside the word shape: dropped, counted", ["other", "bad name"], "gpt-4o", "other", True),
    ("dropped names counted once", ["bad name", "worse name"], "gpt-4o", None, True),
    ("no requested model: nothing is a substitution", ["other"], None, None, False),
]


@pytest.mark.parametrize(
    ("frames", "requested", "substituted", "dropped"),
    [case[1:] for case in MODEL_CASES],
    ids=[case[0] for case in MODEL_CASES],
)
def test_note_response_model_table(
    frames: list[object], requested: str | None, substituted: str | None, dropped: bool
) -> None:
    """The last frame naming a model decides; the requested id retracts; bad names are dropped once."""
    model = ReportedModel()
    for name in frames:
        model = note_response_model(model, name, requested)
    assert model.substituted == substituted
    assert model.name_dropped is dropped


def test_note_response_model_keeps_the_model_when_nothing_changes() -> None:
    """Frames that repeat the model or name nothing return the same object."""
    model = note_response_model(ReportedModel(), "gpt-4o", "gpt-4o")
    assert note_response_model(model, "gpt-4o", "gpt-4o") is model
    assert note_response_model(model, None, "gpt-4o") is model


def test_names_requested_model_rejects_other_suffixes() -> None:
    """Only a date-shaped suffix after the requested id reads as the requested model."""
    assert names_requested_model("gpt-4o-2024-08-06", "gpt-4o")
    assert not names_requested_model("gpt-4o-audio", "gpt-4o")
    assert not names_requested_model("gpt-4o-12345", "gpt-4o")
    assert not names_requested_model("gpt-4", "gpt-4o")


@pytest.mark.parametrize(
    "requested",
    [
        "anthropic.claude-3-5-haiku-20241022-v1:0",
        "us.anthropic.claude-3-5-haiku-20241022-v1:0",
        "global.anthropic.claude-3-5-haiku-20241022-v1:0",
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0",
        "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0",
    ],
)
def test_a_bedrock_model_id_names_the_model_it_wraps(requested: str) -> None:
    """Bedrock answers its model id (vendor, region profile, version, ARN) with the vendor's model name."""
    assert names_requested_model("claude-3-5-haiku-20241022", requested)
    assert not names_requested_model("claude-3-5-sonnet-20241022", requested)
    assert not names_requested_model("claude-3-5-haiku", requested)


def test_a_dotted_model_name_is_not_read_as_a_bedrock_id() -> None:
    """Only a known Bedrock vendor prefix is taken away: a dotted name of another provider stays whole."""
    assert not names_requested_model("5-flash", "gemini-1.5-flash")
    assert names_requested_model("gemini-1.5-flash-002", "gemini-1.5-flash")
