"""Which calls of a response are handoffs, and whether the response must be refused.

The pure decision behind the instrumentation's ``handoff_tools`` option: the instrumentation
hands over a response's calls and the configured tool names or glob patterns, and only records
what comes back (one ``toolturn.handoff`` event per handoff call; one ``toolturn.handoff.refused``
event and count when there are several).

The rule, in one function (``matching_pattern``, which the instrumentation calls too): a call is a
handoff when its tool name equals a pattern or matches it as a glob (``fnmatch.fnmatchcase``:
``*``, ``?``, ``[...]``, case-sensitive on every platform); the first such pattern, in the order
configured, is the one it matched (the instrumentation's bounded metric label). One handoff
can run per response — its body takes over the thread — so a response with more than one is
refused as a whole: running one of them would be a guess about which the model wanted. Each
refused call is answered with ``too_many_handoffs_text`` naming every handoff call of the response.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from otel_toolturn.handoff._drop import HandoffCall
from otel_toolturn.handoff._texts import too_many_handoffs_text


@dataclass(frozen=True, kw_only=True, slots=True)
class HandoffRound:
    """The handoff calls of one response, in call order, and whether they must be refused."""

    handoffs: tuple[HandoffCall, ...]

    @property
    def refused(self) -> bool:
        """More than one handoff call: none of them may run."""
        return len(self.handoffs) > 1

    @property
    def names(self) -> tuple[str, ...]:
        """The handoff calls' tool names, one entry per call (a tool called twice appears twice)."""
        return tuple(call.name for call in self.handoffs)

    def refusals(self) -> tuple[tuple[HandoffCall, str], ...]:
        """Each refused call with the text that answers it; empty when the response is not refused."""
        if not self.refused:
            return ()
        return tuple((call, too_many_handoffs_text(call.name, self.names)) for call in self.handoffs)


def matching_pattern(name: str, patterns: Sequence[str]) -> str | None:
    """The first of ``patterns`` that ``name`` equals or matches as a glob; ``None``: not a handoff.

    >>> matching_pattern("agent[1]", ["agent[1]"]), matching_pattern("agent_x", ["explorer", "agent_*"])
    ('agent[1]', 'agent_*')
    """
    return next((pattern for pattern in patterns if name == pattern or fnmatchcase(name, pattern)), None)


def is_handoff_tool(name: str, patterns: Sequence[str]) -> bool:
    """Whether ``name`` equals one of ``patterns`` or matches it as a glob (``matching_pattern`` finds one)."""
    return matching_pattern(name, patterns) is not None


def handoff_calls(calls: Sequence[tuple[str, str]], patterns: Sequence[str]) -> HandoffRound:
    """The handoff calls among a response's ``(tool name, call id)`` pairs, each with its index among them.

    Pass the response's client calls in order (one choice of a Chat response at a time): the index
    is then the call's position among the carrier's calls, as ``drop_handoff_call`` reads it.

    >>> round_ = handoff_calls([("search", "c1"), ("agent_explorer", "c2")], ["agent_*"])
    >>> [(c.index, c.name) for c in round_.handoffs], round_.refused
    ([(1, 'agent_explorer')], False)
    """
    return HandoffRound(
        handoffs=tuple(
            HandoffCall(index=index, call_id=call_id, name=name)
            for index, (name, call_id) in enumerate(calls)
            if is_handoff_tool(name, patterns)
        )
    )
