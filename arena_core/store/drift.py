"""Drift: a batch that moved a task's baseline far, or reordered the top of the leaderboard.

Every batch moves its tasks' baselines a little, and with them the scores of later runs. An
operator publishing a leaderboard wants to hear when the move was large (a new model family
halved the median cost of a task, so everything scored before looks expensive) or when the
top of the board changed, without polling. The pipeline compares each baseline it replaces
with its successor, and the leaderboard's top ranks before and after the batch, and hands what
moved to :func:`~arena_core.hookspecs.arena_drift_detected` after the commit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from attrs import frozen

from arena_core.model.records import Baseline
from arena_core.stats.runs import UNKNOWN

__all__ = ["BaselineDrift", "RankDrift", "baseline_drift", "group_means", "rank_drift", "top_groups"]

#: A baseline's medians, each with the submission figure it summarises (the names
#: ``Baseline.defaulted`` uses).
MEDIANS = {
    "median_tokens": "total_tokens",
    "median_tool_calls": "tool_calls",
    "median_execution_time": "execution_time",
    "median_cost": "estimated_cost",
    "median_iterations": "iterations",
}


@frozen
class BaselineDrift:
    """A median of a task's baseline moved by more than ``drift_threshold`` in one batch."""

    key: str
    """The baseline's store key: its task id (and group, under a scoped baseline)."""
    figure: str
    """The median that moved, e.g. ``median_cost``."""
    before: float
    after: float
    from_version: int | None
    to_version: int | None

    @property
    def change(self) -> float:
        """Relative change, ``after / before - 1`` (infinite from 0)."""
        return self.after / self.before - 1 if self.before else math.inf

    def __str__(self) -> str:
        task = self.key.replace("\x1f", " / ")
        moved = f"{self.change:+.0%}" if math.isfinite(self.change) else "from 0"
        return (
            f"baseline of {task!r}: {self.figure} moved {self.before:g} -> {self.after:g} ({moved}; "
            f"version {self.from_version} -> {self.to_version})"
        )


@frozen
class RankDrift:
    """The top ``drift_top_k`` tools of the leaderboard (by ``task_mean``) are not the same, in
    the same order, after the batch as before it."""

    before: tuple[str, ...]
    after: tuple[str, ...]

    def __str__(self) -> str:
        return f"top {max(len(self.before), len(self.after))} tools reordered: {', '.join(self.before)} -> {', '.join(self.after)}"


def baseline_drift(key: str, before: Baseline, after: Baseline, threshold: float) -> list[BaselineDrift]:
    """The medians of ``after`` that moved from ``before`` by more than ``threshold`` (relative).

    A figure that either baseline takes from the default baseline is skipped: a baseline
    turning from the default into measured statistics is not drift.
    """
    skipped = set(before.defaulted) | set(after.defaulted)
    moved = []
    for median, figure in MEDIANS.items():
        old, new = getattr(before, median), getattr(after, median)
        if figure not in skipped and abs(new - old) > threshold * abs(old):
            moved.append(BaselineDrift(key, median, old, new, before.version, after.version))
    return moved


def group_means(tx: Any) -> list[tuple[str | None, float, int]]:
    """Per tool: the mean over tasks of its per-task mean overall score, and its number of tasks.

    A store's ``group_means()`` when it offers one (the SQLite store keeps per-tool sums per
    task); otherwise computed from every stored evaluation.
    """
    offered = getattr(tx, "group_means", None)
    if offered is not None:
        means: list[tuple[str | None, float, int]] = offered()
        return means
    cells: dict[str | None, list[float]] = {}
    for task_id in tx.task_ids():
        per_tool: dict[str | None, list[float]] = {}
        for evaluation in tx.evaluations(task_id):
            per_tool.setdefault(evaluation.tool, []).append(evaluation.overall_score)
        for tool, scores in per_tool.items():
            cells.setdefault(tool, []).append(math.fsum(scores) / len(scores))
    return [(tool, math.fsum(m) / len(m), len(m)) for tool, m in cells.items()]


def top_groups(means: Sequence[tuple[str | None, float, int]], k: int, min_tasks: int) -> tuple[str, ...]:
    """The ``k`` best ranked tools (those with at least ``min_tasks`` tasks), best first; equal
    rounded scores in name order, as the leaderboard lists them."""
    ranked = sorted(
        ((tool or UNKNOWN, round(mean, 2)) for tool, mean, n_tasks in means if n_tasks >= min_tasks),
        key=lambda item: (-item[1], item[0]),
    )
    return tuple(name for name, _ in ranked[:k])


def rank_drift(before: tuple[str, ...], after: tuple[str, ...]) -> RankDrift | None:
    """A :class:`RankDrift` when the top changed; ``None`` when it did not, or when there was no
    ranked group before (the first ranks are not a reordering)."""
    return RankDrift(before, after) if before and before != after else None
