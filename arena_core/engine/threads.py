"""Independent NumPy work on several cores, for large inputs.

NumPy releases the GIL while it sorts and while it gathers arrays, so work that is independent
per column (each figure sorted within its groups, for the baselines) runs side by side on a
machine's cores. Below :data:`THREADED_FROM` rows, starting threads costs more than it saves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["THREADED_FROM", "each_large"]

T = TypeVar("T")
R = TypeVar("R")

#: Rows from which :func:`each_large` uses threads.
THREADED_FROM = 200_000


def each_large(func: Callable[[T], R], items: Sequence[T], rows: int) -> list[R]:
    """``[func(item) for item in items]``, in order, on up to one thread per core when the work
    covers ``rows`` >= :data:`THREADED_FROM` rows; ``func`` should spend its time in NumPy.
    The first exception raised is re-raised."""
    workers = min(len(items), _cores())
    if rows < THREADED_FROM or workers < 2:
        return [func(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="arena-numpy") as pool:
        return list(pool.map(func, items))


def _cores() -> int:
    """Cores this process may run on (a container's share, where the OS says)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1
