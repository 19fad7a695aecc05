"""What swapping a scoring algorithm changes: two scorings of the same submissions compared.

``compare_scorings(a, b)`` takes both scorings (``arena_core.compare`` makes them) and
reports, for B relative to A: per-submission and per-tool score deltas (overall and per
dimension), rank changes within each task and the largest movers, Kendall's tau-b and
Spearman's rho between the two scorings (all submissions pooled, and per task), the overlap
of the top k, and a paired bootstrap confidence interval for the mean overall difference
(seeded, so the same inputs give the same report).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

import attrs
import numpy as np
from attrs import frozen

from arena_core.engine.ranking import competition_ranks
from arena_core.engine.results import EvaluationBatch
from arena_core.model.provenance import Provenance
from arena_core.model.records import DIMENSIONS, Evaluation
from arena_core.model.serde import to_dict
from arena_core.stats.rankstats import kendall_tau_b, spearman_rho

__all__ = ["Comparison", "compare_scorings"]


@frozen
class Comparison:
    """The report: plain data (``as_dict()`` gives JSON-ready values)."""

    a: str
    b: str
    submissions: tuple[dict[str, Any], ...]
    """Per submission: id, task, tool, A and B overall scores, delta, ranks within the task and
    rank change (positive: moved up under B), and ``metric_deltas`` (each dimension and each
    part of a composite, e.g. ``token_efficiency``)."""
    tools: tuple[dict[str, Any], ...]
    """Per tool: submissions, mean A, mean B, mean delta, ``metric_deltas`` (means), and the
    tool's rank by mean overall score under A and under B."""
    tasks: tuple[dict[str, Any], ...]
    """Per task: submissions, Kendall tau-b, Spearman rho, top-k overlap."""
    kendall_tau_b: float
    spearman_rho: float
    top_k: int
    top_k_overlap: float
    """Share of the top k submissions (pooled, by overall score) that both scorings put there."""
    mean_delta: float
    delta_interval: tuple[float, float]
    """Paired bootstrap percentile interval of the mean overall delta."""
    confidence_level: float
    seed: int
    largest_movers: tuple[dict[str, Any], ...]
    resamples: int
    provenance_a: Provenance
    """How A's scores were made (profile, configuration digest, algorithms, plugin versions)."""
    provenance_b: Provenance

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready values (NaN becomes ``None``)."""
        return {
            field.name: _jsonable(
                to_dict(getattr(self, field.name)) if field.name.startswith("provenance") else getattr(self, field.name)
            )
            for field in attrs.fields(Comparison)
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def compare_scorings(
    a: tuple[str, Sequence[Evaluation], Provenance],
    b: tuple[str, Sequence[Evaluation], Provenance],
    *,
    top_k: int = 10,
    resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
    movers: int = 10,
) -> Comparison:
    """Compare scoring B with scoring A of the same submissions, in the same order.

    :param a: the profile's name, its evaluations and their provenance.
    :param top_k: size of the top set whose overlap is reported.
    :param resamples: paired bootstrap resamples for the interval of the mean delta.
    :param seed: the bootstrap's seed; the same inputs and seed give the same report.
    :param movers: how many of the largest movers to list.
    """
    side_a, side_b = _Side.of(a[1]), _Side.of(b[1])
    score_a, score_b = side_a.overall, side_b.overall
    delta = score_b - score_a
    rows = tuple(_row(i, side_a, side_b) for i in range(len(side_a.ids)))
    by_task: dict[str, list[int]] = {}
    by_tool: dict[str | None, list[int]] = {}
    for i, (task_id, tool) in enumerate(zip(side_a.task_ids, side_a.tools, strict=True)):
        by_task.setdefault(task_id, []).append(i)
        by_tool.setdefault(tool, []).append(i)
    tasks_out = tuple(
        {
            "task_id": task_id,
            "submissions": len(ix),
            "kendall_tau_b": kendall_tau_b(score_a[ix], score_b[ix]),
            "spearman_rho": spearman_rho(score_a[ix], score_b[ix]),
            "top_k_overlap": _overlap(score_a[ix], score_b[ix], [rows[i]["submission_id"] for i in ix], top_k),
        }
        for task_id, ix in by_task.items()
    )
    tools_out = _tools(by_tool, score_a, score_b, rows)
    ranked_movers = sorted(rows, key=lambda r: (-abs(r["rank_change"]), -abs(r["delta"]), r["submission_id"]))
    return Comparison(
        a=a[0],
        b=b[0],
        submissions=rows,
        tools=tools_out,
        tasks=tasks_out,
        kendall_tau_b=kendall_tau_b(score_a, score_b),
        spearman_rho=spearman_rho(score_a, score_b),
        top_k=top_k,
        top_k_overlap=_overlap(score_a, score_b, [r["submission_id"] for r in rows], top_k),
        mean_delta=round(fmean(delta.tolist()), 4) if len(delta) else math.nan,
        delta_interval=_paired_bootstrap(delta, resamples, confidence_level, seed),
        confidence_level=confidence_level,
        seed=seed,
        largest_movers=tuple(r for r in ranked_movers[:movers] if r["rank_change"] or r["delta"]),
        resamples=resamples,
        provenance_a=a[2],
        provenance_b=b[2],
    )


def _tools(
    by_tool: Mapping[str | None, list[int]], score_a: np.ndarray, score_b: np.ndarray, rows: tuple[dict[str, Any], ...]
) -> tuple[dict[str, Any], ...]:
    """Per tool: means under A and B, mean delta overall and per metric, rank by mean under each.
    Means are ``statistics.fmean`` (exactly rounded sums), as the leaderboard's, so a tool's
    mean under the default profile is the number ``arena leaderboard`` prints."""
    out: list[dict[str, Any]] = []
    for tool, ix in sorted(by_tool.items(), key=lambda item: str(item[0])):
        names = dict.fromkeys(name for i in ix for name in rows[i]["metric_deltas"])
        out.append(
            {
                "tool": tool,
                "submissions": len(ix),
                "mean_a": round(fmean(score_a[ix].tolist()), 2),
                "mean_b": round(fmean(score_b[ix].tolist()), 2),
                "mean_delta": round(fmean((score_b[ix] - score_a[ix]).tolist()), 2),
                "metric_deltas": {
                    name: round(
                        fmean(rows[i]["metric_deltas"][name] for i in ix if name in rows[i]["metric_deltas"]), 2
                    )
                    for name in names
                },
            }
        )
    for side in ("a", "b"):
        best_first = sorted(out, key=lambda t: -t[f"mean_{side}"])
        for t, rank in zip(best_first, competition_ranks([t[f"mean_{side}"] for t in best_first]), strict=True):
            t[f"rank_{side}"] = rank
    return tuple(out)


@frozen
class _Side:
    """One scoring of the submissions, as columns (NaN: a metric left out)."""

    ids: list[str]
    task_ids: list[str]
    tools: list[str | None]
    overall: np.ndarray
    ranks: np.ndarray
    metrics: dict[str, np.ndarray]
    """Dimensions first (in :data:`DIMENSIONS` order), then composite parts."""

    @classmethod
    def of(cls, evaluations: Sequence[Evaluation]) -> _Side:
        """Read a batch's columns directly; build them from evaluations otherwise (the
        per-record path: workspaces, or a component without a batch form)."""
        if isinstance(evaluations, EvaluationBatch):
            table = evaluations.columns()
            scores = {d: np.asarray(table[f"{d}_score"]) for d in DIMENSIONS if f"{d}_score" in table}
            return cls(
                [str(i) for i in table["submission_id"]],
                [str(t) for t in table["task_id"]],
                list(table["tool"]),
                np.asarray(table["overall_score"], dtype=float),
                np.asarray(table["overall_ranking"]),
                {**scores, **{p: np.asarray(v) for p, v in table["metric_scores"].items()}},
            )
        names = [
            *(d for d in DIMENSIONS if any(d in e.scores for e in evaluations)),
            *dict.fromkeys(p for e in evaluations for p in e.metric_scores),
        ]
        return cls(
            [e.submission_id for e in evaluations],
            [e.task_id for e in evaluations],
            [e.tool for e in evaluations],
            np.array([e.overall_score for e in evaluations], dtype=float),
            np.array([e.overall_ranking or 0 for e in evaluations]),
            {
                n: np.array([e.scores.get(n, e.metric_scores.get(n, math.nan)) for e in evaluations], dtype=float)
                for n in names
            },
        )


def _row(i: int, a: _Side, b: _Side) -> dict[str, Any]:
    x, y = float(a.overall[i]), float(b.overall[i])
    deltas = {}
    for name, values in a.metrics.items():
        other = b.metrics.get(name)
        if other is not None and not (math.isnan(values[i]) or math.isnan(other[i])):
            deltas[name] = round(float(other[i]) - float(values[i]), 2)
    rank_a, rank_b = int(a.ranks[i]), int(b.ranks[i])
    return {
        "submission_id": a.ids[i],
        "task_id": a.task_ids[i],
        "tool": a.tools[i],
        "score_a": x,
        "score_b": y,
        "delta": round(y - x, 2),
        "rank_a": rank_a,
        "rank_b": rank_b,
        "rank_change": rank_a - rank_b,  # positive: moved up under B
        "metric_deltas": deltas,
    }


def _overlap(a: np.ndarray, b: np.ndarray, ids: list[str], k: int) -> float:
    """Share of the top ``k`` (ties broken by id, the same way for both) that both scorings share."""
    k = min(k, len(ids))
    if k == 0:
        return math.nan
    top_a = {ids[i] for i in sorted(range(len(ids)), key=lambda i: (-a[i], ids[i]))[:k]}
    top_b = {ids[i] for i in sorted(range(len(ids)), key=lambda i: (-b[i], ids[i]))[:k]}
    return len(top_a & top_b) / k


def _paired_bootstrap(delta: np.ndarray, resamples: int, level: float, seed: int) -> tuple[float, float]:
    """Percentile interval of the mean of per-submission differences, resampling submissions."""
    if len(delta) == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    chunk = max(1, 4_000_000 // len(delta))  # bounded memory for large arenas
    means = np.concatenate(
        [
            delta[rng.integers(0, len(delta), size=(min(chunk, resamples - start), len(delta)))].mean(axis=1)
            for start in range(0, resamples, chunk)
        ]
    )
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return (round(float(low), 4), round(float(high), 4))
