"""A board's statistics (``arena leaderboard``'s default: task means, Student-t intervals, rank
ranges from 1,000 paired bootstrap resamples, and every pair's paired t-test with Holm for the
inversions) against a NumPy reference computing the same rows on the same per-task means,
checked equal first, then timed alternately in the same run.

    python benchmarks/boards.py                   # 25, 100, 500 and 2,000 groups x 500 tasks
    python benchmarks/boards.py --groups 25 --groups 100

The reference is written for a complete board (every group ran every task, one run a cell):
scores and intervals are row reductions, the resamples one product of the seeded draws' task
counts with the means, ranks one sort per resample, and the pairs' t-tests four matrix products
and one ``stdtr``. Medians of three alternating runs are printed, with their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))

from arena_core.stats.leaderboard import RESAMPLES, SEED, leaderboard
from arena_core.stats.rankranges import _CHUNK_CELLS
from arena_core.stats.tasktable import Runs, TaskTable
from arena_plugins.aggregators import TaskMean
from arena_plugins.intervals import StudentT

LEVEL = 0.95


def board(groups: int, tasks: int) -> TaskTable:
    """A complete board of one run a cell whose score weighs resources against correctness, so
    that cheap groups that fail more rank above better ones (the inversions are found)."""
    rng = np.random.default_rng(9)
    group, task = np.repeat(np.arange(groups), tasks), np.tile(np.arange(tasks), groups)
    skill, difficulty = rng.normal(0, 1, groups), rng.normal(0, 1, tasks)
    solved = rng.random(len(group)) < 1 / (1 + np.exp(difficulty[task] - skill[group]))
    correctness = np.where(solved, 100.0, 0.0)
    thrift = rng.uniform(0, 60, groups)[group]
    overall = np.round(np.clip(0.4 * correctness + thrift + rng.normal(0, 5, len(group)), 0, 100), 2)
    runs = Runs(
        ids=[str(i) for i in range(len(group))],
        groups=[f"g{g:04d}" for g in group],
        tasks=[f"t{t:04d}" for t in task],
        overall=overall,
        dimensions={"correctness": correctness},
        coverage=np.ones(len(group)),
    )
    return TaskTable.of(runs)


def reference(means: np.ndarray, correctness: np.ndarray) -> dict[str, np.ndarray]:
    """Per group: score, interval, competition rank, rank range; and the inverted pairs."""
    from scipy.special import stdtr, stdtrit
    from scipy.stats import rankdata

    groups, tasks = means.shape
    score = means.mean(axis=1)
    margin = stdtrit(tasks - 1, (1 + LEVEL) / 2) * means.std(axis=1, ddof=1) / np.sqrt(tasks)
    low, high = np.maximum(score - margin, 0.0), np.minimum(score + margin, 100.0)
    rounded = np.round(score, 2)
    rank = rankdata(-rounded, method="min").astype(np.int64)
    rng = np.random.default_rng(SEED)
    step = max(1, _CHUNK_CELLS // tasks)
    resampled = []
    for start in range(0, RESAMPLES, step):
        size = min(step, RESAMPLES - start)
        drawn = rng.integers(0, tasks, size=(size, tasks), dtype=np.uint32).astype(np.int64)
        counts = np.bincount((drawn + tasks * np.arange(size)[:, None]).ravel(), minlength=size * tasks)
        resampled.append(counts.reshape(size, tasks).astype(float) @ means.T / tasks)
    scores = np.vstack(resampled)
    ranks = rankdata(-scores, method="min", axis=1)  # competition ranks, every resample at once
    best = np.minimum(rank, np.quantile(ranks, (1 - LEVEL) / 2, axis=0, method="lower"))
    worst = np.maximum(rank, np.quantile(ranks, (1 + LEVEL) / 2, axis=0, method="higher"))
    x = correctness
    total = x.sum(axis=1)
    difference = (total[:, None] - total[None, :]) / tasks  # row minus column
    squares = (x * x).sum(axis=1)
    spread = squares[:, None] + squares[None, :] - 2 * (x @ x.T) - tasks * difference**2
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.abs(difference) / np.sqrt(spread / (tasks - 1) / tasks)
    p = np.where(spread > 1e-9, 2 * stdtr(tasks - 1, -t), np.where(difference == 0, 1.0, 0.0))
    upper = np.triu_indices(groups, 1)
    pairs = p[upper]
    order = np.argsort(pairs, kind="stable")
    holm = np.empty_like(pairs)
    holm[order] = np.minimum(1, np.maximum.accumulate((len(pairs) - np.arange(len(pairs))) * pairs[order]))
    a, b = upper
    a, b = np.where(rank[a] <= rank[b], a, b), np.where(rank[a] <= rank[b], b, a)  # a ranked above b
    solved = correctness.mean(axis=1)
    inverted = (holm < 1 - LEVEL) & (rank[a] < rank[b]) & (solved[b] > solved[a])
    return {"score": score, "low": low, "high": high, "rank": rank, "best": best, "worst": worst,
            "inverted": np.stack([a[inverted], b[inverted]], axis=1), "resampled": scores}  # fmt: skip


def near_tied_ranges(scores: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rank ranges with resampled scores within a relative 1e-9 taken as one score, the rule
    arena-core ranks by (stats/rankranges.py says why): where two paths of floating-point
    arithmetic put two equal groups a few units in the last place apart, the exact ranks of the
    reference may differ by one. Used to check a row that differs, never timed."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=1)
    new = np.ones(ordered.shape, dtype=bool)
    new[:, 1:] = ordered[:, :-1] - ordered[:, 1:] > 1e-9 * np.maximum(np.abs(ordered[:, :-1]), 1.0)
    first = np.maximum.accumulate(np.where(new, np.arange(scores.shape[1]), 0), axis=1)
    ranks = np.empty(scores.shape)
    np.put_along_axis(ranks, order, first + 1.0, axis=1)
    best = np.minimum(rank, np.quantile(ranks, (1 - LEVEL) / 2, axis=0, method="lower"))
    worst = np.maximum(rank, np.quantile(ranks, (1 + LEVEL) / 2, axis=0, method="higher"))
    return best, worst


def ours(table: TaskTable) -> list:
    return leaderboard(table, TaskMean(), StudentT(), min_tasks=1)


def check(table: TaskTable, rows: list, expected: dict[str, np.ndarray]) -> int:
    at = {g: i for i, g in enumerate(table.groups)}
    tied = None
    for row in rows:
        g = at[row.group]
        assert np.isclose(row.score, expected["score"][g], rtol=1e-12, atol=1e-12), row
        assert np.allclose((row.ci_low, row.ci_high), (expected["low"][g], expected["high"][g]), rtol=1e-9), row
        found = (row.rank, row.rank_low, row.rank_high)
        if found != tuple(int(expected[k][g]) for k in ("rank", "best", "worst")):
            tied = tied or near_tied_ranges(expected["resampled"], expected["rank"])
            assert found == (int(expected["rank"][g]), int(tied[0][g]), int(tied[1][g])), row
    found = {(at[row.group], at[b]) for row in rows for b in row.inverts}
    assert found == {tuple(pair) for pair in expected["inverted"].tolist()}, "inversions differ"
    return len(found)


def run(groups: int, tasks: int = 500) -> None:
    table = board(groups, tasks)
    correctness = table.dimension_means["correctness"]
    inverted = check(table, ours(table), reference(table.means, correctness))
    mine, base = [], []
    for _ in range(3):  # alternating, so that both see the same machine
        fresh = board(groups, tasks)  # the table caches its means: each run computes them anew
        start = time.perf_counter()
        ours(fresh)
        mine.append(time.perf_counter() - start)
        fresh = board(groups, tasks)
        start = time.perf_counter()
        reference(fresh.means, fresh.dimension_means["correctness"])
        base.append(time.perf_counter() - start)
    a, b = statistics.median(mine), statistics.median(base)
    print(f"{groups:,} groups x {tasks} tasks ({inverted:,} inversions): arena-core {a:.3f} s, "
          f"NumPy reference {b:.3f} s: {a / b:.2f}x (rows equal)", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, action="append", help="Board sizes (default: 25, 100, 500, 2,000).")
    parser.add_argument("--tasks", type=int, default=500)
    arguments = parser.parse_args()
    ours(board(3, 5))  # imports SciPy's parts once, outside the timings
    for groups in arguments.groups or [25, 100, 500, 2000]:
        run(groups, arguments.tasks)


if __name__ == "__main__":
    main()
