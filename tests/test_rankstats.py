"""The rank statistics against SciPy's independent implementations, on generated data with ties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.stats.rankstats import average_ranks, kendall_tau_b, spearman_rho

scipy_stats = pytest.importorskip("scipy.stats")

# Few distinct values, so ties are common in each scoring and jointly.
pairs = st.integers(2, 60).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 12.5, 50.0, 50.01, 99.99, 100.0]), min_size=n, max_size=n),
    st.lists(st.floats(0, 100, allow_nan=False).map(lambda v: round(v, 0)) | st.sampled_from([10.0, 20.0]),
             min_size=n, max_size=n)))


def _same(ours: float, theirs: float) -> bool:
    return (math.isnan(ours) and math.isnan(theirs)) or math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=200, deadline=None)
@given(pairs)
def test_kendall_tau_b_equals_scipy(data: tuple[list[float], list[float]]) -> None:
    a, b = data
    assert _same(kendall_tau_b(a, b), scipy_stats.kendalltau(a, b).statistic)


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
@settings(max_examples=200, deadline=None)
@given(pairs)
def test_spearman_rho_equals_scipy(data: tuple[list[float], list[float]]) -> None:
    a, b = data
    assert _same(spearman_rho(a, b), scipy_stats.spearmanr(a, b).statistic)
    assert average_ranks(a).tolist() == scipy_stats.rankdata(a).tolist()


def test_large_inputs_with_ties_match_too() -> None:
    rng = np.random.default_rng(4)
    a = rng.integers(0, 500, 20_000).astype(float)
    b = a + rng.integers(-50, 50, 20_000)
    assert _same(kendall_tau_b(a, b), scipy_stats.kendalltau(a, b).statistic)
    assert _same(spearman_rho(a, b), scipy_stats.spearmanr(a, b).statistic)


def test_identical_and_reversed_scorings() -> None:
    scores = [10.0, 40.0, 40.0, 75.5, 90.0]
    assert kendall_tau_b(scores, scores) == 1.0 == spearman_rho(scores, scores)
    assert kendall_tau_b(scores, [-s for s in scores]) == -1.0 == spearman_rho(scores, [-s for s in scores])
    assert math.isnan(kendall_tau_b([5.0, 5.0, 5.0], [1.0, 2.0, 3.0]))


def test_the_grouped_forms_equal_the_statistics_of_each_group() -> None:
    """``compare`` computes every task's tau-b and rho in one pass; each equals the statistic of
    that task alone (ties, constant groups and single rows included)."""
    import math

    import numpy as np

    from arena_core.stats.rankstats import (
        kendall_tau_b,
        kendall_tau_b_by_group,
        spearman_rho,
        spearman_rho_by_group,
    )

    rng = np.random.default_rng(7)
    for trial in range(300):
        n, count = int(rng.integers(1, 80)), int(rng.integers(1, 7))
        groups = rng.integers(0, count, n)
        a = np.round(rng.normal(size=n), 1)
        b = a.copy() if trial % 4 == 0 else np.round(a + rng.normal(size=n), 1)
        taus, rhos = kendall_tau_b_by_group(groups, count, a, b), spearman_rho_by_group(groups, count, a, b)
        for g in range(count):
            ix = np.flatnonzero(groups == g)
            for grouped, alone in ((taus[g], kendall_tau_b(a[ix], b[ix])), (rhos[g], spearman_rho(a[ix], b[ix]))):
                assert (math.isnan(grouped) and math.isnan(alone)) or abs(grouped - alone) < 1e-12, (trial, g)


def test_both_grouped_paths_of_tau_b_equal_scipy_per_group() -> None:
    """Large groups take a SciPy call each; many small groups the merge over all of them. Both
    give SciPy's tau-b for every group, whichever path the sizes select."""
    import numpy as np

    from arena_core.stats import rankstats

    rng = np.random.default_rng(11)
    for count, per_group in ((3, 200), (50, 4), (20, 70)):
        n = count * per_group
        groups = rng.permutation(np.repeat(np.arange(count), per_group))
        a = np.round(rng.normal(size=n), 1)
        b = np.round(a + rng.normal(size=n), 1)
        expected = [scipy_stats.kendalltau(a[groups == g], b[groups == g]).statistic for g in range(count)]
        chosen = rankstats.kendall_tau_b_by_group(groups, count, a, b)
        merged = rankstats._kendall_tau_b_merged(groups, count, a, b)
        assert np.allclose(chosen, expected, rtol=0, atol=1e-12) and np.allclose(merged, expected, rtol=0, atol=1e-12)


def test_the_merge_counts_a_group_of_a_hundred_thousand_rows_among_small_ones() -> None:
    """Many small tasks take the merge, and one of them may still be large: a group of 100,000
    rows has 5e9 pairs, whose product of counts passes the largest int64 (the merge then gave
    NaN for it). Its tau-b is SciPy's, and the small groups' too."""
    import numpy as np

    from arena_core.stats import rankstats

    rng = np.random.default_rng(5)
    groups = np.r_[np.zeros(100_000, dtype=np.int64), np.repeat(np.arange(1, 3001), 3)]
    a = np.round(rng.normal(size=len(groups)), 2)
    b = np.round(a + rng.normal(size=len(groups)), 2)
    assert len(groups) < rankstats._ROWS_PER_CALL * 3001  # the sizes select the merge
    taus = rankstats.kendall_tau_b_by_group(groups, 3001, a, b)
    assert abs(taus[0] - scipy_stats.kendalltau(a[:100_000], b[:100_000]).statistic) < 1e-12
    for g in (1, 2, 3000):
        alone = scipy_stats.kendalltau(a[groups == g], b[groups == g]).statistic
        assert (np.isnan(alone) and np.isnan(taus[g])) or abs(taus[g] - alone) < 1e-12
