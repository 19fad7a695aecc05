"""Each task's weight profile and difficulty adjuster, found once per (category, difficulty).

A hundred thousand tasks come in a handful of categories and difficulties: the pairs are
factorised once (at C speed), each distinct pair is planned by the scorer, and the tasks get
their profile and adjuster through codes, without a lookup or an identity hash per task.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np
from attrs import frozen

from arena_core.engine.columns import factorize, factorize_objects
from arena_core.model.protocols import DifficultyAdjuster
from arena_core.model.records import Task, WeightProfile

if TYPE_CHECKING:
    from arena_core.engine.scoring import Scorer

__all__ = ["TaskPlans", "check_tasks", "task_plans"]


@frozen
class TaskPlans:
    """The profiles and adjusters of a list of tasks, per task and as codes into the distinct ones."""

    profiles: list[WeightProfile]
    """Per task, its weight profile."""
    adjusters: list[DifficultyAdjuster | None]
    """Per task, its difficulty adjuster (``None``: no difficulty)."""
    profile_codes: np.ndarray
    """Per task, the index of its profile in :attr:`distinct_profiles`."""
    distinct_profiles: list[WeightProfile]
    adjuster_codes: np.ndarray
    """Per task, the index of its adjuster in :attr:`distinct_adjusters`."""
    distinct_adjusters: list[DifficultyAdjuster | None]

    def tasks_by_profile(self, tasks: Sequence[Task]) -> list[tuple[WeightProfile, list[Task]]]:
        """Each distinct profile with its tasks, in order."""
        return [
            (profile, list(map(tasks.__getitem__, np.flatnonzero(self.profile_codes == code).tolist())))
            for code, profile in enumerate(self.distinct_profiles)
        ]


def check_tasks(scorer: Scorer, tasks: Sequence[Task]) -> None:
    """:meth:`Scorer.check_task` for each kind of task (category, difficulty and criteria tuple,
    which tasks of one kind share), on its first task: the error is the one the first invalid
    task in order would raise."""
    kinds = list(
        zip(
            map(attrgetter("category"), tasks),
            map(attrgetter("difficulty"), tasks),
            map(id, map(attrgetter("success_criteria"), tasks)),
            strict=True,
        )
    )
    first = _first_tasks(kinds, tasks)
    for kind in dict.fromkeys(kinds):
        scorer.check_task(first[kind])


def task_plans(scorer: Scorer, tasks: Sequence[Task]) -> TaskPlans:
    """The plans of ``tasks``; an unknown category or difficulty raises the scorer's error
    naming the first task that has it."""
    pairs = list(zip(map(attrgetter("category"), tasks), map(attrgetter("difficulty"), tasks), strict=True))
    pair_codes, distinct_pairs = factorize(pairs)
    first = _first_tasks(pairs, tasks)  # each pair's first task, to name in errors
    planned = [scorer.plan_for(first[pair]) for pair in distinct_pairs]
    profile_of_pair, distinct_profiles = factorize_objects([profile for profile, _ in planned])
    adjuster_of_pair, distinct_adjusters = factorize_objects([adjuster for _, adjuster in planned])
    profile_codes, adjuster_codes = profile_of_pair[pair_codes], adjuster_of_pair[pair_codes]
    return TaskPlans(
        list(map(distinct_profiles.__getitem__, profile_codes.tolist())),
        list(map(distinct_adjusters.__getitem__, adjuster_codes.tolist())),
        profile_codes,
        distinct_profiles,
        adjuster_codes,
        distinct_adjusters,
    )


def _first_tasks(kinds: Sequence[Hashable], tasks: Sequence[Task]) -> dict[Hashable, Task]:
    """Each kind's first task (``kinds``: one per task): the reversed pairs' last write wins."""
    return dict(zip(reversed(kinds), reversed(tasks), strict=True))
