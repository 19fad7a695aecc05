"""An item response board's scores from its cells that hold runs: the whole board's, and each
bootstrap resample's by the fit's linear response, for boards too large for their dense table.

The score is what :func:`arena_core.stats.irt.expected_scores` gives: 100 x a group's expected
share of the board's tasks solved, every task, run or not. A resample weighs each task by how
often it was drawn; its abilities, difficulties and (2PL) log slopes are the whole fit's linear
response to those weights, as :mod:`arena_core.stats.irtbootstrap` derives it, with the
Hessian's blocks here sparse matrices over the cells and its ``groups x groups`` Schur
complement factorised once for every resample. What the dense board then does, evaluate every
resample's probability of every (group, task) cell, is out of reach here (1,000 resamples x
2,000 groups x 100,000 tasks is 2 x 10^11 exponentials): each resample's sum over tasks is a
function of the group's ability alone, interpolated in it (:mod:`arena_core.stats.irtsums`) at
about a hundred abilities. The scores equal the dense board's (``tests/test_cell_board.py``).

A first-order expansion of each probability about the fit (three matrix products per block of
tasks) was tried first and left: on a sparse board the difficulty of a task few groups ran
moves several logits in a resample, and its scores were up to 4.6 points off the exact ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from attrs import frozen

from arena_core.stats.battles import logistic
from arena_core.stats.irt import IrtFit, ability_prior, slope_prior
from arena_core.stats.irtprior import DIFFICULTY_SD
from arena_core.stats.irtsums import ability_sums
from arena_core.stats.room import ensure_room

if TYPE_CHECKING:
    from arena_core.stats.celltable import CellTable

__all__ = ["cell_scores"]


@frozen
class _Response:
    """The linear response of a fit to the tasks' weights, its Schur complement factorised once.
    Each task's own block is 2 x 2 (difficulty, log slope), 1 x 1 under Rasch (``by_slope``
    ``None``), held by its inverse's entries."""

    factorised: tuple[np.ndarray, np.ndarray]
    """The Schur complement's LU factors (``scipy.linalg.lu_factor``)."""
    moves: Any
    """``(groups, tasks)`` sparse, by column (CSC): the abilities' right-hand side per unit of a
    task's weight."""
    by_difficulty: Any
    """``(tasks, groups)`` sparse, by row (CSR): the Hessian's difficulty x abilities block."""
    by_slope: Any
    """``(tasks, groups)`` sparse, by row: its log slope x abilities block (``None`` under Rasch)."""
    inverse: tuple[np.ndarray, np.ndarray, np.ndarray]
    """``(tasks,)`` each: each task block's inverse, (difficulty, difficulty), (difficulty, log
    slope) and (log slope, log slope)."""
    own: tuple[np.ndarray, np.ndarray]
    """``(tasks,)`` each: each difficulty's and log slope's own move per unit of its weight."""


def cell_scores(table: CellTable, weights: np.ndarray, model: str = "rasch") -> np.ndarray:
    """``(resamples, groups)``: 100 x each group's expected share of each resample's tasks
    solved, under the ``model`` fit of ``table``'s cells (:meth:`CellTable.fit`), the resample's
    parameters by the fit's linear response to its ``weights`` ``(resamples, tasks)``; NaN for a
    group that ran no task the resample drew."""
    found = table.fit(model)
    weights = np.asarray(weights, dtype=float)
    moved = weights - 1
    theta, b, a = found.abilities[0], found.difficulties[0], found.discriminations[0]
    slopes = None if model == "rasch" else np.broadcast_to(a, weights.shape)
    if np.any(moved):
        d_theta, d_b, d_alpha = _moves(table, found, moved, model)
        theta, b = theta + d_theta, b + d_b
        slopes = None if d_alpha is None else a * np.exp(d_alpha)
    else:  # the whole board: its own fit
        theta, b = np.broadcast_to(theta, (len(weights), len(theta))), np.broadcast_to(b, weights.shape)
    sums = ability_sums(theta, b, slopes, weights)
    verdicts = table.values_of("correctness")  # the cells with a verdict: those the fit reads
    assert verdicts is not None
    drawn = (verdicts.present @ weights.T).T > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = 100 * sums / weights.sum(axis=1, keepdims=True)
    found_scores: np.ndarray = np.where(drawn, scores, np.nan)
    return found_scores


def _moves(
    table: CellTable, found: IrtFit, moved: np.ndarray, model: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(resamples, groups)``, ``(resamples, tasks)`` and ``(resamples, tasks)`` (``None``
    under Rasch): the abilities', difficulties' and log slopes' moves for the weights' moves
    ``moved`` from 1."""
    from scipy.linalg import lu_solve

    response = table.kept((model, "response"))
    if response is None:
        response = _response(table, found, model)
        table.keep((model, "response"), response)
    # Each product walks the tasks in order, their rows of the resamples' moves contiguous, and
    # gathers into (or reads from) the groups' few rows, which stay in cache: 40 resamples of
    # 2,000 groups x 100,000 tasks, 0.10 -> 0.02 s a product against rows of groups x tasks.
    d_theta = lu_solve(response.factorised, response.moves @ np.ascontiguousarray(moved.T)).T
    i_dd, i_ds, i_ss = response.inverse
    own_d, own_s = response.own
    by_group = np.ascontiguousarray(d_theta.T)
    along_d = (response.by_difficulty @ by_group).T
    if response.by_slope is None:
        return d_theta, -moved * own_d - i_dd * along_d, None
    along_s = (response.by_slope @ by_group).T
    d_b = -moved * own_d - (i_dd * along_d + i_ds * along_s)
    return d_theta, d_b, -moved * own_s - (i_ds * along_d + i_ss * along_s)


def _response(table: CellTable, found: IrtFit, model: str) -> _Response:
    """The linear response of ``found`` (:mod:`arena_core.stats.irtbootstrap`'s) with its
    blocks as sparse matrices over the cells."""
    from scipy.linalg import lu_factor
    from scipy.sparse import csc_matrix, csr_matrix

    cells = table.responses()
    assert cells is not None
    groups, tasks = len(cells.groups), len(cells.tasks)  # the Schur complement, its factors and products
    ensure_room(groups * groups * 8 * 6, f"the item response fit of a board of {groups:,} groups")
    g, t, n = cells.group, cells.task, cells.counts
    theta, b, a = found.abilities[0], found.difficulties[0], found.discriminations[0]
    z = a[t] * (theta[g] - b[t])
    p = logistic(z)
    c, r = n * p * (1 - p), n * cells.solved - n * p  # each cell's curvature in z, and its residual

    def sparse(values: np.ndarray) -> Any:
        return csr_matrix((values, (g, t)), shape=(groups, tasks))

    def by_task(values: np.ndarray) -> Any:
        return csr_matrix((values, (t, g)), shape=(tasks, groups))

    def scaled(values: np.ndarray, by: np.ndarray, other: np.ndarray) -> np.ndarray:
        """``values diag(by) other^T`` of two cells' arrays, as a dense ``groups x groups``."""
        found: np.ndarray = (sparse(values * by[t]) @ sparse(other).T).toarray()
        return found

    abilities = -np.bincount(g, c * a[t] ** 2, groups) - 1 / ability_prior(model) ** 2
    on_d = -a * np.bincount(t, r, tasks)
    dd = -np.bincount(t, c * a[t] ** 2, tasks) - 1 / DIFFICULTY_SD**2
    by_d = c * a[t] ** 2
    if model == "rasch":
        inverse, own = (1 / dd, np.zeros(tasks), np.zeros(tasks)), (on_d / dd, np.zeros(tasks))
        schur = -scaled(by_d, inverse[0], by_d)
        moves, by_slope = by_d * own[0][t] - r * a[t], None
    else:
        by_s = r * a[t] - c * a[t] * z
        ss = np.bincount(t, r * z - c * z * z, tasks) - 1 / slope_prior() ** 2
        ds = np.bincount(t, c * a[t] * z - r * a[t], tasks)
        det = dd * ss - ds * ds
        inverse = (ss / det, -ds / det, dd / det)
        on_s = np.bincount(t, r * z, tasks)
        own = (inverse[0] * on_d + inverse[1] * on_s, inverse[1] * on_d + inverse[2] * on_s)
        schur = -(
            scaled(by_d, inverse[0], by_d) + scaled(by_d, inverse[1], by_s)
            + scaled(by_s, inverse[1], by_d) + scaled(by_s, inverse[2], by_s)
        )  # fmt: skip
        moves, by_slope = by_d * own[0][t] + by_s * own[1][t] - r * a[t], by_task(by_s)
    schur[np.arange(groups), np.arange(groups)] += abilities
    by_column = csc_matrix((moves, (g, t)), shape=(groups, tasks))
    return _Response(lu_factor(schur), by_column, by_task(by_d), by_slope, inverse, own)
