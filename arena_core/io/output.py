"""Output files that appear whole or not at all.

An output is written to a temporary file beside the target and renamed into place when the
writing succeeds, so an error, a full disk or a signal never leaves a half-written file, and
never a temporary one.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from arena_core.io.readers import InputError

__all__ = ["atomic_output"]

_HELD = {signal.SIGINT, signal.SIGTERM}


def _hold_signals() -> set[int | signal.Signals] | None:
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX: nothing to hold
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)


def _release_signals(previous: set[int | signal.Signals] | None) -> None:
    if previous is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def atomic_output(path: str | Path | None) -> Iterator[IO[str]]:
    """A text stream for ``path`` that appears only when the block succeeds (stdout for ``None``)."""
    if path is None:
        yield sys.stdout
        return
    target = Path(path)
    # Signals are held while the temporary file is created, and let through only inside the
    # block that removes it, so a SIGTERM or Ctrl-C at any moment leaves no temporary file.
    held = _hold_signals()
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    except OSError as exc:
        _release_signals(held)
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    try:
        _release_signals(held)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                yield fh
        except OSError as exc:  # a full disk, a file-size limit, a vanished directory
            raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
        mask = os.umask(0)  # read the umask (there is no other way) and put it back
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)  # as an ordinary new file, not mkstemp's owner-only 0600
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
