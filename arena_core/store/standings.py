"""What the pipeline reads and writes per task, as columns: the stored submissions' figures and
the stored evaluations' scores, instead of the stored objects.

Ranks and percentiles move for most of a task's evaluations whenever one is added, so a store
that wrote them would rewrite its whole history with every batch. A store that offers
``scores(task_id)`` and ``mark_provisional(task_id, tool, provisional)`` (the built-in SQLite
store does) instead derives each evaluation's ``overall_ranking`` and ``percentile`` from the
stored scores when it reads them, and a batch costs a read of a few numbers per stored row of
the tasks it touches (none for a writer that keeps them: store/figurecache.py), two binary
searches of each new score among them (kept sorted: :attr:`Scores.ordered`), and the rows it
adds. A store with only the nine methods of :class:`~arena_core.store.Transaction` still
works: its evaluations are read, re-ranked and written back, at O(stored objects) per batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import compress
from typing import Any

import attrs
import numpy as np
from attrs import frozen

from arena_core.engine import ranking
from arena_core.engine.columns import Columns, factorize
from arena_core.engine.rounding import round_exact
from arena_core.model.records import Evaluation

__all__ = ["Scores", "Standing", "place", "put_all", "rank_task", "rank_tasks", "submission_columns", "tally"]

#: Batches of up to this many runs of a task are asked of the store's ``standing`` (which may
#: count, through the scores' index, the stored scores above and below each); larger ones, and
#: those it declines, are placed among the task's scores read (:func:`place`).
COUNTED = 16


@frozen
class Scores:
    """A task's stored evaluations as columns, in first-stored order, with the two summaries a
    batch is ranked by (kept up to date by the store's figure cache as runs are added, so that
    placing a batch reads none of the task's history: store/figurecache.py)."""

    ids: Sequence[str]
    overall: np.ndarray
    """Overall scores (float)."""
    tools: Sequence[str | None]
    provisional: np.ndarray
    """The stored provisional mark of each (bool)."""
    ordered: np.ndarray = attrs.field()
    """The overall scores sorted (NaN last): a new score's place is two binary searches."""
    by_tool: Mapping[str | None, tuple[int, int]] = attrs.field()
    """Per tool with stored evaluations: how many, and how many of them are marked provisional."""

    @ordered.default
    def _sorted(self) -> np.ndarray:
        return np.sort(self.overall)

    @by_tool.default
    def _tallied(self) -> Mapping[str | None, tuple[int, int]]:
        return tally(self.tools, self.provisional)


def tally(tools: Sequence[str | None], marks: np.ndarray) -> dict[str | None, tuple[int, int]]:
    """Per tool: (evaluations, those marked provisional)."""
    codes, names = factorize(tools)
    counts = np.bincount(codes, minlength=len(names))
    marked = np.bincount(codes, weights=marks.astype(float), minlength=len(names))
    return {tool: (int(n), int(m)) for tool, n, m in zip(names, counts.tolist(), marked.tolist(), strict=True)}


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


def rank_task(
    tx: Any, task_id: str, scored: Sequence[Evaluation], minimum: int, versions: Sequence[int | None] | None = None
) -> list[Evaluation]:
    """Store ``scored`` (replacing stored evaluations with the same ids) ranked among the task's
    stored evaluations, and return them with their rank, percentile and provisional mark.

    :param minimum: fewer submissions of a tool than this for the task mark it provisional.
    :param versions: each evaluation's ``baseline_version``, set in the same copy as its rank
        (a second copy of each evaluation would cost about 27 µs a run).
    """
    (ranked,) = rank_tasks(tx, [(task_id, scored, versions)], minimum)
    return ranked


def rank_tasks(
    tx: Any,
    tasks: Sequence[tuple[str, Sequence[Evaluation], Sequence[int | None] | None]],
    minimum: int,
    stored_here: Sequence[set[str] | None] | None = None,
) -> list[list[Evaluation]]:
    """:func:`rank_task` for several tasks, each ``(task id, scored, versions)``: each task's
    evaluations ranked among its own stored ones, and all of them stored at once where the
    store derives ranks from scores (one statement for a batch's 500 tasks, not 500).

    :param stored_here: per task, the batch's ids stored for it already, as the pipeline found
        them with the task's figures (``None``: found among its stored ids, see :func:`place`)."""
    if getattr(tx, "scores", None) is None:
        return [
            _rank_objects(tx, task_id, _versioned(scored, versions), minimum) for task_id, scored, versions in tasks
        ]
    count = getattr(tx, "standing", None)
    ranked = []
    for index, (task_id, scored, versions) in enumerate(tasks):
        found: Standing | None = count(task_id, scored) if count is not None and len(scored) <= COUNTED else None
        if found is None:
            found = place(tx.scores(task_id), scored, None if stored_here is None else stored_here[index])
        ranked.append(_rank_counted(tx, task_id, scored, minimum, found, versions))
    _store(tx, [e for evaluations in ranked for e in evaluations])
    return ranked


def _versioned(scored: Sequence[Evaluation], versions: Sequence[int | None] | None) -> Sequence[Evaluation]:
    """``scored``, each with its ``baseline_version`` from ``versions`` when given."""
    if versions is None:
        return scored
    return [attrs.evolve(e, baseline_version=v) for e, v in zip(scored, versions, strict=True)]


def place(stored: Scores, scored: Sequence[Evaluation], again: set[str] | None = None) -> Standing:
    """Where ``scored`` stands among the task's stored scores (those of the same ids left out),
    as the store would count it: each new score is placed among the stored ones, kept sorted
    (:attr:`Scores.ordered`), by two binary searches, so a batch of k runs costs O(k log n)
    over n stored, and each tool's count and marks are the kept ones (:attr:`Scores.by_tool`).

    :param again: the batch's ids stored for the task already, when the batch looked them up;
        else they are found among the stored ids. Their stored rows give way: the stored
        scores are then sorted and tallied without them, at O(n log n).
    """
    if again is None:
        again = {e.submission_id for e in scored}.intersection(stored.ids)
    ordered, by_tool = stored.ordered, stored.by_tool
    if again:  # re-submissions: their stored rows give way
        kept = np.array([ident not in again for ident in stored.ids], dtype=bool)
        ordered, by_tool = (
            np.sort(stored.overall[kept]),
            tally(list(compress(stored.tools, kept)), stored.provisional[kept]),
        )
    fresh = np.array([e.overall_score for e in scored], dtype=float)
    return Standing(
        above=(len(ordered) - np.searchsorted(ordered, fresh, "right")).tolist(),
        below=np.searchsorted(ordered, fresh, "left").tolist(),
        tools={tool: (n, m == n, m > 0) for tool, (n, m) in by_tool.items()},
    )


def _rank_counted(
    tx: Any,
    task_id: str,
    scored: Sequence[Evaluation],
    minimum: int,
    found: Standing,
    versions: Sequence[int | None] | None,
) -> list[Evaluation]:
    """:func:`rank_task` from the store's counts: the ranks and percentiles the task's whole
    set of scores gives (competition ranks; the share strictly below, rounded as
    :func:`~arena_core.engine.grouped.competition_ranks_by_group` rounds it)."""
    fresh = np.array([e.overall_score for e in scored], dtype=float)
    everyone = sum(n for n, _, _ in found.tools.values()) + len(scored)
    ordered = np.sort(fresh)  # each new score's place among the new ones, by a binary search
    ranks = (1 + np.asarray(found.above) + len(fresh) - np.searchsorted(ordered, fresh, "right")).tolist()
    below = np.asarray(found.below) + np.searchsorted(ordered, fresh, "left")
    percentiles = round_exact(below / everyone * 100, 1)
    counts = Counter({tool: n for tool, (n, _, _) in found.tools.items()}) + Counter(e.tool for e in scored)
    few = {tool for tool, n in counts.items() if n < minimum}
    for tool, (_, least, most) in found.tools.items():  # a tool that crossed the minimum: its rows change mark
        if least != (tool in few) or most != (tool in few):
            tx.mark_provisional(task_id, tool, tool in few)
    versions = [e.baseline_version for e in scored] if versions is None else versions
    return [
        _standing_of(ev, r, p, ev.tool in few, v)
        for ev, r, p, v in zip(scored, ranks, percentiles.tolist(), versions, strict=True)
    ]


def _standing_of(ev: Evaluation, rank: int, percentile: float, provisional: bool, version: int | None) -> Evaluation:
    """``attrs.evolve(ev, ...)`` of the four fields ranking sets, made as attrs makes a frozen
    dict class (its ``__dict__`` written): ``evolve`` passes all 22 fields to ``__init__`` by
    keyword, 7.6 us a copy, about 38 ms of a batch of 5,000. An evaluation has no validators
    or converters to skip (``test_a_ranked_copy_is_attrs_evolve`` holds both to that)."""
    copy: Evaluation = object.__new__(Evaluation)
    copy.__dict__.update(ev.__dict__)
    copy.__dict__.update(overall_ranking=rank, percentile=percentile, provisional=provisional, baseline_version=version)
    return copy


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
