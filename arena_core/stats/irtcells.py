"""The item response fit over the cells that hold runs, for boards too sparse to hold whole.

:func:`arena_core.stats.irt.fit` reads ``(groups, tasks)`` arrays, and fits every bootstrap
resample at once. A board of 2,000 groups x 100,000 tasks, each group on a few hundred of them,
has 200,000,000 such cells and a million that hold runs: its dense arrays do not fit in memory.
Here a board is its cells that hold runs (:class:`Cells`), and one fit reads nothing else. It
maximises the same penalised likelihood as :func:`arena_core.stats.irt.fit` (its priors, no
task features):

- Rasch by Newton's method on abilities and difficulties jointly. The difficulties' block of the
  Hessian is diagonal, so each step solves one ``groups x groups`` system, the Schur complement,
  built by a sparse product over the cells in about ``sum over tasks of (groups on it)^2``
  operations. Past :data:`NEWTON_GROUPS` groups that system costs more than the steps it saves,
  and alternating steps take over, as they do in the dense fit past 200 groups.
- 2PL by alternating Newton steps from the Rasch fit, cell by cell. The dense fit's Fisher
  scoring (:func:`arena_core.stats.irt.fit`) solves a ``groups x groups`` system a step too;
  on a sparse board its four sparse products cost ten times the alternating steps' passes, in
  as many steps (2,000 groups x 100,000 tasks: 71 s against 7.5 s).

Every pass over the cells is a ``bincount`` by group or by task.
"""

from __future__ import annotations

import numpy as np
from attrs import frozen

from arena_core.stats import irt
from arena_core.stats.battles import logistic
from arena_core.stats.irt import MODELS, IrtFit, ability_prior, rasch_factors, slope_prior
from arena_core.stats.irtprior import DIFFICULTY_SD
from arena_core.stats.tasktable import Runs, sorted_codes

__all__ = ["NEWTON_GROUPS", "Cells", "Coded", "fit_cells", "task_information"]

#: The runs' groups, then their tasks, as :func:`~arena_core.stats.tasktable.sorted_codes` codes them.
Coded = tuple[tuple[np.ndarray, list[str]], tuple[np.ndarray, list[str]]]

#: Up to this many groups, Rasch is fitted by Newton's method: its ``groups x groups`` system
#: (128 MB and about a second to solve at 4,000) per step; beyond, by alternating steps.
NEWTON_GROUPS = 4_000
#: Cells whose probabilities :func:`task_information` evaluates at once: 256 KB, which stay in
#: the processor's cache through its passes (10,000 groups x 100,000 tasks: 4.4-4.9 s, 6.3 s
#: in blocks of a million cells).
_CHUNK_CELLS = 1 << 15


@frozen
class Cells:
    """A board's cells that hold runs with a verdict: per cell its group, its task, its runs and
    their mean response (0-1), groups and tasks coded in the order of their sorted names."""

    groups: list[str]
    tasks: list[str]
    group: np.ndarray
    task: np.ndarray
    counts: np.ndarray
    """Runs of the cell: all of them, as the dense fit counts a cell where some run has a verdict."""
    solved: np.ndarray

    @classmethod
    def of(cls, runs: Runs, coded: Coded | None = None) -> Cells | None:
        """The cells of ``runs`` as :func:`arena_core.stats.irt.responses` reads a board's table;
        ``None`` when no run has a correctness score. ``coded``: the runs' groups and tasks as
        :func:`~arena_core.stats.tasktable.sorted_codes` gives them, when the caller has them (a
        second coding of 2,000,000 runs' names took a second)."""
        correctness = runs.dimensions.get("correctness")
        if correctness is None:
            return None
        (group_codes, group_names), (task_codes, task_ids) = coded or (
            sorted_codes(runs.groups),
            sorted_codes(runs.tasks),
        )
        keys, cell = np.unique(group_codes * len(task_ids) + task_codes, return_inverse=True)
        runs_in = np.bincount(cell, minlength=len(keys))
        measured = ~np.isnan(correctness)
        verdicts = np.bincount(cell[measured], minlength=len(keys))
        sums = np.bincount(cell[measured], weights=correctness[measured], minlength=len(keys))
        kept = verdicts > 0
        return cls(
            group_names, task_ids, keys[kept] // len(task_ids), keys[kept] % len(task_ids), runs_in[kept] * 1.0,
            sums[kept] / verdicts[kept] / 100,
        )  # fmt: skip


def fit_cells(cells: Cells, model: str = "rasch", weights: np.ndarray | None = None) -> IrtFit:
    """Fit ``model`` to ``cells``: an :class:`~arena_core.stats.irt.IrtFit` of one resample.

    :param weights: ``(tasks,)`` how many times each task counts (0 leaves it out); one each
        when omitted.
    """
    if model not in MODELS:
        raise ValueError(f"model: expected one of {', '.join(MODELS)}, got {model!r}")
    n = cells.counts if weights is None else cells.counts * np.asarray(weights, dtype=float)[cells.task]
    s = n * cells.solved
    size = (len(cells.groups), len(cells.tasks))
    theta, b = np.zeros(size[0]), np.zeros(size[1])
    if size[0] <= NEWTON_GROUPS:
        theta, b, iterations = _rasch(cells, n, s, theta, b)
        a = np.ones(size[1])
    else:
        theta, b, a, iterations = _alternating(cells, n, s, theta, b, "rasch")
    if model == "2pl":
        scale = ability_prior("rasch")
        theta, b, a, more = _alternating(cells, n, s, theta / scale, b / scale, "2pl")
        iterations += more
    return IrtFit(theta[None], b[None], a[None], iterations, np.zeros((1, 0)), np.array([DIFFICULTY_SD]))


def _rasch(
    cells: Cells, n: np.ndarray, s: np.ndarray, theta: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Rasch by Newton's method, the steps of the dense fit's with the Schur complement built
    from the cells (a sparse ``groups x tasks`` matrix times its transpose)."""
    from scipy.sparse import csr_matrix

    g, t = cells.group, cells.task
    groups, tasks = len(theta), len(b)
    prior_theta, prior_b = 1 / ability_prior("rasch") ** 2, 1 / DIFFICULTY_SD**2
    iterations = 0
    while iterations < irt.MAX_ITERATIONS:
        iterations += 1
        residual, c = _residuals(n, s, theta[g] - b[t])
        grad_theta = np.bincount(g, residual, groups) - prior_theta * theta
        grad_b = -np.bincount(t, residual, tasks) - prior_b * b
        d = np.bincount(t, c, tasks) + prior_b
        scaled = c / d[t]
        schur = -(csr_matrix((scaled, (g, t)), shape=(groups, tasks)) @ csr_matrix((c, (t, g)), shape=(tasks, groups)))
        schur = schur.toarray()
        schur[np.arange(groups), np.arange(groups)] += np.bincount(g, c, groups) + prior_theta
        step_theta = np.linalg.solve(schur, grad_theta + np.bincount(g, scaled * grad_b[t], groups))
        step_b = (grad_b + np.bincount(t, c * step_theta[g], tasks)) / d
        step_theta, step_b = (
            np.clip(step_theta, -irt.MAX_STEP, irt.MAX_STEP),
            np.clip(step_b, -irt.MAX_STEP, irt.MAX_STEP),
        )
        theta, b = theta + step_theta, b + step_b
        if max(np.abs(step_theta).max(initial=0.0), np.abs(step_b).max(initial=0.0)) < irt.TOLERANCE:
            break
    return theta, b, iterations


def _alternating(
    cells: Cells, n: np.ndarray, s: np.ndarray, theta: np.ndarray, b: np.ndarray, model: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Alternating Newton steps on abilities, difficulties and (2PL) log slopes, with the shift
    along which only the priors pull: the dense fit's steps (``irt._alternating_chunk``) for one
    resample, each sum over a group's or a task's cells a ``bincount``."""
    g, t = cells.group, cells.task
    groups, tasks = len(theta), len(b)
    alpha = np.zeros(tasks)
    slopes = model == "2pl"
    prior_theta, prior_b, prior_alpha = 1 / ability_prior(model) ** 2, 1 / DIFFICULTY_SD**2, 1 / slope_prior() ** 2
    iterations = 0
    while iterations < irt.MAX_ITERATIONS:
        iterations += 1
        a = np.exp(alpha)
        residual, spread = _residuals(n, s, a[t] * (theta[g] - b[t]))
        step_theta = (np.bincount(g, residual * a[t], groups) - prior_theta * theta) / (
            np.bincount(g, spread * (a * a)[t], groups) + prior_theta
        )
        theta = theta + np.clip(step_theta, -irt.MAX_STEP, irt.MAX_STEP)
        residual, spread = _residuals(n, s, a[t] * (theta[g] - b[t]))
        step_b = (-a * np.bincount(t, residual, tasks) - prior_b * b) / (
            a * a * np.bincount(t, spread, tasks) + prior_b
        )
        b = b + np.clip(step_b, -irt.MAX_STEP, irt.MAX_STEP)
        steps = [step_theta, step_b]
        if slopes:
            gap = theta[g] - b[t]
            residual, spread = _residuals(n, s, a[t] * gap)
            grad = a * np.bincount(t, residual * gap, tasks) - prior_alpha * alpha
            step_alpha = grad / (a * a * np.bincount(t, spread * gap * gap, tasks) + prior_alpha)
            alpha = alpha + np.clip(step_alpha, -irt.MAX_STEP, irt.MAX_STEP)
            steps.append(step_alpha)
        shift = -(prior_theta * theta.sum() + prior_b * b.sum()) / (prior_theta * groups + prior_b * tasks)
        theta, b = theta + shift, b + shift
        if max(np.abs(x).max(initial=0.0) for x in steps) < irt.TOLERANCE and abs(shift) < irt.TOLERANCE:
            break
    return theta, b, np.exp(alpha), iterations


def _residuals(n: np.ndarray, s: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's residual ``s - n p`` and curvature ``n p (1 - p)`` at the logits ``z``."""
    p = logistic(z)
    return s - n * p, n * p * (1 - p)


def task_information(found: IrtFit) -> np.ndarray:
    """``(tasks,)``: :func:`arena_core.stats.irt.information` of resample 0, summed over every
    group a block of tasks at a time, so no ``(groups, tasks)`` array is held whole. Each
    cell's ``p (1 - p)`` is ``e / (1 + e)^2`` with ``e = exp(-|z|)``: one exponential, in place
    (the logistic's two passes took 20 s of 10,000 groups x 100,000 tasks). Under Rasch (every
    slope 1) ``e`` may be ``exp(difficulty - ability)`` itself, ``exp(difficulty) x
    exp(-ability)``: an exponential per task and per group, none per cell (that board 3.9 ->
    2.0 s), wherever no cell's ``e`` overflows (no difficulty 700 logits above an ability)."""
    theta, b, a = found.abilities[0], found.difficulties[0], found.discriminations[0]
    factors = rasch_factors(theta, b) if (a == 1).all() else None
    out = np.empty(len(b))
    step = max(1, _CHUNK_CELLS // max(1, len(theta)))
    for start in range(0, len(b), step):
        block = slice(start, start + step)
        if factors is not None:
            z = np.multiply.outer(factors[1][block], factors[0])  # e, a row per task
        else:
            z = np.subtract.outer(b[block], theta)  # a row per task: its sum runs along memory
            z *= a[block, None]
            np.abs(z, out=z)
            np.negative(z, out=z)
            np.exp(z, out=z)  # e, in (0, 1]
        spread = z + 1
        np.square(spread, out=spread)
        np.divide(z, spread, out=z)  # p (1 - p)
        out[block] = a[block] * a[block] * z.sum(axis=1)
    return out
