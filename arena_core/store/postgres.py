"""A store in PostgreSQL, for several service instances or workers sharing one arena
(``postgresql://...``; the ``postgresql`` extra installs psycopg).

The same contract as the SQLite store: one transaction per batch, records as their spec-shaped
JSON beside the keys they are looked up by, baselines and evaluations kept by version, a
schema version refused when newer. Writers take turns: a write transaction first takes a
transaction-scoped advisory lock, as SQLite's ``BEGIN IMMEDIATE`` takes the file's write lock,
so two instances ingesting at once never interleave a batch or lose one. Ranks are written
into the stored evaluations (the pipeline's object path), not derived on read. The
leaderboard's cells per group and task (:mod:`arena_core.store.cells`) are kept up to date by
every stored evaluation, in its transaction, as in SQLite (schema version 2; a version 1
database gets them, filled from its evaluations, when first opened).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import attrs

from arena_core.model.errors import ArenaError
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.model.serde import structure, to_dict
from arena_core.store.cells import CellLedger, schema
from arena_core.store.current import GENERATIONS_SQL, generations_of_rows
from arena_core.store.trust import check_postgres_tables, redact, unambiguous_url

__all__ = ["PostgresStore", "SCHEMA_VERSION", "is_postgres_url"]

T = TypeVar("T")

#: The schema's version, in ``arena_schema``; a newer one is refused. 2: the leaderboard's cells;
#: 3: their exact sums of whole units.
SCHEMA_VERSION = 3
#: Any number, the same for every writer of every arena in the database: the write lock.
_WRITE_LOCK = 0x6172656E61  # "arena"

#: The leaderboard's cells (store/cells.py), in PostgreSQL's words.
_CELLS = schema(real="DOUBLE PRECISION", whole="BIGINT", suffix="")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS arena_schema (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tasks (seq BIGSERIAL, id TEXT PRIMARY KEY, data TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS baselines (key TEXT PRIMARY KEY, data TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS baseline_versions (key TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL, "
    "PRIMARY KEY (key, version))",
    "CREATE TABLE IF NOT EXISTS submissions (seq BIGSERIAL, id TEXT PRIMARY KEY, task_id TEXT, data TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS submissions_task ON submissions (task_id, seq)",
    "CREATE TABLE IF NOT EXISTS evaluations (seq BIGSERIAL, submission_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, "
    "data TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS evaluations_task ON evaluations (task_id, seq)",
    "CREATE TABLE IF NOT EXISTS evaluation_versions (seq BIGSERIAL PRIMARY KEY, submission_id TEXT NOT NULL, "
    "superseded_at TEXT NOT NULL, reason TEXT NOT NULL, data TEXT NOT NULL)",
    _CELLS,
    "CREATE TABLE IF NOT EXISTS judge_verdicts (key TEXT PRIMARY KEY, data TEXT NOT NULL)",
)
#: The store's tables: each must belong to the role connecting (:mod:`arena_core.store.trust`).
_TABLES = (
    "arena_schema", "tasks", "baselines", "baseline_versions", "submissions", "evaluations", "evaluation_versions",
    "board_cells", "judge_verdicts",
)  # fmt: skip


def is_postgres_url(location: object) -> bool:
    """Whether a store's location names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def _dump(obj: Any) -> str:
    return json.dumps(to_dict(obj), separators=(",", ":"))


class _PostgresTransaction:
    def __init__(self, cursor: Any) -> None:
        self._c = cursor
        self.ledger = CellLedger()
        """What this transaction changed in the leaderboard's cells, written before they are read
        and before it commits."""

    def _rows(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        self._c.execute(sql, args)
        return list(self._c.fetchall())

    def _one(self, sql: str, key: Any, cls: type[T]) -> T | None:
        rows = self._rows(sql, key)
        return structure(json.loads(rows[0][0]), cls) if rows else None

    def task_ids(self) -> list[str]:
        return [row[0] for row in self._rows("SELECT id FROM tasks ORDER BY seq")]

    def get_task(self, task_id: str) -> Task | None:
        return self._one("SELECT data FROM tasks WHERE id = %s", task_id, Task)

    def put_task(self, task: Task) -> None:
        self._c.execute(
            "INSERT INTO tasks (id, data) VALUES (%s, %s) ON CONFLICT (id) DO UPDATE SET data = excluded.data",
            (task.id, _dump(task)),
        )

    def get_baseline(self, key: str) -> Baseline | None:
        return self._one("SELECT data FROM baselines WHERE key = %s", key, Baseline)

    def put_baseline(self, key: str, baseline: Baseline) -> None:
        """Store ``baseline`` as the current one for ``key`` and keep it among the key's versions."""
        if baseline.version is None:
            latest = self._rows("SELECT MAX(version) FROM baseline_versions WHERE key = %s", key)[0][0]
            baseline = attrs.evolve(baseline, version=(latest or 0) + 1)
        data = _dump(baseline)
        self._c.execute(
            "INSERT INTO baselines (key, data) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET data = excluded.data",
            (key, data),
        )
        self._c.execute(
            "INSERT INTO baseline_versions (key, version, data) VALUES (%s, %s, %s) "
            "ON CONFLICT (key, version) DO UPDATE SET data = excluded.data",
            (key, baseline.version, data),
        )

    def baseline_keys(self) -> list[str]:
        return [row[0] for row in self._rows("SELECT DISTINCT key FROM baseline_versions ORDER BY key")]

    def baseline_versions(self, key: str) -> list[Baseline]:
        rows = self._rows("SELECT data, version FROM baseline_versions WHERE key = %s ORDER BY version", key)
        return [attrs.evolve(structure(json.loads(data), Baseline), version=version) for data, version in rows]

    def get_baseline_version(self, key: str, version: int) -> Baseline | None:
        rows = self._rows("SELECT data FROM baseline_versions WHERE key = %s AND version = %s", key, version)
        return attrs.evolve(structure(json.loads(rows[0][0]), Baseline), version=version) if rows else None

    def submissions(self, task_id: str) -> list[Submission]:
        rows = self._rows("SELECT data FROM submissions WHERE task_id = %s ORDER BY seq", task_id)
        return [structure(json.loads(row[0]), Submission) for row in rows]

    def put_submission(self, submission: Submission) -> None:
        self._c.execute(
            "INSERT INTO submissions (id, task_id, data) VALUES (%s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET task_id = excluded.task_id, data = excluded.data",
            (submission.id, submission.task_id, _dump(submission)),
        )

    def evaluations(self, task_id: str) -> list[Evaluation]:
        rows = self._rows("SELECT data FROM evaluations WHERE task_id = %s ORDER BY seq", task_id)
        return [structure(json.loads(row[0]), Evaluation) for row in rows]

    def put_evaluation(self, evaluation: Evaluation) -> None:
        replaced = self._rows("SELECT data FROM evaluations WHERE submission_id = %s", evaluation.submission_id)
        if replaced:
            self.ledger.add(structure(json.loads(replaced[0][0]), Evaluation), -1)
        self.ledger.add(evaluation, 1)
        self._c.execute(
            "INSERT INTO evaluations (submission_id, task_id, data) VALUES (%s, %s, %s) "
            "ON CONFLICT (submission_id) DO UPDATE SET task_id = excluded.task_id, data = excluded.data",
            (evaluation.submission_id, evaluation.task_id, _dump(evaluation)),
        )

    def ranked(self, task_id: str, *, offset: int = 0, limit: int = -1) -> list[Evaluation]:
        """A page of the task's evaluations, best first (equal scores first stored first)."""
        rows = self._rows(
            "SELECT data FROM evaluations WHERE task_id = %s "
            "ORDER BY (data::jsonb ->> 'overall_score')::float8 DESC, seq LIMIT %s OFFSET %s",
            task_id,
            None if limit < 0 else limit,
            offset,
        )
        return [structure(json.loads(row[0]), Evaluation) for row in rows]

    def task_generations(self) -> dict[str, Hashable]:
        """Each task's record and its baselines' newest versions (:mod:`arena_core.store.current`)."""
        tasks, versions = (self._rows(sql) for sql in GENERATIONS_SQL)
        return generations_of_rows(tasks, versions)

    def board_cells(self, grouping: str) -> list[tuple[object, ...]]:
        """The leaderboard's cells of ``grouping`` (see :mod:`arena_core.store.cells`)."""
        return self.ledger.rows(self._c, grouping, "%s")

    def group_means(self) -> list[tuple[str | None, float, int]]:
        """Per tool, the mean over its tasks of its per-task mean overall score and the number of
        tasks, from the cells: one row per tool and task read, not every evaluation."""
        return self.ledger.group_means(self._c, "%s")

    def task_of(self, submission_id: str) -> str | None:
        """The task a stored submission answers, ``None`` when the id is not stored."""
        rows = self._rows("SELECT task_id FROM submissions WHERE id = %s", submission_id)
        return str(rows[0][0]) if rows else None

    def judge_verdict(self, key: str) -> str | None:
        """A judge's answer kept under ``key`` (the verdict cache, plugins/judges/cache.py), or ``None``."""
        rows = self._rows("SELECT data FROM judge_verdicts WHERE key = %s", key)
        return str(rows[0][0]) if rows else None

    def keep_judge_verdict(self, key: str, data: str) -> None:
        self._c.execute(
            "INSERT INTO judge_verdicts (key, data) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET data = excluded.data",
            (key, data),
        )

    def keep_evaluation_version(self, evaluation: Evaluation, reason: str, superseded_at: str) -> None:
        """Keep ``evaluation`` among the superseded ones (see :mod:`arena_core.store.repricing`)."""
        self._c.execute(
            "INSERT INTO evaluation_versions (submission_id, superseded_at, reason, data) VALUES (%s, %s, %s, %s)",
            (evaluation.submission_id, superseded_at, reason, _dump(evaluation)),
        )

    def evaluation_versions(self, submission_id: str) -> list[tuple[str, str, Evaluation]]:
        """(superseded at, reason, evaluation) of every superseded evaluation of a run, oldest first."""
        rows = self._rows(
            "SELECT superseded_at, reason, data FROM evaluation_versions WHERE submission_id = %s ORDER BY seq",
            submission_id,
        )
        return [(at, reason, structure(json.loads(data), Evaluation)) for at, reason, data in rows]


class PostgresStore:
    """An arena in a PostgreSQL database (its tables created on first use).

    :param url: a libpq connection string or URL, ``postgresql://user@host:port/dbname``.
    :param timeout: seconds to wait to connect, and for another writer's transaction.
    :raises ArenaError: psycopg is not installed, the server cannot be reached, or the
        database holds a newer schema.
    """

    def __init__(self, url: str, *, timeout: float = 30.0) -> None:
        try:
            import psycopg
        except ImportError:
            raise ArenaError("a postgresql:// store needs psycopg: pip install 'arena-core[postgresql]'") from None
        unambiguous_url(url)
        self._psycopg = psycopg
        self.url = url
        self.timeout = timeout
        with self.transaction() as tx:
            cursor = tx._c
            check_postgres_tables(cursor, _TABLES, self._where())
            cursor.execute("SELECT to_regclass('arena_schema') IS NOT NULL")
            found = cursor.fetchone()[0]
            version = None
            if found:
                cursor.execute("SELECT MAX(version) FROM arena_schema")
                version = cursor.fetchone()[0]
            if version is not None and version > SCHEMA_VERSION:
                raise ArenaError(
                    f"{self._where()}: written by a newer arena-core (schema version {version}; this one reads up to "
                    f"{SCHEMA_VERSION}): upgrade arena-core to use it"
                )
            for statement in _SCHEMA:
                cursor.execute(statement)
            if version is None:
                cursor.execute("INSERT INTO arena_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
            elif version < SCHEMA_VERSION:  # 1 and 2 to 3: the cells of the evaluations stored so far
                cursor.execute("DROP TABLE board_cells")  # version 2's had no units; version 1's was just made
                cursor.execute(_CELLS)
                cursor.execute("SELECT data FROM evaluations")
                for (data,) in cursor.fetchall():
                    tx.ledger.add(structure(json.loads(data), Evaluation), 1)
                tx.ledger.flush(cursor, "%s")
                cursor.execute("UPDATE arena_schema SET version = %s", (SCHEMA_VERSION,))

    def _where(self) -> str:
        """The URL without its password, for messages."""
        return redact(self.url)

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[_PostgresTransaction]:
        """One transaction; a writer first waits for any other writer's transaction to end (up to
        ``timeout`` seconds). Any database error becomes an :class:`ArenaError`, and nothing of
        the transaction remains."""
        psycopg = self._psycopg
        try:
            connecting = psycopg.connect(self.url, connect_timeout=max(1, int(self.timeout)))
            with connecting as connection, connection.transaction(), connection.cursor() as cursor:
                if not write:
                    cursor.execute("SET TRANSACTION READ ONLY")
                cursor.execute(f"SET LOCAL lock_timeout = '{int(self.timeout * 1000)}ms'")
                if write:
                    cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
                tx = _PostgresTransaction(cursor)
                yield tx
                tx.ledger.flush(cursor, "%s")
        except psycopg.Error as exc:
            raise ArenaError(f"{self._where()}: {redact(str(exc).strip(), self.url)}") from None
