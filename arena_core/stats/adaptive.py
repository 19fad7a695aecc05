"""Adaptive evaluation of a new agent against a board (``arena adaptive``): which tasks it should
run next, what its score on every task would be, and when to stop.

This is computerised adaptive testing on the board's item response fit
(:mod:`arena_core.stats.irt`): the tasks' difficulties and discriminations are fitted once on
the board's groups, and held. The new agent's ability is its posterior mode given what it ran,
under a normal prior with the mean and spread of the board's abilities (an agent is assumed to
be drawn from the population of agents already on the board until its runs say otherwise), and
its standard error is the posterior curvature's. The next task is the one with the most Fisher
information at that ability (``a^2 p (1 - p)``) among those not run, in the category furthest
behind its share of the task set (content balancing, so the estimate does not rest on one kind
of task). The predicted full-set score and its interval are those of
:func:`~arena_core.stats.prediction.expected_score`: what it scored where it ran, the predicted
share elsewhere; the interval joins the ability's uncertainty with the outcome noise of the
tasks not run. Stopping: the standard error at most ``stop_se``, or the interval's half-width at
most ``stop_width`` points.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
from attrs import frozen

from arena_core.model.errors import ValidationError
from arena_core.model.records import Evaluation
from arena_core.stats import irt
from arena_core.stats.battles import logistic
from arena_core.stats.irt import Z95
from arena_core.stats.prediction import board_fit, expected_score, predict, score_interval
from arena_core.stats.tasktable import TaskTable

__all__ = ["AdaptiveEstimate", "AdaptiveTest", "responses_of"]

_STEPS = 50


@frozen
class AdaptiveEstimate:
    """Where a new agent stands after the tasks it ran."""

    ability: float
    """Posterior mode, logits, on the board's scale; ``ability_se`` its standard error."""
    ability_se: float
    tasks_run: int
    tasks: int
    expected: float
    """Predicted score on every task of the board (100 x share of credit), with its 95% interval."""
    low: float
    high: float
    rank: int
    """Its rank on the board by ``expected`` among the board's groups' expected scores, and the
    best and worst ranks its interval allows."""
    rank_best: int
    rank_worst: int
    stop: bool
    """Whether the stopping rule is met; ``reason`` says which (or what is still missing)."""
    reason: str


class AdaptiveTest:
    """A board's fitted tasks, ready to place a new agent: :meth:`estimate` and :meth:`next`."""

    def __init__(
        self, table: TaskTable, model: str = "rasch", categories: Mapping[str, str | None] | None = None
    ) -> None:
        """:param table: the board (groups x tasks); :param categories: task to category, for content balancing."""
        found = board_fit(table, model)
        fitted = found.fit
        self.tasks = list(table.tasks)
        self._index = {t: k for k, t in enumerate(self.tasks)}
        self.difficulties, self.discriminations = fitted.difficulties[0], fitted.discriminations[0]
        abilities = fitted.abilities[0]
        self.prior_mean = float(abilities.mean())
        self.prior_sd = float(max(abilities.std(), 0.5)) if len(abilities) > 1 else irt.ability_prior(model)
        board, _ = predict(found, cells="none")
        self.board = {g.group: g.expected for g in board}
        named = categories or {}
        self.categories = [named.get(t) or "" for t in self.tasks]

    def estimate(
        self, responses: Mapping[str, float], *, stop_se: float | None = None, stop_width: float | None = None
    ) -> AdaptiveEstimate:
        """Where the agent stands after ``responses`` (task to its share of credit, 0 to 1)."""
        observed, ran = self._responses(responses)
        theta, se = self._ability(observed, ran)
        a, b = self.discriminations, self.difficulties
        middle, lower, upper = (
            expected_score(observed, ran, a, b, ability) for ability in (theta, theta - Z95 * se, theta + Z95 * se)
        )
        expected, low, high = score_interval(middle, lower, upper)
        scores = np.array(list(self.board.values()))
        reasons = []
        if stop_se is not None and se <= stop_se:
            reasons.append(f"standard error {se:.3f} <= {stop_se}")
        if stop_width is not None and (high - low) / 2 <= stop_width:
            reasons.append(f"interval +-{(high - low) / 2:.2f} <= {stop_width} points")
        if not reasons and int(ran.sum()) == len(self.tasks):
            reasons.append("every task was run")
        waiting = [f"--{name} {value}" for name, value in (("stop-se", stop_se), ("stop-width", stop_width)) if value]
        return AdaptiveEstimate(
            theta, se, int(ran.sum()), len(self.tasks), expected, low, high,
            1 + int((scores > expected).sum()), 1 + int((scores > high).sum()), 1 + int((scores > low).sum()),
            bool(reasons), "; ".join(reasons) or ("not yet: " + ", ".join(waiting) if waiting else "no stopping rule given"),
        )  # fmt: skip

    def next(self, responses: Mapping[str, float], k: int = 1, *, balance: bool = True) -> list[str]:
        """The ``k`` tasks to run next: the most informative at the current ability, each from the
        category furthest behind its share of the task set (``balance``)."""
        observed, ran = self._responses(responses)
        theta, _ = self._ability(observed, ran)
        a, b = self.discriminations, self.difficulties
        p = logistic(a * (theta - b))
        worth = a * a * p * (1 - p)
        names = sorted(set(self.categories))
        share = {c: self.categories.count(c) / len(self.tasks) for c in names}
        done = dict.fromkeys(names, 0)
        for k_run in np.flatnonzero(ran):
            done[self.categories[k_run]] += 1
        free, kinds = ~ran, np.array(self.categories)
        chosen: list[str] = []
        while len(chosen) < k and free.any():
            candidates = free
            if balance and len(names) > 1:
                total = sum(done.values()) + 1
                open_ = sorted(set(kinds[free].tolist()))
                behind = max(open_, key=lambda c: (share[c] * total - done[c], share[c]))
                candidates = free & (kinds == behind)
            # Tasks of one response pattern are equally informative; their fitted values differ in
            # the last bits only, which must not choose (nor a library's rounding): the first wins.
            offered = np.flatnonzero(candidates)
            best = worth[offered].max()
            pick = int(offered[np.flatnonzero(worth[offered] >= best - 1e-9 * abs(best))[0]])
            chosen.append(self.tasks[pick])
            free[pick] = False
            done[self.categories[pick]] += 1
        return chosen

    def _responses(self, responses: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
        observed, ran = np.zeros(len(self.tasks)), np.zeros(len(self.tasks), dtype=bool)
        for task, share in responses.items():
            if task not in self._index:
                raise ValidationError(f"the new agent's runs of {task!r}", "task_id", "a task of the board", task)
            if not 0.0 <= share <= 1.0:
                raise ValidationError(f"the new agent's runs of {task!r}", "correctness", "a share from 0 to 1", share)
            observed[self._index[task]], ran[self._index[task]] = share, True
        return observed, ran

    def _ability(self, observed: np.ndarray, ran: np.ndarray) -> tuple[float, float]:
        """The posterior mode of the ability and its standard error, by Newton's method."""
        a, b = self.discriminations[ran], self.difficulties[ran]
        y = observed[ran]
        precision = 1 / self.prior_sd**2
        theta = self.prior_mean
        for _ in range(_STEPS):
            p = logistic(a * (theta - b))
            gradient = float(np.sum(a * (y - p))) - precision * (theta - self.prior_mean)
            curvature = float(np.sum(a * a * p * (1 - p))) + precision
            step = float(np.clip(gradient / curvature, -1.0, 1.0))
            theta += step
            if abs(step) < 1e-8:
                break
        p = logistic(a * (theta - b))
        return float(theta), float(1 / np.sqrt(np.sum(a * a * p * (1 - p)) + precision))


def responses_of(evaluations: Iterable[Evaluation]) -> dict[str, float]:
    """A new agent's responses from the evaluations of its runs: each task's mean correctness
    score as a share (its repeated attempts averaged, as a board's cell is)."""
    found: dict[str, list[float]] = {}
    for evaluation in evaluations:
        score = evaluation.scores.get("correctness")
        if score is None:
            raise ValidationError(
                f"submission {evaluation.submission_id!r}",
                "correctness",
                "a correctness score (the fit reads the verdicts)",
            )
        found.setdefault(evaluation.task_id, []).append(score / 100)
    return {task: sum(shares) / len(shares) for task, shares in found.items()}
