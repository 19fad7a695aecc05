"""Rank statistics for comparing two scorings of the same submissions, in O(n log n).

Kendall's tau-b (ties corrected, Knight's algorithm: sort by one ranking, count discordant
pairs as inversions in the other) and Spearman's rho (Pearson correlation of average ranks).
Both agree with SciPy's ``kendalltau``/``spearmanr``, which the tests check; SciPy stays an
optional dependency.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["average_ranks", "kendall_tau_b", "spearman_rho"]


def average_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing the mean of the ranks they span (SciPy's ``rankdata``)."""
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    ends = np.r_[starts[1:], len(x)]
    mean_rank = (starts + ends + 1) / 2.0  # positions start..end-1 are ranks start+1..end
    ranks = np.empty(len(x))
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def _tied_pairs(sorted_x: np.ndarray) -> int:
    """Pairs of equal values, given the values sorted."""
    return _pairs_in_runs(np.r_[True, sorted_x[1:] != sorted_x[:-1]])


def _pairs_in_runs(starts: np.ndarray) -> int:
    """Pairs within runs, given a mask marking where each run starts."""
    lengths = np.diff(np.r_[np.flatnonzero(starts), len(starts)])
    return int((lengths * (lengths - 1) // 2).sum())


def _inversions(y: np.ndarray) -> int:
    """Pairs i < j with y[i] > y[j], by bottom-up merging done level by level with NumPy."""
    n = len(y)
    values = np.unique(y, return_inverse=True)[1].astype(np.int64)  # dense ranks 0..k-1
    span = n + 1
    index = np.arange(n)
    total = 0
    width = 1
    while width < n:
        block = index // (2 * width)
        right = (index // width) % 2 == 1
        keys = block * span + values
        left_keys = keys[~right]  # sorted: blocks ascend and each half is sorted
        right_keys = keys[right]
        block_end = np.searchsorted(left_keys, block[right] * span + n, side="right")
        total += int((block_end - np.searchsorted(left_keys, right_keys, side="right")).sum())
        values = np.sort(keys) - block * span  # merge: each 2-width block now sorted
        width *= 2
    return total


def kendall_tau_b(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau-b between two scorings of the same items; NaN when either is constant."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(x)
    if n < 2:
        return math.nan
    order = np.lexsort((y, x))
    xs, ys = x[order], y[order]
    pairs = n * (n - 1) // 2
    new_x = np.r_[True, xs[1:] != xs[:-1]]
    ties_x, ties_y = _pairs_in_runs(new_x), _tied_pairs(np.sort(y))
    ties_xy = _pairs_in_runs(new_x | np.r_[True, ys[1:] != ys[:-1]])  # runs sorted by x, then y
    discordant = _inversions(ys)
    denominator = math.sqrt((pairs - ties_x) * (pairs - ties_y))
    if denominator == 0:
        return math.nan
    concordant_minus_discordant = pairs - ties_x - ties_y + ties_xy - 2 * discordant
    return max(-1.0, min(1.0, concordant_minus_discordant / denominator))


def spearman_rho(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Spearman's rho (average ranks for ties); NaN when either scoring is constant."""
    if len(a) < 2:
        return math.nan
    ra, rb = average_ranks(a), average_ranks(b)
    da, db = ra - ra.mean(), rb - rb.mean()
    denominator = math.sqrt(float((da * da).sum()) * float((db * db).sum()))
    return math.nan if denominator == 0 else max(-1.0, min(1.0, float((da * db).sum()) / denominator))
