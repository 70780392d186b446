"""Every browser test carries the e2e marker, so `pytest -m "not e2e"` leaves the browser alone.

A module under e2e/ whose tests take the `page` or `browser` fixture (or the `server`, which
starts the real model) must set ``pytestmark = pytest.mark.e2e`` (or a list holding it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

E2E_DIR = Path(__file__).resolve().parent.parent / "e2e"
BROWSER_FIXTURES = {"page", "browser", "server"}


def _uses_browser(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            if BROWSER_FIXTURES & {arg.arg for arg in node.args.args}:
                return True
    return False


def _marks_e2e(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                for t in node.targets):
            return "mark.e2e" in ast.unparse(node.value)
    return False


MODULES = sorted(E2E_DIR.glob("test_*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_browser_test_modules_carry_the_e2e_marker(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if _uses_browser(tree):
        assert _marks_e2e(tree), f"{path.name} drives a browser: add pytestmark = pytest.mark.e2e"


def test_the_check_sees_a_module_without_the_marker() -> None:
    unmarked = ast.parse("def test_x(page):\n    page.goto('/')\n")
    marked = ast.parse("import pytest\npytestmark = pytest.mark.e2e\ndef test_x(page):\n    pass\n")
    assert _uses_browser(unmarked) and not _marks_e2e(unmarked)
    assert _marks_e2e(marked)
