"""Rank statistics for comparing two scorings of the same submissions, in O(n log n).

Kendall's tau-b (ties corrected) and Spearman's rho (Pearson correlation of average ranks).
Over one set of items, and within large groups, tau-b is SciPy's ``kendalltau`` (Knight's
algorithm with a compiled inversion count). SciPy has no grouped form, and a call per group
costs tens of microseconds, so within many small groups (a million submissions over 100,000
tasks) tau-b is counted here for all groups at once: sort by one ranking, count discordant
pairs as inversions in the other by a merge done level by level with NumPy. The tests check
both against ``kendalltau``/``spearmanr``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["average_ranks", "kendall_tau_b", "kendall_tau_b_by_group", "spearman_rho", "spearman_rho_by_group"]


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


def _inversions_by_group(y: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray:
    """Per group, pairs i < j of the same group with y[i] > y[j] (rows ordered by group), by
    bottom-up merging done level by level with NumPy. Values are ranked with their group as
    the major key, so a pair across groups never counts and each count is credited to the
    group its values belong to."""
    n = len(y)
    sizes = np.bincount(groups, minlength=count)
    width_needed = 1 << max(int(sizes.max(initial=1)) - 1, 0).bit_length()
    if count > 1 and count * width_needed <= 2 * n:
        # Each group alone in an aligned slot of a power-of-two width, padded after its rows with
        # values above all others (a pad never counts): merging stops at that width, not at n.
        first = np.r_[0, np.cumsum(sizes)[:-1]]
        slot = groups * width_needed + (np.arange(n) - first[groups])
        padded = np.full(count * width_needed, np.inf)
        padded[slot] = y
        padded_groups = np.repeat(np.arange(count), width_needed)
        return _merge_count(padded, padded_groups, count, width_needed)
    return _merge_count(y, groups, count, n)


def _merge_count(y: np.ndarray, groups: np.ndarray, count: int, widest: int) -> np.ndarray:
    """The merging of :func:`_inversions_by_group`, up to blocks of ``widest`` rows (a pad is
    the largest value and follows its group's rows, so it is never above a row to its right)."""
    n = len(y)
    order = np.lexsort((y, groups))
    pair_start = np.r_[True, (groups[order][1:] != groups[order][:-1]) | (y[order][1:] != y[order][:-1])]
    dense = np.cumsum(pair_start) - 1  # dense ranks of (group, y) in sorted order
    values = np.empty(n, dtype=np.int64)
    values[order] = dense
    group_of = groups[order][pair_start]  # the group of each dense value
    span = n + 1
    index = np.arange(n)
    totals = np.zeros(count)
    width = 1
    while width < min(n, widest):
        block = index // (2 * width)
        right = (index // width) % 2 == 1
        keys = block * span + values
        left_keys = keys[~right]  # sorted: blocks ascend and each half is sorted
        right_keys = keys[right]
        block_end = np.searchsorted(left_keys, block[right] * span + n, side="right")
        above = block_end - np.searchsorted(left_keys, right_keys, side="right")
        totals += np.bincount(group_of[values[right]], weights=above, minlength=count)
        values = np.sort(keys) - block * span  # merge: each 2-width block now sorted
        width *= 2
    return totals.astype(np.int64)


#: From this many rows per group on average, a SciPy call per group beats the grouped merge.
_ROWS_PER_CALL = 64


def kendall_tau_b_by_group(groups: np.ndarray, count: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`kendall_tau_b` within each group (codes ``0..count-1``)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) >= _ROWS_PER_CALL * count:
        order = np.argsort(groups, kind="stable")
        ends = np.cumsum(np.bincount(groups, minlength=count)).tolist()
        xs, ys = x[order], y[order]
        return np.array([kendall_tau_b(xs[s:e], ys[s:e]) for s, e in zip([0, *ends[:-1]], ends, strict=True)])
    return _kendall_tau_b_merged(groups, count, x, y)


def _kendall_tau_b_merged(groups: np.ndarray, count: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Tau-b within each group, all groups in one pass."""
    order = np.lexsort((y, x, groups))
    g, xs, ys = groups[order], x[order], y[order]
    sizes = np.bincount(groups, minlength=count)
    pairs = sizes * (sizes - 1) // 2
    new_group = np.r_[True, g[1:] != g[:-1]]
    new_x = new_group | np.r_[True, xs[1:] != xs[:-1]]
    ties_x = _pairs_by_group(new_x, g, count)
    ties_xy = _pairs_by_group(new_x | np.r_[True, ys[1:] != ys[:-1]], g, count)
    by_y = np.lexsort((y, groups))
    gy, sorted_y = groups[by_y], y[by_y]
    ties_y = _pairs_by_group(np.r_[True, (gy[1:] != gy[:-1]) | (sorted_y[1:] != sorted_y[:-1])], gy, count)
    discordant = _inversions_by_group(ys, g, count)
    with np.errstate(invalid="ignore", divide="ignore"):
        # In floats before multiplying: a group of 80,000 rows has 3.2e9 pairs, whose product
        # passes the largest int64.
        denominator = np.sqrt((pairs - ties_x).astype(float) * (pairs - ties_y).astype(float))
        tau = (pairs - ties_x - ties_y + ties_xy - 2 * discordant) / denominator
    return np.where((sizes < 2) | (denominator == 0), np.nan, np.clip(tau, -1.0, 1.0))


def _pairs_by_group(starts: np.ndarray, groups: np.ndarray, count: int) -> np.ndarray:
    """Per group, pairs within runs (``starts`` marks where each run begins; rows ordered by group)."""
    first = np.flatnonzero(starts)
    lengths = np.diff(np.r_[first, len(starts)])
    return np.bincount(groups[first], weights=lengths * (lengths - 1) // 2, minlength=count).astype(np.int64)


def kendall_tau_b(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau-b between two scorings of the same items; NaN when either is constant."""
    from scipy.stats import kendalltau

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) < 2:
        return math.nan
    tau = float(kendalltau(x, y).statistic)
    if math.isnan(tau):
        return math.nan
    if np.array_equal(x, y):  # SciPy divides by two square roots: 1 - 1e-16 for identical scorings
        return 1.0
    return max(-1.0, min(1.0, tau))


def spearman_rho_by_group(groups: np.ndarray, count: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`spearman_rho` within each group (codes ``0..count-1``), all groups in one pass."""
    ra, rb = _average_ranks_by_group(groups, count, a), _average_ranks_by_group(groups, count, b)
    sizes = np.bincount(groups, minlength=count).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        da = ra - (np.bincount(groups, weights=ra, minlength=count) / sizes)[groups]
        db = rb - (np.bincount(groups, weights=rb, minlength=count) / sizes)[groups]
        denominator = np.sqrt(
            np.bincount(groups, weights=da * da, minlength=count)
            * np.bincount(groups, weights=db * db, minlength=count)
        )
        rho = np.bincount(groups, weights=da * db, minlength=count) / denominator
    return np.where((sizes < 2) | (denominator == 0), np.nan, np.clip(rho, -1.0, 1.0))


def _average_ranks_by_group(groups: np.ndarray, count: int, values: np.ndarray) -> np.ndarray:
    """:func:`average_ranks` within each group."""
    x = np.asarray(values, dtype=float)
    order = np.lexsort((x, groups))
    g, sorted_x = groups[order], x[order]
    n = len(x)
    starts = np.flatnonzero(np.r_[True, (g[1:] != g[:-1]) | (sorted_x[1:] != sorted_x[:-1])])
    ends = np.r_[starts[1:], n]
    group_start = np.searchsorted(g, np.arange(count))  # first sorted position of each group
    offset = group_start[g[starts]]
    mean_rank = (starts - offset + ends - offset + 1) / 2.0
    ranks = np.empty(n)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def spearman_rho(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Spearman's rho (average ranks for ties); NaN when either scoring is constant."""
    if len(a) < 2:
        return math.nan
    ra, rb = average_ranks(a), average_ranks(b)
    da, db = ra - ra.mean(), rb - rb.mean()
    denominator = math.sqrt(float((da * da).sum()) * float((db * db).sum()))
    return math.nan if denominator == 0 else max(-1.0, min(1.0, float((da * db).sum()) / denominator))
