"""A module-level name bound twice in one module: the second silently replaces the first for
every function that reads it at call time (backend.agent.operations once held two `_GROUP_OF`
regexes, and the first one's caller ran with the second)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("backend", "engine", "web", "scripts")


def rebound_names(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, later line) for each module-level assignment, function or class whose
    name an earlier one of those statements already bound."""
    first: dict[str, int] = {}
    rebound = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            names = [node.target.id]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        else:
            names = []
        for name in names:
            if name in first:
                rebound.append((name, first[name], node.lineno))
            first.setdefault(name, node.lineno)
    return rebound


def test_the_check_finds_a_rebound_name():
    assert rebound_names("A = 1\ndef f():\n    return A\nA = 2\n") == [("A", 1, 4)]
    assert rebound_names("A = 1\nB: int = 2\n") == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_binds_a_name_twice(package):
    found = [f"{path.relative_to(ROOT)}:{later}: {name} (first bound at line {line})"
             for path in sorted((ROOT / package).rglob("*.py"))
             for name, line, later in rebound_names(path.read_text(encoding="utf-8"))]
    assert found == []
