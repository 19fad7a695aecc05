"""The first bytes of a file, by which a detector tells a harness's output (``peek``), and
heads shared among the detectors asked about the same file in turn (``shared_heads``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from attrs import define

from arena_core.io.decoding import InputError, regular_descriptor

__all__ = ["SHARED_HEAD", "peek", "shared_heads"]


def peek(path: Path, size: int = 4096) -> bytes:
    """The first ``size`` bytes of a regular file (empty when it is not one or cannot be read),
    for ``detect``. Within :func:`shared_heads`, the last file's head is kept for the next
    detector that asks for it."""
    shared = _SHARED_HEAD.get()
    if shared is None:
        return _head(path, size)
    key = os.fspath(path)
    if shared.path == key and (size <= shared.asked or len(shared.head) < shared.asked):  # or it was the whole file
        return shared.head[:size]
    shared.path, shared.asked = key, max(size, SHARED_HEAD)
    shared.head = _head(path, shared.asked)
    return shared.head[:size]


#: The bytes of a file's head that :func:`shared_heads` reads at once: the most a built-in
#: detector asks for, so that each file is opened once whichever asks first.
SHARED_HEAD = 1 << 16


@define
class _Kept:
    """The head :func:`peek` read last: the file's path, the bytes, and how many were asked for."""

    path: str | None = None
    head: bytes = b""
    asked: int = 0


_SHARED_HEAD: ContextVar[_Kept | None] = ContextVar("arena_shared_head", default=None)


@contextmanager
def shared_heads() -> Iterator[None]:
    """While it lasts, :func:`peek` keeps the head of the file it read last (one file's: the
    memory stays bounded), so that the detectors asked about one file in turn read it once."""
    token = _SHARED_HEAD.set(_Kept())
    try:
        yield
    finally:
        _SHARED_HEAD.reset(token)


def _head(path: Path, size: int) -> bytes:
    try:
        fd = regular_descriptor(path)
    except (InputError, ValueError):  # ValueError: a name with a NUL byte
        return b""
    try:  # read from the descriptor: a buffered file object cost more than the read
        head = b""
        while len(head) < size and (more := os.read(fd, size - len(head))):
            head += more
        return head
    except OSError:
        return b""
    finally:
        os.close(fd)
