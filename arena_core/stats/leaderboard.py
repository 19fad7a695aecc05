"""Group leaderboards with uncertainty: scores, task-clustered intervals, rank ranges, tiers.

A group's score comes from the configured aggregator (by default the mean over tasks of its
per-task mean overall score, so each task counts once). Its interval treats tasks as the
sample: the configured interval method on the aggregator's units (the per-task means), or a
seeded bootstrap that resamples the tasks when the aggregator has no units. When tasks come in
families (``--cluster meta.KEY``: a table with clusters), the bootstrap resamples the families
instead, whatever the aggregator: tasks of one repository are not independent evidence.

``rank`` is the competition rank of the score rounded as printed (1, 1, 3); ``rank_low`` and
``rank_high`` are the best and worst ranks the data allow, and tiers the groups the data cannot
order, by the rule ``leaderboard_ranks`` names (:mod:`arena_core.stats.rankranges`: a paired
bootstrap over tasks by default, ``overlap`` of the intervals as before). Groups with fewer
tasks than ``min_tasks_per_group`` are provisional: listed after the ranked ones, with a score
and an interval but no rank.

The table is the dense one, or for a method that scores a board from its cells that hold runs
(``cells``: the item response fits) a :class:`~arena_core.stats.celltable.CellTable`, when the dense one
does not fit: every figure reads the same either way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from attrs import frozen

from arena_core.config.settings import RANK_RULES
from arena_core.engine.ranking import competition_ranks
from arena_core.model.errors import ValidationError
from arena_core.model.protocols import Aggregator, IntervalMethod
from arena_core.model.records import DIMENSIONS
from arena_core.stats.inversions import inversions, named
from arena_core.stats.outcomefirst import ORDERS, forced_ranges, ordered_ranks, outcome_first, significant_pairs
from arena_core.stats.rankranges import chained_tiers, leader_tiers, overlap_ranges, paired_ranges, resampled_scores
from arena_core.stats.tasktable import TaskTable

if TYPE_CHECKING:
    from arena_core.stats.celltable import CellTable

__all__ = ["GroupRow", "dimensions_of", "RESAMPLES", "SEED", "leaderboard", "task_bootstrap"]

#: Resamples of the tasks, for rank ranges and for intervals an aggregator's units cannot give.
RESAMPLES = 1000
#: The bootstrap's seed: the same runs always give the same intervals.
SEED = 20240601


@frozen
class GroupRow:
    """One group (a tool, a model, ...) on a leaderboard."""

    group: str
    n_runs: int
    n_tasks: int
    score: float
    """The aggregator's score (for the default, the mean over tasks of the per-task means)."""
    ci_low: float
    ci_high: float
    rank: int | None
    """Competition rank of the score rounded to 2 places; ``None`` when provisional."""
    rank_low: int | None
    """Best rank the data allow (by the board's rank rule)."""
    rank_high: int | None
    """Worst rank the data allow."""
    tier: int | None
    """Groups the data cannot order share a tier (1 is the best)."""
    provisional: bool
    """Fewer tasks than ``min_tasks_per_group``: listed after the ranked groups, not ranked."""
    coverage: float
    """Mean over tasks of the runs' coverage: the share of the overall weight measured."""
    means: dict[str, float]
    """Dimension to the mean over tasks of the group's per-task mean score on it."""
    inverts: tuple[str, ...] = ()
    """The groups ranked below this one whose correctness is significantly higher on the tasks
    both ran (see :mod:`arena_core.stats.inversions`): empty when the ranking agrees with it."""
    apart: bool = False
    """Shares no task, directly or through other groups, with the ranked groups: nothing
    compares it with them, so it is listed after them, unranked (with its own score)."""


def leaderboard(
    table: TaskTable | CellTable,
    aggregator: Aggregator,
    interval: IntervalMethod,
    *,
    min_tasks: int,
    confidence_level: float = 0.95,
    test: str = "t",
    adjustment: str = "holm",
    ranks: str = "paired_bootstrap",
    order: str = "score",
) -> list[GroupRow]:
    """The groups of ``table``, ranked ones best first, then the provisional ones, with rank
    ranges and tiers by the rule ``ranks`` (see :mod:`arena_core.stats.rankranges`); each names
    the groups it inverts by ``test`` with p-values adjusted by ``adjustment`` (``holm`` or ``bh``).
    ``order`` ``outcome-first`` orders by score only where correctness does not separate the
    groups (:mod:`arena_core.stats.outcomefirst`)."""
    if ranks not in RANK_RULES:
        raise ValidationError("leaderboard", "ranks", f"one of {', '.join(RANK_RULES)}", ranks)
    if order not in ORDERS:
        raise ValidationError("leaderboard", "order", f"one of {', '.join(ORDERS)}", order)
    scores = aggregator.aggregate(table, np.ones((1, len(table.tasks))))[0]
    units = getattr(aggregator, "units", None)
    clustered = table.clusters is not None
    resampled = None
    if units is None or clustered or ranks == "paired_bootstrap":
        resampled = resampled_scores(table, aggregator, RESAMPLES, SEED)
    if units is not None and not clustered:
        rows = [units(table, g) for g in range(len(table.groups))]
        many = getattr(interval, "intervals", None)  # a batch form, for every group at once
        if many is not None:
            bounds = list(many(rows, confidence_level))
        else:
            bounds = [interval.interval(row.tolist(), confidence_level) for row in rows]
    else:
        low, high = _percentiles(resampled, confidence_level)
        bounds = list(zip(low.tolist(), high.tolist(), strict=True))
    n_tasks = table.tasks_per_group()
    n_runs = table.runs_per_group()
    coverage = table.group_means(table.coverage_means)
    means = {d: table.group_means(values) for d, values in table.dimension_means.items()}
    provisional = n_tasks < min_tasks
    listed = sorted(
        range(len(table.groups)), key=lambda g: (bool(provisional[g]), -round(scores[g], 2), table.groups[g])
    )
    ranked = [g for g in listed if not provisional[g]]
    apart = _apart(table, ranked)
    ranked = [g for g in ranked if g not in apart]
    listed = [*ranked, *(g for g in listed if g in apart), *(g for g in listed if provisional[g])]
    rank_of = dict(zip(ranked, competition_ranks([round(scores[g], 2) for g in ranked]), strict=True))
    if ranks == "overlap":
        best, worst = overlap_ranges(np.array([bounds[g][0] for g in ranked]), np.array([bounds[g][1] for g in ranked]))
        tier_of = chained_tiers(best, worst)
    else:
        assert resampled is not None
        best, worst = paired_ranges(resampled[:, ranked], np.array([rank_of[g] for g in ranked]), confidence_level)
        tier_of = leader_tiers(best, worst)
    if order == "outcome-first":
        ranked, rank_of, best, worst, tier_of = _outcome_first(
            table, ranked, scores, rank_of, best, worst, test, adjustment, confidence_level
        )
        listed = [*ranked, *(g for g in listed if provisional[g])]
    place = {g: i for i, g in enumerate(ranked)}
    inverted = named(
        table, inversions(table, rank_of, test=test, adjustment=adjustment, confidence_level=confidence_level)
    )
    rows = []
    for g in listed:
        i = place.get(g)
        rows.append(
            GroupRow(
                group=table.groups[g],
                n_runs=int(n_runs[g]),
                n_tasks=int(n_tasks[g]),
                score=float(scores[g]),
                ci_low=float(bounds[g][0]),
                ci_high=float(bounds[g][1]),
                rank=rank_of.get(g),
                rank_low=None if i is None else int(best[i]),
                rank_high=None if i is None else int(worst[i]),
                tier=None if i is None else tier_of[i],
                provisional=bool(provisional[g]),
                coverage=coverage[g],
                means={d: m[g] for d, m in means.items() if not math.isnan(m[g])},
                inverts=inverted.get(table.groups[g], ()),
                apart=g in apart,
            )
        )
    return rows


def _apart(table: TaskTable | CellTable, ranked: list[int]) -> set[int]:
    """The ranked groups outside the largest set of groups joined by shared tasks (on a tie, the
    set holding the best-scored group): no task compares them with the others. The groups and
    tasks are the nodes of a graph whose edges are the cells run: linear in the cells."""
    if len(ranked) < 2:
        return set()
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    cell_groups, cell_tasks = table.run_cells()
    position = np.full(len(table.groups), -1)
    position[ranked] = np.arange(len(ranked))
    kept = position[cell_groups] >= 0
    groups, tasks = position[cell_groups[kept]], cell_tasks[kept]
    size = len(ranked) + len(table.tasks)
    graph = coo_matrix((np.ones(len(groups)), (groups, len(ranked) + tasks)), shape=(size, size))
    _, component = connected_components(graph, directed=False)
    of_group = component[: len(ranked)]
    counts = np.bincount(of_group)
    main = max(range(len(counts)), key=lambda c: (counts[c], c == of_group[0]))
    return {g for g, c in zip(ranked, of_group.tolist(), strict=True) if c != main}


def _outcome_first(
    table: TaskTable | CellTable, ranked: list[int], scores: np.ndarray, rank_of: dict[int, int], best: np.ndarray,
    worst: np.ndarray, test: str, adjustment: str, confidence_level: float,
) -> tuple[list[int], dict[int, int], np.ndarray, np.ndarray, list[int]]:  # fmt: skip
    """The ranked groups in the outcome-first order, their ranks, rank ranges and tiers."""
    edges = significant_pairs(table, ranked, test=test, adjustment=adjustment, confidence_level=confidence_level)
    rounded = {g: round(float(scores[g]), 2) for g in ranked}
    placed = outcome_first(ranked, {g: (-rounded[g], table.groups[g]) for g in ranked}, edges)
    ranks = ordered_ranks(placed, rounded, edges)
    at = {g: i for i, g in enumerate(ranked)}
    low, high = forced_ranges(
        placed, edges, {g: int(best[at[g]]) for g in ranked}, {g: int(worst[at[g]]) for g in ranked}, ranks
    )
    return placed, ranks, low, high, leader_tiers(low, high)


def dimensions_of(rows: Sequence[GroupRow]) -> list[str]:
    """The dimensions any row has a mean for: the spec's in the spec's order, then the others."""
    found = dict.fromkeys(d for row in rows for d in row.means)
    return [d for d in DIMENSIONS if d in found] + [d for d in found if d not in DIMENSIONS]


def task_bootstrap(
    table: TaskTable | CellTable,
    aggregator: Aggregator,
    confidence_level: float,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per group of the aggregator's score over resamples of the tasks
    (drawn with replacement, the same draws for every group, so paired structure is kept)."""
    return _percentiles(resampled_scores(table, aggregator, resamples, seed), confidence_level)


def _percentiles(scores: np.ndarray | None, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    assert scores is not None
    alpha = (1 - confidence_level) / 2
    with np.errstate(all="ignore"):
        low, high = np.nanquantile(scores, [alpha, 1 - alpha], axis=0)
    return low, high
