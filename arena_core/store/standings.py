"""What the pipeline reads and writes per task, as columns: the stored submissions' figures and
the stored evaluations' scores, instead of the stored objects.

Ranks and percentiles move for most of a task's evaluations whenever one is added, so a store
that wrote them would rewrite its whole history with every batch. A store that offers
``scores(task_id)`` and ``mark_provisional(task_id, tool, provisional)`` (the built-in SQLite
store does) instead derives each evaluation's ``overall_ranking`` and ``percentile`` from the
stored scores when it reads them, and a batch costs a read of a few numbers per stored row of
the tasks it touches, a sort, and the rows it adds. A store with only the nine methods of
:class:`~arena_core.store.Transaction` still works: its evaluations are read, re-ranked and
written back, at O(stored objects) per batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
from attrs import frozen

from arena_core.engine import ranking
from arena_core.engine.columns import Columns
from arena_core.engine.grouped import competition_ranks_by_group
from arena_core.engine.rounding import round_exact
from arena_core.model.records import Evaluation

__all__ = ["Scores", "Standing", "put_all", "rank_task", "submission_columns"]

#: Batches of up to this many runs of a task are ranked by counting, through the scores' index,
#: the stored scores above and below each (``standing``); larger ones read the task's scores.
COUNTED = 16


@frozen
class Scores:
    """A task's stored evaluations as columns, in first-stored order."""

    ids: Sequence[str]
    overall: np.ndarray
    """Overall scores (float)."""
    tools: Sequence[str | None]
    provisional: np.ndarray
    """The stored provisional mark of each (bool)."""


@frozen
class Standing:
    """Where a few new evaluations stand among a task's stored ones, counted by the store."""

    above: Sequence[int]
    """Per new evaluation, the stored scores above its own."""
    below: Sequence[int]
    """Per new evaluation, the stored scores below its own."""
    tools: Mapping[str | None, tuple[int, bool, bool]]
    """Per tool with stored evaluations of the task: how many, and the least and greatest of
    their provisional marks."""


def submission_columns(tx: Any, task_id: str) -> Columns:
    """The figures of the task's stored submissions, first-stored order."""
    read = getattr(tx, "submission_columns", None)
    if read is not None:
        columns: Columns = read(task_id)
        return columns
    return Columns.from_submissions(tx.submissions(task_id))


def rank_task(tx: Any, task_id: str, scored: Sequence[Evaluation], minimum: int) -> list[Evaluation]:
    """Store ``scored`` (replacing stored evaluations with the same ids) ranked among the task's
    stored evaluations, and return them with their rank, percentile and provisional mark.

    :param minimum: fewer submissions of a tool than this for the task mark it provisional.
    """
    if getattr(tx, "scores", None) is None:
        return _rank_objects(tx, task_id, scored, minimum)
    count = getattr(tx, "standing", None)
    found: Standing | None = count(task_id, scored) if count is not None and len(scored) <= COUNTED else None
    if found is not None:
        return _rank_counted(tx, task_id, scored, minimum, found)
    stored: Scores = tx.scores(task_id)
    fresh_ids = {e.submission_id for e in scored}
    kept = [i for i, ident in enumerate(stored.ids) if ident not in fresh_ids]
    overall = np.concatenate([stored.overall[kept], np.array([e.overall_score for e in scored], dtype=float)])
    tools = [stored.tools[i] for i in kept] + [e.tool for e in scored]
    ranks, percentiles = competition_ranks_by_group(np.zeros(len(overall), dtype=np.int64), overall)
    few = ranking.provisional_tools(tools, minimum)
    marked = {
        tool: bool(mark) for tool, mark in zip([stored.tools[i] for i in kept], stored.provisional[kept], strict=True)
    }
    for tool, was in marked.items():  # a tool that crossed the minimum: its stored rows change mark
        if was != (tool in few):
            tx.mark_provisional(task_id, tool, tool in few)
    n = len(kept)
    ranked = [
        attrs.evolve(ev, overall_ranking=int(r), percentile=float(p), provisional=ev.tool in few)
        for ev, r, p in zip(scored, ranks[n:], percentiles[n:], strict=True)
    ]
    _store(tx, ranked)
    return ranked


def _rank_counted(
    tx: Any, task_id: str, scored: Sequence[Evaluation], minimum: int, found: Standing
) -> list[Evaluation]:
    """:func:`rank_task` from the store's counts: the ranks and percentiles the task's whole
    set of scores gives (competition ranks; the share strictly below, rounded as
    :func:`~arena_core.engine.grouped.competition_ranks_by_group` rounds it)."""
    fresh = np.array([e.overall_score for e in scored], dtype=float)
    everyone = sum(n for n, _, _ in found.tools.values()) + len(scored)
    ranks = [1 + above + int(np.sum(fresh > value)) for above, value in zip(found.above, fresh, strict=True)]
    below = np.array([b + int(np.sum(fresh < value)) for b, value in zip(found.below, fresh, strict=True)])
    percentiles = round_exact(below / everyone * 100, 1)
    counts = Counter({tool: n for tool, (n, _, _) in found.tools.items()}) + Counter(e.tool for e in scored)
    few = {tool for tool, n in counts.items() if n < minimum}
    for tool, (_, least, most) in found.tools.items():  # a tool that crossed the minimum: its rows change mark
        if least != (tool in few) or most != (tool in few):
            tx.mark_provisional(task_id, tool, tool in few)
    ranked = [
        attrs.evolve(ev, overall_ranking=r, percentile=float(p), provisional=ev.tool in few)
        for ev, r, p in zip(scored, ranks, percentiles, strict=True)
    ]
    _store(tx, ranked)
    return ranked


def _store(tx: Any, evaluations: list[Evaluation]) -> None:
    put_all(tx, "evaluation", evaluations)


def put_all(tx: Any, kind: str, records: Sequence[Any], *args: Any, verb: str = "put") -> None:
    """Store records of ``kind`` (``submission``, ``evaluation``) all at once where the store
    can (``put_submissions``, ``put_evaluations``), else one by one; ``verb`` names another
    method pair (``keep``: ``keep_evaluation_versions``), ``args`` follow the records."""
    many = getattr(tx, f"{verb}_{kind}s", None)
    if many is not None:
        many(records, *args)
        return
    for record in records:
        getattr(tx, f"{verb}_{kind}")(record, *args)


def _rank_objects(tx: Any, task_id: str, scored: Sequence[Evaluation], minimum: int) -> list[Evaluation]:
    """:func:`rank_task` for a store of objects alone: every stored evaluation is re-ranked and
    the ones whose standing moved are written back."""
    fresh = {e.submission_id: e for e in scored}
    stored = [e for e in tx.evaluations(task_id) if e.submission_id not in fresh]
    everyone = stored + list(scored)
    few = ranking.provisional_tools((e.tool for e in everyone), minimum)
    annotated = ranking.annotate(everyone, few)
    for before, after in zip(stored, annotated, strict=False):
        if (before.overall_ranking, before.percentile, before.provisional) != (
            after.overall_ranking,
            after.percentile,
            after.provisional,
        ):
            tx.put_evaluation(after)
    ranked = annotated[len(stored) :]
    for ev in ranked:
        tx.put_evaluation(ev)
    return ranked
