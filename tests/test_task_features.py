"""Task features in the item response fit and similar tasks (issue 53, items 2 and 3).

Simulations where a task's difficulty is a known linear function of its category and a number,
plus a residual: the fitted effects' 95% intervals cover the true effects; a task nobody ran
gets a difficulty from its features that correlates with its true one as closely as the
features allow; and its predicted solve probabilities beat the fit without features.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from clirun import run_arena

from arena_core.model.errors import ValidationError
from arena_core.model.records import Task
from arena_core.model.serde import structure
from arena_core.stats import irt
from arena_core.stats.prediction import BoardFit, predict
from arena_core.stats.similar import similar_tasks
from arena_core.stats.taskfeatures import feature_effects, feature_matrix, parse_features

EFFECTS = {"debugging": 0.0, "refactoring": 0.8, "data_analysis": -0.6}


def _world(seed: int, groups: int = 60, tasks: int = 300) -> tuple[list[Task], np.ndarray, np.ndarray, np.ndarray]:
    """(tasks, difficulties, the features' part of them, responses) of a Rasch board whose
    difficulties are EFFECTS[category] + 0.5 x size + N(0, 0.6)."""
    rng = np.random.default_rng(seed)
    kinds = ["debugging"] * (tasks // 2) + ["refactoring"] * (tasks // 4) + ["data_analysis"] * (tasks - tasks // 2 - tasks // 4)
    size = rng.normal(0, 1, tasks)
    explained = np.array([EFFECTS[k] for k in kinds]) + 0.5 * size
    b = explained + rng.normal(0, 0.6, tasks)
    theta = rng.normal(0, 1, groups)
    y = (rng.random((groups, tasks)) < 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))).astype(float)
    records = [structure({"id": f"t{t:04d}", "category": kinds[t], "meta": {"size": float(size[t])},
                          "success_criteria": [{"type": "tests_pass"}]}, Task) for t in range(tasks)]  # fmt: skip
    return records, b, explained, y


def test_the_effects_intervals_cover_the_true_effects() -> None:
    covered, estimates = [], {}
    for seed in range(20):
        tasks, _, _, y = _world(seed)
        size_sd = float(np.std([t.meta["size"] for t in tasks]))
        truth = {"category=refactoring": 0.8, "category=data_analysis": -0.6, "meta.size": 0.5 * size_sd}
        matrix = feature_matrix(tasks, ["category", "meta.size"])
        assert matrix.columns == ("category=data_analysis", "category=refactoring", "meta.size")  # debugging: reference
        counts = np.ones(y.shape)
        found = irt.fit(counts, y, features=matrix.values)
        assert found.iterations < 200
        for effect in feature_effects(found, matrix, counts):
            covered.append(effect.low <= truth[effect.feature] <= effect.high)
            estimates.setdefault(effect.feature, []).append(effect.effect - truth[effect.feature])
    assert np.mean(covered) >= 0.85, np.mean(covered)  # 95% nominal: 60 intervals
    assert all(abs(np.mean(errors)) < 0.1 for errors in estimates.values()), estimates


def test_a_task_nobody_ran_is_predicted_from_its_features() -> None:
    tasks, b, explained, y = _world(3)
    rng = np.random.default_rng(9)
    new = rng.random(len(tasks)) < 0.2
    counts = np.ones(y.shape)
    counts[:, new] = 0
    matrix = feature_matrix(tasks, ["category", "meta.size"])
    with_features = irt.fit(counts, y, features=matrix.values)
    without = irt.fit(counts, y)
    possible = np.corrcoef(explained[new], b[new])[0, 1]  # what the features can say of a difficulty
    found = np.corrcoef(with_features.difficulties[0][new], b[new])[0, 1]
    assert found >= 0.9 * possible, (found, possible)
    assert np.allclose(without.difficulties[0][new], without.difficulties[0][new][0])  # without: all alike

    def brier(fit: irt.IrtFit) -> float:
        return float(np.mean((irt.probabilities(fit)[0][:, new] - y[:, new]) ** 2))

    assert brier(with_features) < 0.95 * brier(without), (brier(with_features), brier(without))


def test_hidden_cells_are_predicted_better_with_features() -> None:
    tasks, _, _, y = _world(5, groups=20, tasks=300)
    keep = np.random.default_rng(2).random(y.shape) >= 0.5  # half the cells hidden: little data per task
    counts = keep.astype(float)
    matrix = feature_matrix(tasks, ["category", "meta.size"])

    def brier(features: np.ndarray | None) -> float:
        fit = irt.fit(counts, y, features=features)
        return float(np.mean((irt.probabilities(fit)[0][~keep] - y[~keep]) ** 2))

    assert brier(matrix.values) < brier(None)


def test_the_feature_matrix() -> None:
    records = [
        structure({"id": "a", "category": "debugging", "meta": {"repo": "x", "lines": 10}, "created_at": "2025-01-01"}, Task),
        structure({"id": "b", "category": "debugging", "meta": {"repo": "y", "lines": 30}, "created_at": "2025-01-11"}, Task),
        structure({"id": "c", "category": "refactoring", "meta": {"repo": "x"}}, Task),
        None,
    ]  # fmt: skip
    matrix = feature_matrix(records, ["category", "meta.repo", "meta.lines", "created_at"])
    assert matrix.columns == (
        "category=(none)", "category=refactoring", "meta.repo=(none)", "meta.repo=y",
        "meta.lines", "meta.lines missing", "created_at", "created_at missing",
    )  # fmt: skip
    lines = matrix.values[:, matrix.columns.index("meta.lines")]
    assert lines.tolist() == [-1.0, 1.0, 0.0, 0.0]  # standardised; missing at the mean, and flagged
    assert matrix.values[:, matrix.columns.index("created_at")].tolist() == [-1.0, 1.0, 0.0, 0.0]
    assert parse_features("category, meta.repo") == ("category", "meta.repo")
    with pytest.raises(ValidationError, match="category, difficulty, created_at or meta.KEY"):
        parse_features("colour")


def test_similar_tasks_are_those_the_same_groups_solve() -> None:
    """Two families of tasks: the first half of the groups solve family A and fail B, the other
    half the reverse (each with noise); a task's most similar tasks are of its family."""
    rng = np.random.default_rng(1)
    groups, tasks = 20, 40
    family = np.array([t % 2 for t in range(tasks)])
    good = (np.arange(groups)[:, None] < groups // 2) == (family[None, :] == 0)
    y = (rng.random((groups, tasks)) < np.where(good, 0.85, 0.15)).astype(float)
    fit = irt.fit(np.ones(y.shape), y)
    board = BoardFit([f"g{g}" for g in range(groups)], [f"t{t:02d}" for t in range(tasks)], np.ones(y.shape), y, fit,
                     "rasch", None)  # fmt: skip
    found = similar_tasks(board, "t00", 10)
    assert len(found) == 10 and all(int(s.task[1:]) % 2 == 0 for s in found)
    assert all(s.groups == groups and s.correlation is not None and s.correlation > 0.3 for s in found)
    assert [s.similarity for s in found] == sorted((s.similarity for s in found), reverse=True)
    with pytest.raises(ValidationError, match="expected a task of the board"):
        similar_tasks(board, "t0", 3)


def _files(folder: Path) -> None:
    tasks, _, _, y = _world(7, groups=12, tasks=60)
    records = [{"id": t.id, "category": t.category, "meta": dict(t.meta), "success_criteria": [{"type": "tests_pass"}]}
               for t in tasks]  # fmt: skip
    runs = [{"id": f"g{g}-{t.id}", "task_id": t.id, "tool": f"agent-{g:02d}", "tests_passed": int(y[g, k]),
             "tests_total": 1} for g in range(12) for k, t in enumerate(tasks) if k < 50]  # fmt: skip
    (folder / "tasks.json").write_text(json.dumps(records))
    (folder / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))


def test_the_commands_show_effects_similar_tasks_and_predict_tasks_nobody_ran(tmp_path: Path) -> None:
    _files(tmp_path)
    base = ["-p", "correctness-only"]
    given = ["runs.jsonl", "--tasks", "tasks.json"]
    shown = run_arena(*base, "tasks", *given, "--features", "category,meta.size", "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    effects = {e["feature"]: e for e in json.loads(shown.stdout)["effects"]}
    assert set(effects) == {"category=data_analysis", "category=refactoring", "meta.size"}
    assert all(e["low"] < e["effect"] < e["high"] for e in effects.values())
    table = run_arena(*base, "tasks", *given, "--features", "category", cwd=tmp_path).stdout
    assert "category=refactoring" in table and "95% CI" in table
    alike = run_arena(*base, "tasks", *given, "--similar", "t0001", "-n", "3", "--features", "category", "--format",
                      "json", cwd=tmp_path)  # fmt: skip
    rows = json.loads(alike.stdout)["rows"]
    assert len(rows) == 3 and all(r["task"] != "t0001" for r in rows)
    predicted = run_arena(*base, "predict", *given, "--features", "category,meta.size", "--format", "json", cwd=tmp_path)
    board = json.loads(predicted.stdout)
    unrun = [r for r in board["rows"] if r["task"] >= "t0050"]
    assert len(unrun) == 12 * 10 and all(r["runs"] == 0 and r["observed"] is None for r in unrun)
    assert all(g["tasks"] == 60 and g["tasks_run"] == 50 for g in board["groups"])
    assert len({round(r["probability"], 6) for r in unrun if r["group"] == "agent-00"}) > 1  # from their features
    bad = run_arena(*base, "tasks", *given, "--similar", "nope", cwd=tmp_path)
    assert bad.returncode == 2 and "--similar" in bad.stderr and "Traceback" not in bad.stderr
