"""How a Parquet input is cut into partitions of whole tasks for :mod:`arena_core.streaming`: the
runs of each task per row group are counted from the ``task_id`` column alone, and tasks in the
order they first appear are cut into partitions of about equal size, each reading the row groups
its tasks span (or, when tasks are spread over the row groups, dealt to spill files).

When each task's runs are consecutive in the input (an input sorted or clustered by task), a
partition is a stretch of rows: it reads its first row group from the start, the last one only
as far as its rows go, and keeps its rows by position."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from itertools import pairwise
from typing import TypeVar

import numpy as np
from attrs import frozen

from arena_core.io.pieces import Piece, Source, by_file

__all__ = ["Part", "TaskCounts", "plan", "task_counts"]

Unit = TypeVar("Unit", bound=Hashable)  # what _cut cuts: tasks, or row groups


@frozen
class Part:
    """One partition: consecutive row groups of the input, or a spill file."""

    rows: int
    tasks: tuple[str | None, ...]
    pieces: tuple[Piece, ...] = ()
    filtered: bool = False
    """Its row groups hold other partitions' tasks too: only its tasks' rows are kept."""
    spilled: str | None = None
    skip: int = 0
    """Rows of its first row group before its own (another partition's): dropped."""
    head: int | None = None
    """How many rows of its last row group to read (its own end there), ``None``: all of them."""


@frozen
class TaskCounts:
    """Per row group, its runs per task, in the order the tasks first appear there; and whether
    each task's runs are consecutive in the whole input."""

    groups: tuple[dict[str | None, int], ...]
    clustered: bool


def plan(
    source: Source, counts: TaskCounts, limit: int, lanes: int = 1
) -> tuple[list[Part], dict[str | None, int] | None]:
    """The partitions of whole tasks, of at most ``limit`` runs unless one task has more; and,
    when the tasks are spread over the row groups, the partition of each task (the rows are
    then spilled).

    Tasks are taken in the order they first appear and cut into partitions of about equal runs,
    as many as a multiple of the ``lanes`` that score them at once, so that no lane is left
    scoring the last partition alone; a partition reads the row groups its tasks span, keeping
    its tasks' rows: by position when each task's runs are consecutive (it reads a row group at
    a cut as far as its rows go), else by their task (a row group at a cut is read whole by both
    sides). When that would read the input more than twice over (tasks in no order), the rows
    are dealt to partitions instead.

    :param counts: per row group, its runs per task (:func:`task_counts`).
    """
    first: dict[str | None, int] = {}
    last: dict[str | None, int] = {}
    rows_of: dict[str | None, int] = {}
    for index, found in enumerate(counts.groups):
        for task, n in found.items():
            first.setdefault(task, index)
            last[task] = index
            rows_of[task] = rows_of.get(task, 0) + n
    order = list(first)  # in order of first appearance
    if counts.clustered:
        return _stretches(
            source, _aligned(source, order, rows_of, limit, lanes) or _cut(order, rows_of, limit, lanes), rows_of
        ), None
    parts = []
    for tasks in _cut(order, rows_of, limit, lanes):
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


def _aligned(
    source: Source, order: list[str | None], rows_of: Mapping[str | None, int], limit: int, lanes: int
) -> list[list[str | None]] | None:
    """Tasks whose runs are consecutive, cut where row groups begin: the row groups are cut as
    :func:`_cut` cuts tasks, and each partition starts with the first task that starts in its
    first row group (a task crossing a cut goes with its first row). A partition then reads its
    row groups and the head of the next one, and decodes nothing another one keeps but the end
    of a task at its start. The row groups are cut by the limit, or if a task crossing a cut
    would pass it, by what it leaves beside the largest task; ``None`` when a row group does
    not fit, or when the partitions would not be a multiple of the lanes (a task spanning a
    row group leaves none starting there): the tasks are cut instead."""
    sizes = {k: p.rows for k, p in enumerate(source.pieces)}
    edges = np.cumsum([0, *(rows_of[t] for t in order)])  # where each task starts, and the end
    for room in (limit, limit - max(rows_of.values(), default=0)):  # the second: room for a task crossing the cut
        if not sizes or room < max(sizes.values()):
            return None
        starts = np.searchsorted(edges, [source.pieces[g[0]].start for g in _cut(list(sizes), sizes, room, lanes)])
        bounds = [*dict.fromkeys([0, *starts.tolist()[1:]]), len(order)]  # no partition of no tasks
        parts = [order[a:b] for a, b in pairwise(bounds) if b > a]
        if len(parts) % lanes == 0 and all(sum(rows_of[t] for t in p) <= limit or len(p) == 1 for p in parts):
            return parts
    return None


def _stretches(source: Source, cut: list[list[str | None]], rows_of: Mapping[str | None, int]) -> list[Part]:
    """The partitions of tasks whose runs are consecutive in the input, in its order: each the
    stretch of rows of its tasks, read from the row groups it overlaps."""
    starts = np.array([p.start for p in source.pieces], dtype=np.int64)
    parts, begin = [], 0
    for tasks in cut:
        rows = sum(rows_of[t] for t in tasks)
        end = begin + rows
        low = int(np.searchsorted(starts, begin, side="right")) - 1
        high = int(np.searchsorted(starts, end, side="left"))  # the pieces before this one overlap
        pieces = source.pieces[low:high]
        head = end - pieces[-1].start
        parts.append(
            Part(
                rows, tuple(tasks), pieces, skip=begin - pieces[0].start, head=None if head == pieces[-1].rows else head
            )
        )
        begin = end
    return parts


def _cut(order: list[Unit], rows_of: Mapping[Unit, int], limit: int, lanes: int) -> list[list[Unit]]:
    """The tasks (or row groups), in order, cut into runs of about equal size: each task goes to the partition
    its middle run falls in. The fewest partitions (a multiple of ``lanes``) that keep each within
    ``limit`` are taken; when tasks are too uneven for that, tasks are gathered until the next
    would pass the limit."""
    total = sum(rows_of.values())
    least = _multiple(-(-total // limit), lanes)
    for count in range(least, least + 4 * lanes, lanes):
        groups: list[list[Unit]] = [[] for _ in range(count)]
        loads = [0] * count
        start = 0
        for task in order:
            k = min(count - 1, int((start + rows_of[task] / 2) * count // total))
            groups[k].append(task)
            loads[k] += rows_of[task]
            start += rows_of[task]
        if all(load <= limit or len(g) == 1 for g, load in zip(groups, loads, strict=True)):
            return [g for g in groups if g]
    gathered: list[list[Unit]] = []
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


def task_counts(source: Source) -> TaskCounts:
    """Per row group, its runs per task (``None``: runs without a task): each file's ``task_id``
    column read once, coded as its dictionary pages hold it, and each row group's codes counted."""
    if "task_id" not in source.schema.names:
        return TaskCounts(tuple({None: piece.rows} for piece in source.pieces), True)
    out: list[dict[str | None, int]] = []
    clustered, previous = True, object()
    seen: set[str | None] = set()
    for _, run in by_file(source.pieces):
        codes, names = source.coded(run, "task_id")  # numbered in the order they first appear
        start = 0
        for piece in run:
            counted = np.bincount(codes[start : start + piece.rows], minlength=len(names))
            out.append({names[k]: int(counted[k]) for k in np.flatnonzero(counted).tolist()})
            start += piece.rows
        if clustered and len(codes):
            # Consecutive within the file: as many runs of equal codes as tasks, and a task of an
            # earlier file only where it goes on from that file's last run.
            runs = 1 + int(np.count_nonzero(codes[1:] != codes[:-1]))
            again = seen.intersection(names)
            clustered = runs == len(names) and again <= {previous} and (not again or names[0] == previous)
            seen.update(names)
            previous = names[int(codes[-1])]
    return TaskCounts(tuple(out), clustered)
