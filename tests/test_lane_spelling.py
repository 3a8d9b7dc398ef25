"""Lane spelling lives in the lane adapters: the parts built on them name no lane and no provider field.

Read from the source with ``ast``: a string literal that is exactly a lane name (``LANES``) or a
provider field name (``PROVIDER_FIELDS``) in one of the checked modules is a finding, reported as
``file:line``. Prose is not read: a docstring or message that merely mentions a field is no literal
equal to it, so contracts and doctests may still name what they describe. The tables whose job is to
name lanes (the SDK patch table, the telemetry names) are not checked.

A module not moved yet is listed in ``NOT_YET_MOVED`` with what it still spells; the test fails as soon
as it is clean, so the entry goes with it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from otel_toolturn._vocab import LANES

PACKAGE: Final = Path(__file__).resolve().parent.parent / "otel_toolturn"

PROVIDER_FIELDS: Final = frozenset(
    {
        "tool_use",
        "tool_result",
        "tool_use_id",
        "server_tool_use",
        "tool_calls",
        "tool_call_id",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "functionCall",
        "functionResponse",
        "toolUse",
        "toolResult",
        "toolUseId",
        "toolConfig",
        "toolChoice",
        "contents",
        "input",
        "messages",
        "instructions",
        "system_instruction",
        "previous_response_id",
        "conversation",
        "tools",
        "tool_choice",
        "tool_config",
        "function_calling_config",
        "reasoning",
    }
)
"""Field and item names a provider's wire spells (transcript keys, request settings, block and item types)."""

SPELLINGS: Final = frozenset(LANES) | PROVIDER_FIELDS

CHECKED: Final = ("compose.py", "cli.py", "handoff", "instrument", "integrations")
"""The modules built on the adapters: a file, or every module of a package."""

TABLES: Final = frozenset({"instrument/_patches.py", "instrument/names.py", "integrations/_litellm_entries.py"})
"""Modules whose job is to name lanes: the SDK patch table, the telemetry names (per-lane operations), and
LiteLLM's entry-point table (the lane whose shape each entry point hands back)."""

NOT_YET_MOVED: Final[dict[str, str]] = {}
"""Checked modules still spelling lanes or provider fields, with what they spell (relative to ``otel_toolturn``)."""


def checked_modules() -> list[str]:
    """Every checked module, relative to the package, tables left out."""
    found: list[str] = []
    for name in CHECKED:
        path = PACKAGE / name
        paths = sorted(path.glob("*.py")) if path.is_dir() else [path]
        found.extend(p.relative_to(PACKAGE).as_posix() for p in paths)
    return [name for name in found if name not in TABLES]


def _names_not_spelling(tree: ast.Module) -> set[int]:
    """The ids of the string constants of ``__slots__`` and ``__all__``: attribute and export names, no spelling."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id in ("__slots__", "__all__") for target in node.targets
        ):
            ids.update(id(constant) for constant in ast.walk(node.value))
    return ids


def spellings(module: str) -> Iterator[str]:
    """``file:line: 'value'`` for each string literal of ``module`` that is a lane or provider field name."""
    return spellings_in((PACKAGE / module).read_text(encoding="utf-8"), module)


def spellings_in(source: str, module: str) -> Iterator[str]:
    """``spellings`` of the text ``source`` of ``module``."""
    tree = ast.parse(source)
    skipped = _names_not_spelling(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in SPELLINGS
            and id(node) not in skipped
        ):
            yield f"otel_toolturn/{module}:{node.lineno}: {node.value!r}"


def test_modules_built_on_the_adapters_spell_no_lane_and_no_provider_field() -> None:
    """No checked module outside ``NOT_YET_MOVED`` holds a lane name or a provider field name as a literal."""
    found = [line for module in checked_modules() if module not in NOT_YET_MOVED for line in spellings(module)]
    assert not found, "spell these through adapter_for(lane):\n" + "\n".join(sorted(found))


def test_every_module_not_yet_moved_still_spells_and_exists() -> None:
    """Each ``NOT_YET_MOVED`` entry is a checked module that still spells a lane or field (clean: drop the entry)."""
    modules = set(checked_modules())
    stale = [name for name in NOT_YET_MOVED if name not in modules or not any(spellings(name))]
    assert not stale, f"clean or gone, so no longer NOT_YET_MOVED: {stale}"


def test_the_check_finds_a_lane_name_and_a_field_but_not_prose_nor_slots() -> None:
    """The walk reports a literal lane name and field, not a docstring naming them nor ``__slots__`` entries."""
    source = '"""Reads ``tool_calls`` of "bedrock.converse"."""\n__slots__ = ("messages",)\nx = "openai.responses"'
    assert list(spellings_in(source, "m.py")) == ["otel_toolturn/m.py:3: 'openai.responses'"]
