"""Tables kept beside an arena's store, in its database: the service's tokens, people's labels
and the review queue.

They live in the store's SQLite file, or in its PostgreSQL database (where every instance of the
service reads the same rows), each created on first use. A file or a table another user made,
or one carrying a trigger, is refused (:mod:`arena_core.store.trust`). SQLite keeps one
connection a thread, as the stores do (:mod:`arena_core.store.pgconnections`).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena_core.model.errors import ArenaError
from arena_core.store.pgconnections import HeldConnections
from arena_core.store.postgres import is_postgres_url
from arena_core.store.trust import (
    check_postgres_tables,
    check_sqlite_schema,
    create_private,
    redact,
    trusted_sqlite_file,
    unambiguous_url,
)

__all__ = ["SideTables"]

#: The advisory lock a PostgreSQL transaction of :meth:`SideTables.transaction` holds.
_LOCK = 0x4152454E41


class SideTables:
    """The tables ``schema`` creates (named ``tables``) in the SQLite file ``where``, or in the
    PostgreSQL database a ``postgresql://`` URL names."""

    def __init__(self, where: str | Path, tables: Sequence[str], schema: Sequence[str]) -> None:
        self.where = where
        self._local = threading.local()
        self.postgres = is_postgres_url(where)
        if self.postgres:
            unambiguous_url(str(where))
            self._connections = HeldConnections(str(where))
        else:
            create_private(Path(where))
            trusted_sqlite_file(Path(where))
        with self.connect() as connection:
            if self.postgres:
                with connection.cursor() as cursor:
                    check_postgres_tables(cursor, tables, redact(str(where)))
            else:
                check_sqlite_schema(connection, Path(where))
            for statement in schema:
                connection.execute(statement)

    def sql(self, statement: str) -> str:
        """``statement`` with ``?`` placeholders as the database writes them."""
        return statement.replace("?", "%s") if self.postgres else statement

    @contextmanager
    def connect(self) -> Iterator[Any]:
        """A connection that commits each statement (a SQLite connection, or psycopg's, which
        offer the same ``execute``); a database that cannot be reached or used is an
        :class:`ArenaError` naming it, its password left out."""
        if self.postgres:
            import psycopg  # the postgresql extra, as the store needs

            try:
                with self._connections.connection() as connection:
                    yield connection
            except psycopg.Error as exc:
                raise ArenaError(f"{redact(str(self.where))}: {redact(str(exc).strip(), str(self.where))}") from None
            return
        held = getattr(self._local, "held", None)
        try:
            if held is None or held[1] != os.getpid():  # one connection a thread, kept
                kept = sqlite3.connect(Path(self.where), timeout=30.0, isolation_level=None)
                kept.execute("PRAGMA synchronous = NORMAL")  # as the store's: WAL, no sync per statement
                held = self._local.held = (kept, os.getpid())
            yield held[0]
        except sqlite3.Error as exc:
            self._local.held = None
            raise ArenaError(f"{self.where}: {exc}") from None

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A connection in a transaction that no other writer of these tables runs beside
        (SQLite's ``BEGIN IMMEDIATE``; a PostgreSQL advisory lock): what reads, decides and
        writes in it sees no one else's half-done change. Rolled back on an exception."""
        with self.connect() as connection:
            if self.postgres:
                with connection.transaction():
                    connection.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
                    yield connection
                return
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
