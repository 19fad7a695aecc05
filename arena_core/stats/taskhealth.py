"""Task health: which tasks a benchmark's runs say something about, and which they do not.

A task nobody solves, or everybody solves every time, moves no ranking; a task whose verdict
changes between attempts of the same group measures luck as much as skill; harness errors are
not the agent's. One row per task: its runs, groups, solve rate (a run solves it when its
correctness is 100), each group's solve rate, the mean overall score, its **discrimination**
(the point-biserial correlation between a run's verdict and its group's solve rate over all
tasks, as item analysis defines it: high when the groups that solve more elsewhere solve this
one) and its flags:

- ``unsolved``: no run solved it; ``saturated``: every run of every group solved it;
- ``flaky``: some group's repeated attempts disagree;
- ``undiscriminating``: discrimination below :data:`DISCRIMINATION` (or undefined: every run
  has the same verdict, or every group the same solve rate);
- ``harness_errors``: some run carries a flag an importer sets for a harness error
  (:data:`arena_core.stats.runs.HARNESS_ERRORS`);
- ``step_limit``: some run stopped at the harness's step limit, where an importer records it;
- ``label_disagrees``: its difficulty label says ``beginner`` and its fitted difficulty lies in
  the hardest third, or ``advanced`` and the easiest third (:mod:`arena_core.stats.irttasks`).

Each row also has its **fitted difficulty** (logits, item response theory: Rasch by default,
2PL with its ``slope``), NaN when no run has a correctness score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from attrs import frozen

from arena_core.stats.irttasks import fit_tasks, label_disagreements
from arena_core.stats.runs import HARNESS_ERRORS
from arena_core.stats.tasktable import Runs, sorted_codes

__all__ = ["DISCRIMINATION", "TaskHealth", "task_health"]

#: Below this discrimination a task is ``undiscriminating``.
DISCRIMINATION = 0.1


@frozen
class TaskHealth:
    task: str
    runs: int
    groups: int
    solve_rate: float
    group_solve_rates: dict[str, float]
    mean_score: float
    discrimination: float
    """NaN where undefined."""
    flags: tuple[str, ...]
    difficulty: float = math.nan
    """Fitted IRT difficulty, logits (NaN: no correctness to fit)."""
    slope: float | None = None
    """The 2PL discrimination, when the fit is 2PL."""


def task_health(
    runs: Runs,
    meta: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    model: str = "rasch",
    labels: Mapping[str, str | None] | None = None,
) -> list[TaskHealth]:
    """One row per task of ``runs``, in task order; ``meta`` (submission id to meta) gives the
    importers' flags for ``harness_errors`` and ``step_limit``; ``model`` the IRT fit
    (``rasch`` or ``2pl``); ``labels`` (task to difficulty label) the labels checked against it."""
    if not len(runs.ids):
        return []
    correctness = runs.dimensions.get("correctness")
    task_of, task_names = sorted_codes(runs.tasks)  # sorted as np.unique sorts (0.8 s at 500,000 runs)
    group_of, group_names = sorted_codes(runs.groups)
    coded = ((group_of, group_names), (task_of, task_names))  # the fit's too
    fits = {f.task: f for f in fit_tasks(runs, model, coded)[1]} if correctness is not None else {}
    disagree = label_disagreements(list(fits.values()), labels or {})
    solved = np.zeros(len(runs.ids)) if correctness is None else (np.nan_to_num(correctness) >= 100.0) * 1.0
    tasks, groups = len(task_names), len(group_names)
    # Every reduction by task (or by task and group) at once: the runs sorted by task, then
    # each task a stretch of them (a scan of every run per task took minutes at 20,000 tasks).
    order = np.lexsort((group_of, task_of))
    starts = np.searchsorted(task_of[order], np.arange(tasks))
    count = np.bincount(task_of, minlength=tasks)
    rate = np.bincount(task_of, solved, minlength=tasks) / count
    overall = np.bincount(group_of, solved, minlength=groups) / np.bincount(group_of, minlength=groups)
    score = overall[group_of]  # each run's group's solve rate over every task
    verdicts_vary = np.minimum.reduceat(solved[order], starts) != np.maximum.reduceat(solved[order], starts)
    scores_vary = np.minimum.reduceat(score[order], starts) != np.maximum.reduceat(score[order], starts)
    discrimination = _point_biserials(task_of, solved, score, count, verdicts_vary & scores_vary & (count >= 2))
    # the cells that hold runs, summed by their own codes: a board of 2,000 groups x 100,000
    # tasks has 200,000,000 cells, and an array of them all took 1.6 GB
    cells, in_cell, cell_runs = np.unique(task_of * groups + group_of, return_inverse=True, return_counts=True)
    cell_rate = np.bincount(in_cell, solved, minlength=len(cells)) / cell_runs
    flaky = np.zeros(tasks, dtype=bool)
    np.logical_or.at(flaky, cells // groups, (cell_runs >= 2) & (cell_rate > 0.0) & (cell_rate < 1.0))
    rates: list[dict[str, float]] = [{} for _ in range(tasks)]
    for key, value in zip(cells.tolist(), cell_rate.tolist(), strict=True):
        rates[key // groups][group_names[key % groups]] = value
    errors, limits = _flagged(runs, meta, HARNESS_ERRORS, frozenset({"step_limit"}))
    errored = np.bincount(task_of, errors, minlength=tasks) > 0
    limited = np.bincount(task_of, limits, minlength=tasks) > 0
    mean_score = np.bincount(task_of, runs.overall, minlength=tasks) / count
    out = []
    for k, task in enumerate(task_names):
        flags = [
            name
            for name, present in (
                ("unsolved", rate[k] == 0.0),
                ("saturated", rate[k] == 1.0),
                ("flaky", bool(flaky[k])),
                ("undiscriminating", math.isnan(discrimination[k]) or discrimination[k] < DISCRIMINATION),
                ("harness_errors", bool(errored[k])),
                ("step_limit", bool(limited[k])),
                ("label_disagrees", task in disagree),
            )
            if present
        ]
        out.append(
            TaskHealth(
                task, int(count[k]), len(rates[k]), float(rate[k]), rates[k], float(mean_score[k]),
                float(discrimination[k]), tuple(flags),
                fits[task].difficulty if task in fits else math.nan, fits[task].slope if task in fits else None,
            )
        )  # fmt: skip
    return out


def _point_biserials(
    task_of: np.ndarray, verdicts: np.ndarray, scores: np.ndarray, count: np.ndarray, defined: np.ndarray
) -> np.ndarray:
    """Per task, Pearson's correlation of its runs' 0/1 verdicts with their scores, from centred
    sums; NaN where either does not vary (or fewer than two runs)."""
    tasks = len(count)
    x = verdicts - (np.bincount(task_of, verdicts, minlength=tasks) / count)[task_of]
    y = scores - (np.bincount(task_of, scores, minlength=tasks) / count)[task_of]
    with np.errstate(invalid="ignore", divide="ignore"):
        found = np.bincount(task_of, x * y, minlength=tasks) / np.sqrt(
            np.bincount(task_of, x * x, minlength=tasks) * np.bincount(task_of, y * y, minlength=tasks)
        )
    return np.where(defined, found, np.nan)


def _flagged(runs: Runs, meta: Mapping[str, Mapping[str, Any]] | None, *kinds: frozenset[str]) -> list[np.ndarray]:
    """Per kind of flag, per run: 1 where its meta's ``flags`` name one of the kind's names. The
    metas are looked through once for any flags, and the runs only when some run has them (the
    runs of a board of 500,000 were walked once per kind: over a second)."""
    out = [np.zeros(len(runs.ids)) for _ in kinds]
    named = [(ident, own["flags"]) for ident, own in (meta or {}).items() if own and "flags" in own]
    flagged = {ident: flags for ident, flags in named if isinstance(flags, (list, tuple)) and flags}
    if not flagged:
        return out
    for index, ident in enumerate(runs.ids):
        flags = flagged.get(ident)
        if flags is not None:
            for found, names in zip(out, kinds, strict=True):
                if names.intersection(flags):
                    found[index] = 1.0
    return out
