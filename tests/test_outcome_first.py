"""The outcome-first order: no board in it names an inversion, the score orders what correctness
does not, under every aggregator; checked on random boards (Hypothesis) and on real runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core import Arena
from arena_core.cli import main
from arena_core.config.files import load_config
from arena_core.stats.leaderboard import leaderboard
from arena_core.stats.outcomefirst import outcome_first, significant_pairs
from arena_core.stats.tasktable import TaskTable

ARENA = Arena(autoload=False)


def _table(seed: int, groups: int, tasks: int, holes: float) -> TaskTable:
    """Groups that solve a share of tasks at a cost: cheaper groups solve less, and the score
    (the overall mean per task) rewards cost more than correctness, as pass/fail-plus-cost data do."""
    rng = np.random.default_rng(seed)
    solve = np.sort(rng.uniform(0.05, 0.95, groups))
    correctness = np.where(rng.random((groups, tasks)) < solve[:, None], 100.0, 0.0)
    overall = 0.3 * correctness + 0.7 * (100 - 100 * solve[:, None]) + rng.normal(0, 3, (groups, tasks))
    missing = rng.random((groups, tasks)) < holes
    correctness[missing] = np.nan
    overall[missing] = np.nan
    counts = np.where(missing, 0, 1).astype(np.int64)
    return TaskTable([f"g{g:02d}" for g in range(groups)], [f"t{t}" for t in range(tasks)], counts,
                     np.nan_to_num(overall), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
                     {"correctness": correctness, "overall": overall}, np.ones((groups, tasks)))  # fmt: skip


def _board(table: TaskTable, method: str, order: str) -> list:
    return leaderboard(
        table, ARENA.components.aggregators[method], ARENA.components.interval_methods["student_t"],
        min_tasks=1, order=order, ranks="overlap",
    )  # fmt: skip


@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    groups=st.integers(2, 10),
    tasks=st.integers(6, 30),
    method=st.sampled_from(["task_mean", "win_rate", "bradley_terry"]),
)
def test_a_complete_board_in_outcome_first_order_names_no_inversion(seed: int, groups: int, tasks: int, method: str) -> None:
    table = _table(seed, groups, tasks, holes=0.0)
    board = _board(table, method, "outcome-first")
    assert all(row.inverts == () for row in board)
    index = {name: g for g, name in enumerate(table.groups)}
    ranked = [index[row.group] for row in board if not row.provisional]
    edges = significant_pairs(table, ranked, test="t", adjustment="holm", confidence_level=0.95)
    place = {g: i for i, g in enumerate(ranked)}
    assert all(place[higher] < place[lower] for higher, lower in edges)  # a linear extension of the relation
    score = {index[row.group]: round(row.score, 2) for row in board}
    for above, below in zip(ranked, ranked[1:], strict=False):  # the score decides unless correctness does
        assert score[above] >= score[below] or (above, below) in edges
    ranks = [row.rank for row in board if not row.provisional]
    assert ranks == sorted(ranks) and all(r.rank_low <= r.rank <= r.rank_high for r in board if r.rank)


def test_the_score_order_of_the_same_boards_does_name_inversions() -> None:
    """The boards above are ones the score order gets wrong: the property is not vacuous."""
    named = sum(
        len(row.inverts) for seed in range(10) for row in _board(_table(seed, 10, 30, 0.0), "task_mean", "score")
    )
    assert named > 10


def test_without_a_significant_difference_the_order_is_the_scores() -> None:
    table = _table(3, 6, 4, holes=0.0)  # four tasks: too few for any pair to differ significantly
    by_score = [row.group for row in _board(table, "task_mean", "score")]
    assert [row.group for row in _board(table, "task_mean", "outcome-first")] == by_score


def test_a_cycle_of_an_incomplete_design_is_broken_at_its_best_scored_group() -> None:
    edges = {(0, 1), (1, 2), (2, 0), (3, 0)}  # 0 > 1 > 2 > 0 on different shared tasks; 3 > 0
    priority = {0: (-50.0, "a"), 1: (-60.0, "b"), 2: (-40.0, "c"), 3: (-10.0, "d")}
    assert outcome_first([1, 0, 2, 3], priority, edges) == [3, 1, 2, 0]
    assert outcome_first([0, 1], {0: (-1.0, "a"), 1: (-2.0, "b")}, set()) == [1, 0]


def test_holes_leave_at_most_the_inversions_of_a_cycle() -> None:
    for seed in range(15):
        table = _table(seed, 10, 30, holes=0.3)
        board = _board(table, "task_mean", "outcome-first")
        index = {name: g for g, name in enumerate(table.groups)}
        ranked = [index[row.group] for row in board]
        edges = significant_pairs(table, ranked, test="t", adjustment="holm", confidence_level=0.95)
        place = {g: i for i, g in enumerate(ranked)}
        backward = {(h, low) for h, low in edges if place[h] > place[low]}
        named = {(index[b], index[row.group]) for row in board for b in row.inverts}
        assert named == backward  # every inversion left is named, and only a cycle leaves one
        if backward:
            assert any((low, h) in _reachable(edges) for h, low in backward)


def _reachable(edges: set[tuple[int, int]]) -> set[tuple[int, int]]:
    closure = set(edges)
    while True:
        more = {(a, d) for a, b in closure for c, d in closure if b == c} - closure
        if not more:
            return closure
        closure |= more


@pytest.mark.parametrize("method", ["task_mean", "win_rate"])
def test_gated_boards_of_aiders_runs_name_no_inversion(method: str) -> None:
    result = CliRunner().invoke(main, ["-p", "gated", "leaderboard", "--example", "aider", "--by", "model",
                                       "--method", method, "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert sum(not r["provisional"] for r in rows) >= 2 and all(r["inverts"] == [] for r in rows)
    text = CliRunner().invoke(main, ["-p", "gated", "leaderboard", "--example", "aider", "--by", "model"])
    assert "order: outcome-first" in text.stdout and "see -p gated" not in text.stdout


def test_the_gated_profile_orders_outcome_first_and_the_default_by_score(tmp_path: Path) -> None:
    loaded = load_config(None)
    assert loaded.config.leaderboard_order == "score"
    assert loaded.profile("gated")[1].leaderboard_order == "outcome-first"
    (tmp_path / "arena.toml").write_text('leaderboard_order = "random"\n')
    bad = CliRunner().invoke(main, ["-c", str(tmp_path / "arena.toml"), "leaderboard", "--example"])
    assert bad.exit_code == 2 and "leaderboard_order" in bad.stderr and "outcome-first" in bad.stderr
