"""A Rasch board's scores from its cells that hold runs: the whole board's, and each bootstrap
resample's by the fit's linear response, for boards too large for their dense table.

The score is what :func:`arena_core.stats.irt.expected_scores` gives: 100 x a group's expected
share of the board's tasks solved, every task, run or not. The whole board's is evaluated
exactly, a block of tasks at a time (a ``tasks x groups`` block of probabilities, an
exponential per group and per task by :func:`~arena_core.stats.irt.rasch_factors`).

A resample weighs each task by how often it was drawn. Its abilities and difficulties are the
fit's linear response to those weights, as :mod:`arena_core.stats.irtbootstrap` derives it;
here the Hessian's blocks are sparse matrices over the cells, and its Schur complement
(``groups x groups``) is factorised once for every resample. What the dense board then does,
evaluate every resample's probability of every (group, task) cell, is out of reach here (1,000
resamples x 2,000 groups x 100,000 tasks is 2 x 10^11 exponentials); each probability is
expanded to first order about the fit instead, ``p + p (1 - p) (d_theta - d_b)``, so a
resample's weighted sums are three matrix products per block of tasks:

    sum_t w_t p_gt + d_theta_g sum_t w_t p_gt (1 - p_gt) - sum_t (w_t d_b_t) p_gt (1 - p_gt)

A resample's moves are a bootstrap's spread (a few tenths of a logit at most for a task drawn
three times), where the probabilities' curvature is small: on boards the dense table holds, the
expanded scores are within a few hundredths of a point of the exactly evaluated ones
(``tests/test_cell_board.py``). Scores are clipped to 0-100, which a first-order sum could leave.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from attrs import frozen

from arena_core.stats.battles import logistic
from arena_core.stats.irt import IrtFit, ability_prior
from arena_core.stats.irtprior import DIFFICULTY_SD
from arena_core.stats.irtsums import ability_sums
from arena_core.stats.room import ensure_room

if TYPE_CHECKING:
    from arena_core.stats.celltable import CellTable

__all__ = ["cell_scores"]


@frozen
class _Response:
    """The linear response of a Rasch fit to the tasks' weights, factorised once."""

    factorised: tuple[np.ndarray, np.ndarray]
    """The Schur complement's LU factors (``scipy.linalg.lu_factor``)."""
    moves: object
    """``(groups, tasks)`` sparse: the abilities' right-hand side per unit of a task's weight."""
    curvature: object
    """``(groups, tasks)`` sparse: each cell's ``n p (1 - p)`` (the abilities x difficulty block)."""
    difficulty: np.ndarray
    """``(tasks,)``: each difficulty's own block of the Hessian (negative)."""
    own: np.ndarray
    """``(tasks,)``: each difficulty's own move per unit of its weight, abilities held."""


def cell_scores(table: CellTable, weights: np.ndarray) -> np.ndarray:
    """``(resamples, groups)``: 100 x each group's expected share of each resample's tasks
    solved, under the Rasch fit of ``table``'s cells (:meth:`CellTable.fit`), the resample's
    parameters by the fit's linear response to its ``weights`` ``(resamples, tasks)``; NaN for a
    group that ran no task the resample drew."""
    found = table.fit("rasch")
    weights = np.asarray(weights, dtype=float)
    moved = weights - 1
    groups = len(table.groups)
    if np.any(moved):
        d_theta, d_b = _moves(table, found, moved)
    else:  # the whole board: its own fit, evaluated exactly
        d_theta, d_b = np.zeros((len(weights), groups)), np.zeros_like(weights)
    theta, b = found.abilities[0] + d_theta, found.difficulties[0] + d_b
    sums = ability_sums(theta, b, None, weights)
    from scipy.sparse import csr_matrix

    cells = table.responses()
    assert cells is not None
    ran = csr_matrix((np.ones(len(cells.group)), (cells.group, cells.task)), shape=(groups, len(table.tasks)))
    drawn = (ran @ weights.T).T > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.clip(100 * sums / weights.sum(axis=1, keepdims=True), 0.0, 100.0)
    found_scores: np.ndarray = np.where(drawn, scores, np.nan)
    return found_scores


def _moves(table: CellTable, found: IrtFit, moved: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(resamples, groups)`` and ``(resamples, tasks)``: the abilities' and difficulties'
    moves for the weights' moves ``moved`` from 1."""
    from scipy.linalg import lu_solve

    response = table.kept("rasch response")
    if response is None:
        response = _response(table, found)
        table.keep("rasch response", response)
    d_theta = lu_solve(response.factorised, response.moves @ moved.T).T
    along = (response.curvature.T @ d_theta.T).T
    d_b = -moved * response.own - along / response.difficulty
    return d_theta, d_b


def _response(table: CellTable, found: IrtFit) -> _Response:
    """The linear response of ``found`` (:mod:`arena_core.stats.irtbootstrap`'s, Rasch) with
    its blocks as sparse matrices over the cells."""
    from scipy.linalg import lu_factor
    from scipy.sparse import csr_matrix

    cells = table.responses()
    assert cells is not None
    groups = len(cells.groups)  # the Schur complement, its factors and the product making it
    ensure_room(groups * groups * 8 * 4, f"the item response fit of a board of {groups:,} groups")
    g, t, n = cells.group, cells.task, cells.counts
    theta, b = found.abilities[0], found.difficulties[0]
    groups, tasks = len(theta), len(b)
    p = logistic(theta[g] - b[t])
    c, r = n * p * (1 - p), n * cells.solved - n * p  # each cell's curvature and residual
    abilities = -np.bincount(g, c, groups) - 1 / ability_prior("rasch") ** 2
    difficulty = -np.bincount(t, c, tasks) - 1 / DIFFICULTY_SD**2
    own = -np.bincount(t, r, tasks) / difficulty
    curvature = csr_matrix((c, (g, t)), shape=(groups, tasks))
    schur = -(csr_matrix((c / difficulty[t], (g, t)), shape=(groups, tasks)) @ curvature.T).toarray()
    schur[np.arange(groups), np.arange(groups)] += abilities
    moves = csr_matrix((c * own[t] - r, (g, t)), shape=(groups, tasks))
    return _Response(lu_factor(schur), moves, curvature, difficulty, own)
