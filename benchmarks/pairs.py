"""Every pair of a board tested (``arena leaderboard --pairwise``, the report's matrix): arena-core's
``pairwise`` against a NumPy reference computing the same rows (paired t-test p-values, Holm,
each pair's bootstrap interval of the mean difference from the same seeded draws, the minimum
detectable difference), checked equal first, then timed alternately in the same run.

    python benchmarks/pairs.py            # 25 and 100 groups x 500 tasks
    python benchmarks/pairs.py --groups 25
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from itertools import combinations
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))

from arena_core.stats.pairwise import RESAMPLES, SEED, _noncentrality, pairwise


def board(groups: int, tasks: int) -> SimpleNamespace:
    """What ``pairwise`` reads of a board's TaskTable: its groups and their per-task means,
    every group on every task."""
    rng = np.random.default_rng(3)
    skill = rng.normal(60, 8, groups)[:, None]
    means = np.clip(skill + rng.normal(0, 25, (groups, tasks)), 0, 100)
    return SimpleNamespace(groups=[f"g{k:03d}" for k in range(groups)], means=means, dimension_means={})


def reference(means: np.ndarray, order: list[int]) -> list[tuple[float, float, float, float, float]]:
    """(difference, low, high, p adjusted, minimum detectable) per pair: the differences as one
    array, the t statistics and Student's tail vectorised, Holm, and the bootstrap as the same
    seeded draws counted per task and multiplied by every pair's differences at once."""
    from scipy.special import stdtr

    pairs = list(combinations(order, 2))
    d = np.stack([means[i] - means[j] for i, j in pairs], axis=1)  # tasks x pairs
    n = d.shape[0]
    mean = d.mean(axis=0)
    sd = d.std(axis=0, ddof=1)
    p = 2 * stdtr(n - 1, -np.abs(mean / (sd / math.sqrt(n))))
    m = len(p)
    rank = np.argsort(p, kind="stable")
    holm = np.empty(m)
    holm[rank] = np.minimum(1, np.maximum.accumulate((m - np.arange(m)) * p[rank]))
    draws = np.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n))
    counts = np.bincount((draws + n * np.arange(RESAMPLES)[:, None]).ravel(), minlength=RESAMPLES * n)
    counts = counts.reshape(RESAMPLES, n).astype(float)
    low, high = np.quantile(counts @ d / n, [0.025, 0.975], axis=0)
    detectable = _noncentrality(n - 1, 0.05, 0.8) * sd / math.sqrt(n)
    return list(zip(mean.tolist(), low.tolist(), high.tolist(), holm.tolist(), detectable.tolist(), strict=True))


def run(groups: int, tasks: int = 500) -> None:
    table = board(groups, tasks)
    order = list(range(groups))
    ours = pairwise(table, order)  # type: ignore[arg-type]
    theirs = reference(table.means, order)
    for row, (difference, low, high, p, detectable) in zip(ours, theirs, strict=True):
        got = (row.difference, row.ci_low, row.ci_high, row.p_adjusted, row.min_detectable)
        assert np.allclose(got, (difference, low, high, p, detectable), rtol=1e-9, atol=1e-9), (row, got)
    mine, base = [], []
    for _ in range(3):  # alternating, so both see the same machine
        start = time.perf_counter()
        pairwise(table, order)  # type: ignore[arg-type]
        mine.append(time.perf_counter() - start)
        start = time.perf_counter()
        reference(table.means, order)
        base.append(time.perf_counter() - start)
    a, b = min(mine), min(base)
    print(f"{groups} groups x {tasks} tasks ({len(ours):,} pairs): arena-core {a:.3f} s, NumPy reference {b:.3f} s: "
          f"{a / b:.2f}x the reference (rows equal)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, action="append", help="Board sizes (default: 25 and 100).")
    for groups in parser.parse_args().groups or [25, 100]:
        run(groups)


if __name__ == "__main__":
    main()
