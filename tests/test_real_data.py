"""Aider's public leaderboard runs: real telemetry, with the holes real telemetry has."""

from __future__ import annotations

import pytest

from arena_core import Arena, ValidationError

MAPPED = {"category_profiles": {"code_editing": "default"}}


def test_unknown_real_category_is_reported_with_the_remedy(real_submissions, real_tasks) -> None:
    with pytest.raises(ValidationError, match=r"task 'aider-polyglot': category: .*category_profiles.*got 'code_editing'"):
        Arena(autoload=False).evaluate_many(real_submissions, real_tasks)


def test_runs_without_tokens_are_named_not_scored(real_submissions, real_tasks) -> None:
    with pytest.raises(ValidationError) as info:
        Arena(MAPPED, autoload=False).evaluate_many(real_submissions, real_tasks)
    # Every field that needs a policy is named at once, with the configuration that fixes it.
    assert info.value.field == "total_tokens, tool_calls"
    assert info.value.record.startswith("submission 'aider-")
    assert "use -p gated" in str(info.value)
    assert 'set in arena.toml [missing] total_tokens = "comparable", tool_calls = "comparable"' in str(info.value)
    assert "tool_calls missing in 181 of 181 submissions" in str(info.value)


def test_real_runs_score_once_the_missing_counts_are_supplied(real_submissions, real_tasks) -> None:
    # Only the figures the leaderboards do not publish are filled in; time, cost and pass
    # rates are the published ones, with their gaps (cost 0 = not recorded).
    subs = [{"total_tokens": 0, "tool_calls": 0, **s} for s in real_submissions]
    evaluations = Arena(MAPPED, autoload=False).evaluate_many(subs, real_tasks)
    assert len(evaluations) == 181
    by_id = {e.submission_id: e for e in evaluations}
    for s in real_submissions:
        ev = by_id[s["id"]]
        assert ev.correctness_score == round(s["correctness"] * 100, 2)  # tests_pass credit = pass rate
        if "estimated_cost" not in s:
            assert ev.cost_score == 50.0
    refactor = [e for e in evaluations if e.task_id == "aider-refactor"]
    assert {e.weight_profile for e in refactor} == {"refactoring"}
    assert sorted(e.overall_ranking for e in refactor)[0] == 1


def test_real_runs_compared_with_percentile_ranks(real_submissions, real_tasks) -> None:
    """Aider's runs under the spec's min-max scale and under percentile ranks: holes stay holes,
    and right-skewed real times, which the spec's scale puts near 100, are spread out."""
    from arena_core.compare import compare
    from arena_core.config.settings import ScoringConfig

    # Every edit format ranked (most ran fewer benchmarks than min_tasks_per_group), so that
    # the ranks of all of them can move.
    base = {**MAPPED, "missing": {"total_tokens": "reweight", "tool_calls": "reweight"}, "min_tasks_per_group": 1}
    percentile = {"speed": "speed_percentile", "cost": "cost_percentile", "token_efficiency": "token_efficiency_percentile"}
    report = compare(real_submissions, real_tasks, ("default", ScoringConfig(**base)),
                     ("percentile", ScoringConfig(**base, metrics=percentile)), resamples=500, autoload=False)
    assert len(report.submissions) == len(real_submissions)
    no_tokens = {s["id"] for s in real_submissions if s.get("total_tokens") is None}
    assert no_tokens and all("token_efficiency" not in r["metric_deltas"] for r in report.submissions
                             if r["submission_id"] in no_tokens)  # left out under both, never invented
    assert all(t["metric_deltas"]["speed"] < 0 for t in report.tools)
    low, high = report.delta_interval
    assert high < 0 and low <= report.mean_delta <= high
    assert 0 < report.kendall_tau_b < 1 and {t["task_id"] for t in report.tasks} == set(real_tasks)
    assert [t["rank_a"] for t in report.tools] != [t["rank_b"] for t in report.tools]
