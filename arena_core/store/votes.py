"""People's votes between runs, and the battles the service hands voters, beside the store.

**Votes** (:class:`~arena_core.model.votes.Vote`) are kept in the order they arrived (``seq``);
an id is stored once: the same vote sent again is skipped (an exact duplicate, counted), another
vote under a stored id is refused, and nothing of its batch is stored.

**Battles** are what ``GET /battles/next`` hands a voter: two runs of one task under a one-time
token; ``POST /votes`` spends the token on one vote. Every change is one transaction, so a vote
acknowledged is a vote stored (a crash or ``kill -9`` after the answer loses nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
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
)
_TABLES = ("votes", "battles")
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

    def votes(self) -> list[Vote]:
        """Every stored vote, in the order stored."""
        with self.tables.connect() as connection:
            rows = connection.execute(f"SELECT {_COLUMNS} FROM votes ORDER BY seq").fetchall()
        return [Vote(*row) for row in rows]
