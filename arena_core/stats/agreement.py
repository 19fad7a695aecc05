"""How far a judge agrees with people, and a pass rate corrected by people's labels.

- **Agreement** of two raters: the share of items they give the same verdict.
- **Cohen's kappa**: agreement beyond what two raters' own rates of saying "met" give by chance,
  ``(p_o - p_e) / (1 - p_e)`` (Cohen 1960), as scikit-learn's ``cohen_kappa_score``.
- **Krippendorff's alpha** (nominal): ``1 - D_o / D_e`` from the coincidence matrix of every
  pair of values given to one item by different raters, any number of raters per item, missing
  ratings allowed, items with a single rating left out (Krippendorff 2011), as the
  ``krippendorff`` package computes it.
- **The prediction-powered mean** (Angelopoulos et al. 2023, *Prediction-powered inference*):
  the judge's verdicts over every item, corrected by the mean of (label - judge) over the items
  people labelled; its variance is the sum of the two parts' (the judge's spread over ``N`` items,
  the correction's over ``n``, each the plain variance over its items, as ``ppi-python``), so
  its interval is valid whatever the judge's bias, when the labelled items are a random sample
  of the items. ``ppi-python``'s ``ppi_mean_ci`` with ``lam=1``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from attrs import frozen

__all__ = ["Confusion", "cohen_kappa", "confusion", "krippendorff_alpha", "ppi_mean"]


@frozen
class Confusion:
    """A judge's verdicts against people's: true positives (both met), false positives (the judge
    says met, people not), false negatives, true negatives."""

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def sensitivity(self) -> float:
        """Of the items people say are met, the share the judge says are met (NaN without any)."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else math.nan

    @property
    def specificity(self) -> float:
        """Of the items people say are not met, the share the judge says are not met."""
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else math.nan


def confusion(judge: Sequence[bool], people: Sequence[bool]) -> Confusion:
    j, p = np.asarray(judge, dtype=bool), np.asarray(people, dtype=bool)
    return Confusion(int((j & p).sum()), int((j & ~p).sum()), int((~j & p).sum()), int((~j & ~p).sum()))


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's kappa of two raters' verdicts on the same items; NaN with no item, and where chance
    agreement is 1 (both raters say one and the same thing of every item), as scikit-learn."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(x)
    if n == 0:
        return math.nan
    observed = float(np.mean(x == y))
    expected = float(np.mean(x) * np.mean(y) + (1 - np.mean(x)) * (1 - np.mean(y)))
    if expected == 1.0:
        return math.nan
    return (observed - expected) / (1 - expected)


def krippendorff_alpha(ratings: np.ndarray) -> float:
    """Krippendorff's alpha, nominal, of a ``(raters, items)`` array of 0, 1 or NaN (not rated);
    NaN when no item has two ratings or every rating is the same value."""
    data = np.asarray(ratings, dtype=float)
    values = np.unique(data[~np.isnan(data)])
    if len(values) == 0:
        return math.nan
    counts = np.stack([(data == v).sum(axis=0) for v in values])  # (values, items)
    pairable = counts.sum(axis=0)
    counts, pairable = counts[:, pairable >= 2], pairable[pairable >= 2]
    if counts.shape[1] == 0:
        return math.nan
    coincidence = (counts[:, None, :] * counts[None, :, :]).astype(float)  # o_ck before the diagonal fix
    for k in range(len(values)):
        coincidence[k, k] -= counts[k]
    coincidence = (coincidence / (pairable - 1)).sum(axis=2)
    marginals = coincidence.sum(axis=1)
    total = marginals.sum()
    disagreement = np.ones((len(values), len(values))) - np.eye(len(values))
    observed = float((coincidence * disagreement).sum())
    expected = float((np.outer(marginals, marginals) * disagreement).sum() / (total - 1))
    if expected == 0:
        return math.nan
    return 1.0 - observed / expected


def ppi_mean(labels: Sequence[float] | np.ndarray, judged: Sequence[float] | np.ndarray,
             everything: Sequence[float] | np.ndarray, confidence_level: float = 0.95) -> tuple[float, float, float]:  # fmt: skip
    """The prediction-powered mean and its interval: ``(mean, low, high)``.

    :param labels: people's verdicts on the labelled items (1 or 0).
    :param judged: the judge's verdicts on the same items, in the same order.
    :param everything: the judge's verdicts on every item the mean is of (labelled or not).
    """
    from scipy.special import ndtri  # the normal quantile: scipy.stats' norm.ppf, without importing scipy.stats

    y, f, big = (np.asarray(v, dtype=float) for v in (labels, judged, everything))
    n, total = len(y), len(big)
    if n == 0 or total == 0:
        return math.nan, math.nan, math.nan
    rectifier = y - f
    estimate = float(big.mean() + rectifier.mean())
    variance = float(big.var() / total) + float(rectifier.var() / n)  # ddof 0, as ppi-python
    half = float(ndtri(1 - (1 - confidence_level) / 2)) * math.sqrt(variance)
    return estimate, estimate - half, estimate + half
