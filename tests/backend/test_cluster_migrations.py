"""Migrations run once under a lock (migrations/env.py): two processes migrating one fresh
database at the same moment both succeed, and every revision is applied exactly once.

Each child imports everything first, then waits at a file barrier, so both call
run_migrations() together; Alembic logs one "Running upgrade" line per revision it applies.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import text

from backend.db import alembic_config, create_db_engine

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import logging, os, sys, time
from pathlib import Path
from backend.db import run_migrations
logging.basicConfig(stream=sys.stdout, level=logging.WARNING, format="%(message)s")
logging.getLogger("alembic.runtime.migration").setLevel(logging.INFO)
barrier = Path(sys.argv[2])
(barrier / ("ready-" + sys.argv[3])).touch()
deadline = time.monotonic() + 60
while not (barrier / "go").exists():
    if time.monotonic() > deadline:
        sys.exit("no go")
    time.sleep(0.01)
run_migrations(sys.argv[1])
print("migrated")
"""


def _migrate_twice_at_once(url: str, barrier: Path) -> list[subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD, url, str(barrier), str(i)], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for i in range(2)
    ]
    deadline = time.monotonic() + 120
    while not all((barrier / f"ready-{i}").exists() for i in range(2)):
        assert time.monotonic() < deadline and all(c.poll() is None for c in children), "a child did not start"
        time.sleep(0.02)
    (barrier / "go").touch()
    results = []
    for child in children:
        out, _ = child.communicate(timeout=300)
        results.append(subprocess.CompletedProcess(child.args, child.returncode, out, None))
    return results


def _check_migrated_once(url: str, results: list[subprocess.CompletedProcess[str]]) -> None:
    for result in results:
        assert result.returncode == 0 and "migrated" in result.stdout, result.stdout[-3000:]
    applied = [result.stdout.count("Running upgrade") for result in results]
    script = ScriptDirectory.from_config(alembic_config(url))
    revisions = len(list(script.walk_revisions()))
    assert sorted(applied) == [0, revisions]  # one migrated everything, the other found head
    engine = create_db_engine(url)
    try:
        with engine.connect() as conn:
            versions = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    finally:
        engine.dispose()
    assert versions == [script.get_current_head()]


def test_two_processes_migrating_one_sqlite_file_at_once_migrate_it_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'crescent.db'}"
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    _check_migrated_once(url, _migrate_twice_at_once(url, barrier))


def test_two_processes_migrating_one_postgresql_database_at_once_migrate_it_once(empty_postgres_url, tmp_path):
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    _check_migrated_once(empty_postgres_url, _migrate_twice_at_once(empty_postgres_url, barrier))
