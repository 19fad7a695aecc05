"""glibc's allocator told to keep freed arrays for the next partition.

Scoring a partition allocates and frees a few hundred arrays of its size (4 MB each at 500,000
runs). By default glibc's malloc hands such a block back to the kernel when it is freed, and the
next one is faulted in again a page at a time, zeroed by the kernel: a third of a streaming
command's system time. Told to keep freed blocks of up to 32 MiB, and up to 1 GiB of free space
at the top of its heap, it reuses them instead. Peak memory does not grow: freed memory is
reused, not added to.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["ENVIRONMENT", "keep_freed_arrays"]

_SETTINGS = {  # variable for a process started with them: (mallopt's parameter, value)
    "MALLOC_MMAP_THRESHOLD_": (-3, 32 << 20),  # M_MMAP_THRESHOLD: blocks below are kept when freed
    "MALLOC_TRIM_THRESHOLD_": (-1, 1 << 30),  # M_TRIM_THRESHOLD: free space the heap keeps
}
#: The settings as environment variables, read by glibc when a process starts (for workers).
ENVIRONMENT = {name: str(value) for name, (_, value) in _SETTINGS.items()}


def keep_freed_arrays(*, unless_set: bool = False) -> bool:
    """The settings applied to this process (glibc's ``mallopt``); ``False`` off Linux, or where
    the C library has no ``mallopt`` or refuses them (musl), which then allocates as it does.

    :param unless_set: leave alone a setting the environment gives (the caller's own: a worker
        forked from it keeps what its environment told glibc at its start).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    wanted = [(name, setting) for name, setting in _SETTINGS.items() if not (unless_set and name in os.environ)]
    applied = [mallopt(parameter, value) for _, (parameter, value) in wanted]  # each, whatever the others do
    return all(done == 1 for done in applied)
