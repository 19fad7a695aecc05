"""``arena contamination``: the before/after-cutoff gap, naive and adjusted by reference models
(stats/contamination.py), against a simulation with known truth, SciPy's bootstrap, and a
transcription of the definition over LiveCodeBench's own file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import LIVECODEBENCH

from arena_core.cli import main
from arena_core.stats.contamination import contamination
from arena_core.stats.tasktable import TaskTable


def _table(groups: list[str], tasks: list[str]) -> TaskTable:
    """A table naming the groups and tasks (the statistic reads its scores from the matrix given)."""
    empty = np.zeros(0)
    shape = (len(groups), len(tasks))
    return TaskTable(groups, tasks, np.ones(shape, dtype=np.int64), np.zeros(shape), empty.astype(np.int64),
                     empty.astype(np.int64), empty, {}, np.ones(shape))  # fmt: skip


def _world(seed: int, effect: float) -> tuple[TaskTable, np.ndarray, dict, dict, list[str]]:
    """240 problems over two years, each later one 10 points harder per year for everyone; three
    reference models dated before them all; model "m" (cutoff mid-way) gains ``effect`` points on
    the problems before its cutoff; noise of 12 points on each score."""
    rng = np.random.default_rng(seed)
    days = np.sort(rng.integers(0, 730, 240))
    tasks = [f"t{k}" for k in range(240)]
    created = {t: str(np.datetime64("2024-01-01") + int(d)) for t, d in zip(tasks, days, strict=True)}
    groups = ["m", "r1", "r2", "r3"]
    ability = {"m": 8.0, "r1": 0.0, "r2": -5.0, "r3": 4.0}
    drift = -10.0 * days / 365
    cutoff = "2025-01-01"
    before = np.array([created[t] <= cutoff for t in tasks])
    scores = np.array([60 + ability[g] + drift + (effect * before if g == "m" else 0) + rng.normal(0, 12, 240)
                       for g in groups])  # fmt: skip
    dates = {"m": cutoff, "r1": "2023-06-01", "r2": "2023-06-01", "r3": "2023-12-31"}
    return _table(groups, tasks), scores, created, dates, ["r1", "r2", "r3"]


def test_the_adjusted_gap_recovers_a_known_effect_where_the_naive_gap_does_not() -> None:
    """Over 40 simulated worlds the adjusted gap's interval covers the true effect about as often
    as it says (95%), and its mean is the effect; the naive gap also carries the drift."""
    covered, adjusted, naive = 0, [], []
    for seed in range(40):
        table, scores, created, dates, refs = _world(seed, effect=6.0)
        (gap,) = [g for g in contamination(table, scores, created, dates, refs, resamples=1000, seed=seed) if g.model == "m"]
        covered += gap.ci_low <= 6.0 <= gap.ci_high
        adjusted.append(gap.adjusted)
        naive.append(gap.naive)
    assert covered >= 34  # 95% nominal: 34 of 40 or more holds with probability > 0.97
    assert abs(np.mean(adjusted) - 6.0) < 1.0
    assert np.mean(naive) > 6.0 + 7.0  # about 10 points of drift a year, a year apart on average
    table, scores, created, dates, refs = _world(99, effect=0.0)
    (gap,) = [g for g in contamination(table, scores, created, dates, refs, seed=1) if g.model == "m"]
    assert gap.ci_low <= 0.0 <= gap.ci_high and gap.naive > 5.0  # no effect: only the drift, taken out


def test_the_interval_is_scipys_two_sample_percentile_bootstrap() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    table, scores, created, dates, refs = _world(3, effect=4.0)
    (gap,) = [g for g in contamination(table, scores, created, dates, refs, resamples=20000, seed=5) if g.model == "m"]
    reference = scores[1:].mean(axis=0)
    before = np.array([created[t] <= "2025-01-01" for t in table.tasks])
    difference = scores[0] - reference
    found = scipy_stats.bootstrap((difference[before], difference[~before]), lambda a, b, axis: a.mean(axis) - b.mean(axis),
                                  n_resamples=20000, method="percentile", random_state=np.random.default_rng(9))  # fmt: skip
    assert gap.adjusted == pytest.approx(difference[before].mean() - difference[~before].mean(), abs=1e-9)
    assert gap.ci_low == pytest.approx(found.confidence_interval.low, abs=0.25)
    assert gap.ci_high == pytest.approx(found.confidence_interval.high, abs=0.25)


def test_arena_contamination_on_livecodebench_is_the_definition_over_its_own_file(livecodebench: Path) -> None:
    done = CliRunner().invoke(main, ["contamination", str(livecodebench / "runs.jsonl"), "--tasks",
                                     str(livecodebench / "tasks.json"), "--models", str(livecodebench / "models.csv"),
                                     "--window", "after-release", "--format", "json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    data = json.loads(LIVECODEBENCH.read_text())
    released = {m["model_repr"]: m["release_date"] for m in data["models"]}
    first = min(p["date"] for p in data["performances"])
    references = sorted(m for m, r in released.items() if r + 86_400_000 <= first)
    assert report["references"] == references == ["Claude-3-Opus", "GPT-4-0613", "GPT-4-Turbo-1106"]
    score = {(p["model"], p["sample_id"]): p["Pass@1"] for p in data["performances"]}
    dated = {p["sample_id"]: p["date"] for p in data["performances"]}
    reference = {t: np.mean([score[r, t] for r in references]) for t in dated}
    gaps = {g["model"]: g for g in report["models"]}
    for model in ("DSCoder-33b-Ins", "GPT-4O-2024-05-13", "Dracarys-72B-Instruct"):
        early = [t for t in dated if dated[t] < released[model] + 86_400_000]
        late = [t for t in dated if dated[t] >= released[model] + 86_400_000]
        naive = np.mean([score[model, t] for t in early]) - np.mean([score[model, t] for t in late])
        adjusted = np.mean([score[model, t] - reference[t] for t in early]) - np.mean(
            [score[model, t] - reference[t] for t in late])
        found = gaps[model]
        assert (found["before_tasks"], found["after_tasks"]) == (len(early), len(late))
        assert found["naive"] == pytest.approx(naive, abs=1e-9) and found["adjusted"] == pytest.approx(adjusted, abs=1e-9)
        assert found["ci_low"] < found["adjusted"] < found["ci_high"]
    assert gaps["DSCoder-33b-Ins"]["ci_low"] > 0  # older contests favour it beyond the drift the references show
    assert gaps["GPT-4-0613"]["note"] == "no problem published before 2021-10-01"


def test_a_reference_that_saw_problems_and_undated_tasks_are_refused(livecodebench: Path) -> None:
    base = ["contamination", str(livecodebench / "runs.jsonl"), "--tasks", str(livecodebench / "tasks.json"),
            "--models", str(livecodebench / "models.csv"), "--window", "after-release"]  # fmt: skip
    wrong = CliRunner().invoke(main, [*base, "--reference", "DSCoder-33b-Ins"])
    assert wrong.exit_code == 2 and "--reference 'DSCoder-33b-Ins': its date 2023-08-30 does not precede every problem" \
        in wrong.output  # fmt: skip
    unknown = CliRunner().invoke(main, [*base, "--reference", "gpt-5"])
    assert unknown.exit_code == 2 and "--reference 'gpt-5': no dated model of that name ran" in unknown.output
    tasks = json.loads((livecodebench / "tasks.json").read_text())
    (livecodebench / "tasks.json").write_text(json.dumps([{k: v for k, v in t.items() if k != "created_at"}
                                                          for t in tasks]))  # fmt: skip
    undated = CliRunner().invoke(main, base)
    assert undated.exit_code == 2 and "no task has a created_at" in undated.output
