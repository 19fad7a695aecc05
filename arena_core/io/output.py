"""Output files that appear whole or not at all.

An output is written to a temporary file beside the target and renamed into place when the
writing succeeds, so an error, a full disk or a signal never leaves a half-written file, and
never a temporary one.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from arena_core.io.decoding import InputError

__all__ = ["atomic_output"]


@contextmanager
def atomic_output(path: str | Path | None) -> Iterator[IO[str]]:
    """A text stream for ``path`` that appears only when the block succeeds (stdout for ``None``).

    The temporary file's name is chosen before the file is created, and the file is created
    inside the block that removes it, so an exception at any moment (a SIGTERM turned into one
    by the command line, Ctrl-C, a full disk) leaves no temporary file behind.
    """
    if path is None:
        yield sys.stdout
        return
    target = Path(path)
    temporary = target.parent / f".{target.name}.{secrets.token_hex(8)}"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # mode as an ordinary new file
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                yield fh
        except OSError as exc:  # a full disk, a file-size limit, a vanished directory
            raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
        os.replace(temporary, target)
    except FileExistsError:  # another writer's temporary file (a name drawn twice): not ours to remove
        raise InputError(f"{target}: cannot write: {temporary} exists") from None
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
