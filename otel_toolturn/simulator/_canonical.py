"""The canonical form of a wire value, which the prefix check and the prompt cache both compare.

``canonical(value)`` is the value's JSON with sorted keys and no spaces (``separators=(",", ":")``,
non-ASCII escaped), computed over the value exactly as it arrived on the wire: a dict built by hand
and the same dict serialised by an SDK have one canonical form; a string and the one-text-block list
it stands for do not (the simulator compares what was sent, it does not normalise).
``digest(value)`` is the SHA-256 of that form, in hex.

Example::

    assert canonical({"b": 1, "a": [None]}) == b'{"a":[null],"b":1}'
"""

from __future__ import annotations

import hashlib
import json


def canonical(value: object) -> bytes:
    """The canonical JSON bytes of ``value`` (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def digest(value: object) -> str:
    """The hex SHA-256 of ``canonical(value)``."""
    return hashlib.sha256(canonical(value)).hexdigest()
