"""The import graph of ``otel_toolturn``: no cycle, and no private module reached from another package.

The graph is read from the source with ``ast``, never by importing it. Its nodes are the modules of
``otel_toolturn`` (a package is its ``__init__``). Its edges are every import a module's text makes,
wherever it stands: at the top, inside a function, under ``TYPE_CHECKING``, in a ``try``; and every
``importlib.import_module`` of a string literal or of a module-level string constant (a name computed
at run time, such as a table's field, is not followed). ``from package import name`` is an edge to the
submodule ``package.name`` when there is one, else to ``package``. The import of a package's
``__init__`` that Python makes before it runs a submodule is no edge: only what a module's text asks for.

Private: a module whose dotted path has a segment starting with ``_`` (``otel_toolturn.instrument._record``)
belongs to the package that holds that segment (``otel_toolturn.instrument``). It may be imported by
that package and by anything under it, by nothing else. Another package reaches what it needs through
a public module of the owning package (``otel_toolturn.instrument.calls``). The root package's own
private modules (``_law``, ``_view``, ``_vocab``, ``_errors``, ``_validate``, ``_version``) are the
core every part of the library is built on: they belong to ``otel_toolturn`` itself, so every module
of the library may import them; users reach them through ``otel_toolturn.__all__``. No module
imports a private name (``_x``) that another module defines, whatever their packages.

An edge the rule refuses but whose seam belongs to another package's owners is listed in
``AWAITING_A_SEAM`` with what it waits for; the test fails as soon as it is gone, so the entry goes with it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

import pytest

PACKAGE: Final = "otel_toolturn"
ROOT: Final = Path(__file__).resolve().parents[1] / PACKAGE


AWAITING_A_SEAM: Final[dict[tuple[str, str], str]] = {}
"""Private imports across packages that wait for the owning package's public seam, each with what it waits for."""


@dataclass(frozen=True, slots=True)
class Edge:
    """One import: ``importer`` asks for ``imported`` on ``line``."""

    importer: str
    imported: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported} (line {self.line})"


def _name_of(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> Mapping[str, Path]:
    """Every module of the package, by dotted name."""
    return {_name_of(path): path for path in sorted(ROOT.rglob("*.py"))}


def _known(name: str) -> str | None:
    """``name`` if it is a module of the package, else the nearest enclosing one (``None``: not ours)."""
    while name:
        if name in modules():
            return name
        name = name.rpartition(".")[0]
    return None


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """The module-level names bound to a string literal (``INTEGRATION: Final = "otel_toolturn.x"``)."""
    found: dict[str, str] = {}
    for node in tree.body:
        target: ast.expr | None = None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
            found[target.id] = value.value
    return found


def _import_module_target(node: ast.Call, constants: Mapping[str, str]) -> str | None:
    """The module an ``importlib.import_module(...)`` call names, when its text says which."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if called != "import_module" or not node.args:
        return None
    argument = node.args[0]
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    return constants.get(argument.id) if isinstance(argument, ast.Name) else None


def _from_base(node: ast.ImportFrom, module: str) -> str:
    """The absolute module a ``from ... import`` reads from."""
    if not node.level:
        return node.module or ""
    package = module if modules()[module].name == "__init__.py" else module.rpartition(".")[0]
    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*parts, node.module] if node.module else parts)


def _targets(node: ast.AST, module: str, constants: Mapping[str, str]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = _from_base(node, module)
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            yield submodule if submodule in modules() else base
    elif isinstance(node, ast.Call):
        named = _import_module_target(node, constants)
        if named is not None:
            yield named


@cache
def edges() -> tuple[Edge, ...]:
    """Every import of one module of the package by another (see the module docstring for what counts)."""
    found: list[Edge] = []
    for module, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        constants = _string_constants(tree)
        for node in ast.walk(tree):
            for target in _targets(node, module, constants):
                imported = _known(target) if target.split(".")[0] == PACKAGE else None
                if imported is not None and imported != module:
                    found.append(Edge(module, imported, getattr(node, "lineno", 0)))
    return tuple(dict.fromkeys(found))


def owner_of_private(module: str) -> str | None:
    """The package a private module belongs to (the path up to its first ``_`` segment); ``None``: public."""
    parts = module.split(".")
    for at, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:at])
    return None


def reaches_into_another_package(importer: str, imported: str) -> bool:
    """Whether importing ``imported`` from ``importer`` reaches a private module outside the importer's package."""
    owner = owner_of_private(imported)
    return owner is not None and importer != owner and not importer.startswith(owner + ".")


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as the path that closes it (``[a, b, a]``); ``None`` when it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for after in sorted(graph.get(node, ())):
            if state.get(after) == 1:
                return [*path[path.index(after) :], after]
            if after not in state:
                cycle = visit(after)
                if cycle is not None:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle is not None:
                return cycle
    return None


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in modules()}
    for edge in edges():
        graph[edge.importer].add(edge.imported)
    return graph


def test_the_walk_sees_imports_in_functions_under_type_checking_and_by_name() -> None:
    """The walk finds a function-level import, a ``TYPE_CHECKING`` import and an ``import_module`` by constant."""
    found = {(edge.importer, edge.imported) for edge in edges()}
    assert len(modules()) > 50
    assert ("otel_toolturn.cli", "otel_toolturn.demo") in found  # inside ``_demo``
    assert ("otel_toolturn", "otel_toolturn.instrument") in found  # under TYPE_CHECKING, and by a literal
    assert ("otel_toolturn.instrument._litellm_watch", "otel_toolturn.integrations.litellm") in found  # a constant


@pytest.mark.parametrize(
    ("importer", "imported", "crosses"),
    [
        ("otel_toolturn.instrument._patches", "otel_toolturn.instrument._record", False),
        ("otel_toolturn.instrument", "otel_toolturn.instrument._record", False),
        ("otel_toolturn.integrations._litellm_logger", "otel_toolturn.instrument._record", True),
        ("otel_toolturn.integrations._litellm_logger", "otel_toolturn.instrument.calls", False),
        ("otel_toolturn.handoff._wire", "otel_toolturn._view", False),
        ("otel_toolturn.cli", "otel_toolturn._law", False),
        ("otel_toolturn.streams.anthropic_messages", "otel_toolturn.lanes._common", True),
    ],
)
def test_the_private_rule(importer: str, imported: str, crosses: bool) -> None:
    """A private module is open to its own package and what is under it; the root's core is open to all."""
    assert reaches_into_another_package(importer, imported) is crosses


def test_find_cycle_reports_the_closing_path() -> None:
    """``find_cycle`` returns the path that closes a cycle, and ``None`` for a graph without one."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_import_graph_has_no_cycle() -> None:
    """No module of ``otel_toolturn`` imports, however indirectly, a module that imports it back."""
    cycle = find_cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_no_private_module_is_imported_from_another_package() -> None:
    """No module imports a private module that belongs to a package it is not part of."""
    crossing = [
        str(edge)
        for edge in edges()
        if reaches_into_another_package(edge.importer, edge.imported)
        and (edge.importer, edge.imported) not in AWAITING_A_SEAM
    ]
    assert not crossing, "private modules imported from another package:\n" + "\n".join(crossing)


def test_no_private_name_is_imported_from_another_module() -> None:
    """No module imports a ``_name`` another module defines (a private module itself is the rule above)."""
    taken: list[str] = []
    for module, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not _from_base(node, module).startswith(PACKAGE):
                continue
            base = _from_base(node, module)
            taken += [
                f"{module}: {base}.{alias.name} (line {node.lineno})"
                for alias in node.names
                if owner_of_private(alias.name) is not None and f"{base}.{alias.name}" not in modules()
            ]
    assert not taken, "private names imported from another module:\n" + "\n".join(taken)


def test_each_edge_awaiting_a_seam_is_still_there() -> None:
    """Every entry of ``AWAITING_A_SEAM`` is an edge the graph still has and the rule still refuses."""
    found = {(edge.importer, edge.imported) for edge in edges()}
    stale = [edge for edge in AWAITING_A_SEAM if edge not in found or not reaches_into_another_package(*edge)]
    assert not stale, f"no longer in the graph, remove from AWAITING_A_SEAM: {stale}"
