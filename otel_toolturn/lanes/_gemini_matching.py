"""Which Gemini call each function response answers: one rule, shared by the lane's reading and its ``validate``.

See the Matching paragraph of ``lanes.gemini``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from otel_toolturn._errors import ToolTurnInputError
from otel_toolturn._view import field
from otel_toolturn.lanes._common import describe
from otel_toolturn.lanes._gemini_parts import id_of, name_of, signed


class _Choice:
    """A call as the matcher knows it: its key, name and id, and whether a response answered it.

    Compared by identity: two runs' calls with the same key are two calls.
    """

    __slots__ = ("answered", "call_id", "key", "name")

    def __init__(self, key: str, name: str | None, call_id: str | None, *, answered: bool = False) -> None:
        self.key = key
        self.name = name
        self.call_id = call_id
        self.answered = answered


class _Answered:
    """A call a response answered, alone under its id and keyed by it: all ``by_id`` keeps of it (one per name).

    Read as that call's one choice, answered (``Matcher._of_id``); an answered call's choice is read only for its
    key and name, never by identity.
    """

    __slots__ = ("name",)

    def __init__(self, name: str | None) -> None:
        self.name = name


Run = dict[str, str | None]
"""A run whose calls each carry their own id: call id -> the call's name (``None``: none), in call order."""


class Unnamed(dict[str, str]):
    """A run whose calls carry no id, answered in full by name: key (``<name>#<k>``, as ``turn`` gives) -> name.

    Held where ``Run`` is held; its calls are read as choices without an id (``_of_name``).
    """

    __slots__ = ()


Calls = Sequence[tuple[int, object, object]]
"""A run's calls, each as ``lanes.gemini.call_step`` reads it: ``(content index, part, call data)``."""


class Matcher:
    """Which call each response answers (one rule, shared by ``read`` and ``validate``).

    A run answered in full by the content right after it (``answered``) is held as its ``Run`` (``Unnamed``
    where its calls carry no id): it is taken into ``by_id`` and ``by_name`` only when a later ``turn`` or
    ``responses`` reads them, and its calls are made choices (each already answered) only when a response
    reaches one of them again.
    """

    __slots__ = ("answered_as", "by_id", "by_name", "pending", "renamed")

    def __init__(self) -> None:
        self.by_id: dict[str, list[_Choice] | Run | _Answered] = {}
        """Call id -> the choices of the calls with that id in the nearest run that used it, in order (a
        ``Run``: that run, answered in full; an ``_Answered``: its one call, keyed by its id, answered)."""
        self.by_name: dict[str, list[_Choice] | Run | Unnamed] = {}
        """Name -> the choices of the calls of that name in the nearest run that called it: id-less ones
        first (a ``Run`` or ``Unnamed``: that run, answered in full; its calls of that name). A call whose
        key a later run uses again is no longer reachable by name."""
        self.renamed: set[str] = set()
        """The keys a run used that are no call's id (``id#2``, ``name#1``): with the ids ``by_id`` holds (each
        the key of its first call), every key a run used; a key no run used is no key of a call reachable by
        name (``_used``)."""
        self.answered_as: dict[str | None, _Answered] = {}
        """The ``_Answered`` of each name, shared by the calls of that name ``by_id`` holds so."""
        self.pending: list[Run | Unnamed] = []
        """The runs ``answered`` took since ``by_id`` and ``by_name`` were last read, in order."""

    def answered(self, calls: Calls, datas: Sequence[object]) -> Run | Unnamed | None:
        """The run of ``calls`` when one content's responses answer them, one each; else ``None``.

        ``datas``: the responses' data (``functionResponse``), in order. The first step of matching a run
        and the content right after it: when each call carries its own id, no two the same, and each
        response carries the id and the name of one of them; or when no call and no response carries an
        id and the responses name the calls' names, each as often (``Unnamed``). The run is then taken as
        ``turn`` then ``responses`` would take it (its keys as ``turn`` gives them, each call answered,
        the run the nearest for its ids and names) and returned; otherwise nothing changes and the run
        goes to ``turn``.
        """
        if len(datas) != len(calls):
            return None
        if id_of(calls[0][2]) is None:
            return self._answered_by_name(calls, datas)
        run: Run = {}
        for _, _, data in calls:
            if type(data) is dict:
                call_id, name = data.get("id"), data.get("name")
            else:
                call_id, name = field(data, "id"), field(data, "name")
            if not isinstance(call_id, str) or not call_id:
                return None
            run[call_id] = name if isinstance(name, str) and name else None
        answers: Run = {}
        for data in datas:
            if type(data) is dict:
                response_id, name = data.get("id"), data.get("name")
            else:
                response_id, name = field(data, "id"), field(data, "name")
            if not isinstance(response_id, str) or not response_id:
                return None
            answers[response_id] = name if isinstance(name, str) and name else None
        if len(run) != len(calls) or answers != run:
            return None
        self.pending.append(run)
        return run

    def _answered_by_name(self, calls: Calls, datas: Sequence[object]) -> Unnamed | None:
        """``answered`` for a run whose calls carry no id: as many responses, none with an id, each naming one."""
        run = Unnamed()
        left: dict[str, int] = {}  # per name, its calls no response named yet
        for _, _, data in calls:
            name = name_of(data)
            if name is None or id_of(data) is not None:
                return None
            left[name] = left.get(name, 0) + 1
            run[f"{name}#{left[name]}"] = name
        for data in datas:  # as many as the calls (``answered``): each naming a call left, every call is named
            name = name_of(data)
            if name is None or id_of(data) is not None or not left.get(name):
                return None
            left[name] -= 1
        self.pending.append(run)
        return run

    def _settle(self) -> None:
        """Take the pending runs into ``by_id`` and ``by_name``, in order, as ``turn`` takes a run."""
        by_id, by_name = self.by_id, self.by_name
        for run in self.pending:
            if self._used(run):
                self._unreach(run, run.values())
            if isinstance(run, Unnamed):
                self.renamed.update(run)  # its keys are no call's id
                for called in run.values():
                    by_name[called] = run
                continue
            for call_id, name in run.items():
                by_id[call_id] = run
                if name is not None:
                    by_name[name] = run
        self.pending.clear()

    def _used(self, keys: Iterable[str]) -> bool:
        """Whether an earlier run used one of ``keys``: a call id ``by_id`` holds, or one of ``renamed``."""
        by_id, renamed = self.by_id, self.renamed
        return any(key in by_id or key in renamed for key in keys)

    def _unreach(self, used: Iterable[str], names: Iterable[str | None]) -> None:
        """No call of a name outside ``names`` is reachable by name under a key of ``used`` any more (a run uses it).

        Called when an earlier run used a key of ``used`` (``_used``; none did: nothing to do).
        """
        used, names = set(used), set(names)
        for name in [name for name in self.by_name if name not in names]:
            older = self._of_name(name)
            kept = [choice for choice in older if choice.key not in used]  # the law reads those keys as this run's
            if not kept:
                del self.by_name[name]
            elif len(kept) < len(older):
                self.by_name[name] = kept

    def _of_id(self, call_id: str) -> list[_Choice]:
        """The choices of the calls with ``call_id`` (one in ``by_id``), a run's made now."""
        choices = self.by_id[call_id]
        if isinstance(choices, list):
            return choices
        name = choices.name if isinstance(choices, _Answered) else choices[call_id]
        made = [_Choice(call_id, name, call_id, answered=True)]
        self.by_id[call_id] = made
        return made

    def _of_name(self, name: str) -> list[_Choice]:
        """The choices of the calls of ``name`` (one in ``by_name``), a run's made now."""
        choices = self.by_name[name]
        if isinstance(choices, list):
            return choices
        unnamed = isinstance(choices, Unnamed)  # its calls carry no id
        made = [
            _Choice(key, name, None if unnamed else key, answered=True) for key, of in choices.items() if of == name
        ]
        self.by_name[name] = made
        return made

    def turn(self, position: int, calls: Calls) -> list[str]:
        """The keys of a run's calls, in order; the run becomes the nearest for each id and name it uses.

        A repeat the law leaves out uses no name: a response naming it answers nothing of it.
        """
        if self.pending:
            self._settle()
        keys: list[str] = []
        renamed: list[str] = []  # the keys that are no call's id
        by_id: dict[str, list[_Choice]] = {}
        unnamed: dict[str, list[_Choice]] = {}  # name -> its calls without an id, in order
        named: dict[str, list[_Choice]] = {}  # name -> its calls with an id, in order
        for _, part, data in calls:
            name, call_id = name_of(data), id_of(data)
            if call_id is not None:
                of_id = by_id.setdefault(call_id, [])
                key = call_id  # a repeat under the same key is left out by the law (duplicate_call) ...
                if of_id and not signed(part):
                    keys.append(key)
                    continue
                if of_id:  # ... unless it is signed: then it is its own call, never dropped
                    key = f"{call_id}#{len(of_id) + 1}"
                    renamed.append(key)
                choice = _Choice(key, name, call_id)
                of_id.append(choice)
                if name is not None:
                    named.setdefault(name, []).append(choice)
            elif name is not None:
                of_name = unnamed.setdefault(name, [])
                key = f"{name}#{len(of_name) + 1}"
                renamed.append(key)
                of_name.append(_Choice(key, name, None))
            else:
                raise ToolTurnInputError(
                    f"a functionCall part needs a non-empty string 'name' or 'id', got {describe(field(data, 'name'))}",
                    position=position,
                )
            keys.append(key)
        used = self._used(keys)
        self.by_id.update(by_id)
        if used:
            self._unreach(keys, [*unnamed, *named])
        self.renamed.update(renamed)
        for name, of_name in unnamed.items():
            self.by_name[name] = of_name + named.pop(name, [])
        self.by_name.update(named)
        return keys

    def _each_by_its_own_id(self, datas: Sequence[object]) -> list[str | None] | None:
        """The first step of ``responses``: each response answers by its ``id`` alone (``None``: not the case)."""
        chosen = self._by_own_id(datas)
        if chosen is None:
            return None
        for choice in chosen:
            choice.answered = True
            self._alone(choice)
        return [choice.key for choice in chosen]

    def _alone(self, choice: _Choice) -> None:
        """An answered call, the one call of its id and keyed by it: ``by_id`` keeps only its name (``_Answered``)."""
        call_id = choice.call_id
        if call_id is not None and choice.key == call_id:
            entry = self.by_id.get(call_id)
            if type(entry) is list and len(entry) == 1 and entry[0] is choice:
                answered = self.answered_as.get(choice.name)
                if answered is None:
                    answered = self.answered_as[choice.name] = _Answered(choice.name)
                self.by_id[call_id] = answered

    def _by_own_id(self, datas: Sequence[object]) -> list[_Choice] | None:
        """The calls the responses answer by their ``id`` alone, in order (``None``: not each of them does).

        The common case: each response carries the id of the one call with that id, of its own name,
        that nothing answered yet, and no two responses share one.
        """
        chosen: list[_Choice] = []
        by_id = self.by_id
        for data in datas:
            response_id = id_of(data)
            choices = by_id.get(response_id) if response_id is not None else None
            if not isinstance(choices, list) or len(choices) != 1:
                return None  # a ``Run``'s calls are answered
            choice = choices[0]
            if choice.name != name_of(data) or choice.answered or choice in chosen:
                return None
            chosen.append(choice)
        return chosen

    def responses(self, datas: Sequence[object]) -> list[str | None]:
        """The keys of the calls one content's responses answer, in order (``None``: it names nothing readable).

        ``datas``: the responses' data (``functionResponse``), in order.
        A response whose ``id`` a call carries can answer the calls with that id, one of its own name
        first; another, by name, the calls of its name, one whose id no response of the content carries
        first. Among the calls no earlier response answered, as many responses as can each answer their
        own call (the most certain first, then moved aside only to make room for another); one that
        cannot answers the last call it could answer again (a second result for it).
        """
        if not datas:
            return []
        if self.pending:
            self._settle()
        direct = self._each_by_its_own_id(datas)
        if direct is not None:
            return direct
        keys: list[str | None] = [None] * len(datas)
        wanted: list[list[_Choice]] = []  # per response, the free calls it can answer, best first
        everything: list[list[_Choice]] = []  # per response, every call it can answer
        ranks: list[int] = []
        ids = [id_of(data) for data in datas]
        by_id, by_name = self.by_id, self.by_name
        claimed = {i for i in ids if i is not None and i in by_id}
        for number, data in enumerate(datas):
            name, response_id = name_of(data), ids[number]
            if response_id is not None and response_id in by_id:
                choices = self._of_id(response_id)
                free = [c for c in choices if not c.answered]
                best = [c for c in free if c.name == name]
                rest = [c for c in free if c.name != name] if len(best) < len(free) else []
                rank = 0 if best else 2
            elif name is not None and name in by_name:
                choices, rank = self._of_name(name), 1
                free = [c for c in choices if not c.answered]
                best = [c for c in free if c.call_id not in claimed] if claimed else free
                rest = [c for c in free if c.call_id in claimed] if len(best) < len(free) else []
            else:
                keys[number] = response_id if response_id is not None or name is None else f"{name}#1"
                choices, best, rest, rank = [], [], [], 3
            if len(datas) == 1:  # one response: its best free call, else a second result for the last
                chosen = best[0] if best else rest[0] if rest else None
                if chosen is not None:
                    chosen.answered = True
                    self._alone(chosen)
                    return [chosen.key]
                return [choices[-1].key] if choices else keys
            wanted.append(best + rest)
            everything.append(choices)
            ranks.append(rank)
        holder: dict[_Choice, int] = {}  # call -> the response answering it
        held: dict[int, _Choice] = {}
        order = sorted(range(len(datas)), key=ranks.__getitem__)
        for number in order:  # each takes its best free call
            chosen = next((c for c in wanted[number] if c not in holder), None)
            if chosen is not None:
                holder[chosen], held[number] = number, chosen
        for number in order:  # one left without: make room along a chain of responses that can move
            if number not in held and wanted[number]:
                _make_room(number, wanted, holder, held)
        for number, choices in enumerate(everything):
            if number in held:
                held[number].answered = True
                self._alone(held[number])
                keys[number] = held[number].key
            elif choices:
                keys[number] = choices[-1].key
        return keys


def _make_room(start: int, wanted: list[list[_Choice]], holder: dict[_Choice, int], held: dict[int, _Choice]) -> None:
    """Give response ``start`` a call, moving others to other calls they can answer, when a chain allows it."""
    came_from: dict[_Choice, int] = {}  # call -> the response that reached it
    queue, at = [start], 0
    while at < len(queue):
        number = queue[at]
        at += 1
        for reached in wanted[number]:
            if reached in came_from:
                continue
            came_from[reached] = number
            if reached in holder:
                queue.append(holder[reached])
                continue
            choice: _Choice | None = reached  # free: shift every response on the chain one call along
            while choice is not None:
                taker = came_from[choice]
                previous = held.get(taker)  # None only for ``start``
                holder[choice], held[taker] = taker, choice
                choice = previous
            return
