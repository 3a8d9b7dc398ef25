"""The stream-end ledger: the first ending decides, everything later is refused and counted."""

from __future__ import annotations

from otel_toolturn.streams import StreamEndIgnored
from otel_toolturn.streams._ledger import StreamEndLedger


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


def test_ledger_folds_words_outside_the_provider_word_shape() -> None:
    """A refused frame's word outside the shape of a provider word is recorded as `?`, the count still moves."""
    ledger = StreamEndLedger()
    ledger.decide("error", "bad word!")
    ledger.note("finish", "also bad")
    assert ledger.decided == ("error", "?")
    assert ledger.ignored == StreamEndIgnored(statement="finish", word="?", count=1)
