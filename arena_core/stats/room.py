"""Room in memory for a board's arrays, asked for before they are made.

A board's statistics hold dense ``(groups, tasks)`` tables and ``(resamples, groups)``
resampled scores. On Linux a large NumPy array is granted at once and its pages only when
written: a board too large for the machine does not raise ``MemoryError`` at the allocation
but has the process killed by the kernel partway through (``arena leaderboard --by model`` of
300,000 runs that name no model, each a group of its own, was killed at 24 GB). So the room a
board needs is estimated from its shape first and compared with the memory the machine (or
the process's control group) has available: too large is a :class:`BoardTooLarge` naming the
shape and what to do, before anything is allocated.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["BoardTooLarge", "available_memory", "ensure_room"]

#: What to do about a board too large, said with every :class:`BoardTooLarge`.
REMEDY = (
    "group the runs by a key with fewer values (a run without the key's value is a group of its own), "
    "or narrow them with --where, --task or --category"
)


class BoardTooLarge(MemoryError):
    """A board whose arrays would not fit in the memory available; its message names the shape,
    the room needed and the room available, and what to do."""


def available_memory() -> int | None:
    """Bytes the process may still allocate without the kernel reclaiming them by force: the
    system's available memory (``MemAvailable``), or less where a control group's limit is
    nearer. ``None`` where neither can be read (the board is then not checked)."""
    found: list[int] = []
    with contextlib.suppress(OSError, ValueError, IndexError, StopIteration):
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        found.append(int(next(line for line in meminfo if line.startswith("MemAvailable:")).split()[1]) * 1024)
    with contextlib.suppress(OSError, ValueError):
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            found.append(int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text()))
    if not found and hasattr(os, "sysconf"):
        with contextlib.suppress(OSError, ValueError):
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    return min(found) if found else None


def ensure_room(needed: float, what: str) -> None:
    """Go on when ``needed`` bytes fit in the memory available (or it cannot be read).

    :param what: the board's shape as the message says it, e.g. ``"a board of 300,000 groups x
        1,000 tasks"``.
    :raises BoardTooLarge: naming ``what``, the room needed and the room available.
    """
    available = available_memory()
    if available is not None and needed > available:
        raise BoardTooLarge(
            f"{what} needs about {_gib(needed)} for its arrays, more than the {_gib(available)} available: {REMEDY}"
        )


def _gib(size: float) -> str:
    return f"{size / 2**30:,.1f} GiB"
