"""The digest cache: the contract's digests and prefix fingerprint on every path, each message object digested once."""

from __future__ import annotations

import httpx2
import pytest

from otel_toolturn import _law, compose
from otel_toolturn.instrument import _digests, names
from otel_toolturn.instrument._digests import DigestCache
from tests.instrument.conftest import Instrument
from tests.instrument.wire import MODEL, Wire


def _message(n: int) -> dict[str, object]:
    return {"role": "user" if n % 2 else "assistant", "content": f"message {n}"}


def _expected(messages: list[object]) -> str:
    """The contract's definition, computed from scratch."""
    return compose.prefix_fingerprint([compose.message_digest(m) for m in messages[:-1]])


@pytest.fixture
def digested(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every message the cache digests, in order."""
    seen: list[object] = []

    def digest(message: object) -> bytes:
        seen.append(message)
        return compose.message_digest(message)

    monkeypatch.setattr(_digests, "message_digest", digest)
    return seen


def test_each_path_gives_the_contracts_value(digested: list[object]) -> None:
    """Cold, resent, extended, cut and branched transcripts all fingerprint as ``compose.prefix_fingerprint`` says."""
    cache = DigestCache()
    base: list[object] = [_message(n) for n in range(6)]
    cases = [  # with how many messages each digests
        (base, 6),  # cold
        (list(base), 0),  # resent: the same objects in a new list
        ([*base, _message(6), _message(7)], 2),  # extended
        (base[:3], 3),  # cut: no remembered transcript is a prefix of it
        ([*base[:4], _message(40), _message(41)], 3),  # branched: from the cut one, three more
        ([_message(0), *base[1:]], 6),  # an equal first message, but a new object
        (base[:1], 1),  # one message: the empty prefix
    ]
    for messages, digests in cases:
        before = len(digested)
        assert cache.prefix_fingerprint(messages) == _expected(messages)
        assert len(digested) - before == digests


def test_a_growing_conversation_digests_only_its_new_messages(digested: list[object]) -> None:
    """An agent resending its transcript with one more message each turn: each message object is digested once."""
    cache = DigestCache()
    transcript: list[object] = []
    for n in range(50):
        transcript.append(_message(n))
        assert cache.prefix_fingerprint(transcript) == _expected(transcript)
    assert digested == transcript


def test_an_entry_extended_twice_keeps_each_transcripts_digests() -> None:
    """One entry extended by two transcripts (the second finds its digest list grown): each keeps its own, exact."""
    base: list[object] = [_message(n) for n in range(6)]
    longer = [*base, _message(6), _message(7)]
    branch = [*base, _message(60), _message(61), _message(62)]
    first = _digests.remembered(base, None)
    extended = _digests.remembered(longer, first)
    branched = _digests.remembered(branch, first)
    for messages, entry in ((base, first), (longer, extended), (branch, branched)):
        assert entry.own() == [compose.message_digest(m) for m in messages]
    assert extended.digests is first.digests  # the first extension appended in place: nothing copied


def test_a_derived_view_reuses_the_callers_digests(digested: list[object]) -> None:
    """A repaired view (the caller's objects plus a few made for it): only the made ones are digested again."""
    cache = DigestCache()
    caller: list[object] = [_message(n) for n in range(10)]
    for _ in range(3):
        made = {"role": "tool", "content": "made for this request"}
        view = [*caller[:4], made, *caller[4:]]
        assert cache.prefix_fingerprint(view, source=caller) == _expected(view)
    assert len(digested) == 10 + 3


def test_a_view_that_leaves_out_and_moves_messages_keeps_the_value(digested: list[object]) -> None:
    """A view dropping one caller message and moving another up: the contract's value; only the displaced redigested."""
    cache = DigestCache()
    c: list[object] = [_message(n) for n in range(10)]
    view = [c[0], c[1], c[3], c[4], c[7], c[5], c[6], c[8], c[9], {"role": "user", "content": "last"}]
    for _ in range(2):
        assert cache.prefix_fingerprint(view, source=c) == _expected(view)
    assert len(digested) == 10 + 2 * 3  # the caller's ten once; c[5], c[6] (stepped past) and the made one, each call


def test_derived_views_do_not_push_out_the_callers_transcripts() -> None:
    """Views are never remembered: a caller transcript stays found after many other requests' views."""
    cache = DigestCache(slots=2)
    first: list[object] = [_message(n) for n in range(5)]
    other: list[object] = [_message(100 + n) for n in range(5)]
    cache.prefix_fingerprint(first)
    cache.prefix_fingerprint(other)
    for _ in range(5):
        cache.prefix_fingerprint([*other, {"role": "tool", "content": "made"}], source=other)
    assert cache.prefix_fingerprint(first) == _expected(first)
    assert [e.messages for e in cache._recent] == [tuple(other), tuple(first)]


def test_the_span_carries_the_prefix_fingerprint_of_what_was_sent(instrument: Instrument) -> None:
    """On a repaired request, the span's prefix fingerprint is that of the repaired messages that were sent."""
    otel = instrument()
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    broken: list[object] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "user", "content": "next"},
    ]
    view = _law.ensure_tool_turn_invariants(broken, lane="openai.chat_completions").messages
    wire = Wire()
    client = wire.openai()
    for _ in range(2):
        client.chat.completions.create(model=MODEL, messages=broken)
    assert [len(wire.body(i)["messages"]) for i in range(2)] == [4, 4]  # the closing result was added
    fingerprints = [s.attributes[names.FINGERPRINT_PREFIX] for s in otel.call_spans() if s.attributes]
    assert fingerprints == [_expected(list(view))] * 2


def test_the_digests_of_a_derived_view_are_each_messages_own(digested: list[object]) -> None:
    """``digests`` of a view derived from the caller's transcript: every item's own digest, the last one too."""
    cache = DigestCache()
    caller: list[object] = [_message(n) for n in range(6)]
    view = [caller[0], caller[2], {"role": "tool", "content": "made"}, *caller[3:], {"role": "user", "content": "x"}]
    assert cache.digests(view, source=caller) == [compose.message_digest(m) for m in view]
    assert cache.digests(caller) == [compose.message_digest(m) for m in caller]


@pytest.mark.parametrize("lane", ["anthropic.messages", "openai.chat_completions"])
def test_the_digests_are_taken_after_the_transport_has_the_request(
    instrument: Instrument, monkeypatch: pytest.MonkeyPatch, lane: str
) -> None:
    """No message is digested between the caller's call and the send: the transport has the request first."""
    instrument()
    order: list[str] = []

    def digest(message: object) -> bytes:
        order.append("digest")
        return compose.message_digest(message)

    monkeypatch.setattr(_digests, "message_digest", digest)
    wire = Wire()
    send = wire.handle

    def handle(request: httpx2.Request) -> httpx2.Response:
        order.append("sent")
        return send(request)

    wire.handle = handle  # type: ignore[method-assign]
    messages = [_message(n) for n in range(1, 8)]
    if lane == "anthropic.messages":
        wire.anthropic().messages.create(model=MODEL, max_tokens=8, messages=messages)
    else:
        wire.openai().chat.completions.create(model=MODEL, messages=messages)
    assert order == ["sent"] + ["digest"] * len(messages)


def _rebuilt(messages: list[object]) -> list[object]:
    """New objects with the same values, as a framework that rebuilds its dicts on every call sends them."""
    return [dict(m) if isinstance(m, dict) else m for m in messages]


def test_a_rebuilt_conversation_digests_only_its_new_messages(digested: list[object]) -> None:
    """Resent as new objects with the same values, growing: the earlier digests are taken, only the new messages'."""
    cache = DigestCache()
    held: list[object] = [_message(n) for n in range(_digests.FEW + 4)]
    counts = []
    for turn in range(4):
        held += [_message(100 + 3 * turn + k) for k in range(3)] if turn else []
        sent = _rebuilt(held)
        before = len(digested)
        assert cache.prefix_fingerprint(sent) == _expected(sent)
        assert cache.digests(sent) == [compose.message_digest(m) for m in sent]
        counts.append(len(digested) - before)
    assert counts == [_digests.FEW + 4, 1 + 3, 1 + 3, 1 + 3]  # cold; then the first (to find it) and the three new


_CHANGES = [
    ({"role": "user", "content": 1}, {"role": "user", "content": True}),  # equal in Python, not in JSON
    ({"role": "user", "content": "file 1"}, {"role": "user", "content": "file 10"}),
    (12, 123),  # a longer value where the remembered one ends
]


@pytest.mark.parametrize("last", [False, True], ids=["before-the-last", "the-last"])
@pytest.mark.parametrize(("old", "new"), _CHANGES)
def test_a_rebuilt_transcript_that_differs_takes_only_the_digests_before_its_last_message(
    digested: list[object], old: object, new: object, *, last: bool
) -> None:
    """Rebuilt, differing by value before the last remembered message: all digested; in it: only it and the new."""
    cache = DigestCache()
    base: list[object] = [_message(n) for n in range(_digests.FEW + 4)]
    at = len(base) if last else 5
    cache.prefix_fingerprint([*base[:at], old, *base[at:]])
    before = len(digested)
    changed = [*_rebuilt(base[:at]), new, *_rebuilt(base[at:]), _message(99)]
    assert cache.prefix_fingerprint(changed) == _expected(changed)
    assert cache.digests(changed) == [compose.message_digest(m) for m in changed]
    # the last changed (a framework merged the next user turn in): the first (to find the candidate), it, the new
    assert digested[before:] == ([changed[0], new, _message(99)] if last else changed)


def test_a_framework_merging_each_next_user_turn_digests_only_the_merged_and_new_messages(
    digested: list[object],
) -> None:
    """Growing, rebuilt, the last user message merged with the next one's text: each call digests the merged and new."""
    cache = DigestCache()
    held: list[dict[str, object]] = [_message(n) for n in range(_digests.FEW + 4)]
    counts = []
    for turn in range(4):
        if turn:
            last = held[-1]
            held[-1] = {"role": "user", "content": [{"type": "text", "text": str(last["content"])}, {"type": "text"}]}
            held += [{"role": "assistant", "content": f"answer {turn}"}, {"role": "user", "content": f"ask {turn}"}]
        sent = _rebuilt(list(held))
        before = len(digested)
        assert cache.prefix_fingerprint(sent) == _expected(sent)
        assert cache.digests(sent) == [compose.message_digest(m) for m in sent]
        counts.append(len(digested) - before)
    assert counts == [_digests.FEW + 4, 1 + 3, 1 + 3, 1 + 3]  # cold; then the first, the merged one and the two new


def test_a_rebuilt_conversation_holds_one_slot_and_none_of_its_earlier_requests(digested: list[object]) -> None:
    """Rebuilt on every request: each entry takes the place of the one it was found from; another stays found."""
    cache = DigestCache(slots=4)
    other: list[object] = [_message(100 + n) for n in range(5)]
    cache.prefix_fingerprint(other)
    held: list[object] = [_message(n) for n in range(_digests.FEW + 4)]
    for turn in range(10):
        held.append(_message(200 + turn))
        sent = _rebuilt(held)
        assert cache.prefix_fingerprint(sent) == _expected(sent)
    assert [len(e.messages) for e in cache._recent] == [len(other), len(sent)]
    assert all(kept is message for kept, message in zip(cache._recent[-1].messages, sent, strict=True))
    before = len(digested)
    assert cache.prefix_fingerprint(other) == _expected(other)
    assert len(digested) == before  # the other conversation, still found by identity


def test_a_rebuilt_transcript_extends_the_conversations_digests_in_place() -> None:
    """The entry made by value shares the remembered one's digest list, extended: nothing of it copied."""
    cache = DigestCache()
    held: list[object] = [_message(n) for n in range(_digests.FEW + 4)]
    first = cache._remember(held)
    second = cache._remember([*_rebuilt(held), _message(99)])
    assert second.digests is first.digests
    assert second.own() == [compose.message_digest(m) for m in [*held, _message(99)]]
