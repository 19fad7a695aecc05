"""Linear normalisation between a baseline's bounds, per record and per column: the spec's shape."""

from __future__ import annotations

import numpy as np


def linear_scores(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """:func:`linear_score` over arrays, with the same floating-point operations."""
    with np.errstate(all="ignore"):
        between = (high - values) / (high - low) * 100.0
    return np.where(values <= low, 100.0, np.where(values >= high, 0.0, between))


def linear_score(value: float, low: float, high: float) -> float:
    """100 at or below ``low``, 0 at or above ``high``, linear in between (lower is better).

    The spec writes the token score as ``min(100, ratio * 100)`` and the others as
    ``ratio * 100``; between the two bounds ``ratio < 1``, so both are this.
    """
    if value <= low:
        return 100.0
    if value >= high:
        return 0.0
    return (high - value) / (high - low) * 100.0
