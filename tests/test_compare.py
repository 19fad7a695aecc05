"""Comparing two scoring profiles on the same submissions."""

from __future__ import annotations

import json

from arena_core.compare import compare
from arena_core.config import ScoringConfig
from pathlib import Path

import arena_core.examples

EXAMPLES = Path(arena_core.examples.__file__).parent


def _arena():
    subs = [json.loads(line) for line in (EXAMPLES / "submissions.jsonl").read_text().splitlines() if line.strip()]
    tasks = json.loads((EXAMPLES / "tasks.json").read_text())
    return subs, (tasks if isinstance(tasks, dict) else {t["id"]: t for t in tasks})


def test_a_profile_compared_with_itself_changes_nothing() -> None:
    subs, tasks = _arena()
    report = compare(subs, tasks, ("default", ScoringConfig()), ("same", ScoringConfig()), resamples=500)
    assert report.kendall_tau_b == 1.0 and report.spearman_rho == 1.0 and report.top_k_overlap == 1.0
    assert {r["delta"] for r in report.submissions} == {0.0} and report.largest_movers == ()
    assert report.mean_delta == 0.0 and report.delta_interval == (0.0, 0.0)
    assert all(t["kendall_tau_b"] == 1.0 for t in report.tasks)
    json.dumps(report.as_dict())  # JSON-ready for notebooks


def test_a_swap_with_a_known_effect_is_detected_in_the_right_direction() -> None:
    subs, tasks = _arena()
    # B weighs correctness only: submissions that met every criterion gain, the rest lose.
    only_correctness = {name: {"efficiency": 0.0, "speed": 0.0, "cost": 0.0, "correctness": 1.0}
                        for name in ("default", "frontend_development", "backend_development", "data_processing",
                                     "debugging", "refactoring")}
    b = ScoringConfig(weights=only_correctness)
    report = compare(subs, tasks, ("default", ScoringConfig()), ("correctness", b), resamples=500, seed=3)
    # Weights change the overall score only, never a dimension's score.
    assert {d for r in report.submissions for d in r["dimension_deltas"].values()} == {0.0}
    # Every criterion met: correctness 100 beats any mix, so those submissions can only gain.
    perfect = [r for r in report.submissions if r["score_b"] >= 100.0]
    assert perfect and all(r["delta"] >= 0 for r in perfect) and any(r["delta"] > 0 for r in perfect)
    assert any(r["delta"] < 0 for r in report.submissions)
    low, high = report.delta_interval
    assert low <= report.mean_delta <= high and report.kendall_tau_b < 1.0
    again = compare(subs, tasks, ("default", ScoringConfig()), ("correctness", b), resamples=500, seed=3)
    assert again.as_dict() == report.as_dict()  # seeded: the same inputs give the same report
    assert report.largest_movers and abs(report.largest_movers[0]["rank_change"]) >= abs(report.largest_movers[-1]["rank_change"])
