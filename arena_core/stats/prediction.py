"""What a board predicts of the cells nobody ran: each group's chance of solving each task, and
each group's expected score on the whole task set (``arena predict``).

The prediction is the item response fit of :mod:`arena_core.stats.irt` (the one ``--method irt``
ranks with): ``P(solved) = sigmoid(a (ability - difficulty))``, a share of partial credit
expected where verdicts are fractional. A cell's interval comes from the standard errors of
its group's ability and its task's difficulty at the fit (the logit's variance is
``a^2 (se_ability^2 + se_difficulty^2)``, mapped through the sigmoid). A group's expected
full-set score counts the tasks it ran at what it scored on them and the others at their
predicted share; its interval joins the uncertainty of the ability (the score at the ability's
interval ends, each end's distance from the estimate) with the outcome noise of the tasks not
run (``sum p (1 - p)``), in quadrature: an interval for the score the group would get if it ran
every task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from attrs import frozen

from arena_core.model.errors import ValidationError
from arena_core.model.records import Task
from arena_core.stats import irt
from arena_core.stats.battles import logistic
from arena_core.stats.taskfeatures import FeatureMatrix, feature_matrix
from arena_core.stats.tasktable import TaskTable

__all__ = ["BoardFit", "CellPrediction", "GroupExpectation", "board_fit", "expected_score", "predict", "score_interval"]


@frozen
class CellPrediction:
    """One group's prediction on one task."""

    group: str
    task: str
    probability: float
    """The probability of solving it (the expected share of credit), 0 to 1."""
    low: float
    high: float
    """95% interval of the probability."""
    runs: int
    """The group's runs of the task (0: predicted, never run)."""
    observed: float | None
    """The mean share of credit its runs got (``None`` when it never ran the task)."""


@frozen
class GroupExpectation:
    """A group's expected score on every task of the board."""

    group: str
    ability: float
    """Fitted ability, logits, with its standard error."""
    ability_se: float
    tasks_run: int
    tasks: int
    observed: float | None
    """100 x its mean share of credit over the tasks it ran."""
    expected: float
    """100 x its expected share over every task: what it scored where it ran, predicted elsewhere."""
    low: float
    high: float
    """95% interval of ``expected``."""


@frozen
class BoardFit:
    """A board's item response fit: its groups and tasks (those run, then those of ``tasks``
    nobody ran), the cells' runs and mean share of credit, the fit, and the task features."""

    groups: list[str]
    tasks: list[str]
    counts: np.ndarray
    solved: np.ndarray
    fit: irt.IrtFit
    model: str
    features: FeatureMatrix | None


def board_fit(
    table: TaskTable, model: str = "rasch", tasks: Mapping[str, Task] | None = None, features: Sequence[str] = ()
) -> BoardFit:
    """Fit ``model`` to ``table``'s verdicts; with ``tasks``, those no group ran are added
    (their difficulty is their features' prediction, or the prior's 0 without ``features``)."""
    found = irt.responses(table)
    if found is None:
        raise ValidationError("predict", "correctness", "runs with correctness scores (the fit reads the verdicts)")
    counts, solved = found
    names = list(table.tasks)
    unrun = [t for t in sorted(tasks or {}) if t not in set(names)]
    if unrun:
        counts = np.hstack([counts, np.zeros((len(table.groups), len(unrun)))])
        solved = np.hstack([solved, np.zeros((len(table.groups), len(unrun)))])
        names += unrun
    matrix = feature_matrix([(tasks or {}).get(t) for t in names], features) if features else None
    fitted = irt.fit(counts, solved, model=model, features=None if matrix is None else matrix.values)
    return BoardFit(list(table.groups), names, counts, solved, fitted, model, matrix)


def predict(board: BoardFit, cells: str = "missing") -> tuple[list[GroupExpectation], list[CellPrediction]]:
    """Each group's expected score over the board's tasks, and its predictions for the ``cells``
    (``missing``: those it did not run; ``all``; ``none``)."""
    if cells not in ("missing", "all", "none"):
        raise ValidationError("predict", "cells", "missing, all or none", cells)
    counts, solved, found, model = board.counts, board.solved, board.fit, board.model
    se_theta, se_b = irt.standard_errors(found, counts, model)
    theta, b, a = found.abilities[0], found.difficulties[0], found.discriminations[0]
    logit = a[None, :] * (theta[:, None] - b[None, :])
    spread = irt.Z95 * a[None, :] * np.sqrt(se_theta[:, None] ** 2 + se_b[None, :] ** 2)
    p, low, high = logistic(logit), logistic(logit - spread), logistic(logit + spread)
    groups = []
    for g, name in enumerate(board.groups):
        ran = counts[g] > 0
        middle, lower, upper = (
            expected_score(solved[g], ran, a, b, ability)
            for ability in (theta[g], theta[g] - irt.Z95 * se_theta[g], theta[g] + irt.Z95 * se_theta[g])
        )
        groups.append(
            GroupExpectation(
                name, float(theta[g]), float(se_theta[g]), int(ran.sum()), len(board.tasks),
                float(100 * solved[g][ran].mean()) if ran.any() else None, *score_interval(middle, lower, upper),
            )
        )  # fmt: skip
    predicted = [
        CellPrediction(
            group, task, float(p[g, t]), float(low[g, t]), float(high[g, t]), int(counts[g, t]),
            float(solved[g, t]) if counts[g, t] > 0 else None,
        )
        for g, group in enumerate(board.groups)
        for t, task in enumerate(board.tasks)
        if cells == "all" or (cells == "missing" and counts[g, t] == 0)
    ]  # fmt: skip
    return groups, predicted


def expected_score(
    observed: np.ndarray, ran: np.ndarray, a: np.ndarray, b: np.ndarray, ability: float
) -> tuple[float, float]:
    """``(100 x expected share over every task, 100 x the outcome noise's standard deviation)``
    of an ``ability``: the ``observed`` share where ``ran``, the predicted one elsewhere."""
    p = logistic(a * (ability - b))
    share = np.where(ran, observed, p)
    noise = np.sqrt(np.sum(np.where(ran, 0.0, p * (1 - p))))
    return float(100 * share.mean()), float(100 * noise / len(p))


def score_interval(
    middle: tuple[float, float], lower: tuple[float, float], upper: tuple[float, float]
) -> tuple[float, float, float]:
    """(estimate, low, high): the ability's interval ends' distances and the outcome noise in quadrature."""
    estimate, noise = middle
    below, above = estimate - lower[0], upper[0] - estimate
    low = estimate - float(np.hypot(below, irt.Z95 * noise))
    high = estimate + float(np.hypot(above, irt.Z95 * noise))
    return estimate, max(low, 0.0), min(high, 100.0)
