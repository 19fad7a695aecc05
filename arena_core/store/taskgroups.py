"""Steps 2-6 of the pipeline for a group of tasks at once: baselines, scoring, outliers, ranks and
the next baseline versions of every task of the group, each step one pass over the group's rows.

A batch is most often one agent's run of every task of a benchmark: 500 runs over 500 tasks.
Taken a task at a time, each task paid the fixed cost of every step (a baseline computation, a
scoring pass, a write of its runs and one of its evaluations): about 2 ms a task, ten times a
run's own cost. The engine's steps already take rows of many tasks, each keyed by its task;
here the group's stored and new rows are laid out task after task, and each step runs once.

Tasks stay apart: a baseline key names its task, a rank is counted among the task's own stored
scores, and outliers are judged among the task's own runs, so a task's results are those it
would get in a batch of its own (tests/test_task_groups.py checks it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import attrs
import numpy as np
from attrs import frozen

from arena_core.engine.baselines import scope_key
from arena_core.engine.columns import Columns, factorize, factorize_objects
from arena_core.engine.each import evaluate_each
from arena_core.engine.gating import Gated, gate_scores, known_gates, passes
from arena_core.engine.grouped import group_baselines, passed_baselines
from arena_core.engine.grouporder import GroupOrder
from arena_core.engine.vectorised import evaluate_columns
from arena_core.model.errors import ValidationError
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.stats.quality import Outlier, outliers_of_tasks
from arena_core.store.bulk import read_baselines
from arena_core.store.drift import BaselineDrift, baseline_drift
from arena_core.store.standings import put_all, rank_tasks, submission_columns
from arena_core.store.storedids import REPLACE_HINT

if TYPE_CHECKING:
    from arena_core.arena import Arena
    from arena_core.store import Transaction

__all__ = ["ROWS_AT_ONCE", "Scored", "TaskRuns", "baseline_key", "run_tasks"]

#: A group's tasks are gathered until their stored and new rows reach this many: the group's
#: figures are held at once, so a batch over tasks with long histories takes a few at a time.
ROWS_AT_ONCE = 50_000


@frozen
class TaskRuns:
    """One task's runs in the batch."""

    task: Task
    batch: list[Submission]
    stored_here: set[str] | None = None
    """The batch's ids stored for the task already, when the batch looked them up (else they
    are found among the task's stored ids)."""


@frozen
class Scored:
    """What steps 2-6 did for a group of tasks."""

    ranked: list[list[Evaluation]]
    """Per task, its runs' evaluations in batch order, ranked among all of the task's."""
    outliers: list[Outlier]
    baselines: dict[str, Baseline]
    """The next version of each baseline key the runs were scored under (the caller writes them)."""
    drift: list[BaselineDrift]


def baseline_key(submission: Submission, scope: str) -> str:
    """The store key of a submission's baseline: its task id, plus its group under a scoped baseline."""
    task_id, *group = scope_key(submission, scope)
    return _key(task_id, group)


def _key(task_id: str | None, group: Sequence[str | None]) -> str:
    key = task_id or ""
    return key if not group else "\x1f".join([key, *(g or "" for g in group)])


def _key_codes(
    columns: Columns, part_of_row: np.ndarray, task_ids: list[str], scope: str
) -> tuple[np.ndarray, list[str]]:
    """The code of every row's :func:`baseline_key` among the distinct keys, and those keys:
    under the task scope a row's key is its task's (keying 10,000 rows one by one took 0.5 ms)."""
    if scope == "task":
        return part_of_row, task_ids
    extra: list[Sequence[str | None]] = {
        "task_tool": [columns.tools],
        "task_model": [columns.models],
        "task_tool_model": [columns.tools, columns.models],
    }[scope]
    return factorize([_key(t, group) for t, group in zip(columns.task_ids, zip(*extra, strict=True), strict=True)])


def _on_record(tx: Transaction, runs: TaskRuns, replace: bool) -> tuple[Columns, set[str]]:
    """The task's stored figures, without the rows the batch replaces (refused unless
    ``replace``), and the batch's ids stored for the task (found once: its ranking leaves their
    stored scores out likewise)."""
    task, batch = runs.task, runs.batch
    on_record = submission_columns(tx, task.id)
    again = {s.id for s in batch}.intersection(on_record.ids) if runs.stored_here is None else runs.stored_here
    already = [i for i in on_record.ids if i in again] if again else []
    if already and not replace:
        shown = ", ".join(repr(i) for i in already[:5]) + (f" and {len(already) - 5} more" if len(already) > 5 else "")
        raise ValidationError(
            f"submission {already[0]!r}",
            "id",
            f"an id not yet stored for task {task.id!r} (stored already: {shown}; replace them with {REPLACE_HINT})",
            code="duplicate_id",
        )
    if already:  # re-submissions replace the stored rows
        on_record = on_record.take(np.array([i not in again for i in on_record.ids], dtype=bool))
    return on_record, again


def run_tasks(
    arena: Arena,
    tx: Transaction,
    group: Sequence[TaskRuns],
    stamp: str,
    replace: bool,
    fresh: bool = False,
    stored: Mapping[str, Baseline | None] | None = None,
) -> Scored:
    """Steps 2-6 for the batch's runs of a group of tasks (each task once): their evaluations
    (each naming the baseline version it was scored against), the outliers among them, the
    baselines stored after them and the medians those moved beyond ``drift_threshold``.

    :param fresh: score against the baselines computed with the batch (stored as the next
        versions) rather than against the stored ones.
    :param stored: the stored baselines the batch read at once, by key (a key not among them is
        read here)."""
    done = Scored([], [], {}, [])
    held: list[tuple[TaskRuns, Columns, set[str]]] = []
    rows, ahead = 0, 0
    # The stored figures and scores of the next tasks, at once; not for a post's single task,
    # whose few runs are placed by counting through the scores' index (store/typed.py).
    read_ahead = getattr(tx, "read_ahead", None) if len(group) > 1 else None
    for index, runs in enumerate(group):
        if read_ahead is not None and index >= ahead:
            ahead = index + read_ahead([r.task.id for r in group[index:]], ROWS_AT_ONCE)
            read_ahead = read_ahead if ahead > index else None  # a store that keeps no figures
        on_record, again = _on_record(tx, runs, replace)
        held.append((runs, on_record, again))
        rows += len(on_record.ids) + len(runs.batch)
        if rows >= ROWS_AT_ONCE or index == len(group) - 1:
            scored = _run_group(arena, tx, held, stamp, fresh, stored)
            done.ranked.extend(scored.ranked)
            done.outliers.extend(scored.outliers)
            done.baselines.update(scored.baselines)
            done.drift.extend(scored.drift)
            held, rows = [], 0
    return done


def _run_group(
    arena: Arena,
    tx: Transaction,
    held: list[tuple[TaskRuns, Columns, set[str]]],
    stamp: str,
    fresh: bool,
    stored: Mapping[str, Baseline | None] | None,
) -> Scored:
    """:func:`run_tasks` for tasks whose rows are held at once: each with its stored figures."""
    scope = arena.config.baseline_scope
    group = [runs for runs, _, _ in held]
    records = [on_record for _, on_record, _ in held]
    incoming = [Columns.from_submissions(runs.batch) for runs in group]
    parts = [p for pair in zip(records, incoming, strict=True) for p in pair]  # task after task
    everyone = Columns.concat(parts, in_place=True)  # the stored names read where they are kept
    sizes = np.array([len(p.ids) for p in parts], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    part_of_row = np.repeat(np.arange(len(group)), sizes[0::2] + sizes[1::2])
    new_rows = np.concatenate([np.arange(starts[2 * t + 1], starts[2 * t + 2]) for t in range(len(group))])
    tasks = [runs.task for runs in group]
    subs = [s for runs in group for s in runs.batch]
    fresh_columns = incoming[0] if len(incoming) == 1 else Columns.concat(incoming)
    task_codes = part_of_row[new_rows]
    # 2. baseline retrieval: the stored baseline, else (and 6. afterwards) the group's statistics.
    key_codes, keys = _key_codes(everyone, part_of_row, [t.id for t in tasks], scope)
    key_task = np.zeros(len(keys), dtype=np.int64)
    key_task[key_codes] = part_of_row
    defaults = [task.default_baseline or arena.default_baseline for task in tasks]
    assume_one = arena.scorer.assumes_one_iteration
    arguments = (  # what each key's baseline is computed with, past its rows and their groups
        len(keys),
        [defaults[t] for t in key_task.tolist()],
        [tasks[t].id for t in key_task.tolist()],
        stamp,
        arena.scorer.sample_fields(),
        assume_one,
    )
    # Under the task scope a task's rows are its baseline's: its medians are read by rank from
    # the order the store keeps of its stored figures and the batch's runs, and its tokens'
    # medians serve the outlier check too (4.).
    by_task = list(zip(records, incoming, strict=True))
    shared = GroupOrder(everyone, key_codes, len(keys), assume_one, by_task) if scope == "task" else None
    computed = dict(zip(keys, group_baselines(everyone, key_codes, *arguments, order=shared), strict=True))
    batch_keys = [keys[c] for c in key_codes[new_rows].tolist()]
    wanted = list(dict.fromkeys(batch_keys))
    unread = [key for key in wanted if stored is None or key not in stored]
    read = {**(stored or {}), **(read_baselines(tx, unread) if unread else {})}
    previous = {key: read[key] for key in wanted}
    # Without a stored baseline (or fresh), the batch is scored against the one stored after it.
    retrieved = _retrieved(previous, computed, fresh)
    gated = None
    gate = arena.scorer.gate
    gated_tasks = np.array([gate is not None and gate in arena.scorer.profile_for(t).weights for t in tasks])
    if gate is not None and gated_tasks.any():
        # Under a gate, a gated task's resource baselines come from the runs that passed it
        # (engine/gating.py): the stored runs by their stored scores, the batch's by a first pass.
        first = _score(arena, subs, fresh_columns, tasks, task_codes, [retrieved[k] for k in batch_keys], stamp)
        ran = np.ones(len(everyone.ids), dtype=bool)
        for t in np.flatnonzero(gated_tasks).tolist():
            on_file = {e.submission_id: e.scores.get(gate, math.nan) for e in tx.evaluations(tasks[t].id)}
            earlier = np.array([on_file.get(i, math.nan) for i in records[t].ids], dtype=float)
            ran[starts[2 * t] : starts[2 * t + 1]] = passes(earlier)
        ran[new_rows] = passes(gate_scores(first, gate))
        table, none_passed = passed_baselines(everyone, key_codes, *arguments, ran)
        for code in np.flatnonzero(gated_tasks[key_task]).tolist():
            computed[keys[code]] = table[code]
        retrieved = _retrieved(previous, computed, fresh)
        gated = Gated(none_passed[key_codes[new_rows]], first, gate)  # an ungated task's runs all passed
    row_baselines = [retrieved[k] for k in batch_keys]
    scored = list(_score(arena, subs, fresh_columns, tasks, task_codes, row_baselines, stamp, gated))  # 3.
    spans = [(int(starts[2 * t]), int(starts[2 * t + 1]), int(starts[2 * t + 2])) for t in range(len(group))]
    medians = None if shared is None else shared.median("total_tokens")
    outliers = outliers_of_tasks(everyone, spans, medians)  # 4. the batch's runs, each among all of its task's
    put_all(tx, "submission", subs)
    ends = np.cumsum([len(runs.batch) for runs in group]).tolist()
    versions = [b.version for b in row_baselines]
    ranked = rank_tasks(  # 5. ranking update
        tx,
        [(task.id, scored[a:b], versions[a:b]) for task, a, b in zip(tasks, [0, *ends[:-1]], ends, strict=True)],
        arena.config.min_submissions_per_tool,
        [again for _, _, again in held],
    )
    updated, moved = {}, []
    threshold = arena.config.drift_threshold
    for key, before in previous.items():  # 6. baseline update: the next version of each
        updated[key] = attrs.evolve(computed[key], version=(before.version or 0) + 1 if before else 1)
        if before is not None and threshold:
            moved += baseline_drift(key, before, updated[key], threshold)
    return Scored(ranked, outliers, updated, moved)


def _retrieved(
    stored: Mapping[str, Baseline | None], computed: Mapping[str, Baseline], fresh: bool
) -> dict[str, Baseline]:
    """The baseline each key's runs are scored against: the stored one, else (or when
    ``fresh``) the one computed with the batch, as the version it will be stored as."""
    return {
        key: b if b is not None and not fresh else attrs.evolve(computed[key], version=(b.version or 0) + 1 if b else 1)
        for key, b in stored.items()
    }


def _score(
    arena: Arena,
    subs: list[Submission],
    columns: Columns,
    tasks: list[Task],
    task_codes: np.ndarray,
    row_baselines: list[Baseline],
    stamp: str,
    gated: Gated | None = None,
) -> Sequence[Evaluation]:
    """The runs scored against their baselines: by the batch path, except the runs with a
    workspace to check (and every run, when some component has no batch form), which are
    scored record by record (ranks are assigned afterwards). A batch scored the batch way is
    returned as it is: the first pass under a gate reads one column of it, not its objects.

    :param gated: the second pass under a gate: per run, whether no run of its task passed the
        gate, and the first pass, whose gate results are not checked again.
    """
    checked = [i for i, s in enumerate(subs) if s.workspace is not None]
    batched = np.setdiff1d(np.arange(len(subs)), checked) if checked else np.arange(len(subs))
    codes, distinct = factorize_objects([row_baselines[i] for i in batched.tolist()])
    scored: Sequence[Evaluation] | None = evaluate_columns(
        arena.scorer,
        columns if not checked else columns.take(batched),
        tasks,
        task_codes[batched],
        distinct,
        codes,
        arena.config.min_submissions_per_tool,
        stamp,
        unsolved=None if gated is None else gated.unsolved[batched],
    ) if len(batched) else []  # fmt: skip
    if scored is None:  # a component without a batch form: every run record by record
        checked, batched, scored = list(range(len(subs))), np.arange(0), []
    elif not checked:
        return scored
    out: list[Evaluation] = [None] * len(subs)  # type: ignore[list-item]
    for i, ev in zip(batched.tolist(), scored, strict=True):
        out[i] = ev
    if checked:
        items = [(subs[i], tasks[task_codes[i]], row_baselines[i]) for i in checked]
        kept = (
            None
            if gated is None
            else (gated.unsolved[checked], known_gates([gated.first[i] for i in checked], gated.gate))
        )
        for i, ev in zip(checked, evaluate_each(arena.scorer, items, stamp, kept), strict=True):
            out[i] = ev
    return out
