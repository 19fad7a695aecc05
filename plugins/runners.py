"""The default command runner: a local subprocess with a timeout, an output cap and a scrubbed
environment.

It is not a sandbox. The command runs as the host's user, can read what that user can read,
use the network, and write outside the workspace. What it does guarantee: no shell (the task's
argument list is executed as is), the workspace as working directory, an environment without
the host's variables, the whole process group killed at the timeout, and at most
``output_limit`` bytes of output kept (the rest is read and discarded, so a chatty command
neither blocks nor fills memory). Hosts that score untrusted submissions should register a
runner that executes in a container or sandbox (see ``docs/hooks/arena_register_command_runners.md``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from arena_core import hookimpl
from arena_core.workspace.confined import CommandResult

_CHUNK = 65_536


class LocalRunner:
    """Runs commands as local subprocesses (not a sandbox; see the module documentation)."""

    name = "local"

    def run(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, output_limit: int
    ) -> CommandResult:
        start = time.monotonic()
        try:
            process = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=os.name == "posix",
            )
        except OSError as exc:
            return CommandResult(
                None, "", time.monotonic() - start, error=f"cannot run {argv[0]!r}: {exc.strerror or exc}"
            )
        kept = bytearray()
        dropped = [0]

        def drain() -> None:
            assert process.stdout is not None
            while chunk := process.stdout.read1(_CHUNK):  # type: ignore[attr-defined]
                room = output_limit - len(kept)
                kept.extend(chunk[:room])
                dropped[0] += max(0, len(chunk) - max(room, 0))

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill(process)
            process.wait()
        reader.join(timeout=5)  # a grandchild holding the pipe open must not hold up checking
        output = bytes(kept).decode("utf-8", errors="replace")
        return CommandResult(
            None if timed_out else process.returncode,
            output,
            time.monotonic() - start,
            timed_out=timed_out,
            truncated=dropped[0] > 0,
        )


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
