"""Many submissions at once: the orchestration behind ``Arena.evaluate_many``.

Records or columns come in; each row gets its task, its baseline (computed per the configured
scope unless given), its scores, and its rank, percentile and provisional mark within its task.
The vectorised path runs when every component in use has a batch form and no submission has a
workspace to check; otherwise each submission goes through :func:`~arena_core.engine.each.evaluate_each` and is
ranked per task, with the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from operator import attrgetter
from typing import Any

import numpy as np

from arena_core.engine import ranking
from arena_core.engine.baselinetable import BaselineTable
from arena_core.engine.columns import Columns, all_measured
from arena_core.engine.each import evaluate_each
from arena_core.engine.gating import Gated, gate_scores, passes
from arena_core.engine.grouped import group_baselines, passed_baselines
from arena_core.engine.plans import TaskPlans, check_tasks, task_plans
from arena_core.engine.results import EvaluationList
from arena_core.engine.scoring import Scorer
from arena_core.engine.telemetry import ZERO_MEANS_MISSING, missing_error
from arena_core.engine.vectorised import batch_reason, evaluate_columns
from arena_core.model.errors import ValidationError
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.model.serde import structure

__all__ = ["evaluate_many"]


def evaluate_many(
    scorer: Scorer,
    submissions: Sequence[Submission] | Columns,
    tasks: Sequence[Task],
    given_baselines: Mapping[str, Baseline],
    default_baseline: Baseline,
    stamp: str,
) -> Sequence[Evaluation]:
    """Score, baseline and rank ``submissions`` (structured records, or columns) against ``tasks``.

    :param given_baselines: task id to a baseline that replaces the computed one.
    :param default_baseline: used below the minimum number of submissions for tasks without a
        default baseline of their own.
    :raises ValidationError: a submission names a task that is not among ``tasks``, or an
        invalid figure.
    """
    check_tasks(scorer, tasks)
    records = None if isinstance(submissions, Columns) else submissions
    columns = submissions if isinstance(submissions, Columns) else Columns.from_submissions(submissions)
    _check_unique(columns)
    task_codes = _task_codes(columns, tasks)
    plans = task_plans(scorer, tasks)
    _check_required(scorer, columns, plans, task_codes)
    baselines, baseline_codes, _ = _baselines(
        scorer, columns, tasks, task_codes, given_baselines, default_baseline, stamp
    )
    with_workspace = next((s for s in records or () if s.workspace is not None), None)
    scored = _score(
        scorer, columns, records, tasks, task_codes, plans, baselines, baseline_codes, stamp, with_workspace
    )
    gate = scorer.gate
    if gate is not None and any(gate in p.weights for p in plans.distinct_profiles):
        # Under a gate, the resource baselines come from the runs that passed it (engine/gating.py).
        passed = passes(gate_scores(scored, gate))
        baselines, baseline_codes, unsolved = _baselines(
            scorer, columns, tasks, task_codes, given_baselines, default_baseline, stamp, passed
        )
        scored = _score(
            scorer, columns, records, tasks, task_codes, plans, baselines, baseline_codes, stamp, with_workspace,
            Gated(unsolved, scored, gate),
        )  # fmt: skip
    # A difficulty fitted to the runs (difficulty_source = "irt") adjusts the batch as a whole, last.
    return scored if scorer.refit_difficulty is None else scorer.refit_difficulty(scored)


def _score(
    scorer: Scorer,
    columns: Columns,
    records: Sequence[Submission] | None,
    tasks: Sequence[Task],
    task_codes: np.ndarray,
    plans: TaskPlans,
    baselines: Sequence[Baseline],
    baseline_codes: np.ndarray,
    stamp: str,
    with_workspace: Submission | None,
    gated: Gated | None = None,
) -> Sequence[Evaluation]:
    """One scoring pass: the batch path when it can run, else one record at a time.

    :param gated: the second pass under a gate: per row, whether its task has no run that passed
        the gate, and the gate's results of the first pass (its criteria are not checked again).
    """
    unsolved = gated.unsolved if gated is not None else None
    minimum = scorer.config.min_submissions_per_tool
    if with_workspace is None:
        result = evaluate_columns(
            scorer, columns, tasks, task_codes, baselines, baseline_codes, minimum, stamp, plans, unsolved
        )
        if result is not None:
            return result
        reason = batch_reason(scorer, tasks, plans) or "a component in use has no batch form"
    else:
        reason = f"submission {with_workspace.id!r} has a workspace to check"
    # Workspaces to check, or a component in use without a batch form: one record at a time.
    if records is None:
        records = [structure(columns.record(i), Submission) for i in range(columns.size)]
    items = [(s, tasks[task_codes[i]], baselines[baseline_codes[i]]) for i, s in enumerate(records)]
    scored = evaluate_each(scorer, items, stamp, None if gated is None else gated.per_record())
    return EvaluationList(ranking.annotate_within_tasks(scored, minimum), reason)


def _check_unique(columns: Columns) -> None:
    """Refuse a batch in which an id appears twice: its evaluations could not be told apart."""
    for row, first in columns.repeated_ids():
        raise ValidationError(
            f"submission {columns.ids[row]!r}",
            "id",
            f"an id used once in the batch (rows {first + 1} and {row + 1})",
            code="duplicate_id",
        )


def _task_codes(columns: Columns, tasks: Sequence[Task]) -> np.ndarray:
    """Per row, the index of its task; an unknown task id names the submission."""
    index = dict(zip(map(attrgetter("id"), tasks), range(len(tasks)), strict=True))
    by_id, distinct = columns.codes("task_ids")  # one lookup per distinct task id
    codes: np.ndarray = np.fromiter(map(index.get, distinct, repeat(-1)), dtype=np.int64, count=len(distinct))[by_id]
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        known = ", ".join(sorted(index)) or "none"
        raise ValidationError(
            f"submission {str(columns.ids[row])!r}",
            "task_id",
            f"one of the given tasks ({known})",
            columns.task_ids[row],
        )
    return codes


def _check_required(scorer: Scorer, columns: Columns, plans: TaskPlans, task_codes: np.ndarray) -> None:
    """Refuse the batch, naming every missing field at once, when submissions lack figures that a
    metric of their task's profile requires under the ``error`` policy."""
    missing: dict[str, np.ndarray] = {}
    needed_by: dict[str, list[str]] = {}
    row_profiles = plans.profile_codes[task_codes]
    lacking_rows: dict[str, np.ndarray | None] = {}  # per field, the rows without it (None: none), found once
    for code, profile in enumerate(plans.distinct_profiles):
        needed = scorer.required_fields(profile)
        if not needed:
            continue
        for field, metrics in needed.items():
            if field not in lacking_rows:
                values = columns.numeric[field]
                zero_missing = field in ZERO_MEANS_MISSING
                found = (
                    None if all_measured(values, zero_missing) else np.isnan(values) | ((values == 0) & zero_missing)
                )
                lacking_rows[field] = found if found is not None and found.any() else None
            without = lacking_rows[field]
            if without is None:
                continue
            lacking = without & (row_profiles == code)
            if lacking.any():
                missing[field] = missing.get(field, np.zeros(columns.size, dtype=bool)) | lacking
                needed_by[field] = list(dict.fromkeys([*needed_by.get(field, []), *metrics]))
    if missing:
        first = int(min(np.flatnonzero(mask)[0] for mask in missing.values()))
        counts = {field: int(mask.sum()) for field, mask in missing.items()}
        raise missing_error(str(columns.ids[first]), counts, columns.size, needed_by)


def _baselines(
    scorer: Scorer,
    columns: Columns,
    tasks: Sequence[Task],
    task_codes: np.ndarray,
    given: Mapping[str, Baseline],
    default_baseline: Baseline,
    stamp: str,
    passed: np.ndarray | None = None,
) -> tuple[BaselineTable, np.ndarray, np.ndarray]:
    """One baseline per group of the configured scope (a table: objects built when read), each
    row's group, and per row whether (with ``passed``) its group has no run that passed.

    :param passed: under a gate, the runs the baselines are computed from: those that passed it.
        A group with at least one such run takes their statistics (not the default below 5),
        and a figure some run of the group lacks is left out for all of them, passed or not.
    """
    scope = scorer.config.baseline_scope
    if scope == "task":
        codes, group_tasks = task_codes, list(tasks)
    else:
        extra = {
            "task_tool": (columns.tools,),
            "task_model": (columns.models,),
            "task_tool_model": (columns.tools, columns.models),
        }[scope]
        index: dict[tuple[Any, ...], int] = {}
        codes = np.fromiter(
            (index.setdefault((int(task_codes[i]), *(e[i] for e in extra)), len(index)) for i in range(columns.size)),
            dtype=np.int64,
            count=columns.size,
        )
        group_tasks = [tasks[key[0]] for key in index]  # each group's task, in group order
    count = len(group_tasks)
    defaults = [own or default_baseline for own in map(attrgetter("default_baseline"), group_tasks)]
    ids = list(map(attrgetter("id"), group_tasks))
    samples, assume_one = scorer.sample_fields(), scorer.assumes_one_iteration
    unsolved = np.zeros(columns.size, dtype=bool)
    if passed is None:
        computed = group_baselines(columns, codes, count, defaults, ids, stamp, samples, assume_one)
    else:
        computed, none_passed = passed_baselines(
            columns, codes, count, defaults, ids, stamp, samples, assume_one, passed
        )
        unsolved = none_passed[codes]
    replaced = {i: given[t.id] for i, t in enumerate(group_tasks) if t.id in given} if given else {}
    return (computed.replaced(replaced) if replaced else computed), codes, unsolved


def provisional_tools(scorer: Scorer, tools: Iterable[str | None]) -> frozenset[str | None]:
    """Tools with fewer than the configured minimum of submissions among ``tools``."""
    return ranking.provisional_tools(tools, scorer.config.min_submissions_per_tool)
