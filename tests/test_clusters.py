"""Clustered intervals (--cluster meta.KEY): when tasks come in families (SWE-bench's instances
in a dozen repositories), the families, not the tasks, are the sample. Checked by simulation
with known truth: the per-task Student-t interval misses the population score far more often
than 5 %, the bootstrap over families keeps close to its 95 %."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena_core import Arena
from arena_core.model.errors import ValidationError
from arena_core.stats.leaderboard import leaderboard
from arena_core.stats.tasktable import Runs, TaskTable

FORMATS = Path(__file__).parent / "data" / "formats"
FAMILIES, PER_FAMILY = 30, 12


def _runs(rng: np.random.Generator, family_sd: float) -> Runs:
    """One agent; each family shifts its tasks' scores together around a population mean of 50."""
    shift = rng.normal(0, family_sd, FAMILIES)
    scores = 50 + np.repeat(shift, PER_FAMILY) + rng.normal(0, 5, FAMILIES * PER_FAMILY)
    tasks = [f"repo{f}__t-{k}" for f in range(FAMILIES) for k in range(PER_FAMILY)]
    return Runs(tasks, ["agent"] * len(tasks), tasks, scores, {}, np.ones(len(tasks)),
                [t.split("__")[0] for t in tasks])


def test_the_bootstrap_over_families_covers_where_the_task_interval_does_not() -> None:
    arena = Arena(autoload=False)
    aggregator, interval = arena.components.aggregators["task_mean"], arena.components.interval_methods["student_t"]
    rng = np.random.default_rng(12)
    covered = {"tasks": 0, "families": 0}
    reps = 150
    for _ in range(reps):
        runs = _runs(rng, family_sd=10)
        unclustered = Runs(runs.ids, runs.groups, runs.tasks, runs.overall, {}, runs.coverage)
        for name, table in (("tasks", TaskTable.of(unclustered)), ("families", TaskTable.of(runs))):
            (row,) = leaderboard(table, aggregator, interval, min_tasks=3)
            covered[name] += row.ci_low <= 50 <= row.ci_high
    assert covered["tasks"] / reps < 0.6  # tasks of a family are not independent: 48 % here
    assert covered["families"] / reps >= 0.88  # the percentile bootstrap of 30 families: 92 % here


def test_a_task_must_belong_to_one_family_and_every_run_must_name_it() -> None:
    runs = _runs(np.random.default_rng(1), 1.0)
    clusters = list(runs.clusters)
    clusters[0] = "elsewhere"
    duplicate = Runs(runs.ids + ["again"], runs.groups + ["other"], runs.tasks + [runs.tasks[0]],
                     np.append(runs.overall, 1.0), {}, np.ones(len(runs.ids) + 1), clusters + ["repo0"])
    with pytest.raises(ValidationError, match="one value per task .*'repo0__t-0' has 'elsewhere' and 'repo0'"):
        TaskTable.of(duplicate)
    clusters[0] = None
    with pytest.raises(ValidationError, match="a value on every run .*'repo0__t-0'"):
        TaskTable.of(Runs(runs.ids, runs.groups, runs.tasks, runs.overall, {}, runs.coverage, clusters))


def test_the_swe_bench_sample_clusters_by_repository() -> None:
    """The importer keeps each instance's repository in meta.repo; the interval over its 12
    repositories is wider than the one over 500 instances, around the same score."""
    def board(*extra: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "arena_core", "-p", "correctness-only", "leaderboard", "--from",
                               "swebench", "swe-bench", "--by", "model", "--format", "json", *extra], cwd=FORMATS, capture_output=True,
                              text=True, env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})
        assert done.returncode == 0, done.stderr
        return {r["n_tasks"]: r for r in json.loads(done.stdout)["rows"]}

    plain, clustered = board(), board("--cluster", "meta.repo")
    assert plain[500]["score"] == clustered[500]["score"] == pytest.approx(74.2)
    assert clustered[500]["ci_high"] - clustered[500]["ci_low"] > 1.5 * (plain[500]["ci_high"] - plain[500]["ci_low"])
    refused = subprocess.run([sys.executable, "-m", "arena_core", "-p", "correctness-only", "leaderboard", "--from",
                              "swebench", "swe-bench", "--cluster", "repo"], cwd=FORMATS, capture_output=True, text=True)
    assert refused.returncode == 2 and "cluster: expected 'meta.KEY'" in refused.stderr


def test_a_family_named_by_the_task_clusters_runs_that_do_not_name_it(tmp_path: Path) -> None:
    """Tasks that say their repository in their own meta cluster runs whose meta lacks it: the
    board is the one the runs naming it give, in the CLI and through a store."""
    from click.testing import CliRunner

    from arena_core.cli import main

    rng = np.random.default_rng(4)
    tasks = [{"id": f"r{f}__t{k}", "meta": {"repo": f"r{f}"}, "success_criteria": []} for f in range(6) for k in range(4)]
    runs = [{"id": f"{g}-{t['id']}", "task_id": t["id"], "tool": g, "total_tokens": int(rng.integers(500, 5000)),
             "tool_calls": 3} for g in ("a", "b", "c") for t in tasks]  # fmt: skip
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "bare.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    named = [{**r, "meta": {"repo": r["task_id"].split("__")[0]}} for r in runs]
    (tmp_path / "named.jsonl").write_text("".join(json.dumps(r) + "\n" for r in named))

    def board(*args: str) -> list:
        result = CliRunner().invoke(main, ["leaderboard", *args, "--cluster", "meta.repo", "--format", "json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["rows"]

    given = board(str(tmp_path / "named.jsonl"), "--tasks", str(tmp_path / "tasks.json"))
    assert board(str(tmp_path / "bare.jsonl"), "--tasks", str(tmp_path / "tasks.json")) == given
    assert CliRunner().invoke(main, ["ingest", str(tmp_path / "bare.jsonl"), "--tasks", str(tmp_path / "tasks.json"),
                                     "--store", str(tmp_path / "a.db")]).exit_code == 0  # fmt: skip
    stored = board("--store", str(tmp_path / "a.db"))
    assert [(r["group"], r["ci_low"], r["ci_high"]) for r in stored] == [(r["group"], r["ci_low"], r["ci_high"]) for r in given]
    plain = CliRunner().invoke(main, ["leaderboard", str(tmp_path / "bare.jsonl"), "--tasks", str(tmp_path / "tasks.json"),
                                      "--format", "json"])  # fmt: skip
    assert [r["ci_low"] for r in json.loads(plain.stdout)["rows"]] != [r["ci_low"] for r in given]  # the families were used
