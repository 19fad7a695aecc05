"""Baselines, rankings, percentiles, intervals, outliers, validation and bias against the spec."""

from __future__ import annotations

import math
import random
import statistics

import pytest
import spec_reference as spec
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from arena_core import Arena, Evaluation, ValidationError, to_dict
from arena_core.engine.baselines import DEFAULT_BASELINE

# ---------------------------------------------------------------------------
# Baselines
# ---------------------------------------------------------------------------

telemetry = st.fixed_dictionaries(
    {"total_tokens": st.integers(0, 50_000), "tool_calls": st.integers(0, 60)},
    optional={
        "execution_time": st.sampled_from([0, 1.5, 30.0, 300.0, 1234.5]),
        "estimated_cost": st.sampled_from([0.0, 0.003, 0.05, 1.25]),
        "iterations": st.integers(1, 9),
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(telemetry, min_size=5, max_size=40))
def test_dynamic_baseline_equals_spec(arena: Arena, runs: list[dict]) -> None:
    subs = [{"id": f"s{i}", **r} for i, r in enumerate(runs)]
    data = to_dict(arena.compute_baseline("t", subs))
    expected = spec.calculate_task_baseline("t", subs)
    assert {k: data[k] for k in expected} == expected
    assert data["task_id"] == "t" and data["last_updated"]


def test_below_five_submissions_the_defaults_apply(arena: Arena) -> None:
    subs = [{"id": f"s{i}", "total_tokens": 10, "tool_calls": 1} for i in range(4)]
    base = arena.compute_baseline("t", subs)
    assert base.submission_count == 0 and base.median_tokens == DEFAULT_BASELINE.median_tokens
    assert (base.median_execution_time, base.min_execution_time, base.max_execution_time) == (300, 60, 1800)
    assert (base.median_cost, base.min_cost, base.max_cost) == (0.05, 0.01, 0.20)


def test_task_default_baseline_wins_below_five(arena: Arena) -> None:
    from arena_core import Task, structure

    own = {**to_dict(DEFAULT_BASELINE), "median_tokens": 7000}
    task = structure({"id": "t", "default_baseline": own}, Task)
    assert arena.compute_baseline("t", [], task=task).median_tokens == 7000


def test_baseline_scope_per_tool_separates_tools() -> None:
    cheap = [{"id": f"a{i}", "task_id": "t", "tool": "a", "total_tokens": 1000 + i, "tool_calls": 5} for i in range(5)]
    costly = [{"id": f"b{i}", "task_id": "t", "tool": "b", "total_tokens": 9000 + i, "tool_calls": 5} for i in range(5)]
    task = {"t": {"id": "t"}}
    pooled = Arena(autoload=False).evaluate_many(cheap + costly, task)
    scoped = Arena({"baseline_scope": "task_tool"}, autoload=False).evaluate_many(cheap + costly, task)
    assert pooled[5].metric_scores["token_efficiency"] < 1.0  # b's runs are the worst in the pooled task
    assert scoped[5].metric_scores["token_efficiency"] == 100.0  # the best of b's own runs


def test_bad_baseline_scope_is_refused() -> None:
    with pytest.raises(ValidationError, match="baseline_scope: expected one of task, task_tool"):
        Arena({"baseline_scope": "tool"}, autoload=False)


# ---------------------------------------------------------------------------
# Rankings and percentiles
# ---------------------------------------------------------------------------


def _evaluation(i: int, score: float, stamp: str, **scores: float) -> Evaluation:
    return Evaluation(f"s{i}", "t", score, scores or {"efficiency": score}, {"efficiency": 1.0}, "default", score, stamp)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 12.5, 50.0, 50.01, 77.7, 100.0]), st.sampled_from(["a", "b", "c"])),
                min_size=1, max_size=30))
def test_rankings_and_percentiles_equal_spec_with_many_ties(arena: Arena, entries: list) -> None:
    evaluations = [_evaluation(i, score, stamp) for i, (score, stamp) in enumerate(entries)]
    dicts = [{"submission_id": e.submission_id, "overall_score": e.overall_score, "evaluated_at": e.evaluated_at}
             for e in evaluations]
    expected = spec_rankings(dicts)
    got = arena.rank(evaluations)
    assert [(e.submission_id, e.overall_ranking, e.percentile) for e in got] == [
        (d["submission_id"], d["overall_ranking"], d["percentile"]) for d in expected
    ]


def spec_rankings(evaluations: list[dict]) -> list[dict]:
    """The spec's calculate_rankings, verbatim but for the percentile helper's name."""
    sorted_evaluations = sorted(evaluations, key=lambda x: (x["overall_score"], x["evaluated_at"]), reverse=True)
    rankings: list[dict] = []
    current_rank = 1
    for i, evaluation in enumerate(sorted_evaluations):
        if i > 0 and evaluation["overall_score"] == sorted_evaluations[i - 1]["overall_score"]:
            ranking = rankings[-1]["overall_ranking"]
        else:
            ranking = current_rank
        rankings.append({**evaluation, "overall_ranking": ranking,
                         "percentile": spec.calculate_percentile(evaluation["overall_score"],
                                                                 [e["overall_score"] for e in evaluations])})
        current_rank = i + 2
    return rankings


def test_ties_give_1_1_3(arena: Arena) -> None:
    ranked = arena.rank([_evaluation(0, 80.0, "x"), _evaluation(1, 90.0, "x"), _evaluation(2, 90.0, "x")])
    assert [e.overall_ranking for e in ranked] == [1, 1, 3]
    assert [e.percentile for e in ranked] == [33.3, 33.3, 0.0]


def test_category_rankings_share_ranks_on_ties(arena: Arena) -> None:
    evs = [_evaluation(i, 50.0, "x", efficiency=50.0, speed=s) for i, s in enumerate([70.0, 90.0, 70.0, 10.0])]
    ranked = arena.category_rankings(evs, "speed")
    assert [(e.submission_id, e.rankings["speed"]) for e in ranked] == [("s1", 1), ("s0", 2), ("s2", 2), ("s3", 4)]
    assert to_dict(ranked[0])["speed_ranking"] == 1
    with pytest.raises(ValidationError, match="cost_score"):
        arena.category_rankings(evs, "cost")


def test_tools_below_the_minimum_are_provisional_not_dropped() -> None:
    runs = [{"id": f"a{i}", "task_id": "t", "tool": "big", "total_tokens": 100 * i, "tool_calls": i} for i in range(6)]
    runs.append({"id": "solo", "task_id": "t", "tool": "newcomer", "total_tokens": 1, "tool_calls": 0})
    evaluations = Arena({"min_submissions_per_tool": 3}, autoload=False).evaluate_many(runs, {"t": {"id": "t"}})
    assert [e.provisional for e in evaluations] == [False] * 6 + [True]
    assert evaluations[-1].overall_ranking is not None  # still ranked
    assert to_dict(evaluations[-1])["provisional"] is True


# ---------------------------------------------------------------------------
# Confidence intervals
# ---------------------------------------------------------------------------

score_lists = st.lists(st.floats(0, 100, allow_nan=False), min_size=0, max_size=60)


@settings(max_examples=200, deadline=None)
@given(score_lists)
def test_default_interval_equals_spec(arena: Arena, scores: list[float]) -> None:
    low, high = arena.confidence_interval(scores)
    expected = spec.calculate_confidence_interval(scores)
    assert (low, high) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("n", [2, 3, 5, 10, 29, 30, 100])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_student_t_matches_scipy(arena: Arena, n: int, level: float) -> None:
    rng = random.Random(n)
    scores = [rng.uniform(30, 70) for _ in range(n)]
    expected = scipy_stats.t.interval(level, n - 1, loc=statistics.fmean(scores), scale=scipy_stats.sem(scores))
    assert arena.confidence_interval(scores, level, method="student_t") == pytest.approx(expected, rel=1e-9)


def test_bootstrap_is_seeded_and_covers_the_mean(arena: Arena) -> None:
    rng = random.Random(3)
    scores = [rng.gauss(60, 10) for _ in range(50)]
    first = arena.confidence_interval(scores, method="bootstrap")
    assert first == arena.confidence_interval(scores, method="bootstrap")
    assert first[0] < statistics.fmean(scores) < first[1]
    t_low, t_high = arena.confidence_interval(scores, method="student_t")
    assert abs(first[0] - t_low) < 1.5 and abs(first[1] - t_high) < 1.5  # the two agree on near-normal data


def test_interval_method_from_configuration() -> None:
    scores = [40.0, 50.0, 60.0]
    expected = scipy_stats.t.interval(0.95, 2, loc=50.0, scale=scipy_stats.sem(scores))
    assert Arena({"confidence_interval": "student_t"}, autoload=False).confidence_interval(scores) == pytest.approx(
        (max(0.0, expected[0]), min(100.0, expected[1]))
    )


# ---------------------------------------------------------------------------
# Outliers and validation
# ---------------------------------------------------------------------------

outlier_runs = st.lists(
    st.fixed_dictionaries(
        {"total_tokens": st.sampled_from([1, 50, 400, 1000, 5000, 20000]), "tool_calls": st.integers(0, 3)},
        optional={"execution_time": st.sampled_from([0, 2.0, 4.99, 5, 60.0])},
    ),
    min_size=1, max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(outlier_runs)
def test_outliers_equal_spec_on_measured_times(arena: Arena, runs: list[dict]) -> None:
    """The spec's rules exactly, except that an unmeasured time (absent or 0, as the spec reads
    0 for speed) is not "extremely fast": the spec's code would count it as 0 s."""
    subs = [{"id": f"s{i}", **r} for i, r in enumerate(runs)]
    measured = [{**s, "execution_time": s.get("execution_time") or 1e9} for s in subs]  # not fast, as unmeasured
    assert to_dict(arena.detect_outliers(subs)) == spec_detect_outliers(measured)
    if all(s.get("execution_time") for s in subs):
        assert to_dict(arena.detect_outliers(subs)) == spec_detect_outliers(subs)


def spec_detect_outliers(submissions: list[dict]) -> list[dict]:
    """The spec's detect_outliers, verbatim."""
    outliers = []
    tokens = [s["total_tokens"] for s in submissions]
    token_threshold = statistics.median(tokens) * 0.1
    for submission in submissions:
        flags = []
        if submission["total_tokens"] < token_threshold:
            flags.append("extremely_efficient_tokens")
        if submission.get("execution_time", 0) < 5:
            flags.append("extremely_fast")
        if submission.get("tool_calls", 0) == 1:
            flags.append("minimal_tool_usage")
        if len(flags) >= 2:
            outliers.append({"submission_id": submission["id"], "flags": flags, "recommended_action": "manual_review"})
    return outliers


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(
                st.fixed_dictionaries(
                    {"total_tokens": st.integers(1, 20000), "tool_calls": st.integers(0, 3)},
                    optional={"execution_time": st.sampled_from([0, 2.0, 4.99, 5, 60.0])},
                ),
                min_size=1,
                max_size=12,
            ),
            st.integers(0, 12),
            st.integers(0, 4),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_outliers_of_several_tasks_at_once_are_each_task_s_own(tasks: list) -> None:
    """``outliers_of_tasks`` (a batch's tasks, their rows one task after another) flags each
    task's runs as the spec's rules do among that task's runs alone: its median from its own
    measured tokens (``statistics.median``), a run without tokens left out of it; whether the
    tasks' medians are found in one sort together or each task's by its own."""
    from arena_core.engine import grouporder
    from arena_core.engine.columns import Columns
    from arena_core.model.records import Submission
    from arena_core.model.serde import structure
    from arena_core.stats.quality import outliers_of_tasks

    subs, spans, expected = [], [], []
    for t, (runs, first, unmeasured) in enumerate(tasks):
        mine = [{"id": f"t{t}-s{i}", "task_id": f"t{t}", **r} for i, r in enumerate(runs)]
        for s in mine[:unmeasured]:
            del s["total_tokens"]
        start, first = len(subs), len(subs) + min(first, len(mine))
        spans.append((start, first, start + len(mine)))
        subs += mine
        measured = [s["total_tokens"] for s in mine if "total_tokens" in s]
        threshold = statistics.median(measured) * 0.1 if measured else None
        for s in mine[first - start :]:
            flags = [
                flag
                for flag, hit in (
                    ("extremely_efficient_tokens", threshold is not None and s.get("total_tokens", math.inf) < threshold),
                    ("extremely_fast", 0 < s.get("execution_time", 0) < 5),
                    ("minimal_tool_usage", s["tool_calls"] == 1),
                )
                if hit
            ]
            if len(flags) >= 2:
                expected.append({"submission_id": s["id"], "flags": flags, "recommended_action": "manual_review"})
    columns = Columns.from_submissions([structure(s, Submission) for s in subs])
    assert to_dict(outliers_of_tasks(columns, spans)) == expected
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grouporder, "SORTED_APART", 0)  # every task's tokens sorted as a slice of its own
        assert to_dict(outliers_of_tasks(columns, spans)) == expected


def test_outliers_on_empty_and_single_inputs(arena: Arena) -> None:
    assert arena.detect_outliers([]) == []
    (only,) = arena.detect_outliers([{"id": "x", "total_tokens": 5, "tool_calls": 1, "execution_time": 1.0}])
    assert only.flags == ("extremely_fast", "minimal_tool_usage")


def test_planted_outliers_of_the_example_are_found(arena: Arena) -> None:
    from arena_core.examples import SUBMISSIONS
    from arena_core.io.readers import read_submissions

    subs = read_submissions(SUBMISSIONS)
    found = {o.submission_id for task in {s.task_id for s in subs}
             for o in arena.detect_outliers([s for s in subs if s.task_id == task])}
    assert found == {s.id for s in subs if s.meta.get("planted_outlier")}


@pytest.mark.parametrize(
    ("evaluation", "expected"),
    [
        ({"overall_score": 50, "efficiency_score": 96, "speed_score": 96, "total_tokens": 500},
         ["Suspicious: Both efficiency and speed scores are extremely high"]),
        ({"overall_score": 101, "cost_score": -1, "total_tokens": 5},
         ["overall_score out of range: 101", "cost_score out of range: -1", "Suspiciously low token count"]),
        ({"efficiency_score": 95, "speed_score": 100, "total_tokens": 10}, []),
    ],
)
def test_validate_equals_spec(arena: Arena, evaluation: dict, expected: list[str]) -> None:
    assert arena.validate(evaluation) == expected == spec_validate(evaluation)


def spec_validate(evaluation: dict) -> list[str]:
    """The spec's validate_evaluation_metrics, verbatim."""
    errors = []
    for score_type in ["overall", "efficiency", "speed", "cost", "correctness"]:
        score_key = f"{score_type}_score"
        if score_key in evaluation:
            score = evaluation[score_key]
            if not (0 <= score <= 100):
                errors.append(f"{score_type}_score out of range: {score}")
    if evaluation.get("efficiency_score", 0) > 95 and evaluation.get("speed_score", 0) > 95:
        errors.append("Suspicious: Both efficiency and speed scores are extremely high")
    if evaluation.get("total_tokens", 0) < 10:
        errors.append("Suspiciously low token count")
    return errors


def test_validate_a_model_with_the_submission_token_count(arena: Arena) -> None:
    ev = _evaluation(0, 50.0, "x", efficiency=99.0, speed=99.0)
    assert arena.validate(ev) == ["Suspicious: Both efficiency and speed scores are extremely high"]
    assert arena.validate(ev, total_tokens=3)[-1] == "Suspiciously low token count"


# ---------------------------------------------------------------------------
# Bias
# ---------------------------------------------------------------------------


def test_bias_flags_a_tool_that_is_systematically_faster(arena: Arena) -> None:
    rng = random.Random(11)
    evs = []
    for i in range(120):
        tool = ("fast", "even", "even2")[i % 3]
        speed = rng.gauss(85 if tool == "fast" else 60, 8)
        evs.append(Evaluation(f"s{i}", "t", 50.0, {"speed": speed, "cost": rng.gauss(50, 8)}, {"speed": 0.5, "cost": 0.5},
                              "default", 50.0, "x", tool=tool))
    findings = {(f.tool, f.metric): f for f in arena.detect_bias(evs)}
    assert findings[("fast", "speed")].flagged and findings[("fast", "speed")].difference > 20
    assert not findings[("fast", "cost")].flagged
    fast = findings[("fast", "speed")]
    mine = [e.scores["speed"] for e in evs if e.tool == "fast"]
    others = [e.scores["speed"] for e in evs if e.tool != "fast"]
    assert fast.margin == pytest.approx(1.96 * math.sqrt(statistics.variance(mine) / 40 + statistics.variance(others) / 80))


def test_bias_with_one_submission_is_never_flagged(arena: Arena) -> None:
    evs = [_evaluation(0, 10.0, "x"), _evaluation(1, 90.0, "x"), _evaluation(2, 95.0, "x")]
    evs = [Evaluation(**{**{a: getattr(e, a) for a in ("submission_id", "task_id", "overall_score", "scores", "weights",
                                                        "weight_profile", "unadjusted_overall_score", "evaluated_at")},
                         "tool": t}) for e, t in zip(evs, ["solo", "x", "x"])]
    solo = [f for f in arena.detect_bias(evs) if f.tool == "solo"]
    assert solo and all(f.margin == math.inf and not f.flagged for f in solo)


def test_the_python_leaderboard_is_what_the_command_prints_from_files_and_from_a_store(tmp_path) -> None:
    import json
    import os
    import subprocess
    import sys

    from arena_core import Arena, to_dict
    from arena_core.examples import SUBMISSIONS, TASKS
    from arena_core.io.readers import read_submissions, read_tasks
    from arena_core.store import MemoryStore

    arena = Arena(autoload=False)
    subs, tasks = read_submissions(SUBMISSIONS), read_tasks(TASKS)
    rows = arena.leaderboard(arena.evaluate_many(subs, tasks), by="model")
    printed = subprocess.run(
        [sys.executable, "-m", "arena_core", "leaderboard", "--example", "--by", "model", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"},
    ).stdout
    assert json.loads(printed)["rows"] == json.loads(json.dumps([to_dict(r) for r in rows]))
    store = MemoryStore()
    processed = arena.process(subs, store=store, tasks=tasks)
    from_store = arena.leaderboard(store=store, by="model")
    assert from_store == arena.leaderboard(processed.evaluations, by="model")  # stored per task, same rows
    assert [r.group for r in from_store] == [r.group for r in rows]
    with pytest.raises(ValueError, match="not both"):
        arena.leaderboard([], store=store)
