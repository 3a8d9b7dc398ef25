"""Anthropic's ``input_transformations`` read from streams (start and delta) and whole messages, raw and via the SDK."""

from __future__ import annotations

import json
from typing import Final

import pytest

from otel_toolturn._vocab import Lane
from otel_toolturn.streams import (
    INPUT_TRANSFORMATION_REASONS,
    INPUT_TRANSFORMATION_TYPES,
    InputTransformation,
    StreamReport,
    check_response,
    sse_data,
)
from otel_toolturn.streams.anthropic_messages import input_transformations_of
from tests.streams._drive import as_object, both, fed
from tests.streams._frames import Frame, a_block_stop, a_delta, a_dropped, a_start, a_stop, a_text, a_text_start
from tests.streams._recordings import RECORDED, present
from tests.streams._sdk import anthropic_message

LANE: Final[Lane] = "anthropic.messages"
PREFIX: Final = InputTransformation(
    type="thinking_dropped", reason="prefix_binding_mismatch", path="messages.2.content.0"
)
MODEL_BOUND: Final = InputTransformation(
    type="thinking_dropped", reason="model_binding_mismatch", path="messages.0.content.0"
)


def turn(start: list[Frame] | None = None, delta: list[Frame] | None = None) -> list[Frame]:
    """A text turn whose ``message_start`` and ``message_delta`` carry the given transformations."""
    return [
        a_start(transformations=start),
        a_text_start(0),
        a_text(0, "Hello there!"),
        a_block_stop(0),
        a_delta("end_turn", transformations=delta),
        a_stop(),
    ]


def message(transformations: object) -> dict[str, object]:
    """A whole Anthropic message carrying ``transformations`` as its ``input_transformations``."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "model-a",
        "content": [{"type": "text", "text": "Hello there!"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 20},
        "input_transformations": transformations,
    }


def test_start_and_delta_entries_are_reported_in_order_raw_and_via_the_sdk() -> None:
    """Entries of message_start then of message_delta, each with the provider's type, reason and path."""
    r = both(
        LANE,
        turn(
            start=[a_dropped("messages.2.content.0")],
            delta=[a_dropped("messages.0.content.0", "model_binding_mismatch")],
        ),
    )
    assert r.input_transformations == (PREFIX, MODEL_BOUND)
    assert r.finish_reasons == ("end_turn",)


def test_an_entry_in_both_start_and_delta_is_reported_once() -> None:
    """The same entry listed in message_start and message_delta is one transformation."""
    entry = a_dropped("messages.2.content.0")
    assert both(LANE, turn(start=[entry], delta=[dict(entry)])).input_transformations == (PREFIX,)


@pytest.mark.parametrize(
    ("start", "delta", "expected"),
    [
        (None, None, ()),
        ([], [], ()),
        ([a_dropped("messages.2.content.0")], [], (PREFIX,)),
        ([], [a_dropped("messages.2.content.0")], (PREFIX,)),
    ],
    ids=["absent", "empty", "empty delta", "delta only"],
)
def test_an_empty_or_absent_list_adds_nothing(
    start: list[Frame] | None, delta: list[Frame] | None, expected: tuple[InputTransformation, ...]
) -> None:
    """An absent or empty list is no transformation; it never erases one reported before."""
    assert both(LANE, turn(start=start, delta=delta)).input_transformations == expected


def test_unknown_type_and_reason_are_kept_as_sent_and_labelled_other() -> None:
    """A type or reason outside the known ones is reported as sent; its labels are ``other``."""
    r = both(LANE, turn(start=[a_dropped("messages.4", "new_reason", "new_kind")]))
    (t,) = r.input_transformations
    assert (t.type, t.reason, t.path) == ("new_kind", "new_reason", "messages.4")
    assert (t.type_label, t.reason_label) == ("other", "other")


def test_known_values_are_their_own_labels() -> None:
    """Every known type and reason maps to itself, and the label sets are exactly those plus ``other``."""
    for reason in ("prefix_binding_mismatch", "model_binding_mismatch"):
        t = InputTransformation(type="thinking_dropped", reason=reason, path="p")
        assert (t.type_label, t.reason_label) == ("thinking_dropped", reason)
    assert set(INPUT_TRANSFORMATION_TYPES) == {"thinking_dropped", "other"}
    assert set(INPUT_TRANSFORMATION_REASONS) == {"prefix_binding_mismatch", "model_binding_mismatch", "other"}


def test_attribute_objects_are_read_like_json() -> None:
    """Frames as attribute-only objects (no mapping) give the same transformations."""
    frames = turn(
        start=[a_dropped("messages.2.content.0")], delta=[a_dropped("messages.0.content.0", "model_binding_mismatch")]
    )
    assert fed(LANE, [as_object(f) for f in frames]).input_transformations == (PREFIX, MODEL_BOUND)


@pytest.mark.parametrize(
    "value",
    ["thinking_dropped", {"type": "thinking_dropped"}, [1, "x", None], [{"type": 3, "reason": None}]],
    ids=["a string", "a mapping", "entries that are not objects", "values that are not strings"],
)
def test_unreadable_values_never_raise(value: object) -> None:
    """A value that is not a list is nothing; entries that are not objects are left out; non-strings read as ``""``."""
    start = a_start()
    start["message"] = {**message(value), "content": []}
    r: StreamReport = fed(LANE, [start, a_delta("end_turn"), a_stop()])
    expected = (InputTransformation(type="", reason="", path=""),) if value == [{"type": 3, "reason": None}] else ()
    assert r.input_transformations == expected
    assert r.frames_unread == 0


def test_a_delta_after_the_end_still_reports_its_transformations() -> None:
    """A message_delta refused after the first ending still has its transformations read."""
    frames = turn(start=[])
    frames.append(a_delta("end_turn", transformations=[a_dropped("messages.2.content.0")]))
    r = fed(LANE, frames)
    assert r.input_transformations == (PREFIX,)
    assert r.ends_ignored is not None


def test_whole_message_raw_dict_and_sdk_object_agree() -> None:
    """A whole message: the raw dict and the SDK's Message (the field kept as an extra) give the same entries."""
    body = message([a_dropped("messages.2.content.0"), a_dropped("messages.0.content.0", "model_binding_mismatch")])
    from_raw = check_response(LANE, body, requested_model="model-a")
    sdk_object = anthropic_message(json.dumps(body).encode())
    assert check_response(LANE, sdk_object, requested_model="model-a") == from_raw
    assert from_raw.input_transformations == (PREFIX, MODEL_BOUND)


@pytest.mark.parametrize("value", [[], None], ids=["empty", "null"])
def test_whole_message_without_entries_reports_none(value: object) -> None:
    """A whole message with an empty or null list, or none at all, reports no transformation."""
    body = message(value)
    assert check_response(LANE, body, requested_model="model-a").input_transformations == ()
    del body["input_transformations"]
    sdk_object = anthropic_message(json.dumps(body).encode())
    assert check_response(LANE, sdk_object, requested_model="model-a").input_transformations == ()


def test_whole_message_repeated_entry_is_reported_once() -> None:
    """A whole message listing one entry twice reports it once."""
    body = message([a_dropped("messages.2.content.0"), a_dropped("messages.2.content.0")])
    assert check_response(LANE, body, requested_model="model-a").input_transformations == (PREFIX,)


def test_the_reader_reads_an_sdk_extra_field() -> None:
    """``input_transformations_of`` reads the field of an SDK Message that does not declare it."""
    sdk_object = anthropic_message(json.dumps(message([a_dropped("messages.2.content.0")])).encode())
    assert "input_transformations" not in type(sdk_object).model_fields
    assert input_transformations_of(sdk_object) == (PREFIX,)


RECORDED_EXPECTED: Final = {
    "input_transformations_delta_response.txt": (PREFIX, MODEL_BOUND),
    "input_transformations_empty_delta_response.txt": (MODEL_BOUND,),
    "input_transformations_start_only_response.txt": (MODEL_BOUND,),
}


@pytest.mark.parametrize("name", sorted(RECORDED_EXPECTED))
def test_recorded_streams_report_their_transformations(name: str) -> None:
    """The recorded streams: start and delta entries, an empty delta list, a start-only list."""
    body = present(RECORDED / "anthropic" / name).read_bytes()
    assert fed(LANE, sse_data(body), requested="claude-sonnet-4-5").input_transformations == RECORDED_EXPECTED[name]
