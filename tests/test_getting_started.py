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


def _readme_section(title: str) -> str:
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n### {title}\n")
    return text[start:text.index("\n#", start + 1)]


def test_the_readme_says_how_to_create_the_postgresql_role_and_database() -> None:
    section = " ".join(_readme_section("PostgreSQL").split())
    for step in ("apt-get install postgresql", "sudo -u postgres createuser --pwprompt crescent",
                 "sudo -u postgres createdb -O crescent crescent",
                 "postgresql://crescent:PASSWORD@localhost/crescent",
                 "postgresql://crescent@/crescent?host=/var/run/postgresql", "check-db"):
        assert step in section, step
    # The role and the database come before the first `make run` on PostgreSQL.
    assert section.index("createdb") < section.index("make run")


def test_the_readme_lists_every_environment_variable_the_settings_read() -> None:
    source = (REPO_ROOT / "backend" / "settings.py").read_text(encoding="utf-8")
    read = set(re.findall(r'env(?:\.get\(|\[| *, *)"([A-Z][A-Z0-9_]+)"', source))
    read |= set(re.findall(r'_parse(?:_bool)?\(env, "([A-Z][A-Z0-9_]+)"', source))
    assert {"DATABASE_URL", "REDIS_URL", "CRESCENT_INSTANCE"} <= read, read
    table = [line for line in (REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("| `")]
    documented = {name for line in table for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", line.split("|")[1])}
    assert read - documented == set()


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_migrate_checks_the_database_before_alembic(tmp_path: Path) -> None:
    result = subprocess.run(["make", "-n", "migrate", f"VENV={tmp_path / 'venv'}"], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if "alembic upgrade head" in line]
    assert line == f"{tmp_path / 'venv'}/bin/python -m web check-db && {tmp_path / 'venv'}/bin/alembic upgrade head"


def test_check_db_on_a_database_that_cannot_be_reached_prints_one_line(tmp_path: Path) -> None:
    # What `make migrate` shows before alembic runs: a fresh process, one line, exit status 2.
    pytest.importorskip("psycopg")
    import os
    import socket
    import sys

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "DATABASE_URL": f"postgresql://crescent:hunter2secret@127.0.0.1:{port}/crescent"}
    result = subprocess.run([sys.executable, "-m", "web", "check-db"], cwd=REPO_ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    assert "connection refused" in result.stderr and "hunter2secret" not in result.stderr
