"""Server-sent-event frames, and the misbehaviours applied to a lane's well-formed frame list.

Each lane renders a reply as a list of ``Frame`` values tagged with a ``role``; the misbehaviours
are pure edits of that list, the same for every lane:

- ``head``: frames that open the response (message start, ``response.created``, the first chunk);
- ``content``: frames that carry text or open and close content items;
- ``arguments``: frames that carry a piece of a tool call's argument text;
- ``finish``: the terminal statement (stop reason, ``message_stop``, ``response.completed``);
- ``trailer``: what may follow the terminal statement legitimately (the Chat usage chunk);
- ``done``: the Chat ``[DONE]`` sentinel.

Edits, applied in this order: ``bad_frame`` (a non-JSON ``data:`` line after the first frame),
``frames_after_end`` (the lane's after-end frames, inserted ahead of ``done`` or at the end),
``no_finish`` (everything from the first ``finish`` frame on is left out), ``cut_arguments``
(the first call's argument frames are cut to their first half, and nothing follows).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from otel_toolturn.simulator._script import Misbehaviour

FrameRole = Literal["head", "content", "arguments", "finish", "trailer", "done"]

BAD_FRAME_DATA: Final = '{"type": "content_block_delta", "delta": {"text": "unterminated'
"""The payload of the ``bad_frame`` misbehaviour: JSON cut mid-string, so no parser can read it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Frame:
    r"""One SSE frame: an optional ``event:`` name and its ``data:`` payload (JSON object or raw text).

    ``line_end`` ends each line (Gemini's stream uses ``\r\n``); a blank line ends the frame.
    """

    data: Mapping[str, object] | str
    role: FrameRole
    event: str | None = None
    line_end: Literal["\n", "\r\n"] = "\n"

    def encode(self) -> bytes:
        """Return the frame's bytes on the wire, blank-line terminated."""
        data = self.data if isinstance(self.data, str) else json.dumps(self.data, separators=(",", ":"))
        end = self.line_end
        head = f"event: {self.event}{end}" if self.event is not None else ""
        return f"{head}data: {data}{end}{end}".encode()


def pieces(text: str, count: int) -> list[str]:
    """``text`` split into at most ``count`` consecutive non-empty pieces (two at least when it can)."""
    if len(text) <= 1:
        return [text] if text else []
    size = max(1, min(len(text) // 2, -(-len(text) // count)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def apply_misbehaviours(
    frames: Sequence[Frame],
    misbehaviours: Sequence[Misbehaviour],
    *,
    after_end: Sequence[Frame],
    bad_frame_event: str | None,
) -> list[Frame]:
    """Return the frame list with each requested misbehaviour applied (see the module docstring).

    ``after_end`` is the lane's content-and-second-ending; ``bad_frame_event`` the ``event:`` name
    the lane's non-JSON frame carries (Anthropic's clients skip frames without one).
    """
    out = list(frames)
    if "bad_frame" in misbehaviours:
        out.insert(min(1, len(out)), Frame(data=BAD_FRAME_DATA, role="content", event=bad_frame_event))
    if "frames_after_end" in misbehaviours:
        at = next((i for i, f in enumerate(out) if f.role == "done"), len(out))
        out[at:at] = after_end
    if "no_finish" in misbehaviours:
        first_finish = next((i for i, f in enumerate(out) if f.role == "finish"), len(out))
        out = out[:first_finish]
    if "cut_arguments" in misbehaviours:
        out = _cut_first_arguments(out)
    return out


def _cut_first_arguments(frames: list[Frame]) -> list[Frame]:
    """Keep the frames up to the first half of the first run of argument frames; nothing after."""
    start = next((i for i, f in enumerate(frames) if f.role == "arguments"), None)
    if start is None:
        return frames
    end = start
    while end < len(frames) and frames[end].role == "arguments":
        end += 1
    return frames[: start + (end - start) // 2]


def number_sequence(frames: Sequence[Frame]) -> list[Frame]:
    """Responses frames with ``sequence_number`` 0, 1, 2, … in wire order (raw-text frames skipped)."""
    out: list[Frame] = []
    number = 0
    for frame in frames:
        if isinstance(frame.data, str):
            out.append(frame)
            continue
        out.append(Frame(data={**frame.data, "sequence_number": number}, role=frame.role, event=frame.event))
        number += 1
    return out
