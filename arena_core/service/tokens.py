"""API tokens: who may call the service, and for what.

A token is ``arena_<id>.<secret>``; only the secret's SHA-256 is kept (a 256-bit random secret
needs no slow hash), beside the token's role and, for a submitter, the tools it may post runs
for. Two roles: an **operator** defines tasks and may post, replace and move any run; a
**submitter** posts runs for its own tools only, and replaces only runs of those tools. Tokens
live beside the arena, in a table of their own: in the store's SQLite file, or in its PostgreSQL
database (where every instance of the service reads the same tokens).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attrs import frozen

from arena_core.model.errors import ArenaError
from arena_core.store.postgres import is_postgres_url

__all__ = ["ROLES", "Principal", "TokenInfo", "TokenStore"]

ROLES = ("operator", "submitter")
_TOKEN = re.compile(r"^arena_([0-9a-f]{12})\.([A-Za-z0-9_-]{20,100})$")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS service_tokens (id TEXT PRIMARY KEY, digest TEXT NOT NULL, role TEXT NOT NULL, "
    "tools TEXT NOT NULL, note TEXT NOT NULL, created TEXT NOT NULL, revoked TEXT)"
)


@frozen
class Principal:
    """Who a request comes from."""

    token_id: str
    role: str
    tools: tuple[str, ...]

    def may_post_for(self, tool: str | None) -> bool:
        return self.role == "operator" or (tool is not None and tool in self.tools)


@frozen
class TokenInfo:
    """A stored token, without its secret."""

    id: str
    role: str
    tools: tuple[str, ...]
    note: str
    created: str
    revoked: str | None


class TokenStore:
    """The tokens of the arena in the SQLite file ``where``, or in the PostgreSQL database a
    ``postgresql://`` URL names."""

    def __init__(self, where: str | Path) -> None:
        self.where = where
        self._postgres = is_postgres_url(where)
        self._mark = "%s" if self._postgres else "?"
        with self._connect() as connection:
            connection.execute(_SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[Any]:
        """A connection that commits each statement (a SQLite connection, or psycopg's, which
        offer the same ``execute``)."""
        if self._postgres:
            import psycopg  # the postgresql extra, as the store needs

            with psycopg.connect(str(self.where), autocommit=True) as connection:
                yield connection
            return
        with closing(sqlite3.connect(Path(self.where), timeout=30.0, isolation_level=None)) as connection:
            yield connection

    def _sql(self, statement: str) -> str:
        return statement.replace("?", self._mark)

    def create(self, role: str, tools: Sequence[str] = (), note: str = "") -> tuple[str, str]:
        """A new token: ``(id, token)``. The token is shown once; only its digest is kept.

        :raises ArenaError: an unknown role, or a submitter without a tool.
        """
        if role not in ROLES:
            raise ArenaError(f"role: expected one of {', '.join(ROLES)}, got {role!r}")
        if role == "submitter" and not tools:
            raise ArenaError("a submitter token names the tools it may post runs for (--tool NAME)")
        token_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        with self._connect() as connection:
            connection.execute(
                self._sql(
                    "INSERT INTO service_tokens (id, digest, role, tools, note, created) VALUES (?, ?, ?, ?, ?, ?)"
                ),
                (token_id, _digest(secret), role, json.dumps(list(tools)), note, datetime.now(UTC).isoformat()),
            )
        return token_id, f"arena_{token_id}.{secret}"

    def tokens(self) -> list[TokenInfo]:
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT id, role, tools, note, created, revoked FROM service_tokens ORDER BY created"
            ).fetchall()
        return [TokenInfo(i, r, tuple(json.loads(t)), n, c, v) for i, r, t, n, c, v in rows]

    def revoke(self, token_id: str) -> bool:
        """Revoke a token by id; whether there was one to revoke."""
        with self._connect() as connection:
            done = connection.execute(
                self._sql("UPDATE service_tokens SET revoked = ? WHERE id = ? AND revoked IS NULL"),
                (datetime.now(UTC).isoformat(), token_id),
            )
            return bool(done.rowcount == 1)

    def verify(self, token: str) -> Principal | None:
        """The principal of a valid, unrevoked token; ``None`` for anything else."""
        match = _TOKEN.match(token)
        if match is None:
            return None
        with self._connect() as connection:
            row = connection.execute(
                self._sql("SELECT digest, role, tools FROM service_tokens WHERE id = ? AND revoked IS NULL"),
                (match[1],),
            ).fetchone()
        if row is None or not hmac.compare_digest(row[0], _digest(match[2])):
            return None
        return Principal(match[1], row[1], tuple(json.loads(row[2])))


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
