"""``exactmoments.mean`` and ``stdev`` return the doubles of ``statistics.mean`` and ``stdev``,
to the bit, on the values that make a fast sum go wrong."""

from __future__ import annotations

import functools
import statistics

import numpy as np
import pytest

from arena_core.stats import exactmoments


@functools.cache
def _hard_vectors() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    vectors = []
    for k in range(1500):
        n = int(rng.integers(2, 700 if k % 25 == 0 else 40))
        kind = k % 7
        if kind == 0:  # per-task means: any double in 0-100
            x = rng.uniform(0, 100, n)
        elif kind == 1:  # scores as the spec rounds them
            x = np.round(rng.uniform(0, 100, n), 2)
        elif kind == 2:  # pass/fail, many equal values and an exact variance
            x = rng.integers(0, 3, n) * 50.0
        elif kind == 3:  # a spread a billion times below the values: cancellation
            x = 50 + rng.normal(0, 1e-9, n)
        elif kind == 4:  # exponents hundreds apart, both signs
            x = rng.uniform(-100, 100, n) * 10.0 ** rng.integers(-300, 300, n)
        elif kind == 5:  # near the largest double
            x = -rng.uniform(0, 1e300, n)
        else:  # no spread at all
            x = np.full(n, rng.uniform(0, 100))
        vectors.append(x)
    return vectors


def test_mean_and_stdev_are_the_statistics_modules_doubles() -> None:
    checked = 0
    for x in _hard_vectors():
        assert exactmoments.stdev(x) == statistics.stdev(x.tolist()), x
        assert exactmoments.mean(x) == statistics.mean(x.tolist()), x
        checked += 1
    assert checked == 1500


def test_a_fast_float_stdev_would_differ_somewhere() -> None:
    """The cases above are hard: NumPy's float standard deviation misses the exact one on some,
    so the equality above is not one any float formula passes."""
    with np.errstate(over="ignore"):
        differ = sum(np.std(x, ddof=1) != statistics.stdev(x.tolist()) for x in _hard_vectors())
    assert differ > 50


@pytest.mark.parametrize("values", [[1.0, float("nan")], [float("inf"), 1.0], [-float("inf"), 2.0, 3.0]])
def test_values_that_are_not_finite_give_nan(values: list[float]) -> None:
    assert np.isnan(exactmoments.stdev(np.array(values)))
    assert np.isnan(exactmoments.mean(np.array(values)))


def test_too_few_values_raise_as_statistics_does() -> None:
    with pytest.raises(statistics.StatisticsError):
        exactmoments.stdev(np.array([1.0]))
    with pytest.raises(statistics.StatisticsError):
        exactmoments.mean(np.array([]))


def test_the_sums_of_many_rows_at_once_are_each_row_s() -> None:
    """``row_sums`` of every hard vector at once, with empty rows, rows of zeros and rows that
    are not finite among them: each row's mean, ``fmean`` and stdev are the statistics
    module's doubles (rows of every magnitude share one pass, each keeps its own exponent)."""
    vectors = list(_hard_vectors())
    vectors[3:3] = [np.zeros(0), np.zeros(4), np.array([2.0, float("nan"), 1.0]), np.array([5.0])]
    sums = exactmoments.row_sums(vectors)
    assert len(sums) == len(vectors)
    for x, found in zip(vectors, sums, strict=True):
        assert found.count == len(x)
        if not np.isfinite(x).all():
            assert not found.finite and np.isnan(found.mean()) and np.isnan(found.stdev())
            continue
        if len(x):
            assert found.mean() == statistics.mean(x.tolist()), x
            assert found.fmean() == statistics.fmean(x.tolist()), x
        if len(x) >= 2:
            assert found.stdev() == statistics.stdev(x.tolist()), x
    with pytest.raises(statistics.StatisticsError):
        sums[3].mean()  # the empty row, as statistics says
    with pytest.raises(statistics.StatisticsError):
        sums[6].stdev()  # one value
