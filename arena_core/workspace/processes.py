"""Running one command and collecting what it prints, for command runners.

Output is drained by a thread as it comes, at most ``output_limit`` bytes kept and the rest
read and discarded, so a chatty command neither blocks on a full pipe nor fills memory. When
the command has exited, or was stopped at its timeout, ``finish`` is called with the process:
the runner's chance to make sure nothing the command started is still running.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from arena_core.workspace.confined import CommandResult

__all__ = ["run_collecting"]

_CHUNK = 65_536


def run_collecting(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    output_limit: int,
    finish: Callable[[subprocess.Popen[bytes]], None],
    preexec_fn: Callable[[], None] | None = None,
    name: str | None = None,
) -> CommandResult:
    """Run ``argv`` (in a session of its own on POSIX), wait at most ``timeout`` seconds, call
    ``finish`` (also on a timeout), and return the result.

    :param name: the program to name when it cannot start (default ``argv[0]``).
    """
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
            preexec_fn=preexec_fn,
        )
    except OSError as exc:
        program = name or argv[0]
        return CommandResult(None, "", time.monotonic() - start, error=f"cannot run {program!r}: {exc.strerror or exc}")
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
    finish(process)
    process.wait()
    reader.join(timeout=5)  # a process holding the pipe open must not hold up checking
    return CommandResult(
        None if timed_out else process.returncode,
        bytes(kept).decode("utf-8", errors="replace"),
        time.monotonic() - start,
        timed_out=timed_out,
        truncated=dropped[0] > 0,
    )
