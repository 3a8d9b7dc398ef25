"""What cut a turn's tool calls: the output cap, the transport, or nothing we can name.

``OutputCapFacts`` holds one turn's output-cap facts as the lane reads them;
``truncation_cause_clause`` words them for the dropped-calls sentence and
``model_output_invalid_of`` carries them in the structured account. One rule for the lanes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from otel_toolturn.streams._report import ModelOutputInvalid

CAP_CLAUSE: Final = " because the response reached its output token limit"
TRANSPORT_CLAUSE: Final = " because the stream ended before the response finished"


@dataclass(frozen=True, kw_only=True, slots=True)
class OutputCapFacts:
    """One turn's output-cap facts.

    ``cap_stop``: the lane's own cap stop arrived (``max_tokens``, ``length``,
    ``max_output_tokens``); ``output_tokens``: the provider's output count as reported;
    ``cap_tokens``: the cap the request carried (``None`` when unknown).
    """

    cap_stop: bool = False
    output_tokens: int | None = None
    cap_tokens: int | None = None


def cap_cut(cap: OutputCapFacts) -> bool:
    """Whether the stream says the output cap cut it: the cap stop, or a counted output at or over the cap."""
    if cap.cap_stop:
        return True
    return cap.output_tokens is not None and cap.cap_tokens is not None and cap.output_tokens >= cap.cap_tokens


def truncation_cause_clause(cap: OutputCapFacts, *, terminal_frame_seen: bool) -> str:
    """Return the cause clause of a dropped call's "not valid JSON" sentence.

    The output cap is named only when the stream says the cap cut it (``cap_cut``); a stream
    that ended without a terminal frame names the transport; any other stop adds nothing (naming
    the cap there would send a reader after a budget that was never reached).

    >>> truncation_cause_clause(OutputCapFacts(cap_stop=True), terminal_frame_seen=True)
    ' because the response reached its output token limit'
    >>> truncation_cause_clause(OutputCapFacts(), terminal_frame_seen=True)
    ''
    """
    if cap_cut(cap):
        return CAP_CLAUSE
    if not terminal_frame_seen:
        return TRANSPORT_CLAUSE
    return ""


def model_output_invalid_of(*, truncated: int, unnamed: int, cap: OutputCapFacts) -> ModelOutputInvalid | None:
    """Return the structured account of a turn that dropped tool calls; ``None`` when it dropped none.

    ``cause`` is ``truncated`` when any call's arguments were cut, else ``unnamed``;
    ``output_limit`` rides only with ``truncated`` and reads the same facts as the cap clause.
    """
    if truncated > 0:
        return ModelOutputInvalid(cause="truncated", output_limit=cap_cut(cap))
    if unnamed > 0:
        return ModelOutputInvalid(cause="unnamed")
    return None
