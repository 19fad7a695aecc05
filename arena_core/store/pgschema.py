"""The PostgreSQL store's schema, and the migrations that bring older databases to it.

Kept apart from the store (:mod:`arena_core.store.postgres`), as :mod:`arena_core.store.schema`
is for SQLite: what a database holds, and how each older version of it is brought up to date,
in the transaction that opens it.
"""

from __future__ import annotations

import json
from typing import Any

from arena_core.model.errors import ArenaError
from arena_core.store.cells import CellLedger, schema
from arena_core.store.typed import EVALUATION_COLUMNS, FIGURES, SUBMISSION_COLUMNS, evaluation_of

__all__ = ["SCHEMA_VERSION", "TABLES", "migrate"]

#: The schema's version, in ``arena_schema``; a newer one is refused. 2: the leaderboard's cells;
#: 3: their exact sums of whole units; 4: typed columns beside the records, ranks derived on read;
#: 5: ``arena_schema.writes``, the count of write transactions (store/figurecache.py); 6: each
#: task's scores read from one stretch of an index.
SCHEMA_VERSION = 6

#: The leaderboard's cells (store/cells.py), in PostgreSQL's words.
_CELLS = schema(real="DOUBLE PRECISION", whole="BIGINT", suffix="")
_KINDS = {"REAL": "DOUBLE PRECISION", "INTEGER": "INTEGER", "TEXT": "TEXT"}
_TYPED = {"submissions": SUBMISSION_COLUMNS, "evaluations": EVALUATION_COLUMNS}
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS arena_schema (version INTEGER NOT NULL)",
    "ALTER TABLE arena_schema ADD COLUMN IF NOT EXISTS writes BIGINT NOT NULL DEFAULT 0",
    "CREATE TABLE IF NOT EXISTS tasks (seq BIGSERIAL, id TEXT PRIMARY KEY, data TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS baselines (key TEXT PRIMARY KEY, data TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS baseline_versions (key TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL, "
    "PRIMARY KEY (key, version))",
    "CREATE TABLE IF NOT EXISTS submissions (seq BIGSERIAL, id TEXT PRIMARY KEY, task_id TEXT, data TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS submissions_task ON submissions (task_id, seq)",
    "CREATE TABLE IF NOT EXISTS evaluations (seq BIGSERIAL, submission_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, "
    "data TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS evaluation_versions (seq BIGSERIAL PRIMARY KEY, submission_id TEXT NOT NULL, "
    "superseded_at TEXT NOT NULL, reason TEXT NOT NULL, data TEXT NOT NULL)",
    _CELLS,
    "CREATE TABLE IF NOT EXISTS judge_verdicts (key TEXT PRIMARY KEY, data TEXT NOT NULL)",
    *(
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {name} {_KINDS[kind]}"
        for table, columns in _TYPED.items()
        for name, kind in columns
    ),
    "CREATE INDEX IF NOT EXISTS evaluations_score ON evaluations (task_id, overall_score)",
    "CREATE INDEX IF NOT EXISTS evaluations_tool ON evaluations (task_id, tool, provisional)",
    # A task's figures read from one stretch of an index (store/schema.py says why).
    "CREATE INDEX IF NOT EXISTS submissions_figures ON submissions (task_id, seq) INCLUDE (id, tool, model, "
    + ", ".join(FIGURES)
    + ")",
    # A task's scores, likewise: what a writer keeps to place a new run among them. It serves
    # every look-up by task that ``evaluations_task`` (versions 1-5) served, which is dropped.
    "CREATE INDEX IF NOT EXISTS evaluations_scores ON evaluations (task_id, seq) "
    "INCLUDE (submission_id, overall_score, tool, provisional)",
    "DROP INDEX IF EXISTS evaluations_task",
)
#: The store's tables: each must belong to the role connecting (:mod:`arena_core.store.trust`).
TABLES = (
    "arena_schema", "tasks", "baselines", "baseline_versions", "submissions", "evaluations", "evaluation_versions",
    "board_cells", "judge_verdicts",
)  # fmt: skip


def migrate(cursor: Any, where: str) -> None:
    """Bring the database to :data:`SCHEMA_VERSION`, inside the caller's transaction: create its
    tables, or add what an older version lacks and fill it from the stored records.

    :raises ArenaError: the database was written by a newer arena-core.
    """
    cursor.execute("SELECT to_regclass('arena_schema') IS NOT NULL")
    version = None
    if cursor.fetchone()[0]:
        cursor.execute("SELECT MAX(version) FROM arena_schema")
        version = cursor.fetchone()[0]
    if version is not None and version > SCHEMA_VERSION:
        raise ArenaError(
            f"{where}: written by a newer arena-core (schema version {version}; this one reads up to "
            f"{SCHEMA_VERSION}): upgrade arena-core to use it"
        )
    if version == SCHEMA_VERSION:
        return
    for statement in _SCHEMA:
        cursor.execute(statement)
    if version is None:
        cursor.execute("INSERT INTO arena_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
        return
    if version < 4:
        _fill_columns(cursor)
    if version < 3:  # the cells of the evaluations stored so far (version 2's had no units)
        cursor.execute("DROP TABLE board_cells")
        cursor.execute(_CELLS)
        ledger = CellLedger()
        cursor.execute("SELECT data, provisional FROM evaluations")
        for data, provisional in cursor.fetchall():
            ledger.add(evaluation_of(data, provisional, 0, 0, 1), 1)
        ledger.flush(cursor, "%s")
    cursor.execute("UPDATE arena_schema SET version = %s", (SCHEMA_VERSION,))


def _fill_columns(cursor: Any) -> None:
    """Versions 1-3 to 4: each stored record's figures, tool, score, provisional mark, model, time
    and baseline version into their columns (a stored rank and percentile stay in the record,
    and are overridden when read)."""
    for table, key in (("submissions", "id"), ("evaluations", "submission_id")):
        names = [name for name, _ in _TYPED[table]]
        cursor.execute(f"SELECT {key}, data FROM {table}")
        rows = [(ident, json.loads(data)) for ident, data in cursor.fetchall()]
        values = [[record.get(name) for name in names] + [ident] for ident, record in rows]
        if table == "evaluations":
            at = names.index("provisional")
            for row in values:
                row[at] = int(bool(row[at]))
        if values:
            assigned = ", ".join(f"{name} = %s" for name in names)
            cursor.executemany(f"UPDATE {table} SET {assigned} WHERE {key} = %s", values)
