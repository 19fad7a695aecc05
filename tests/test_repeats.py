"""pass@k and pass^k over repeated attempts, checked against enumeration, a simulation with known
truth, the biased estimator they replace, and the Terminal-Bench sample."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from arena_core.stats.repeats import outcome_consistency, pass_at_k, pass_hat_k

FORMATS = Path(__file__).parent / "data" / "formats"


@pytest.mark.parametrize("n", range(1, 8))
def test_the_estimators_are_the_shares_of_all_k_subsets(n: int) -> None:
    for c in range(n + 1):
        attempts = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            subsets = list(combinations(attempts, k))
            some = Fraction(sum(any(s) for s in subsets), len(subsets))
            every = Fraction(sum(all(s) for s in subsets), len(subsets))
            assert pass_at_k(n, c, k) == pytest.approx(float(some), abs=1e-12)
            assert pass_hat_k(n, c, k) == pytest.approx(float(every), abs=1e-12)


def test_they_are_unbiased_where_the_plug_in_power_is_not() -> None:
    """Tasks with known success probabilities, 5 attempts each, 4,000 replications: the mean of
    the estimators is the truth; ``(c/n)^k`` (what a naive pass^k computes) is far off."""
    rng = np.random.default_rng(11)
    p = rng.uniform(0.05, 0.95, size=40)
    n, k, reps = 5, 3, 4000
    successes = rng.binomial(n, p, size=(reps, len(p)))
    truth_at, truth_hat = np.mean(1 - (1 - p) ** k), np.mean(p**k)
    at = np.mean([[pass_at_k(n, int(c), k) for c in row] for row in successes])
    hat = np.mean([[pass_hat_k(n, int(c), k) for c in row] for row in successes])
    naive = np.mean((successes / n) ** k)
    standard_error = 0.002  # of a mean over 160,000 bounded values
    assert abs(at - truth_at) < 3 * standard_error and abs(hat - truth_hat) < 3 * standard_error
    assert abs(naive - truth_hat) > 10 * standard_error  # the biased estimator fails the same check


def _arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena_core", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})


def test_the_leaderboard_adds_pass_at_k_pass_hat_k_and_flips(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    attempts = {"steady": [5, 5, 0, 5], "flaky": [2, 3, 1, 4], "short": [1, 1, 0, 1]}  # passes of 5 (short: of 2)
    runs, expected = [], {}
    for tool, passes in attempts.items():
        n = 2 if tool == "short" else 5
        for t, c in enumerate(passes):
            verdicts = [True] * c + [False] * (n - c)
            rng.shuffle(verdicts)
            for a, ok in enumerate(verdicts):
                runs.append({"id": f"{tool}-{t}-{a}", "task_id": f"t{t}", "tool": tool, "total_tokens": 10,
                             "tool_calls": 1, "correctness": 1.0 if ok else 0.0})
        expected[tool] = {k: np.mean([pass_at_k(n, c, k) for c in passes]) for k in (1, 2, 5) if k <= n}
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    tasks = [{"id": f"t{t}", "success_criteria": [{"type": "tests_pass"}]} for t in range(4)]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    done = _arena("-p", "correctness-only", "leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--pass-k", "1,2,5",
                  "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = {r["group"]: r for r in json.loads(done.stdout)["rows"]}
    for tool, values in expected.items():
        got = {int(k): v["value"] for k, v in rows[tool]["pass_at_k"].items()}
        assert got == pytest.approx(values, abs=1e-12)
    assert rows["short"]["attempts"] == 2 and set(rows["short"]["pass_hat_k"]) == {"1", "2"}
    assert rows["steady"]["flip_rate"] == 0.0 and rows["flaky"]["flip_rate"] == 1.0
    consistency = {tool: row["outcome_consistency"] for tool, row in rows.items()}
    assert consistency == {"steady": 1.0, "flaky": 0.0, "short": 0.25}  # short: only t2 (0 of 2) agrees
    assert rows["steady"]["pass_hat_k"]["5"]["value"] == 0.75  # 3 of its 4 tasks passed every attempt
    table = _arena("-p", "correctness-only", "leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--pass-k", "1,5",
                   cwd=tmp_path).stdout
    assert "pass@5" in table.splitlines()[0] and table.splitlines()[0].split()[-2:] == ["Flips", "C_out"]
    assert "k is capped at the fewest attempts a group has on a task (short: 2)" in table


def test_pass_at_1_on_the_terminal_bench_sample_is_its_published_accuracy() -> None:
    done = _arena("-p", "gated", "leaderboard", "harbor-terminal-bench/tb.run.droid-gpt-5.results.json",
                  "--pass-k", "1,2", "--format", "json", cwd=FORMATS)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["rows"]
    published = json.loads((FORMATS / "harbor-terminal-bench" / "tb.run.droid-gpt-5.results.json").read_text())
    assert row["pass_at_k"]["1"]["value"] == pytest.approx(published["accuracy"])  # 0.4875: one attempt a task
    assert row["attempts"] == 1 and "2" not in row["pass_at_k"]


def test_outcome_consistency_is_hals_reducer_on_the_attempts() -> None:
    """Against HAL's reducer transcribed on the verdicts themselves (statistics.variance, the
    sample variance), for every split of up to 9 attempts; on pass/fail verdicts it is 1 for
    tasks whose attempts agree and 0 otherwise."""
    for n in range(2, 10):
        for c in range(n + 1):
            verdicts = [1] * c + [0] * (n - c)
            p = statistics.fmean(verdicts)
            hal = max(0.0, min(1.0, 1.0 - statistics.variance(verdicts) / (p * (1 - p) + 1e-8)))
            assert outcome_consistency(n, c) == pytest.approx(hal, abs=1e-12)
            assert outcome_consistency(n, c) == (1.0 if c in (0, n) else 0.0)
