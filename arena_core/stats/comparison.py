"""What swapping a scoring algorithm changes: two scorings of the same submissions compared.

``compare_scorings(a, b)`` takes both scorings (``arena_core.compare`` makes them) and
reports, for B relative to A: per-submission and per-tool score deltas (overall and per
dimension), rank changes within each task and the largest movers, Kendall's tau-b and
Spearman's rho between the two scorings (all submissions pooled, and per task), the overlap
of the top k, a paired bootstrap confidence interval for the mean overall difference
(seeded, so the same inputs give the same report), and the pairs of tools each scoring ranks
against correctness (inversions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist, fmean
from typing import Any

import attrs
import numpy as np
from attrs import frozen

from arena_core.engine.columns import factorize
from arena_core.engine.ordered import split_by_code
from arena_core.engine.ranking import competition_ranks
from arena_core.model.provenance import Provenance
from arena_core.model.records import Evaluation
from arena_core.model.serde import to_dict
from arena_core.stats.deltas import GroupMeans, Side, SubmissionDeltas, top_k_ids
from arena_core.stats.inversions import DIMENSION, inversions
from arena_core.stats.rankstats import kendall_tau_b, kendall_tau_b_by_group, spearman_rho, spearman_rho_by_group
from arena_core.stats.runs import UNKNOWN
from arena_core.stats.tasktable import Runs, TaskTable

__all__ = ["BOOTSTRAP_DRAWS", "Comparison", "compare_scorings"]

#: Above this many resampled values (submissions x resamples) the interval of the mean delta is
#: the bootstrap's normal limit: at 100,000 submissions and more, the two differ by less than
#: the bootstrap's own Monte Carlo error, and the limit costs one pass instead of minutes.
BOOTSTRAP_DRAWS = 200_000_000


@frozen
class Comparison:
    """The report: plain data (``as_dict()`` gives JSON-ready values)."""

    a: str
    b: str
    submissions: SubmissionDeltas
    """Per submission: id, task, tool, A and B overall scores, delta, ranks within the task and
    rank change (positive: moved up under B), and ``metric_deltas`` (each dimension and each
    part of a composite, e.g. ``token_efficiency``). A sequence of dicts built on access; its
    ``column(name)`` gives a field as an array."""
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
    """Paired bootstrap percentile interval of the mean overall delta (see ``interval_method``)."""
    interval_method: str
    """``paired bootstrap``; or, when submissions x resamples exceeds
    :data:`BOOTSTRAP_DRAWS`, ``normal limit of the paired bootstrap``."""
    confidence_level: float
    seed: int
    largest_movers: tuple[dict[str, Any], ...]
    resamples: int
    provenance_a: Provenance
    """How A's scores were made (profile, configuration digest, algorithms, plugin versions)."""
    provenance_b: Provenance
    inversions_a: tuple[tuple[str, str], ...] = ()
    """``(above, below)`` pairs of tools that A's tool ranking orders against correctness: ``below``'s
    correctness is significantly higher on the tasks both ran (see :mod:`arena_core.stats.inversions`)."""
    inversions_b: tuple[tuple[str, str], ...] = ()
    by: str = "tool"
    """What :attr:`tools` groups by (``tool``, ``model``, ``tool,model``, ``meta.KEY``)."""

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
    if isinstance(value, SubmissionDeltas):
        return value.jsonable()
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def compare_scorings(
    a: tuple[str, Sequence[Evaluation] | Side, Provenance],
    b: tuple[str, Sequence[Evaluation] | Side, Provenance],
    *,
    top_k: int = 10,
    resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
    movers: int = 10,
    by: str = "tool",
    min_tasks: int = 1,
) -> Comparison:
    """Compare scoring B with scoring A of the same submissions, in the same order, on arrays.

    :param a: the profile's name, its evaluations (or their :class:`Side`, all a comparison
        keeps of them) and their provenance.
    :param top_k: size of the top set whose overlap is reported.
    :param resamples: paired bootstrap resamples for the interval of the mean delta.
    :param seed: the bootstrap's seed; the same inputs and seed give the same report.
    :param movers: how many of the largest movers to list.
    :param min_tasks: groups with fewer tasks are listed unranked (``provisional``), as on a
        leaderboard (``min_tasks_per_group``).
    """
    side_a, side_b = Side.of(a[1]), Side.of(b[1])
    score_a, score_b = side_a.overall, side_b.overall
    delta = score_b - score_a
    rows = SubmissionDeltas(side_a, side_b)
    ids = side_a.ids
    task_codes, task_ids = factorize(side_a.task_ids)
    taus = kendall_tau_b_by_group(task_codes, len(task_ids), score_a, score_b).tolist()
    rhos = spearman_rho_by_group(task_codes, len(task_ids), score_a, score_b).tolist()
    tasks_out = tuple(
        {
            "task_id": task_ids[code],
            "submissions": len(ix),
            "kendall_tau_b": taus[code],
            "spearman_rho": rhos[code],
            "top_k_overlap": _overlap(score_a[ix], score_b[ix], [ids[i] for i in ix.tolist()], top_k),
        }
        for code, ix in sorted(split_by_code(task_codes))
    )
    interval, method = _delta_interval(delta, resamples, confidence_level, seed)
    tools = _tools(side_a, rows, min_tasks)
    return Comparison(
        a=a[0],
        b=b[0],
        submissions=rows,
        tools=tools,
        tasks=tasks_out,
        kendall_tau_b=kendall_tau_b(score_a, score_b),
        spearman_rho=spearman_rho(score_a, score_b),
        top_k=top_k,
        top_k_overlap=_overlap(score_a, score_b, ids, top_k),
        mean_delta=round(fmean(delta.tolist()), 4) if len(delta) else math.nan,
        delta_interval=interval,
        interval_method=method,
        confidence_level=confidence_level,
        seed=seed,
        largest_movers=rows.movers(movers, _all_tied(task_codes, len(task_ids), score_a, score_b)),
        resamples=resamples,
        provenance_a=a[2],
        provenance_b=b[2],
        inversions_a=_inversions(side_a, tools, "a", confidence_level),
        inversions_b=_inversions(side_b, tools, "b", confidence_level),
        by=by,
    )


def _inversions(side: Side, tools: Sequence[dict[str, Any]], name: str, level: float) -> tuple[tuple[str, str], ...]:
    """The pairs of tools one scoring ranks against correctness (by their rank in ``tools``)."""
    labels = [UNKNOWN if tool is None else tool for tool in side.tools]
    correctness = side.metrics.get(DIMENSION, np.full(len(labels), math.nan))
    runs = Runs(list(side.ids), labels, list(side.task_ids), side.overall, {DIMENSION: correctness}, side.overall)
    table = TaskTable.of(runs)
    index = {group: g for g, group in enumerate(table.groups)}
    ranks = {
        index[UNKNOWN if t["tool"] is None else t["tool"]]: t[f"rank_{name}"] for t in tools if not t["provisional"]
    }
    found = inversions(table, ranks, confidence_level=level)
    return tuple((table.groups[a], table.groups[b]) for a, below in found.items() for b in below)


def _tools(side: Side, rows: SubmissionDeltas, min_tasks: int = 1) -> tuple[dict[str, Any], ...]:
    """Per tool: means under A and B, mean delta overall and per metric, rank by mean under each.
    Means are over tasks of the tool's per-task means, as the leaderboard's default, so a
    tool's mean under the default profile is the score ``arena leaderboard`` prints; a tool of
    fewer than ``min_tasks`` tasks is provisional, unranked, as on the leaderboard."""
    codes, tools = factorize(side.tools)
    count = len(tools)
    task_codes = factorize(side.task_ids)[0]
    pairs = np.unique(np.asarray(codes, dtype=np.int64) * (int(task_codes.max(initial=0)) + 1) + task_codes)
    n_tasks = np.bincount(pairs // (int(task_codes.max(initial=0)) + 1), minlength=count).tolist()
    score_a, score_b = rows.column("score_a"), rows.column("score_b")
    groups = GroupMeans(codes, count, factorize(side.task_ids)[0])
    means = {"mean_a": groups.of(score_a), "mean_b": groups.of(score_b), "mean_delta": groups.of(score_b - score_a)}
    metric_means = {name: groups.of(values) for name, values in rows.metric_deltas.items()}
    sizes = np.bincount(codes, minlength=count).tolist()
    out: list[dict[str, Any]] = []
    for code in sorted(range(count), key=lambda c: str(tools[c])):
        out.append(
            {
                "tool": tools[code],
                "submissions": sizes[code],
                "tasks": n_tasks[code],
                "provisional": n_tasks[code] < min_tasks,
                **{key: round(values[code], 2) for key, values in means.items()},
                "metric_deltas": {
                    name: round(values[code], 2)
                    for name, values in metric_means.items()
                    if not math.isnan(values[code])
                },
            }
        )
    for side_name in ("a", "b"):
        best_first = sorted((t for t in out if not t["provisional"]), key=lambda t: -t[f"mean_{side_name}"])
        for t, rank in zip(best_first, competition_ranks([t[f"mean_{side_name}"] for t in best_first]), strict=True):
            t[f"rank_{side_name}"] = rank
        for t in out:
            t.setdefault(f"rank_{side_name}", None)
    return tuple(out)


def _all_tied(codes: np.ndarray, count: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row, whether every run of its task has one score under A and one under B."""
    tied = np.ones(count, dtype=bool)
    for values in (a, b):
        low = np.full(count, np.inf)
        high = np.full(count, -np.inf)
        np.minimum.at(low, codes, values)
        np.maximum.at(high, codes, values)
        tied &= low == high
    rows: np.ndarray = tied[codes]
    return rows


def _overlap(a: np.ndarray, b: np.ndarray, ids: Sequence[str], k: int) -> float:
    """Share of the top ``k`` (ties broken by id, the same way for both) that both scorings share."""
    k = min(k, len(ids))
    if k == 0:
        return math.nan
    return len(top_k_ids(a, ids, k) & top_k_ids(b, ids, k)) / k


def _delta_interval(delta: np.ndarray, resamples: int, level: float, seed: int) -> tuple[tuple[float, float], str]:
    """The interval of the mean delta and how it was found (see :data:`BOOTSTRAP_DRAWS`)."""
    if len(delta) * resamples <= BOOTSTRAP_DRAWS:
        return _paired_bootstrap(delta, resamples, level, seed), "paired bootstrap"
    # The bootstrap distribution of a mean tends to a normal one with the plug-in variance.
    spread = float(np.std(delta)) / math.sqrt(len(delta)) * NormalDist().inv_cdf(1 - (1 - level) / 2)
    centre = float(np.mean(delta))
    return (round(centre - spread, 4), round(centre + spread, 4)), "normal limit of the paired bootstrap"


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
