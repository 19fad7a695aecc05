"""The tasks' difficulty prior of the item response fit, with or without task features.

Without features a difficulty's prior is ``N(0, 2)`` (logits), as it always was. With a
feature matrix ``X`` (one row per task: indicators of categories, standardised numbers) it is ``N(X beta, sigma)``: explanatory item response theory, a task's difficulty is
a linear function of its features plus its own residual. The features are centred (over the
tasks, as each resample weighs them), so the prior's mean over the tasks stays 0, as without
features: the difficulties' location is anchored as it was, whichever value is the reference
(an intercept would be a second anchor beside the abilities' prior, and the fit would crawl
along the ridge between the two). ``beta`` (the features' effects, prior
``N(0, 2)`` each) and ``sigma`` (the residuals' spread) are re-estimated after every step of
the fit from the current difficulties: ``beta`` by the weighted ridge regression the joint
posterior's mode solves, ``sigma^2`` by the EM update of a random effect's variance (the mean of
each residual's square plus its posterior variance, so it cannot collapse to zero). A task no
group ran has no information: its difficulty is its features' prediction, ``X beta``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DIFFICULTY_SD", "DifficultyPrior", "effect_errors"]

#: The difficulties' prior standard deviation without features (logits).
DIFFICULTY_SD = 2.0
#: The prior standard deviation of a feature's effect (logits per unit: per indicator, or per
#: standard deviation of a number).
EFFECT_SD = 2.0
#: The smallest residual spread allowed (logits): features never pin a difficulty exactly.
_SMALLEST_SD = 0.05


class DifficultyPrior:
    """The prior mean and precision of each resample's difficulties, ``(resamples, tasks)`` and
    ``(resamples, 1)``, and the features' effects ``(resamples, features)`` when there are features."""

    def __init__(self, features: np.ndarray | None, weights: np.ndarray) -> None:
        resamples, tasks = weights.shape
        self.features = features
        self.weights = weights
        self.mean = np.zeros((resamples, tasks))
        self.precision = np.full((resamples, 1), 1 / DIFFICULTY_SD**2)
        self.effects = None if features is None else np.zeros((resamples, features.shape[1]))

    def take(self, rows: np.ndarray) -> DifficultyPrior:
        """The prior of the resamples ``rows`` alone (a copy of their state)."""
        taken = DifficultyPrior.__new__(DifficultyPrior)
        taken.features, taken.weights = self.features, self.weights[rows]
        taken.mean, taken.precision = self.mean[rows], self.precision[rows]
        taken.effects = None if self.effects is None else self.effects[rows]
        return taken

    def put(self, rows: np.ndarray, taken: DifficultyPrior) -> None:
        """Keep the state ``taken`` (from :meth:`take` of the same ``rows``) reached."""
        self.mean[rows], self.precision[rows] = taken.mean, taken.precision
        if self.effects is not None and taken.effects is not None:
            self.effects[rows] = taken.effects

    def update(self, difficulties: np.ndarray, information: np.ndarray) -> float:
        """Re-estimate the effects and the residual spread from the current ``difficulties`` and
        each one's data ``information``; the largest change of an effect (0 without features)."""
        if self.features is None or self.effects is None:
            return 0.0
        w = self.weights
        total = np.maximum(w.sum(axis=1, keepdims=True), 1e-12)  # (r, 1)
        x = self.features[None] - ((w @ self.features) / total)[:, None, :]  # (r, t, k): centred per resample
        variance = 1 / self.precision  # (r, 1)
        normal = np.einsum("rtk,rt,rtl->rkl", x, w, x) / variance[:, :, None] + np.eye(x.shape[2]) / EFFECT_SD**2
        right = np.einsum("rtk,rt->rk", x, w * difficulties) / variance
        effects = np.linalg.solve(normal, right[..., None])[..., 0]
        change = float(np.abs(effects - self.effects).max(initial=0.0))
        self.effects = effects
        self.mean = np.einsum("rtk,rk->rt", x, effects)
        posterior = 1 / (information + self.precision)
        spread = (w * ((difficulties - self.mean) ** 2 + posterior)).sum(axis=1) / np.maximum(w.sum(axis=1), 1e-12)
        self.precision = 1 / np.maximum(spread, _SMALLEST_SD**2)[:, None]
        return change


def effect_errors(features: np.ndarray, information: np.ndarray, residual_sd: float) -> np.ndarray:
    """``(features,)``: the effects' standard errors at the fit: the inverse of the joint
    posterior's curvature in the effects once the difficulties are integrated out,
    ``X' diag(1 / (sigma^2 + 1 / I_t)) X + I / 2^2``, where ``I_t`` is task ``t``'s information."""
    weight = 1 / (residual_sd**2 + 1 / np.maximum(information, 1e-12))
    curvature = (features * weight[:, None]).T @ features + np.eye(features.shape[1]) / EFFECT_SD**2
    out: np.ndarray = np.sqrt(np.diag(np.linalg.inv(curvature)))
    return out
