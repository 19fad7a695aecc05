"""``arena ARGS`` run in the test's own process, answered as ``subprocess.run`` answers.

Starting an interpreter and importing arena-core costs about a second of CPU a command on this
2-core machine, and the suite runs hundreds of commands: click's runner gives the same exit code,
standard output and standard error without it. Tests of what only a process shows (signals,
interpreter start-up, forked workers, entry points) keep ``subprocess``."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner


def run_arena(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``arena *args`` in directory ``cwd`` with the variables ``env`` set on top of this
    process's environment; an exception the command does not turn into an exit code is raised
    here, where a process would have printed a traceback."""
    from arena_core.cli import main

    before = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner(env=dict(env or {})).invoke(main, list(args), input=input, catch_exceptions=False)
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(["arena", *args], result.exit_code, result.stdout, result.stderr)
