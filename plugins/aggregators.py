"""Leaderboard aggregators: the task mean, the pooled mean, the mean win rate, Bradley-Terry,
item response theory (Rasch and 2PL).

Each scores every group for every row of task weights at once (see
:class:`arena_core.model.protocols.Aggregator`): a row of ones is the estimate, a row of
the counts of one bootstrap resample of the tasks (how often each task was drawn).
"""

from __future__ import annotations

import numpy as np
from attrs import frozen

from arena_core import hookimpl
from arena_core.model.errors import ValidationError
from arena_core.stats import irt
from arena_core.stats.celltable import CellTable
from arena_core.stats.irtbootstrap import linearised_scores
from arena_core.stats.irtcellboard import cell_scores
from arena_core.stats.tasktable import TaskTable


def _weighted_mean(values: np.ndarray, present: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``(resamples, groups)``: per group, the mean of ``values`` over its present tasks, each
    task counted as often as its weight (NaN where no present task was drawn)."""
    filled = np.where(present, values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores: np.ndarray = (weights @ filled.T) / (weights @ present.T.astype(float))
    return scores


class TaskMean:
    """The mean over tasks of the group's per-task mean score: each task counts once, however
    many runs the group has on it (the default)."""

    name = "task_mean"
    unit = "per-task means"
    description = "mean over tasks of the group's per-task mean overall score (each task counts once)"

    def aggregate(self, table: TaskTable, weights: np.ndarray) -> np.ndarray:
        return _weighted_mean(table.means, table.present, weights)

    def units(self, table: TaskTable, group: int) -> np.ndarray:
        return table.task_means(group)


class PooledMean:
    """The mean of every run of the group, as one pool: a task with many runs weighs more
    (what leaderboards computed before task means; ``--pool runs``)."""

    name = "pooled"
    unit = "runs"
    reads_runs = True  # single runs, not only per-task cells: a streamed board cannot give them
    description = "mean of every run of the group, pooled (a task with more runs weighs more)"

    def aggregate(self, table: TaskTable, weights: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            scores: np.ndarray = (weights @ table.sums.T) / (weights @ table.counts.T.astype(float))
        return scores

    def units(self, table: TaskTable, group: int) -> np.ndarray:
        return table.runs_of(group)


def _outcomes(means: np.ndarray) -> np.ndarray:
    """``(tasks, groups, groups)`` of per-task means ``(tasks, groups)``: 1 where the row group's
    mean beats the column group's, 0.5 for a tie, 0 for a loss or where either did not run it."""
    a, b = means[:, :, None], means[:, None, :]
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(a) | np.isnan(b), 0.0, (a > b) + 0.5 * (a == b))


def _task_chunks(table: TaskTable) -> list[slice]:
    """The tasks in chunks whose ``(chunk, groups, groups)`` outcomes hold about 2 million cells."""
    step = max(1, _CELLS // max(1, len(table.groups) ** 2))
    return [slice(start, start + step) for start in range(0, len(table.tasks), step)]


def _flat_outcomes(table: TaskTable, tasks: slice) -> tuple[slice, np.ndarray]:
    """The ``tasks`` chunk and its outcomes as ``(tasks, groups * groups)``."""
    found = _outcomes(table.means.T[tasks])
    return tasks, found.reshape(len(found), -1)


def _wins(table: TaskTable, weights: np.ndarray, outcomes: list[tuple[slice, np.ndarray]] | None = None) -> np.ndarray:
    """``(resamples, groups, groups)``: the games each group won against each other, over the
    tasks weighted by each resample's ``weights``, summed a chunk of tasks at a time (from the
    ``outcomes`` made already, or made here)."""
    groups = len(table.groups)
    wins = np.zeros((len(weights), groups * groups))
    chunks = outcomes if outcomes is not None else (_flat_outcomes(table, tasks) for tasks in _task_chunks(table))
    for tasks, found in chunks:
        wins += weights[:, tasks] @ found
    return wins.reshape(-1, groups, groups)


class MeanWinRate:
    """HELM's mean win rate, as a percentage: on each task, the share of the other groups that
    ran it whose mean score the group beats (a tie counts half), averaged over tasks. A task
    only one group ran says nothing and is left out."""

    name = "win_rate"
    description = "HELM's mean win rate: share of other groups beaten per task (ties half), averaged over tasks"

    def aggregate(self, table: TaskTable, weights: np.ndarray) -> np.ndarray:
        means = table.means.T  # (tasks, groups)
        present = table.present.T
        opponents = present.sum(axis=1, keepdims=True) - 1
        beaten = np.concatenate([_outcomes(means[chunk]).sum(axis=2) for chunk in _task_chunks(table)])
        wins = beaten - 0.5 * present  # a group ties itself
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(present & (opponents > 0), 100.0 * wins / np.maximum(opponents, 1), np.nan)
        return _weighted_mean(np.nan_to_num(rate).T, ~np.isnan(rate).T, weights)


#: Cells of the ``(resamples, groups, groups)`` arrays one Newton chunk holds: bounds its memory.
_CELLS = 2_000_000
#: Outcomes ``(tasks, groups, groups)`` up to this many cells (200 MB) are made once per board,
#: not once per chunk of resamples.
_HELD_CELLS = 25_000_000


@frozen
class BradleyTerry:
    """Bradley-Terry strengths fitted by maximum likelihood to per-task pairwise outcomes
    (which group's per-task mean is higher; a tie is half a win each), on Chatbot Arena's Elo
    scale: ``1000 + 400 * log10(strength)``, strengths normalised to a geometric mean of 1.

    ``prior`` adds that many games, all ties, between each group and a reference of strength 1,
    so a group that never lost (or never won) still gets a finite strength; 0 fits the plain
    likelihood. With the prior the log-likelihood is strictly concave in the log-strengths, and
    it is maximised by Newton's method (a few steps, resamples in chunks of bounded memory); 0
    is fitted by Hunter's (2004) minorisation-maximisation iteration, whose slow linear steps the
    Newton fit replaced: both reach the same maximum (``tests/test_leaderboards.py``).
    """

    name: str = "bradley_terry"
    prior: float = 1.0
    tolerance: float = 1e-10
    max_iterations: int = 10_000
    description = "Bradley-Terry strengths from per-task pairwise outcomes, on an Elo scale (1000 = average)"

    def aggregate(self, table: TaskTable, weights: np.ndarray) -> np.ndarray:
        groups = len(table.groups)
        played = (weights @ table.present.T.astype(float)) > 0  # a group with no drawn task has no score
        # Resamples a chunk at a time, each chunk's wins summed over tasks a chunk at a time: the
        # whole (tasks, groups, groups) outcomes and (resamples, groups, groups) wins took 14.9 GiB
        # at 2,000 groups.
        chunk = max(1, _CELLS // max(1, groups**2))
        held = len(table.tasks) * groups**2 <= _HELD_CELLS  # the outcomes made once, when they fit
        outcomes = [_flat_outcomes(table, tasks) for tasks in _task_chunks(table)] if held else None
        strengths = np.concatenate(
            [self.fit(_wins(table, weights[r : r + chunk], outcomes)) for r in range(0, len(weights), chunk)]
        )
        with np.errstate(divide="ignore"):
            logs = np.log10(strengths)
        logs = np.where(played, logs, np.nan)
        centred = logs - np.nanmean(np.where(played, logs, np.nan), axis=1, keepdims=True)
        ratings: np.ndarray = 1000.0 + 400.0 * centred
        return ratings

    def fit(self, wins: np.ndarray) -> np.ndarray:
        """Strengths ``(resamples, groups)`` maximising the likelihood of ``wins[r, i, j]``
        (games ``i`` won against ``j``), with the prior's games against the reference."""
        if self.prior <= 0:
            return self.fit_mm(wins)
        chunk = max(1, _CELLS // max(1, wins.shape[1] ** 2))
        return np.concatenate([self._newton(wins[r : r + chunk]) for r in range(0, len(wins), chunk)])

    def _newton(self, wins: np.ndarray) -> np.ndarray:
        """Newton's method on the log-strengths: the gradient and Hessian of the penalised
        log-likelihood, one linear solve per resample and step, steps bounded while far off."""
        games = wins + wins.transpose(0, 2, 1)
        won = wins.sum(axis=2) + self.prior / 2
        theta = np.zeros(wins.shape[:2])
        eye = np.eye(wins.shape[1], dtype=bool)
        for _ in range(200):
            p = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))  # P(row beats column)
            own = 1.0 / (1.0 + np.exp(-theta))  # P(beats the reference)
            gradient = won - (games * p).sum(axis=2) - self.prior * own
            curvature = games * p * (1.0 - p)
            hessian = curvature - np.where(
                eye, curvature.sum(axis=2)[:, :, None] + (self.prior * own * (1 - own))[:, :, None], 0.0
            )
            step = np.clip(np.linalg.solve(hessian, -gradient[:, :, None])[:, :, 0], -2.0, 2.0)
            theta = theta + step
            # Quadratic convergence reaches the solver's rounding (steps of about 1e-12 that no
            # longer shrink) in a few steps; waiting for 1e-12 itself ran all 200 steps.
            if np.max(np.abs(step)) < 1e-9:
                break
        return np.exp(theta)

    def fit_mm(self, wins: np.ndarray) -> np.ndarray:
        """Hunter's minorisation-maximisation iteration (the fit without a prior)."""
        games = wins + wins.transpose(0, 2, 1)
        won = wins.sum(axis=2) + self.prior / 2
        strengths = np.ones(wins.shape[:2])
        for _ in range(self.max_iterations):
            pair = strengths[:, :, None] + strengths[:, None, :]
            denominator = (games / pair).sum(axis=2) + self.prior / (strengths + 1.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                updated = np.where(denominator > 0, won / denominator, strengths)
            if self.prior == 0:
                updated = updated / np.exp(np.mean(np.log(np.maximum(updated, 1e-300)), axis=1, keepdims=True))
            change = np.max(np.abs(np.log(np.maximum(updated, 1e-300)) - np.log(np.maximum(strengths, 1e-300))))
            strengths = updated
            if change < self.tolerance:
                break
        return strengths


class ItemResponse:
    """Abilities fitted by item response theory to the runs' correctness (see
    :mod:`arena_core.stats.irt`): a group is measured against the difficulty of the tasks it ran,
    so groups that ran different tasks compare fairly. Its score is 100 x its expected share of
    the board's tasks solved at its ability.

    A board's resamples take the fit's linear response to their weights
    (:mod:`arena_core.stats.irtbootstrap`: 3x-8x a single 2PL fit, where a thousand refits
    took 1,400 times it; under Rasch 1.0 s at 500 groups x 500 tasks, where they took 121 s);
    ``refits=True`` (``irt_refits``, ``irt_2pl_refits``) refits each one, each from the whole
    board's fit."""

    def __init__(self, model: str, *, refits: bool = False) -> None:
        self.model = model
        self.refits = refits
        self.name = ("irt" if model == "rasch" else f"irt_{model}") + ("_refits" if refits else "")
        kind = "Rasch (1PL)" if model == "rasch" else "2PL"
        self.description = f"{kind} abilities from correctness; 100 x expected share of the board's tasks solved"
        if refits:
            self.description += " (every bootstrap resample refitted)"

    #: The dimensions it reads: the verdicts alone (a figure only the others need is not asked for).
    reads = ("correctness",)

    @property
    def cells(self) -> bool:
        """Scores a board held as its cells that hold runs (:mod:`arena_core.stats.irtcellboard`),
        when its dense table does not fit: by the linear response (not refits)."""
        return not self.refits

    def aggregate(self, table: TaskTable | CellTable, weights: np.ndarray) -> np.ndarray:
        if isinstance(table, CellTable):
            if table.responses() is None:
                raise self._without_verdicts()
            return cell_scores(table, weights, self.model)
        read = irt.responses(table)
        if read is None:
            raise self._without_verdicts()
        counts, solved = read
        drawn = (weights @ (counts > 0).T) > 0  # (resamples, groups): ran a task the resample drew
        if self.refits or np.all(weights == 1):
            expected = irt.expected_scores(irt.fit(counts, solved, weights, self.model), weights)
        else:
            expected = linearised_scores(counts, solved, irt.fit(counts, solved, None, self.model), weights, self.model)
        scores: np.ndarray = np.where(drawn, expected, np.nan)
        return scores

    def _without_verdicts(self) -> ValidationError:
        """What a board without a correctness score gets: the fit reads the verdicts alone."""
        return ValidationError(
            "leaderboard", "method", f"runs with correctness scores ({self.name} fits the verdicts)", self.name
        )


@hookimpl
def arena_register_aggregators() -> list[object]:
    return [
        TaskMean(),
        PooledMean(),
        MeanWinRate(),
        BradleyTerry(),
        ItemResponse("rasch"),
        ItemResponse("rasch", refits=True),
        ItemResponse("2pl"),
        ItemResponse("2pl", refits=True),
    ]
