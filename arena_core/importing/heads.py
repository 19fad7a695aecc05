"""The first bytes of a file, by which a detector tells a harness's output (``peek``), heads
shared among the detectors asked about the same file in turn (``shared_heads``), and a file read
whole only when its head says it is one to read (``head_or_whole``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from attrs import define

from arena_core.io.decoding import InputError, regular_descriptor

__all__ = ["SHARED_HEAD", "head_or_whole", "peek", "shared_heads"]


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


def head_or_whole(path: Path, size: int, whole: Callable[[bytes], bool]) -> tuple[bytes, bool]:
    """``(bytes, read whole)``: the first ``size`` bytes of a regular file (empty, as
    :func:`peek`'s, when it is not one or cannot be read), or, when ``whole(head)`` says so, the
    whole file, read on from the same descriptor. For a reader that tells a file by its head and
    reads in full the files it claims: one open, and a file it does not claim is read no further
    than its head, however large.

    :raises InputError: ``FILE: cannot read: ...`` when the rest of a claimed file cannot be read."""
    try:
        fd = regular_descriptor(path)
    except (InputError, ValueError):  # ValueError: a name with a NUL byte
        return b"", False
    try:
        try:
            head = _read_up_to(fd, size)
        except OSError:
            return b"", False
        if not whole(head):
            return head, False
        try:
            return head + _read_up_to(fd, None), True
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _head(path: Path, size: int) -> bytes:
    return head_or_whole(path, size, _never)[0]


def _never(head: bytes) -> bool:
    return False


def _read_up_to(fd: int, size: int | None) -> bytes:
    """The bytes of ``fd`` from where it stands, up to ``size`` (to its end when ``None``), read
    from the descriptor: a buffered file object cost more than the read."""
    chunks = []
    got = 0
    while size is None or got < size:
        more = os.read(fd, (1 << 20) if size is None else size - got)
        if not more:
            break
        chunks.append(more)
        got += len(more)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
