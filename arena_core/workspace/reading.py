"""Reading a workspace's files without following anything the submission planted.

A path that is checked and then opened can be swapped in between (a directory replaced by a
symlink to the host's files, by a process the submission left running), and a resolved path
shown in a reason tells the submission where the host keeps things. So a file is opened one
component at a time from the workspace's own directory (``openat``), every component with
``O_NOFOLLOW``: a symlink anywhere on the way is refused, not followed, and what is read is
the file that was opened. The file must be a regular file with a single link (a hard link
could be a host file's other name) on the workspace's own device. Reasons name the relative
path only.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from functools import lru_cache
from pathlib import Path

from arena_core.model.errors import ArenaError

__all__ = [
    "SKIPPED_DIRECTORIES",
    "ConfinedFileError",
    "OverLimitError",
    "confined_files",
    "is_confined_file",
    "read_confined",
]

#: Directories never searched for files to check (tool caches and dependencies, not the work).
SKIPPED_DIRECTORIES = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".tox"})

_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class ConfinedFileError(ArenaError):
    """A workspace file that checking refuses to read; the message names its relative path."""


class OverLimitError(ConfinedFileError):
    """A file larger than the limit it was to be read within."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


def read_confined(root: Path, relative: str, limit: int, *, head: bool = False) -> bytes:
    """The bytes of ``relative`` (components separated by ``/``) inside ``root``; with ``head``,
    at most its first ``limit`` bytes, however large it is (the rest is never read).

    :raises ConfinedFileError: a component is a symlink or missing, the file is not a regular
        file, has more than one link, lies on another device, or is larger than ``limit``
        (unless ``head``).
    """
    fd = _open(root, relative)
    try:
        size = os.fstat(fd).st_size
        if size > limit and not head:
            raise OverLimitError(
                f"file {relative!r} is {size:,} bytes, over the {limit:,}-byte limit for checking", size
            )
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(limit + 1)[:limit]
    finally:
        os.close(fd)


def is_confined_file(root: Path, relative: str) -> bool:
    """Whether ``relative`` is a file :func:`read_confined` would read (``False`` when it does
    not exist; :class:`ConfinedFileError` when it exists but is refused)."""
    try:
        os.close(_open(root, relative))
    except FileNotFoundError:
        return False
    return True


def _open(root: Path, relative: str) -> int:
    parts = [p for p in re.split(r"[\\/]", relative) if p not in ("", ".")]
    if not parts:
        raise ConfinedFileError(f"path {relative!r} names no file")
    directory = os.open(root, _DIRECTORY)
    try:
        device = os.fstat(directory).st_dev
        for part in parts[:-1]:
            inner = _step(part, _DIRECTORY, directory, relative)
            os.close(directory)
            directory = inner
        fd = _step(parts[-1], _FILE, directory, relative)
    finally:
        os.close(directory)
    info = os.fstat(fd)
    problem = (
        "is not a regular file"
        if not stat.S_ISREG(info.st_mode)
        else "has more than one link (a hard link may name a file outside the workspace)"
        if info.st_nlink > 1
        else "lies on another device than the workspace"
        if info.st_dev != device
        else ""
    )
    if problem:
        os.close(fd)
        raise ConfinedFileError(f"file {relative!r} {problem}")
    return fd


def _step(name: str, flags: int, directory: int, relative: str) -> int:
    """One ``openat`` of the walk, its refusals turned into reasons that name ``relative``."""
    try:
        return os.open(name, flags, dir_fd=directory)
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, f"file {relative!r} does not exist in the workspace") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise ConfinedFileError(
                f"path {relative!r} goes through a symbolic link, which checks do not follow"
            ) from None
        raise ConfinedFileError(f"file {relative!r} cannot be opened: {exc.strerror}") from None


def confined_files(root: Path) -> list[str]:
    """Relative POSIX paths of the regular files under ``root``, symlinks neither listed nor
    followed, skipping tool directories (see ``SKIPPED_DIRECTORIES``). The walk keeps its own
    stack, so a tree deeper than the interpreter's recursion limit is listed, not fatal.

    :raises ConfinedFileError: a directory cannot be read.
    """
    found = []
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIPPED_DIRECTORIES:
                            pending.append(Path(entry.path))
                    elif not entry.is_symlink():
                        found.append(Path(entry.path).relative_to(root).as_posix())
        except OSError as exc:
            where = Path(directory).relative_to(root).as_posix()
            raise ConfinedFileError(f"directory {where!r} cannot be read: {exc.strerror}") from None
    return sorted(found)


@lru_cache(maxsize=256)
def glob_pattern(pattern: str) -> re.Pattern[str]:
    """A glob over relative POSIX paths as a regular expression: ``**/`` matches any number of
    directories (none included), ``*`` and ``?`` stay within one path component."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))
