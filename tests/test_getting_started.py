"""What a new user reads and sees first: the README's opening lines and `make run` on a fresh
clone (each install step announced before it starts, not minutes of silence)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_opens_with_how_to_start() -> None:
    opening = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:8]).lower()
    assert "make run" in opening
    assert "open http://127.0.0.1:8000" in opening
    assert "sign up" in opening
    assert re.search(r"first account[^.]*\*?\*?admin", opening), opening


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_run_on_a_fresh_clone_announces_every_install_step(tmp_path: Path) -> None:
    # -n prints the recipe without running it; a venv that does not exist is a fresh clone.
    result = subprocess.run(["make", "-n", "run", f"VENV={tmp_path / 'venv'}"], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    steps = [i for i, line in enumerate(lines)
             if re.search(r"pip install|-m venv|alembic upgrade|engine\.quant\.build|web serve", line)]
    assert len(steps) >= 7, lines
    for i in steps:
        previous = lines[i - 1] if i else ""
        assert previous.startswith("echo ") and "==>" in previous, f"silent step: {lines[i]}"


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_run_installs_the_postgresql_driver_only_for_a_postgresql_url(tmp_path: Path) -> None:
    def recipe(url: str) -> str:
        result = subprocess.run(["make", "-n", "run", f"VENV={tmp_path / 'venv'}", f"DATABASE_URL={url}"],
                                cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout

    assert "'.[postgresql]'" in recipe("postgresql://crescent@db/crescent")
    assert "'.[postgresql]'" in recipe("postgresql+psycopg://crescent@db/crescent")
    assert "'.[postgresql]'" not in recipe("sqlite:///crescent.db")


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_test_runs_the_suite_on_both_databases(tmp_path: Path) -> None:
    # The suite runs on SQLite and on PostgreSQL (scripts/run_tests.sh starts a throwaway
    # cluster from Debian's packages): the driver and the server are always installed.
    result = subprocess.run(["make", "-n", "test", f"VENV={tmp_path / 'venv'}"], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "'.[postgresql]'" in result.stdout and "apt-get install -y -q postgresql" in result.stdout
    assert f"scripts/run_tests.sh {tmp_path / 'venv'}/bin/python" in result.stdout
    script = (REPO_ROOT / "scripts" / "run_tests.sh").read_text(encoding="utf-8")
    assert "initdb" in script and "TEST_DATABASE_URL" in script and "trap cleanup EXIT" in script
