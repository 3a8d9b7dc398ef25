"""The seed-001 helpers, table-driven over every case their contracts state."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from otel_toolturn._vocab import STREAM_DROP_CAUSES
from otel_toolturn.streams import (
    STREAM_TORN_WARNING,
    ModelSeat,
    StreamDrop,
    StreamEndIgnored,
    StreamEndLedger,
    TurnCapFacts,
    TurnNote,
    echo_folded_word,
    model_output_invalid_of,
    name_missing_cause,
    names_requested_model,
    note_response_model,
    parse_streamed_tool_args,
    place_turn_notes,
    sse_data,
    stamp_stream_drops,
    stream_drops_of,
    truncation_cause_clause,
    turn_notes_of,
)
from otel_toolturn.streams._cap import CAP_CLAUSE, TRANSPORT_CLAUSE
from otel_toolturn.streams._notes import DIAGNOSTICS_KEY

# --- parse_streamed_tool_args -----------------------------------------------------------------

PARSE_CASES = [
    # (text, closed, expected) — the seed's table
    ('{"city": "Paris"}', True, {"city": "Paris"}),  # valid object → that object
    ('{"city": "Paris"}', False, {"city": "Paris"}),  # ... whatever the close evidence
    ("{}", True, {}),  # a complete {} included
    ("{}", False, {}),
    ("", True, {}),  # no bytes, closed → a no-argument call
    ("", False, None),  # no bytes, not closed → nothing says it was a no-argument call
    ('{"city": "Par', True, None),  # truncated
    ('{"city": "Par', False, None),
    ('{"unit": celsius}', True, None),  # invalid JSON
    ('"a string"', True, None),  # top-level string
    ("[1, 2]", True, None),  # top-level array
    ("42", True, None),  # top-level number
    ("null", True, None),  # top-level null
    ("true", True, None),
    ("   ", True, None),  # whitespace is bytes, and not an object
    ('{"x": NaN}', True, None),  # not JSON
    ('{"x": Infinity}', True, None),
    ('{"a": 1} trailing', True, None),
    (' {"a": 1} ', False, {"a": 1}),  # surrounding whitespace is JSON
]


@pytest.mark.parametrize(("text", "closed", "expected"), PARSE_CASES)
def test_parse_streamed_tool_args_table(text: str, closed: bool, expected: dict[str, object] | None) -> None:
    """Each case of the fail-closed argument table gives the seed's outcome."""
    assert parse_streamed_tool_args(text, closed=closed) == expected


def test_parse_streamed_tool_args_returns_a_fresh_object_every_time() -> None:
    """Two judgements of the same text never share a dict (callers must not cache outcomes)."""
    first = parse_streamed_tool_args("", closed=True)
    second = parse_streamed_tool_args("", closed=True)
    assert first == second == {}
    assert first is not second


def test_parse_streamed_tool_args_closed_is_keyword_only() -> None:
    """The close evidence cannot be passed positionally or left out."""
    with pytest.raises(TypeError):
        parse_streamed_tool_args("{}", True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        parse_streamed_tool_args("{}")  # type: ignore[call-arg]


@pytest.mark.parametrize(("closed", "cause"), [(True, "unnamed"), (False, "truncated")])
def test_name_missing_cause(closed: bool, cause: str) -> None:
    """A closed slot without a name was sent without one; an unclosed one was cut."""
    assert name_missing_cause(closed=closed) == cause


# --- echo words and the response model --------------------------------------------------------


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
def test_echo_folded_word(raw: object, folded: str) -> None:
    """A word in the echo shape is kept as it is; anything else becomes `?`."""
    assert echo_folded_word(raw) == folded


MODEL_CASES: list[tuple[str, list[object], str | None, str | None, bool]] = [
    # (case, frames' model names in order, requested, expected substituted, expected echo_dropped)
    ("same model", ["gpt-4o"], "gpt-4o", None, False),
    ("dated snapshot of the alias", ["gpt-4o-mini-2024-07-18"], "gpt-4o-mini", None, False),
    ("compact snapshot", ["claude-haiku-4-5-20251001"], "claude-haiku-4-5", None, False),
    ("four-digit snapshot", ["gpt-4-0613"], "gpt-4", None, False),
    ("latest alias", ["claude-3-5-haiku-20241022"], "claude-3-5-haiku-latest", None, False),
    ("substitution", ["gpt-4o-mini"], "gpt-4o", "gpt-4o-mini", False),
    ("a longer name is not a snapshot", ["gpt-4o-mini"], "gpt-4", "gpt-4o-mini", False),
    ("substitution then retraction", ["other-model", "gpt-4o"], "gpt-4o", None, False),
    ("retraction then substitution: the last name decides", ["gpt-4o", "other"], "gpt-4o", "other", False),
    ("naming nothing is not an update", ["other", None, ""], "gpt-4o", "other", False),
    ("a non-string is not an update", ["other", 12], "gpt-4o", "other", False),
    ("outside the echo shape: dropped, counted", ["other", "bad name"], "gpt-4o", "other", True),
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
    seat = ModelSeat()
    for name in frames:
        seat = note_response_model(seat, name, requested)
    assert seat.substituted == substituted
    assert seat.echo_dropped is dropped


def test_note_response_model_keeps_the_seat_when_nothing_changes() -> None:
    """Frames that repeat the model or name nothing return the same seat object (no work per chunk)."""
    seat = note_response_model(ModelSeat(), "gpt-4o", "gpt-4o")
    assert note_response_model(seat, "gpt-4o", "gpt-4o") is seat
    assert note_response_model(seat, None, "gpt-4o") is seat


def test_names_requested_model_rejects_other_suffixes() -> None:
    """Only a date-shaped suffix after the requested id reads as the requested model."""
    assert names_requested_model("gpt-4o-2024-08-06", "gpt-4o")
    assert not names_requested_model("gpt-4o-audio", "gpt-4o")
    assert not names_requested_model("gpt-4o-12345", "gpt-4o")
    assert not names_requested_model("gpt-4", "gpt-4o")


# --- the stream-end ledger --------------------------------------------------------------------


def test_ledger_first_ending_decides_and_later_ones_are_counted() -> None:
    """The first ending decides; every later ending or content frame is refused and counted."""
    ledger = StreamEndLedger()
    assert ledger.ignored is None
    assert ledger.decide("finish", "end_turn") is True
    assert ledger.decided == ("finish", "end_turn")
    ledger.note("content", "content_block_delta")
    assert ledger.decide("message_stop", "message_stop") is False
    assert ledger.decide("error", "overloaded_error") is False
    assert ledger.decided == ("finish", "end_turn")
    assert ledger.ignored == StreamEndIgnored(statement="content", word="content_block_delta", count=3)


def test_ledger_folds_words_outside_the_echo_shape() -> None:
    """A refused frame's word outside the echo shape is recorded as `?`, the count still moves."""
    ledger = StreamEndLedger()
    ledger.decide("error", "bad word!")
    ledger.note("finish", "also bad")
    assert ledger.decided == ("error", "?")
    assert ledger.ignored == StreamEndIgnored(statement="finish", word="?", count=1)


def test_torn_warning_text() -> None:
    """The torn-stream warning carries the seed's words."""
    assert STREAM_TORN_WARNING == "Connection closed mid-response. The response above may be incomplete."


# --- the cap clause and the structured account ------------------------------------------------

CLAUSE_CASES = [
    # (cap facts, terminal frame seen, clause)
    (TurnCapFacts(cap_stop=True), True, CAP_CLAUSE),  # the lane's cap stop
    (TurnCapFacts(output_tokens=100, cap_tokens=100), True, CAP_CLAUSE),  # counted output at the cap
    (TurnCapFacts(output_tokens=120, cap_tokens=100), True, CAP_CLAUSE),  # over the cap
    (TurnCapFacts(output_tokens=99, cap_tokens=100), True, ""),  # below: another stop adds nothing
    (TurnCapFacts(output_tokens=100), True, ""),  # cap unknown: nothing says the cap cut it
    (TurnCapFacts(), True, ""),  # any other stop adds nothing
    (TurnCapFacts(), False, TRANSPORT_CLAUSE),  # no terminal frame: the transport
    (TurnCapFacts(output_tokens=5, cap_tokens=100), False, TRANSPORT_CLAUSE),
    (TurnCapFacts(cap_stop=True), False, CAP_CLAUSE),  # the cap named when the stream says so
    (TurnCapFacts(output_tokens=100, cap_tokens=100), False, CAP_CLAUSE),
]


@pytest.mark.parametrize(("cap", "terminal", "clause"), CLAUSE_CASES)
def test_truncation_cause_clause_table(cap: TurnCapFacts, terminal: bool, clause: str) -> None:
    """The cap is named only when the stream says it cut; no terminal frame names the transport."""
    assert truncation_cause_clause(cap, terminal_frame_seen=terminal) == clause


@pytest.mark.parametrize(
    ("truncated", "unnamed", "cap", "expected"),
    [
        (0, 0, TurnCapFacts(cap_stop=True), None),
        (1, 0, TurnCapFacts(), ("truncated", False)),
        (1, 3, TurnCapFacts(cap_stop=True), ("truncated", True)),
        (2, 0, TurnCapFacts(output_tokens=10, cap_tokens=10), ("truncated", True)),
        (0, 2, TurnCapFacts(cap_stop=True), ("unnamed", False)),  # the cap rides only with truncated
    ],
)
def test_model_output_invalid_of_table(
    truncated: int, unnamed: int, cap: TurnCapFacts, expected: tuple[str, bool] | None
) -> None:
    """Truncated wins over unnamed; the output limit rides only with truncated and reads the cap facts."""
    account = model_output_invalid_of(truncated=truncated, unnamed=unnamed, cap=cap)
    assert (None if account is None else (account.cause, account.output_limit)) == expected


# --- turn notes, stamping and reading stream drops ----------------------------------------------

Block = dict[str, str]


def is_call(block: Block) -> bool:
    return block["type"] == "tool_use"


def note_block(text: str) -> Block:
    return {"type": "text", "text": text}


NOTES = turn_notes_of(
    [
        StreamDrop(cause="truncated", count=2),
        StreamDrop(cause="unnamed", count=1),
        StreamDrop(cause="bad_frame", count=0),
    ],
    clause=CAP_CLAUSE,
)


def test_turn_notes_word_each_drop_with_a_positive_count() -> None:
    """One note per drop with a positive count, the cap clause worded into the truncated sentence."""
    assert [(n.cause, n.count) for n in NOTES] == [("truncated", 2), ("unnamed", 1)]
    assert "2 tool calls were dropped" in NOTES[0].text
    assert CAP_CLAUSE in NOTES[0].text
    assert "1 tool call was dropped" in NOTES[1].text
    assert CAP_CLAUSE not in NOTES[1].text


def test_place_turn_notes_ahead_of_the_first_call() -> None:
    """Notes go ahead of the first call, in order; the calls stay last; the drops are the same list."""
    content: list[Block] = [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "a"},
        {"type": "tool_use", "id": "b"},
    ]
    placed, drops = place_turn_notes(content, NOTES, is_call=is_call, note_block=note_block)
    assert [b["type"] for b in placed] == ["text", "text", "text", "tool_use", "tool_use"]
    assert [b["text"] for b in placed[1:3]] == [n.text for n in NOTES]
    assert drops == (StreamDrop(cause="truncated", count=2), StreamDrop(cause="unnamed", count=1))
    assert len(content) == 3  # the caller's list is not altered


def test_place_turn_notes_at_the_end_without_calls() -> None:
    """A turn with no call (text survived, every call dropped) carries its notes at the end."""
    content: list[Block] = [{"type": "text", "text": "Working on it."}]
    placed, _ = place_turn_notes(content, NOTES[:1], is_call=is_call, note_block=note_block)
    assert placed == [content[0], {"type": "text", "text": NOTES[0].text}]


def test_place_turn_notes_without_notes_returns_the_content_itself() -> None:
    """Nothing to state: the same list comes back and no drop is reported."""
    content: list[Block] = [{"type": "tool_use", "id": "a"}]
    placed, drops = place_turn_notes(content, (), is_call=is_call, note_block=note_block)
    assert placed is content
    assert drops == ()


def test_stamp_and_read_stream_drops_round_trip() -> None:
    """Stamped drops read back as they were; the input message is not altered; no drops → the message itself."""
    message = MappingProxyType({"role": "assistant", "content": "x"})
    drops = (StreamDrop(cause="truncated", count=1, call_ids=("toolu_1",)), StreamDrop(cause="bad_frame", count=2))
    stamped = stamp_stream_drops(message, drops)
    assert stream_drops_of(stamped) == drops
    assert DIAGNOSTICS_KEY not in message
    assert stamp_stream_drops(message, ()) is message
    assert stamp_stream_drops(message, (StreamDrop(cause="unnamed", count=0),)) is message


def test_stamping_again_replaces_the_stream_drops_and_keeps_other_diagnostics() -> None:
    """A second stamp replaces the earlier stream drops; other diagnostics survive."""
    message = {"role": "assistant", DIAGNOSTICS_KEY: [{"kind": "other", "x": 1}]}
    once = stamp_stream_drops(message, (StreamDrop(cause="unnamed", count=1),))
    twice = stamp_stream_drops(once, (StreamDrop(cause="truncated", count=3),))
    assert stream_drops_of(twice) == (StreamDrop(cause="truncated", count=3),)
    assert {"kind": "other", "x": 1} in twice[DIAGNOSTICS_KEY]  # type: ignore[operator]


class Carrier:
    """A host message object carrying diagnostics as an attribute."""

    def __init__(self, diagnostics: object) -> None:
        self.toolturn_diagnostics = diagnostics


MALFORMED: list[object] = [
    None,
    "not a list",
    {"kind": "stream_drop", "cause": "truncated", "count": 1},  # a mapping, not a list
    [None, 3, "x"],
    [{"kind": "other", "cause": "truncated", "count": 1}],
    [{"cause": "truncated", "count": 1}],
    [{"kind": "stream_drop", "cause": "missing_result_synthesized", "count": 1}],
    [{"kind": "stream_drop", "cause": "cut", "count": 1}],
    [{"kind": "stream_drop", "cause": "truncated", "count": 0}],
    [{"kind": "stream_drop", "cause": "truncated", "count": -2}],
    [{"kind": "stream_drop", "cause": "truncated", "count": True}],
    [{"kind": "stream_drop", "cause": "truncated", "count": 1.0}],
    [{"kind": "stream_drop", "cause": "truncated", "count": "1"}],
    [{"kind": "stream_drop", "cause": ["truncated"], "count": 1}],
]


@pytest.mark.parametrize("diagnostics", MALFORMED)
def test_stream_drops_of_reads_malformed_entries_as_no_drop(diagnostics: object) -> None:
    """Only well-formed entries count: anything else reads as no drop, on mappings and objects alike."""
    assert stream_drops_of({DIAGNOSTICS_KEY: diagnostics}) == ()
    assert stream_drops_of(Carrier(diagnostics)) == ()


def test_stream_drops_of_keeps_well_formed_entries_beside_malformed_ones() -> None:
    """A well-formed entry counts even among malformed ones; bad id lists are read as no ids."""
    diagnostics = [
        {"kind": "stream_drop", "cause": "unnamed", "count": 2, "tool_call_ids": ["a", 3]},
        {"kind": "stream_drop", "cause": "truncated", "count": "x"},
        {"kind": "stream_drop", "cause": "bad_frame", "count": 1, "tool_call_ids": ["f"]},
    ]
    assert stream_drops_of(Carrier(diagnostics)) == (
        StreamDrop(cause="unnamed", count=2),
        StreamDrop(cause="bad_frame", count=1, call_ids=("f",)),
    )
    assert stream_drops_of(object()) == ()


def test_every_drop_cause_has_a_note() -> None:
    """Each cause of the closed set is worded, and differently."""
    notes = turn_notes_of([StreamDrop(cause=c, count=1) for c in STREAM_DROP_CAUSES])
    assert [n.cause for n in notes] == list(STREAM_DROP_CAUSES)
    assert all(isinstance(n, TurnNote) and n.count == 1 for n in notes)
    assert len({n.text for n in notes}) == len(STREAM_DROP_CAUSES)


# --- SSE framing ------------------------------------------------------------------------------

SSE_CASES = [
    ("blank-line separated", 'data: {"a":1}\n\ndata: {"b":2}\n\n', ['{"a":1}', '{"b":2}']),
    ("last event without blank line", 'data: {"a":1}\n\ndata: {"b":2}', ['{"a":1}', '{"b":2}']),
    ("last event with one newline", 'data: {"a":1}\n', ['{"a":1}']),
    ("CRLF", 'data: {"a":1}\r\n\r\ndata: {"b":2}\r\n\r\n', ['{"a":1}', '{"b":2}']),
    ("CR", 'data: {"a":1}\r\rdata: {"b":2}\r\r', ['{"a":1}', '{"b":2}']),
    ("trailing spaces kept", 'data: {"a":1}   \n\n', ['{"a":1}   ']),
    ("event and comment lines", 'event: x\n: keepalive\ndata: {"a":1}\n\n', ['{"a":1}']),
    ("no space after colon", 'data:{"a":1}\n\n', ['{"a":1}']),
    ("multi-line data", "data: {\ndata: }\n\n", ["{\n}"]),
    ("events without data", "event: ping\n\n\n\n", []),
    ("unicode line separator stays inside data", 'data: {"a":"x\u2028y"}\n\n', ['{"a":"x\u2028y"}']),
]


@pytest.mark.parametrize(("body", "payloads"), [c[1:] for c in SSE_CASES], ids=[c[0] for c in SSE_CASES])
def test_sse_data(body: str, payloads: list[str]) -> None:
    """The SSE framing the recordings use, edge cases included, gives each event's data."""
    assert sse_data(body) == payloads
    assert sse_data(body.encode()) == payloads
