"""``arena trend``: groups against their dates, the frontier and its slope (stats/trend.py),
against a brute-force frontier, SciPy's regression, a simulation with a known slope, and
LiveCodeBench's own file."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import LIVECODEBENCH, day

from arena_core.cli import main
from arena_core.stats.trend import frontier, slope, trend


def _brute(years: list[float], y: list[float], rule: str) -> list[bool]:
    """The definition, one group at a time."""
    on = []
    for i in range(len(y)):
        earlier = [y[j] for j in range(len(y)) if years[j] < years[i] and not math.isnan(y[j])]
        best = max(earlier, default=-math.inf)
        on.append(not math.isnan(y[i]) and (y[i] > best if rule == "strict" else y[i] >= best))
    return on


def test_the_frontier_is_its_definition_on_random_boards_with_ties_and_shared_dates() -> None:
    rng = random.Random(4)
    for _ in range(300):
        n = rng.randint(1, 12)
        years = [float(rng.randint(0, 5)) for _ in range(n)]  # shared dates
        y = [rng.choice([math.nan, *[float(rng.randint(0, 6)) for _ in range(5)]]) for _ in range(n)]  # ties
        for rule in ("strict", "ties"):
            assert frontier(np.array(years), np.array(y), rule).tolist() == _brute(years, y, rule), (years, y, rule)


def test_the_slope_is_scipys_least_squares_line() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    years, y = rng.uniform(2020, 2026, 30), rng.normal(50, 10, 30)
    assert slope(years, y) == pytest.approx(stats.linregress(years, y).slope, rel=1e-12)
    assert math.isnan(slope(np.array([2024.0, 2024.0]), np.array([1.0, 2.0])))


def test_the_interval_covers_a_known_rise_of_the_frontier() -> None:
    """Worlds of 24 models released over three years whose true score rises 10 points a year,
    each scored on 300 tasks with a task effect and noise: the frontier's slope is close to 10
    and its interval covers 10 in most worlds."""
    covered, found = 0, []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        released = np.sort(rng.uniform(0, 3 * 365.25, 24))
        task_effect = rng.normal(0, 15, 300)
        truth = 40 + 10 * released / 365.25
        scores = truth[:, None] + task_effect[None, :] + rng.normal(0, 8, (24, 300))
        dates = {f"m{k}": str(np.datetime64("2023-01-01") + int(d)) for k, d in enumerate(released)}
        result = trend(list(dates), scores, dates, resamples=400, seed=seed)
        covered += result.ci_low <= 10 <= result.ci_high
        found.append(result.slope)
    assert covered >= 16 and abs(np.mean(found) - 10) < 1.0


def test_arena_trend_on_livecodebench_is_the_frontier_of_its_own_file(livecodebench: Path) -> None:
    done = CliRunner().invoke(main, ["trend", str(livecodebench / "runs.jsonl"), "--tasks", str(livecodebench / "tasks.json"),
                                     "--by", "model", "--models", str(livecodebench / "models.csv"), "--y", "correctness",
                                     "--format", "json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    found = json.loads(done.stdout)
    data = json.loads(LIVECODEBENCH.read_text())
    means = {m["model_repr"]: np.mean([p["Pass@1"] for p in data["performances"] if p["model"] == m["model_repr"]])
             for m in data["models"]}  # fmt: skip
    released = {m["model_repr"]: m["release_date"] / 1000 / 86400 / 365.25 for m in data["models"]}
    names = sorted(means, key=lambda m: released[m])
    on = _brute([released[m] for m in names], [means[m] for m in names], "strict")
    assert [p["group"] for p in found["points"] if p["on_frontier"]] == [m for m, o in zip(names, on, strict=True) if o]
    assert {p["group"]: p["y"] for p in found["points"]} == pytest.approx(means, abs=1e-9)
    assert [p["x"] for p in found["points"]] == [day(next(m["release_date"] for m in data["models"] if m["model_repr"] == g))
                                                 for g in names]  # fmt: skip
    assert found["ci_low"] < found["slope"] < found["ci_high"]


def test_a_group_dates_itself_by_its_runs_and_undated_groups_are_named(tmp_path: Path) -> None:
    tasks = [{"id": f"t{k}", "success_criteria": [{"type": "no_errors"}]} for k in range(6)]
    runs = [{"id": f"{tool}-{k}", "task_id": f"t{k}", "tool": tool, "success": (k + i) % 3 > 0,
             **({"started_at": f"2025-0{i + 1}-0{k + 1}T10:00:00Z"} if tool != "c" else {})}
            for i, tool in enumerate(["a", "b", "c"]) for k in range(6)]  # fmt: skip
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    base = ["trend", str(tmp_path / "runs.jsonl"), "--tasks", str(tmp_path / "tasks.json"), "--y", "correctness"]
    done = CliRunner().invoke(main, [*base, "--x", "started_at", "--format", "json"])
    assert done.exit_code == 0, done.output
    found = json.loads(done.stdout)
    assert [(p["group"], p["x"]) for p in found["points"]] == [("a", "2025-01-01T10:00:00Z"), ("b", "2025-02-01T10:00:00Z")]
    assert found["undated"] == ["c"]
    none = CliRunner().invoke(main, [*base, "--x", "release_date"])
    assert none.exit_code == 2 and "--x release_date: no group has a date" in none.output
    wrong = CliRunner().invoke(main, [*base, "--x", "yesterday"])
    assert wrong.exit_code == 2 and "expected release_date, knowledge_cutoff, started_at or meta.KEY" in wrong.output
