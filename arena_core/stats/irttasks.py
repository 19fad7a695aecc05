"""Fitted task difficulty, the tasks whose label disagrees with it, and the most informative
subset of tasks (``arena tasks``, ``arena tasks --select N``).

The difficulty is the Rasch (or 2PL) difficulty of :mod:`arena_core.stats.irt`, in logits: a
group whose ability equals it solves the task half the time. It is fitted over the cells that
hold runs (:mod:`arena_core.stats.irtcells`), so a board of many groups and tasks fits in
memory. A label disagrees when a ``beginner`` task lies in the hardest third of the fitted
difficulties, or an ``advanced`` one in the easiest third. A subset is chosen as
tinyBenchmarks and Fluid Benchmarking choose one: the tasks with the most Fisher information
about the groups at their fitted abilities; its worth is how closely the ranking fitted on the
subset alone agrees with the full board's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from attrs import frozen

from arena_core.model.errors import ValidationError
from arena_core.stats.irtcells import Cells, Coded, fit_cells, task_information
from arena_core.stats.rankstats import kendall_tau_b
from arena_core.stats.tasktable import Runs

__all__ = ["LABEL_ORDER", "Selection", "TaskFit", "fit_tasks", "label_disagreements", "select_tasks"]

#: The spec's difficulty labels, easiest first.
LABEL_ORDER = ("beginner", "intermediate", "advanced")


@frozen
class TaskFit:
    task: str
    difficulty: float
    """Fitted difficulty, logits (higher: harder)."""
    slope: float | None
    """2PL discrimination (``None`` under Rasch)."""
    information: float
    """Fisher information about the groups at their fitted abilities."""


@frozen
class Selection:
    """The ``size`` most informative tasks and how the ranking they give agrees with the full one."""

    tasks: tuple[str, ...]
    kendall_tau: float
    """Kendall's tau-b between the groups' abilities fitted on the subset and on every task."""
    groups: int


def _cells(runs: Runs, coded: Coded | None = None) -> Cells:
    """The board's cells that hold verdicts: the fit reads no ``(groups, tasks)`` array, so a
    board of 2,000 groups x 100,000 tasks fits as readily as a small one."""
    found = Cells.of(runs, coded)
    if found is None:
        raise ValidationError("tasks", "correctness", "runs with correctness scores (the fit reads the verdicts)")
    return found


def fit_tasks(runs: Runs, model: str = "rasch", coded: Coded | None = None) -> tuple[dict[str, float], list[TaskFit]]:
    """(group to ability, one :class:`TaskFit` per task in task order) of ``runs``; ``coded``
    their groups and tasks, when the caller coded them (:meth:`Cells.of`)."""
    cells = _cells(runs, coded)
    found = fit_cells(cells, model)
    info = task_information(found)
    abilities = dict(zip(cells.groups, found.abilities[0].tolist(), strict=True))
    rows = [
        TaskFit(task, float(found.difficulties[0, t]), float(found.discriminations[0, t]) if model != "rasch" else None,
                float(info[t]))
        for t, task in enumerate(cells.tasks)
    ]  # fmt: skip
    return abilities, rows


def label_disagreements(fits: Sequence[TaskFit], labels: Mapping[str, str | None]) -> set[str]:
    """Tasks labelled ``beginner`` in the hardest third of the fitted difficulties, or
    ``advanced`` in the easiest third."""
    if len(fits) < 3:
        return set()
    low, high = np.quantile([f.difficulty for f in fits], [1 / 3, 2 / 3])
    out = set()
    for f in fits:
        label = labels.get(f.task)
        if (label == "beginner" and f.difficulty > high) or (label == "advanced" and f.difficulty < low):
            out.add(f.task)
    return out


def select_tasks(runs: Runs, size: int, model: str = "rasch") -> Selection:
    """The ``size`` tasks with the most information at the fitted abilities, and the agreement
    of the subset's own fit with the full one.

    :raises ValidationError: ``size`` is not between 1 and the number of tasks.
    """
    cells = _cells(runs)
    if not 1 <= size <= len(cells.tasks):
        raise ValidationError("tasks", "select", f"a number of tasks from 1 to {len(cells.tasks)}", size)
    full = fit_cells(cells, model)
    chosen = np.sort(np.argsort(-task_information(full), kind="stable")[:size])
    weights = np.zeros(len(cells.tasks))
    weights[chosen] = 1.0
    subset = fit_cells(cells, model, weights)
    ran = np.zeros(len(cells.groups), dtype=bool)  # groups the subset measures at all
    ran[cells.group[weights[cells.task] > 0]] = True
    tau = kendall_tau_b(full.abilities[0][ran], subset.abilities[0][ran]) if ran.sum() > 1 else np.nan
    return Selection(tuple(cells.tasks[i] for i in chosen.tolist()), float(tau), int(ran.sum()))
