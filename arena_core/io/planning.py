"""How a Parquet input is cut into partitions of whole tasks for :mod:`arena_core.streaming`: the
runs of each task per row group are counted from the ``task_id`` column alone, and tasks in the
order they first appear are cut into partitions of about equal size, each reading the row groups
its tasks span (or, when tasks are spread over the row groups, dealt to spill files)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from attrs import frozen

from arena_core.io.pieces import Piece, Source, by_file

__all__ = ["Part", "plan", "task_counts"]


@frozen
class Part:
    """One partition: consecutive row groups of the input, or a spill file."""

    rows: int
    tasks: tuple[str | None, ...]
    pieces: tuple[Piece, ...] = ()
    filtered: bool = False
    """Its row groups hold other partitions' tasks too: only its tasks' rows are kept."""
    spilled: str | None = None


def plan(
    source: Source, counts: Sequence[Mapping[str | None, int]], limit: int, lanes: int = 1
) -> tuple[list[Part], dict[str | None, int] | None]:
    """The partitions of whole tasks, of at most ``limit`` runs unless one task has more; and,
    when the tasks are spread over the row groups, the partition of each task (the rows are
    then spilled).

    Tasks are taken in the order they first appear and cut into partitions of about equal runs,
    as many as a multiple of the ``lanes`` that score them at once, so that no lane is left
    scoring the last partition alone; a partition reads the row groups its tasks span, keeping
    its tasks' rows (a row group at a cut is read by both sides). When that would read the input
    more than twice over (tasks in no order), the rows are dealt to partitions instead.

    :param counts: per row group, its runs per task.
    """
    first: dict[str | None, int] = {}
    last: dict[str | None, int] = {}
    rows_of: dict[str | None, int] = {}
    for index, found in enumerate(counts):
        for task, n in found.items():
            first.setdefault(task, index)
            last[task] = index
            rows_of[task] = rows_of.get(task, 0) + n
    parts = []
    for tasks in _cut(list(first), rows_of, limit, lanes):  # in order of first appearance
        span = range(min(first[t] for t in tasks), max(last[t] for t in tasks) + 1)
        rows = sum(rows_of[t] for t in tasks)
        read = sum(source.pieces[i].rows for i in span)
        parts.append(Part(rows, tuple(tasks), tuple(source.pieces[i] for i in span), filtered=read > rows))
    if sum(sum(p.rows for p in part.pieces) for part in parts) <= 2 * source.rows:
        return parts, None
    bins: list[list[str | None]] = [[] for _ in range(_multiple(-(-source.rows // limit), lanes))]
    loads = [0] * len(bins)
    for task, n in sorted(rows_of.items(), key=lambda item: -item[1]):
        k = loads.index(min(loads))
        bins[k].append(task)
        loads[k] += n
    partition_of = {t: k for k, tasks in enumerate(bins) for t in tasks}
    return [Part(loads[k], tuple(bins[k])) for k in range(len(bins)) if loads[k]], partition_of


def _cut(order: list[str | None], rows_of: Mapping[str | None, int], limit: int, lanes: int) -> list[list[str | None]]:
    """The tasks, in order, cut into runs of about equal size: each task goes to the partition
    its middle run falls in. The fewest partitions (a multiple of ``lanes``) that keep each within
    ``limit`` are taken; when tasks are too uneven for that, tasks are gathered until the next
    would pass the limit."""
    total = sum(rows_of.values())
    least = _multiple(-(-total // limit), lanes)
    for count in range(least, least + 4 * lanes, lanes):
        groups: list[list[str | None]] = [[] for _ in range(count)]
        loads = [0] * count
        start = 0
        for task in order:
            k = min(count - 1, int((start + rows_of[task] / 2) * count // total))
            groups[k].append(task)
            loads[k] += rows_of[task]
            start += rows_of[task]
        if all(load <= limit or len(g) == 1 for g, load in zip(groups, loads, strict=True)):
            return [g for g in groups if g]
    gathered: list[list[str | None]] = []
    load = 0
    for task in order:
        if gathered and load + rows_of[task] <= limit:
            gathered[-1].append(task)
            load += rows_of[task]
        else:
            gathered.append([task])
            load = rows_of[task]
    return gathered


def _multiple(count: int, lanes: int) -> int:
    """``count`` (at least one) rounded up to a multiple of ``lanes``."""
    return -(-max(1, count) // lanes) * lanes


def task_counts(source: Source) -> list[dict[str | None, int]]:
    """Per row group, its runs per task (``None``: runs without a task): each file's ``task_id``
    column read once, coded as its dictionary pages hold it, and each row group's codes counted."""
    if "task_id" not in source.schema.names:
        return [{None: piece.rows} for piece in source.pieces]
    out: list[dict[str | None, int]] = []
    for _, run in by_file(source.pieces):
        codes, names = source.coded(run, "task_id")
        start = 0
        for piece in run:
            counted = np.bincount(codes[start : start + piece.rows], minlength=len(names))
            out.append({names[k]: int(counted[k]) for k in np.flatnonzero(counted).tolist()})
            start += piece.rows
    return out
