"""The SQLite store's schema, and the migrations that bring older files to it.

Kept apart from the store (:mod:`arena_core.store.sqlite`), which reads and writes records
through it: what a file holds, and how each older version of it is brought up to date.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena_core.model.errors import ArenaError
from arena_core.store.cells import SCHEMA as CELLS_SCHEMA
from arena_core.store.cells import CellLedger
from arena_core.store.typed import EVALUATION_COLUMNS, FIGURES, SUBMISSION_COLUMNS, evaluation_of

__all__ = ["SCHEMA_VERSION", "migrate"]

#: The schema's version, kept in ``PRAGMA user_version``. Versions 1 (before figures, scores and
#: standings had columns of their own), 2 (before baseline versions, history columns and
#: per-tool sums), 3 (before the leaderboard's cells, store/cells.py), 4 (before evaluation
#: versions), 5 (before the cells' exact sums of whole units) and 6 (before the index of each
#: task's tools, which ranks a new run by counting, and the index that holds each task's
#: figures together), 7 (before ``arena_writes``, the count of the store's write transactions
#: that tells a store's kept figures are current: store/figurecache.py) and 8 (before the index
#: that holds each task's scores together) are migrated when opened; a newer one is refused.
SCHEMA_VERSION = 9

#: The count of the store's write transactions, one row (side tables' writes do not count).
WRITES_SCHEMA = "CREATE TABLE IF NOT EXISTS arena_writes (n INTEGER NOT NULL)"

SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS baselines (key TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, task_id TEXT, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS submissions_task ON submissions (task_id);
CREATE TABLE IF NOT EXISTS evaluations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, submission_id TEXT NOT NULL UNIQUE, task_id TEXT NOT NULL,
    data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS baseline_versions (
    key TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (key, version));
CREATE TABLE IF NOT EXISTS evaluation_versions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, submission_id TEXT NOT NULL, superseded_at TEXT NOT NULL,
    reason TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS evaluation_versions_run ON evaluation_versions (submission_id);
"""

#: Columns versions 2 and 3 add: what a batch reads of the stored submissions (its baselines and
#: outlier rules) and of the stored evaluations (its ranking), and what the history reads of
#: them, so neither parses stored JSON (:mod:`arena_core.store.typed`).
ADDED = {"submissions": SUBMISSION_COLUMNS, "evaluations": EVALUATION_COLUMNS}
INDEXES = (
    "CREATE INDEX IF NOT EXISTS evaluations_score ON evaluations (task_id, overall_score)",
    "CREATE INDEX IF NOT EXISTS evaluations_tool ON evaluations (task_id, tool, provisional)",
    # A task's figures in one stretch of this index, read without visiting the table: a task's
    # runs arrive among every other task's, and their rows lie spread over the whole file.
    "CREATE INDEX IF NOT EXISTS submissions_figures ON submissions (task_id, seq, id, tool, model, "
    + ", ".join(FIGURES)
    + ")",
    # A task's scores in one stretch of an index, for the same reason: what a writer keeps to
    # place a new run among them (store/figurecache.py). It serves every look-up by task that
    # ``evaluations_task`` (versions 1-8) served, which is dropped.
    "CREATE INDEX IF NOT EXISTS evaluations_scores ON evaluations (task_id, seq, submission_id, overall_score, tool, "
    "provisional)",
    "DROP INDEX IF EXISTS evaluations_task",
)
ADDED_NAMES = {table: [name for name, _ in columns] for table, columns in ADDED.items()}


def migrate(connection: sqlite3.Connection, path: Path) -> None:
    """Bring the file to :data:`SCHEMA_VERSION`: create it, or add version 2's columns to a
    version 1 file and fill them from the stored records, in one transaction."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise ArenaError(
                f"{path}: written by a newer arena-core (schema version {version}; this one reads up to "
                f"{SCHEMA_VERSION}): upgrade arena-core to use it"
            )
        if version < 6:  # version 6 lacks the indexes alone, made below
            for statement in filter(str.strip, SCHEMA.split(";")):  # version 1's tables, where missing
                connection.execute(statement)  # (not executescript, which would commit first)
            for table, columns in ADDED.items():
                present = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
                for name, kind in columns:
                    if name not in present:
                        connection.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
            _fill(connection)
            connection.execute("DROP TABLE IF EXISTS group_cells")  # version 3's per-tool sums
            connection.execute("DROP TABLE IF EXISTS board_cells")  # made anew: version 5's had no units
            connection.execute(CELLS_SCHEMA)
            ledger = CellLedger()
            for data, provisional in connection.execute("SELECT data, provisional FROM evaluations").fetchall():
                ledger.add(evaluation_of(data, provisional, 0, 0, 1), 1)
            ledger.flush(connection)
        for statement in INDEXES:
            connection.execute(statement)
        connection.execute(WRITES_SCHEMA)
        if connection.execute("SELECT COUNT(*) FROM arena_writes").fetchone()[0] == 0:
            connection.execute("INSERT INTO arena_writes (n) VALUES (0)")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _fill(connection: sqlite3.Connection) -> None:
    """Versions 1 and 2 to 3: each stored record's figures, tool, score, provisional mark, model,
    time and baseline version into their columns (the stored rank and percentile stay in the
    record, and are overridden when read); each stored baseline becomes version 1 of its key
    (the baselines it replaced were not kept, and the evaluations scored before name none)."""
    subs = connection.execute("SELECT id, data FROM submissions").fetchall()
    connection.executemany(
        f"UPDATE submissions SET {', '.join(f'{n} = ?' for n in ADDED_NAMES['submissions'])} WHERE id = ?",
        [(*(record.get(n) for n in ADDED_NAMES["submissions"]), ident) for ident, record in _records(subs)],
    )
    evaluations = connection.execute("SELECT submission_id, data FROM evaluations").fetchall()
    connection.executemany(
        "UPDATE evaluations SET tool = ?, overall_score = ?, provisional = ?, model = ?, evaluated_at = ?, "
        "baseline_version = ? WHERE submission_id = ?",
        [
            (
                record.get("tool"),
                record["overall_score"],
                int(record.get("provisional", False)),
                record.get("model"),
                record.get("evaluated_at"),
                record.get("baseline_version"),
                ident,
            )
            for ident, record in _records(evaluations)
        ],
    )
    kept = {row[0] for row in connection.execute("SELECT key FROM baseline_versions")}
    baselines = [
        (key, record.setdefault("version", 1), json.dumps(record))
        for key, record in _records(connection.execute("SELECT key, data FROM baselines").fetchall())
        if key not in kept
    ]
    connection.executemany("UPDATE baselines SET data = ? WHERE key = ?", [(data, key) for key, _, data in baselines])
    connection.executemany("INSERT INTO baseline_versions (key, version, data) VALUES (?, ?, ?)", baselines)


def _records(rows: list[tuple[str, str]]) -> Iterator[tuple[str, dict[str, Any]]]:
    for ident, data in rows:
        yield ident, json.loads(data)
