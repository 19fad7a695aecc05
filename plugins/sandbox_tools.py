"""The program a sandboxed command runs, found as the host finds it.

The sandbox binds ``/usr``, the system links and the scoring environment's Python; a criterion
command whose program the host finds elsewhere on the checks' ``PATH`` (``/opt/node/bin/node``,
a tool unpacked under ``/srv``) would fail inside with bubblewrap's bare ``execvp ...: No such
file or directory``. So the program is looked up first: under what the sandbox binds already,
nothing changes; elsewhere, its installation (the folder above its ``bin``, else its own folder)
is bound read-only, so the program and the files beside it are there; under a home directory,
which the sandbox never exposes, or not found at all, the command does not start and the
reason says what to install or configure.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["ToolRefused", "tool_bind"]

#: Folders whose contents are never bound into a sandbox, even read-only.
PRIVATE = ("/root", "/home", "/etc", "/var", "/proc", "/sys", "/dev", "/run", "/boot")


class ToolRefused(Exception):
    """The command's program cannot be made available in the sandbox; the message says why."""


def tool_bind(program: str, search_path: str, bound: list[str]) -> list[str]:
    """The host folders to bind read-only so that ``program`` runs in the sandbox (the one the
    ``PATH`` names, and the one a link there leads to): none when it lies under ``bound``, or is
    a path into the workspace.

    :raises ToolRefused: the program is not on ``search_path``, or lies under a home directory or
        another private folder.
    """
    if "/" in program and not os.path.isabs(program):
        return []  # ./run.sh: the workspace's own, bound already
    found = program if os.path.isabs(program) else shutil.which(program, path=search_path)
    if found is None:
        raise ToolRefused(
            f"command {program!r} is not on the PATH the checks run with ({search_path}): install it "
            "under /usr, or put its folder on PATH where arena runs"
        )
    folders = []
    for place in dict.fromkeys((Path(os.path.abspath(found)), Path(found).resolve())):
        if any(place.is_relative_to(b) for b in bound):
            continue
        folder = place.parent.parent if place.parent.name == "bin" else place.parent
        if (
            folder == Path("/")
            or place.is_relative_to(Path.home().resolve())
            or place.is_relative_to("/home")
            or any(place.is_relative_to(private) for private in PRIVATE)
        ):
            raise ToolRefused(
                f"command {program!r} is {place}, under a folder the sandbox never exposes (home directories, "
                "/root, /etc, /var): install it under /usr or /opt, where the sandbox can bind it read-only"
            )
        folders.append(str(folder))
    return folders
