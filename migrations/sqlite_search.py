"""SQLite's search index over messages and conversations, as migration 0006 made it, for a
downgrade that copies one of those tables.

Alembic's batch mode drops a column on SQLite by copying the table (SQLite before 3.35 cannot drop
it in place, and Alembic copies for every drop), which drops the table's FTS5 triggers with the old
table and renumbers its rowids: the index would silently go stale. `remake(table)` drops the
table's index and triggers and makes them again from its rows. This is 0006's schema, written out
here and never changed: a migration that changes the index carries its own statements.
"""

from __future__ import annotations

from alembic import op

TOKENIZE = "tokenize='porter unicode61 remove_diacritics 2'"
# table -> (index, indexed column, id column of the index)
INDEXED = {"messages": ("messages_fts", "content", "message_id"),
           "conversations": ("conversations_fts", "title", "conversation_id")}


def statements(table: str) -> list[str]:
    """The statements that remake `table`'s index: KeyError for a table that has none."""
    fts, column, key = INDEXED[table]
    match = f"rowid = old.rowid AND {key} = old.id"
    return [
        f"DROP TRIGGER IF EXISTS {fts}_ai",
        f"DROP TRIGGER IF EXISTS {fts}_ad",
        f"DROP TRIGGER IF EXISTS {fts}_au",
        f"DROP TABLE IF EXISTS {fts}",
        f"CREATE VIRTUAL TABLE {fts} USING fts5({column}, {key} UNINDEXED, {TOKENIZE})",
        f"CREATE TRIGGER {fts}_ai AFTER INSERT ON {table} BEGIN "
        f"INSERT OR REPLACE INTO {fts}(rowid, {column}, {key}) VALUES (new.rowid, new.{column}, new.id); END",
        f"CREATE TRIGGER {fts}_ad AFTER DELETE ON {table} BEGIN DELETE FROM {fts} WHERE {match}; END",
        f"CREATE TRIGGER {fts}_au AFTER UPDATE OF {column} ON {table} BEGIN "
        f"UPDATE {fts} SET {column} = new.{column} WHERE {match}; END",
        f"INSERT INTO {fts}(rowid, {column}, {key}) SELECT rowid, {column}, id FROM {table}",
    ]


def remake(table: str) -> None:
    """After a batch-mode copy of `table` ("messages" or "conversations"): its search index and
    triggers made again from its rows. Nothing on other databases."""
    if op.get_context().dialect.name == "sqlite":
        for statement in statements(table):
            op.execute(statement)
