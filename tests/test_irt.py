"""Item response theory: abilities and difficulties learned from the verdicts (the irt and
irt_2pl aggregators, arena tasks' difficulty, --select), checked against simulated truth and
against an independent fit of the same likelihood with scipy.optimize."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import optimize, stats

from arena_core import Arena
from arena_core.model.errors import ValidationError
from arena_core.stats import irt
from arena_core.stats.irttasks import fit_tasks, label_disagreements, select_tasks
from arena_core.stats.tasktable import Runs, TaskTable
from arena_plugins.aggregators import ItemResponse, TaskMean


def simulate(groups: int, tasks: int, seed: int, *, two_pl: bool = False, runs_on=None):
    """Verdicts drawn from a (2PL) model with known abilities N(0, 1), difficulties N(0, 1.5)
    and, for 2PL, discriminations lognormal(0, 0.3); ``runs_on(group) -> task indices``."""
    rng = np.random.default_rng(seed)
    theta, b = rng.normal(0, 1, groups), rng.normal(0, 1.5, tasks)
    a = np.exp(rng.normal(0, 0.3, tasks)) if two_pl else np.ones(tasks)
    p = 1 / (1 + np.exp(-a * (theta[:, None] - b[None, :])))
    solved = (rng.random((groups, tasks)) < p).astype(float)
    ran = np.zeros((groups, tasks), dtype=bool)
    for g in range(groups):
        ran[g, runs_on(g, rng) if runs_on else slice(None)] = True
    return theta, b, a, solved, ran


def runs_of(solved: np.ndarray, ran: np.ndarray) -> Runs:
    g, t = np.nonzero(ran)
    verdicts = solved[g, t] * 100
    return Runs(
        [f"r{i}" for i in range(len(g))],
        [f"g{x:03d}" for x in g],
        [f"t{x:03d}" for x in t],
        verdicts,  # the overall score is the verdict: the task mean is the pass rate
        {"correctness": verdicts},
        np.ones(len(g)),
    )


def test_a_simulated_2pl_arena_is_recovered() -> None:
    # 60 groups x 300 tasks, every group on every task.
    theta, b, a, solved, _ = simulate(60, 300, seed=7, two_pl=True)
    found = irt.fit(np.ones_like(solved), solved, model="2pl")
    assert stats.spearmanr(found.abilities[0], theta).statistic >= 0.95
    assert stats.spearmanr(found.difficulties[0], b).statistic >= 0.95
    assert stats.spearmanr(found.discriminations[0], a).statistic >= 0.5  # harder: 60 groups per slope
    rasch = irt.fit(np.ones_like(solved), solved)
    assert stats.spearmanr(rasch.abilities[0], theta).statistic >= 0.95
    assert stats.spearmanr(rasch.difficulties[0], b).statistic >= 0.95


def test_the_rasch_fit_is_the_maximum_of_the_penalised_likelihood_written_out_plainly() -> None:
    _, _, _, solved, ran = simulate(12, 40, seed=3)
    counts = np.where(ran, 2.0, 0.0)
    counts[0, :5] = 0  # an incomplete design
    share = solved * 0.75  # fractional responses
    sd_theta, sd_b = 2.0, 2.0

    def negative_log_posterior(x: np.ndarray) -> float:
        th, bb = x[:12], x[12:]
        z = th[:, None] - bb[None, :]
        ll = counts * (share * -np.logaddexp(0, -z) + (1 - share) * -np.logaddexp(0, z))
        return -(ll.sum() - (th**2).sum() / (2 * sd_theta**2) - (bb**2).sum() / (2 * sd_b**2))

    reference = optimize.minimize(negative_log_posterior, np.zeros(52), method="L-BFGS-B", options={"gtol": 1e-10, "ftol": 1e-14})
    found = irt.fit(counts, share)
    assert np.allclose(found.abilities[0], reference.x[:12], atol=1e-4)
    assert np.allclose(found.difficulties[0], reference.x[12:], atol=1e-4)
    # Bootstrap weights are the same likelihood with each task's cells counted as often as drawn.
    weights = np.random.default_rng(0).multinomial(40, np.ones(40) / 40, size=3).astype(float)
    resampled = irt.fit(counts, share, weights)
    one = irt.fit(counts * weights[1][None, :], share)
    assert np.allclose(resampled.abilities[1], one.abilities[0], atol=1e-6)


def test_a_task_everyone_or_nobody_solves_stays_finite() -> None:
    solved = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 0]], dtype=float)
    found = irt.fit(np.ones_like(solved), solved)
    assert np.isfinite(found.difficulties).all() and np.isfinite(found.abilities).all()
    assert found.difficulties[0, 0] < found.difficulties[0, 1] < found.difficulties[0, 2]


def test_on_a_complete_arena_irt_ranks_as_the_pass_rates_do() -> None:
    _, _, _, solved, ran = simulate(20, 150, seed=11)
    table = TaskTable.of(runs_of(solved, ran))
    ones = np.ones((1, len(table.tasks)))
    scores = ItemResponse("rasch").aggregate(table, ones)[0]
    pass_rates = TaskMean().aggregate(table, ones)[0]
    assert stats.kendalltau(scores, pass_rates).statistic == pytest.approx(1.0)  # the raw score is sufficient
    assert np.all((0 <= scores) & (scores <= 100))


def test_irt_beats_the_task_mean_when_groups_ran_tasks_of_unequal_difficulty() -> None:
    # 30 groups, 300 tasks; each group runs 60 of them, every other group 60 of the easier half
    # only. Averaged over 5 boards, as one board's rank agreement is noisy.
    taus: dict[str, list[float]] = {"irt": [], "task_mean": []}
    for seed in range(5):
        rng = np.random.default_rng(100 + seed)
        theta, b = rng.normal(0, 1, 30), np.sort(rng.normal(0, 1.5, 300))  # task k: the k-th easiest
        solved = (rng.random((30, 300)) < 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))).astype(float)
        ran = np.zeros((30, 300), dtype=bool)
        for g in range(30):
            ran[g, rng.choice(150 if g % 2 else 300, 60, replace=False)] = True
        table = TaskTable.of(runs_of(solved, ran))
        ones = np.ones((1, len(table.tasks)))
        truth = theta[[int(g[1:]) for g in table.groups]]
        for name, aggregator in (("irt", ItemResponse("rasch")), ("task_mean", TaskMean())):
            taus[name].append(stats.kendalltau(aggregator.aggregate(table, ones)[0], truth).statistic)
    assert np.mean(taus["irt"]) > np.mean(taus["task_mean"]) + 0.1, taus


def test_the_leaderboard_ranks_by_irt_with_intervals_and_rank_ranges() -> None:
    _, _, _, solved, ran = simulate(6, 40, seed=5)
    runs = [
        {"id": f"g{g}-t{t}", "task_id": f"t{t}", "tool": f"tool-{g}", "total_tokens": 1000, "tool_calls": 3,
         "correctness": float(solved[g, t])}
        for g in range(6) for t in range(40) if ran[g, t]
    ]  # fmt: skip
    tasks = {f"t{t}": {"id": f"t{t}", "success_criteria": [{"type": "tests_pass"}]} for t in range(40)}
    arena = Arena(autoload=False)
    evaluations = arena.evaluate_many(runs, tasks)
    board = arena.leaderboard(evaluations, method="irt")
    assert [r.group for r in board] == sorted((r.group for r in board), key=lambda g: -solved[int(g[-1])].mean())
    assert all(r.ci_low <= r.score <= r.ci_high and r.rank_low <= r.rank <= r.rank_high for r in board)
    two = arena.leaderboard(evaluations, method="irt_2pl")
    assert {r.group for r in two} == {r.group for r in board}
    without = Arena({"weights": {"default": {"efficiency": 0.5, "speed": 0.5}}}, autoload=False)
    with pytest.raises(ValidationError, match="irt fits the verdicts"):
        without.leaderboard(without.evaluate_many(runs, tasks), method="irt")


def test_fitted_difficulties_flag_labels_that_disagree_and_select_informative_tasks() -> None:
    theta, b, _, solved, ran = simulate(25, 60, seed=9)
    runs = runs_of(solved, ran)
    abilities, fits = fit_tasks(runs)
    assert stats.spearmanr([f.difficulty for f in fits], b).statistic >= 0.9
    assert stats.spearmanr([abilities[f"g{g:03d}"] for g in range(25)], theta).statistic >= 0.9
    hardest, easiest = max(fits, key=lambda f: f.difficulty).task, min(fits, key=lambda f: f.difficulty).task
    labels = {hardest: "beginner", easiest: "advanced", fits[1].task: "intermediate"}
    assert label_disagreements(fits, labels) == {hardest, easiest}
    chosen = select_tasks(runs, 20)
    information = {f.task: f.information for f in fits}
    assert len(chosen.tasks) == 20 and min(information[t] for t in chosen.tasks) >= sorted(information.values())[-20]
    assert chosen.kendall_tau > 0.7 and chosen.groups == 25
    with pytest.raises(ValidationError, match="select: expected a number of tasks from 1 to 60"):
        select_tasks(runs, 61)


def test_arena_tasks_shows_the_fit_and_the_selection(tmp_path) -> None:
    env = {**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}
    shown = subprocess.run([sys.executable, "-m", "arena_core", "tasks", "--example", "--irt", "2pl", "--select", "4"],
                           cwd=tmp_path, capture_output=True, text=True, env=env)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0].split()[-3:] == ["Difficulty", "Slope", "Flags"]
    assert "selected 4 most informative tasks:" in shown.stdout
    printed = subprocess.run([sys.executable, "-m", "arena_core", "tasks", "--example", "--select", "3", "--format", "json"],
                             cwd=tmp_path, capture_output=True, text=True, env=env)  # fmt: skip
    data = json.loads(printed.stdout)
    assert len(data["selection"]["tasks"]) == 3 and all(isinstance(r["difficulty"], float) for r in data["rows"])


# ---------------------------------------------------------------------------
# difficulty_source = "irt": the factor from the fit instead of the label
# ---------------------------------------------------------------------------


def _board(groups: int, tasks: int, seed: int, prefix: str = "") -> tuple[list[dict], dict[str, dict]]:
    _, _, _, solved, _ = simulate(groups, tasks, seed)
    runs = [
        {"id": f"{prefix}g{g}-t{t}", "task_id": f"t{t}", "tool": f"tool-{g}", "total_tokens": 1000 + 10 * g,
         "tool_calls": 3 + g % 4, "correctness": float(solved[g, t])}
        for g in range(groups) for t in range(tasks)
    ]  # fmt: skip
    # Every task labelled "advanced": the label would multiply them all by 1.2.
    table = {f"t{t}": {"id": f"t{t}", "difficulty": "advanced", "success_criteria": [{"type": "tests_pass"}]}
             for t in range(tasks)}  # fmt: skip
    return runs, table


def test_fitted_difficulty_factors_replace_the_labels_multipliers() -> None:
    runs, tasks = _board(8, 20, seed=21)
    arena = Arena({"difficulty_source": "irt"}, autoload=False)
    evaluations = list(arena.evaluate_many(runs, tasks))
    # The factor, computed here from the fit: 1 + 0.2 x the share of the tools expected to fail.
    counts = np.ones((8, 20))
    solved = np.array([[runs[g * 20 + t]["correctness"] for t in range(20)] for g in range(8)])
    order = sorted(range(20), key=lambda t: f"t{t}")  # the fit's tasks are sorted by id
    found = irt.fit(counts[:, order], solved[:, order])
    p = 1 / (1 + np.exp(-(found.abilities[0][:, None] - found.difficulties[0][None, :])))
    expected = {f"t{order[k]}": 1 + 0.2 * (1 - p[:, k].mean()) for k in range(20)}
    for e in evaluations:
        assert e.difficulty == "irt" and e.difficulty_factor == pytest.approx(expected[e.task_id], abs=1e-9)
        assert e.overall_score == round(min(100.0, e.unadjusted_overall_score * e.difficulty_factor), 2)
        assert e.provenance.algorithms["difficulty_fit"].startswith("rasch on 160 runs, 20 tasks, 8 tools (sha256:")
    factors = sorted({round(e.difficulty_factor, 6) for e in evaluations})
    assert factors[0] < 1.1 < factors[-1] <= 1.2  # the same label, different fitted difficulty
    for task in ("t0", "t7"):  # ranks within each task follow the adjusted scores
        mine = sorted((e for e in evaluations if e.task_id == task), key=lambda e: e.overall_ranking)
        assert [e.overall_score for e in mine] == sorted((e.overall_score for e in mine), reverse=True)
    labelled = {e.submission_id: e for e in Arena(autoload=False).evaluate_many(runs, tasks)}
    assert all(labelled[e.submission_id].unadjusted_overall_score == e.unadjusted_overall_score for e in evaluations)


def test_the_pipeline_refits_as_history_grows_and_cards_show_the_factor(tmp_path) -> None:
    from arena_core.report.card import recompute, render_card, score_card
    from arena_core.store import SQLiteStore
    from arena_core.store.history import stored_baseline

    first, tasks = _board(8, 20, seed=31, prefix="a-")
    second, _ = _board(8, 20, seed=32, prefix="b-")
    store = SQLiteStore(tmp_path / "arena.db")
    arena = Arena({"difficulty_source": "irt"}, autoload=False)
    one = arena.process(first, store=store, tasks=tasks)
    two = arena.process(second, store=store)
    assert one.evaluations[0].provenance.algorithms["difficulty_fit"].startswith("rasch on 160 runs")
    assert two.evaluations[0].provenance.algorithms["difficulty_fit"].startswith("rasch on 320 runs")
    with store.transaction(write=False) as tx:
        kept = {e.submission_id: e for e in tx.evaluations("t3")}
    # The first batch keeps the factor it was scored with; ranks are among all of the task's runs.
    assert kept["a-g0-t3"].difficulty_factor == one.evaluations[3].difficulty_factor
    for e in kept.values():  # competition ranks over the first batch's and the second's runs
        assert e.overall_ranking == 1 + sum(1 for o in kept.values() if o.overall_score > e.overall_score)
    stored, submission, task, baseline = stored_baseline(arena, store, "t3", "b-g2-t3")
    card = score_card(arena, submission, task, baseline, stored)
    assert card["difficulty"]["name"] == "irt" and recompute(card) == stored.overall_score
    assert "Difficulty irt (fitted to the runs' verdicts): min(100, x 1." in render_card(card)


def test_difficulty_source_is_checked() -> None:
    with pytest.raises(ValidationError, match="difficulty_source: expected one of label, irt"):
        Arena({"difficulty_source": "labels"}, autoload=False)


def test_boards_of_many_groups_fit_by_alternating_steps_to_the_same_maximum(monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, _, solved, _ = simulate(15, 50, seed=13)
    counts = np.ones_like(solved)
    newton = irt.fit(counts, solved)
    monkeypatch.setattr(irt, "NEWTON_GROUPS", 0)  # as a board of more than 200 groups is fitted
    alternating = irt.fit(counts, solved)
    assert np.allclose(alternating.abilities, newton.abilities, atol=1e-4)
    assert np.allclose(alternating.difficulties, newton.difficulties, atol=1e-4)
    # the step along the common shift of abilities and difficulties (which only the priors
    # resist) makes the alternating steps converge in tens of steps, not the hundreds they took
    assert alternating.iterations <= 30, alternating.iterations


@pytest.mark.parametrize("model", ["rasch", "2pl"])
@pytest.mark.parametrize("newton_groups", [irt.NEWTON_GROUPS, 0])
def test_resamples_started_at_the_whole_boards_fit_reach_each_resamples_own_maximum(
    model: str, newton_groups: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bootstrap's refits start at the whole board's fit; each reaches the maximum that the
    resample fitted alone, from zero (as before), reaches: the same abilities and difficulties,
    by Newton's method (Fisher scoring under 2PL) and by alternating steps (boards past
    ``NEWTON_GROUPS``, ``FISHER_GROUPS``), for Rasch and for 2PL (whose resamples skip the Rasch
    start)."""
    monkeypatch.setattr(irt, "NEWTON_GROUPS", newton_groups)
    monkeypatch.setattr(irt, "FISHER_GROUPS", newton_groups)
    _, _, _, solved, ran = simulate(12, 60, seed=21, two_pl=model == "2pl", runs_on=lambda g, rng: rng.random(60) < 0.8)
    counts = ran.astype(float)
    rng = np.random.default_rng(2)
    weights = np.vstack([np.bincount(rng.integers(0, 60, 60), minlength=60) for _ in range(6)]).astype(float)
    sizes: list[int] = []  # the resamples each alternating pass fits: the unconverged go on alone
    alternating = irt._alternating_chunk
    monkeypatch.setattr(irt, "_alternating_chunk", lambda n, *args: sizes.append(len(n)) or alternating(n, *args))
    together = irt.fit(counts, solved, weights, model)
    if not newton_groups:
        assert any(0 < size <= len(weights) // 2 for size in sizes), sizes
    for row in range(len(weights)):
        alone = irt.fit(counts, solved, weights[row : row + 1], model)  # one resample: started at zero
        assert np.allclose(together.abilities[row], alone.abilities[0], atol=2e-5), (row, model)
        drawn = weights[row] > 0
        assert np.allclose(together.difficulties[row][drawn], alone.difficulties[0][drawn], atol=2e-5)
        assert np.allclose(together.discriminations[row][drawn], alone.discriminations[0][drawn], atol=2e-4)
