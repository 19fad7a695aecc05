"""The statements both SQL stores run in a transaction, beside the typed rows: a parameter
mark of either driver, a look-up of many keys at once, and the tasks' and baselines' records.

:class:`~arena_core.store.typed.TypedRows` builds on these for the runs and evaluations; the
SQLite and PostgreSQL stores give the connection (or cursor), the mark, and their own words for
an upsert (:mod:`arena_core.store.bulk` says why a batch reads and writes many at once).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

import attrs
import orjson

from arena_core.model.records import Baseline, Task
from arena_core.model.serde import structure, to_dict

__all__ = ["LOOKED_UP", "Statements", "dump_record"]

T = TypeVar("T")

#: Keys looked up in one statement (SQLite takes up to 32,766 parameters, PostgreSQL 65,535).
LOOKED_UP = 500


class Statements:
    """SQL written once, with ``?`` marks, for both stores.

    :param connection: what runs the store's SQL: ``execute(sql, args)`` returning an iterable
        cursor with ``fetchone`` and ``fetchall`` (a sqlite3 connection, a psycopg cursor).
    :param mark: the driver's parameter mark.
    """

    #: How the store upserts a baseline and a baseline's version (``?`` marks), in its own words.
    _PUT_BASELINE = ""
    _PUT_BASELINE_VERSION = ""

    def __init__(self, connection: Any, mark: str = "?") -> None:
        self._c = connection
        self._mark = mark

    def _run(self, sql: str, *args: Any) -> Any:
        if self._mark == "?":
            return self._c.execute(sql, args)
        # psycopg: results in binary, which reads a task's 10,000 figures in half the time of text
        return self._c.execute(sql.replace("?", self._mark), args, binary=True)

    def _among(self, column: str, values: Sequence[str]) -> tuple[str, tuple[Any, ...]]:
        """A condition that ``column`` is one of ``values``, with its arguments: SQLite's
        ``IN (?, ?, ...)``; on PostgreSQL ``= ANY(?)`` of one array, a statement of the same text
        for any number of values, which psycopg converts once and the server plans once (a list
        of marks of each length was converted anew at each of a batch's look-ups)."""
        if self._mark == "?":
            return f"{column} IN ({', '.join('?' * len(values))})", tuple(values)
        return f"{column} = ANY(?)", (list(values),)

    def get_tasks(self, task_ids: Sequence[str]) -> dict[str, Task]:
        """The stored ones of ``task_ids``, by id (:mod:`arena_core.store.bulk`)."""
        return self._records("tasks", "id", task_ids, Task)

    def get_baselines(self, keys: Sequence[str]) -> dict[str, Baseline]:
        """The stored baselines of those of ``keys`` that have one."""
        return self._records("baselines", "key", keys, Baseline)

    def _records(self, table: str, column: str, keys: Sequence[str], cls: type[T]) -> dict[str, T]:
        """The records of ``table`` whose ``column`` is one of ``keys``, parsed as ``cls``, by
        key: read a few hundred at a time."""
        found: dict[str, T] = {}
        for start in range(0, len(keys), LOOKED_UP):
            among, args = self._among(column, keys[start : start + LOOKED_UP])
            rows = self._run(f"SELECT {column}, data FROM {table} WHERE {among}", *args).fetchall()
            found.update((key, structure(json.loads(data), cls)) for key, data in rows)
        return found

    def put_baseline(self, key: str, baseline: Baseline) -> None:
        """Store ``baseline`` as the current one for ``key`` and keep it among the key's versions
        (as version ``baseline.version``, or the next one when it has none)."""
        if baseline.version is None:
            latest = self._run("SELECT MAX(version) FROM baseline_versions WHERE key = ?", key).fetchone()[0]
            baseline = attrs.evolve(baseline, version=(latest or 0) + 1)
        data = dump_record(baseline)
        self._run(self._PUT_BASELINE, key, data)
        self._run(self._PUT_BASELINE_VERSION, key, baseline.version, data)

    def put_baselines(self, baselines: Sequence[tuple[str, Baseline]]) -> None:
        """``put_baseline`` of each ``(key, baseline)``: by one statement run for all of them when
        each names its version, else one by one (a version left out is the key's next)."""
        if any(baseline.version is None for _, baseline in baselines):
            for key, baseline in baselines:
                self.put_baseline(key, baseline)
            return
        data = [(key, baseline.version, dump_record(baseline)) for key, baseline in baselines]
        self._many(self._PUT_BASELINE, [(key, text) for key, _, text in data])
        self._many(self._PUT_BASELINE_VERSION, data)

    def _many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            self._c.executemany(sql if self._mark == "?" else sql.replace("?", self._mark), rows)


def dump_record(obj: Any) -> str:
    """A record as compact JSON: orjson's (a twelfth of the standard library's time, which was
    40 ms of a batch of 5,000 runs), unless it would lose what the standard library keeps: an
    integer past 64 bits or a string orjson refuses (it raises), a NaN or an infinity (it writes
    ``null``: a record whose JSON holds ``null`` is written by the standard library, which tells
    the two apart). Either parses to the same record."""
    data = to_dict(obj)
    try:
        text = orjson.dumps(data)
        if b"null" not in text:
            return text.decode()
    except orjson.JSONEncodeError:
        pass
    return json.dumps(data, separators=(",", ":"))
