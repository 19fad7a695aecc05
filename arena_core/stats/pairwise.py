"""Paired significance between leaderboard groups, on the tasks both ran.

Two groups are compared on their per-task mean overall scores over the tasks they share: the
mean difference, a seeded paired-bootstrap interval for it, a two-sided p-value (the paired
t-test by default, a sign-flip permutation test as the alternative), the p-values adjusted for
the number of pairs (Holm by default, Benjamini-Hochberg as the option), and the smallest
difference the test would detect with 80% power on that many shared tasks.

Pairing on tasks removes task difficulty from the comparison: most of the spread of scores
is between tasks, and a paired test does not pay for it (Inspect AI's and HELM's users ask
for exactly this). A p-value says whether a difference is distinguishable from task-to-task
noise, not whether it matters: read it with the difference and its interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations, product

import numpy as np
from attrs import frozen

from arena_core.model.errors import ValidationError
from arena_core.stats.tasktable import TaskTable

__all__ = [
    "ADJUSTMENTS",
    "TESTS",
    "PairRow",
    "adjust",
    "check_test",
    "holm",
    "minimum_detectable",
    "paired_p_value",
    "pairwise",
]

TESTS = ("t", "permutation", "mcnemar")
ADJUSTMENTS = ("holm", "bh")
#: Resamples of the paired bootstrap and of the random sign flips.
RESAMPLES = 10_000
SEED = 20240601
#: Up to this many shared tasks the sign-flip test enumerates every flip (2**16 of them).
EXACT_FLIPS = 16
POWER = 0.8


@frozen
class PairRow:
    """Group ``a`` against group ``b`` (``a`` ranked above ``b``)."""

    a: str
    b: str
    n_tasks: int
    """Tasks both groups ran: the sample size of the comparison."""
    difference: float
    """Mean over the shared tasks of ``a``'s per-task mean minus ``b``'s (NaN with no shared task)."""
    ci_low: float
    ci_high: float
    p_value: float
    """Two-sided, unadjusted; NaN below 2 shared tasks (not tested, not adjusted)."""
    p_adjusted: float
    significant: bool
    """``p_adjusted`` below 1 - confidence level."""
    min_detectable: float
    """The difference detectable at 80% power by the paired t-test at that level."""


def pairwise(
    table: TaskTable,
    groups: Sequence[int],
    *,
    test: str = "t",
    adjustment: str = "holm",
    confidence_level: float = 0.95,
) -> list[PairRow]:
    """Every pair of ``groups`` (indices into the table, best first), in that order."""
    check_test(test, adjustment)
    alpha = 1 - confidence_level
    means = table.means
    if test == "mcnemar":  # binary outcomes: per task, whether the group solved it (correctness 100)
        correctness = table.dimension_means.get("correctness")
        if correctness is None:
            raise ValidationError(
                "pairwise", "test", "a test the board's scores allow: mcnemar needs correctness", test
            )
        means = np.where(np.isnan(correctness), np.nan, (correctness >= 100.0) * 100.0)
    found = []
    for i, j in combinations(groups, 2):
        shared = ~np.isnan(means[i]) & ~np.isnan(means[j])
        found.append((i, j, means[i][shared] - means[j][shared]))
    p_values = np.array([paired_p_value(d, test) for _, _, d in found])
    adjusted = adjust(p_values, adjustment)
    intervals = _bootstrap_all([d for _, _, d in found], confidence_level)
    rows = []
    for (i, j, d), p, q, (low, high) in zip(found, p_values.tolist(), adjusted.tolist(), intervals, strict=True):
        rows.append(
            PairRow(
                a=table.groups[i],
                b=table.groups[j],
                n_tasks=len(d),
                difference=float(d.mean()) if len(d) else math.nan,
                ci_low=low,
                ci_high=high,
                p_value=p,
                p_adjusted=q,
                significant=bool(q < alpha),
                min_detectable=minimum_detectable(d, alpha),
            )
        )
    return rows


def check_test(test: str, adjustment: str) -> None:
    """Refuse a paired test or an adjustment that is not known, naming the choices."""
    if test not in TESTS:
        raise ValidationError("pairwise", "test", " or ".join(TESTS), test)
    if adjustment not in ADJUSTMENTS:
        raise ValidationError("pairwise", "adjustment", " or ".join(ADJUSTMENTS), adjustment)


def paired_p_value(differences: np.ndarray, test: str) -> float:
    """Two-sided p-value of paired differences by ``test`` (``t``, ``permutation``, or ``mcnemar``:
    the exact sign test, which is McNemar's exact test on binary outcomes); NaN below 2."""
    n = len(differences)
    if n < 2:
        return math.nan
    if test == "mcnemar":  # McNemar's exact test: the discordant tasks, each way, against a fair coin
        from scipy.stats import binomtest

        wins, losses = int((differences > 0).sum()), int((differences < 0).sum())
        return 1.0 if wins + losses == 0 else float(binomtest(wins, wins + losses, 0.5).pvalue)
    if np.all(differences == differences[0]):  # no spread: the t statistic is 0/0 or infinite
        return 1.0 if differences[0] == 0 else 0.0
    if test == "t":
        return t_test_p_value(differences)
    observed = abs(differences.mean())
    if n <= EXACT_FLIPS:
        signs = np.array(list(product((1.0, -1.0), repeat=n)))
        return float(np.mean(np.abs(signs @ differences / n) >= observed - 1e-12))
    signs = np.random.default_rng(SEED).choice((1.0, -1.0), size=(RESAMPLES, n))
    extreme = int(np.sum(np.abs(signs @ differences / n) >= observed - 1e-12))
    return (1 + extreme) / (1 + RESAMPLES)


def t_test_p_value(differences: np.ndarray) -> float:
    """The two-sided one-sample t-test of a mean of 0: ``scipy.stats.ttest_1samp``'s p-value, by
    its own operations (the mean, the second central moment times n/(n - 1), t = mean / sqrt(v/n),
    twice Student's upper tail from ``scipy.special.stdtr``), equal to it bit for bit, without
    importing ``scipy.stats``, which takes 0.6 s: every leaderboard tests its inversions."""
    from scipy.special import stdtr

    n = len(differences)
    mean = np.mean(differences)
    variance = np.mean((differences - mean) ** 2) * (n / (n - 1))
    statistic = mean / np.sqrt(variance / n)
    return float(2 * stdtr(n - 1, -abs(statistic)))


#: How many pairs' bootstrap means are held at once: 512 columns of the resamples, 40 MB.
PAIRS_AT_ONCE = 512


def _bootstrap_all(differences: Sequence[np.ndarray], confidence_level: float) -> list[tuple[float, float]]:
    """Each pair's percentile interval of the mean difference over its shared tasks resampled.
    Pairs that share as many tasks share the seeded draws (as they always did), so each such set
    of pairs is one matrix product: how often each task is drawn in each resample, times the
    pairs' differences. 300 pairs of 500 tasks took 5.5 s drawn pair by pair, gathering 5
    million values each."""
    alpha = (1 - confidence_level) / 2
    found = [(math.nan, math.nan)] * len(differences)
    by_count: dict[int, list[int]] = {}
    for index, d in enumerate(differences):
        if len(d) >= 2:
            by_count.setdefault(len(d), []).append(index)
    for n, members in by_count.items():
        draws = _draws(n)
        counts = np.bincount((draws + n * np.arange(RESAMPLES)[:, None]).ravel(), minlength=RESAMPLES * n)
        rows = counts.reshape(RESAMPLES, n)
        times = np.ones(RESAMPLES, dtype=np.int64)
        if math.comb(2 * n - 1, n) < RESAMPLES:  # few tasks: few distinct resamples, each counted once
            rows, times = np.unique(rows, axis=0, return_counts=True)
        weights = rows.astype(float) / n
        for start in range(0, len(members), PAIRS_AT_ONCE):  # 20,000 pairs at once would be 1.6 GB of means
            chunk = members[start : start + PAIRS_AT_ONCE]
            means = weights @ np.column_stack([differences[k] for k in chunk])
            lows, highs = _quantiles(means, times, alpha)
            for k, low, high in zip(chunk, lows.tolist(), highs.tolist(), strict=True):
                found[k] = (low, high)
    return found


def _quantiles(values: np.ndarray, times: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``values``, the ``alpha`` and ``1 - alpha`` quantiles of the sample in which
    row ``r`` occurs ``times[r]`` times: what ``np.quantile`` (linear) gives on the sample written
    out, read from the sorted distinct values and their cumulative counts."""
    if len(times) == RESAMPLES:  # every resample distinct: the sample as it is
        low, high = np.quantile(values, [alpha, 1 - alpha], axis=0)
        return low, high
    order = np.argsort(values, axis=0, kind="stable")
    ranked = np.take_along_axis(values, order, axis=0)
    upto = np.cumsum(times[order], axis=0)  # the sample's sorted positions each value reaches
    found = []
    for q in (alpha, 1 - alpha):
        h = (RESAMPLES - 1) * q
        below, above = math.floor(h), math.ceil(h)
        at_below = np.argmax(upto > below, axis=0)  # the value at sorted position `below`
        at_above = np.argmax(upto > above, axis=0)
        columns = np.arange(values.shape[1])
        lo, hi = ranked[at_below, columns], ranked[at_above, columns]
        found.append(lo + (h - below) * (hi - lo))
    return found[0], found[1]


@lru_cache(maxsize=4)
def _draws(n: int) -> np.ndarray:
    """The seeded resamples of ``n`` shared tasks: the same for every pair that shares ``n``
    (they always were, being seeded alike), so drawn once for all of them."""
    draws = np.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n))
    draws.flags.writeable = False
    return draws


def adjust(p_values: np.ndarray, method: str) -> np.ndarray:
    """p-values adjusted for multiple comparisons (NaN entries are left out and stay NaN):
    ``holm`` controls the family-wise error rate, ``bh`` (SciPy's Benjamini-Hochberg) the
    false discovery rate."""
    out = np.full(len(p_values), math.nan)
    tested = ~np.isnan(p_values)
    if tested.any():
        if method == "holm":
            out[tested] = holm(p_values[tested])
        else:
            from scipy.stats import false_discovery_control

            out[tested] = false_discovery_control(p_values[tested], method="bh")
    return out


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment: the k-th smallest p-value times (m - k + 1), made monotone
    and capped at 1."""
    m = len(p_values)
    order = np.argsort(p_values, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p_values[order]))
    out = np.empty(m)
    out[order] = stepped
    return out


def minimum_detectable(differences: np.ndarray, alpha: float, power: float = POWER) -> float:
    """The true mean difference the two-sided paired t-test at level ``alpha`` detects with
    probability ``power``, given the spread of these differences and their number (the
    noncentral t distribution, solved exactly). NaN below 2 tasks; 0 with no spread."""
    n = len(differences)
    if n < 2:
        return math.nan
    spread = float(np.std(differences, ddof=1))
    if spread == 0:
        return 0.0
    return _noncentrality(n - 1, alpha, power) * spread / math.sqrt(n)


@lru_cache(maxsize=256)
def _noncentrality(df: int, alpha: float, power: float) -> float:
    """The noncentrality at which the two-sided t-test of ``df`` degrees of freedom rejects with
    probability ``power``: it depends on the number of shared tasks alone, so it is solved once
    per number, not once per pair."""
    from scipy.integrate import quad
    from scipy.optimize import brentq
    from scipy.stats import chi2, nct, norm
    from scipy.stats import t as student_t

    critical = float(student_t.ppf(1 - alpha / 2, df))

    def reach(noncentrality: float) -> float:
        """P(|T| > critical) for T noncentral t; SciPy's closed form returns NaN in places for
        few degrees of freedom, where the mixture over the chi-square is integrated instead."""
        value = float(nct.sf(critical, df, noncentrality) + nct.cdf(-critical, df, noncentrality))
        if math.isfinite(value):
            return value

        def given(v: float) -> float:
            scale = critical * math.sqrt(v / df)
            return float((norm.sf(scale - noncentrality) + norm.cdf(-scale - noncentrality)) * chi2.pdf(v, df))

        return float(quad(given, 0.0, math.inf)[0])

    def shortfall(noncentrality: float) -> float:
        return reach(noncentrality) - power

    upper = 10.0
    while shortfall(upper) < 0:  # with few tasks the critical value is far out
        upper *= 2
    return float(brentq(shortfall, 0.0, upper))
