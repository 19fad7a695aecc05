"""The outcome-first order of a board: the score orders groups only where correctness cannot.

A composite score weighs resources beside correctness, and on pass/fail-plus-cost data failing
is cheap: ordered by score, a board can rank a group above one that solves significantly more
(an *inversion*, :mod:`arena_core.stats.inversions`). The outcome-first order
(``leaderboard_order = "outcome-first"``, the ``gated`` profile's) keeps the score's order
wherever correctness does not separate the groups, and never elsewhere:

- **The relation.** ``S`` holds the pairs ``(h, l)`` where ``h``'s per-task mean correctness is
  higher than ``l``'s on the tasks both ran, significantly by the board's paired test with its
  adjustment over every pair of ranked groups (the very test that names inversions).
- **The order.** Repeatedly place, of the groups not yet placed whose every ``S``-predecessor is
  placed, the one with the highest score (rounded as printed; then by name). This is Kahn's
  topological sort with the score as priority.

*Why it has no inversion.* An inversion is a pair ``(h, l)`` of ``S`` with ``l`` placed above
``h``. A group is placed only once every group with an ``S``-edge into it is placed, so ``h`` is
placed before ``l``. *Why it exists.* Where every pair shares the same tasks (a complete design),
``(h, l) ∈ S`` implies mean correctness ``h > l`` over those tasks, a strict order, so ``S`` has
no cycle and the sort places every group. *Why the score still decides.* Two groups that ``S``
does not order, directly or through others, are placed by their scores whenever both are
available; frugality wins among equals. On an incomplete design the shared tasks differ from
pair to pair and ``S`` can hold a cycle (A beats B on their shared tasks, B beats C, C beats A);
the sort then places the best-scored group of the cycle first, and the inversion that leaves is
named, as any board names its inversions.

Ranks follow the order (equal printed scores that ``S`` does not separate share a rank), and so
do rank ranges: a group's best rank counts the groups that must be above it (its
``S``-ancestors, and groups the score's own rank ranges place surely above it that are not its
``S``-descendants), its worst the groups that must be below, each widened to hold its rank.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from arena_core.stats.inversions import significant_differences
from arena_core.stats.tasktable import TaskTable

if TYPE_CHECKING:
    from arena_core.stats.celltable import CellTable

__all__ = ["ORDERS", "forced_ranges", "ordered_ranks", "outcome_first", "significant_pairs"]

#: What ``leaderboard_order`` accepts.
ORDERS = ("score", "outcome-first")


def significant_pairs(
    table: TaskTable | CellTable, ranked: Sequence[int], *, test: str, adjustment: str, confidence_level: float
) -> set[tuple[int, int]]:
    """``(higher, lower)`` pairs of ``ranked`` groups whose correctness differs significantly on
    shared tasks, by the test and adjustment inversions are named by (one pass over every pair)."""
    found = significant_differences(table, ranked, test=test, adjustment=adjustment, confidence_level=confidence_level)
    return {(b, a) if ahead > 0 else (a, b) for a, b, ahead in found if ahead != 0}


def outcome_first(
    ranked: Sequence[int], priority: Mapping[int, tuple[float, str]], edges: set[tuple[int, int]]
) -> list[int]:
    """``ranked`` in the outcome-first order: a topological order of ``edges`` (``(higher, lower)``)
    taking, among the groups free to go next, the one of least ``priority`` (``(-score, name)``);
    a cycle is broken at its group of least priority (see the module's note)."""
    waiting = dict.fromkeys(ranked, 0)
    after: dict[int, list[int]] = {g: [] for g in ranked}
    for higher, lower in edges:
        if higher in waiting and lower in waiting:
            waiting[lower] += 1
            after[higher].append(lower)
    free = [(priority[g], g) for g, count in waiting.items() if count == 0]
    heapq.heapify(free)
    placed: list[int] = []
    left = set(ranked)
    while left:
        if not free:  # a cycle (incomplete designs only): its best-scored group goes first
            g = min(left, key=lambda x: priority[x])
            waiting[g] = 0
            heapq.heappush(free, (priority[g], g))
        _, g = heapq.heappop(free)
        if g not in left:
            continue
        left.discard(g)
        placed.append(g)
        for lower in after[g]:
            waiting[lower] -= 1
            if waiting[lower] == 0 and lower in left:
                heapq.heappush(free, (priority[lower], lower))
    return placed


def ordered_ranks(order: Sequence[int], rounded: Mapping[int, float], edges: set[tuple[int, int]]) -> dict[int, int]:
    """Competition ranks along ``order``: a group shares the rank of the one before it when their
    printed scores are equal and ``edges`` does not separate them."""
    ranks: dict[int, int] = {}
    for i, g in enumerate(order):
        previous = order[i - 1] if i else None
        tied = previous is not None and rounded[previous] == rounded[g] and (previous, g) not in edges
        ranks[g] = ranks[previous] if tied and previous is not None else i + 1
    return ranks


def forced_ranges(
    order: Sequence[int],
    edges: set[tuple[int, int]],
    score_best: Mapping[int, int],
    score_worst: Mapping[int, int],
    ranks: Mapping[int, int],
) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst ranks along ``order`` (see the module's note): ``score_best`` and
    ``score_worst`` are the rank ranges of the score's own order."""
    above: dict[int, set[int]] = {g: set() for g in order}
    for higher, lower in edges:
        if higher in above and lower in above:
            above[lower].add(higher)
    ancestors = {g: _closure(g, above) for g in order}
    descendants: dict[int, set[int]] = {g: set() for g in order}
    for g, found in ancestors.items():
        for a in found:
            descendants[a].add(g)
    count = len(order)
    best, worst = [], []
    for g in order:
        surely_above = {h for h in order if h != g and score_worst[h] < score_best[g]} - descendants[g]
        surely_below = {h for h in order if h != g and score_best[h] > score_worst[g]} - ancestors[g]
        best.append(min(ranks[g], 1 + len(ancestors[g] | surely_above)))
        worst.append(max(ranks[g], count - len(descendants[g] | surely_below)))
    return np.array(best), np.array(worst)


def _closure(g: int, above: Mapping[int, set[int]]) -> set[int]:
    seen: set[int] = set()
    stack = list(above[g])
    while stack:
        h = stack.pop()
        if h not in seen and h != g:
            seen.add(h)
            stack.extend(above[h])
    return seen
