"""The alternative normalisations: Tukey-fenced token quartiles and percentile ranks."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest
from conftest import BASELINE
from hypothesis import given, settings
from hypothesis import strategies as st

import arena_core.engine.many as arena_module
from arena_core import Arena
from arena_core.engine.baselines import compute_baseline
from arena_core.engine.columns import Columns
from arena_core.engine.grouped import group_baselines
from arena_core.model.records import Baseline, Submission
from arena_core.store import SQLiteStore

ROBUST = {"metrics": {"token_efficiency": "token_efficiency_robust"}}
PERCENTILE = {"metrics": {"token_efficiency": "token_efficiency_percentile", "tool_call_efficiency":
                          "tool_call_efficiency_percentile", "speed": "speed_percentile", "cost": "cost_percentile"}}


def _token_score(config: dict, tokens: int, baseline: dict) -> float:
    ev = Arena(config, autoload=False).evaluate({"id": "s", "total_tokens": tokens, "tool_calls": 5}, {"id": "t"}, baseline)
    return ev.metric_scores["token_efficiency"]


def test_robust_tokens_are_linear_between_tukeys_fences() -> None:
    # q25 = 10,000, q75 = 14,000: fences at 4,000 and 20,000, inside min 9,000 and max 1,000,000.
    baseline = {**BASELINE, "min_tokens": 9_000, "median_tokens": 12_000, "max_tokens": 1_000_000,
                "q25_tokens": 10_000, "q75_tokens": 14_000}
    low, high = 9_000, 20_000  # the lower fence lies below min, so min stays
    for tokens in (9_000, 12_000, 15_500, 19_999):
        assert _token_score(ROBUST, tokens, baseline) == round((high - tokens) / (high - low) * 100, 2)
    assert _token_score(ROBUST, 20_000, baseline) == 0.0 and _token_score(ROBUST, 500_000, baseline) == 0.0
    # The spec's min/max scale calls 15,500 tokens almost perfect because of one runaway run.
    assert _token_score({}, 15_500, baseline) == 99.34 > _token_score(ROBUST, 15_500, baseline) == 40.91


def test_robust_tokens_without_quartiles_are_the_spec_score() -> None:
    for tokens in (1_000, 2_500, 7_777, 10_000):
        assert _token_score(ROBUST, tokens, BASELINE) == _token_score({}, tokens, BASELINE)


def test_percentile_rank_counts_better_and_half_the_ties() -> None:
    baseline = {**BASELINE, "samples": {"total_tokens": [300, 200, 100, 200]}}  # kept sorted
    config = {"metrics": {"token_efficiency": "token_efficiency_percentile"}}
    assert _token_score(config, 50, baseline) == 100.0
    assert _token_score(config, 100, baseline) == 87.5  # 3 use more, 1 tie: (3 + 0.5) / 4
    assert _token_score(config, 200, baseline) == 50.0  # 1 more, 2 ties
    assert _token_score(config, 250, baseline) == 25.0
    assert _token_score(config, 300, baseline) == 12.5 and _token_score(config, 301, baseline) == 0.0


def test_percentile_rank_without_samples_is_the_spec_score() -> None:
    config = {"metrics": {"token_efficiency": "token_efficiency_percentile"}}
    for tokens in (1_000, 2_500, 7_777):
        assert _token_score(config, tokens, BASELINE) == _token_score({}, tokens, BASELINE)


def test_baselines_keep_samples_only_when_a_metric_ranks_against_them() -> None:
    subs = [{"id": f"s{i}", "task_id": "t", "total_tokens": 1000 * (5 - i), "tool_calls": i, "execution_time": i * 10.0}
            for i in range(5)]
    assert Arena(autoload=False).compute_baseline("t", subs).samples == {}
    kept = Arena(PERCENTILE, autoload=False).compute_baseline("t", subs).samples
    assert kept["total_tokens"] == (1000, 2000, 3000, 4000, 5000)
    assert kept["execution_time"] == (10.0, 20.0, 30.0, 40.0)  # 0 is "not measured", as for min and max
    assert "estimated_cost" not in kept  # nobody measured cost


def test_a_bad_sample_names_the_baseline_field() -> None:
    from arena_core.model.errors import ValidationError

    with pytest.raises(ValidationError, match=r"samples.tokens: expected one of total_tokens"):
        Baseline(**{**BASELINE, "samples": {"tokens": (1, 2)}})
    with pytest.raises(ValidationError, match=r"samples.cost.*|samples.estimated_cost: expected a list of finite numbers"):
        Baseline(**{**BASELINE, "samples": {"estimated_cost": (0.1, math.inf)}})


def test_the_pipeline_ranks_against_the_tasks_earlier_submissions(tmp_path) -> None:
    arena = Arena({"metrics": {"token_efficiency": "token_efficiency_percentile"}}, autoload=False)
    store = SQLiteStore(tmp_path / "arena.db")
    earlier = [{"id": f"e{i}", "task_id": "t", "total_tokens": t, "tool_calls": 3} for i, t in
               enumerate((1000, 2000, 2000, 4000, 8000))]
    asyncio.run(arena.process_batch(earlier, store=store, tasks={"t": {"id": "t"}}))
    late = asyncio.run(arena.process_batch([{"id": "late", "task_id": "t", "total_tokens": 2000, "tool_calls": 3}],
                                           store=store)).evaluations[0]
    # Against the five earlier runs: 2 used more, 2 tied -> (2 + 1) / 5.
    assert late.metric_scores["token_efficiency"] == 60.0
    with store.transaction(write=False) as tx:  # and the stored baseline now includes it
        assert tx.get_baseline("t").samples["total_tokens"] == (1000, 2000, 2000, 2000, 4000, 8000)


figures = st.one_of(st.none(), st.sampled_from([0.0, 1.0, 2.5, 7.0, 7.0, 100.0]), st.floats(0, 1000))
rows = st.fixed_dictionaries({
    "task_id": st.sampled_from(["a", "b", "c"]),
    "total_tokens": st.sampled_from([1000, 1200, 1500, 1500, 2000, 2500, 3000, 90_000]) | st.integers(1, 200_000),
    "tool_calls": st.integers(0, 40), "iterations": st.integers(1, 6),
    "execution_time": figures, "estimated_cost": figures,
})


@settings(max_examples=100, deadline=None)
@given(st.lists(rows, min_size=1, max_size=40), st.sampled_from([ROBUST, PERCENTILE]))
def test_batch_forms_equal_the_per_record_forms(records: list[dict], config: dict) -> None:
    subs = [{"id": f"s{i}", **{k: v for k, v in r.items() if v is not None}} for i, r in enumerate(records)]
    tasks = {t: {"id": t} for t in "abc"}
    arena = Arena(config, autoload=False)
    batch = arena.evaluate_many(subs, tasks, evaluated_at="x")
    real = arena_module.evaluate_columns
    arena_module.evaluate_columns = lambda *args, **kwargs: None
    try:
        per_record = arena.evaluate_many(subs, tasks, evaluated_at="x")
    finally:
        arena_module.evaluate_columns = real
    assert [(e.scores, e.metric_scores, e.overall_score) for e in batch] == \
        [(e.scores, e.metric_scores, e.overall_score) for e in per_record]


@settings(max_examples=100, deadline=None)
@given(st.lists(rows, min_size=1, max_size=40))
def test_grouped_samples_equal_compute_baseline(records: list[dict]) -> None:
    subs = [Submission(id=f"s{i}", **{k: v for k, v in r.items() if v is not None}) for i, r in enumerate(records)]
    fields = ("total_tokens", "tool_calls", "execution_time", "estimated_cost")
    codes = np.array(["abc".index(s.task_id) for s in subs])
    grouped = group_baselines(Columns.from_submissions(subs), codes, 3, [Baseline(**BASELINE)] * 3, list("abc"), "x", fields)
    for code, task_id in enumerate("abc"):
        expected = compute_baseline(task_id, [s for s in subs if s.task_id == task_id], Baseline(**BASELINE), now="x",
                                    samples=fields)
        assert grouped[code].samples == expected.samples
