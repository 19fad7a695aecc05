"""Leaderboards name their inversions: a group ranked above one whose correctness is
significantly higher, by the paired test over shared tasks, checked against SciPy and Holm's
procedure written out here."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
from scipy.stats import ttest_rel

from arena_core import Arena
from arena_core.compare import compare
from arena_core.config.files import load_config

TASKS = {f"t{k}": {"id": f"t{k}", "success_criteria": [{"type": "file_exists", "file_path": "a.py"}]} for k in range(10)}
#: tool -> (share of tasks solved, resource scale): failing cheaply beats solving under the spec.
TOOLS = {"quitter": (0.2, 0.1), "solver": (0.9, 3.0), "steady": (0.6, 1.0)}


def runs() -> list[dict]:
    rng = np.random.default_rng(7)
    out = []
    for k in range(10):
        for tool, (rate, scale) in TOOLS.items():
            for attempt in range(2):
                solved = rng.random() < rate
                jitter = 1 + 0.2 * rng.random()
                out.append({
                    "id": f"{tool}-{k}-{attempt}", "task_id": f"t{k}", "tool": tool,
                    "total_tokens": int(5000 * scale * jitter), "tool_calls": int(10 * scale * jitter) + 1,
                    "iterations": 2, "execution_time": 200 * scale * jitter, "estimated_cost": 0.05 * scale * jitter,
                    "files_created": ["a.py"] if solved else [],
                })
    return out


def expected_inversions(evaluations, board) -> dict[str, list[str]]:
    """The definition, computed independently: per-task mean correctness per tool, SciPy's paired
    t-test on shared tasks for every pair of ranked tools, Holm's step-down adjustment by hand."""
    means: dict[str, dict[str, list[float]]] = {}
    for e in evaluations:
        means.setdefault(e.tool, {}).setdefault(e.task_id, []).append(e.correctness_score)
    per_task = {tool: {t: float(np.mean(v)) for t, v in tasks.items()} for tool, tasks in means.items()}
    rank = {row.group: row.rank for row in board}
    ordered = sorted(rank, key=lambda g: (rank[g], g))
    pairs, p_values = [], []
    for above, below in combinations(ordered, 2):
        shared = sorted(set(per_task[above]) & set(per_task[below]))
        a = [per_task[above][t] for t in shared]
        b = [per_task[below][t] for t in shared]
        pairs.append((above, below, float(np.mean(np.subtract(b, a)))))
        p_values.append(float(ttest_rel(b, a).pvalue))
    order = sorted(range(len(p_values)), key=p_values.__getitem__)
    adjusted, running = [0.0] * len(p_values), 0.0
    for position, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - position) * p_values[i]))
        adjusted[i] = running
    found: dict[str, list[str]] = {g: [] for g in ordered}
    for (above, below, difference), p in zip(pairs, adjusted, strict=True):
        if rank[above] < rank[below] and difference > 0 and p < 0.05:
            found[above].append(below)
    return found


def test_the_spec_default_board_names_its_inversions_as_the_definition_says() -> None:
    arena = Arena(autoload=False)
    evaluations = arena.evaluate_many(runs(), TASKS)
    board = arena.leaderboard(evaluations)
    assert board[0].group == "quitter"  # failing cheaply ranks first under the spec's weights
    named = {row.group: list(row.inverts) for row in board}
    assert named == expected_inversions(evaluations, board)
    assert "solver" in named["quitter"]


def test_gated_and_correctness_only_boards_have_none() -> None:
    for profile in ("gated", "correctness-only"):
        arena = Arena(load_config(None).profile(profile)[1], autoload=False)
        evaluations = arena.evaluate_many(runs(), TASKS)
        board = arena.leaderboard(evaluations)
        assert all(row.inverts == () for row in board), profile
        assert board[-1].group == "quitter", profile  # failing cheaply is no longer rewarded


def test_every_output_says_it(tmp_path: Path) -> None:
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs()))
    (tmp_path / "tasks.json").write_text(json.dumps(list(TASKS.values())))

    def cli(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "arena_core", *args, "runs.jsonl", "--tasks", "tasks.json"],
                              capture_output=True, text=True, cwd=tmp_path, check=True)
        return done.stdout

    rows = json.loads(cli("leaderboard", "--format", "json"))["rows"]
    assert all("inverts" in row for row in rows)
    assert next(r for r in rows if r["group"] == "quitter")["inverts"][0] in ("solver", "steady")
    text = cli("leaderboard")
    assert "inverts: quitter ranked above solver" in text and "holm-adjusted" in text
    assert "inverts:" not in cli("-p", "gated", "leaderboard")
    cli("report", "-o", "site")
    assert "quitter ranked above" in (tmp_path / "site" / "index.html").read_text()


def test_compare_counts_each_sides_inversions() -> None:
    loaded = load_config(None)
    report = compare(runs(), TASKS, ("default", loaded.config), loaded.profile("gated"), resamples=10, autoload=False)
    assert ("quitter", "solver") in report.inversions_a and report.inversions_b == ()
    assert report.as_dict()["inversions_a"][0] == list(report.inversions_a[0])


def test_inversions_from_matrix_products_equal_the_pair_by_pair_tests_on_random_boards() -> None:
    """Every pair tested at once (stats/pairmoments.py, only the p-values under the level kept to
    adjust) names exactly the inversions of the paired t-test run pair by pair and adjusted over
    every pair (Holm and Benjamini-Hochberg), on boards with missing cells, ties, groups equal
    but for a constant, and groups that share fewer than two tasks, and on complete boards
    (every group ran every task: their sums are read without the products), with partial credit."""
    from arena_core.stats import inversions as module
    from arena_core.stats.tasktable import TaskTable

    rng = np.random.default_rng(11)
    compared = 0
    for trial in range(40):
        groups, tasks = int(rng.integers(3, 40)), int(rng.integers(2, 30))
        solve = rng.uniform(0, 1, groups)
        correctness = np.where(rng.random((groups, tasks)) < solve[:, None], 100.0, 0.0)
        if trial % 2:
            correctness[rng.random((groups, tasks)) < rng.uniform(0, 0.5)] = np.nan
        elif trial % 4 == 0:  # complete, with partial credit (means of a few runs)
            correctness = np.round(correctness * rng.integers(1, 4, (groups, tasks)) / 3, 10)
        if groups > 4:
            correctness[1] = correctness[0]  # equal groups
            correctness[2] = np.where(np.isnan(correctness[0]), np.nan, np.minimum(correctness[0] + 0.5, 100))
        table = TaskTable([f"g{g:02d}" for g in range(groups)], [f"t{t}" for t in range(tasks)],
                          np.ones((groups, tasks), dtype=np.int64), np.zeros((groups, tasks)),
                          np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), {"correctness": correctness},
                          np.ones((groups, tasks)))  # fmt: skip
        ranks = {g: int(r) for g, r in enumerate(rng.permutation(groups) + 1)}
        ranks[groups - 1] = ranks[0]  # a tie
        for adjustment in ("holm", "bh"):
            for level in (0.95, 0.5):
                fast = module.inversions(table, ranks, adjustment=adjustment, confidence_level=level)
                ordered = sorted(ranks, key=lambda g: (ranks[g], table.groups[g]))
                slow: dict[int, list[int]] = {g: [] for g in ranks}
                for i, j, difference in zip(*module._pair_by_pair(correctness, ordered, "t", adjustment, 1 - level)):
                    above, below = ordered[i], ordered[j]
                    if ranks[above] < ranks[below] and difference > 0:  # the definition of an inversion
                        slow[above].append(below)
                assert fast == slow, (trial, adjustment, level)
                compared += sum(len(v) for v in slow.values())
    assert compared > 100  # inversions were found to compare, not only empty boards
