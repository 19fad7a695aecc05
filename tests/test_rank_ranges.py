"""Rank ranges and tiers: the paired bootstrap (the default) against the overlap rule, on boards
simulated with known truth and shaped like SWE-bench's (25 models, 500 instances, pass/fail),
and the replication test the choice rests on: the tasks split in halves, the ranges from one
half must hold the ranks the other half gives."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from arena_core import Arena
from arena_core.model.errors import ValidationError
from arena_core.stats.leaderboard import GroupRow, leaderboard
from arena_core.stats.pairwise import adjust, paired_p_value
from arena_core.stats.rankranges import leader_tiers, paired_ranges
from arena_core.stats.tasktable import Runs, TaskTable

MODELS, INSTANCES = 25, 500
#: A calibrated 95 % interval holds an independent replication's estimate 83.4 % of the time
#: (P(|Z| < 1.96 / sqrt 2)); ranges must do at least as well on the other half of the tasks.
REPLICATION = 0.834


@pytest.fixture(scope="module")
def arena() -> Arena:
    return Arena(autoload=False)


def _board(rng: np.random.Generator) -> tuple[TaskTable, np.ndarray, np.ndarray]:
    """A pass/fail board from a Rasch model: (the table, each model's true solve rate over these
    tasks, the per-cell verdicts)."""
    ability = rng.normal(0, 0.6, MODELS)
    difficulty = rng.normal(0, 1.8, INSTANCES)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    solved = (rng.random(p.shape) < p) * 100.0
    return _table(solved), p.mean(axis=1) * 100, solved


def _table(solved: np.ndarray) -> TaskTable:
    g, t = np.meshgrid(np.arange(solved.shape[0]), np.arange(solved.shape[1]), indexing="ij")
    overall = solved.ravel()
    runs = Runs(
        [f"{a}-{b}" for a, b in zip(g.ravel(), t.ravel(), strict=True)],
        [f"model-{a:02d}" for a in g.ravel()],
        [f"instance-{b:03d}" for b in t.ravel()],
        overall,
        {"correctness": overall},
        np.ones(len(overall)),
    )
    return TaskTable.of(runs)


def _rows(arena: Arena, table: TaskTable, ranks: str) -> dict[str, GroupRow]:
    rows = leaderboard(
        table,
        arena.components.aggregators["task_mean"],
        arena.components.interval_methods["student_t"],
        min_tasks=3,
        ranks=ranks,
    )
    return {row.group: row for row in rows}


def _ranks(scores: np.ndarray) -> np.ndarray:
    return 1 + (scores[None, :] > scores[:, None]).sum(axis=1)


def test_paired_ranges_are_narrower_than_overlap_and_replicate_on_half_splits(arena: Arena) -> None:
    rng = np.random.default_rng(33)
    width = {"paired_bootstrap": [], "overlap": []}
    replicated = {"paired_bootstrap": [], "overlap": []}
    true_cover = {"paired_bootstrap": [], "overlap": []}
    for _ in range(6):
        table, truth, solved = _board(rng)
        true_rank = dict(zip(table.groups, _ranks(truth).tolist(), strict=True))
        halves = np.array_split(rng.permutation(INSTANCES), 2)
        first, second = _table(solved[:, halves[0]]), _table(solved[:, halves[1]])
        other = dict(zip(second.groups, _ranks(np.nanmean(second.means, axis=1)).tolist(), strict=True))
        for rule in width:
            whole = _rows(arena, table, rule)
            width[rule] += [r.rank_high - r.rank_low + 1 for r in whole.values()]
            true_cover[rule] += [r.rank_low <= true_rank[g] <= r.rank_high for g, r in whole.items()]
            half = _rows(arena, first, rule)
            replicated[rule] += [r.rank_low <= other[g] <= r.rank_high for g, r in half.items()]
    paired, overlap = np.mean(width["paired_bootstrap"]), np.mean(width["overlap"])
    assert paired < 0.7 * overlap, (paired, overlap)
    assert np.mean(replicated["paired_bootstrap"]) >= REPLICATION
    assert np.mean(true_cover["paired_bootstrap"]) >= 0.95
    # the overlap rule covers too, by being wide: the check above is the one that could fail
    assert np.mean(replicated["overlap"]) >= np.mean(replicated["paired_bootstrap"])


def test_a_tier_holds_no_pair_the_paired_tests_separate_where_chains_held_many(arena: Arena) -> None:
    table, _, _ = _board(np.random.default_rng(5))
    pairs = list(combinations(range(len(table.groups)), 2))
    p_values = adjust(np.array([paired_p_value(table.means[a] - table.means[b], "t") for a, b in pairs]), "holm")
    separated = {frozenset((table.groups[a], table.groups[b])) for (a, b), p in zip(pairs, p_values) if p < 0.05}

    def inside(rule: str) -> tuple[int, int]:
        rows = _rows(arena, table, rule).values()
        same = [frozenset((a.group, b.group)) for a, b in combinations(rows, 2) if a.tier == b.tier]
        return len(same), sum(pair in separated for pair in same)

    chained_pairs, chained_separated = inside("overlap")
    led_pairs, led_separated = inside("paired_bootstrap")
    assert chained_separated > 50 and led_pairs < chained_pairs / 2
    assert led_separated <= 0.05 * led_pairs


def test_paired_ranges_are_the_rank_quantiles_and_hold_the_board_rank() -> None:
    # three groups, four resamples: ranks per resample are (1,2,3) (1,3,2) (2,1,3) (1,2,3)
    scores = np.array([[9.0, 5, 1], [9, 1, 5], [5, 9, 1], [9, 5, 1]])
    best, worst = paired_ranges(scores, np.array([1, 2, 3]), confidence_level=0.5)
    assert best.tolist() == [1, 1, 2] and worst.tolist() == [2, 3, 3]
    # a group without a score in a resample is left out of it; ties share the better rank
    scores = np.array([[np.nan, 5, 5], [np.nan, 5, 5]])
    best, worst = paired_ranges(scores, np.array([3, 1, 1]), confidence_level=0.95)
    assert best.tolist() == [3, 1, 1] and worst.tolist() == [3, 1, 1]


def test_paired_ranges_rank_every_resample_as_one_resample_at_a_time_does() -> None:
    """All resamples ranked at once give the ranges of ranking each resample on its own (each
    score's rank 1 + the scores above it, NaN left out) on random boards with ties and holes;
    scores a few units in the last place apart (one ability reached by two paths of arithmetic)
    are tied."""
    rng = np.random.default_rng(4)
    for trial in range(30):
        resamples, groups = int(rng.integers(1, 60)), int(rng.integers(1, 30))
        scores = np.round(rng.uniform(0, 10, (resamples, groups)), int(rng.integers(0, 2)))  # ties
        exact = scores.copy()
        scores *= 1 + rng.uniform(-4e-16, 4e-16, scores.shape)  # float noise on the ties
        holes = rng.random(scores.shape) < rng.uniform(0, 0.4)
        scores[holes], exact[holes] = np.nan, np.nan
        board = rng.integers(1, groups + 1, groups)
        level = float(rng.choice([0.5, 0.9, 0.95]))
        best, worst = paired_ranges(scores, board, level)
        for g in range(groups):
            mine = [1 + np.sum(row[~np.isnan(row)] > row[g]) for row in exact if not np.isnan(row[g])]
            low = min(board[g], np.quantile(mine, (1 - level) / 2, method="lower")) if mine else board[g]
            high = max(board[g], np.quantile(mine, (1 + level) / 2, method="higher")) if mine else board[g]
            assert (best[g], worst[g]) == (low, high), (trial, g)


def test_leader_tiers_take_the_groups_that_could_displace_the_leader_and_do_not_chain() -> None:
    # ranges 1-2, 1-3, 2-4, 4-5, 5-5: chaining joins all; the leader (1-2) takes 1-3 and 2-4
    best, worst = np.array([1, 1, 2, 4, 5]), np.array([2, 3, 4, 5, 5])
    assert leader_tiers(best, worst) == [1, 1, 1, 2, 2]
    best, worst = np.array([1, 2, 3]), np.array([1, 3, 3])
    assert leader_tiers(best, worst) == [1, 2, 2]


def test_an_unknown_rank_rule_is_refused_by_name(arena: Arena) -> None:
    table, _, _ = _board(np.random.default_rng(1))
    with pytest.raises(ValidationError, match="ranks.*paired_bootstrap, overlap"):
        _rows(arena, table, "widest")
    with pytest.raises(ValidationError, match="leaderboard_ranks"):
        Arena({"leaderboard_ranks": "widest"}, autoload=False)


@pytest.mark.parametrize("units", [1, 7, 500])
def test_bootstrap_weights_follow_the_multinomial_law_of_drawing_the_tasks_again(units: int) -> None:
    """The board's resample weights (drawn by counting uniform picks, not one binomial per task)
    against the law ``rng.multinomial(units, [1 / units] * units)`` gives: every row draws
    ``units`` tasks, each task's count is Binomial(units, 1/units) by a chi-square test against
    SciPy's pmf, and two tasks' counts covary by -1/units, the multinomial's."""
    from scipy import stats

    from arena_core.stats.rankranges import uniform_counts

    rng = np.random.default_rng(5)
    weights = np.vstack([uniform_counts(rng, units, 400) for _ in range(50)])  # 20,000 resamples
    assert weights.shape == (20_000, units) and weights.dtype == float
    assert (weights.sum(axis=1) == units).all() and (weights == np.round(weights)).all()
    if units == 1:
        return
    assert np.abs(weights.mean(axis=0) - 1).max() < 0.05  # every task drawn once a resample on average
    counts = weights[:, 0].astype(int)
    top = 5  # counts of 5 and more pooled, so that every expected frequency is large enough
    observed = np.bincount(np.minimum(counts, top), minlength=top + 1)
    pmf = stats.binom.pmf(np.arange(top), units, 1 / units)
    expected = np.append(pmf, 1 - pmf.sum()) * len(counts)
    assert stats.chisquare(observed, expected).pvalue > 0.001
    covariance = np.cov(weights[:, 0], weights[:, 1])[0, 1]
    assert covariance == pytest.approx(-1 / units, abs=0.04)
