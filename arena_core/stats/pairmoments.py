"""Paired t-tests of every two groups at once, from matrix products over the cells.

A leaderboard tests each pair of ranked groups on the tasks both ran (its inversions, and
``--pairwise``). Taken pair by pair that is quadratic in Python: 62 s for 2,000 groups, past
400 s for 10,000. For groups ``i`` and ``j`` the paired differences ``d = x_i - x_j`` over their
shared tasks have

- ``n = P P^T`` (``P``: 1 where a group has a value for a task),
- ``sum d = (X P^T) - (X P^T)^T`` (``X``: the values, 0 where absent),
- ``sum d^2 = (X^2 P^T) + (X^2 P^T)^T - 2 X X^T``,

four matrix products for all pairs, from which the t statistic and, through one vectorised
``scipy.special.stdtr``, the two-sided p-value of ``scipy.stats.ttest_1samp``. When every group
has every task (``P`` all ones) three of them are row sums, and ``X X^T`` is the one product made. The products are
made a block of rows at a time, each row against the groups from its block on (a pair is tested
once, and half the products are not made), so memory stays bounded however many groups there are.

A board held as its cells (:class:`SparseValues`, from
:class:`~arena_core.stats.celltable.CellTable`) makes the same products as sparse matrices: each
costs about the sum over tasks of (groups on it)^2, not groups^2 x tasks.

A pair whose differences are all equal (no spread) is decided as the pair-by-pair test decides
it (p = 1 for a zero difference, else 0): its variance, from sums, is taken for zero below a
relative 1e-10.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from attrs import frozen

__all__ = ["PairBlock", "SparseValues", "pair_blocks"]

#: Cells of a block's ``(rows, groups)`` results: about 8 MB a float array.
_BLOCK_CELLS = 1 << 20
#: A variance below this share of the mean square of the differences is no spread at all.
_NO_SPREAD = 1e-10


@frozen
class SparseValues:
    """``(groups, tasks)`` values held as sparse matrices: ``values`` (0 where absent) and
    ``present`` (1 where a group has a value; a value may itself be 0)."""

    values: Any
    present: Any

    @classmethod
    def of(cls, group: np.ndarray, task: np.ndarray, values: np.ndarray, shape: tuple[int, int]) -> SparseValues:
        """The cells' ``values`` (NaN: absent) at ``(group, task)``, each cell once."""
        from scipy.sparse import csr_matrix

        kept = ~np.isnan(values)
        at = (group[kept], task[kept])
        return cls(csr_matrix((values[kept], at), shape=shape), csr_matrix((np.ones(int(kept.sum())), at), shape=shape))

    @property
    def shape(self) -> tuple[int, int]:
        found: tuple[int, int] = self.present.shape
        return found

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: Any) -> SparseValues:
        """The rows ``rows`` (indices, or a slice), in that order."""
        return SparseValues(self.values[rows], self.present[rows])


@frozen
class PairBlock:
    """The paired t-tests of the groups ``rows`` against the groups ``columns``: each array
    ``(len(rows), len(columns))``."""

    rows: np.ndarray
    """Indices of this block's groups (the first of each pair)."""
    columns: np.ndarray
    """Indices of the groups they are tested against: the block's first group and every later one."""
    shared: np.ndarray
    """Tasks both groups have a value for."""
    mean: np.ndarray
    """Mean over them of the row group's value minus the column group's (0 with none shared)."""
    p_value: np.ndarray
    """Two-sided, of the paired t-test; NaN below 2 shared tasks. With ``below`` given, a cell
    whose column is not after its row (a group against itself, or a pair of an earlier block's
    row) is 1: only the pairs the block tests are computed."""


def pair_blocks(values: np.ndarray | SparseValues, *, below: float | None = None) -> Iterator[PairBlock]:
    """The paired t-tests of every two groups of ``values`` (``(groups, tasks)``, NaN where a
    group has none, or :class:`SparseValues`), a block of rows at a time, each against the groups from the block's first on:
    every pair ``i < j`` is in the block of ``i``, at column ``j``.

    :param below: only p-values under this are wanted: the others are given as 1, without
        computing them (a t statistic short of the critical value, with a margin, has one at
        least), as are the cells of pairs the block does not test.
    """
    from scipy.special import stdtr, stdtrit  # the board imports scipy.special already (stats/pairwise.py)

    critical: np.ndarray | None = None
    if below is not None:  # |t| beyond this for p < below, per degrees of freedom, with a margin
        freedom = np.arange(1, max(2, values.shape[1]) + 1, dtype=float)
        critical = np.concatenate([[np.inf], stdtrit(freedom, below / 2) * -(1 - 1e-9)])

    if isinstance(values, SparseValues):
        p, x, complete = values.present, values.values, False
        xx = x.multiply(x).tocsr()
    else:
        present = ~np.isnan(values)
        complete = bool(present.all())
        p = present.astype(float)
        x = np.where(present, values, 0.0)
        xx = x * x
    if complete:  # every group has every task (a board of one benchmark): P's products are row sums
        sums, sums_of_squares = x @ p[0], xx @ p[0]  # as the product with a row of ones sums them
    step = max(1, _BLOCK_CELLS // max(1, len(values)))
    for start in range(0, len(values), step):
        block, later = slice(start, start + step), slice(start, None)
        rows, columns = np.arange(len(values))[block], np.arange(start, len(values))
        if complete:
            shared = np.full((len(x[block]), len(x[later])), float(values.shape[1]))
            total = sums[block, None] - sums[None, later]
            squares = sums_of_squares[block, None] + sums_of_squares[None, later] - 2.0 * (x[block] @ x[later].T)
        else:
            shared = _dense(p[block] @ p[later].T)
            total = _dense(x[block] @ p[later].T) - _dense(p[block] @ x[later].T)
            squares = (
                _dense(xx[block] @ p[later].T) + _dense(p[block] @ xx[later].T) - 2.0 * _dense(x[block] @ x[later].T)
            )
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(shared > 0, total / np.maximum(shared, 1), 0.0)
            variance = (squares - shared * mean * mean) / (shared - 1)
            flat = variance <= _NO_SPREAD * np.maximum(squares / np.maximum(shared, 1), 1e-300)
            statistic = np.abs(mean / np.sqrt(variance / shared))
            if critical is None:
                p_value = 2.0 * stdtr(shared - 1, -statistic)
            else:  # and only for the pairs this block tests (a column after its row): half a block's cells
                freedom = np.maximum(shared - 1, 0).astype(np.int64)
                near = (statistic >= critical[freedom]) & (columns[None, :] > rows[:, None])
                p_value = np.ones_like(statistic)
                p_value[near] = 2.0 * stdtr(freedom[near], -statistic[near])
        no_spread = np.where(np.abs(mean) <= _NO_SPREAD * np.sqrt(np.maximum(squares, 0.0) + 1.0), 1.0, 0.0)
        p_value = np.where(flat, no_spread, p_value)
        p_value = np.where(shared >= 2, p_value, np.nan)
        yield PairBlock(rows, columns, shared.astype(np.int64), mean, p_value)


def _dense(product: Any) -> np.ndarray:
    """A product of the blocks as an array (a sparse matrix's, made dense: one block's pairs)."""
    found: np.ndarray = product.toarray() if hasattr(product, "toarray") else product
    return found
