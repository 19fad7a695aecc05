"""Check executors: the checks of submissions with workspaces run on threads (the default), in
processes of this machine or on a Dask cluster, with the same verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pagefaults import FAULTS

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


_PROBE = FAULTS + """
from arena_core.arena.core import _WORKER_ARENAS

def holds(key):
    return key in _WORKER_ARENAS
"""
_STARTS = """
import os, sys, threading, probe
from arena_core import Arena
from arena_core.arena import worker_arena
from arena_plugins.executors import Processes
arena = Arena(autoload=False)
worker_arena(*arena.recipe, built=arena)
stop = threading.Event()
if sys.argv[1] == "thread":
    threading.Thread(target=stop.wait).start()
workers = Processes().start(1)
found = workers.submit(probe.holds, repr(tuple(arena.recipe))).result()
print(found, workers.submit(probe.faults).result(), os.environ.get("MALLOC_TRIM_THRESHOLD_", "-"))
workers.shutdown()
stop.set()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked, and glibc told, on Linux only")
def test_process_workers_are_forked_with_the_shared_arena_unless_another_thread_runs(tmp_path: Path) -> None:
    """A process without another thread forks its workers: they find the Arena it shared built
    (a fresh interpreter would have none); with a thread running, they start fresh, since a fork
    would copy whatever lock that thread holds. Either way a worker keeps freed arrays for the
    next partition (a few page faults where glibc's defaults take about 50,000), and the caller's
    environment is left as it was."""
    (tmp_path / "probe.py").write_text(_PROBE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(PYTHONPATH=str(tmp_path), ARENA_DISABLE_PLUGIN_AUTOLOAD="1")
    for mode, forked in (("alone", "True"), ("thread", "False")):
        done = subprocess.run([sys.executable, "-c", _STARTS, mode], capture_output=True, text=True, cwd=tmp_path, env=env)
        assert done.returncode == 0, (mode, done.stderr)
        found, faults, left = done.stdout.split()
        assert found == forked and int(faults) < 2_500 and left == "-", (mode, done.stdout)
    # Without the settings, the same cycles fault tens of thousands of pages: the probe can fail.
    plain = subprocess.run([sys.executable, "-c", "import probe; print(probe.faults())"], capture_output=True,
                           text=True, cwd=tmp_path, env=env, check=True)  # fmt: skip
    assert int(plain.stdout) > 20_000
