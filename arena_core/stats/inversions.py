"""Inversions: a board that ranks a group above another whose correctness is significantly higher.

A composite score weighs resources beside correctness, and on real data failing is cheap: a
board can then rank an agent above one that solves significantly more. Such a board is not
wrong by its own definition, but a reader must be told. Group A *inverts* group B when the
board ranks A strictly above B while B's per-task mean correctness is higher than A's on the
tasks both ran, by the paired test the board's ``--pairwise`` uses (paired t-test by default),
its p-value adjusted over every pair of ranked groups (Holm by default) and below 1 - the
confidence level. A board whose score is correctness alone has none on a complete design:
its order is the correctness order on the shared tasks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np

from arena_core.model.errors import ValidationError
from arena_core.stats.pairmoments import SparseValues, pair_blocks
from arena_core.stats.pairwise import adjust, check_test, paired_p_value
from arena_core.stats.tasktable import TaskTable

if TYPE_CHECKING:
    from arena_core.stats.celltable import CellTable

__all__ = ["DIMENSION", "inversions", "named", "significant_differences"]

#: The dimension a ranking is checked against.
DIMENSION = "correctness"


def inversions(
    table: TaskTable | CellTable,
    ranks: Mapping[int, int],
    *,
    test: str = "t",
    adjustment: str = "holm",
    confidence_level: float = 0.95,
) -> dict[int, list[int]]:
    """For each ranked group (an index into ``table.groups``, with its rank in ``ranks``), the
    groups ranked strictly below it whose correctness is significantly higher on shared tasks,
    in rank order. Groups without a rank are not tested; a table without correctness has none."""
    found: dict[int, list[int]] = {g: [] for g in ranks}
    ordered = sorted(ranks, key=lambda g: (ranks[g], table.groups[g]))
    above, below, ahead = _significant(
        table, ordered, test=test, adjustment=adjustment, confidence_level=confidence_level
    )
    rank = np.array([ranks[g] for g in ordered], dtype=np.int64)
    inverted = (rank[above] < rank[below]) & (ahead > 0)
    for a, b in zip(above[inverted].tolist(), below[inverted].tolist(), strict=True):
        found[ordered[a]].append(ordered[b])
    for g in found:
        found[g].sort(key=lambda b: (ranks[b], table.groups[b]))
    return found


def significant_differences(
    table: TaskTable | CellTable,
    ordered: Sequence[int],
    *,
    test: str = "t",
    adjustment: str = "holm",
    confidence_level: float = 0.95,
) -> list[tuple[int, int, float]]:
    """``(a, b, mean of b's correctness minus a's)`` for every pair of ``ordered`` (``a`` listed
    before ``b``) whose correctness differs significantly on their shared tasks, by ``test`` with
    its p-value adjusted by ``adjustment`` over every pair tested; ``[]`` without correctness.

    With the t-test every pair is tested at once (:mod:`arena_core.stats.pairmoments`), and only
    the pairs whose p-value is below the level can be significant after either adjustment, so
    only those are kept to adjust: time and memory stay near linear in the pairs, with the
    figures of the pair-by-pair test."""
    above, below, ahead = _significant(
        table, ordered, test=test, adjustment=adjustment, confidence_level=confidence_level
    )
    ordered = list(ordered)
    return [(ordered[i], ordered[j], a) for i, j, a in zip(above.tolist(), below.tolist(), ahead.tolist(), strict=True)]


def _significant(
    table: TaskTable | CellTable, ordered: Sequence[int], *, test: str, adjustment: str, confidence_level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`significant_differences` as arrays: positions in ``ordered`` of the pairs' first and
    second groups, and the second's mean advantage (a board of 2,000 groups can have a million)."""
    check_test(test, adjustment)
    values = table.values_of(DIMENSION)
    ordered = list(ordered)
    none = np.zeros(0, dtype=np.int64)
    if values is None or len(ordered) < 2:
        return none, none, none.astype(float)
    alpha = 1 - confidence_level
    if test != "t":
        if isinstance(values, SparseValues):
            raise ValidationError(
                "leaderboard", "test", "t (a board held as its cells tests pairs by their sums, the t-test)", test
            )
        return _pair_by_pair(values, ordered, test, adjustment, alpha)
    tested = 0
    kept: list[tuple[np.ndarray, ...]] = []  # per block: p, above, below, below's mean advantage
    for block in pair_blocks(values[ordered], below=alpha):
        later = block.columns[None, :] > block.rows[:, None]  # each pair once: above before below
        counted = later & ~np.isnan(block.p_value)
        tested += int(counted.sum())
        r, c = np.nonzero(counted & (block.p_value < alpha))
        kept.append((block.p_value[r, c], block.rows[r], block.columns[c], -block.mean[r, c]))
    p_values, above_at, below_at, advantage = (np.concatenate(parts) for parts in zip(*kept, strict=True))
    order = np.lexsort((below_at, above_at, p_values))  # the pair-by-pair test's stable order
    adjusted = _adjusted_head(p_values[order], tested, adjustment)
    chosen = order[adjusted < alpha]
    return above_at[chosen], below_at[chosen], advantage[chosen]


def _adjusted_head(p_values: np.ndarray, total: int, adjustment: str) -> np.ndarray:
    """The adjusted p-values of the ``len(p_values)`` smallest of ``total`` p-values, given sorted:
    exactly what the adjustment of all of them gives wherever it is below the level the
    smallest were cut at (Holm's step-down reads only smaller p-values; Benjamini-Hochberg's
    step-up, above the cut, only values that cannot bring one under it)."""
    if not len(p_values):
        return p_values
    if adjustment == "holm":
        return np.minimum(1.0, np.maximum.accumulate((total - np.arange(len(p_values))) * p_values))
    scaled = total * p_values / np.arange(1, len(p_values) + 1)
    return np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])


def _pair_by_pair(
    values: np.ndarray, ordered: list[int], test: str, adjustment: str, alpha: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tests that are not sums of squares (sign flips, McNemar's), one pair at a time."""
    pairs: list[tuple[int, int, float]] = []
    p_values = []
    for i, j in combinations(range(len(ordered)), 2):
        above, below = values[ordered[i]], values[ordered[j]]
        shared = ~np.isnan(above) & ~np.isnan(below)
        differences = below[shared] - above[shared]
        pairs.append((i, j, float(differences.mean()) if len(differences) else 0.0))
        p_values.append(paired_p_value(differences, test))
    adjusted = adjust(np.array(p_values, dtype=float), adjustment)
    kept = [pair for pair, p in zip(pairs, adjusted.tolist(), strict=True) if p < alpha]
    if not kept:
        none = np.zeros(0, dtype=np.int64)
        return none, none, none.astype(float)
    firsts, seconds, ahead = zip(*kept, strict=True)
    return np.array(firsts, dtype=np.int64), np.array(seconds, dtype=np.int64), np.array(ahead, dtype=float)


def named(table: TaskTable | CellTable, found: Mapping[int, Sequence[int]]) -> dict[str, tuple[str, ...]]:
    """:func:`inversions` with the groups named."""
    return {table.groups[g]: tuple(table.groups[b] for b in below) for g, below in found.items()}
