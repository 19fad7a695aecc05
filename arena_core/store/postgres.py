"""A store in PostgreSQL, for several service instances or workers sharing one arena
(``postgresql://...``; the ``postgresql`` extra installs psycopg).

The same contract as the SQLite store: one transaction per batch, records as their spec-shaped
JSON beside the keys they are looked up by, baselines and evaluations kept by version, a
schema version refused when newer. Writers take turns: a write transaction first takes a
transaction-scoped advisory lock, as SQLite's ``BEGIN IMMEDIATE`` takes the file's write lock,
so two instances ingesting at once never interleave a batch or lose one. As in SQLite, the
records have typed columns beside their JSON and ranks are derived on read
(:mod:`arena_core.store.typed`), so a batch reads a few numbers per stored row of its tasks and
writes only its own rows; the leaderboard's cells per group and task
(:mod:`arena_core.store.cells`) are kept up to date by every stored evaluation, in its
transaction. Older databases are brought up to date when first opened
(:mod:`arena_core.store.pgschema`).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, TypeVar

import attrs

from arena_core.model.errors import ArenaError
from arena_core.model.records import Baseline, Task
from arena_core.model.serde import structure
from arena_core.store.current import GENERATIONS_SQL, generations_of_rows
from arena_core.store.figurecache import FigureCache, PendingFigures
from arena_core.store.pgconnections import HeldConnections
from arena_core.store.pgpipeline import StatementCursor
from arena_core.store.pgschema import SCHEMA_VERSION, TABLES, migrate
from arena_core.store.trust import check_postgres_tables, redact, unambiguous_url
from arena_core.store.typed import TypedRows, dump_record

__all__ = ["PostgresStore", "SCHEMA_VERSION", "is_postgres_url"]

T = TypeVar("T")

#: Any number, the same for every writer of every arena in the database: the write lock.
_WRITE_LOCK = 0x6172656E61  # "arena"


def is_postgres_url(location: object) -> bool:
    """Whether a store's location names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


class _PostgresTransaction(TypedRows):
    _PUT_BASELINE = (
        "INSERT INTO baselines (key, data) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET data = excluded.data"
    )
    _PUT_BASELINE_VERSION = (
        "INSERT INTO baseline_versions (key, version, data) VALUES (?, ?, ?) "
        "ON CONFLICT (key, version) DO UPDATE SET data = excluded.data"
    )

    def __init__(self, cursor: Any, figures: PendingFigures | None = None) -> None:
        super().__init__(cursor, "%s", figures)

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
            (task.id, dump_record(task)),
        )

    def get_baseline(self, key: str) -> Baseline | None:
        return self._one("SELECT data FROM baselines WHERE key = %s", key, Baseline)

    def baseline_keys(self) -> list[str]:
        return [row[0] for row in self._rows("SELECT DISTINCT key FROM baseline_versions ORDER BY key")]

    def baseline_versions(self, key: str) -> list[Baseline]:
        rows = self._rows("SELECT data, version FROM baseline_versions WHERE key = %s ORDER BY version", key)
        return [attrs.evolve(structure(json.loads(data), Baseline), version=version) for data, version in rows]

    def get_baseline_version(self, key: str, version: int) -> Baseline | None:
        rows = self._rows("SELECT data FROM baseline_versions WHERE key = %s AND version = %s", key, version)
        return attrs.evolve(structure(json.loads(rows[0][0]), Baseline), version=version) if rows else None

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

    def judge_verdict(self, key: str) -> str | None:
        """A judge's answer kept under ``key`` (the verdict cache, plugins/judges/cache.py), or ``None``."""
        rows = self._rows("SELECT data FROM judge_verdicts WHERE key = %s", key)
        return str(rows[0][0]) if rows else None

    def keep_judge_verdict(self, key: str, data: str) -> None:
        self._c.execute(
            "INSERT INTO judge_verdicts (key, data) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET data = excluded.data",
            (key, data),
        )


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
        self._connections = HeldConnections(url, timeout)
        self._figures: FigureCache | None = None  # once the schema counts writes
        with self.transaction() as tx:
            check_postgres_tables(tx._c, TABLES, self._where())
            migrate(tx._c, self._where())
        self._figures = FigureCache()

    def _where(self) -> str:
        """The URL without its password, for messages."""
        return redact(self.url)

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[_PostgresTransaction]:
        """One transaction; a writer first waits for any other writer's transaction to end (up to
        ``timeout`` seconds). Any database error becomes an :class:`ArenaError`, and nothing of
        the transaction remains. Connections are kept between transactions
        (:mod:`arena_core.store.pgconnections`); one the server ended meanwhile is replaced, and
        the transaction begun again on the new one."""
        psycopg = self._psycopg
        for attempt in range(2):
            kept, started, connection = self._connections.holds(), False, None
            try:
                with (
                    self._connections.connection() as connection,
                    connection.pipeline() if write else nullcontext() as pipeline,  # writes sent, not waited for
                    connection.transaction(),
                    nullcontext(StatementCursor(connection)) if write else connection.cursor() as cursor,
                ):
                    if not write:
                        cursor.execute("SET TRANSACTION READ ONLY")
                    cursor.execute(f"SET LOCAL lock_timeout = '{int(self.timeout * 1000)}ms'")
                    pending = writes = None
                    if write:
                        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
                        if self._figures is not None:  # the store's version: how many writes it has had
                            cursor.execute("UPDATE arena_schema SET writes = writes + 1 RETURNING writes")
                            counted = cursor.fetchone()
                            if counted is not None:  # a database whose count someone deleted keeps nothing
                                writes = counted[0]
                                pending = self._figures.begin(writes - 1)
                    # The lock held, or a lost connection found, before any of the caller's work.
                    if pipeline is not None:
                        pipeline.sync()
                    tx = _PostgresTransaction(cursor, pending)
                    started = True
                    yield tx
                    tx.ledger.flush(cursor, "%s")
                if pending is not None and self._figures is not None:
                    self._figures.commit(pending, writes)
                return
            except psycopg.Error as exc:
                # A kept connection the server ended since its last use (a restart, a failover,
                # an idle session's timeout) fails at once: the transaction starts again, once,
                # on a new one. Nothing of the caller's ran; any other failure is the caller's.
                # (``broken``: interrupted, not closed; a psycopg without it never retries.)
                if attempt == 0 and kept and not started and getattr(connection, "broken", False):
                    continue
                raise ArenaError(f"{self._where()}: {redact(str(exc).strip(), self.url)}") from None
