"""A module-level name bound twice in one module (an assignment, a function or a class, at the top
level or under a top-level if or try): the second silently replaces the first for every function
that reads it at call time (backend.agent.operations once held two `_GROUP_OF` regexes, and the
first one's caller ran with the second). Not checked: imports, except branches."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("backend", "engine", "web", "scripts")


def _targets(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [name for element in node.elts for name in _targets(element)]
    return []


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The module-level statements of `body`, those inside a module-level if or try too."""
    out = []
    for node in body:
        if isinstance(node, ast.If):
            out += _statements(node.body) + _statements(node.orelse)
        elif isinstance(node, ast.Try):
            out += _statements(node.body)  # an except or else branch rebinds on purpose (a fallback)
        else:
            out.append(node)
    return out


def rebound_names(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, later line) for each module-level assignment (tuple targets too),
    function or class whose name an earlier one of those statements already bound; a function
    under @overload is a declaration, not a binding."""
    first: dict[str, int] = {}
    rebound = []
    for node in _statements(ast.parse(source).body):
        if isinstance(node, ast.Assign):
            names = [name for target in node.targets for name in _targets(target)]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            names = _targets(node.target)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            overload = any("overload" in ast.unparse(d) for d in node.decorator_list)
            names = [] if overload else [node.name]
        elif isinstance(node, ast.ClassDef):
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
    assert rebound_names("A, B = 1, 2\nif True:\n    B = 3\n") == [("B", 1, 3)]
    assert rebound_names("@overload\ndef f(x: int) -> int: ...\ndef f(x): return x\n") == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_binds_a_name_twice(package):
    found = [f"{path.relative_to(ROOT)}:{later}: {name} (first bound at line {line})"
             for path in sorted((ROOT / package).rglob("*.py"))
             for name, line, later in rebound_names(path.read_text(encoding="utf-8"))]
    assert found == []
