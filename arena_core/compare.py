"""Two scoring profiles on the same submissions: :func:`compare`.

It builds an :class:`~arena_core.arena.Arena` per profile, scores the submissions under each, and
hands both scorings to :func:`arena_core.stats.comparison.compare_scorings` for the statistics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from arena_core.arena import Arena
from arena_core.config.settings import ScoringConfig
from arena_core.engine.collector import collector_paused
from arena_core.engine.columns import Columns
from arena_core.engine.inputs import records_of
from arena_core.model.records import Submission, Task
from arena_core.stats.comparison import Comparison, compare_scorings
from arena_core.stats.deltas import Side
from arena_core.stats.runs import labels

__all__ = ["Comparison", "compare", "group_labels"]

#: Both scorings share one timestamp, so ties break alike.
_STAMP = "1970-01-01T00:00:00+00:00"


def compare(
    submissions: Iterable[Submission | Mapping[str, Any]] | Columns,
    tasks: Mapping[str, Task | Mapping[str, Any]],
    a: tuple[str, ScoringConfig],
    b: tuple[str, ScoringConfig],
    *,
    top_k: int = 10,
    resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
    movers: int = 10,
    by: str = "tool",
    **arena_options: Any,
) -> Comparison:
    """Score ``submissions`` under profile ``a`` and profile ``b`` (``(name, config)`` pairs, as
    :meth:`arena_core.config.files.LoadedConfig.profile` returns them) and compare B with A.

    :param top_k: size of the top set whose overlap is reported.
    :param resamples: paired bootstrap resamples for the interval of the mean delta.
    :param seed: the bootstrap's seed; the same inputs and seed give the same report.
    :param movers: how many of the largest movers to list.
    :param by: what the per-group table groups by: ``tool``, ``model``, ``tool,model`` or
        ``meta.KEY`` (read from the submissions' meta).
    :param arena_options: passed to both :class:`~arena_core.arena.Arena` objects
        (``plugin_manager``, ``autoload``, ``blocked``).
    """
    with collector_paused():  # millions of acyclic records: see arena_core.engine.collector
        arena_a, arena_b = (Arena(config, profile=name, **arena_options) for name, config in (a, b))
        items = submissions if isinstance(submissions, Sequence | Columns) else list(submissions)
        # Read once for both scorings: into columns, or into models when the per-record path needs them.
        records: Sequence[Submission] | Sequence[Submission | Mapping[str, Any]] | Columns = (
            items  # each scoring prices (or not) the records as they were given
            if (arena_a.pricer is not None or arena_b.pricer is not None) and not isinstance(items, Columns)
            else records_of(items, arena_a.structure_submission, strict=arena_a.config.strict)
        )
        # Each scoring is reduced to the columns a comparison reads before the next is made, so
        # the two full results never coexist (on a million submissions: 160 MB less at the peak).
        names = group_labels(items, by, arena_a.config.model_aliases)
        scorings = [
            (name, attrs.evolve(Side.of(arena.evaluate_many(records, tasks, evaluated_at=_STAMP)), tools=names),
             arena.provenance)
            for (name, _), arena in ((a, arena_a), (b, arena_b))
        ]  # fmt: skip
        return compare_scorings(
            scorings[0],
            scorings[1],
            top_k=top_k,
            resamples=resamples,
            confidence_level=confidence_level,
            seed=seed,
            movers=movers,
            by=by,
            min_tasks=arena_a.config.min_tasks_per_group,
        )


def group_labels(
    items: Sequence[Submission | Mapping[str, Any]] | Columns, by: str, aliases: Mapping[str, str] | None = None
) -> Sequence[str]:
    """Per submission, its group's name under ``by`` (``tool``, ``model``, ``tool,model``,
    ``meta.KEY``), named as leaderboards name it (:func:`arena_core.stats.runs.labels`: model
    ``aliases``, an unknown model by its harness run, an absent value ``(unknown)``). Columns
    name their runs' meta by ``Columns.metas`` (none: every meta empty).

    :raises ValidationError: ``by`` names something else.
    """
    if isinstance(items, Columns):
        names = list(map(str, items.ids))
        metas = items.metas if items.metas is not None else [{}] * items.size
        return labels(by, list(items.tools), list(items.models), names, dict(zip(names, metas, strict=True)), aliases)
    ids: list[str] = []
    tools: list[str | None] = []
    models: list[str | None] = []
    meta: dict[str, Mapping[str, Any]] = {}
    for i, item in enumerate(items):
        record: Mapping[str, Any] = (
            item
            if isinstance(item, Mapping)
            else {"id": item.id, "tool": item.tool, "model": item.model, "meta": item.meta}
        )
        ids.append(str(record.get("id", i)))
        tools.append(record.get("tool"))
        models.append(record.get("model"))
        meta[ids[-1]] = record.get("meta") or {}
    return labels(by, tools, models, ids, meta, aliases)
