"""The default command runner: a local subprocess with a timeout, an output cap and a scrubbed
environment.

It is not a sandbox. The command runs as the host's user, can read what that user can read,
use the network, and write outside the workspace. What it does guarantee: no shell (the task's
argument list is executed as is), the workspace as working directory, an environment without
the host's variables, and at most ``output_limit`` bytes of output kept (the rest is read and
discarded, so a chatty command neither blocks nor fills memory). When the command ends, at its
timeout or by itself, its process group is killed and so is every process that still carries
the run's mark in its environment (a daemon that left the group by ``setsid``), so files are
checked only once nothing the command started is left to change them. A daemon that clears
its environment escapes that; the ``sandbox`` runner's PID namespace does not let it. Hosts that
score untrusted submissions use ``command_runner = "sandbox"`` (docs/security.md).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from arena_core import hookimpl
from arena_core.workspace.confined import CommandResult
from arena_core.workspace.processes import run_collecting

#: The environment variable that marks every process of one run (see :func:`kill_marked`).
RUN_MARK = "ARENA_RUN_MARK"


class LocalRunner:
    """Runs commands as local subprocesses (not a sandbox; see the module documentation)."""

    name = "local"

    def run(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, output_limit: int
    ) -> CommandResult:
        mark = secrets.token_hex(16)

        def finish(process: subprocess.Popen[bytes]) -> None:
            _kill(process)  # after a normal exit too: what the command started must not outlive it
            process.wait()
            kill_marked(mark)

        return run_collecting(
            argv, cwd=cwd, env={**env, RUN_MARK: mark}, timeout=timeout, output_limit=output_limit, finish=finish
        )


def kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment carries ``RUN_MARK=mark`` (Linux: read from
    ``/proc``), until none is left; the number killed. Elsewhere, nothing (0)."""
    needle = f"{RUN_MARK}={mark}".encode()
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    killed = 0
    for _ in range(20):  # a fork bomb forks while we kill: a few rounds empty it
        found = []
        for entry in proc.iterdir():
            if entry.name.isdigit():
                try:
                    if needle in (entry / "environ").read_bytes().split(b"\0"):
                        found.append(int(entry.name))
                except OSError:
                    continue
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        time.sleep(0.01)
    return killed


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the command and everything it started (its process group on POSIX)."""
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass


@hookimpl
def arena_register_command_runners() -> list[object]:
    return [LocalRunner()]
