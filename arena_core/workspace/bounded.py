"""Work on untrusted files that cannot be trusted to finish: done in a child process with a
time and memory bound, so one hostile file cannot stall or exhaust the scorer.

Byte-compiling a 10 MB file of nested brackets takes the CPython compiler tens of seconds and
gigabytes; in a child process with ``RLIMIT_AS`` and a timeout it costs at most the bound.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence

if sys.platform != "win32":
    import resource

__all__ = ["compile_sources"]

#: The child's program: compile each (name, text) read as JSON from stdin, stop at the first
#: error, print it as JSON. It imports nothing of the scorer's (``-I -S``: isolated, no site).
_COMPILER = """
import json, sys
for name, text in json.load(sys.stdin):
    try:
        compile(text, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        print(json.dumps([name, exc.lineno, exc.msg])); sys.exit(3)
    except (ValueError, RecursionError, MemoryError) as exc:
        print(json.dumps([name, None, type(exc).__name__ + ": " + str(exc)])); sys.exit(3)
"""


def compile_sources(sources: Sequence[tuple[str, str]], *, timeout: float, memory_limit: int) -> str | None:
    """Byte-compile Python ``sources`` (name, text) in a bounded child process: ``None`` when all
    compile, else the reason (``NAME:LINE: message``, or that the bound was reached)."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _COMPILER],
            input=json.dumps(list(sources)),
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=_limit(memory_limit) if sys.platform != "win32" else None,
        )
    except subprocess.TimeoutExpired:
        return f"compiling took longer than {timeout:g} s (stopped)"
    if done.returncode == 0:
        return None
    if done.returncode == 3 and done.stdout.strip():
        name, line, message = json.loads(done.stdout.strip().splitlines()[-1])
        return f"{name}:{line}: {message}" if line is not None else f"{name}: {message}"
    return f"compiling stopped at its memory limit of {memory_limit:,} bytes (exit status {done.returncode})"


def _limit(memory_limit: int) -> Callable[[], None]:
    """What the child runs before the interpreter starts: cap its address space."""

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    return apply
