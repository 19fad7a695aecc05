"""``arena serve`` started as a process of its own, for the tests that need a real socket: a
free port to give it, and waiting until it answers."""

from __future__ import annotations

import socket
import time


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
