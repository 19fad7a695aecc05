"""Bradley-Terry ratings from votes between runs, with LMArena's style control.

Each vote is a battle between the groups of its two runs. The model is a logistic regression
without intercept, as Chatbot Arena fits it::

    logit P(a wins) = theta[group of a] - theta[group of b] + beta . x

where ``x`` holds the vote's style covariates (for each figure, the normalised difference
``(a - b) / (a + b)`` standardised over the votes) and ``beta`` their coefficients: what people
prefer for the figure itself (a longer answer, more files), apart from the groups. A tie is half
a win each (``y = 0.5``, the same likelihood as two half-weighted rows of opposite outcome).
Ratings are on the Elo scale: ``1000 + 400 * log10(e) * (theta - mean(theta))``.

The fit is Newton's method on the exact log-likelihood, with the information matrix built from
per-vote sums (``bincount``), so one step costs ``votes x figures**2``, not ``votes x groups**2``.
When some group won (or lost) every vote it played, the maximum-likelihood ratings do not exist
(they run off to infinity): ``prior`` tie games against a reference of rating 1000 are added for
every group, the board says so (:attr:`Fit.prior`).

Intervals come two ways: the sandwich (robust) covariance of the estimate, and a bootstrap over
votes (each resample refitted, warm-started from the estimate). ``tests/test_votes.py`` holds the
fit equal to a plain logistic regression (statsmodels) on the same design matrix and to
``choix``, and checks both intervals' coverage in a simulation with known ratings.
"""

from __future__ import annotations

import math

import numpy as np
from attrs import frozen

from arena_core.stats.rankranges import uniform_counts

__all__ = ["ELO_SCALE", "Battles", "Fit", "bootstrap", "fit", "log_logistic", "logistic", "needs_prior", "ratings_of"]

#: Elo points per unit of the natural-log strength: ``400 / ln 10``.
ELO_SCALE = 400.0 / math.log(10.0)
#: The prior's tie games per group, when the plain likelihood has no maximum.
PRIOR = 1.0


@frozen
class Battles:
    """Votes as the regression reads them, one entry per vote used."""

    groups: tuple[str, ...]
    first: np.ndarray
    """Group index of run ``a``."""
    second: np.ndarray
    """Group index of run ``b``."""
    outcome: np.ndarray
    """What ``a`` earned: 1, 0, or 0.5 for a tie."""
    style: np.ndarray
    """``(votes, figures)`` standardised style covariates (no columns without style control)."""
    style_names: tuple[str, ...] = ()


@frozen
class Fit:
    """A fitted model: strengths, style coefficients and the sandwich covariance of both."""

    theta: np.ndarray
    """Per group, the natural-log strength, centred (mean 0)."""
    beta: np.ndarray
    """Per style figure, its coefficient on the log-odds of winning, per standard deviation."""
    covariance: np.ndarray
    """Sandwich covariance of ``(theta, beta)``: ``groups + figures`` square."""
    prior: float
    """Tie games against a reference added per group (0: the plain likelihood)."""


def logistic(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))`` without overflow: SciPy's ``expit`` (its vectorised loop takes half
    the time of ``(1 + tanh(x / 2)) / 2``, which was half an IRT board's time), imported when
    first used: a command that fits nothing does not import SciPy for it."""
    from scipy.special import expit

    found: np.ndarray = expit(x)
    return found


def log_logistic(x: np.ndarray) -> np.ndarray:
    """``log(logistic(x))`` without overflow."""
    found: np.ndarray = -np.logaddexp(0.0, -x)
    return found


def ratings_of(theta: np.ndarray) -> np.ndarray:
    """Elo-scale ratings (mean 1000) of centred natural-log strengths."""
    ratings: np.ndarray = 1000.0 + ELO_SCALE * (theta - theta.mean(axis=-1, keepdims=True))
    return ratings


def needs_prior(battles: Battles) -> bool:
    """Whether the plain likelihood has no maximum: some group, or set of groups, never lost
    (or never won) against the others, i.e. the graph of "won a point against" is not strongly
    connected. (With style covariates this is the condition on the groups alone; a style
    column that separates the outcomes on its own is left to the bound on Newton's steps.)"""
    count = len(battles.groups)
    if count < 2:
        return False
    beat = np.zeros((count, count), dtype=bool)
    beat[battles.first[battles.outcome > 0], battles.second[battles.outcome > 0]] = True
    beat[battles.second[battles.outcome < 1], battles.first[battles.outcome < 1]] = True
    return not (_reaches_all(beat) and _reaches_all(beat.T))


def fit(battles: Battles, *, prior: float | None = None) -> Fit:
    """The maximum-likelihood fit, with ``prior`` tie games per group against a reference
    (``None``: :data:`PRIOR` where :func:`needs_prior`, else none)."""
    used = (PRIOR if needs_prior(battles) else 0.0) if prior is None else prior
    weights = np.ones(len(battles.outcome))
    params = _newton(battles, weights, np.zeros(len(battles.groups) + battles.style.shape[1]), used)
    information, gradient_outer = _information(battles, params, weights, used, sandwich=True)
    free = _free(len(battles.groups), battles.style.shape[1], used)
    inverse = np.linalg.pinv(information[np.ix_(free, free)])
    covariance = np.zeros_like(information)
    covariance[np.ix_(free, free)] = inverse @ gradient_outer[np.ix_(free, free)] @ inverse
    groups = len(battles.groups)
    centre = np.eye(len(params))
    centre[:groups, :groups] -= 1.0 / groups
    theta = params[:groups] - params[:groups].mean()
    return Fit(theta, params[groups:], centre @ covariance @ centre.T, used)


def bootstrap(battles: Battles, estimate: Fit, resamples: int, seed: int) -> np.ndarray:
    """``(resamples, groups + figures)`` refitted ``(theta, beta)``, votes drawn with
    replacement; ``theta`` centred. Votes with the same groups, outcome and no style are
    drawn as one cell, by a multinomial over cells: the same law, far fewer rows."""
    cells, counts = _cells(battles)
    rng = np.random.default_rng(seed)
    total = int(counts.sum())
    start = np.concatenate([estimate.theta, estimate.beta])
    out = np.empty((resamples, len(start)))
    for r in range(resamples):
        if len(counts) == total:
            weights = uniform_counts(rng, total, 1)[0]
        else:
            weights = rng.multinomial(total, counts / total).astype(float)
        drawn = np.flatnonzero(weights)  # about a third of the votes are not drawn: left out of the sums
        params = _newton(_rows(cells, drawn), weights[drawn], start, estimate.prior)
        groups = len(battles.groups)
        out[r] = np.concatenate([params[:groups] - params[:groups].mean(), params[groups:]])
    return out


def _rows(battles: Battles, rows: np.ndarray) -> Battles:
    return Battles(
        battles.groups, battles.first[rows], battles.second[rows], battles.outcome[rows], battles.style[rows]
    )


def _cells(battles: Battles) -> tuple[Battles, np.ndarray]:
    """Identical votes merged (only without style: style covariates make every vote its own)."""
    if battles.style.shape[1]:
        return battles, np.ones(len(battles.outcome))
    keys = np.stack([battles.first, battles.second, (battles.outcome * 2).astype(int)], axis=1)
    unique, counts = np.unique(keys, axis=0, return_counts=True)
    merged = Battles(battles.groups, unique[:, 0], unique[:, 1], unique[:, 2] / 2.0, np.zeros((len(unique), 0)))
    return merged, counts.astype(float)


def _free(groups: int, figures: int, prior: float) -> np.ndarray:
    """The parameters fitted: without a prior the last group's strength is held at 0 (the
    likelihood only knows differences); with one, the reference anchors them all."""
    keep = np.ones(groups + figures, dtype=bool)
    if prior == 0 and groups:
        keep[groups - 1] = False
    return np.flatnonzero(keep)


def _newton(battles: Battles, weights: np.ndarray, start: np.ndarray, prior: float) -> np.ndarray:
    """Newton's method from ``start`` on the weighted log-likelihood (and the prior's games);
    steps bounded while far off, so that a nearly separated fit cannot overshoot."""
    groups, figures = len(battles.groups), battles.style.shape[1]
    free = _free(groups, figures, prior)
    params = start.copy()
    if prior == 0 and groups:
        params[:groups] -= params[groups - 1]
    for _ in range(100):
        information, gradient = _information(battles, params, weights, prior, sandwich=False)
        step = np.linalg.lstsq(information[np.ix_(free, free)], gradient[free], rcond=None)[0]
        step = np.clip(step, -2.0, 2.0)
        params[free] += step
        if np.max(np.abs(step), initial=0.0) < 1e-10:
            break
    return params


def _information(
    battles: Battles, params: np.ndarray, weights: np.ndarray, prior: float, *, sandwich: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The information matrix (minus the Hessian) at ``params`` and either the gradient
    (``sandwich`` false) or the sum of per-vote outer products of the score (the sandwich's
    meat): both have the block structure of the design, built from per-vote sums."""
    groups = len(battles.groups)
    theta, beta = params[:groups], params[groups:]
    p = logistic(theta[battles.first] - theta[battles.second] + battles.style @ beta)
    residual = battles.outcome - p
    information = _outer_sum(battles, weights * p * (1.0 - p))
    own = logistic(theta)
    information[np.arange(groups), np.arange(groups)] += prior * own * (1.0 - own)
    if sandwich:
        return information, _outer_sum(battles, weights * residual**2)
    score = weights * residual
    gradient = np.concatenate(
        [
            np.bincount(battles.first, score, groups) - np.bincount(battles.second, score, groups),
            battles.style.T @ score,
        ]
    )
    gradient[:groups] += prior * (0.5 - own)
    return information, gradient


def _outer_sum(battles: Battles, d: np.ndarray) -> np.ndarray:
    """``sum_i d_i x_i x_i^T`` for the design rows ``x_i`` (+1 at a's group, -1 at b's, then the
    style covariates), without building the design."""
    groups, figures = len(battles.groups), battles.style.shape[1]
    first, second = battles.first, battles.second
    out = np.zeros((groups + figures, groups + figures))
    pairs = np.bincount(first * groups + second, d, groups * groups).reshape(groups, groups)
    out[:groups, :groups] = -(pairs + pairs.T)
    out[np.arange(groups), np.arange(groups)] = np.bincount(first, d, groups) + np.bincount(second, d, groups)
    if figures:
        weighted = battles.style * d[:, None]
        for k in range(figures):
            column = np.bincount(first, weighted[:, k], groups) - np.bincount(second, weighted[:, k], groups)
            out[:groups, groups + k] = out[groups + k, :groups] = column
        out[groups:, groups:] = battles.style.T @ weighted
    return out


def _reaches_all(adjacent: np.ndarray) -> bool:
    """Whether every node is reached from node 0 along ``adjacent``'s edges."""
    seen = np.zeros(len(adjacent), dtype=bool)
    seen[0] = True
    frontier = seen.copy()
    while frontier.any():
        frontier = adjacent[frontier].any(axis=0) & ~seen
        seen |= frontier
    return bool(seen.all())
