"""Check executors: the checks of submissions with workspaces run on threads (the default), in
processes of this machine or on a Dask cluster, with the same verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena_core import Arena
from arena_core.model.errors import ArenaError, UnknownComponentError
from arena_core.registry.manager import get_plugin_manager

CRITERIA = [
    {"type": "command_succeeds", "command": [sys.executable, "-c", "import pathlib, sys; sys.exit(0 if pathlib.Path('ok').exists() else 1)"]},
    {"type": "file_contains", "file_path": "app.py", "pattern": r"def \w+\("},
    {"type": "code_compiles"},
]


def _arena_of(tmp_path: Path) -> tuple[list[dict], dict]:
    runs = []
    for i in range(6):
        workspace = tmp_path / f"run-{i}"
        workspace.mkdir()
        (workspace / "app.py").write_text("def add(a, b):\n    return a + b\n" if i % 2 else "x = (\n")
        if i % 3:
            (workspace / "ok").write_text("")
        runs.append({"id": f"run-{i}", "task_id": "t", "total_tokens": 1000 + 100 * i, "tool_calls": 3,
                     "workspace": str(workspace)})
    return runs, {"t": {"id": "t", "success_criteria": CRITERIA}}


def test_dask_gives_the_verdicts_of_threads(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    runs, tasks = _arena_of(tmp_path)
    config = {"workspace_root": str(tmp_path), "check_concurrency": 2}
    threads = Arena(config, autoload=False).evaluate_many(runs, tasks, evaluated_at="2026-01-01T00:00:00Z")
    dask = Arena({**config, "check_executor": "dask"}, autoload=False).evaluate_many(
        runs, tasks, evaluated_at="2026-01-01T00:00:00Z")  # a local cluster of two worker processes
    assert [e.criteria for e in dask] == [e.criteria for e in threads]
    assert list(dask) == list(threads)
    assert {c.status for e in threads for c in e.criteria} == {"passed", "failed"}  # both kinds of verdict


def test_processes_give_the_verdicts_of_threads_and_check_in_other_processes(tmp_path: Path) -> None:
    import os

    runs, tasks = _arena_of(tmp_path)
    config = {"workspace_root": str(tmp_path), "check_concurrency": 2}
    threads = Arena(config, autoload=False).evaluate_many(runs, tasks, evaluated_at="2026-01-01T00:00:00Z")
    arena = Arena({**config, "check_executor": "processes"}, autoload=False)
    processes = arena.evaluate_many(runs, tasks, evaluated_at="2026-01-01T00:00:00Z")
    assert [e.criteria for e in processes] == [e.criteria for e in threads] and list(processes) == list(threads)
    with arena.components.check_executors["processes"].start(2) as pool:  # its jobs run in other processes
        assert os.getpid() not in {pool.submit(os.getpid).result() for _ in range(4)}


def test_executors_are_chosen_by_name_and_refused_when_unknown(tmp_path: Path) -> None:
    with pytest.raises(UnknownComponentError, match="check_executor: no check executor named 'daks'.*did you mean 'dask'"):
        Arena({"check_executor": "daks"}, autoload=False)
    pm = get_plugin_manager(autoload=False)
    hosted = Arena({"check_executor": "dask", "workspace_root": str(tmp_path)}, plugin_manager=pm)
    runs, tasks = _arena_of(tmp_path)
    with pytest.raises(ArenaError, match="rebuilds the Arena on its workers"):
        hosted.evaluate_many(runs, tasks)


def test_score_takes_the_executor_on_the_command_line(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    runs, tasks = _arena_of(tmp_path)
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (tmp_path / "tasks.json").write_text(json.dumps(list(tasks.values())))
    (tmp_path / "arena.toml").write_text("check_concurrency = 2\n")

    def score(*extra: str) -> list[dict]:
        done = subprocess.run([sys.executable, "-m", "arena_core", "score", "runs.jsonl", "--tasks", "tasks.json",
                               "-q", *extra], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return [{k: v for k, v in json.loads(line).items() if k != "evaluated_at"} for line in done.stdout.splitlines()]

    assert score("--executor", "dask") == score()
