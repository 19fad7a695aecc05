"""The embedded store: one SQLite file, WAL journal, one transaction per batch.

Records are stored as their spec-shaped JSON beside the keys they are looked up by, and beside
the columns a batch reads (figures, scores, standings), so the pipeline never parses stored JSON. A write
transaction starts with ``BEGIN IMMEDIATE``, so two processes writing the same file take
turns (waiting up to ``timeout`` seconds) instead of failing or losing updates.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Hashable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TypeVar

import attrs
import orjson

from arena_core.model.errors import ArenaError
from arena_core.model.records import Baseline, Task
from arena_core.model.serde import structure
from arena_core.store.current import GENERATIONS_SQL, generations_of_rows
from arena_core.store.figurecache import FigureCache
from arena_core.store.schema import SCHEMA_VERSION, migrate
from arena_core.store.trust import check_sqlite_schema, create_private, trusted_sqlite_file
from arena_core.store.typed import TypedRows, dump_record

__all__ = ["SQLiteStore"]

T = TypeVar("T")


def _baseline(data: str, version: int) -> Baseline:
    return attrs.evolve(structure(orjson.loads(data), Baseline), version=version)


class _SQLiteTransaction(TypedRows):
    _PUT_BASELINE = "INSERT OR REPLACE INTO baselines (key, data) VALUES (?, ?)"
    _PUT_BASELINE_VERSION = "INSERT OR REPLACE INTO baseline_versions (key, version, data) VALUES (?, ?, ?)"

    def _one(self, sql: str, key: str, cls: type[T]) -> T | None:
        row = self._c.execute(sql, (key,)).fetchone()
        return None if row is None else structure(json.loads(row[0]), cls)

    def task_ids(self) -> list[str]:
        return [row[0] for row in self._c.execute("SELECT id FROM tasks ORDER BY rowid")]

    def get_task(self, task_id: str) -> Task | None:
        return self._one("SELECT data FROM tasks WHERE id = ?", task_id, Task)

    def put_task(self, task: Task) -> None:
        self._c.execute("INSERT OR REPLACE INTO tasks (id, data) VALUES (?, ?)", (task.id, dump_record(task)))

    def get_baseline(self, key: str) -> Baseline | None:
        return self._one("SELECT data FROM baselines WHERE key = ?", key, Baseline)

    def baseline_keys(self) -> list[str]:
        """Every key a baseline was stored under."""
        return [row[0] for row in self._c.execute("SELECT DISTINCT key FROM baseline_versions ORDER BY key")]

    def baseline_versions(self, key: str) -> list[Baseline]:
        """Every baseline stored under ``key``, oldest first."""
        rows = self._c.execute("SELECT data, version FROM baseline_versions WHERE key = ? ORDER BY version", (key,))
        return [_baseline(*row) for row in rows]

    def get_baseline_version(self, key: str, version: int) -> Baseline | None:
        row = self._c.execute(
            "SELECT data, version FROM baseline_versions WHERE key = ? AND version = ?", (key, version)
        ).fetchone()
        return None if row is None else _baseline(*row)

    def judge_verdict(self, key: str) -> str | None:
        """A judge's answer kept under ``key`` (the verdict cache, plugins/judges/cache.py), or ``None``."""
        try:
            row = self._c.execute("SELECT data FROM judge_verdicts WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:  # the table is made by the first answer kept
            return None
        return None if row is None else str(row[0])

    def keep_judge_verdict(self, key: str, data: str) -> None:
        self._c.execute("CREATE TABLE IF NOT EXISTS judge_verdicts (key TEXT PRIMARY KEY, data TEXT NOT NULL)")
        self._c.execute("INSERT OR REPLACE INTO judge_verdicts (key, data) VALUES (?, ?)", (key, data))

    def task_generations(self) -> dict[str, Hashable]:
        """Each task's record and its baselines' newest versions (:mod:`arena_core.store.current`)."""
        tasks, versions = (self._c.execute(sql).fetchall() for sql in GENERATIONS_SQL)
        return generations_of_rows(tasks, versions)

    def board_cells(self, grouping: str) -> list[tuple[object, ...]]:
        """The leaderboard's cells of ``grouping`` (see :mod:`arena_core.store.cells`)."""
        return self.ledger.rows(self._c, grouping)

    def group_means(self) -> list[tuple[str | None, float, int]]:
        """Per tool: the mean over tasks of its per-task mean overall score, and its number of
        tasks, from the cells (kept up to date by every stored evaluation): a read of one row
        per task and tool, not of every evaluation."""
        return self.ledger.group_means(self._c)


class SQLiteStore:
    """An arena in one SQLite file (created with its schema on first use, readable by its owner
    only). A file another user owns or may write, or that holds a trigger or a view, is refused
    (:mod:`arena_core.store.trust`).

    :param path: the database file.
    :param timeout: seconds a writer waits for another process's transaction to finish.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._local = threading.local()
        self._figures = FigureCache()
        create_private(self.path)
        trusted_sqlite_file(self.path)
        try:
            with closing(self._connect()) as connection:
                check_sqlite_schema(connection, self.path)
                connection.execute("PRAGMA journal_mode = WAL")
                if connection.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                    migrate(connection, self.path)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise ArenaError(f"{self.path}: the database is busy (another process holds its write lock)") from None
            raise ArenaError(f"{self.path}: not a usable arena database: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise ArenaError(f"{self.path}: not a usable arena database: {exc}") from None

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        connection.execute("PRAGMA synchronous = NORMAL")
        return connection

    def _held(self) -> tuple[sqlite3.Connection, bool]:
        """This thread's connection, kept between its transactions (opening one, and closing the
        last, which checkpoints the journal, cost a service's post more than its own work), and
        whether it is to be closed after use: a transaction inside another of the same thread,
        or a process forked since, gets a connection of its own."""
        held = getattr(self._local, "held", None)
        if held is not None and held[1] == os.getpid() and not held[0].in_transaction:
            return held[0], False
        connection = self._connect()
        if held is None or held[1] != os.getpid():
            self._local.held = (connection, os.getpid())
            return connection, False
        return connection, True

    def _drop(self) -> None:
        held = getattr(self._local, "held", None)
        if held is not None:
            self._local.held = None
            if held[1] == os.getpid():
                held[0].close()

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[_SQLiteTransaction]:
        """One transaction. A writer waits up to ``timeout`` seconds for another process's write
        transaction (SQLite retries the lock until then); a database error of any kind (busy past
        the timeout, disk full, read-only file) becomes an :class:`ArenaError` naming the file,
        and nothing of the transaction remains."""
        try:
            connection, own = self._held()
            try:
                connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                pending = writes = None
                if write:  # the store's version: how many write transactions it has had
                    counted = connection.execute("UPDATE arena_writes SET n = n + 1 RETURNING n").fetchone()
                    if counted is not None:  # a file whose count someone deleted keeps nothing
                        writes = counted[0]
                        pending = self._figures.begin(writes - 1)
                tx = _SQLiteTransaction(connection, figures=pending)
                try:
                    yield tx
                    tx.ledger.flush(connection)
                except BaseException:
                    if connection.in_transaction:  # SQLite rolls back by itself on a full disk
                        connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
                if pending is not None:
                    self._figures.commit(pending, writes)
            except sqlite3.Error:
                if not own:
                    self._drop()  # a connection that failed is not kept
                raise
            finally:
                if own:
                    connection.close()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise ArenaError(
                    f"{self.path}: the database is busy: another process held its write lock for more than "
                    f"{self.timeout:g} s (wait longer with a larger timeout, e.g. arena ingest --lock-timeout)"
                ) from None
            if "full" in str(exc):
                raise ArenaError(
                    f"{self.path}: the disk is full; nothing of this transaction was stored ({exc})"
                ) from None
            raise ArenaError(f"{self.path}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise ArenaError(f"{self.path}: {exc}") from None
