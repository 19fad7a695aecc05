"""Evaluations as leaderboard runs: each one's group label, task, scores and coverage.

A group is named by ``tool``, ``model``, ``tool,model`` (``TOOL / MODEL``) or ``meta.KEY``
(a key of the submissions' ``meta``, which evaluations do not carry: the caller hands the
submissions' meta over). An :class:`~arena_core.engine.results.EvaluationBatch` is read on its
arrays, without building an evaluation per submission.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from arena_core.engine.columns import Coded, factorize
from arena_core.engine.results import EvaluationBatch
from arena_core.importing.runs import VERDICT_CRITERION
from arena_core.model.errors import ValidationError
from arena_core.model.records import Evaluation, Task
from arena_core.model.serde import structure
from arena_core.stats.celltable import CellTable
from arena_core.stats.room import REMEDY, BoardTooLarge
from arena_core.stats.tasktable import Runs, TaskTable, dimension_order

if TYPE_CHECKING:
    from arena_core.engine.scoring import Scorer

__all__ = [
    "HARNESS_ERRORS",
    "UNKNOWN",
    "check_by",
    "check_cluster",
    "distinct_names",
    "gather_runs",
    "group_labels",
    "harness_error",
    "labels",
    "meta_matches",
    "needs_meta",
    "runs_of",
    "task_table",
    "ungraded",
]

#: The label of a run whose tool, model or meta value is absent.
UNKNOWN = "(unknown)"
#: The flags importers set (in a submission's ``meta.flags``) for a failure of the harness
#: rather than of the agent.
HARNESS_ERRORS = frozenset({"verdict_missing", "harness_error", "sample_error", "invalidated"})


def harness_error(meta: Mapping[str, Any] | None) -> bool:
    """Whether a submission's meta flags it as a harness error."""
    flags = (meta or {}).get("flags") or ()
    return isinstance(flags, (list, tuple)) and not HARNESS_ERRORS.isdisjoint(flags)


def ungraded(meta: Mapping[str, Any] | None, task: Task | None) -> bool:
    """Whether nothing would grade a run: its importer flagged it ``not_graded`` (a trajectory
    without the report that grades it) and its task's only criterion is that missing verdict.
    Scored, it would rank as a failure; a task with another criterion (a judge, a command)
    grades it."""
    flags = (meta or {}).get("flags") or ()
    if not isinstance(flags, (list, tuple)) or "not_graded" not in flags:
        return False
    if task is None:
        return True
    return bool(task.success_criteria) and all(c.type == VERDICT_CRITERION for c in task.success_criteria)


def meta_matches(meta: Mapping[str, Any] | None, where: Mapping[str, str]) -> bool:
    """Whether a submission's meta has each KEY of ``where`` equal to its VALUE (as text)."""
    info = meta or {}
    return all(info.get(key) is not None and str(info[key]) == value for key, value in where.items())


def check_by(by: str) -> list[str]:
    """The keys ``by`` names, or a ValidationError saying what it may be."""
    if by in ("tool", "model", "tool,model") or (by.startswith("meta.") and len(by) > 5 and "," not in by):
        return by.split(",")
    raise ValidationError("leaderboard", "by", "'tool', 'model', 'tool,model' or 'meta.KEY'", by)


def check_cluster(cluster: str) -> None:
    """:raises ValidationError: ``cluster`` is not ``meta.KEY``."""
    if not cluster.startswith("meta.") or len(cluster) == 5:
        raise ValidationError("leaderboard", "cluster", "'meta.KEY'", cluster)


def needs_meta(by: str) -> bool:
    """Whether grouping ``by`` reads the submissions' meta: a meta key, or the model (a run whose
    model is unknown is named by the harness run its meta records)."""
    return by.startswith("meta.") or "model" in by.split(",")


def gather_runs(
    scorer: Scorer,
    evaluations: Iterable[Evaluation | Mapping[str, Any]],
    by: str,
    **selection: Any,
) -> Runs:
    """:func:`runs_of` the evaluations given (records, dicts, or an evaluation batch)."""
    check_by(by)
    chosen: Sequence[Evaluation]
    if isinstance(evaluations, EvaluationBatch):
        chosen = evaluations
    else:
        chosen = [structure(e, Evaluation) for e in evaluations]
    return runs_of(scorer, chosen, by, **selection)


def task_table(
    scorer: Scorer, evaluations: Iterable[Evaluation | Mapping[str, Any]] | TaskTable, by: str, **selection: Any
) -> TaskTable:
    """The :class:`TaskTable` of :func:`gather_runs`, or the table given (a streamed board's cells).

    :raises BoardTooLarge: given a board held as its cells that hold runs (a streamed board too
        large for its dense table), which a statistic of the dense table cannot read.
    """
    if isinstance(evaluations, TaskTable):
        return evaluations
    if isinstance(evaluations, CellTable):
        shape = f"{len(evaluations.groups):,} groups x {len(evaluations.tasks):,} tasks"
        raise BoardTooLarge(
            f"a board of {shape} is held as its cells, too large for the dense table this needs: {REMEDY}"
        )
    return TaskTable.of(gather_runs(scorer, evaluations, by, **selection))


def runs_of(
    scorer: Scorer,
    evaluations: Sequence[Evaluation],
    by: str,
    meta: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    tasks: Collection[str] | None = None,
    where: Mapping[str, str] | None = None,
    cluster: str | None = None,
    task_meta: Mapping[str, Mapping[str, Any]] | None = None,
) -> Runs:
    """The evaluations as runs grouped by ``by``; ``meta`` maps submission ids to their meta
    (needed for ``meta.KEY``, ``where`` and ``infra_failures = "exclude"``; a submission missing
    from it is ``(unknown)``). Under ``infra_failures = "exclude"`` the runs flagged as harness
    errors are left out.

    :param tasks: keep only the runs of these tasks.
    :param where: keep only the runs whose submission's ``meta`` has each KEY equal to VALUE
        (compared as text).
    :param cluster: ``meta.KEY`` naming the family of each run's task (a repository), so that
        intervals and rank ranges resample families, not tasks: read from the run's meta, else
        from its task's (``task_meta``: task id to the task's meta), where the runs lack it.
    """
    runs = _runs(scorer, evaluations, by, meta)
    if cluster is not None:
        check_cluster(cluster)
        families = _column(cluster, [], [], runs.ids, meta)
        if task_meta and any(f is None for f in families):
            key = cluster.removeprefix("meta.")
            from_task = {t: None if m.get(key) is None else str(m[key]) for t, m in task_meta.items()}
            families = [f if f is not None else from_task.get(t) for f, t in zip(families, runs.tasks, strict=True)]
        runs = attrs.evolve(runs, clusters=families)
    exclude = scorer.config.infra_failures == "exclude"
    if exclude and meta is None:
        raise ValidationError(
            "leaderboard", "meta", "the submissions' meta, to leave out harness errors (infra_failures = exclude)", None
        )
    if tasks is None and not where and not exclude:
        return runs
    ids = runs.ids
    keep = np.ones(len(ids), dtype=bool)
    if tasks is not None:
        wanted = set(tasks)
        keep &= np.fromiter((t in wanted for t in runs.tasks), dtype=bool, count=len(ids))
    if where or exclude:
        info = meta or {}
        keep &= np.fromiter(
            (meta_matches(info.get(i), where or {}) and not (exclude and harness_error(info.get(i))) for i in ids),
            dtype=bool,
            count=len(ids),
        )
    return runs.select(keep)


def labels(
    by: str,
    tools: Sequence[str | None],
    models: Sequence[str | None],
    ids: Sequence[str],
    meta: Mapping[str, Mapping[str, Any]] | None = None,
    aliases: Mapping[str, str] | None = None,
) -> Sequence[str]:
    """Per run, the name of its group under ``by``: a model by its alias where ``aliases`` (the
    ``model_aliases`` setting) gives one, an unknown model by the harness run it came from."""
    return group_labels([_column(key, tools, models, ids, meta, aliases) for key in check_by(by)])


def _runs(
    scorer: Scorer, evaluations: Sequence[Evaluation], by: str, meta: Mapping[str, Mapping[str, Any]] | None
) -> Runs:
    aliases = scorer.config.model_aliases
    if isinstance(evaluations, EvaluationBatch):
        return Runs(
            evaluations.ids,
            labels(by, evaluations.tools, evaluations.models, evaluations.ids, meta, aliases),
            evaluations.task_ids,
            np.asarray(evaluations.overall, dtype=float),
            {d: np.asarray(evaluations.scores[d], dtype=float) for d in dimension_order(evaluations.dimensions())},
            np.asarray(evaluations.coverage, dtype=float),
        )
    ids = [e.submission_id for e in evaluations]
    dimensions = dimension_order(dict.fromkeys(d for e in evaluations for d in e.scores))
    return Runs(
        ids,
        labels(by, [e.tool for e in evaluations], [e.model for e in evaluations], ids, meta, aliases),
        [e.task_id for e in evaluations],
        np.array([e.overall_score for e in evaluations], dtype=float),
        {d: np.array([e.scores.get(d, np.nan) for e in evaluations], dtype=float) for d in dimensions},
        np.array(
            [scorer.coverage(e.filled, e.weight_profile) if e.coverage is None else e.coverage for e in evaluations],
            dtype=float,
        ),
    )


def _column(
    key: str,
    tools: Sequence[str | None],
    models: Sequence[str | None],
    ids: Sequence[str],
    meta: Mapping[str, Mapping[str, Any]] | None,
    aliases: Mapping[str, str] | None = None,
) -> Sequence[Any]:
    if key == "tool":
        return tools
    if key == "model":
        if aliases:
            models = [aliases.get(m, m) if m is not None else None for m in models]
        if all(m is not None for m in models):
            return models
        return [
            m if m is not None else _UnknownModel(_run_of(ident, meta)) for m, ident in zip(models, ids, strict=True)
        ]
    if meta is None:
        raise ValidationError("leaderboard", key, "the submissions' meta to read it from (none was given)", None)
    name = key.removeprefix("meta.")
    values = [meta.get(i, {}).get(name) for i in ids]
    return [None if v is None else str(v) for v in values]


def _run_of(ident: str, meta: Mapping[str, Mapping[str, Any]] | None) -> str:
    """The harness run a submission came from (its meta's ``run_id``, else its ``source``), else
    the submission itself: runs whose model is unknown are grouped per run, never pooled."""
    info = (meta or {}).get(ident) or {}
    return str(info.get("run_id") or info.get("source") or ident)


def group_labels(columns: list[Sequence[Any]]) -> Sequence[str]:
    """A label per run: each key's value (``(unknown)`` when absent), joined with `` / ``.
    Each column is factorized first and the pairs combined as codes, so a million runs are
    labelled by their handful of distinct names and pairs, never joined row by row; the labels
    come :class:`Coded` when no two pairs share one.

    Groups are their tuples of values, never their joined text: where two distinct tuples would
    read alike (tool ``openhands``, model ``CodeAct / gpt-5`` against tool ``openhands / CodeAct``,
    model ``gpt-5``; a model literally named ``(unknown)`` against an absent one), every present
    value is quoted (``"openhands" / "CodeAct / gpt-5"``), so they stay two groups with two labels."""
    combined = np.zeros(len(columns[0]), dtype=np.int64)
    distincts = []
    for column in columns:
        codes, distinct = factorize(column)
        combined = combined * max(len(distinct), 1) + codes
        distincts.append(distinct)
    codes, pairs = (combined, list(range(len(distincts[0])))) if len(columns) == 1 else factorize(combined.tolist())
    keys = []
    for pair in pairs:
        parts = []
        for distinct in reversed(distincts):
            pair, index = divmod(pair, len(distinct))
            parts.append(distinct[index])
        keys.append(tuple(reversed(parts)))
    names = distinct_names(keys)
    return Coded(codes, names) if names else []


def distinct_names(keys: Sequence[tuple[Any, ...]]) -> list[str]:
    """A label for each distinct group key, distinct as the keys are (see :func:`group_labels`)."""
    plain = [" / ".join(UNKNOWN if part is None else str(part) for part in key) for key in keys]
    if len(set(plain)) == len(plain):
        return plain
    return [
        " / ".join(
            json.dumps(part, ensure_ascii=False) if isinstance(part, str) else str(part or UNKNOWN) for part in key
        )
        for key in keys
    ]


@attrs.frozen
class _UnknownModel:
    """The group of runs whose model no record names: one per harness run (never pooled, and
    never the same group as a model that happens to be spelled like this label)."""

    run: str

    def __str__(self) -> str:
        return f"(unknown model: {self.run})"
