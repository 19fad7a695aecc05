"""Runs grouped by group and task: the table every leaderboard statistic is computed from.

A leaderboard compares groups (tools, models, ...) that ran different numbers of runs on
different tasks. Pooling every run as one sample weighs a group by how often it ran, and a
single lucky run looks as certain as 500; so every statistic here starts from the per-task
mean of each group (a ``groups x tasks`` matrix, NaN where a group did not run a task) and
treats tasks, not runs, as the sample.

Scores as the engine rounds them (hundredths; coverage in ten-thousandths) are summed exactly,
as whole numbers of their units; any other values in a fixed order (group, task, score). Either
way the order in which evaluations arrive never changes a figure, as ``math.fsum`` guaranteed
before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property

import numpy as np
from attrs import frozen

from arena_core.engine.columns import factorize
from arena_core.engine.ordered import stable_order
from arena_core.model.errors import ValidationError
from arena_core.model.records import DIMENSIONS
from arena_core.stats.room import ensure_room

__all__ = [
    "CELL_BYTES",
    "CellFigures",
    "Runs",
    "TaskTable",
    "cell_means",
    "dimension_order",
    "measured_mean",
    "sorted_codes",
]

#: Bytes a board holds per ``(group, task)`` cell at its peak, besides 8 per dimension: the
#: counts, sums, coverage, means and presence, a sum's temporaries, and the weighted means and
#: pair moments its statistics compute over the cells (measured: a board's traced peak stays
#: below this estimate; ``tests/test_room.py``).
CELL_BYTES = 96


@frozen
class Runs:
    """One row per evaluation: its submission, group, task, overall score, dimension scores and coverage."""

    ids: Sequence[str]
    groups: Sequence[str]
    tasks: Sequence[str]
    overall: np.ndarray
    dimensions: Mapping[str, np.ndarray]
    """Dimension to score per run, NaN where the dimension was left out."""
    coverage: np.ndarray
    """Share of the overall weight each run's measured figures carry (0-1)."""
    clusters: Sequence[str | None] | None = None
    """Per run, the family its task belongs to (``--cluster meta.KEY``), when tasks are clustered."""

    def select(self, keep: np.ndarray) -> Runs:
        """The runs where ``keep`` is true."""
        rows = np.flatnonzero(keep).tolist()
        return Runs(
            [self.ids[i] for i in rows],
            [self.groups[i] for i in rows],
            [self.tasks[i] for i in rows],
            self.overall[rows],
            {d: v[rows] for d, v in self.dimensions.items()},
            self.coverage[rows],
            None if self.clusters is None else [self.clusters[i] for i in rows],
        )


@frozen
class TaskTable:
    """Per group and task: the number of runs and the sums of their scores.

    Groups are sorted by name and tasks by id, so the table of a set of runs does not depend
    on their order.
    """

    groups: list[str]
    tasks: list[str]
    counts: np.ndarray
    """``(groups, tasks)`` number of runs."""
    sums: np.ndarray
    """``(groups, tasks)`` sum of the runs' overall scores."""
    run_group: np.ndarray
    """Group index of each run, runs sorted by (group, task, score)."""
    run_task: np.ndarray
    run_score: np.ndarray
    dimension_means: Mapping[str, np.ndarray]
    """Dimension to ``(groups, tasks)`` mean over the runs that measured it (NaN: none did)."""
    coverage_means: np.ndarray
    """``(groups, tasks)`` mean coverage of the runs."""
    clusters: np.ndarray | None = None
    """Per task, the code of its cluster (tasks of one family share one), when tasks are clustered:
    intervals and rank ranges then resample clusters, not tasks."""

    @classmethod
    def of(cls, runs: Runs, *, cells_only: bool = False) -> TaskTable:
        """The table of ``runs``; ``cells_only``: without the run-level arrays (what a worker
        hands back), which then need no sort of the runs when every sum is exact."""
        group_codes, group_names = sorted_codes(runs.groups)
        task_codes, task_ids = sorted_codes(runs.tasks)
        shape = (len(group_names), len(task_ids))
        _ensure_room(shape, len(runs.dimensions))
        cells = group_codes * shape[1] + task_codes
        found = CellFigures.of(cells, runs, shape[0] * shape[1])
        empty = np.zeros(0, dtype=np.int64)
        g, t, score = (empty, empty, empty.astype(float)) if cells_only else (
            group_codes[found.ordered()], task_codes[found.ordered()], runs.overall[found.ordered()]
        )  # fmt: skip
        return cls(
            group_names,
            task_ids,
            found.counts.reshape(shape),
            found.sums.reshape(shape),
            g,
            t,
            score,
            {d: means.reshape(shape) for d, means in found.dimension_means.items()},
            found.coverage_means.reshape(shape),
            None if runs.clusters is None else _task_clusters(runs, task_ids),
        )

    @classmethod
    def joined(cls, parts: Sequence[TaskTable]) -> TaskTable:
        """The table of runs split into parts of different tasks, from the parts' tables: each
        cell is its part's (all its runs were there, summed in the same order), so the figures are
        those of :meth:`of` on all the runs. Run-level arrays are left empty.

        :raises ValueError: a task in two parts.
        """
        groups = sorted(set().union(*(p.groups for p in parts)))
        tasks = sorted(t for p in parts for t in p.tasks)
        if len(set(tasks)) != len(tasks):
            raise ValueError("parts of a table must hold different tasks")
        g_index = {g: i for i, g in enumerate(groups)}
        t_index = {t: i for i, t in enumerate(tasks)}
        shape = (len(groups), len(tasks))
        names = dimension_order([d for p in parts for d in p.dimension_means])
        _ensure_room(shape, len(names))
        counts, sums, coverage = np.zeros(shape, dtype=np.int64), np.zeros(shape), np.full(shape, np.nan)
        dimensions = {d: np.full(shape, np.nan) for d in names}
        for part in parts:
            cells = np.ix_([g_index[g] for g in part.groups], [t_index[t] for t in part.tasks])
            counts[cells], sums[cells], coverage[cells] = part.counts, part.sums, part.coverage_means
            for name, means in part.dimension_means.items():
                dimensions[name][cells] = means
        empty = np.zeros(0, dtype=np.int64)
        return cls(groups, tasks, counts, sums, empty, empty, empty.astype(float), dimensions, coverage)

    @cached_property
    def present(self) -> np.ndarray:
        """``(groups, tasks)``: true where the group ran the task (computed once: every group's
        statistics read it)."""
        found = self.counts > 0
        found.flags.writeable = False  # shared by every reader
        return found

    @cached_property
    def means(self) -> np.ndarray:
        """``(groups, tasks)`` per-task mean overall score, NaN where the group did not run the task
        (computed once: each group's interval reads its row, and a board of 2,000 groups computed
        the whole matrix 2,000 times)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            found = np.where(self.present, self.sums / np.maximum(self.counts, 1), np.nan)
        found.flags.writeable = False  # shared by every reader
        return found

    def tasks_per_group(self) -> np.ndarray:
        """``(groups,)``: the tasks each group ran."""
        ran: np.ndarray = self.present.sum(axis=1)
        return ran

    def runs_per_group(self) -> np.ndarray:
        """``(groups,)``: the runs of each group."""
        runs: np.ndarray = self.counts.sum(axis=1)
        return runs

    def group_means(self, values: np.ndarray) -> list[float]:
        """Per group, :func:`measured_mean` of its cells' ``values`` (``coverage_means`` or one
        of ``dimension_means``): the mean over the tasks it has a value for."""
        return [measured_mean(row) for row in values]

    def run_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """The group and task of each cell that holds runs."""
        groups, tasks = np.nonzero(self.present)
        return groups, tasks

    def values_of(self, dimension: str) -> np.ndarray | None:
        """``(groups, tasks)`` per-task means of ``dimension`` (NaN where none), what the paired
        tests read (:func:`~arena_core.stats.pairmoments.pair_blocks`); ``None`` without it."""
        return self.dimension_means.get(dimension)

    def task_means(self, group: int) -> np.ndarray:
        """The group's per-task mean scores, over the tasks it ran (in task order)."""
        row = self.means[group]
        measured: np.ndarray = row[~np.isnan(row)]
        return measured

    def runs_of(self, group: int) -> np.ndarray:
        """The overall scores of the group's runs."""
        scores: np.ndarray = self.run_score[self.run_group == group]
        return scores


@frozen
class CellFigures:
    """Per cell of a board (each run's cell a code below ``size``): its runs, the sum of their
    overall scores, each dimension's mean and the mean coverage, summed as the module says
    (exactly, else by cell then score), so a dense table and a table of its cells that hold
    runs (:class:`~arena_core.stats.celltable.CellTable`) read the same figures."""

    counts: np.ndarray
    sums: np.ndarray
    dimension_means: dict[str, np.ndarray]
    coverage_means: np.ndarray
    ordered: Callable[[], np.ndarray]
    """The runs sorted by cell, then score (sorted once, when an inexact sum or the caller asks)."""

    @classmethod
    def of(cls, cells: np.ndarray, runs: Runs, size: int) -> CellFigures:
        """The figures of ``runs``, each run ``i`` in cell ``cells[i]``."""
        counts = np.bincount(cells, minlength=size)
        order: np.ndarray | None = None

        def ordered() -> np.ndarray:
            """The runs by cell, then score: the order inexact sums add in, and runs are kept in."""
            nonlocal order
            if order is None:
                order = _cell_order(cells, runs.overall)
            return order

        summed = _exact_sums(cells, runs.overall, size, 2)
        if summed is None:
            sums = np.bincount(cells[ordered()], weights=runs.overall[ordered()], minlength=size)
        else:
            sums = summed[0]
        flat = (1, size)
        dimensions = {d: _cell_means(cells, v, flat, counts, 2, ordered)[0] for d, v in runs.dimensions.items()}
        return cls(counts, sums, dimensions, _cell_means(cells, runs.coverage, flat, counts, 4, ordered)[0], ordered)


def _ensure_room(shape: tuple[int, int], dimensions: int) -> None:
    """A board of ``shape`` with ``dimensions`` dimension scores, checked to fit in memory."""
    groups, tasks = shape
    ensure_room(groups * tasks * (CELL_BYTES + 8 * dimensions), f"a board of {groups:,} groups x {tasks:,} tasks")


def _cell_order(cells: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """The runs sorted by cell, then score, ties in input order: ``np.lexsort((scores, cells))``.
    Scores as the spec rounds them (hundredths from 0 to 100) are sorted as one whole-number key,
    cell and hundredths together, which :func:`stable_order` sorts in a sixth of the time and the
    same order (the nearest double to k/100 grows with k)."""
    with np.errstate(invalid="ignore"):
        hundredths = np.rint(scores * 100.0)
    if len(scores) and ((hundredths / 100.0 == scores) & (hundredths >= 0) & (hundredths <= 10_000)).all():
        return stable_order(cells * 10_001 + hundredths.astype(np.int64))
    return np.lexsort((scores, cells))


def _exact_sums(
    cells: np.ndarray, values: np.ndarray, size: int, digits: int
) -> tuple[np.ndarray, np.ndarray | None] | None:
    """Per cell, the exact sum of its values that are not NaN, and how many there are (``None``:
    every value is): when each is the double nearest a whole number of ``10**-digits`` (as the
    engine rounds scores, to hundredths, and coverage, to ten-thousandths), the whole numbers are
    summed, exactly in doubles below 2**53, and each sum divided once. So a sum does not depend on
    the order of the runs, nor on a sort of them. ``None`` when a value is not such a number."""
    scale = 10.0**digits
    if len(values) and not np.isnan(least := values.min()):  # every value measured: fewer passes
        units = np.rint(values * scale)
        if (
            not np.array_equal(units / scale, values)
            or (max(-least, values.max()) * scale + 1) * len(values) >= 2.0**53
        ):
            return None
        return np.bincount(cells, weights=units, minlength=size) / scale, None
    with np.errstate(invalid="ignore"):
        units = np.rint(values * scale)
        exact = units / scale == values  # NaN: false
    measured = ~np.isnan(values)
    if not np.array_equal(exact, measured):
        return None
    whole = bool(measured.all())
    if not whole:
        units = np.where(measured, units, 0.0)
    if len(values) and max(-np.fmin.reduce(units), np.fmax.reduce(units)) * len(values) >= 2.0**53:
        return None
    sums = np.bincount(cells, weights=units, minlength=size) / scale
    return sums, None if whole else np.bincount(cells[measured], minlength=size)


def _cell_means(
    cells: np.ndarray,
    values: np.ndarray,
    shape: tuple[int, int],
    counts: np.ndarray,
    digits: int,
    ordered: Callable[[], np.ndarray],
) -> np.ndarray:
    """Mean of ``values`` per cell over those that are not NaN (NaN where none is): from exact
    sums (:func:`_exact_sums`), else summed by cell, then score (``ordered``)."""
    summed = _exact_sums(cells, values, counts.size, digits)
    if summed is None:
        order = ordered()
        return cell_means(cells[order], values[order], shape, counts.reshape(shape))
    sums, measured = summed
    counted = counts if measured is None else measured
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counted > 0, sums / np.maximum(counted, 1), np.nan).reshape(shape)


def dimension_order(names: Iterable[str]) -> list[str]:
    """The spec's dimensions in the spec's order, then any others as they came: a board's columns
    do not depend on which run happened to be read first (a gated run of an unsolved task has
    correctness alone)."""
    found = list(dict.fromkeys(names))
    return [d for d in DIMENSIONS if d in found] + [d for d in found if d not in DIMENSIONS]


def _task_clusters(runs: Runs, task_ids: list[str]) -> np.ndarray:
    """The cluster code of each task: every run of a task must name the same cluster."""
    assert runs.clusters is not None
    found: dict[str, str] = {}
    for task, cluster in zip(runs.tasks, runs.clusters, strict=True):
        if cluster is None:
            raise ValidationError(
                "leaderboard", "cluster", f"a value on every run (task {task!r} has a run without)", None
            )
        if found.setdefault(task, cluster) != cluster:
            raise ValidationError(
                "leaderboard",
                "cluster",
                f"one value per task (task {task!r} has {found[task]!r} and {cluster!r})",
                None,
            )
    codes, _ = sorted_codes([found[t] for t in task_ids])
    return codes


def sorted_codes(values: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """(code per value, distinct values sorted): codes follow the sorted order."""
    codes, distinct = factorize(values)
    order = sorted(range(len(distinct)), key=distinct.__getitem__)
    renumber = np.empty(len(distinct), dtype=np.int64)
    renumber[order] = np.arange(len(distinct))
    return renumber[codes], [distinct[i] for i in order]


def cell_means(
    cell: np.ndarray, values: np.ndarray, shape: tuple[int, int], counts: np.ndarray | None = None
) -> np.ndarray:
    """Mean of ``values`` per cell over the values that are not NaN (NaN where none is).

    :param counts: the number of rows per cell, when known: used when no value is NaN.
    """
    size = shape[0] * shape[1]
    measured = ~np.isnan(values)
    if measured.all():  # summed in the same order as the rows taken below would be
        if counts is None:
            counts = np.bincount(cell, minlength=size)
        sums = np.bincount(cell, weights=values, minlength=size)
    else:
        counts = np.bincount(cell[measured], minlength=size)
        sums = np.bincount(cell[measured], weights=values[measured], minlength=size)
    counts = counts.reshape(size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan).reshape(shape)


def measured_mean(values: np.ndarray) -> float:
    """The exactly rounded mean (``math.fsum``) of the values that are not NaN; NaN when none
    is: a group's mean over the tasks it has a value for."""
    measured = values[~np.isnan(values)]
    return math.fsum(measured.tolist()) / len(measured) if len(measured) else math.nan
