"""Rank ranges and tiers: which ranks the data allow each group, and which groups it cannot order.

Two rules, named by ``leaderboard_ranks``:

- ``paired_bootstrap`` (the default): the tasks are resampled with replacement, the same draws
  for every group (so each resample keeps the pairing of groups on tasks), the aggregator
  rescored on each resample and the groups ranked in it; a group's range runs from the
  ``(1 - level) / 2`` quantile of its ranks to the ``(1 + level) / 2`` one, widened to hold its
  rank on the whole board. A tier is led by the best-ranked group not yet in one, and holds
  every group ranked below the leader whose best rank is not below the leader's worst: the
  groups that could take the leader's place. On simulated SWE-bench-shaped boards the ranges
  are half as wide as ``overlap``'s, cover the true ranks, and ranks from one half of the tasks
  fall inside the ranges from the other half more often than the 83 % a calibrated 95 %
  interval achieves (``tests/test_rank_ranges.py``).
- ``overlap`` (the rule before): from the groups' own intervals, Chatbot Arena's
  ``1 + #{j : low_j > high_i}`` to ``N - #{j : high_j < low_i}``, and tiers as the chains of
  overlapping ranges. Unpaired intervals pay for the spread between tasks that every group
  shares, so their ranges are about twice as wide as the data need, and chains join groups
  that the paired tests separate.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from arena_core.model.protocols import Aggregator
from arena_core.stats.room import ensure_room
from arena_core.stats.tasktable import TaskTable

if TYPE_CHECKING:
    from arena_core.stats.celltable import CellTable

__all__ = ["chained_tiers", "leader_tiers", "overlap_ranges", "paired_ranges", "resampled_scores", "uniform_counts"]

#: Resampled scores this close (relative to their size, or absolutely below 1) are tied.
_TIED = 1e-9
#: Largest number of task weights drawn at once: bounds the memory of a resample batch.
_CHUNK_CELLS = 4_000_000


def resampled_scores(table: TaskTable | CellTable, aggregator: Aggregator, resamples: int, seed: int) -> np.ndarray:
    """``(resamples, groups)`` aggregator scores over resamples of the tasks (of their clusters,
    when the table has them), drawn with replacement, the same draws for every group; drawn in
    batches so that memory stays bounded on boards of many tasks (the draws are those of one call)."""
    if not table.tasks:
        return np.full((resamples, len(table.groups)), np.nan)
    groups = len(table.groups)  # the scores, and the ranks' sorts of them: ten arrays of their size at the peak
    ensure_room(resamples * groups * 8 * 10, f"{resamples:,} resamples of a board of {groups:,} groups")
    return np.vstack(list(_batches(table, aggregator, resamples, seed)))


def _batches(table: TaskTable | CellTable, aggregator: Aggregator, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Resampled scores in batches; with clustered tasks the clusters are drawn, and each task
    weighs as often as its cluster was drawn (tasks of a family stay together)."""
    tasks = len(table.tasks)
    units = tasks if table.clusters is None else int(table.clusters.max()) + 1
    rng = np.random.default_rng(seed)
    step = max(1, _CHUNK_CELLS // max(tasks, len(table.groups)))  # the weights' and the scores' cells
    for start in range(0, resamples, step):
        draws = uniform_counts(rng, units, min(step, resamples - start))
        weights = draws if table.clusters is None else draws[:, table.clusters]
        yield np.asarray(aggregator.aggregate(table, weights), dtype=float)


def uniform_counts(rng: np.random.Generator, units: int, size: int) -> np.ndarray:
    """``(size, units)`` bootstrap weights: per row, how often each of ``units`` units is drawn
    in ``units`` draws with replacement, as floats. The same law as ``rng.multinomial(units,
    [1 / units] * units, size)``, which draws a binomial per unit (about 50 ns each): the units
    are drawn as 32-bit integers and counted (one count over the rows, each in its own bins), ten
    to twenty times faster, which is most of a board's time on a hundred thousand tasks."""
    drawn = rng.integers(0, units, size=(size, units), dtype=np.uint32 if units < 2**32 else np.int64)
    cells = drawn + (units * np.arange(size, dtype=np.int64))[:, None]  # each row's own bins
    return np.bincount(cells.ravel(), minlength=size * units).reshape(size, units).astype(float)


def paired_ranges(scores: np.ndarray, ranks: np.ndarray, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """(best, worst) rank per group from ``(resamples, groups)`` resampled ``scores``: the lower
    and upper quantiles of the group's competition rank over the resamples (a group without a
    score in a resample is left out of that resample), widened to hold its board rank
    ``ranks``. Every resample is ranked at once: sorted, each score's rank the position of the
    first equal one (NaN sorts last, after every score it could outrank). Scores within a
    relative ``_TIED`` of each other are equal: two groups with the same raw score on the same
    tasks have one Rasch ability, which two paths of floating-point arithmetic can reach a few
    units in the last place apart, and their order in a resample must not depend on which."""
    resamples, count = scores.shape
    order = np.argsort(-scores, axis=1, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=1)
    first = np.ones(ordered.shape, dtype=bool)
    with np.errstate(invalid="ignore"):  # NaN, sorted last, is never tied
        gap = ordered[:, :-1] - ordered[:, 1:]
        first[:, 1:] = ~(gap <= _TIED * np.maximum(np.abs(ordered[:, :-1]), 1.0))
    at = np.maximum.accumulate(np.where(first, np.arange(count), 0), axis=1)
    ranked = np.empty(scores.shape)
    np.put_along_axis(ranked, order, at + 1.0, axis=1)
    missing = np.isnan(scores)
    ranked[missing] = np.nan
    alpha = (1 - confidence_level) / 2
    best, worst = ranks.astype(float), ranks.astype(float)
    whole = ~missing.any(axis=0)
    if resamples and whole.any():
        best[whole] = np.minimum(best[whole], np.quantile(ranked[:, whole], alpha, axis=0, method="lower"))
        worst[whole] = np.maximum(worst[whole], np.quantile(ranked[:, whole], 1 - alpha, axis=0, method="higher"))
    for g in np.flatnonzero(~whole).tolist():
        mine = ranked[:, g][~missing[:, g]]
        if len(mine):
            best[g] = min(best[g], np.quantile(mine, alpha, method="lower"))
            worst[g] = max(worst[g], np.quantile(mine, 1 - alpha, method="higher"))
    return best.astype(int), worst.astype(int)


def overlap_ranges(lows: np.ndarray, highs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(best, worst) rank each interval allows: ``1 + #{j : low_j > high_i}`` and
    ``N - #{j : high_j < low_i}``, by sorting rather than comparing every pair."""
    count = len(lows)
    sorted_lows, sorted_highs = np.sort(lows), np.sort(highs)
    above = count - np.searchsorted(sorted_lows, highs, side="right")
    below = np.searchsorted(sorted_highs, lows, side="left")
    return 1 + above, count - below


def chained_tiers(best: np.ndarray, worst: np.ndarray) -> list[int]:
    """Tier per group: groups whose rank ranges ``[best, worst]`` overlap, directly or through
    a chain of others, share one; tiers are numbered from the best ranks down."""
    tier = [0] * len(best)
    current, reach = 0, -1
    for i in sorted(range(len(best)), key=lambda k: (best[k], worst[k])):
        if best[i] > reach:
            current += 1
        reach = max(reach, int(worst[i]))
        tier[i] = current
    return tier


def leader_tiers(best: np.ndarray, worst: np.ndarray) -> list[int]:
    """Tier per group, groups given best-ranked first: a tier's leader is the first group not
    yet in a tier, and its members the groups after it whose best rank is not below the leader's
    worst. No chains: a group joins because it could displace the leader, not a neighbour."""
    tier = [0] * len(best)
    current, reach = 0, -1
    for i in range(len(best)):
        if best[i] > reach:
            current, reach = current + 1, int(worst[i])
        tier[i] = current
    return tier
