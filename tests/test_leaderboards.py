"""Group leaderboards: task means, task-clustered intervals, rank intervals, tiers, provisional
groups, aggregators, paired tests and Pareto fronts, each checked against an independent
computation (SciPy, a transcription of the published procedure, or brute force)."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize, stats

from arena_core import Arena
from arena_core.stats.pairwise import adjust, holm, minimum_detectable
from arena_core.stats.rankranges import chained_tiers, overlap_ranges
from arena_core.stats.tasktable import Runs, TaskTable
from arena_core.store import MemoryStore
from plugins.aggregators import BradleyTerry

EXAMPLE = Path(__file__).parent.parent / "arena_core" / "examples"
REAL_DATA = Path(__file__).parent / "data" / "aider-leaderboards"


def _example(arena: Arena) -> tuple[list[dict], dict]:
    subs = [json.loads(line) for line in (EXAMPLE / "submissions.jsonl").read_text().splitlines()]
    tasks = {t["id"]: t for t in json.loads((EXAMPLE / "tasks.json").read_text())}
    return subs, tasks


def _runs(groups: list[str], tasks: list[str], scores: list[float]) -> Runs:
    n = len(groups)
    return Runs([f"s{i}" for i in range(n)], groups, tasks, np.array(scores, dtype=float), {}, np.ones(n))


def _random_table(rng: np.random.Generator, groups: int, tasks: int, fill: float = 0.8) -> TaskTable:
    names, task_ids, scores = [], [], []
    for g in range(groups):
        for t in range(tasks):
            if rng.random() < fill or t == 0:
                for _ in range(rng.integers(1, 4)):
                    names.append(f"g{g:02d}")
                    task_ids.append(f"t{t:03d}")
                    scores.append(round(float(np.clip(rng.normal(50 + 3 * g, 15), 0, 100)), 2))
    return TaskTable.of(_runs(names, task_ids, scores))


def test_a_groups_score_is_the_mean_over_tasks_of_its_per_task_means(arena: Arena) -> None:
    subs, tasks = _example(arena)
    subs = [s for s in subs if not (s["tool"] == "swe-agent" and s["task_id"] != "debugging-009")]  # uneven runs
    evaluations = arena.evaluate_many(subs, tasks)
    per_task: dict[str, dict[str, list[float]]] = {}
    for e in evaluations:
        per_task.setdefault(e.tool, {}).setdefault(e.task_id, []).append(e.overall_score)
    rows = arena.leaderboard(evaluations, by="tool")
    for row in rows:
        means = [sum(v) / len(v) for v in per_task[row.group].values()]
        assert row.score == pytest.approx(sum(means) / len(means), abs=1e-9)
        assert row.n_tasks == len(means) and row.n_runs == sum(len(v) for v in per_task[row.group].values())
        if len(means) >= 2:  # Student-t on the per-task means, as SciPy computes it
            low, high = stats.t.interval(0.95, len(means) - 1, loc=np.mean(means), scale=stats.sem(means))
            assert (row.ci_low, row.ci_high) == pytest.approx((max(0, low), min(100, high)), abs=1e-9)
    swe = next(r for r in rows if r.group == "swe-agent")
    assert swe.provisional and swe.rank is None and swe.tier is None and rows[-1] is swe  # one task: listed last
    # The pooled mean weighs the runs; with 3 runs on every task the two agree for the others.
    pooled = {r.group: r.score for r in arena.leaderboard(evaluations, by="tool", method="pooled")}
    assert pooled["claude-code"] == pytest.approx(
        np.mean([e.overall_score for e in evaluations if e.tool == "claude-code"]), abs=1e-9
    )


def test_a_single_lucky_run_no_longer_ranks_above_groups_with_many_tasks(arena: Arena) -> None:
    runs = [{"id": f"big-{t}-{k}", "task_id": t, "tool": "big", "total_tokens": 5000, "tool_calls": 10,
             "iterations": 3, "execution_time": 300, "estimated_cost": 0.05, "correctness": 0.7}
            for t in ("a", "b", "c", "d") for k in range(5)]
    runs.append({**runs[0], "id": "lucky", "tool": "lucky", "correctness": 1.0, "total_tokens": 1000})
    tasks = {t: {"id": t, "category": "debugging"} for t in "abcd"}
    rows = arena.leaderboard(arena.evaluate_many(runs, tasks))
    assert [r.group for r in rows] == ["big", "lucky"]
    assert rows[0].rank == 1 and rows[1].provisional and rows[1].rank is None


def test_rank_intervals_follow_the_rule_on_generated_intervals() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        centres = rng.normal(50, 10, n)
        widths = rng.uniform(0, 15, n)
        lows, highs = centres - widths, centres + widths
        lows[rng.random(n) < 0.1] = highs[0]  # exact ties of ends: the inequalities are strict
        best, worst = overlap_ranges(lows, highs)
        for i in range(n):
            assert best[i] == 1 + sum(lows[j] > highs[i] for j in range(n))
            assert worst[i] == n - sum(highs[j] < lows[i] for j in range(n))
        tier = chained_tiers(best, worst)
        for i, j in combinations(range(n), 2):  # overlapping rank ranges share a tier
            if best[i] <= worst[j] and best[j] <= worst[i]:
                assert tier[i] == tier[j]
        assert sorted(set(tier)) == list(range(1, max(tier) + 1))


def test_tiers_chain_overlaps_and_number_from_the_top() -> None:
    assert chained_tiers(np.array([1, 1, 3, 4, 4]), np.array([2, 3, 3, 5, 5])) == [1, 1, 1, 2, 2]


def test_the_task_bootstrap_is_seeded_and_clusters_by_task(arena: Arena) -> None:
    subs, tasks = _example(arena)
    evaluations = arena.evaluate_many(subs, tasks)
    first = arena.leaderboard(evaluations, interval="bootstrap")
    assert first == arena.leaderboard(evaluations, interval="bootstrap")
    t_rows = {r.group: r for r in arena.leaderboard(evaluations)}
    for row in first:  # the bootstrap of the per-task means is close to the t interval, not equal
        assert row.ci_low < row.score < row.ci_high
        assert row.ci_low != t_rows[row.group].ci_low
        assert abs(row.ci_high - row.ci_low) == pytest.approx(t_rows[row.group].ci_high - t_rows[row.group].ci_low, rel=0.35)


def test_win_rate_is_helms_mean_win_rate() -> None:
    rng = np.random.default_rng(3)
    table = _random_table(rng, 6, 12, fill=0.7)
    arena = Arena(autoload=False)
    scores = arena.components.aggregators["win_rate"].aggregate(table, np.ones((1, len(table.tasks))))[0]
    means = table.means
    for g in range(len(table.groups)):
        rates = []
        for t in range(len(table.tasks)):
            if math.isnan(means[g, t]):
                continue
            others = [means[h, t] for h in range(len(table.groups)) if h != g and not math.isnan(means[h, t])]
            if others:
                rates.append(sum((means[g, t] > o) + 0.5 * (means[g, t] == o) for o in others) / len(others))
        assert scores[g] == pytest.approx(100 * np.mean(rates), abs=1e-9)


@pytest.mark.parametrize("prior", [0.0, 1.0])
def test_bradley_terry_matches_an_independent_maximum_likelihood_fit(prior: float) -> None:
    rng = np.random.default_rng(11)
    groups = 5
    wins = rng.integers(1, 9, size=(groups, groups)).astype(float)  # every group won and lost
    np.fill_diagonal(wins, 0)

    def negative_log_likelihood(theta: np.ndarray) -> float:
        diff = theta[:, None] - theta[None, :]
        total = -np.sum(wins * -np.logaddexp(0, -diff))
        # the prior: `prior` tied games (half a win each way) against a reference at strength 1
        total -= prior / 2 * np.sum(-np.logaddexp(0, -theta) - np.logaddexp(0, theta))
        return float(total + (1e-9 * np.sum(theta) ** 2 if prior == 0 else 0.0))

    theta = optimize.minimize(negative_log_likelihood, np.zeros(groups), method="BFGS", options={"gtol": 1e-10}).x
    fitted = BradleyTerry(prior=prior).fit(wins[None])[0]
    expected = np.exp(theta)
    if prior == 0:  # identified only up to scale: compare after normalising both
        expected /= np.exp(np.mean(theta))
        fitted = fitted / np.exp(np.mean(np.log(fitted)))
    np.testing.assert_allclose(fitted, expected, rtol=1e-5)


def test_bradley_terry_ranks_like_the_per_task_outcomes(arena: Arena) -> None:
    subs, tasks = _example(arena)
    evaluations = arena.evaluate_many(subs, tasks)
    bt = [r.group for r in arena.leaderboard(evaluations, method="bradley_terry")]
    wr = [r.group for r in arena.leaderboard(evaluations, method="win_rate")]
    assert bt == wr  # both from per-task pairwise outcomes; on this arena they agree on the order


def test_a_board_s_intervals_at_once_are_each_group_s_by_the_textbook_formulas() -> None:
    """The interval methods' batch form (every group of a board at once, as the leaderboard
    calls it) gives each row the interval of its own formula, with ``statistics``' mean and
    stdev and ``scipy.stats``' t quantile: rows of every size (0-2 included, which give 0-100),
    ties and no spread."""
    from arena_plugins.intervals import SpecInterval, StudentT

    rng = np.random.default_rng(5)
    rows = [np.round(rng.normal(rng.uniform(20, 80), rng.choice([0.0, 0.3, 8.0, 40.0]), int(n)), 2)
            for n in rng.integers(0, 60, 300)]  # fmt: skip
    for level in (0.9, 0.95):
        student, spec = StudentT().intervals(rows, level), SpecInterval().intervals(rows, level)
        for row, found_t, found_spec in zip(rows, student, spec, strict=True):
            scores, n = row.tolist(), len(row)
            if n < 2:
                assert found_t == (0.0, 100.0)
            else:
                mean = statistics.fmean(scores)
                margin = float(stats.t.ppf((1 + level) / 2, n - 1)) * statistics.stdev(scores) / math.sqrt(n)
                assert found_t == (max(0.0, mean - margin), min(100.0, mean + margin)), scores
            if n < 3:
                assert found_spec == (0.0, 100.0)
            else:
                mean = statistics.mean(scores)
                margin = (2.776 if n < 30 else 1.96) * (statistics.stdev(scores) / math.sqrt(n))
                assert found_spec == (max(0.0, mean - margin), min(100.0, mean + margin)), scores


def test_paired_p_values_and_intervals_match_scipy(arena: Arena) -> None:
    subs, tasks = _example(arena)
    evaluations = arena.evaluate_many(subs, tasks)
    table = TaskTable.of(_runs([e.tool for e in evaluations], [e.task_id for e in evaluations],
                               [e.overall_score for e in evaluations]))
    pairs = arena.pairwise(evaluations)
    assert len(pairs) == 10
    raw = []
    for pair in pairs:
        a, b = table.groups.index(pair.a), table.groups.index(pair.b)
        shared = ~np.isnan(table.means[a]) & ~np.isnan(table.means[b])
        x, y = table.means[a][shared], table.means[b][shared]
        assert pair.n_tasks == len(x) and pair.difference == pytest.approx(np.mean(x - y))
        assert pair.p_value == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-9)
        assert pair.ci_low < pair.difference < pair.ci_high
        raw.append(pair.p_value)
    assert [p.p_adjusted for p in pairs] == pytest.approx(_holm_transcribed(raw))
    bh = arena.pairwise(evaluations, adjustment="bh")
    assert [p.p_adjusted for p in bh] == pytest.approx(_bh_transcribed(raw))


def test_the_t_test_and_t_quantile_are_scipys_to_the_last_bit() -> None:
    """The paired t-test's p-value and the interval's t quantile are computed from
    ``scipy.special`` (so a leaderboard does not import ``scipy.stats``): on 3,000 random samples
    of 2 to 80 differences, from near-constant to spread out, they equal ``ttest_1samp`` and
    ``t.ppf`` exactly, and the default board never imports ``scipy.stats``."""
    from arena_core.stats.pairwise import t_test_p_value
    from arena_plugins.intervals import StudentT

    rng = np.random.default_rng(11)
    for _ in range(3_000):
        n = int(rng.integers(2, 81))
        sample = np.round(rng.normal(rng.normal(0, 5), rng.choice([1e-6, 0.5, 5.0, 40.0]), n), 2)
        if np.all(sample == sample[0]):
            continue
        assert t_test_p_value(sample) == float(stats.ttest_1samp(sample, 0.0).pvalue)
        scores, level = (sample + 50).tolist(), float(rng.choice([0.8, 0.9, 0.95, 0.99]))
        mean = statistics.fmean(scores)  # the interval's own formula, with scipy.stats's quantile
        margin = float(stats.t.ppf((1 + level) / 2, n - 1)) * statistics.stdev(scores) / math.sqrt(n)
        assert StudentT().interval(scores, level) == (max(0.0, mean - margin), min(100.0, mean + margin))
    board = "import sys; from arena_core.cli import main; sys.argv = ['arena', 'leaderboard', '--example']\n"
    board += "try:\n    main()\nexcept SystemExit:\n    pass\nprint('scipy.stats' in sys.modules, file=sys.stderr)"
    done = subprocess.run([sys.executable, "-c", board], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "False" and "Rank" in done.stdout


def _holm_transcribed(p: list[float]) -> list[float]:
    """Holm (1979): reject in order of p while p_(k) <= alpha / (m - k + 1); as adjusted values."""
    m = len(p)
    order = sorted(range(m), key=p.__getitem__)
    adjusted, running = [0.0] * m, 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * p[i]))
        adjusted[i] = running
    return adjusted


def _bh_transcribed(p: list[float]) -> list[float]:
    """Benjamini-Hochberg (1995) adjusted values: min over j >= k of m p_(j) / j."""
    m = len(p)
    order = sorted(range(m), key=p.__getitem__)
    adjusted, running = [0.0] * m, 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, m * p[i] / rank)
        adjusted[i] = running
    return adjusted


def test_holm_and_bh_on_random_p_values() -> None:
    rng = np.random.default_rng(5)
    for m in (1, 2, 7, 40):
        p = rng.uniform(0, 0.2, m)
        assert holm(p).tolist() == pytest.approx(_holm_transcribed(p.tolist()))
        assert adjust(p, "bh").tolist() == pytest.approx(_bh_transcribed(p.tolist()))
    with_untested = adjust(np.array([0.01, math.nan, 0.04]), "holm")
    assert math.isnan(with_untested[1]) and with_untested[[0, 2]].tolist() == pytest.approx([0.02, 0.04])


def test_the_sign_flip_test_matches_scipys_permutation_test() -> None:
    rng = np.random.default_rng(9)
    for n in (5, 12, 40):
        d = rng.normal(0.5, 1.0, n)
        from arena_core.stats.pairwise import paired_p_value

        ours = paired_p_value(d, "permutation")
        theirs = stats.permutation_test(
            (d,), np.mean, permutation_type="samples", n_resamples=20_000 if n > 16 else math.inf,
            alternative="two-sided", random_state=1,
        ).pvalue
        assert ours == pytest.approx(theirs, abs=1e-12 if n <= 16 else 0.02)


def test_the_minimum_detectable_difference_has_80_percent_power() -> None:
    rng = np.random.default_rng(21)
    for n in (6, 25):
        sample = rng.normal(0, 4, n)
        effect = minimum_detectable(sample, 0.05)
        spread = np.std(sample, ddof=1)
        simulated = rng.normal(effect, spread, size=(20_000, n))
        power = np.mean(stats.ttest_1samp(simulated, 0, axis=1).pvalue < 0.05)
        assert power == pytest.approx(0.8, abs=0.015)


def test_pareto_front_is_the_set_nobody_dominates() -> None:
    rng = np.random.default_rng(13)
    from arena_core.stats.pareto import pareto

    groups = [f"g{g}" for g in range(12) for _ in range(6)]
    task_ids = [f"t{k}" for _ in range(12) for k in range(6)]
    runs = Runs([f"s{i}" for i in range(72)], groups, task_ids, rng.uniform(0, 100, 72),
                {"correctness": rng.uniform(0, 100, 72).round(0)}, np.ones(72))
    cost = rng.uniform(0.1, 2.0, 72).round(1)
    cost[:6] = np.nan  # g0 never measured its cost
    points = {p.group: p for p in pareto(runs, cost, "correctness")}
    assert points["g0"].x is None and not points["g0"].on_front
    placed = [p for p in points.values() if p.x is not None]
    for p in placed:
        dominators = {q.group for q in placed if q.x <= p.x and q.y >= p.y and (q.x < p.x or q.y > p.y)}
        assert set(p.dominated_by) == dominators
        assert p.on_front == (not dominators)
        assert p.x == pytest.approx(np.mean(cost[[i for i, g in enumerate(groups) if g == p.group]]))


def test_leaderboard_from_a_store_equals_the_one_from_its_evaluations(arena: Arena) -> None:
    subs, tasks = _example(arena)
    store = MemoryStore()
    arena.process(subs[:90], store=store, tasks=tasks)
    arena.process(subs[90:], store=store)
    with store.transaction(write=False) as tx:
        stored = [e for t in tx.task_ids() for e in tx.evaluations(t)]
    assert arena.leaderboard(store=store, by="model") == arena.leaderboard(stored, by="model")


def test_coverage_is_the_measured_share_of_the_weight(real_submissions: list[dict], real_tasks: dict) -> None:
    arena = Arena({"missing": {"total_tokens": "reweight", "tool_calls": "reweight"},
                   "category_profiles": {"code_editing": "default"}}, autoload=False)
    batch = arena.evaluate_many(real_submissions, real_tasks)
    by_filled = {}
    for e in batch:
        if e.weight_profile == "default":
            by_filled[tuple(sorted(e.filled.items()))] = arena.scorer.coverage(e.filled, e.weight_profile)
    # efficiency weighs 0.35: its token, tool-call and iteration parts 0.5, 0.3 and 0.2 of it
    # (the iteration count is assumed, not reported); cost weighs 0.2
    unmeasured = (("iteration_efficiency", "count_as_one"), ("token_efficiency", "reweight"),
                  ("tool_call_efficiency", "reweight"))
    assert by_filled[unmeasured] == 0.65
    assert by_filled[(("cost", "neutral"), *unmeasured)] == 0.45
    assert all(e.coverage == arena.scorer.coverage(e.filled, e.weight_profile) for e in batch)
    from arena_core.stats.runs import runs_of

    from_batch = runs_of(arena.scorer, batch, "tool").coverage
    from_objects = runs_of(arena.scorer, list(batch), "tool").coverage
    assert from_batch.tolist() == from_objects.tolist()


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command run in this process (as ``arena ARGS`` in ``cwd``): its status and output."""
    import contextlib

    from click.testing import CliRunner

    from arena_core.cli import main

    with contextlib.chdir(cwd):
        result = CliRunner().invoke(main, list(args))
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, result.stderr)


def test_cli_rows_filters_and_errors(tmp_path: Path) -> None:
    rows = json.loads(cli("leaderboard", "--example", "--format", "json", cwd=tmp_path).stdout)["rows"]
    for key in ("group", "n_runs", "n_tasks", "score", "ci_low", "ci_high", "rank", "rank_low", "rank_high",
                "tier", "provisional", "coverage", "means"):
        assert key in rows[0]
    one = json.loads(cli("leaderboard", "--example", "--task", "debugging-009", "--format", "json", cwd=tmp_path).stdout)["rows"]
    assert {r["n_tasks"] for r in one} == {1} and all(r["provisional"] and r["rank"] is None for r in one)
    tasks = json.loads((EXAMPLE / "tasks.json").read_text())
    category = tasks[0]["category"]
    in_category = sum(t["category"] == category for t in tasks)
    by_category = json.loads(cli("leaderboard", "--example", "--category", category, "--format", "json", cwd=tmp_path).stdout)["rows"]
    assert {r["n_tasks"] for r in by_category} == {in_category}
    aider = json.loads(cli("leaderboard", "--example", "aider", "--by", "meta.edit_format", "--where",
                           "meta.aider_version=0.75.2.dev", "--format", "json", cwd=tmp_path).stdout)["rows"]
    real = [json.loads(line) for line in (REAL_DATA / "submissions.jsonl").read_text().splitlines()]
    chosen = [r["meta"]["edit_format"] for r in real if r["meta"].get("aider_version") == "0.75.2.dev"]
    assert {r["group"]: r["n_runs"] for r in aider} == {f: chosen.count(f) for f in set(chosen)}
    bad = cli("leaderboard", "--example", "--where", "edit_format=whole", cwd=tmp_path)
    assert bad.returncode == 2 and "expected meta.KEY=VALUE" in bad.stderr and "Traceback" not in bad.stderr
    unknown = cli("leaderboard", "--example", "--method", "median", cwd=tmp_path)
    assert unknown.returncode == 2 and "no aggregator named 'median'" in unknown.stderr
    wrong_by = cli("leaderboard", "--example", "--by", "team", cwd=tmp_path)
    assert wrong_by.returncode == 2 and "by: expected 'tool', 'model', 'tool,model' or 'meta.KEY'" in wrong_by.stderr
    pairs = json.loads(cli("leaderboard", "--example", "--pairwise", "--format", "json", cwd=tmp_path).stdout)["rows"]
    assert len(pairs) == 10 and {"a", "b", "p_value", "p_adjusted", "min_detectable"} <= set(pairs[0])
    front = json.loads(cli("pareto", "--example", "aider", "--by", "model", "--format", "json", cwd=tmp_path).stdout)["rows"]
    assert any(p["on_front"] for p in front) and all(p["dominated_by"] == [] for p in front if p["on_front"])


def test_mcnemars_exact_test_on_which_tasks_each_group_solved() -> None:
    """Binary outcomes per task: the p-value is McNemar's exact test, written out here from the
    binomial distribution of the discordant tasks, and the difference is in solve-rate points."""
    from math import comb

    import numpy as np

    from arena_core import Arena

    rng = np.random.default_rng(5)
    solved = {"a": rng.random(30) < 0.7, "b": rng.random(30) < 0.4}
    runs = [{"id": f"{g}-{t}", "task_id": f"t{t}", "tool": g, "total_tokens": 10, "tool_calls": 1,
             "correctness": float(solved[g][t])} for g in solved for t in range(30)]
    tasks = {f"t{t}": {"id": f"t{t}", "success_criteria": [{"type": "tests_pass"}]} for t in range(30)}
    arena = Arena({"weights": {"default": {"correctness": 1.0}}}, autoload=False)
    [pair] = arena.pairwise(arena.evaluate_many(runs, tasks), test="mcnemar")
    first, second = (solved["a"], solved["b"]) if pair.a == "a" else (solved["b"], solved["a"])
    wins, losses = int((first & ~second).sum()), int((~first & second).sum())
    n, k = wins + losses, min(wins, losses)
    exact = min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n)
    assert pair.p_value == pytest.approx(exact, rel=1e-9) and wins + losses > 0
    assert pair.difference == pytest.approx((first.mean() - second.mean()) * 100)


def test_runs_whose_model_is_unknown_are_grouped_per_harness_run(tmp_path) -> None:
    """Two harness runs without a model (an orchestrator on two models, say) are two groups named
    by their run, not one "(unknown)" group; a submission without even a run id is its own."""
    import json
    import subprocess
    import sys

    runs = [{"id": f"{run}-{t}", "task_id": f"t{t}", "tool": "orchestrator", "total_tokens": 10, "tool_calls": 1,
             "correctness": 1.0 if run == "r1" else 0.25, "meta": {"run_id": run}}
            for run in ("r1", "r2") for t in range(4)]
    runs.append({"id": "loose", "task_id": "t0", "tool": "orchestrator", "total_tokens": 10, "tool_calls": 1})
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": f"t{t}", "success_criteria": [{"type": "tests_pass"}]}
                                                     for t in range(4)]))
    done = subprocess.run([sys.executable, "-m", "arena_core", "-p", "correctness-only", "leaderboard", "runs.jsonl",
                           "--tasks", "tasks.json", "--by", "model", "--format", "json"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = {r["group"]: r for r in json.loads(done.stdout)["rows"]}
    assert set(rows) == {"(unknown model: r1)", "(unknown model: r2)", "(unknown model: loose)"}
    assert rows["(unknown model: r1)"]["score"] == 100.0 and rows["(unknown model: r2)"]["score"] == 25.0
    assert rows["(unknown model: r1)"]["n_runs"] == 4


def test_a_tool_holding_several_models_is_named_where_it_is_one_group(tmp_path: Path) -> None:
    """Aider's edit formats each hold many models: a --by tool board pools them (said), and
    ``arena tasks`` reads them as attempts of one group (said); by model, nothing to say."""
    board = cli("leaderboard", "--example", "aider", cwd=tmp_path)
    assert board.returncode == 0 and "aider/whole (76 models)" in board.stderr and "each ranked as one group" in board.stderr
    tasks = cli("tasks", "--example", "aider", cwd=tmp_path)
    assert tasks.returncode == 0 and "read as attempts of one group" in tasks.stderr
    by_model = cli("leaderboard", "--example", "aider", "--by", "model", cwd=tmp_path)
    assert by_model.returncode == 0 and "several models" not in by_model.stderr
    synthetic = cli("leaderboard", "--example", cwd=tmp_path)  # one model a tool
    assert synthetic.returncode == 0 and "several models" not in synthetic.stderr


def test_groups_that_share_no_task_with_the_ranked_ones_are_listed_apart(tmp_path: Path) -> None:
    """Three tools ran tasks t0-t3, two others t4-t7 only: nothing compares the two sets, so the
    smaller is listed after the ranked groups, unranked, saying why (a tool joined to both
    sets through one shared task joins them)."""
    tasks = [{"id": f"t{t}", "success_criteria": []} for t in range(8)]
    ran = {"a": range(0, 4), "b": range(0, 4), "c": range(0, 4), "x": range(4, 8), "y": range(4, 8)}
    runs = [{"id": f"{g}{t}", "task_id": f"t{t}", "tool": g, "total_tokens": 100 + 7 * t + ord(g), "tool_calls": 3}
            for g, ts in ran.items() for t in ts]  # fmt: skip
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    rows = json.loads(cli("leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--format", "json", cwd=tmp_path).stdout)["rows"]
    assert [(r["group"] in "abc", r["apart"], r["rank"] is None) for r in rows] == [(True, False, False)] * 3 + [(False, True, True)] * 2
    text = cli("leaderboard", "runs.jsonl", "--tasks", "tasks.json", cwd=tmp_path).stdout
    assert "x \u2020" in text and "\u2020 apart: shares no task with the ranked groups" in text
    joined = [*runs, {"id": "bridge", "task_id": "t4", "tool": "a", "total_tokens": 150, "tool_calls": 3}]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in joined))
    rows = json.loads(cli("leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--format", "json", cwd=tmp_path).stdout)["rows"]
    assert not any(r["apart"] for r in rows) and all(r["rank"] is not None for r in rows)


def test_commands_reading_some_dimensions_do_not_ask_for_figures_only_others_need(tmp_path: Path) -> None:
    """Pass/fail-plus-cost runs (no tokens, no tool calls): the Pareto front of cost against
    correctness and the IRT board read nothing that needs them, so they answer; the overall
    score does need them, so the default board and --y overall still refuse, naming them."""
    tasks = [{"id": f"t{t}", "success_criteria": [{"type": "tests_pass"}]} for t in range(4)]
    runs = [{"id": f"{g}{t}", "task_id": f"t{t}", "tool": g, "estimated_cost": 0.1 * (t + 1), "execution_time": 10.0,
             "correctness": float((t + len(g)) % 2)} for g in ("a", "bb", "ccc") for t in range(4)]  # fmt: skip
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    given = ("runs.jsonl", "--tasks", "tasks.json")
    front = cli("pareto", *given, "--x", "cost", "--y", "correctness", "--format", "json", cwd=tmp_path)
    assert front.returncode == 0, front.stderr
    assert sorted(p["group"] for p in json.loads(front.stdout)["rows"]) == ["a", "bb", "ccc"]
    irt = cli("leaderboard", *given, "--method", "irt", "--format", "json", cwd=tmp_path)
    assert irt.returncode == 0 and len(json.loads(irt.stdout)["rows"]) == 3, irt.stderr
    for refused in (cli("leaderboard", *given, cwd=tmp_path), cli("pareto", *given, "--y", "overall", cwd=tmp_path)):
        assert refused.returncode == 2 and "total_tokens, tool_calls: expected a value" in refused.stderr


def test_bradley_terry_newton_fit_is_the_penalised_likelihoods_maximum() -> None:
    """The Newton fit of the Bradley-Terry strengths against SciPy's optimiser on the same
    penalised log-likelihood (written out here), and against the minorisation-maximisation
    iteration it replaced, on random sparse win matrices with a group that never won."""
    import numpy as np
    from scipy.optimize import minimize

    from arena_plugins.aggregators import BradleyTerry

    rng = np.random.default_rng(3)
    model = BradleyTerry()
    for groups in (3, 9, 30):
        wins = rng.poisson(2, (4, groups, groups)).astype(float) * (rng.random((4, groups, groups)) < 0.4)
        wins[:, np.arange(groups), np.arange(groups)] = 0
        wins[:, 0, :] = 0
        fitted = np.log(model.fit(wins))
        for r in range(len(wins)):
            games = wins[r] + wins[r].T

            def negative(theta: np.ndarray, r: int = r, games: np.ndarray = games) -> float:
                pair = np.logaddexp(theta[:, None], theta[None, :])
                likelihood = (wins[r] * (theta[:, None] - pair)).sum()
                prior = (model.prior / 2 * theta - model.prior * np.logaddexp(0, theta)).sum()
                return -(likelihood + prior)

            best = minimize(negative, np.zeros(groups), method="BFGS", options={"gtol": 1e-10}).x
            assert np.max(np.abs(fitted[r] - best)) < 1e-4, groups
            assert negative(fitted[r]) <= negative(best) + 1e-9  # at least as high a likelihood
        mm = np.log(BradleyTerry(tolerance=1e-13, max_iterations=200_000).fit_mm(wins))
        assert np.max(np.abs(fitted - mm)) < 1e-7


def test_pairwise_bootstraps_from_shared_draws_equal_drawing_per_pair() -> None:
    """The draws made once per number of shared tasks, applied to all the pairs of that number as
    one matrix product (numbers interleaved, so the cache is both hit and missed), give the
    interval each pair's own seeded draws give, gathered value by value."""
    import numpy as np

    from arena_core.stats import pairwise as module

    rng = np.random.default_rng(8)
    sizes = (30, 7, 30, 120, 7, 2, 120, 1)
    pairs = [rng.normal(1, 5, n) for n in sizes]
    found = module._bootstrap_all(pairs, 0.95)
    alpha = (1 - 0.95) / 2
    for differences, (low, high) in zip(pairs, found, strict=True):
        n = len(differences)
        if n < 2:
            assert np.isnan(low) and np.isnan(high)
            continue
        own = np.random.default_rng(module.SEED).integers(0, n, size=(module.RESAMPLES, n))
        expected = np.quantile(differences[own].mean(axis=1), [alpha, 1 - alpha])
        assert (low, high) == pytest.approx((float(expected[0]), float(expected[1])), abs=1e-12)