"""SSE framing: the data payload of every event, as the SDKs split them."""

from __future__ import annotations

import pytest

from otel_toolturn.streams import sse_data

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
