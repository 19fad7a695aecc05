"""Score cards: every number behind one submission's overall score, enough to redo it by hand.

A card lists the submission's raw figures and the baseline values they were normalised
against; each dimension's metric (its registered algorithm), its unrounded score and the
weight applied; the parts of composite metrics with their own algorithms and weights; what was
filled in or left out; the difficulty adjustment; each criterion's verdict; and the
provenance. The overall score is ``round(adjust(sum(score * weight)), 2)``, where ``adjust`` is
the difficulty's (``min(100, score * factor)`` for the spec's, ``score * factor / top`` when
rescaled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from arena_core.arena import Arena
from arena_core.engine.baselines import compute_baseline, default_baseline_for
from arena_core.engine.composite import WeightedSum
from arena_core.engine.gating import UNSOLVED
from arena_core.engine.rounding import round_scalar
from arena_core.engine.telemetry import Guarded
from arena_core.model.display import shown
from arena_core.model.records import Baseline, Evaluation, Submission, Task
from arena_core.model.serde import to_dict

__all__ = [
    "FIGURE_BASELINE",
    "baseline_view",
    "cards_for",
    "recompute",
    "render_card",
    "score_card",
    "task_baseline",
    "task_baselines",
]

#: Each figure, with the baseline values its metrics normalise against.
FIGURE_BASELINE = {
    "total_tokens": ("min_tokens", "median_tokens", "max_tokens"),
    "tool_calls": ("min_tool_calls", "median_tool_calls", "max_tool_calls"),
    "iterations": ("median_iterations",),
    "execution_time": ("min_execution_time", "median_execution_time", "max_execution_time"),
    "estimated_cost": ("min_cost", "median_cost", "max_cost"),
}


def score_card(
    arena: Arena, submission: Submission, task: Task, baseline: Baseline, evaluation: Evaluation
) -> dict[str, Any]:
    """The card of ``evaluation``, which ``arena`` made from ``submission``, ``task`` and ``baseline``."""
    scorer = arena.scorer
    profile = scorer.profile_for(task)
    algorithms = scorer.algorithms()
    gate = scorer.gate if scorer.gate in profile.weights else None
    # Under a gate, the others are credited at the gate's score as shown (engine/gating.py).
    credit = evaluation.scores[gate] / 100 if gate is not None and gate in evaluation.scores else None
    dimensions: list[dict[str, Any]] = []
    for dimension in profile.weights:
        metric = scorer.metric(dimension)
        unsolved = evaluation.filled.get(dimension) == UNSOLVED
        result = None if unsolved else metric.score(submission, task, baseline)
        value = result if result is None or isinstance(result, (int, float)) else result.value
        if dimension == gate and value is not None:
            value = evaluation.scores[dimension]
        shown = {"credit": credit, "ungated": value} if credit is not None and dimension != gate else {}
        if shown and value is not None:
            value = value * credit  # type: ignore[operator]
        dimensions.append(
            {
                "dimension": dimension,
                "algorithm": algorithms[dimension],
                "score": None if value is None else float(value),
                "rounded": evaluation.scores.get(dimension),
                "weight": evaluation.weights.get(dimension, 0.0),
                "profile_weight": profile.weights[dimension],
                "filled": evaluation.filled.get(dimension),
                "parts": _parts(metric, result, algorithms, evaluation.filled),
                **shown,
            }
        )
    unadjusted = float(sum(d["score"] * d["weight"] for d in dimensions if d["score"] is not None))
    adjuster = scorer.adjuster_for(task)
    difficulty: dict[str, Any] | None = None
    if evaluation.difficulty_factor is not None:  # fitted (difficulty_source = "irt"): on the sum as shown
        difficulty = {"name": "irt", "factor": evaluation.difficulty_factor, "top": None, "fitted": True}
    elif adjuster is not None:
        difficulty = {
            "name": adjuster.name,
            "factor": getattr(adjuster, "factor", None),
            "top": getattr(adjuster, "top", None),
        }
    return {
        "submission_id": submission.id,
        "task_id": task.id,
        "tool": submission.tool,
        "model": submission.model,
        "figures": {f: getattr(submission, f) for f in FIGURE_BASELINE},
        "baseline": baseline_view(baseline),
        "weight_profile": profile.name,
        "gate": gate,
        "dimensions": dimensions,
        "unadjusted": unadjusted,
        "difficulty": difficulty,
        "overall_score": evaluation.overall_score,
        "coverage": evaluation.coverage,
        "filled": dict(evaluation.filled),
        "criteria": [to_dict(c) for c in evaluation.criteria],
        "rank": evaluation.overall_ranking,
        "pricing": _pricing(arena, submission),
        "provenance": to_dict(evaluation.provenance) if evaluation.provenance is not None else None,
    }


def baseline_view(baseline: Baseline) -> dict[str, Any]:
    """A baseline as a card shows it: its run count, the figures defaulted, and per figure the
    values its metrics normalise against."""
    return {
        "submission_count": baseline.submission_count,
        "defaulted": list(baseline.defaulted),
        **{f: {k: getattr(baseline, k) for k in keys} for f, keys in FIGURE_BASELINE.items()},
    }


def _pricing(arena: Arena, submission: Submission) -> dict[str, Any] | None:
    """How a priced cost adds up: each kind of token, its count, its price per million, its
    dollars (``None`` when the cost is as reported)."""
    note = submission.meta.get("pricing")
    if arena.pricer is None or not isinstance(note, Mapping) or note.get("source") != "priced":
        return dict(note) if isinstance(note, Mapping) else None
    quote = arena.pricer.quote(submission)
    assert quote is not None  # it was priced
    lines = [
        {"kind": line.kind, "tokens": line.tokens, "per_million": str(line.price), "band": line.band,
         "dollars": str(line.dollars)}
        for line in quote.lines
    ]  # fmt: skip
    return {**note, "calls": quote.calls, "lines": lines, "total": str(quote.total)}


def _pricing_lines(pricing: Mapping[str, Any]) -> list[str]:
    if pricing.get("source") != "priced":
        reported = pricing.get("reported")
        return [f"Cost {pricing.get('source')}: {'-' if reported is None else reported}"]
    calls = "its totals" if pricing.get("calls") is None else f"{pricing['calls']} calls"
    lines = [
        f"Cost priced from {calls} as {pricing['model']} ({pricing['provider'] or 'any provider'}) "
        f"on {pricing['date']} by {pricing['table']}; reported: {pricing['reported']}"
    ]
    for line in pricing["lines"]:
        band = f" (prompts above {line['band']:,})" if line["band"] is not None else ""
        price = f"${line['per_million']}/M"
        lines.append(f"  {line['kind']:<12} {line['tokens']:>12,} x {price:>9}{band} = ${line['dollars']}")
    lines.append(f"  {'total':<12} {'':>24} = ${pricing['total']}")
    if pricing.get("band_unknown") is not None:
        lines.append(f"  (totals pass the {pricing['band_unknown']:,}-token band; calls unknown: priced at base)")
    return lines


def _parts(metric: Any, result: Any, algorithms: Mapping[str, str], filled: Mapping[str, str]) -> list[dict[str, Any]]:
    """The parts of a composite metric: slot, algorithm, unrounded score, weight within it."""
    inner = metric.inner if isinstance(metric, Guarded) else metric
    if not isinstance(inner, WeightedSum):
        return []
    scores = {} if result is None or isinstance(result, (int, float)) else dict(result.parts)
    return [
        {
            "part": slot,
            "algorithm": algorithms.get(slot, slot),
            "score": scores.get(slot),
            "weight": weight,
            "filled": filled.get(slot),
        }
        for slot, weight in inner.parts.items()
    ]


def recompute(card: Mapping[str, Any]) -> float:
    """The overall score from the card's numbers alone, as a reader would redo it."""
    total = float(sum(d["score"] * d["weight"] for d in card["dimensions"] if d["score"] is not None))
    difficulty = card["difficulty"]
    if difficulty is not None and difficulty.get("fitted"):
        total = round_scalar(total, 2)
    if difficulty is not None and difficulty["factor"] is not None:
        total = (
            total * difficulty["factor"] / difficulty["top"]
            if difficulty["top"]
            else min(100.0, total * difficulty["factor"])
        )
    return round_scalar(total, 2)


def render_card(card: Mapping[str, Any]) -> str:
    """The card as terminal text."""
    lines = [f"Score card: {card['submission_id']} on {card['task_id']} (tool {card['tool']}, model {card['model']})"]
    lines.append(f"Overall {card['overall_score']:.2f}  rank {card['rank']}  coverage {card['coverage']}")
    version = f" (stored version {card['baseline_version']})" if card.get("baseline_version") else ""
    lines.append(
        f"Baseline{version} of {card['baseline']['submission_count']} submissions; from the default: "
        f"{', '.join(card['baseline']['defaulted']) or 'nothing'}"
    )
    for figure, value in card["figures"].items():
        against = ", ".join(f"{k} {v:g}" for k, v in card["baseline"][figure].items())
        lines.append(f"  {figure:<15} {'-' if value is None else f'{value:g}':>12}   against {against}")
    lines.append(f"Weights: profile {card['weight_profile']}")
    if card.get("gate"):
        lines.append(f"Gate: {card['gate']}; the others are credited at its score / 100, as shown")
    for d in card["dimensions"]:
        score = "left out" if d["score"] is None else f"{d['score']:.4f}"
        if d.get("credit") is not None and d["score"] is not None:
            score = f"{d['ungated']:.4f} x {d['credit']:.4f} = {score}"
        note = f" ({d['filled']})" if d["filled"] else ""
        lines.append(f"  {d['dimension']:<12} {d['algorithm']:<28} {score:>10} x {d['weight']:.4f}{note}")
        for part in d["parts"]:
            part_score = "left out" if part["score"] is None else f"{part['score']:.4f}"
            part_note = f" ({part['filled']})" if part["filled"] else ""
            lines.append(
                f"    {part['part']:<22} {part['algorithm']:<28} {part_score:>10} x {part['weight']}{part_note}"
            )
    lines.append(f"Sum {card['unadjusted']:.4f}")
    if card["difficulty"]:
        d = card["difficulty"]
        factor = f"{d['factor']:.6f}" if d.get("fitted") else d["factor"]
        rule = f"x {factor} / {d['top']}" if d["top"] else f"min(100, x {factor})"
        fitted = " (fitted to the runs' verdicts)" if d.get("fitted") else ""
        lines.append(f"Difficulty {d['name']}{fitted}: {rule} -> {recompute(card):.2f}")
    if card.get("pricing"):
        lines.extend(_pricing_lines(card["pricing"]))
    for c in card["criteria"]:
        lines.append(
            f"Criterion {c['type']}: {c['status']} (credit {c['credit']:g}){': ' + c['reason'] if c.get('reason') else ''}"
        )
        lines.extend(_requirement_lines(c.get("details", ())))
    return "\n".join(shown(line) for line in lines)  # a value's newline or escape stays on its line


def _requirement_lines(details: Sequence[Mapping[str, Any]]) -> list[str]:
    """A judged criterion's requirements: each verdict and its reason, each judge's answer."""
    lines = []
    for d in details:
        if "requirement" not in d:
            continue
        answers = ", ".join(
            f"{name} {'met' if a.get('verdict') else 'unmet' if a.get('verdict') is False else 'no verdict'}"
            + (" (cached)" if a.get("cached") else "") + (" (self-judged)" if a.get("self_judged") else "")
            for name, a in (d.get("judges") or {}).items()
        )  # fmt: skip
        cost = f", ${d['cost']:.4f}" if isinstance(d.get("cost"), (int, float)) else ""
        lines.append(f"  Requirement {d['requirement']}: {d.get('verdict')} ({answers}{cost}): {d.get('reason', '')}")
    return lines


def cards_for(
    arena: Arena,
    submissions: Sequence[Submission],
    tasks: Mapping[str, Task],
    ids: Sequence[str],
    evaluations: Sequence[Evaluation] | None = None,
    baselines: Mapping[str, Baseline] | None = None,
) -> list[dict[str, Any]]:
    """The cards of the submissions named by ``ids``, each with its task's baseline as
    ``evaluate_many`` computes it (the baseline of the task's submissions, computed once per
    task). ``evaluations``: those ``evaluate_many`` already gave for ``submissions``;
    ``baselines``: those :func:`task_baselines` already gave for them."""
    if evaluations is None:
        evaluations = arena.evaluate_many(list(submissions), tasks)
    by_id = {e.submission_id: e for e in evaluations}
    submission_of = {s.id: s for s in submissions}
    if baselines is None:
        needed = {str(submission_of[ident].task_id) for ident in ids}
        baselines = task_baselines(arena, [s for s in submissions if s.task_id in needed], tasks, evaluations)
    out = []
    for ident in ids:
        submission = submission_of[ident]
        task = tasks[str(submission.task_id)]
        out.append(score_card(arena, submission, task, baselines[task.id], by_id[ident]))
    return out


def task_baselines(
    arena: Arena, submissions: Sequence[Submission], tasks: Mapping[str, Task], evaluations: Sequence[Evaluation]
) -> dict[str, Baseline]:
    """Each task's baseline (:func:`task_baseline`) over its submissions among ``submissions``."""
    by_id = {e.submission_id: e for e in evaluations}
    peers: dict[str, list[Submission]] = {}
    for s in submissions:
        peers.setdefault(str(s.task_id), []).append(s)
    return {task_id: task_baseline(arena, tasks[task_id], mine, by_id) for task_id, mine in peers.items()}


def task_baseline(arena: Arena, task: Task, peers: Sequence[Submission], by_id: Mapping[str, Evaluation]) -> Baseline:
    """The task's baseline as ``evaluate_many`` computed it: of every run, or under a gate of the
    runs that passed it (any number of them), with the figures some run lacks left out for all."""
    everyone = arena.compute_baseline(task.id, peers, task=task)
    gate = arena.scorer.gate
    if gate is None or gate not in arena.scorer.profile_for(task).weights:
        return everyone
    passed = [s for s in peers if by_id[s.id].scores.get(gate, 0.0) > 0]
    if not passed:
        return everyone
    solved = compute_baseline(
        task.id,
        passed,
        default_baseline_for(task, arena.default_baseline),
        now=everyone.last_updated,
        samples=arena.scorer.sample_fields(),
        assume_one=arena.scorer.assumes_one_iteration,
        minimum=1,
    )
    return attrs.evolve(solved, partial=everyone.partial)
