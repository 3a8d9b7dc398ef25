"""Ending a turn from a tool: record the marks, decide, apply, and keep the outcome.

A tool may ask that the model call it ran in ends after this round with the tool's value as the
answer, so the model makes no follow-up call only to restate it. Deciding is split from applying
and from recording, and the round's step reads only recorded state:

- ``answer_value_of``: the value a tool answered with — a ``ToolSuccess`` unwrapped (``None`` when
  empty), nothing ⇒ ``None``, anything else as it is. The placeholder text a tool loop shows the
  model for a missing value is never consulted, so it can never become an answer.
- ``record_turn_mark``: a finished call's marks go into ``RunnerState.turn_marks[round][call]``
  only when they set something, and the value only when they ask to end the turn (runner state
  rides in every later checkpoint, so it stays small).
- ``decide_end_turn``: a mark counts only when its call ran last in the round — a handoff (it runs
  alone, after the others) or an ordinary tool that was the round's only call that ran. An
  end-turn mark beside other calls is dropped with a warning; two counting marks warn and
  continue; a pending reply attachment continues (the model must see it); the value must match
  the caller's structured output (its JSON is the answer text) or, with none, be a string — else
  continue with a warning. A hand-back text on a non-handoff is warned about and ignored.
- ``apply_end_turn_decision``: continue ⇒ push every deferred hand-back (the follow-up request
  needs its user-role message); end ⇒ the thread ends with the answer, and for scope ``"turn"``
  inside a tool body the enclosing tool's marks ask to end its loop too.
- ``end_thread_with_answer``: a trailing assistant message that carries no tool calls (the body's
  structured reply, or the caller's text left by ``drop_handoff_call``) is replaced — two
  assistant messages in a row would be merged by a client into one reading as JSON then prose;
  otherwise the answer is pushed.
- ``run_end_turn_step``: decide from the round's recorded marks, apply, record
  ``turn_ended[round]``, drop the marks. A round already recorded is returned as it stands, so a
  resumed pass that replays the step finds the same outcome and changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from otel_toolturn._vocab import Lane, unreachable
from otel_toolturn.handoff._close import DeferredHandBack, TurnMarks, TurnScope
from otel_toolturn.handoff._texts import handoff_resume_text
from otel_toolturn.handoff._wire import as_messages, assistant_message, is_plain_assistant, user_message

ResponseFormat = Callable[[object], object]
"""The caller's structured output type as a validator: returns the parsed value, or raises
``ValueError`` / ``TypeError`` when the value does not match (``pydantic.TypeAdapter(T).validate_python``
is one; a pydantic ``ValidationError`` is a ``ValueError``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSuccess:
    """A tool's success wrapper: the value it answered with (``None``: it answered nothing)."""

    value: object = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnMark:
    """One finished call's marks, as recorded for the round's decision step.

    ``value`` is the answer value, kept only when ``end_turn`` is set (``None`` otherwise);
    ``deferred_hand_back`` is set when a handoff deferred its hand-back.
    """

    tool_name: str
    is_handoff: bool
    end_turn: bool
    scope: TurnScope
    message: str | None
    value: object = None
    deferred_hand_back: DeferredHandBack | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnEnded:
    """The outcome recorded for a round: whether its model call ended, and the value it returns."""

    ended: bool
    return_value: object = None


@dataclass(frozen=True, kw_only=True, slots=True)
class EndTurn:
    """The decision to end the turn with a call's value."""

    call_index: int
    scope: TurnScope
    answer_text: str
    return_value: object


@dataclass(frozen=True, kw_only=True, slots=True)
class ContinueTurn:
    """The decision to let the turn go on (the model gets its follow-up call)."""


EndTurnDecision = EndTurn | ContinueTurn
CONTINUE = ContinueTurn()


@dataclass(frozen=True, kw_only=True, slots=True)
class RunnerState:
    """The tool loop's recorded state the end-of-turn step reads and writes: marks and outcomes per round."""

    turn_marks: Mapping[int, Mapping[int, TurnMark]] = field(default_factory=lambda: MappingProxyType({}))
    turn_ended: Mapping[int, TurnEnded] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, kw_only=True, slots=True)
class EndTurnDecided:
    """A decision and the warnings deciding raised, one per mark dropped or fallen back."""

    decision: EndTurnDecision
    warnings: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class EndTurnApplied:
    """A decision applied: the new list, the record for the round, and the enclosing tool's marks."""

    messages: list[object]
    turn_ended: TurnEnded
    enclosing: TurnMarks | None


@dataclass(frozen=True, kw_only=True, slots=True)
class EndTurnStep:
    """One run of the round's end-of-turn step."""

    state: RunnerState
    messages: list[object]
    enclosing: TurnMarks | None
    turn_ended: TurnEnded
    warnings: tuple[str, ...]


def answer_value_of(raw_tool_result: object) -> object:
    """The value a tool answered with (see the module rule).

    >>> answer_value_of(ToolSuccess(value="x")), answer_value_of(ToolSuccess()), answer_value_of(3)
    ('x', None, 3)
    """
    if isinstance(raw_tool_result, ToolSuccess):
        return raw_tool_result.value
    return raw_tool_result


def record_turn_mark(
    state: RunnerState,
    *,
    round_index: int,
    call_index: int,
    tool_name: str,
    is_handoff: bool,
    marks: TurnMarks,
    raw_tool_result: object,
    deferred_hand_back: DeferredHandBack | None,
) -> RunnerState:
    """``state`` with the call's mark recorded; the same ``state`` object when the marks set nothing."""
    if not marks.end_turn and marks.message is None and deferred_hand_back is None:
        return state
    mark = TurnMark(
        tool_name=tool_name,
        is_handoff=is_handoff,
        end_turn=marks.end_turn,
        scope=marks.scope,
        message=marks.message,
        value=answer_value_of(raw_tool_result) if marks.end_turn else None,
        deferred_hand_back=deferred_hand_back,
    )
    round_marks = {**state.turn_marks.get(round_index, {}), call_index: mark}
    turn_marks = {**state.turn_marks, round_index: MappingProxyType(round_marks)}
    return RunnerState(turn_marks=MappingProxyType(turn_marks), turn_ended=state.turn_ended)


def _answer_text(value: object) -> str:
    """A string as it is; anything else as compact JSON (SDK objects through ``model_dump``)."""
    if isinstance(value, str):
        return value

    def dump(obj: object) -> object:
        model_dump = getattr(obj, "model_dump", None)
        if callable(model_dump):
            return model_dump(mode="json")
        raise TypeError(f"a value of type {type(obj).__name__!r} cannot be written as JSON")

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=dump)


def decide_end_turn(
    marks: Mapping[int, TurnMark],
    *,
    ran_call_indexes: Sequence[int],
    response_format: ResponseFormat | None,
    pending_attachments: int,
) -> EndTurnDecided:
    """Whether the round's marks end the turn (see the module rule); marks are read in call-index order."""
    warnings: list[str] = []
    entries = sorted(marks.items())
    warnings.extend(
        f"{mark.tool_name}: hand-back ignored; only a handoff hands back"
        for _, mark in entries
        if mark.message is not None and not mark.is_handoff
    )

    def ran_last(call_index: int, mark: TurnMark) -> bool:
        return mark.is_handoff or list(ran_call_indexes) == [call_index]

    marked = [(i, mark) for i, mark in entries if mark.end_turn]
    counting = [(i, mark) for i, mark in marked if ran_last(i, mark)]
    warnings.extend(
        f"{mark.tool_name}: end-turn ignored; it ran beside other tool calls in the same response"
        for i, mark in marked
        if not ran_last(i, mark)
    )
    if not counting:
        return EndTurnDecided(decision=CONTINUE, warnings=tuple(warnings))
    if len(counting) > 1:
        warnings.append(f"end-turn ignored; {len(counting)} tool calls in one response asked to end the turn")
        return EndTurnDecided(decision=CONTINUE, warnings=tuple(warnings))
    call_index, mark = counting[0]

    def ignored(reason: str) -> EndTurnDecided:
        warnings.append(f"{mark.tool_name}: end-turn ignored; {reason}")
        return EndTurnDecided(decision=CONTINUE, warnings=tuple(warnings))

    if pending_attachments > 0:
        return ignored("a reply attachment is waiting to be delivered")
    if mark.message is not None and mark.is_handoff:
        warnings.append(f"{mark.tool_name}: hand-back ignored; the turn ended")
    value = mark.value
    if response_format is not None:
        try:
            parsed = response_format(value)
        except (ValueError, TypeError):
            return ignored("the value does not match the caller's structured output")
        try:
            text = _answer_text(value)
        except (ValueError, TypeError):
            return ignored("the value cannot be written as JSON")
        decision = EndTurn(call_index=call_index, scope=mark.scope, answer_text=text, return_value=parsed)
        return EndTurnDecided(decision=decision, warnings=tuple(warnings))
    if not isinstance(value, str):
        return ignored("the value is not a string")
    decision = EndTurn(call_index=call_index, scope=mark.scope, answer_text=value, return_value=value)
    return EndTurnDecided(decision=decision, warnings=tuple(warnings))


def end_thread_with_answer(messages: Sequence[object] | str, answer_text: str, *, lane: Lane) -> list[object]:
    """A new list ending with the answer as an assistant message (see the module rule)."""
    messages = as_messages(messages, lane=lane)
    answer = assistant_message(answer_text)
    if messages and is_plain_assistant(messages[-1], lane=lane):
        return [*messages[:-1], answer]
    return [*messages, answer]


def apply_end_turn_decision(
    messages: Sequence[object] | str,
    decision: EndTurnDecision,
    marks: Mapping[int, TurnMark],
    *,
    enclosing: TurnMarks | None,
    lane: Lane,
) -> EndTurnApplied:
    """Apply a decision (see the module rule). ``enclosing``: the marks of the tool body this model call runs in.

    ``None`` at the top level; returned as it is unless an end of scope ``"turn"`` re-marks it.
    """
    messages = as_messages(messages, lane=lane)
    match decision:
        case ContinueTurn():
            pushed = [
                user_message(
                    mark.deferred_hand_back.message
                    if mark.deferred_hand_back.message is not None
                    else handoff_resume_text(mark.tool_name, mark.deferred_hand_back.body)
                )
                for _, mark in sorted(marks.items())
                if mark.deferred_hand_back is not None
            ]
            return EndTurnApplied(messages=[*messages, *pushed], turn_ended=TurnEnded(ended=False), enclosing=enclosing)
        case EndTurn():
            ended = end_thread_with_answer(messages, decision.answer_text, lane=lane)
            if decision.scope == "turn" and enclosing is not None:
                enclosing = TurnMarks(end_turn=True, scope="turn", message=enclosing.message)
            record = TurnEnded(ended=True, return_value=decision.return_value)
            return EndTurnApplied(messages=ended, turn_ended=record, enclosing=enclosing)
        case _:
            raise unreachable(decision)


def run_end_turn_step(
    state: RunnerState,
    *,
    round_index: int,
    ran_call_indexes: Sequence[int],
    response_format: ResponseFormat | None,
    pending_attachments: int,
    messages: Sequence[object] | str,
    enclosing: TurnMarks | None,
    lane: Lane,
) -> EndTurnStep:
    """The round's end-of-turn step: decide from recorded marks, apply, record the outcome, drop the marks.

    A round whose outcome is already recorded is returned as it stands (same state, an equal list,
    the enclosing marks untouched, no warnings): replaying the step is a no-op.
    """
    messages = as_messages(messages, lane=lane)
    recorded = state.turn_ended.get(round_index)
    if recorded is not None:
        return EndTurnStep(state=state, messages=list(messages), enclosing=enclosing, turn_ended=recorded, warnings=())
    marks = state.turn_marks.get(round_index, MappingProxyType({}))
    decided = decide_end_turn(
        marks,
        ran_call_indexes=ran_call_indexes,
        response_format=response_format,
        pending_attachments=pending_attachments,
    )
    applied = apply_end_turn_decision(messages, decided.decision, marks, enclosing=enclosing, lane=lane)
    new_state = RunnerState(
        turn_marks=MappingProxyType({r: m for r, m in state.turn_marks.items() if r != round_index}),
        turn_ended=MappingProxyType({**state.turn_ended, round_index: applied.turn_ended}),
    )
    return EndTurnStep(
        state=new_state,
        messages=applied.messages,
        enclosing=applied.enclosing,
        turn_ended=applied.turn_ended,
        warnings=decided.warnings,
    )
