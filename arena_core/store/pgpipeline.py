"""A PostgreSQL write transaction in pipeline mode: its writes travel while the batch computes.

A batch's transaction writes its runs (one ``executemany``), then computes its evaluations,
then writes them. Waiting for each write before computing on made the server's time and the
client's add up: at 1,000,000 stored runs a batch of 5,000 spent about 0.2 s waiting for the
runs' upsert alone. In psycopg's pipeline mode a statement is sent and its result read only
when it is wanted, so the server stores the runs while the client scores and ranks.

One thing changes in pipeline mode: a cursor's result is whichever of its statements' results
arrived last, and reading rows does not wait when one has (an earlier ``INSERT``'s result, say:
"the last operation didn't produce records"). :class:`StatementCursor` therefore runs each
statement on a cursor of its own, so reading a statement's rows waits for that statement, as
it does outside a pipeline. Errors are unchanged in kind: a statement that fails is reported
when its result is read or at the commit, and the whole transaction is rolled back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["StatementCursor"]


class StatementCursor:
    """What a transaction's statements run on, on one psycopg connection in pipeline mode: the
    ``execute``, ``executemany``, ``fetchone`` and ``fetchall`` of a cursor, each statement on a
    cursor of its own, rows read from the last statement executed."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection
        self._last: Any = None

    def execute(self, sql: str, args: Sequence[Any] | None = None, **options: Any) -> Any:
        """Send ``sql`` (``options``: psycopg's, ``binary=True`` say); the cursor returned (and
        this object) reads its rows, waiting for them."""
        self._last = self._connection.cursor()
        return self._last.execute(sql, args, **options)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Send ``sql`` once for each of ``rows``, without waiting for the server to run them."""
        self._last = self._connection.cursor()
        self._last.executemany(sql, rows)

    def fetchone(self) -> Any:
        return self._last.fetchone()

    def fetchall(self) -> list[Any]:
        rows: list[Any] = self._last.fetchall()
        return rows
