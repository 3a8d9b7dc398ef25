r"""Server-sent events as the providers send them: the ``data`` payload of each event.

For feeding raw recordings to an observer. Follows the SSE rules the SDKs follow: lines end in
CRLF, LF or CR; a blank line dispatches the event; ``data:`` lines (one optional space after the
colon removed) are joined with ``\\n``; comment lines (``:``) and other fields are skipped; the
last event is dispatched at the end of input even without its blank line. Trailing spaces of a
``data:`` line are kept (JSON allows them).
"""

from __future__ import annotations

import re
from typing import Final

_LINE_END: Final = re.compile(r"\r\n|\r|\n")


def sse_data(body: str | bytes) -> list[str]:
    r"""Return the ``data`` payload of every event in ``body``, in order (events without data are skipped).

    >>> sse_data('event: ping\ndata: {"type": "ping"}\n\ndata: [DONE]')
    ['{"type": "ping"}', '[DONE]']
    """
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    payloads: list[str] = []
    lines: list[str] = []
    for line in _LINE_END.split(text):
        if not line:
            if lines:
                payloads.append("\n".join(lines))
                lines = []
            continue
        if line.startswith("data:"):
            value = line[5:]
            lines.append(value[1:] if value.startswith(" ") else value)
    if lines:
        payloads.append("\n".join(lines))
    return payloads
