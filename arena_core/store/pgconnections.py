"""PostgreSQL connections kept between uses, one a thread, as the SQLite store keeps its own.

Connecting took a service's post about a fifth of its time (a process started on the server,
authentication, settings), and every post connected twice or more: its token, its checks,
its batch. A connection is kept per thread and per process: a forked child connects anew and
never touches the one it inherited (freeing it would end the parent's session). A use inside
another use of the same thread, while that one is in a transaction, gets a connection of its
own, closed after it; so does a use after a connection failed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["HeldConnections"]


class HeldConnections:
    """Autocommit connections to ``url`` (transactions are opened explicitly, with
    ``connection.transaction()``).

    :param timeout: seconds to wait to connect.
    """

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        import psycopg  # the postgresql extra

        self._psycopg = psycopg
        self.url = url
        self.timeout = timeout
        self._local = threading.local()

    def _connect(self) -> Any:
        return self._psycopg.connect(self.url, autocommit=True, connect_timeout=max(1, int(self.timeout)))

    def holds(self) -> bool:
        """Whether this thread keeps an open connection, which its next use takes."""
        connection = self._local.__dict__.get("held", {}).get(os.getpid())
        return connection is not None and not connection.closed

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """This thread's connection, or one of its own as the module says; a psycopg error
        raised through it closes it, so the next use connects anew."""
        held: dict[int, Any] = self._local.__dict__.setdefault("held", {})
        pid = os.getpid()
        connection, own = held.get(pid), False
        if connection is None or connection.closed:
            connection = held[pid] = self._connect()
        elif connection.info.transaction_status != self._psycopg.pq.TransactionStatus.IDLE:
            connection, own = self._connect(), True
        try:
            yield connection
        except self._psycopg.Error:
            own = True
            raise
        finally:
            if own:
                connection.close()
