"""``arena predict`` and ``arena adaptive`` (issue 53) against known truth and real data.

Simulated boards are drawn from a 2PL model with known abilities, difficulties and slopes
(difficulties spread as on SWE-bench-like boards, where many tasks are solved by nearly every
agent or by nearly none). The checks: hidden cells' predictions beat each group's and each
task's mean (Brier) and are calibrated decile by decile; the expected full-set score's interval
covers the score the group gets on every task at its nominal rate; the adaptive loop predicts a
left-out agent's full-set score from 50 tasks at least 40% better than 50 random tasks, reaches
+-3 points with at least 40% fewer tasks than random sampling needs, and its interval covers.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from clirun import run_arena

from arena_core.stats.adaptive import AdaptiveTest
from arena_core.stats.prediction import board_fit, predict
from arena_core.stats.tasktable import Runs, TaskTable


def _world(groups: int, tasks: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    """(responses, true probabilities, the generator) of a 2PL board."""
    rng = np.random.default_rng(seed)
    theta, b = rng.normal(0, 1, groups), rng.normal(0, 1.5, tasks)
    a = np.exp(rng.normal(np.log(1.5), 0.4, tasks))
    p = 1 / (1 + np.exp(-a * (theta[:, None] - b[None, :])))
    return (rng.random((groups, tasks)) < p).astype(float), p, rng


def _table(y: np.ndarray, keep: np.ndarray, names: list[int] | None = None) -> TaskTable:
    g, t = np.nonzero(keep)
    names = names if names is not None else list(range(len(y)))
    score = y[g, t] * 100
    return TaskTable.of(
        Runs([f"r{i}" for i in range(len(g))], [f"g{names[i]:02d}" for i in g], [f"t{i:04d}" for i in t], score,
             {"correctness": score}, np.ones(len(g)))
    )  # fmt: skip


def _brier_against_means(y: np.ndarray, keep: np.ndarray, model: str) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(predictions, outcomes) of the hidden cells, and the Brier scores of each group's and each task's mean."""
    _, cells = predict(board_fit(_table(y, keep), model))
    rows = np.array([int(c.group[1:]) for c in cells])
    cols = np.array([int(c.task[1:]) for c in cells])
    predicted, outcome = np.array([c.probability for c in cells]), y[rows, cols]
    group_mean = np.array([y[g][keep[g]].mean() for g in range(len(y))])[rows]
    task_mean = np.array([y[keep[:, t], t].mean() if keep[:, t].any() else 0.5 for t in range(y.shape[1])])[cols]
    return predicted, outcome, float(np.mean((group_mean - outcome) ** 2)), float(np.mean((task_mean - outcome) ** 2))


def test_hidden_cells_are_predicted_better_than_means_and_calibrated() -> None:
    predicted, outcome = [], []
    for seed in range(4):
        y, _, rng = _world(25, 500, seed)
        keep = rng.random(y.shape) >= 0.2  # a fifth of the cells hidden
        p, o, by_group, by_task = _brier_against_means(y, keep, "2pl")
        brier = float(np.mean((p - o) ** 2))
        assert brier < by_group and brier < by_task, (seed, brier, by_group, by_task)
        predicted.append(p)
        outcome.append(o)
    p, o = np.concatenate(predicted), np.concatenate(outcome)
    deciles = np.clip(np.searchsorted(np.quantile(p, np.linspace(0, 1, 11)), p, side="right") - 1, 0, 9)
    gaps = [abs(p[deciles == k].mean() - o[deciles == k].mean()) for k in range(10)]
    assert max(gaps) < 0.05, gaps  # each decile within 5 points of what happened


def test_the_expected_full_set_score_covers_the_score_on_every_task() -> None:
    covered, errors = [], []
    for seed in range(10, 14):
        y, _, rng = _world(25, 400, seed)
        keep = rng.random(y.shape) >= 0.3
        groups, _ = predict(board_fit(_table(y, keep), "2pl"), cells="none")
        for g in groups:
            truth = 100 * y[int(g.group[1:])].mean()  # the score had the group run every task
            covered.append(g.low <= truth <= g.high)
            errors.append(abs(g.expected - truth))
            assert g.tasks_run == keep[int(g.group[1:])].sum() and g.tasks == 400
    assert 0.9 <= np.mean(covered) <= 1.0, np.mean(covered)
    assert np.mean(errors) < 3.0


def test_a_cell_that_ran_is_reported_with_what_it_scored() -> None:
    y, _, rng = _world(6, 40, 3)
    keep = rng.random(y.shape) >= 0.25
    groups, cells = predict(board_fit(_table(y, keep), "rasch"), cells="all")
    assert len(cells) == 6 * 40
    for c in cells:
        g, t = int(c.group[1:]), int(c.task[1:])
        assert (c.runs > 0) == keep[g, t] and (c.observed == y[g, t] if keep[g, t] else c.observed is None)
        assert 0 <= c.low <= c.probability <= c.high <= 1
    for g in groups:  # a task it ran counts at what it scored
        row = int(g.group[1:])
        assert g.observed == pytest.approx(100 * y[row][keep[row]].mean())


def _loop(test: AdaptiveTest, truth_row: np.ndarray, stop: int, responses: dict[str, float]) -> dict[str, float]:
    """Run the next task, by the truth, until ``stop`` tasks have run."""
    while len(responses) < stop:
        [task] = test.next(responses, 1)
        responses[task] = float(truth_row[int(task[1:])])
    return responses


def test_the_adaptive_loop_beats_random_tasks_by_40_percent_and_stops_sooner() -> None:
    """Leave each of 25 groups out of a 2PL board of 500 tasks and evaluate it adaptively."""
    y, _, rng = _world(25, 500, 0)
    adaptive_error, random_error, covered, needed, random_needed = [], [], [], [], []
    for out in range(25):
        others = [g for g in range(25) if g != out]
        test = AdaptiveTest(_table(y[others], np.ones((24, 500), bool), others), "2pl")
        truth = 100 * y[out].mean()
        responses = _loop(test, y[out], 50, {})
        found = test.estimate(responses)
        adaptive_error.append(abs(found.expected - truth))
        covered.append(found.low <= truth <= found.high)
        random_error.append(abs(100 * y[out, rng.choice(500, 50, replace=False)].mean() - truth))
        while not (found := test.estimate(responses, stop_width=3.0)).stop:
            _loop(test, y[out], len(responses) + 1, responses)
        assert (found.high - found.low) / 2 <= 3.0 and "interval" in found.reason
        needed.append(len(responses))
        share = y[out].mean()  # random sampling without replacement: the n whose 95% interval is +-3 points
        random_needed.append(next(n for n in range(1, 501) if 196 * np.sqrt(share * (1 - share) / n * (1 - n / 500)) <= 3))
    assert np.mean(adaptive_error) <= 0.6 * np.mean(random_error), (np.mean(adaptive_error), np.mean(random_error))
    assert np.mean(needed) <= 0.6 * np.mean(random_needed), (np.mean(needed), np.mean(random_needed))
    assert np.mean(covered) >= 0.84, np.mean(covered)  # 95% nominal, over 25 agents


def test_the_next_tasks_are_balanced_over_categories_and_not_run_twice() -> None:
    y, _, _ = _world(10, 60, 5)
    table = _table(y, np.ones(y.shape, bool))
    categories = {f"t{t:04d}": "a" if t < 45 else "b" for t in range(60)}  # three quarters in a
    test = AdaptiveTest(table, "rasch", categories)
    chosen = test.next({}, 8)
    assert len(set(chosen)) == 8 and sum(categories[t] == "a" for t in chosen) == 6  # 3:1, as the task set
    ran = {t: 1.0 for t in chosen}
    later = test.next(ran, 4)
    assert not set(later) & set(chosen)
    free = AdaptiveTest(table, "rasch").next({}, 8)  # no categories: information alone
    p = test.next({}, 60, balance=False)
    assert free == p[:8]
    with pytest.raises(ValueError, match="a task of the board"):
        test.estimate({"nope": 1.0})


def _files(folder: Path) -> tuple[list[dict], list[dict]]:
    y, _, _ = _world(8, 40, 7)
    tasks = [{"id": f"t{t:04d}", "category": "debugging" if t % 2 else "refactoring", "success_criteria": [{"type": "tests_pass"}]}
             for t in range(40)]  # fmt: skip
    runs = [{"id": f"g{g}-t{t}", "task_id": f"t{t:04d}", "tool": f"agent-{g}", "tests_passed": int(y[g, t]),
             "tests_total": 1} for g in range(8) for t in range(40) if (g + t) % 5]  # fmt: skip
    (folder / "tasks.json").write_text(json.dumps(tasks))
    (folder / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    return runs, tasks


def test_arena_predict_prints_the_api_s_predictions(tmp_path: Path) -> None:
    from arena_core import Arena
    from arena_core.config.files import BUILTIN_PROFILES
    from arena_core.io.readers import read_submissions, read_tasks

    runs, _ = _files(tmp_path)
    base = ["-p", "correctness-only", "predict", "runs.jsonl", "--tasks", "tasks.json"]
    printed = run_arena(*base, "--format", "json", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    board = json.loads(printed.stdout)
    assert len(board["rows"]) == 8 * 40 - len(runs) and board["provenance"]["n_runs"] == len(runs)
    arena = Arena(BUILTIN_PROFILES["correctness-only"], autoload=False)
    evaluations = arena.evaluate_many(read_submissions(tmp_path / "runs.jsonl"), read_tasks(tmp_path / "tasks.json"))
    groups, cells = arena.predict(evaluations)
    assert [g["expected"] for g in board["groups"]] == [g.expected for g in groups]
    assert [c["probability"] for c in board["rows"]] == [c.probability for c in cells]
    table = list(csv.DictReader(io.StringIO(run_arena(*base, "--format", "csv", cwd=tmp_path).stdout)))
    assert [float(r["probability"]) for r in table] == [c.probability for c in cells]
    shown = run_arena(*base, cwd=tmp_path).stdout
    assert "Expected" in shown and f"{len(cells):,} cells predicted" in shown
    (tmp_path / "board.json").write_text(printed.stdout)
    again = run_arena("-p", "correctness-only", "verify", "board.json", "runs.jsonl", "--tasks", "tasks.json", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout.startswith("identical"), again.stdout


def test_arena_adaptive_next_and_estimate(tmp_path: Path) -> None:
    _files(tmp_path)
    base = ["-p", "correctness-only", "adaptive"]
    board = ["runs.jsonl", "--tasks", "tasks.json"]
    first = run_arena(*base, "next", *board, "-n", "4", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    chosen = first.stdout.split()
    assert len(chosen) == 4 and len(set(chosen)) == 4
    mine = [{"id": f"new-{t}", "task_id": t, "tool": "new", "tests_passed": 1, "tests_total": 1} for t in chosen]
    (tmp_path / "mine.jsonl").write_text("".join(json.dumps(r) + "\n" for r in mine))
    then = json.loads(run_arena(*base, "next", *board, "--runs", "mine.jsonl", "-n", "3", "--format", "json",
                                cwd=tmp_path).stdout)  # fmt: skip
    assert not set(then["tasks"]) & set(chosen) and then["estimate"]["tasks_run"] == 4
    said = run_arena(*base, "estimate", *board, "--runs", "mine.jsonl", "--stop-width", "90", cwd=tmp_path)
    assert said.returncode == 0, said.stderr
    assert "tasks run: 4 of 40" in said.stdout and "stop: yes (interval" in said.stdout
    strict = json.loads(run_arena(*base, "estimate", *board, "--runs", "mine.jsonl", "--stop-se", "0.01", "--format",
                                  "json", cwd=tmp_path).stdout)  # fmt: skip
    assert strict["stop"] is False and strict["reason"] == "not yet: --stop-se 0.01"
    assert strict["rank_best"] <= strict["rank"] <= strict["rank_worst"] <= 9
    (tmp_path / "bad.jsonl").write_text(json.dumps({**mine[0], "task_id": "elsewhere"}) + "\n")
    bad = run_arena(*base, "estimate", *board, "--runs", "bad.jsonl", cwd=tmp_path)
    assert bad.returncode == 2 and "elsewhere" in bad.stderr and "Traceback" not in bad.stderr


def test_on_livecodebench_hidden_runs_are_predicted_better_than_means(livecodebench: Path) -> None:
    """LiveCodeBench's own per-problem results (7 models x 479 problems): a fifth of the runs
    hidden, ``arena predict`` on the rest beats each model's and each problem's mean on them."""
    runs = [json.loads(line) for line in (livecodebench / "runs.jsonl").read_text().splitlines()]
    rng = np.random.default_rng(11)
    hidden = rng.random(len(runs)) < 0.2
    (livecodebench / "kept.jsonl").write_text("".join(json.dumps(r) + "\n" for r, h in zip(runs, hidden) if not h))
    printed = run_arena("-p", "correctness-only", "predict", "kept.jsonl", "--tasks", "tasks.json", "--by", "model",
                        "--format", "csv", cwd=livecodebench)  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    predicted = {(r["group"], r["task"]): float(r["probability"]) for r in csv.DictReader(io.StringIO(printed.stdout))}
    kept = [r for r, h in zip(runs, hidden) if not h]
    share = {(r["model"], r["task_id"]): r["tests_passed"] / r["tests_total"] for r in runs}
    by_model = {m: np.mean([share[m, r["task_id"]] for r in kept if r["model"] == m]) for m in {r["model"] for r in runs}}
    by_task: dict[str, list[float]] = {}
    for r in kept:
        by_task.setdefault(r["task_id"], []).append(share[r["model"], r["task_id"]])
    cells = [(r["model"], r["task_id"]) for r, h in zip(runs, hidden) if h]
    assert len(cells) > 400 and all(c in predicted for c in cells)
    truth = np.array([share[c] for c in cells])
    brier = np.mean((np.array([predicted[c] for c in cells]) - truth) ** 2)
    model_mean = np.mean((np.array([by_model[m] for m, _ in cells]) - truth) ** 2)
    task_mean = np.mean((np.array([np.mean(by_task.get(t, [0.5])) for _, t in cells]) - truth) ** 2)
    assert brier < min(model_mean, task_mean), (brier, model_mean, task_mean)  # 0.139 against 0.218 and 0.151


def test_the_adaptive_page_shows_current_output(livecodebench: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/adaptive.md's commands, run on LiveCodeBench's results: six models are the board,
    GPT-4O-2024-05-13 the new agent, its runs those the page's loop chose (until +-5 points)."""
    import re
    import shlex

    from click.testing import CliRunner
    from test_docs import _matches

    from arena_core import Arena
    from arena_core.cli import main
    from arena_core.config.files import BUILTIN_PROFILES
    from arena_core.io.readers import read_tasks
    from arena_core.model.records import Submission
    from arena_core.model.serde import structure
    from arena_core.stats.adaptive import responses_of

    runs = [json.loads(line) for line in (livecodebench / "runs.jsonl").read_text().splitlines()]
    new = "GPT-4O-2024-05-13"
    (livecodebench / "board.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs if r["model"] != new))
    mine = {r["task_id"]: r for r in runs if r["model"] == new}
    arena = Arena(BUILTIN_PROFILES["correctness-only"], autoload=False)
    tasks = read_tasks(livecodebench / "tasks.json")
    board = [structure(r, Submission) for r in runs if r["model"] != new]
    test = arena.adaptive(arena.evaluate_many(board, tasks), by="model")
    done: list[dict] = []
    responses: dict[str, float] = {}
    while not test.estimate(responses, stop_width=5).stop:
        [task] = test.next(responses)
        done.append(mine[task])
        responses = responses_of(arena.evaluate_many([structure(r, Submission) for r in done], tasks))
    (livecodebench / "gpt-4o.jsonl").write_text("".join(json.dumps(r) + "\n" for r in done))
    page = (Path(__file__).parent.parent / "docs" / "adaptive.md").read_text()
    truth = 100 * np.mean([r["tests_passed"] / r["tests_total"] for r in mine.values()])
    assert f"Its score on all 479 problems is {truth:.2f}" in page
    blocks = re.findall(r"```console\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 4
    monkeypatch.chdir(livecodebench)
    for block in blocks:
        command, *shown = block.splitlines()
        done_ = CliRunner().invoke(main, shlex.split(command.removeprefix("$ arena ")))
        assert done_.exit_code == 0, done_.output
        assert _matches(shown, done_.stdout.splitlines()), done_.output
    assert f"tasks run: {len(done)} of 479" in page


def test_a_board_shows_each_group_s_expected_score_on_every_task(tmp_path: Path) -> None:
    """``arena leaderboard --expected``: the groups ran different tasks; each row carries the
    expected score ``arena predict`` gives it, and the table shows it."""
    _files(tmp_path)
    given = ["runs.jsonl", "--tasks", "tasks.json"]
    board = json.loads(run_arena("-p", "correctness-only", "leaderboard", *given, "--expected", "--format", "json",
                                 cwd=tmp_path).stdout)  # fmt: skip
    predicted = json.loads(run_arena("-p", "correctness-only", "predict", *given, "--format", "json", cwd=tmp_path).stdout)
    expected = {g["group"]: g for g in predicted["groups"]}
    assert len(board["rows"]) == 8 and all(row["expected"] == expected[row["group"]] for row in board["rows"])
    assert all(row["expected"]["tasks_run"] < 40 for row in board["rows"])  # every group left some task out
    shown = run_arena("-p", "correctness-only", "leaderboard", *given, "--expected", cwd=tmp_path).stdout
    first = board["rows"][0]["expected"]
    assert "Expected (95% CI)" in shown and f"{first['expected']:.2f} ({first['low']:.2f}-{first['high']:.2f})" in shown


def test_on_livecodebench_50_adaptive_tasks_predict_a_left_out_model_better_than_50_random(livecodebench: Path) -> None:
    """A real board, small: each of LiveCodeBench's seven models left out, the other six the
    board (2PL), 50 tasks chosen adaptively against 50 random ones (200 draws each)."""
    from arena_core import Arena
    from arena_core.config.files import BUILTIN_PROFILES
    from arena_core.io.readers import read_submissions, read_tasks

    arena = Arena(BUILTIN_PROFILES["correctness-only"], autoload=False)
    tasks = read_tasks(livecodebench / "tasks.json")
    evaluations = arena.evaluate_many(read_submissions(livecodebench / "runs.jsonl"), tasks)
    share = {(e.model, e.task_id): e.scores["correctness"] / 100 for e in evaluations}
    models = sorted({e.model for e in evaluations if e.model})
    rng = np.random.default_rng(0)
    adaptive_error, random_error = [], []
    for model in models:
        test = arena.adaptive([e for e in evaluations if e.model != model], by="model", model="2pl")
        responses: dict[str, float] = {}
        while len(responses) < 50:
            [task] = test.next(responses)
            responses[task] = share[model, task]
        truth = 100 * np.mean([share[model, t] for t in tasks])
        adaptive_error.append(abs(test.estimate(responses).expected - truth))
        drawn = [rng.choice(list(tasks), 50, replace=False) for _ in range(200)]
        random_error.append(np.mean([abs(100 * np.mean([share[model, t] for t in d]) - truth) for d in drawn]))
    assert np.mean(adaptive_error) < 0.8 * np.mean(random_error), (adaptive_error, random_error)  # 3.50 and 5.02


def test_equally_informative_tasks_are_taken_in_order_whatever_their_last_bits(livecodebench: Path) -> None:
    """Tasks of one response pattern have one difficulty, whose fitted values differ in the last
    bits (by a library's rounding, too): the first in task order is taken next, not the one the
    noise favours; a task more informative by more than noise still wins."""
    from arena_core import Arena
    from arena_core.config.files import BUILTIN_PROFILES
    from arena_core.io.readers import read_submissions, read_tasks

    arena = Arena(BUILTIN_PROFILES["correctness-only"], autoload=False)
    tasks = read_tasks(livecodebench / "tasks.json")
    test = arena.adaptive(arena.evaluate_many(read_submissions(livecodebench / "runs.jsonl"), tasks), by="model")
    [first] = test.next({}, balance=False)
    k = test.tasks.index(first)
    later = next(j for j in range(k + 1, len(test.tasks)) if test.difficulties[j] != test.difficulties[k])
    towards = np.sign(test.prior_mean - test.difficulties[k])  # information is largest at the ability
    assert towards != 0
    noisy = test.difficulties.copy()
    noisy[later] = noisy[k] + 1e-12 * towards  # a tie, its last bits favouring the later task
    test.difficulties = noisy
    assert test.next({}, balance=False) == [first]
    noisy[later] = noisy[k] + 1e-3 * towards  # really more informative
    assert test.next({}, balance=False) == [test.tasks[later]]
