"""API tokens: who may call the service, and for what.

A token is ``arena_<id>.<secret>``; only the secret's SHA-256 is kept (a 256-bit random secret
needs no slow hash), beside the token's role and, for a submitter, the tools and models it may
post runs for. The roles: an **operator** defines tasks and may post, replace and move any run;
a **submitter** posts runs for its own tools and models only (``*`` as a model: any model, a
trust the operator grants on purpose: such a token can post failures under another vendor's
model), and replaces only runs of its tools; a **reviewer** labels runs the review queue hands
it, blind to their tool, model and verdicts, and may call nothing else; a **voter** compares the
two runs a battle hands it, as blind, and may call nothing else. Tokens live beside the arena, in
a table of their own: in the store's SQLite file, or in its PostgreSQL database (where every instance of the
service reads the same tokens); a file or a table another user made is refused
(:mod:`arena_core.store.trust`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attrs import frozen

from arena_core.model.errors import ArenaError
from arena_core.store.side import SideTables

__all__ = ["ROLES", "Principal", "TokenInfo", "TokenStore"]

ROLES = ("operator", "submitter", "reviewer", "voter")
_TOKEN = re.compile(r"^arena_([0-9a-f]{12})\.([A-Za-z0-9_-]{20,100})$")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS service_tokens (id TEXT PRIMARY KEY, digest TEXT NOT NULL, role TEXT NOT NULL, "
    "tools TEXT NOT NULL, note TEXT NOT NULL, created TEXT NOT NULL, revoked TEXT, models TEXT NOT NULL DEFAULT '[]', "
    "stored_bytes BIGINT NOT NULL DEFAULT 0)"
)
#: Columns added after the first version of the table: the models a submitter may post for, and
#: the bytes of runs it has had stored (its quota's use).
_ADDED = {
    "models": "ALTER TABLE service_tokens ADD COLUMN models TEXT NOT NULL DEFAULT '[]'",
    "stored_bytes": "ALTER TABLE service_tokens ADD COLUMN stored_bytes BIGINT NOT NULL DEFAULT 0",
}
#: A submitter's model list that lets it post runs of any model.
ANY_MODEL = "*"


@frozen
class Principal:
    """Who a request comes from."""

    token_id: str
    role: str
    tools: tuple[str, ...]
    models: tuple[str, ...] = ()

    def may_post_for(self, tool: str | None) -> bool:
        return self.role == "operator" or (tool is not None and tool in self.tools)

    def may_post_model(self, model: str | None) -> bool:
        """Whether the token may post a run of ``model`` (a run without a model is its own group)."""
        return self.role == "operator" or model is None or model in self.models or ANY_MODEL in self.models


@frozen
class TokenInfo:
    """A stored token, without its secret."""

    id: str
    role: str
    tools: tuple[str, ...]
    note: str
    created: str
    revoked: str | None
    models: tuple[str, ...] = ()


class TokenStore:
    """The tokens of the arena in the SQLite file ``where``, or in the PostgreSQL database a
    ``postgresql://`` URL names."""

    def __init__(self, where: str | Path) -> None:
        self.where = where
        self._tables = SideTables(where, ["service_tokens"], [_SCHEMA])
        self._postgres = self._tables.postgres
        with self._connect() as connection:
            columns = connection.execute(self._sql("SELECT * FROM service_tokens WHERE id = ?"), ("",)).description
            present = {c[0] for c in columns}
            for name, statement in _ADDED.items():
                if name not in present:
                    connection.execute(statement)

    def _connect(self) -> AbstractContextManager[Any]:
        return self._tables.connect()

    def _sql(self, statement: str) -> str:
        return self._tables.sql(statement)

    def create(
        self, role: str, tools: Sequence[str] = (), note: str = "", models: Sequence[str] = ()
    ) -> tuple[str, str]:
        """A new token: ``(id, token)``. The token is shown once; only its digest is kept.

        :param models: the models a submitter may post runs of (``*``: any).
        :raises ArenaError: an unknown role, or a submitter without a tool or a model.
        """
        if role not in ROLES:
            raise ArenaError(f"role: expected one of {', '.join(ROLES)}, got {role!r}")
        if role == "submitter" and not tools:
            raise ArenaError("a submitter token names the tools it may post runs for (--tool NAME)")
        if role == "submitter" and not models:
            raise ArenaError(
                "a submitter token names the models it may post runs of (--model NAME; --model '*' lets it post "
                "any model's runs, and so pull down another vendor's model row)"
            )
        token_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        with self._connect() as connection:
            connection.execute(
                self._sql(
                    "INSERT INTO service_tokens (id, digest, role, tools, note, created, models) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)"
                ),
                (token_id, _digest(secret), role, json.dumps(list(tools)), note, datetime.now(UTC).isoformat(),
                 json.dumps(list(models))),
            )  # fmt: skip
        return token_id, f"arena_{token_id}.{secret}"

    def tokens(self) -> list[TokenInfo]:
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT id, role, tools, note, created, revoked, models FROM service_tokens ORDER BY created"
            ).fetchall()
        return [TokenInfo(i, r, tuple(json.loads(t)), n, c, v, tuple(json.loads(m))) for i, r, t, n, c, v, m in rows]

    def revoke(self, token_id: str) -> bool:
        """Revoke a token by id; whether there was one to revoke."""
        with self._connect() as connection:
            done = connection.execute(
                self._sql("UPDATE service_tokens SET revoked = ? WHERE id = ? AND revoked IS NULL"),
                (datetime.now(UTC).isoformat(), token_id),
            )
            return bool(done.rowcount == 1)

    def charge(self, token_id: str, size: int, quota: int) -> bool:
        """Count ``size`` bytes against the token's quota of stored runs; ``False`` (nothing
        counted) when that would pass ``quota`` bytes (0: no quota)."""
        with self._connect() as connection:
            done = connection.execute(
                self._sql("UPDATE service_tokens SET stored_bytes = stored_bytes + ? WHERE id = ? AND (? = 0 OR "
                          "stored_bytes + ? <= ?)"),
                (size, token_id, quota, size, quota),
            )  # fmt: skip
            return bool(done.rowcount == 1)

    def refund(self, token_id: str, size: int) -> None:
        """Give back what :meth:`charge` counted for a run that was not stored."""
        with self._connect() as connection:
            connection.execute(
                self._sql("UPDATE service_tokens SET stored_bytes = MAX(stored_bytes - ?, 0) WHERE id = ?")
                if not self._postgres
                else "UPDATE service_tokens SET stored_bytes = GREATEST(stored_bytes - %s, 0) WHERE id = %s",
                (size, token_id),
            )

    def verify(self, token: str) -> Principal | None:
        """The principal of a valid, unrevoked token; ``None`` for anything else."""
        match = _TOKEN.match(token)
        if match is None:
            return None
        with self._connect() as connection:
            row = connection.execute(
                self._sql("SELECT digest, role, tools, models FROM service_tokens WHERE id = ? AND revoked IS NULL"),
                (match[1],),
            ).fetchone()
        if row is None or not hmac.compare_digest(row[0], _digest(match[2])):
            return None
        return Principal(match[1], row[1], tuple(json.loads(row[2])), tuple(json.loads(row[3])))


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
