"""Section 8: what the ``sandbox`` runner costs per command, against ``local`` in the same run.

Both run the same command (``python -c pass``) in the same small workspace, one at a time; the
sandbox's figure includes its fresh copy of the workspace and bubblewrap's set-up. Skipped, saying
why, where bubblewrap cannot run.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena_core import Arena
from arena_core.model.errors import ArenaError


def overhead(commands: int) -> None:
    print(f"8. the sandbox runner: {commands} commands (python -c pass) in a 20-file workspace, against local")
    try:
        sandbox = Arena({"command_runner": "sandbox"}, autoload=False).components.command_runners["sandbox"]
    except ArenaError as exc:
        print(f"   skipped: {exc}")
        return
    local = Arena(autoload=False).components.command_runners["local"]
    with tempfile.TemporaryDirectory() as folder:
        workspace, home = Path(folder, "ws"), Path(folder, "home")
        workspace.mkdir()
        home.mkdir()
        for i in range(20):
            (workspace / f"module_{i}.py").write_text(f"VALUE = {i}\n" * 50)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
        medians = {}
        for name, runner in (("local", local), ("sandbox", sandbox)):
            timings = []
            for _ in range(commands):
                start = time.perf_counter()
                result = runner.run(
                    [sys.executable, "-c", "pass"], cwd=workspace, env=env, timeout=30, output_limit=1000
                )
                timings.append(time.perf_counter() - start)
                assert result.succeeded, result
            medians[name] = statistics.median(timings) * 1000
    print(
        f"   local {medians['local']:.1f} ms, sandbox {medians['sandbox']:.1f} ms per command (medians): "
        f"{medians['sandbox'] - medians['local']:+.1f} ms, {medians['sandbox'] / medians['local']:.2f}x local"
    )


def executors(workspaces: int) -> None:
    """Section 9: checks per second on the same workspaces, on threads and on a local Dask cluster."""
    print(f"9. check executors: {workspaces} workspaces (a command and a file check each), threads against dask")
    try:
        import distributed  # noqa: F401 (only to know whether the extra is installed)
    except ImportError:
        print("   skipped: dask is not installed (pip install 'arena-core[distributed]')")
        return
    with tempfile.TemporaryDirectory() as folder:
        runs = []
        for i in range(workspaces):
            workspace = Path(folder, f"run-{i}")
            workspace.mkdir()
            (workspace / "app.py").write_text("def add(a, b):\n    return a + b\n")
            runs.append(
                {"id": f"r{i}", "task_id": "t", "total_tokens": 100 + i, "tool_calls": 2, "workspace": str(workspace)}
            )
        task = {
            "id": "t",
            "success_criteria": [
                {"type": "command_succeeds", "command": [sys.executable, "-c", "pass"]},
                {"type": "file_contains", "file_path": "app.py", "pattern": "def add"},
            ],
        }
        rates = {}
        for name in ("threads", "dask"):
            arena = Arena({"check_executor": name, "workspace_root": folder, "check_concurrency": 2}, autoload=False)
            start = time.perf_counter()
            scored = arena.evaluate_many(runs, {"t": task})
            rates[name] = workspaces / (time.perf_counter() - start)
            assert all(e.criteria[0].status == "passed" for e in scored)
    print(
        f"   threads {rates['threads']:.1f} workspaces/s, dask (a local cluster of 2 workers, started in the run) "
        f"{rates['dask']:.1f} workspaces/s: {rates['dask'] / rates['threads']:.2f}x threads"
    )
