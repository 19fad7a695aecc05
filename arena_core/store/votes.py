"""People's votes between runs, and the battles the service hands voters, beside the store.

**Votes** (:class:`~arena_core.model.votes.Vote`) are kept in the order they arrived (``seq``);
an id is stored once: the same vote sent again is skipped (an exact duplicate, counted), another
vote under a stored id is refused, and nothing of its batch is stored.

**Battles** are what ``GET /battles/next`` hands a voter: two runs of one task under a one-time
token (stored as its digest: the table never holds a usable token); ``POST /votes`` spends the
token on one vote. Every change is one transaction, so a vote acknowledged is a vote stored (a
crash or ``kill -9`` after the answer loses nothing).

**Learned profiles** are the weight profiles ``POST /weights/fit`` learned, numbered versions of
a profile file, kept: a board names the version it was scored with.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from arena_core.model.errors import ArenaError
from arena_core.model.votes import Vote
from arena_core.store.side import SideTables

__all__ = ["VoteStore"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS votes (seq BIGINT NOT NULL, id TEXT PRIMARY KEY, task_id TEXT NOT NULL, "
    "a TEXT NOT NULL, b TEXT NOT NULL, winner TEXT NOT NULL, voter TEXT NOT NULL, at TEXT)",
    "CREATE TABLE IF NOT EXISTS battles (token TEXT PRIMARY KEY, voter TEXT NOT NULL, task_id TEXT NOT NULL, "
    "a TEXT NOT NULL, b TEXT NOT NULL, handed TEXT NOT NULL, vote TEXT)",
    "CREATE TABLE IF NOT EXISTS learned_profiles (version INTEGER PRIMARY KEY, created TEXT NOT NULL, "
    "votes INTEGER NOT NULL, profile TEXT NOT NULL)",
)
_TABLES = ("votes", "battles", "learned_profiles")
_COLUMNS = "id, task_id, a, b, winner, voter, at"


class VoteStore:
    """Votes and battles in the SQLite file ``where``, or the PostgreSQL database a
    ``postgresql://`` URL names (see the module's note)."""

    def __init__(self, where: str | Path) -> None:
        self.where = where
        self.tables = SideTables(where, _TABLES, _SCHEMA)

    def add(self, votes: Sequence[Vote]) -> tuple[int, int]:
        """Store ``votes``, all or none: ``(stored, skipped as exact duplicates)``.

        :raises ArenaError: an id stored already for another vote (naming it), nothing stored.
        """
        stored = skipped = 0
        sql = self.tables.sql
        with self.tables.transaction() as connection:
            seq = connection.execute("SELECT COALESCE(MAX(seq), 0) FROM votes").fetchone()[0]
            for vote in votes:
                found = connection.execute(sql(f"SELECT {_COLUMNS} FROM votes WHERE id = ?"), (vote.id,)).fetchone()
                if found is not None:
                    if Vote(*found) != vote:
                        raise ArenaError(f"votes: id {vote.id!r} is stored already for another vote; nothing stored")
                    skipped += 1
                    continue
                seq += 1
                connection.execute(
                    sql(f"INSERT INTO votes (seq, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                    (seq, vote.id, vote.task_id, vote.a, vote.b, vote.winner, vote.voter, vote.at),
                )
                stored += 1
        return stored, skipped

    def refuse_stored(self, votes: Sequence[Vote]) -> None:
        """:raises ArenaError: naming a vote whose id is stored already for another vote."""
        with self.tables.connect() as connection:
            for vote in votes:
                found = connection.execute(
                    self.tables.sql(f"SELECT {_COLUMNS} FROM votes WHERE id = ?"), (vote.id,)
                ).fetchone()
                if found is not None and Vote(*found) != vote:
                    raise ArenaError(f"votes: id {vote.id!r} is stored already for another vote; nothing stored")

    def count(self) -> int:
        """How many votes are stored."""
        with self.tables.connect() as connection:
            return int(connection.execute("SELECT COUNT(*) FROM votes").fetchone()[0])

    def votes(self) -> list[Vote]:
        """Every stored vote, in the order stored."""
        with self.tables.connect() as connection:
            rows = connection.execute(f"SELECT {_COLUMNS} FROM votes ORDER BY seq").fetchall()
        return [Vote(*row) for row in rows]

    def hand(self, voter: str, task_id: str, a: str, b: str) -> str:
        """A one-time battle token for ``voter``: runs ``a`` and ``b`` of ``task_id``."""
        token = secrets.token_urlsafe(18)
        with self.tables.transaction() as connection:
            connection.execute(
                self.tables.sql("INSERT INTO battles (token, voter, task_id, a, b, handed) VALUES (?, ?, ?, ?, ?, ?)"),
                (_digest(token), voter, task_id, a, b, datetime.now(UTC).isoformat()),
            )
        return token

    def cast(self, token: str, voter: str, winner: str) -> Vote:
        """``voter``'s vote on the battle of ``token``, stored with the battle spent, in one
        transaction.

        :raises LookupError: no such battle. :raises PermissionError: handed to another voter.
        :raises FileExistsError: voted on already.
        """
        sql = self.tables.sql
        digest = _digest(token)
        with self.tables.transaction() as connection:
            row = connection.execute(
                sql("SELECT voter, task_id, a, b, vote FROM battles WHERE token = ?"), (digest,)
            ).fetchone()
            if row is None:
                raise LookupError(token)
            if row[0] != voter:
                raise PermissionError(token)
            if row[4] is not None:
                raise FileExistsError(token)
            vote = Vote(f"battle-{digest[:20]}", row[1], row[2], row[3], winner, voter, datetime.now(UTC).isoformat())
            seq = connection.execute("SELECT COALESCE(MAX(seq), 0) FROM votes").fetchone()[0] + 1
            connection.execute(
                sql(f"INSERT INTO votes (seq, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                (seq, vote.id, vote.task_id, vote.a, vote.b, vote.winner, vote.voter, vote.at),
            )
            connection.execute(sql("UPDATE battles SET vote = ? WHERE token = ?"), (vote.id, digest))
        return vote

    def keep_profile(self, profile: str, votes: int) -> int:
        """Store a learned profile file as the next version; its number."""
        with self.tables.transaction() as connection:
            version = connection.execute("SELECT COALESCE(MAX(version), 0) FROM learned_profiles").fetchone()[0] + 1
            connection.execute(
                self.tables.sql("INSERT INTO learned_profiles VALUES (?, ?, ?, ?)"),
                (version, datetime.now(UTC).isoformat(), votes, profile),
            )
        return int(version)

    def profiles(self) -> list[tuple[int, str, int]]:
        """``(version, created, votes)`` of every learned profile, oldest first."""
        with self.tables.connect() as connection:
            rows = connection.execute(
                "SELECT version, created, votes FROM learned_profiles ORDER BY version"
            ).fetchall()
        return [(int(v), str(c), int(n)) for v, c, n in rows]

    def profile(self, version: int) -> str | None:
        """The profile file of ``version``, ``None`` when there is none."""
        with self.tables.connect() as connection:
            row = connection.execute(
                self.tables.sql("SELECT profile FROM learned_profiles WHERE version = ?"), (version,)
            ).fetchone()
        return None if row is None else str(row[0])


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
