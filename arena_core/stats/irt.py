"""Item response theory over a board: abilities of groups and difficulties of tasks, learned
from the verdicts.

A task mean scores a group by the tasks it happened to run; when groups ran different tasks,
an easy draw looks like skill. The Rasch model (1PL) explains each verdict by the group's
ability and the task's difficulty, ``P(solved) = sigmoid(ability - difficulty)``, so a group's
ability is measured against the difficulty of what it ran. The 2PL model adds a discrimination
per task, ``sigmoid(discrimination * (ability - difficulty))``.

Verdicts are the runs' correctness scores as fractions (a solved run 1, a failed one 0, partial
credit in between: a fractional response), each (group, task) cell weighing as many runs as it
holds. The fit is a penalised joint maximum likelihood: Gaussian priors on abilities and
difficulties (and on the log discrimination) keep a task that every group or no group solved
finite. Rasch is solved by Newton's method, 2PL by Fisher scoring from the Rasch fit (each by
alternating Newton steps on boards of many groups); all bootstrap resamples at once: the tasks'
weights of a resample multiply their cells.
"""

from __future__ import annotations

import numpy as np
from attrs import frozen

from arena_core.stats.battles import logistic
from arena_core.stats.irtprior import DifficultyPrior
from arena_core.stats.tasktable import TaskTable

__all__ = [
    "FISHER_GROUPS", "MAX_ITERATIONS", "MAX_STEP", "MODELS", "NEWTON_GROUPS", "TOLERANCE", "Z95", "IrtFit",
    "ability_prior", "expected_scores", "fit", "information", "probabilities", "rasch_factors", "responses",
    "slope_prior", "standard_errors",
]  # fmt: skip

#: The standard normal's 97.5th percentile: a 95% interval is this many standard errors each side.
Z95 = 1.959963984540054

#: The models :func:`fit` knows: ``rasch`` (1PL) and ``2pl``.
MODELS = ("rasch", "2pl")

#: Prior standard deviations (logits). Abilities are N(0, 2) under Rasch; under 2PL N(0, 1),
#: which also fixes the scale the discriminations are on. Difficulties N(0, 2) (or about their
#: features' prediction: irtprior.py); log discriminations N(0, 0.5): most tasks discriminate
#: between 0.4 and 2.7 times the average.
_ABILITY_SD = {"rasch": 2.0, "2pl": 1.0}
_LOG_DISCRIMINATION_SD = 0.5
#: The most any parameter moves in one step (logits): a far start's first steps overshoot.
MAX_STEP = 1.0
#: A fit has converged when no parameter moved more than this (logits) in its last step.
TOLERANCE = 1e-6
#: Steps a fit takes at most (:attr:`IrtFit.iterations` says when it stopped there).
MAX_ITERATIONS = 500
#: Up to this many groups, Rasch is fitted by Newton's method (a groups x groups system per
#: step); beyond, by alternating steps, which need more of them but no system to solve.
NEWTON_GROUPS = 200
#: Up to this many groups, 2PL is fitted by Fisher scoring (a ``groups x groups`` system per
#: step and resample: 32 MB and a fraction of a second at 2,000); beyond, by alternating steps.
FISHER_GROUPS = 2_000
#: Fisher scoring's steps before alternating steps take over (:func:`_two_pl`); it converged in
#: 13-31 on boards of 25-1,000 groups x 500 tasks.
FISHER_STEPS = 50
#: Resamples fitted at once: the (resamples, groups, tasks) arrays hold about this many cells. A
#: couple of megabytes each stay in the processor's cache through a round's dozen passes: a 2PL
#: bootstrap of 25 groups x 500 tasks ran in half the time it took with 4,000,000 cells.
_CHUNK_CELLS = 250_000


@frozen
class IrtFit:
    """Abilities ``(resamples, groups)``, difficulties and discriminations ``(resamples, tasks)``."""

    abilities: np.ndarray
    difficulties: np.ndarray
    discriminations: np.ndarray
    iterations: int
    """Newton iterations the slowest chunk took (``MAX_ITERATIONS``: it stopped there)."""
    effects: np.ndarray
    """``(resamples, features)``: the features' effects on the difficulties (none without features)."""
    residual_sd: np.ndarray
    """``(resamples,)``: the spread of the difficulties about their prior mean (2 without features)."""


def _rasch_chunk(
    n: np.ndarray, s: np.ndarray, prior: DifficultyPrior, theta: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Rasch by Newton's method on abilities and difficulties jointly, from ``theta`` and ``b``:
    the difficulties' block of the Hessian is diagonal, so each step solves a ``groups x groups``
    system (its Schur complement) per resample. Converges in a handful of steps."""
    g = n.shape[1]
    theta, b = theta.copy(), b.copy()
    prior_theta = 1 / _ABILITY_SD["rasch"] ** 2
    iterations = 0
    while iterations < MAX_ITERATIONS:
        iterations += 1
        p = logistic(theta[:, :, None] - b[:, None, :])
        residual, c = s - n * p, n * p * (1 - p)
        grad_theta = residual.sum(axis=2) - prior_theta * theta
        grad_b = -residual.sum(axis=1) - prior.precision * (b - prior.mean)
        d = c.sum(axis=1) + prior.precision  # (r, t)
        scaled = c / d[:, None, :]
        schur = -np.matmul(scaled, np.swapaxes(c, 1, 2))
        schur[:, np.arange(g), np.arange(g)] += c.sum(axis=2) + prior_theta
        step_theta = np.linalg.solve(schur, (grad_theta + np.einsum("rgt,rt->rg", scaled, grad_b))[..., None])[..., 0]
        step_b = (grad_b + np.einsum("rgt,rg->rt", c, step_theta)) / d
        step_theta, step_b = np.clip(step_theta, -MAX_STEP, MAX_STEP), np.clip(step_b, -MAX_STEP, MAX_STEP)
        theta += step_theta
        b += step_b
        moved = prior.update(b, c.sum(axis=1))
        if max(np.abs(step_theta).max(initial=0.0), np.abs(step_b).max(initial=0.0), moved) < TOLERANCE:
            break
    return theta, b, iterations


def _alternating_chunk(
    n: np.ndarray,
    s: np.ndarray,
    theta: np.ndarray,
    b: np.ndarray,
    model: str,
    prior: DifficultyPrior,
    alpha: np.ndarray | None = None,
    budget: int = MAX_ITERATIONS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Alternating Newton steps on abilities, difficulties and (2PL) log discriminations, from
    ``theta``, ``b`` and ``alpha`` (0 by default): each step costs one pass over the cells, with
    no ``groups x groups`` system to solve, so it serves boards of many groups (Rasch past
    :data:`NEWTON_GROUPS`, 2PL past :data:`FISHER_GROUPS`)."""
    alpha = np.zeros_like(b) if alpha is None else alpha.copy()
    slopes = model == "2pl"
    prior_theta, prior_alpha = 1 / _ABILITY_SD[model] ** 2, 1 / _LOG_DISCRIMINATION_SD**2
    iterations = 0
    while iterations < budget:
        iterations += 1
        a = np.exp(alpha)
        p = logistic(a[:, None, :] * (theta[:, :, None] - b[:, None, :]))
        residual, spread = s - n * p, n * p * (1 - p)
        step_theta = (np.einsum("rgt,rt->rg", residual, a) - prior_theta * theta) / (
            np.einsum("rgt,rt->rg", spread, a * a) + prior_theta
        )
        theta = theta + np.clip(step_theta, -MAX_STEP, MAX_STEP)
        gap = theta[:, :, None] - b[:, None, :]
        p = logistic(a[:, None, :] * gap)
        residual, spread = s - n * p, n * p * (1 - p)
        information = a * a * spread.sum(axis=1)
        step_b = (-a * residual.sum(axis=1) - prior.precision * (b - prior.mean)) / (information + prior.precision)
        b = b + np.clip(step_b, -MAX_STEP, MAX_STEP)
        steps = [step_theta, step_b, np.array([prior.update(b, information)])]
        if slopes:
            gap = theta[:, :, None] - b[:, None, :]
            p = logistic(a[:, None, :] * gap)
            residual, spread = s - n * p, n * p * (1 - p)
            grad = a * (residual * gap).sum(axis=1) - prior_alpha * alpha
            step_alpha = grad / (a * a * (spread * gap * gap).sum(axis=1) + prior_alpha)
            alpha = alpha + np.clip(step_alpha, -MAX_STEP, MAX_STEP)
            steps.append(step_alpha)
        # Moving every ability and difficulty by one amount leaves each cell's odds as they
        # were: only the priors pull along that direction, where steps one block at a time
        # crawl (136 steps for a Rasch board of 25 groups x 500 tasks, 10 with this one). The
        # priors' optimum along it is reached exactly in one step.
        shift = -(prior_theta * theta.sum(axis=1) + (prior.precision * (b - prior.mean)).sum(axis=1)) / (
            prior_theta * theta.shape[1] + prior.precision[:, 0] * b.shape[1]
        )
        theta, b = theta + shift[:, None], b + shift[:, None]
        steps.append(shift)
        if max(np.abs(x).max(initial=0.0) for x in steps) < TOLERANCE:
            break
        # Resamples converge at different rounds: once half of them have, the rest go on alone
        # (a 2PL bootstrap's slowest resamples took several times its median one's rounds).
        # With features the effects' change is the chunk's, not a resample's: they go on together.
        if prior.features is None:
            own = np.abs(shift)
            for step in (step_theta, step_b, *([step_alpha] if slopes else [])):
                own = np.maximum(own, np.abs(step).max(axis=1, initial=0.0))
            active = np.flatnonzero(own >= TOLERANCE)
            if len(active) <= len(theta) // 2:
                sub = prior.take(active)
                theta[active], b[active], found, more = _alternating_chunk(
                    n[active], s[active], theta[active], b[active], model, sub, alpha[active], budget - iterations
                )
                prior.put(active, sub)
                alpha[active] = np.log(found)
                return theta, b, np.exp(alpha), iterations + more
    return theta, b, np.exp(alpha), iterations


def _fisher_chunk(
    n: np.ndarray,
    s: np.ndarray,
    theta: np.ndarray,
    b: np.ndarray,
    alpha: np.ndarray,
    prior: DifficultyPrior,
    budget: int = MAX_ITERATIONS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """2PL by Fisher scoring on abilities, difficulties and log slopes jointly, from ``theta``,
    ``b`` and ``alpha``: each step solves the expected information's system, whose task blocks
    (a difficulty and a log slope) meet no other task's, by one ``groups x groups`` Schur
    complement per resample. The expected information is positive definite wherever the fit
    is (the observed one need not be, far from the mode). From the Rasch start it took 13-14
    steps at 500-1,000 groups x 500 tasks, where alternating steps took 195 and 311 rounds.
    Stops after ``budget`` steps, converged or not."""
    g = n.shape[1]
    prior_theta, prior_alpha = 1 / _ABILITY_SD["2pl"] ** 2, 1 / _LOG_DISCRIMINATION_SD**2
    iterations = 0
    while iterations < budget:
        iterations += 1
        a = np.exp(alpha)
        z = a[:, None, :] * (theta[:, :, None] - b[:, None, :])
        p = logistic(z)
        c, residual = n * p * (1 - p), s - n * p
        grad_theta = np.einsum("rgt,rt->rg", residual, a) - prior_theta * theta
        grad_b = -a * residual.sum(axis=1) - prior.precision * (b - prior.mean)
        grad_alpha = (residual * z).sum(axis=1) - prior_alpha * alpha
        # The information's blocks: each cell's c times the outer product of its logit's
        # derivatives (a, -a, z) in (ability, difficulty, log slope); the priors on the diagonal.
        by_b, by_alpha = -c * (a * a)[:, None, :], c * z * a[:, None, :]  # (r, g, t)
        bb = a * a * c.sum(axis=1) + prior.precision
        ba, aa = -a * (c * z).sum(axis=1), (c * z * z).sum(axis=1) + prior_alpha
        det = bb * aa - ba * ba
        i_bb, i_ba, i_aa = aa / det, -ba / det, bb / det  # each task block's inverse
        schur = -sum(
            np.matmul(left * inverse[:, None, :], np.swapaxes(right, 1, 2))
            for left, inverse, right in (
                (by_b, i_bb, by_b), (by_b, i_ba, by_alpha), (by_alpha, i_ba, by_b), (by_alpha, i_aa, by_alpha)
            )
        )  # fmt: skip
        schur[:, np.arange(g), np.arange(g)] += np.einsum("rgt,rt->rg", c, a * a) + prior_theta
        own_b, own_alpha = i_bb * grad_b + i_ba * grad_alpha, i_ba * grad_b + i_aa * grad_alpha
        right = grad_theta - np.einsum("rgt,rt->rg", by_b, own_b) - np.einsum("rgt,rt->rg", by_alpha, own_alpha)
        step_theta = np.linalg.solve(schur, right[..., None])[..., 0]
        left_b = grad_b - np.einsum("rgt,rg->rt", by_b, step_theta)
        left_alpha = grad_alpha - np.einsum("rgt,rg->rt", by_alpha, step_theta)
        steps = [
            np.clip(x, -MAX_STEP, MAX_STEP)
            for x in (step_theta, i_bb * left_b + i_ba * left_alpha, i_ba * left_b + i_aa * left_alpha)
        ]
        theta, b, alpha = theta + steps[0], b + steps[1], alpha + steps[2]
        moved = prior.update(b, a * a * c.sum(axis=1))
        if max(max(np.abs(x).max(initial=0.0) for x in steps), moved) < TOLERANCE:
            break
    return theta, b, np.exp(alpha), iterations


def _two_pl(
    n: np.ndarray, s: np.ndarray, theta: np.ndarray, b: np.ndarray, prior: DifficultyPrior, alpha: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The 2PL fit from ``theta``, ``b`` and ``alpha``: by Fisher scoring up to
    :data:`FISHER_GROUPS` groups, by alternating steps beyond (no system to solve). Fisher
    scoring's steps can overshoot where the expected information understates the curvature,
    and swing about the mode (a bootstrap resample of 25 groups x 500 tasks still moved 1e-5
    after 200 steps): after :data:`FISHER_STEPS` of them the alternating steps, which ascend
    one block at a time, go on from where they stopped."""
    iterations = 0
    if n.shape[1] <= FISHER_GROUPS:
        theta, b, a, iterations = _fisher_chunk(n, s, theta, b, alpha, prior, FISHER_STEPS)
        if iterations < FISHER_STEPS:
            return theta, b, a, iterations
        alpha = np.log(a)
    theta, b, a, more = _alternating_chunk(n, s, theta, b, "2pl", prior, alpha, MAX_ITERATIONS - iterations)
    return theta, b, a, iterations + more


def fit(
    counts: np.ndarray,
    solved: np.ndarray,
    weights: np.ndarray | None = None,
    model: str = "rasch",
    features: np.ndarray | None = None,
) -> IrtFit:
    """Fit ``model`` to a board's verdicts.

    :param counts: ``(groups, tasks)`` runs per cell (0 where a group did not run a task).
    :param solved: ``(groups, tasks)`` mean response of the cell's runs, 0 to 1 (any value
        where ``counts`` is 0).
    :param weights: ``(resamples, tasks)`` how many times each task is drawn; one row of ones
        when omitted.
    :param features: ``(tasks, features)``: each task's features (indicators, standardised
        numbers): the difficulties' prior is then centred on their linear
        prediction (:mod:`arena_core.stats.irtprior`), whose effects the fit reports.
    """
    if model not in MODELS:
        raise ValueError(f"model: expected one of {', '.join(MODELS)}, got {model!r}")
    counts = np.asarray(counts, dtype=float)
    solved = np.where(counts > 0, np.nan_to_num(np.asarray(solved, dtype=float)), 0.0)
    weights = np.ones((1, counts.shape[1])) if weights is None else np.asarray(weights, dtype=float)
    # Resamples start at the whole board's fit, which each is near: a few steps from there
    # reach the optimum that many more reach from zero (the 2PL's Rasch start is skipped).
    start = fit(counts, solved, None, model, features) if len(weights) > 1 else None
    chunk = max(1, _CHUNK_CELLS // max(1, counts.size))
    parts, slowest = [], 0
    for start_row in range(0, len(weights), chunk):
        w = weights[start_row : start_row + chunk, None, :]
        n = w * counts[None]
        prior = DifficultyPrior(features, w[:, 0, :])
        if start is not None:
            theta, b = (np.repeat(x, len(w), axis=0) for x in (start.abilities, start.difficulties))
        else:
            theta, b = np.zeros((len(w), counts.shape[0])), np.zeros((len(w), counts.shape[1]))
        if start is not None and model == "2pl":  # resamples near the whole fit: alternating steps, each alone
            alpha = np.repeat(np.log(start.discriminations), len(w), axis=0)
            theta, b, a, iterations = _alternating_chunk(n, n * solved[None], theta, b, "2pl", prior, alpha)
        else:
            if counts.shape[0] <= NEWTON_GROUPS:
                theta, b, iterations = _rasch_chunk(n, n * solved[None], prior, theta, b)
                a = np.ones_like(b)
            else:
                theta, b, a, iterations = _alternating_chunk(n, n * solved[None], theta, b, "rasch", prior)
            if model == "2pl":
                scale, prior = _ABILITY_SD["rasch"], DifficultyPrior(features, w[:, 0, :])
                theta, b, a, more = _two_pl(n, n * solved[None], theta / scale, b / scale, prior, np.zeros_like(b))
                iterations += more
        spread = np.sqrt(1 / prior.precision[:, 0])
        parts.append((theta, b, a, prior.effects if prior.effects is not None else np.zeros((len(w), 0)), spread))
        slowest = max(slowest, iterations)
    abilities, difficulties, discriminations, effects, spreads = (
        np.concatenate([p[i] for p in parts]) for i in range(5)
    )
    return IrtFit(abilities, difficulties, discriminations, slowest, effects, spreads)


def responses(table: TaskTable) -> tuple[np.ndarray, np.ndarray] | None:
    """What :func:`fit` reads of a board: ``(counts, solved)``, the runs per (group, task) cell
    with a correctness score and their mean correctness as a share (0-1); ``None`` when no run
    has a correctness score (a profile without the dimension)."""
    correctness = table.dimension_means.get("correctness")
    if correctness is None:
        return None
    return np.where(np.isnan(correctness), 0.0, table.counts), correctness / 100


def probabilities(found: IrtFit) -> np.ndarray:
    """``(resamples, groups, tasks)``: each group's probability of solving each task at the fit."""
    gap = found.abilities[:, :, None] - found.difficulties[:, None, :]
    return logistic(found.discriminations[:, None, :] * gap)


def expected_scores(found: IrtFit, weights: np.ndarray | None = None) -> np.ndarray:
    """``(resamples, groups)``: 100 x each group's expected share of the board's tasks solved,
    at its fitted ability, over the tasks drawn (weighted by ``weights``). On the scale of every
    other leaderboard score, and ordered as the abilities are."""
    tasks = found.difficulties.shape[1]
    weights = np.ones((len(found.abilities), tasks)) if weights is None else np.asarray(weights, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = (
            100 * np.einsum("rgt,rt->rg", probabilities(found), weights) / weights.sum(axis=1, keepdims=True)
        )
    return out


def rasch_factors(abilities: np.ndarray, difficulties: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(exp(c - abilities), exp(difficulties - c))``, ``c`` each row's mean ability: under
    Rasch a cell's ``exp(difficulty - ability)`` is their product, an exponential per group
    and per task where evaluating the cells took one per cell (about half their time). ``None``
    where a product could overflow (a difficulty over 700 logits above an ability: a cell would
    read inf / inf, or inf x 0) or a factor does: the cells then take their own exponentials."""
    if not abilities.size or not difficulties.size:
        return None
    if (difficulties.max(axis=-1) - abilities.min(axis=-1)).max() > 700:
        return None
    centre = abilities.mean(axis=-1, keepdims=True)
    with np.errstate(over="ignore"):
        factors = np.exp(centre - abilities), np.exp(difficulties - centre)
    return factors if np.isfinite(factors[0]).all() and np.isfinite(factors[1]).all() else None


def information(found: IrtFit, row: int = 0) -> np.ndarray:
    """``(tasks,)``: each task's Fisher information about the groups' abilities, summed over
    the groups at their fitted abilities (resample ``row``): ``sum_g a^2 p (1 - p)``."""
    a, p = found.discriminations[row], probabilities(found)[row]
    out: np.ndarray = (a * a * p * (1 - p)).sum(axis=0)
    return out


def standard_errors(found: IrtFit, counts: np.ndarray, model: str = "rasch") -> tuple[np.ndarray, np.ndarray]:
    """``(groups,)`` and ``(tasks,)``: the standard errors of the abilities and difficulties of
    resample 0, from the penalised likelihood's curvature at the fit (each parameter's own
    information, the others held: ``sum a^2 n p (1 - p)`` plus its prior's precision)."""
    a, p = found.discriminations[0], probabilities(found)[0]
    spread = np.asarray(counts, dtype=float) * p * (1 - p) * (a * a)[None, :]
    ability = spread.sum(axis=1) + 1 / _ABILITY_SD[model] ** 2
    difficulty = spread.sum(axis=0) + 1 / found.residual_sd[0] ** 2
    return 1 / np.sqrt(ability), 1 / np.sqrt(difficulty)


def ability_prior(model: str) -> float:
    """The standard deviation of the abilities' prior under ``model`` (logits)."""
    return _ABILITY_SD[model]


def slope_prior() -> float:
    """The standard deviation of the log slopes' prior under 2PL (logits)."""
    return _LOG_DISCRIMINATION_SD
