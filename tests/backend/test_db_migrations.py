from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text

from backend.db import alembic_config, create_db_engine, engine_url, run_migrations
from backend.models import FTS_TABLE_PREFIXES, PG_SEARCH_INDEXES, Base, include_in_autogenerate

REPO = Path(__file__).resolve().parents[2]
# *_fts*: SQLite's FTS5 tables and their shadow tables (migrations 0003 and 0006).
TABLES = {"users", "auth_sessions", "conversations", "messages", "api_keys", "app_settings", "ingestion_jobs",
          "usage_records", "documents", "document_chunks", "document_index_state", "notes",
          "agent_runs", "agent_steps", "agent_tool_calls",
          "document_chunks_fts", "document_chunks_fts_config", "document_chunks_fts_data",
          "document_chunks_fts_docsize", "document_chunks_fts_idx", "alembic_version",
          *(f"{fts}{suffix}" for fts in ("messages_fts", "conversations_fts")
            for suffix in ("", "_config", "_content", "_data", "_docsize", "_idx"))}
PG_TABLES = {name for name in TABLES if not name.startswith(FTS_TABLE_PREFIXES)}


def test_migrations_create_every_table(db_engine, database_kind):
    assert set(inspect(db_engine).get_table_names()) == (TABLES if database_kind == "sqlite" else PG_TABLES)


@pytest.mark.postgresql_only
def test_postgresql_search_indexes_exist_at_head(db_engine):
    # The schema comparison below skips them (include_in_autogenerate), so check them here.
    with db_engine.connect() as conn:
        rows = conn.execute(text("SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE 'ix_%_tsv'")).all()
    assert {name for name, _ in rows} == PG_SEARCH_INDEXES
    assert all("USING gin (to_tsvector('english'::regconfig" in definition for _, definition in rows)


def test_migrated_schema_matches_the_models(db_engine):
    with db_engine.connect() as conn:
        opts = {"compare_type": True, "include_name": include_in_autogenerate}
        context = MigrationContext.configure(conn, opts=opts)
        diff = compare_metadata(context, Base.metadata)
    assert diff == []


def test_compare_detects_a_drift(db_engine):
    # The oracle above must be able to fail: drop an index and the diff names it.
    with db_engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_messages_status"))
    with db_engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert any(op[0] == "add_index" and op[1].name == "ix_messages_status" for op in diff)


@pytest.mark.sqlite_only
def test_sqlite_connections_use_wal_foreign_keys_and_busy_timeout(db_engine):
    with db_engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 5000


def test_foreign_keys_are_enforced(db_engine):
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError):
        with db_engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO conversations (id, user_id, title, created_at, updated_at) "
                    "VALUES ('c', 'nobody', '', '2026-01-01', '2026-01-01')"
                )
            )


def test_in_memory_sqlite_is_shared_across_threads():
    import threading

    engine = create_db_engine("sqlite://")
    Base.metadata.create_all(engine)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(inspect(engine).get_table_names()))
    thread.start()
    thread.join()
    assert "messages" in seen[0]


def test_downgrade_then_upgrade_round_trips(tmp_path):
    url = f"sqlite:///{tmp_path / 'rt.db'}"
    run_migrations(url)
    command.downgrade(alembic_config(url), "base")
    engine = create_engine(url)
    assert set(inspect(engine).get_table_names()) == {"alembic_version"}
    run_migrations(url)
    assert set(inspect(engine).get_table_names()) == TABLES
    engine.dispose()


@pytest.mark.postgresql_only
def test_downgrade_then_upgrade_round_trips_on_postgresql(empty_postgres_url, database_kind):
    run_migrations(empty_postgres_url)
    command.downgrade(alembic_config(empty_postgres_url), "base")
    engine = create_engine(engine_url(empty_postgres_url))
    try:
        assert set(inspect(engine).get_table_names()) == {"alembic_version"}
        run_migrations(empty_postgres_url)
        inspector = inspect(engine)
        assert set(inspector.get_table_names()) == PG_TABLES
        assert {i["name"] for t in ("messages", "conversations", "document_chunks")
                for i in inspector.get_indexes(t)} >= PG_SEARCH_INDEXES
    finally:
        engine.dispose()


def test_postgresql_sql_is_generated_without_sqlite_only_constructs():
    buffer = io.StringIO()
    config = alembic_config("postgresql://user@localhost/crescent")
    config.output_buffer = buffer
    command.upgrade(config, "head", sql=True)
    sql = buffer.getvalue()
    assert "CREATE TABLE messages" in sql
    assert "TIMESTAMP WITH TIME ZONE" in sql
    assert "PRAGMA" not in sql and "AUTOINCREMENT" not in sql


def test_alembic_cli_from_repo_root_reads_database_url(tmp_path):
    db = tmp_path / "cli.db"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}"}
    alembic = Path(sys.executable).parent / "alembic"
    result = subprocess.run(
        [str(alembic), "upgrade", "head"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    engine = create_engine(f"sqlite:///{db}")
    assert set(inspect(engine).get_table_names()) == TABLES
    with engine.connect() as conn:
        head = ScriptDirectory.from_config(alembic_config(f"sqlite:///{db}")).get_current_head()
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == head
    engine.dispose()


def test_upgrade_from_0001_makes_the_earliest_user_admin(tmp_path):
    url = f"sqlite:///{tmp_path / 'up.db'}"
    command.upgrade(alembic_config(url), "0001")
    engine = create_engine(url)
    with engine.begin() as conn:
        for uid, when in (("b", "2026-01-02 00:00:00"), ("a", "2026-01-01 00:00:00"), ("c", "2026-01-03 00:00:00")):
            conn.execute(text("INSERT INTO users (id, username, username_key, password_hash, created_at) "
                              "VALUES (:id, :id, :id, 'x', :t)"), {"id": uid, "t": when})
    run_migrations(url)
    with engine.connect() as conn:
        rows = dict(conn.execute(text("SELECT id, role FROM users")).all())
        statuses = {s for (s,) in conn.execute(text("SELECT status FROM users"))}
    assert rows == {"a": "admin", "b": "user", "c": "user"}
    assert statuses == {"active"}


def test_0004_keeps_existing_chats_without_documents_and_round_trips(tmp_path):
    url = f"sqlite:///{tmp_path / 'docs.db'}"
    command.upgrade(alembic_config(url), "0003")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, username, username_key, password_hash, created_at) "
                          "VALUES ('u', 'u', 'u', 'x', '2026-01-01 00:00:00')"))
        conn.execute(text("INSERT INTO conversations (id, user_id, title, created_at, updated_at) "
                          "VALUES ('c', 'u', 'old', '2026-01-01', '2026-01-01')"))
        conn.execute(text("INSERT INTO messages (id, conversation_id, user_id, position, role, content, html, "
                          "status, created_at, updated_at) VALUES ('m', 'c', 'u', 0, 'user', 'hi', '', "
                          "'complete', '2026-01-01', '2026-01-01')"))
    run_migrations(url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT use_documents FROM conversations")).all() == [(0,)]
        assert conn.execute(text("SELECT sources FROM messages")).all() == [(None,)]
    command.downgrade(alembic_config(url), "0003")
    columns = {c["name"] for c in inspect(engine).get_columns("conversations")}
    assert "use_documents" not in columns
    with engine.connect() as conn:  # the chat survived the downgrade
        assert conn.execute(text("SELECT content FROM messages")).all() == [("hi",)]
    engine.dispose()


def test_0005_links_every_existing_message_into_one_branch(tmp_path):
    url = f"sqlite:///{tmp_path / 'tree.db'}"
    command.upgrade(alembic_config(url), "0004")
    engine = create_engine(url)
    rows = [("m0", 0, "user", None), ("m1", 1, "assistant", "m0"), ("m2", 2, "user", None),
            ("m3", 3, "assistant", "m2"), ("m4", 4, "user", None), ("m5", 5, "assistant", None)]
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO users (id, username, username_key, password_hash, created_at) "
                          "VALUES ('u', 'u', 'u', 'x', '2026-01-01 00:00:00')"))
        for cid in ("c", "empty"):
            conn.execute(text("INSERT INTO conversations (id, user_id, title, created_at, updated_at) "
                              "VALUES (:c, 'u', 'old', '2026-01-01', '2026-01-01')"), {"c": cid})
        for mid, position, role, parent in rows:  # inserted out of order on purpose
            conn.execute(text("INSERT INTO messages (id, conversation_id, user_id, position, role, content, html, "
                              "status, parent_id, created_at, updated_at) VALUES (:id, 'c', 'u', :p, :r, :id, '', "
                              "'complete', :parent, '2026-01-01', '2026-01-01')"),
                         {"id": mid, "p": position, "r": role, "parent": parent})
    run_migrations(url)
    with engine.connect() as conn:
        parents = dict(conn.execute(text("SELECT id, parent_id FROM messages")).all())
        current = dict(conn.execute(text("SELECT id, current_message_id FROM conversations")).all())
        pinned = conn.execute(text("SELECT DISTINCT pinned FROM conversations")).all()
        themes = conn.execute(text("SELECT theme FROM users")).all()
    assert parents == {"m0": None, "m1": "m0", "m2": "m1", "m3": "m2", "m4": "m3", "m5": "m4"}
    assert current == {"c": "m5", "empty": None}
    assert pinned == [(0,)] and themes == [("system",)]
    command.downgrade(alembic_config(url), "0004")
    with engine.connect() as conn:  # every message survives; user messages lose their parent again
        parents = dict(conn.execute(text("SELECT id, parent_id FROM messages")).all())
    assert parents == {"m0": None, "m1": "m0", "m2": None, "m3": "m2", "m4": None, "m5": "m4"}
    engine.dispose()


def _three_messages_one_deleted(conn, title: str, role: str) -> None:
    """A user, a conversation titled `title` and messages m0 and m2 of `role` ("hello walrus", "and
    more"): m1 is deleted, a gap in the rowids that a batch-mode copy of the table renumbers."""
    conn.execute(text("INSERT INTO users (id, username, username_key, password_hash, created_at) "
                      "VALUES ('u', 'u', 'u', 'x', '2026-01-01 00:00:00')"))
    conn.execute(text("INSERT INTO conversations (id, user_id, title, created_at, updated_at) "
                      "VALUES ('c', 'u', :title, '2026-01-01', '2026-01-01')"), {"title": title})
    for i, content in enumerate(("hello walrus", "gone", "and more")):
        conn.execute(text("INSERT INTO messages (id, conversation_id, user_id, position, role, content, html, "
                          "status, created_at, updated_at) VALUES (:id, 'c', 'u', :i, :role, :content, '', "
                          "'complete', '2026-01-01', '2026-01-01')"), {"id": f"m{i}", "i": i, "role": role, "content": content})
    conn.execute(text("DELETE FROM messages WHERE id = 'm1'"))


def test_0014_adds_messages_total_ms_and_its_downgrade_keeps_the_search_index(tmp_path):
    url = f"sqlite:///{tmp_path / 'total.db'}"
    command.upgrade(alembic_config(url), "0013")
    engine = create_engine(url)
    with engine.begin() as conn:
        _three_messages_one_deleted(conn, "old", "assistant")
    run_migrations(url)
    with engine.begin() as conn:  # rows from before have none
        assert conn.execute(text("SELECT id, total_ms FROM messages ORDER BY position")).all() == [
            ("m0", None), ("m2", None)]
        conn.execute(text("UPDATE messages SET total_ms = 1234.5 WHERE id = 'm0'"))
    command.downgrade(alembic_config(url), "0013")
    assert "total_ms" not in {c["name"] for c in inspect(engine).get_columns("messages")}
    with engine.begin() as conn:
        assert conn.execute(text("SELECT id, content FROM messages ORDER BY position")).all() == [
            ("m0", "hello walrus"), ("m2", "and more")]
        # batch mode copied the table: its search triggers and index entries are made again (0006)
        triggers = {n for (n,) in conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))}
        assert {"messages_fts_ai", "messages_fts_ad", "messages_fts_au"} <= triggers
        rows = conn.execute(text("SELECT rowid, id FROM messages ORDER BY rowid")).all()
        assert conn.execute(text("SELECT rowid, message_id FROM messages_fts ORDER BY rowid")).all() == rows
        conn.execute(text("INSERT INTO messages (id, conversation_id, user_id, position, role, content, html, "
                          "status, created_at, updated_at) VALUES ('m3', 'c', 'u', 3, 'user', 'narwhal', '', "
                          "'complete', '2026-01-01', '2026-01-01')"))  # indexed by the trigger
    with engine.connect() as conn:
        assert conn.execute(text("SELECT message_id FROM messages_fts WHERE messages_fts MATCH 'walrus OR narwhal' "
                                 "ORDER BY rowid")).all() == [("m0",), ("m3",)]
    run_migrations(url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT total_ms FROM messages WHERE id = 'm0'")).scalar() is None
    engine.dispose()


@pytest.mark.sqlite_only
def test_search_triggers_exist_at_head(db_engine):
    # A batch-mode rebuild of messages or conversations drops their triggers with the old
    # table, and the search index would silently go stale: such a migration must recreate them.
    expected = {f"{table}_fts_{when}" for table in ("messages", "conversations") for when in ("ai", "ad", "au")}
    with db_engine.connect() as conn:
        triggers = {name for (name,) in conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))}
    assert expected <= triggers


def test_every_downgrade_keeps_the_search_index(tmp_path):
    # Downgrades that drop a column of messages (0009, 0014) or conversations (0011, 0012) copy the
    # table in batch mode, which drops its search triggers: each must remake them from the rows.
    url = f"sqlite:///{tmp_path / 'walk.db'}"
    run_migrations(url)
    engine = create_engine(url)
    with engine.begin() as conn:
        _three_messages_one_deleted(conn, "old narwhal", "assistant")
    revisions = [script.revision for script in ScriptDirectory.from_config(alembic_config(url)).walk_revisions()]
    below_0006 = revisions[:revisions.index("0006")]  # head first, down to 0006 (kept: it has the index)
    for step, revision in enumerate(below_0006[1:] + ["0006"]):
        command.downgrade(alembic_config(url), revision)
        with engine.begin() as conn:
            triggers = {n for (n,) in conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))}
            assert {f"{t}_fts_{w}" for t in ("messages", "conversations") for w in ("ai", "ad", "au")} <= triggers, \
                f"down to {revision}"
            for table, fts, key in (("messages", "messages_fts", "message_id"),
                                    ("conversations", "conversations_fts", "conversation_id")):
                rows = conn.execute(text(f"SELECT rowid, id FROM {table} ORDER BY rowid")).all()
                assert conn.execute(text(f"SELECT rowid, {key} FROM {fts} ORDER BY rowid")).all() == rows, revision
            conn.execute(text("INSERT INTO messages (id, conversation_id, user_id, position, role, content, html, "
                              "status, created_at, updated_at) VALUES (:id, 'c', 'u', :p, 'user', :word, '', "
                              "'complete', '2026-01-01', '2026-01-01')"),
                         {"id": f"n{step}", "p": 10 + step, "word": f"seal{step}"})
            conn.execute(text("UPDATE conversations SET title = :t WHERE id = 'c'"), {"t": f"walrus{step}"})
        with engine.connect() as conn:  # the triggers index what is written after the downgrade
            assert conn.execute(text("SELECT message_id FROM messages_fts WHERE messages_fts MATCH :w"),
                                {"w": f"seal{step}"}).all() == [(f"n{step}",)], revision
            assert conn.execute(text("SELECT conversation_id FROM conversations_fts WHERE conversations_fts "
                                     "MATCH :w"), {"w": f"walrus{step}"}).all() == [("c",)], revision
    engine.dispose()


def test_0006_indexes_existing_rows_and_round_trips(tmp_path):
    url = f"sqlite:///{tmp_path / 'search.db'}"
    command.upgrade(alembic_config(url), "0005")
    engine = create_engine(url)
    with engine.begin() as conn:
        _three_messages_one_deleted(conn, "old narwhal", "user")
    run_migrations(url)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT message_id FROM messages_fts WHERE messages_fts MATCH 'walrus'")).all() \
            == [("m0",)]
        assert conn.execute(text("SELECT conversation_id FROM conversations_fts "
                                 "WHERE conversations_fts MATCH 'narwhal'")).all() == [("c",)]
        # Every row's entry sits at its rowid (what the triggers rely on), and nothing else is there.
        for table, fts, key in (("messages", "messages_fts", "message_id"),
                                ("conversations", "conversations_fts", "conversation_id")):
            rows = conn.execute(text(f"SELECT rowid, id FROM {table} ORDER BY rowid")).all()
            assert conn.execute(text(f"SELECT rowid, {key} FROM {fts} ORDER BY rowid")).all() == rows
    command.downgrade(alembic_config(url), "0005")
    assert not {"messages_fts", "conversations_fts"} & set(inspect(engine).get_table_names())
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' "
                                 "AND (name LIKE 'messages_fts%' OR name LIKE 'conversations_fts%')")).scalar() == 0
        assert conn.execute(text("SELECT content FROM messages ORDER BY position")).all() == [("hello walrus",), ("and more",)]
    engine.dispose()


def _migration_0007():
    path = REPO / "migrations" / "versions" / "0007_search_escaped_text.py"
    spec = importlib.util.spec_from_file_location("migration_0007", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _offline_postgresql_sql(action, *args) -> str:
    buffer = io.StringIO()
    config = alembic_config("postgresql://user@localhost/crescent")
    config.output_buffer = buffer
    action(config, *args, sql=True)
    return buffer.getvalue()


def test_0007_index_expression_is_the_search_queries_expression():
    # An expression index serves only a query with the identical expression.
    from backend.conversation_search import _PG_MESSAGES, _PG_TITLES, pg_tsvector

    migration = _migration_0007()
    for column in ("content", "title", "m.content"):
        assert migration.escaped_tsvector(column) == pg_tsvector(column)
    assert f"{pg_tsvector('m.content')} @@ q" in str(_PG_MESSAGES)
    assert f"{pg_tsvector('c.title')} @@ q" in str(_PG_TITLES)


def test_0007_postgresql_sql_rebuilds_the_search_indexes_over_escaped_text():
    sql = _offline_postgresql_sql(command.upgrade, "head")
    upgrade = sql[sql.index("-- Running upgrade 0006 -> 0007"):]
    escaped = "replace(replace(replace({}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;')"
    for name, table, column in (("ix_messages_content_tsv", "messages", "content"),
                                ("ix_conversations_title_tsv", "conversations", "title")):
        drop = upgrade.index(f"DROP INDEX IF EXISTS {name};")
        create = upgrade.index(f"CREATE INDEX {name} ON {table} USING GIN "
                               f"(to_tsvector('english', {escaped.format(column)}));")
        assert drop < create
    sql = _offline_postgresql_sql(command.downgrade, "0007:0006")
    assert "CREATE INDEX ix_messages_content_tsv ON messages USING GIN (to_tsvector('english', content));" in sql
    assert "CREATE INDEX ix_conversations_title_tsv ON conversations USING GIN (to_tsvector('english', title));" in sql
    assert "&amp;" not in sql


def test_0007_is_a_no_op_on_sqlite_and_round_trips(tmp_path):
    url = f"sqlite:///{tmp_path / 'escaped.db'}"
    command.upgrade(alembic_config(url), "0006")
    engine = create_engine(url)
    schema = "SELECT type, name, sql FROM sqlite_master ORDER BY type, name"
    with engine.connect() as conn:
        before = conn.execute(text(schema)).all()
    command.upgrade(alembic_config(url), "0007")
    with engine.connect() as conn:
        assert conn.execute(text(schema)).all() == before
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0007"
    command.downgrade(alembic_config(url), "0006")
    with engine.connect() as conn:
        assert conn.execute(text(schema)).all() == before
    engine.dispose()


@pytest.mark.postgresql_only
def test_0007_on_postgresql_upgrades_and_downgrades_the_indexes(db_url):
    engine = create_engine(engine_url(db_url))
    query = text("SELECT indexname, indexdef FROM pg_indexes "
                 "WHERE indexname IN ('ix_messages_content_tsv', 'ix_conversations_title_tsv')")
    try:
        with engine.connect() as conn:
            head = dict(conn.execute(query).all())
        assert len(head) == 2 and all("'&amp;'" in d and "'&lt;'" in d and "'&gt;'" in d for d in head.values())
        command.downgrade(alembic_config(db_url), "0006")
        with engine.connect() as conn:
            old = dict(conn.execute(query).all())
        assert len(old) == 2 and not any("replace" in d for d in old.values())
        run_migrations(db_url)
        with engine.connect() as conn:
            assert dict(conn.execute(query).all()) == head
    finally:
        engine.dispose()
