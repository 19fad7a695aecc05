"""How many cores this process may run on, for work split over threads or workers."""

from __future__ import annotations

import os

__all__ = ["usable_cores"]


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the system keeps one (a
    container's cpuset or ``taskset`` narrows it; ``os.cpu_count`` counts the whole host)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
