"""The AWS event stream binary framing (``application/vnd.amazon.eventstream``), as Bedrock's streams use it.

One message on the wire, every integer big-endian:

- the prelude: the message's total length (4 bytes), the headers' length (4 bytes), and the CRC32 of
  those 8 bytes (4 bytes);
- the headers, each: the name's length (1 byte), the name (UTF-8), the value's type (1 byte; 7 is a
  string), the value's length (2 bytes), the value (UTF-8);
- the payload (here the event's JSON);
- the CRC32 of everything before it (prelude, headers, payload).

An event carries the headers ``:event-type`` (the event's name, e.g. ``messageStart``),
``:content-type`` (``application/json``) and ``:message-type`` (``event``). botocore's own parser
(``botocore.eventstream.EventStreamBuffer``) reads what ``encode_event`` writes; the tests hold it to
that.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping
from typing import Final

from otel_toolturn.simulator._frames import Frame

CONTENT_TYPE: Final = "application/vnd.amazon.eventstream"
"""The HTTP ``Content-Type`` of an event stream response."""

_STRING: Final = 7
"""The header value type of a UTF-8 string."""


def _header(name: str, value: str) -> bytes:
    name_bytes, value_bytes = name.encode(), value.encode()
    return struct.pack(">B", len(name_bytes)) + name_bytes + struct.pack(">BH", _STRING, len(value_bytes)) + value_bytes


def encode_message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event stream message of string ``headers`` (in order) and ``payload``."""
    head = b"".join(_header(name, value) for name, value in headers.items())
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack(">II", total, len(head))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + head + payload
    return message + struct.pack(">I", zlib.crc32(message))


def encode_event(frame: Frame) -> bytes:
    """``frame`` as one event message: its ``event`` the ``:event-type``, its data the JSON payload.

    A frame whose data is text (the ``bad_frame`` misbehaviour) carries that text as its payload, as is.
    """
    data = frame.data if isinstance(frame.data, str) else json.dumps(frame.data, separators=(",", ":"))
    headers = {":event-type": frame.event or "", ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, data.encode())
