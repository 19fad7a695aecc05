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
