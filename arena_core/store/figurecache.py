"""Each task's stored figures and scores, kept in memory between a store's write transactions.

Every batch reads the figures of the tasks it touches (their baselines are computed from all of
a task's runs), and a batch of more than a few runs of a task reads the task's scores to rank
them: a run posted to a task of 10,000 runs read 10,000 rows, most of its time. A store's writer
keeps those columns instead, and a write transaction reads them from memory while they are known
to be what the database holds:

- the store changed only through this cache since it was filled: the store counts its write
  transactions (SQLite: ``arena_writes``; PostgreSQL: ``arena_schema.writes``), and a write
  transaction reads the count once it holds the write lock; another writer's transaction (another
  process, another store object) moved it, and everything is forgotten. The side tables' writes
  (a token's quota charged at every post) do not count: SQLite's ``PRAGMA data_version``, which
  they change, would have emptied the cache at every post;
- a transaction's own writes are applied at its commit, and forgotten with its rollback: new runs
  and evaluations of a task are appended to its columns, as the database orders them (by the
  order they were stored), and a tool's provisional marks follow ``mark_provisional``; a run or
  evaluation stored again or moved to another task makes both tasks be read anew, since the
  database keeps its first place;
- a task's figures are kept with their order once a batch has read them in order (its
  baselines' medians: :meth:`Columns.order`), and a batch's runs are added to it, so the next
  batch does not sort the task's history again;
- a task's figures are the start of longer arrays (:class:`KeptColumns`), and a batch's runs
  are written after them, so a batch does not copy the task's history.

At most :data:`MAX_ROWS` rows are kept (about 650 MB), the tasks kept longest ago forgotten
first. The columns handed out are read-only, so a reader cannot change them for the
next transaction.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from arena_core.engine.columns import Columns
from arena_core.engine.ordered import merged_in
from arena_core.engine.sequences import Filled, Grown
from arena_core.store.standings import Scores

__all__ = ["MAX_ROWS", "FigureCache", "KeptColumns", "PendingFigures", "figure_columns", "grown_columns", "scores_of"]

#: The most rows a cache keeps, of figures and scores together (about 160 bytes a row: 40 of
#: them the figures' order, about 10 their room to grow, up to half again their length); past
#: them, the tasks kept longest ago are forgotten first.
MAX_ROWS = 4_000_000


def figure_columns(task_id: str, rows: Sequence[Sequence[Any]], names: Sequence[str]) -> Columns:
    """The columns of a task's rows ``(id, tool, model, *figures)``, each figure named by
    ``names`` (a missing one is NaN), with read-only arrays and names that grow in place
    (:func:`grown_columns`)."""
    ids, tools, models, *figures = zip(*rows, strict=True) if rows else ([],) * (3 + len(names))
    numeric = {name: np.array(values, dtype=float) for name, values in zip(names, figures, strict=True)}  # NULL: NaN
    return _read_only(
        KeptColumns(
            Grown(ids),
            Grown([task_id] * len(rows)),
            numeric,
            tools=Grown(map(_shared, tools)),
            models=Grown(map(_shared, models)),
            files_created=Grown([()] * len(rows)),
        )
    )


class KeptColumns(Columns):
    """A task's columns as a store keeps them: each figure the start of a longer array
    (``rooms``), so a batch's runs are written after it rather than the task's history copied
    (:func:`grown_columns`)."""

    def __init__(self, *args: Any, rooms: Mapping[str, Filled] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rooms: Mapping[str, Filled] = rooms or {}


def _appended(known: np.ndarray, more: np.ndarray, room: Filled | None) -> tuple[np.ndarray, Filled]:
    """``known`` then ``more``, read-only, and the room it is the start of, grown as a
    :class:`Grown`'s items are (:meth:`Filled.plus`): written after ``known`` in its room when
    nothing was written there since, else copied. A batch's 50 runs of a task of 10,000 were 5
    copies of the task's figures; a state grown from a shorter one (after a rollback) copies,
    so no array handed out changes. ``known`` read from the database has no room yet: it is
    copied into an array with room at the first growth."""
    room = (room or Filled(known, len(known))).plus(len(known), more, np.empty)
    grown = room.array[: room.filled]
    grown.flags.writeable = False
    return grown, room


def grown_columns(known: Columns, more: Columns, names: Sequence[str]) -> Columns:
    """``known``'s rows, then ``more``'s: the figures ``names`` written after ``known``'s in
    their rooms (:func:`_appended`; the figures a store does not keep stay unmeasured, not
    copied: a task of 10,000 runs copied 13 arrays a batch where 5 hold anything), the names
    appended to ``known``'s in place (:class:`~arena_core.engine.sequences.Grown`), so a batch
    does not copy a task's history of names, spread over memory as a long-lived one is."""

    def plus(name: str, shared: bool = False) -> Grown[Any]:
        added = getattr(more, name)
        return _grown(getattr(known, name)).plus(map(_shared, added) if shared else added)

    rooms = known.rooms if isinstance(known, KeptColumns) else {}
    appended = {f: _appended(known.numeric[f], more.numeric[f], rooms.get(f)) for f in names}
    numeric = {f: values for f, (values, _) in appended.items()}
    grown = KeptColumns(
        plus("ids"),
        plus("task_ids"),
        numeric,
        tools=plus("tools", shared=True),
        models=plus("models", shared=True),
        success=np.concatenate([known.success, more.success]),
        files_created=plus("files_created"),
        rooms={f: room for f, (_, room) in appended.items()},
    )
    for f, order in known.orders.items():  # the figures in order so far stay in order
        if f in numeric:
            grown.orders[f] = order.plus(more.numeric[f])
    return _read_only(grown)


def _shared(name: str | None) -> str | None:
    """One object for each tool or model name a cache holds (``sys.intern``): a task's runs read
    their tool from a few places in memory, not one per run."""
    return None if name is None else sys.intern(name)


class FigureCache:
    """A store's kept columns, by kind (``figures``: a task's runs' figures, ``scores``: its
    evaluations' scores) and task, and the store's version they are valid for."""

    def __init__(self) -> None:
        self.tasks: dict[tuple[str, str], Columns | Scores] = {}  # least recently kept first
        self._rows = 0
        self._version: Hashable = None
        self._epoch = 0  # a transaction begun before the cache last started over keeps nothing
        self.lock = threading.Lock()

    def begin(self, version: Hashable) -> PendingFigures:
        """A write transaction's view, once it holds the store's write lock: the kept columns
        when the store is at ``version`` still (nothing else wrote it since), else none."""
        with self.lock:
            steady = version == self._version
            if not steady:
                self.tasks, self._rows = {}, 0
                self._version = version
                self._epoch += 1
            return PendingFigures(dict(self.tasks), self._epoch, steady, MAX_ROWS - self._rows)

    def commit(self, pending: PendingFigures, version: Hashable) -> None:
        """Keep what a committed transaction read and wrote, the store now at ``version``,
        unless the cache started over since it began (another writer began after it committed)."""
        with self.lock:
            if pending.epoch != self._epoch:
                return
            self._version = version
            for key in [*pending.dirty, *pending.read]:
                gone = self.tasks.pop(key, None)
                self._rows -= 0 if gone is None else len(gone.ids)
            for key, kept in pending.read.items():
                self.tasks[key] = kept
                self._rows += len(kept.ids)
            while self._rows > MAX_ROWS:
                self._rows -= len(self.tasks.pop(next(iter(self.tasks))).ids)


class PendingFigures:
    """One write transaction's columns: those kept, those it read or wrote, those it made unknown."""

    def __init__(
        self, kept: dict[tuple[str, str], Columns | Scores], epoch: int, steady: bool = True, room: int = MAX_ROWS
    ) -> None:
        self.kept = kept
        self.epoch = epoch
        self.steady = steady
        """Nothing else wrote the store since this cache's last transaction: what it reads now
        is likely to be read again from memory (another writer empties the cache each time)."""
        self.room = room
        """Rows the cache could still keep when the transaction began, without forgetting any."""
        self.read: dict[tuple[str, str], Columns | Scores] = {}
        self.dirty: set[tuple[str, str]] = set()

    def worth_keeping(self, task_id: str) -> bool:
        """Whether reading the task's scores to keep pays: the cache is this store's only
        writer's, and has room for them (about as many as the task's figures) without
        forgetting what it holds; a store too large to keep both keeps its figures."""
        figures = self.get("figures", task_id)
        return self.steady and (len(figures.ids) if isinstance(figures, Columns) else 0) <= self.room

    def get(self, kind: str, task_id: str) -> Columns | Scores | None:
        """The task's columns of ``kind``, if known here."""
        key = (kind, task_id)
        if key in self.dirty:
            return None
        return self.read.get(key, self.kept.get(key))

    def put(self, kind: str, task_id: str, columns: Columns | Scores) -> None:
        """Columns read from the database in this transaction (after its own writes so far)."""
        if (kind, task_id) not in self.dirty:
            self.read[kind, task_id] = columns

    def _forget(self, kind: str, task_ids: Iterable[str]) -> None:
        for task_id in task_ids:
            self.dirty.add((kind, task_id))
            self.read.pop((kind, task_id), None)

    def wrote(
        self, rows: Mapping[str, Sequence[Sequence[Any]]], moved: Mapping[str, str], names: Sequence[str]
    ) -> None:
        """Runs written, their rows by task (``(id, tool, model, *figures)``); ``moved``: the
        task each of them was stored under before, for those already stored."""

        def appended(task_id: str, known: Any, written: Sequence[Sequence[Any]]) -> Columns | None:
            if not isinstance(known, Columns):
                return None
            return grown_columns(known, figure_columns(task_id, written, names), names)

        self._added("figures", rows, moved, appended)

    def scored(self, rows: Mapping[str, Sequence[Sequence[Any]]], moved: Mapping[str, str]) -> None:
        """Evaluations written, their rows by task (``(id, overall, tool, provisional)``);
        ``moved``: the task each of them was stored under before, for those already stored."""

        def appended(task_id: str, known: Any, written: Sequence[Sequence[Any]]) -> Scores | None:
            if not isinstance(known, Scores):
                return None
            ids, overall, tools, provisional = zip(*written, strict=True)
            added = np.array(overall, dtype=float)
            by_tool = dict(known.by_tool)
            for tool, mark in zip(tools, provisional, strict=True):
                n, m = by_tool.get(tool, (0, 0))
                by_tool[tool] = (n + 1, m + bool(mark))
            return scores_of(
                _grown(known.ids).plus(ids),
                np.concatenate([known.overall, added]),
                _grown(known.tools).plus(map(_shared, tools)),
                np.concatenate([known.provisional, np.array(provisional, dtype=bool)]),
                _merged(known.ordered, added),
                by_tool,
            )

        self._added("scores", rows, moved, appended)

    def _added(
        self,
        kind: str,
        rows: Mapping[str, Sequence[Sequence[Any]]],
        moved: Mapping[str, str],
        appended: Callable[[str, Any, Sequence[Sequence[Any]]], Columns | Scores | None],
    ) -> None:
        """Rows of ``kind`` written, by task: appended to what is known of the task, or, for rows
        stored before (``moved``: their earlier task), both tasks read anew, since the database
        keeps a row stored again in its first place."""
        for task_id, written in rows.items():
            before = [moved[r[0]] for r in written if r[0] in moved]
            if before:
                self._forget(kind, [task_id, *before])
                continue
            grown = appended(task_id, self.get(kind, task_id), written)
            if grown is not None:
                self.read[kind, task_id] = grown

    def marked(self, task_id: str, tool: str | None, provisional: bool) -> None:
        """A tool's evaluations of a task marked provisional, or not."""
        known = self.get("scores", task_id)
        if isinstance(known, Scores):
            mine = np.fromiter((t == tool for t in known.tools), dtype=bool, count=len(known.ids))
            marks = np.where(mine, provisional, known.provisional)
            by_tool = dict(known.by_tool)
            if tool in by_tool:
                n, _ = by_tool[tool]
                by_tool[tool] = (n, n if provisional else 0)
            self.read["scores", task_id] = scores_of(
                known.ids, known.overall, known.tools, marks, known.ordered, by_tool
            )


def scores_of(
    ids: Sequence[str],
    overall: np.ndarray,
    tools: Sequence[str | None],
    provisional: np.ndarray,
    ordered: np.ndarray | None = None,
    by_tool: Mapping[str | None, tuple[int, int]] | None = None,
) -> Scores:
    """:class:`Scores` with read-only arrays, and names that grow in place (see :func:`grown_columns`);
    ``ordered`` and ``by_tool`` carried over from the scores they grew from (else worked out)."""
    names = tools if isinstance(tools, Grown) else Grown(map(_shared, tools))
    if ordered is None or by_tool is None:
        found = Scores(_grown(ids), overall, names, provisional)
    else:
        found = Scores(_grown(ids), overall, names, provisional, ordered, by_tool)
    for values in (overall, provisional, found.ordered):
        values.flags.writeable = False
    return found


def _merged(ordered: np.ndarray, added: np.ndarray) -> np.ndarray:
    """The sorted ``ordered`` with ``added`` in their places (:func:`merged_in`): a copy of the
    task's scores, not a sort of them."""
    return merged_in(ordered, np.sort(added))


def _grown(names: Sequence[Any]) -> Grown[Any]:
    """``names`` as a sequence that grows in place (a copy, unless it is one already)."""
    return names if isinstance(names, Grown) else Grown(names)


def _read_only(columns: Columns) -> Columns:
    for values in columns.numeric.values():
        values.flags.writeable = False
    return columns
