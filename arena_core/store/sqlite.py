"""The embedded store: one SQLite file, WAL journal, one transaction per batch.

Records are stored as their spec-shaped JSON beside the keys they are looked up by. A write
transaction starts with ``BEGIN IMMEDIATE``, so two processes writing the same file take
turns (waiting up to ``timeout`` seconds) instead of failing or losing updates.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from arena_core.model.errors import ArenaError
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.model.serde import structure, to_dict

__all__ = ["SQLiteStore"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS baselines (key TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS submissions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, task_id TEXT, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS submissions_task ON submissions (task_id);
CREATE TABLE IF NOT EXISTS evaluations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, submission_id TEXT NOT NULL UNIQUE, task_id TEXT NOT NULL,
    data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS evaluations_task ON evaluations (task_id);
"""


def _dump(obj: Any) -> str:
    return json.dumps(to_dict(obj), separators=(",", ":"))


class _SQLiteTransaction:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._c = connection

    def _one(self, sql: str, key: str, cls: type[T]) -> T | None:
        row = self._c.execute(sql, (key,)).fetchone()
        return None if row is None else structure(json.loads(row[0]), cls)

    def _all(self, sql: str, key: str, cls: type[T]) -> list[T]:
        return [structure(json.loads(row[0]), cls) for row in self._c.execute(sql, (key,))]

    def task_ids(self) -> list[str]:
        return [row[0] for row in self._c.execute("SELECT id FROM tasks ORDER BY rowid")]

    def get_task(self, task_id: str) -> Task | None:
        return self._one("SELECT data FROM tasks WHERE id = ?", task_id, Task)

    def put_task(self, task: Task) -> None:
        self._c.execute("INSERT OR REPLACE INTO tasks (id, data) VALUES (?, ?)", (task.id, _dump(task)))

    def get_baseline(self, key: str) -> Baseline | None:
        return self._one("SELECT data FROM baselines WHERE key = ?", key, Baseline)

    def put_baseline(self, key: str, baseline: Baseline) -> None:
        self._c.execute("INSERT OR REPLACE INTO baselines (key, data) VALUES (?, ?)", (key, _dump(baseline)))

    def submissions(self, task_id: str) -> list[Submission]:
        return self._all("SELECT data FROM submissions WHERE task_id = ? ORDER BY seq", task_id, Submission)

    def put_submission(self, submission: Submission) -> None:
        self._c.execute(
            "INSERT INTO submissions (id, task_id, data) VALUES (?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET task_id = excluded.task_id, data = excluded.data",
            (submission.id, submission.task_id, _dump(submission)),
        )

    def evaluations(self, task_id: str) -> list[Evaluation]:
        return self._all("SELECT data FROM evaluations WHERE task_id = ? ORDER BY seq", task_id, Evaluation)

    def put_evaluation(self, evaluation: Evaluation) -> None:
        self._c.execute(
            "INSERT INTO evaluations (submission_id, task_id, data) VALUES (?, ?, ?) "
            "ON CONFLICT (submission_id) DO UPDATE SET task_id = excluded.task_id, data = excluded.data",
            (evaluation.submission_id, evaluation.task_id, _dump(evaluation)),
        )


class SQLiteStore:
    """An arena in one SQLite file (created with its schema on first use).

    :param path: the database file.
    :param timeout: seconds a writer waits for another process's transaction to finish.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        try:
            with closing(self._connect()) as connection:
                connection.execute("PRAGMA journal_mode = WAL")
                connection.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ArenaError(f"{self.path}: not a usable arena database: {exc}") from None

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        connection.execute("PRAGMA synchronous = NORMAL")
        return connection

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[_SQLiteTransaction]:
        """One transaction. A writer waits up to ``timeout`` seconds for another process's write
        transaction (SQLite retries the lock until then); a database error of any kind (busy past
        the timeout, disk full, read-only file) becomes an :class:`ArenaError` naming the file,
        and nothing of the transaction remains."""
        try:
            connection = self._connect()
            try:
                connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield _SQLiteTransaction(connection)
                except BaseException:
                    connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
            finally:
                connection.close()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise ArenaError(
                    f"{self.path}: the database is busy: another process held its write lock for more than "
                    f"{self.timeout:g} s (wait longer with a larger timeout, e.g. arena ingest --lock-timeout)"
                ) from None
            raise ArenaError(f"{self.path}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise ArenaError(f"{self.path}: {exc}") from None
