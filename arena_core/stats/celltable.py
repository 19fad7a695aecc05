"""A board as its cells that hold runs: for boards too large for a dense ``(groups, tasks)`` table.

:class:`~arena_core.stats.tasktable.TaskTable` holds every ``(group, task)`` cell, about 100
bytes each at a board's peak: 2,000 models on 100,000 tasks, each on a few hundred of them, is
200,000,000 cells (20 GB) for a million that hold runs, and is refused
(:class:`~arena_core.stats.room.BoardTooLarge`). A :class:`CellTable` holds only those that
hold runs, with the same figures per cell (:class:`~arena_core.stats.tasktable.CellFigures`),
and answers what a leaderboard reads of a table: the tasks, runs and mean figures of each
group, which groups share tasks, and the paired tests' values as sparse matrices
(:class:`~arena_core.stats.pairmoments.SparseValues`). A method that can score such a board
says so (``cells = True``: the item response methods, :mod:`arena_core.stats.irtcellboard`);
the others need the dense table. Tasks in families (``--cluster``) are not held.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from attrs import field, frozen

from arena_core.engine.columns import factorize
from arena_core.stats.irt import IrtFit
from arena_core.stats.irtcells import Cells, fit_cells
from arena_core.stats.pairmoments import SparseValues
from arena_core.stats.tasktable import CellFigures, Runs, TaskTable, dimension_order, measured_mean, sorted_codes

__all__ = ["SPARSE_CELLS", "SPARSE_SHARE", "CellTable", "is_sparse", "runs_are_sparse"]

#: A board of at least this many ``(group, task)`` cells ...
SPARSE_CELLS = 1_000_000
#: ... of which at most this share hold runs is held as its cells by a method that scores them,
#: even where the dense table would fit: 2,000 groups x 100,000 tasks with a million cells run
#: fit in 23 GB but would take 19 GiB of them, and the dense item response intervals evaluate
#: every cell of every resample (2 x 10^11 probabilities), where the cells' take 34 s in all.
SPARSE_SHARE = 0.25


def is_sparse(size: int, held: int) -> bool:
    """Whether a board of ``size`` ``(group, task)`` cells, ``held`` of them holding runs, is
    ranked from its cells by a method that can: :data:`SPARSE_CELLS` cells or more, at most
    :data:`SPARSE_SHARE` of them run."""
    return size >= SPARSE_CELLS and held <= SPARSE_SHARE * size


def runs_are_sparse(runs: Runs) -> bool:
    """:func:`is_sparse` of the board ``runs`` make, from their groups' and tasks' codes alone:
    whether a method that can should rank from the cells, known before either table is made."""
    group_codes, groups = factorize(runs.groups)
    task_codes, tasks = factorize(runs.tasks)
    size = len(groups) * len(tasks)
    # the size first, as is_sparse asks it too: a small board is dense without counting its cells
    return size >= SPARSE_CELLS and is_sparse(size, len(np.unique(group_codes * len(tasks) + task_codes)))


@frozen(eq=False)
class CellTable:
    """Per cell that holds runs (sorted by group, then task; groups and tasks coded in the order
    of their sorted names): its group, task, runs, the sum of their overall scores, each
    dimension's mean and the mean coverage. Compared by identity: it keeps its fits."""

    groups: list[str]
    tasks: list[str]
    group: np.ndarray
    task: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    dimension_means: Mapping[str, np.ndarray]
    """Dimension to each cell's mean over the runs that measured it (NaN: none did)."""
    coverage_means: np.ndarray
    clusters: None = None
    """Tasks in families are not held (the cells' board resamples tasks)."""
    _kept: dict[Any, Any] = field(factory=dict, init=False, repr=False)
    """What the board's statistics compute once and read many times (its fits), by name."""

    @classmethod
    def of(cls, runs: Runs) -> CellTable:
        """The cells of ``runs`` (their clusters, if any, are not read)."""
        group_codes, group_names = sorted_codes(runs.groups)
        task_codes, task_ids = sorted_codes(runs.tasks)
        keys, cell = np.unique(group_codes * len(task_ids) + task_codes, return_inverse=True)
        found = CellFigures.of(cell.ravel(), runs, len(keys))
        return cls(
            group_names, task_ids, keys // max(1, len(task_ids)), keys % max(1, len(task_ids)), found.counts,
            found.sums, found.dimension_means, found.coverage_means,
        )  # fmt: skip

    @classmethod
    def joined(cls, parts: Sequence[TaskTable | CellTable]) -> CellTable:
        """The cells of runs split into parts of different tasks (a streamed board's), from the
        parts' tables, dense or of cells: each cell is its part's, so the figures are those of
        :meth:`of` on all the runs. A dimension a part lacks is NaN in its cells.

        :raises ValueError: a task in two parts.
        """
        groups = sorted(set().union(*(p.groups for p in parts)))
        tasks = sorted(t for p in parts for t in p.tasks)
        if len(set(tasks)) != len(tasks):
            raise ValueError("parts of a table must hold different tasks")
        names = dimension_order([d for p in parts for d in p.dimension_means])
        g_index, t_index = {g: i for i, g in enumerate(groups)}, {t: i for i, t in enumerate(tasks)}
        pieces = []
        for part in parts:
            at = part.run_cells()
            flat = isinstance(part, CellTable)
            figures = [part.counts, part.sums, part.coverage_means] + [
                part.dimension_means.get(d, np.full(part.counts.shape, np.nan)) for d in names
            ]
            pieces.append((
                np.array([g_index[g] for g in part.groups], dtype=np.int64)[at[0]],
                np.array([t_index[t] for t in part.tasks], dtype=np.int64)[at[1]],
                *(f if flat else f[at] for f in figures),
            ))  # fmt: skip
        g, t, counts, sums, coverage, *means = (np.concatenate(x) for x in zip(*pieces, strict=True))
        order = np.lexsort((t, g))
        return cls(
            groups, tasks, g[order], t[order], counts[order], sums[order],
            {d: m[order] for d, m in zip(names, means, strict=True)}, coverage[order],
        )  # fmt: skip

    def tasks_per_group(self) -> np.ndarray:
        """``(groups,)``: the tasks each group ran."""
        return np.bincount(self.group, minlength=len(self.groups))

    def runs_per_group(self) -> np.ndarray:
        """``(groups,)``: the runs of each group."""
        return np.bincount(self.group, weights=self.counts, minlength=len(self.groups)).astype(np.int64)

    def group_means(self, values: np.ndarray) -> list[float]:
        """Per group, :func:`~arena_core.stats.tasktable.measured_mean` of its cells' ``values``:
        exactly rounded, so equal to the dense table's."""
        ends = np.cumsum(self.tasks_per_group()).tolist()
        return [measured_mean(values[start:end]) for start, end in zip([0, *ends[:-1]], ends, strict=True)]

    def run_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """The group and task of each cell."""
        return self.group, self.task

    def values_of(self, dimension: str) -> SparseValues | None:
        """The cells' means of ``dimension`` as a sparse ``(groups, tasks)`` matrix, beside the
        cells that have one; ``None`` when no run has the dimension. Made once: the paired tests
        read the correctness, and the item response scores which groups have verdicts."""
        means = self.dimension_means.get(dimension)
        if means is None:
            return None
        if ("values", dimension) not in self._kept:
            shape = (len(self.groups), len(self.tasks))
            self._kept["values", dimension] = SparseValues.of(self.group, self.task, means, shape)
        found: SparseValues = self._kept["values", dimension]
        return found

    def responses(self) -> Cells | None:
        """The cells the item response fit reads (those with a verdict); ``None`` without any."""
        if "responses" not in self._kept:
            correctness = self.dimension_means.get("correctness")
            if correctness is None:
                self._kept["responses"] = None
            else:
                kept = ~np.isnan(correctness)
                self._kept["responses"] = Cells(
                    self.groups, self.tasks, self.group[kept], self.task[kept], self.counts[kept] * 1.0,
                    correctness[kept] / 100,
                )  # fmt: skip
        found: Cells | None = self._kept["responses"]
        return found

    def fit(self, model: str) -> IrtFit:
        """The item response fit of ``model`` to :meth:`responses` (computed once: a board scores
        each batch of its resamples from it)."""
        cells = self.responses()
        assert cells is not None
        key = ("fit", model)
        if key not in self._kept:
            self._kept[key] = fit_cells(cells, model)
        found: IrtFit = self._kept[key]
        return found

    def kept(self, key: Any) -> Any:
        """What was kept under ``key`` (``None``: nothing): a statistic's own precomputation."""
        return self._kept.get(key)

    def keep(self, key: Any, value: Any) -> None:
        """Keep ``value`` under ``key`` for this table's later readers."""
        self._kept[key] = value
