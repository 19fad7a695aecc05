"""Scoring split by task over a Dask cluster's workers (check_executor = "dask"): the same
evaluations as one evaluate_many call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena_core import Arena
from arena_core.examples.synthetic import generate_arena
from arena_core.model.records import Task
from arena_core.model.serde import structure, to_dict
import arena_core.arena.core as arena_module
from arena_core.partitioned import evaluate_partitioned, task_partitions

STAMP = "2026-01-01T00:00:00+00:00"


def test_partitions_hold_whole_tasks_and_balance_their_rows() -> None:
    tasks = ["a"] * 5 + ["b"] * 3 + ["c"] * 3 + ["d"] + ["a"]
    parts = task_partitions(tasks, 2)
    assert sorted(i for p in parts for i in p) == list(range(len(tasks)))
    assert all(len({tasks[i] for i in p} & {tasks[i] for i in q}) == 0 for p in parts for q in parts if p is not q)
    assert sorted(len(p) for p in parts) == [6, 7]  # a (6 rows) alone; b, c and d (7) together
    assert task_partitions(["x", "x"], 8) == [[0, 1]]


@pytest.mark.parametrize("config", [{}, {"difficulty_source": "irt", "gate": "correctness"}])
def test_a_local_dask_cluster_scores_as_one_call_does(config: dict) -> None:
    pytest.importorskip("distributed")
    tasks, runs = generate_arena(tasks=6, submissions_per_task=10, seed=8)
    table = {t["id"]: structure(t, Task) for t in tasks}
    local = Arena(config, autoload=False)
    expected = [to_dict(e) for e in local.evaluate_many(runs, table, evaluated_at=STAMP)]
    on_dask = Arena({**config, "check_executor": "dask", "check_concurrency": 2}, autoload=False)
    subs = [on_dask.structure_submission(r) for r in runs]
    built_here = dict(arena_module._WORKER_ARENAS)
    got = evaluate_partitioned(on_dask, subs, table, evaluated_at=STAMP)
    assert [to_dict(e) for e in got] == expected  # 6 tasks in up to 8 partitions, on 2 worker processes
    assert arena_module._WORKER_ARENAS == built_here  # the partitions were scored on the workers, not here
    assert got[0].provenance == local.provenance if not config else got[0].provenance.algorithms["difficulty"] == "irt"


def test_arena_score_on_dask_prints_what_it_prints_here(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    env = {**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}

    def score(*extra: str) -> list[dict]:
        done = subprocess.run([sys.executable, "-m", "arena_core", "score", "--example", "--format", "json", *extra],
                              cwd=tmp_path, capture_output=True, text=True, env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        rows = json.loads(done.stdout)
        for row in rows:
            row.pop("evaluated_at", None)
        return rows

    assert score("--executor", "dask") == score()
