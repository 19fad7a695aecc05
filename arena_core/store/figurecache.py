"""Each task's stored figures, kept in memory between a store's write transactions.

Every batch reads the figures of the tasks it touches (their baselines are computed from all of
a task's runs), so a run posted to a task of 10,000 runs read 10,000 rows, most of its time. A
store's writer keeps those columns instead, and a write transaction reads them from memory while
they are known to be what the file holds:

- the store changed only through this cache since it was filled, as the store's version says
  once the transaction holds the write lock (SQLite: its connection and ``PRAGMA data_version``,
  which changes when another connection commits; PostgreSQL: ``arena_schema.writes``, which
  every write transaction counts): otherwise everything is forgotten;
- a transaction's own writes are applied at its commit, and forgotten with its rollback: new runs
  of a task are appended to its columns, as the file orders them (by the order they were stored);
  a run stored again or moved to another task makes both tasks be read from the file again, since
  the file keeps its first place.

At most :data:`MAX_ROWS` rows are kept (about 150 MB); past them the cache starts over. The
columns handed out are read-only, so a reader cannot change them for the next transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from arena_core.engine.columns import Columns

__all__ = ["MAX_ROWS", "FigureCache", "PendingFigures", "figure_columns"]

#: The most rows a cache keeps.
MAX_ROWS = 2_000_000


def figure_columns(task_id: str, rows: Sequence[Sequence[Any]], names: Sequence[str]) -> Columns:
    """The columns of a task's rows ``(id, tool, model, *figures)``, each figure named by
    ``names`` (a missing one is NaN), with read-only arrays."""
    ids, tools, models, *figures = zip(*rows, strict=True) if rows else ([],) * (3 + len(names))
    numeric = {name: np.array(values, dtype=float) for name, values in zip(names, figures, strict=True)}  # NULL: NaN
    return _read_only(Columns(list(ids), [task_id] * len(rows), numeric, tools=list(tools), models=list(models)))


class FigureCache:
    """A store's kept columns, by task, and the store's version they are valid for."""

    def __init__(self) -> None:
        self.tasks: dict[str, Columns] = {}
        self._version: Hashable = None
        self._epoch = 0  # a transaction begun before the cache last started over keeps nothing
        self.lock = threading.Lock()

    def begin(self, version: Hashable) -> PendingFigures:
        """A write transaction's view, once it holds the store's write lock: the kept columns
        when the store is at ``version`` still (nothing else wrote it since), else none."""
        with self.lock:
            if version != self._version:
                self.tasks = {}
                self._version = version
                self._epoch += 1
            return PendingFigures(dict(self.tasks), self._epoch)

    def commit(self, pending: PendingFigures, version: Hashable) -> None:
        """Keep what a committed transaction read and wrote, the store now at ``version``,
        unless the cache started over since it began (another writer began after it committed)."""
        with self.lock:
            if pending.epoch != self._epoch:
                return
            self._version = version
            for task_id in pending.dirty:
                self.tasks.pop(task_id, None)
            self.tasks.update(pending.read)
            if sum(c.size for c in self.tasks.values()) > MAX_ROWS:
                self.tasks = {}


class PendingFigures:
    """One write transaction's columns: those kept, those it read, the tasks it made unknown."""

    def __init__(self, kept: dict[str, Columns], epoch: int) -> None:
        self.kept = kept
        self.epoch = epoch
        self.read: dict[str, Columns] = {}
        self.dirty: set[str] = set()

    def get(self, task_id: str) -> Columns | None:
        """The task's columns, if known here."""
        if task_id in self.dirty:
            return None
        return self.read.get(task_id, self.kept.get(task_id))

    def put(self, task_id: str, columns: Columns) -> None:
        """Columns read from the file in this transaction (after its own writes so far)."""
        if task_id not in self.dirty:
            self.read[task_id] = columns

    def wrote(
        self, rows: Mapping[str, Sequence[Sequence[Any]]], moved: Mapping[str, str], names: Sequence[str]
    ) -> None:
        """Runs written, their rows by task (``(id, tool, model, *figures)``); ``moved``: the
        task each of them was stored under before, for those already stored."""
        for task_id, written in rows.items():
            before = [moved[r[0]] for r in written if r[0] in moved]
            if before:  # stored again, or moved: the file keeps its place; read it anew
                self.dirty.update([task_id, *before])
                self.read.pop(task_id, None)
                for other in before:
                    self.read.pop(other, None)
                continue
            known = self.get(task_id)
            if known is not None:
                self.read[task_id] = _read_only(Columns.concat([known, figure_columns(task_id, written, names)]))


def _read_only(columns: Columns) -> Columns:
    for values in columns.numeric.values():
        values.flags.writeable = False
    return columns
