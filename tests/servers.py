"""``arena serve`` started as a process of its own, for the tests that need a real socket: a
free port to give it, waiting until it answers, and a server over a SQLite file that a test
kills with SIGKILL and starts again."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    """A loopback port no one listens on (the kernel's pick)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_serving(port: int, tries: int = 300) -> None:
    """Return once ``/health`` answers 200 on ``port``; fail after ``tries`` tenths of a second."""
    import httpx

    for _ in range(tries):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"the server on port {port} did not start")


class KillableServer:
    """``arena serve --store sqlite:///a.db`` in ``root``, started (and killed with SIGKILL) as a
    process of its own, with ``options`` (``--rate 1000``...)."""

    def __init__(self, root: Path, *options: str) -> None:
        self.root, self.port, self.options = root, free_port(), options
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arena_core", "serve", "--store", "sqlite:///a.db", "--port", str(self.port),
             *self.options],
            cwd=self.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"},
        )  # fmt: skip
        wait_until_serving(self.port)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
