"""Weights learned from votes: the dimension weights whose overall score best predicts which of
two runs people preferred (``arena weights fit``, docs/community.md).

Each vote compares two runs of one task, so their difficulty multiplier is the same and the
weighted sum of their dimension scores is what differs. The model::

    P(a wins) = logistic(k * sum_d w_d * (s_a,d - s_b,d) / 100),   w_d >= 0, sum_d w_d = 1, k >= 0

is fitted by maximum likelihood as ``beta_d = k * w_d >= 0`` (projected Newton), a tie half a
win each; then ``k = sum beta`` and ``w = beta / k``. Intervals come from a bootstrap over voters
(a voter's votes drawn together: they share the voter's taste), and the weights are judged by
cross-validated vote prediction, folds by voter, against the base profile's weights (whose
``k`` alone is fitted on each training fold).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import numpy as np
import tomli_w
from attrs import frozen

from arena_core.model.errors import ArenaError
from arena_core.model.records import Evaluation
from arena_core.model.votes import Vote, last_votes, points
from arena_core.stats.battles import log_logistic, logistic

__all__ = ["FOLDS", "Prediction", "WeightFit", "fit_from_votes", "fit_weights", "learned_profile", "predicted"]

#: Cross-validation folds (by voter).
FOLDS = 5


@frozen
class Prediction:
    """How well weights predict held-out votes."""

    accuracy: float
    """Share of decisive votes whose winner has the higher predicted score (a predicted tie half)."""
    log_loss: float
    """Mean negative log-likelihood per vote (ties half a win)."""


@frozen
class WeightFit:
    """Learned weights: per dimension, the weight and its interval; how sharply the overall
    score predicts the votes; and how well, held out, against the base profile."""

    dimensions: tuple[str, ...]
    weights: np.ndarray
    low: np.ndarray
    high: np.ndarray
    sharpness: float
    """``k``: log-odds per point of overall score (per 100 points: ``k``)."""
    votes: int
    voters: int
    fitted: Prediction
    """Cross-validated, of the learned weights."""
    base: Prediction
    """Cross-validated, of the base profile's weights."""


def fit_weights(
    differences: np.ndarray,
    outcome: np.ndarray,
    voter_of: np.ndarray,
    dimensions: Sequence[str],
    base: np.ndarray,
    *,
    resamples: int = 1000,
    seed: int = 20240601,
    confidence_level: float = 0.95,
) -> WeightFit:
    """The learned weights of ``dimensions`` from votes: ``differences[i, d]`` is run a's score
    on dimension d minus run b's, ``outcome[i]`` what a earned (1, 0.5, 0), ``voter_of[i]`` the
    voter's index; ``base[i]`` the base profile's weighted sum of the differences for vote i
    (each task's own profile: categories may weigh differently).

    :raises ArenaError: the votes prefer higher scores on no dimension (every fitted weight 0).
    """
    scaled = differences / 100.0
    beta = _fit(scaled, outcome, None)
    if beta.sum() <= 0:
        raise ArenaError("weights fit: the votes prefer higher scores on no dimension; no weights to learn")
    voters = int(voter_of.max()) + 1
    rng = np.random.default_rng(seed)
    drawn = np.empty((resamples, len(dimensions)))
    for r in range(resamples):  # a voter drawn n times weighs their votes n times
        weights = np.bincount(rng.integers(0, voters, voters), minlength=voters)[voter_of].astype(float)
        found = _fit(scaled, outcome, beta, weights)
        drawn[r] = found / found.sum() if found.sum() > 0 else np.nan
    alpha = (1 - confidence_level) / 2
    low, high = np.nanquantile(drawn, alpha, axis=0), np.nanquantile(drawn, 1 - alpha, axis=0)
    fitted, based = _cross_validated(scaled, outcome, voter_of, base / 100.0, seed)
    return WeightFit(
        tuple(dimensions), beta / beta.sum(), low, high, float(beta.sum()), len(outcome), voters, fitted, based
    )


def fit_from_votes(
    votes: Sequence[Vote], evaluations: Sequence[Evaluation], profiles: Mapping[str, Mapping[str, float]],
    both_bad: str, *, resamples: int, seed: int,
) -> WeightFit:  # fmt: skip
    """The learned weights from ``votes`` between the runs ``evaluations`` scored.

    :raises ArenaError: the tasks' profiles weigh different dimensions, or no vote is usable.
    """
    by_id = {e.submission_id: e for e in evaluations}
    dimension_sets = {tuple(sorted(profiles[e.weight_profile])) for e in evaluations}
    if len(dimension_sets) > 1:
        raise ArenaError(
            "weights fit: the tasks' weight profiles weigh different dimensions "
            f"({'; '.join(', '.join(d) for d in sorted(dimension_sets))}): one set of weights cannot serve them all"
        )
    dimensions = list(profiles[evaluations[0].weight_profile])
    rows, outcome, voters, base = [], [], [], []
    voter_index: dict[str, int] = {}
    for vote in last_votes(votes):
        if both_bad == "drop" and vote.winner == "both_bad":
            continue
        a, b = by_id.get(vote.a), by_id.get(vote.b)
        if a is None or b is None or any(d not in a.scores or d not in b.scores for d in dimensions):
            continue
        difference = [a.scores[d] - b.scores[d] for d in dimensions]
        rows.append(difference)
        outcome.append(points(vote))
        voters.append(voter_index.setdefault(vote.voter, len(voter_index)))
        weights = profiles[a.weight_profile]
        base.append(math.fsum(weights[d] * x for d, x in zip(dimensions, difference, strict=True)))
    if not rows:
        raise ArenaError("weights fit: no vote compares two runs scored on every dimension")
    return fit_weights(np.array(rows), np.array(outcome), np.array(voters), dimensions, np.array(base),
                       resamples=resamples, seed=seed)  # fmt: skip


def learned_profile(found: WeightFit, profiles: Sequence[str], base: str) -> str:
    """The profile file: the learned weights for every weight profile the tasks use."""
    rounded = [round(float(w), 6) for w in found.weights]
    largest = int(np.argmax(rounded))
    rounded[largest] = round(1.0 - math.fsum(w for i, w in enumerate(rounded) if i != largest), 6)
    weights = dict(zip(found.dimensions, rounded, strict=True))
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    header = (
        f"# Weights learned by `arena weights fit` on {when} from {found.votes} votes by {found.voters} voters\n"
        f"# (base profile {base}); held-out accuracy {found.fitted.accuracy:.3f}, base {found.base.accuracy:.3f}.\n"
    )
    return header + tomli_w.dumps({"weights": dict.fromkeys(profiles, weights)})


def predicted(scaled: np.ndarray, outcome: np.ndarray, beta: np.ndarray) -> Prediction:
    """How ``beta`` (``k * w``) predicts the votes of ``scaled`` differences (score / 100)."""
    margin = scaled @ beta
    decisive = outcome != 0.5
    right = np.where(margin == 0, 0.5, (margin > 0) == (outcome == 1.0))
    accuracy = float(right[decisive].mean()) if decisive.any() else float("nan")
    return Prediction(accuracy, float(-np.mean(_loglik(margin, outcome))))


def _fit(
    scaled: np.ndarray, outcome: np.ndarray, start: np.ndarray | None, weights: np.ndarray | None = None
) -> np.ndarray:
    """``beta >= 0`` maximising the (``weights``-weighted) likelihood of ``outcome`` under
    ``logistic(scaled @ beta)``:
    projected Newton (a coordinate at 0 whose gradient points below 0 stays there; a step that
    would cross 0 is shortened to it), each step halved until the likelihood rises. The
    likelihood is concave, so its maximum over the orthant is where this stops (checked against
    L-BFGS-B with bounds in tests/test_learned_weights.py)."""
    w = np.ones(len(outcome)) if weights is None else weights
    beta = np.zeros(scaled.shape[1]) if start is None else np.maximum(start, 0.0)
    current = w @ _loglik(scaled @ beta, outcome)
    for _ in range(100):
        p = logistic(scaled @ beta)
        gradient = scaled.T @ (w * (outcome - p))
        free = (beta > 0) | (gradient > 0)
        step = np.zeros_like(beta)
        while free.any():  # a coordinate at 0 whose step points below 0 is held there, and the step found again
            hessian = (scaled[:, free] * (w * p * (1 - p))[:, None]).T @ scaled[:, free]
            step[:] = 0.0
            step[free] = np.linalg.lstsq(hessian, gradient[free], rcond=None)[0]
            held = free & (beta <= 0) & (step < 0)
            if not held.any():
                break
            free &= ~held
        if not free.any():
            break
        crossing = step < 0
        if crossing.any():  # stop at the bound the step would cross first
            step *= min(1.0, float(np.min(beta[crossing] / -step[crossing])))
        for _ in range(50):
            trial = np.maximum(beta + step, 0.0)
            value = w @ _loglik(scaled @ trial, outcome)
            if value >= current - 1e-12:
                break
            step /= 2
        beta, current = trial, value
        if np.max(np.abs(step)) < 1e-10:
            break
    return beta


def _cross_validated(
    scaled: np.ndarray, outcome: np.ndarray, voter_of: np.ndarray, base: np.ndarray, seed: int
) -> tuple[Prediction, Prediction]:
    """Held-out prediction of the learned and the base weights, ``FOLDS`` folds by voter."""
    voters = int(voter_of.max()) + 1
    fold_of = np.random.default_rng(seed).permutation(voters) % FOLDS
    held = fold_of[voter_of]
    fitted, based = np.zeros(len(outcome)), np.zeros(len(outcome))
    for fold in range(min(FOLDS, voters)):
        test, train = held == fold, held != fold
        if not test.any() or not train.any():
            continue
        fitted[test] = scaled[test] @ _fit(scaled[train], outcome[train], None)
        k = _fit(base[train][:, None], outcome[train], None)[0]
        based[test] = k * base[test]
    return _prediction(fitted, outcome), _prediction(based, outcome)


def _prediction(margin: np.ndarray, outcome: np.ndarray) -> Prediction:
    return predicted(margin[:, None], outcome, np.ones(1))


def _loglik(margin: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    found: np.ndarray = outcome * log_logistic(margin) + (1 - outcome) * log_logistic(-margin)
    return found
