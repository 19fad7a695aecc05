"""``arena leaderboard --correctness-source corrected``: each group's correctness corrected by
people's labels (:mod:`arena_core.stats.corrected`), shown beside the board."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from arena_core.arena import Arena
from arena_core.cli.app import State
from arena_core.model.labels import Label
from arena_core.model.records import Evaluation, Task
from arena_core.stats.corrected import CorrectedRow, corrected_correctness
from arena_core.stats.runs import labels as group_names
from arena_core.store.labels import LabelStore

__all__ = ["corrected_rows", "corrected_table"]


def corrected_rows(
    state: State,
    arena: Arena,
    evaluations: Sequence[Evaluation],
    tasks: Mapping[str, Task],
    by: str,
    meta: Mapping[str, Mapping[str, Any]] | None,
    store_path: Path | str | None,
) -> dict[str, CorrectedRow]:
    """Each group's corrected correctness, from the labels of ``--labels`` and, with a store,
    those stored (``arena ingest --labels``, the review queue)."""
    labels: list[Label] = list(state.labels)
    if store_path is not None:
        labels += LabelStore(store_path).labels()
    if not labels:
        raise click.UsageError(
            "correctness_source = corrected needs people's labels: give --labels FILE (or a store holding some)"
        )
    names = group_names(
        by,
        [e.tool for e in evaluations],
        [e.model for e in evaluations],
        [e.submission_id for e in evaluations],
        meta,
        arena.config.model_aliases,
    )
    return corrected_correctness(evaluations, [str(n) for n in names], tasks, labels)


def corrected_table(rows: Mapping[str, CorrectedRow], order: Sequence[str]) -> tuple[list[str], dict[str, list[Any]]]:
    """The board's extra columns: the judges' and the corrected mean correctness over runs, the
    corrected interval, and how many runs were labelled."""
    header = ["Judge corr.", "Corrected", "95% CI (corr.)", "Labelled"]
    cells = {}
    for group in order:
        row = rows.get(group)
        if row is None:
            continue
        interval = "-" if math.isnan(row.low) else f"{row.low:.2f}-{row.high:.2f}"
        corrected = "-" if math.isnan(row.corrected) else f"{row.corrected:.2f}"
        cells[group] = [f"{row.judge:.2f}", corrected, interval, f"{row.labelled}/{row.runs}"]
    return header, cells
