"""Writing evaluations as JSON Lines, JSON, CSV or a terminal table, one record at a time."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from typing import IO

from arena_core.io.table import render
from arena_core.model.records import Evaluation
from arena_core.model.serde import to_dict

__all__ = ["FORMATS", "write_evaluations"]

FORMATS = ("jsonl", "json", "csv", "table")


def _dimensions(evaluations: Sequence[Evaluation]) -> list[str]:
    return list(dict.fromkeys(d for ev in evaluations for d in ev.scores))


def _row(ev: Evaluation, dimensions: Sequence[str]) -> list[object]:
    return [
        ev.submission_id,
        ev.task_id,
        ev.tool,
        ev.model,
        ev.overall_score,
        *(ev.scores.get(d) for d in dimensions),
        ev.unadjusted_overall_score,
        ev.overall_ranking,
        ev.percentile,
        ev.provisional,
        ev.weight_profile,
        ev.difficulty,
        ";".join(f"{k}={v}" for k, v in ev.filled.items()),
    ]


def _header(dimensions: Sequence[str]) -> list[str]:
    return [
        "submission_id",
        "task_id",
        "tool",
        "model",
        "overall_score",
        *(f"{d}_score" for d in dimensions),
        "unadjusted_overall_score",
        "overall_ranking",
        "percentile",
        "provisional",
        "weight_profile",
        "difficulty",
        "filled",
    ]


def write_evaluations(evaluations: Sequence[Evaluation], fmt: str, out: IO[str]) -> None:
    """Write ``evaluations`` to ``out`` in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "jsonl":
        for ev in evaluations:
            out.write(json.dumps(to_dict(ev)) + "\n")
    elif fmt == "json":
        out.write("[\n")
        for index, ev in enumerate(evaluations):
            out.write(("  " if index == 0 else ", ") + json.dumps(to_dict(ev)) + "\n")
        out.write("]\n")
    elif fmt == "csv":
        dimensions = _dimensions(evaluations)
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(_header(dimensions))
        writer.writerows(["" if v is None else v for v in _row(ev, dimensions)] for ev in evaluations)
    else:
        dimensions = _dimensions(evaluations)
        rows: Iterable[list[object]] = (
            [
                ev.task_id,
                ev.overall_ranking,
                ev.submission_id,
                ev.tool,
                ev.overall_score,
                *(ev.scores.get(d) for d in dimensions),
                ev.percentile,
            ]
            for ev in evaluations
        )
        out.write(
            render(
                ["Task", "Rank", "Submission", "Tool", "Overall", *(d.capitalize() for d in dimensions), "Pctl"],
                list(rows),
            )
            + "\n"
        )
