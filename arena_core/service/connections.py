"""Connections the server accepts: how many, and how long one may sit idle.

Uvicorn times out a kept-alive connection between requests, but not one that never finishes its
request's head: a thousand sockets opened and left silent (or fed a byte now and then) would hold
a thousand descriptors for good, and past the process's limit the server accepts no one. Here a
connection must deliver a request's whole head within ``header_timeout`` seconds of opening (and
of each response, as keep-alive), or it is closed; the open-file limit is raised to what the
system allows; and past ``limit_concurrency`` connections a new one is answered 503 at once
rather than left to fail for want of a descriptor.
"""

from __future__ import annotations

import asyncio
import resource
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEADER_TIMEOUT", "HeaderDeadline", "connection_limits"]

#: Seconds a connection has to deliver a request's whole head.
HEADER_TIMEOUT = 10.0


class HeaderDeadline(H11Protocol):
    """Uvicorn's h11 protocol, closing a connection whose request head is not complete in time."""

    header_timeout = HEADER_TIMEOUT

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle:  # a request's head was parsed: it has its answer's time now
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline: asyncio.TimerHandle | None = self.loop.call_later(self.header_timeout, self._expire)

    def _disarm(self) -> None:
        deadline = getattr(self, "_deadline", None)
        if deadline is not None:
            deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.cycle is None or self.cycle.response_complete:
            self.transport.close()


def connection_limits(header_timeout: float) -> dict[str, Any]:
    """The open-file limit raised to the hard limit (at most 1,048,576), and uvicorn's settings
    that keep connections within it: ``uvicorn.run(app, **connection_limits(...))``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
    wanted = min(wanted, 1 << 20)
    if wanted > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    protocol = type("HeaderDeadlineProtocol", (HeaderDeadline,), {"header_timeout": header_timeout})
    return {
        "http": protocol,
        "timeout_keep_alive": max(1, int(header_timeout)),
        "limit_concurrency": max(64, soft - 128),  # descriptors kept for the store, logs and checks
    }
