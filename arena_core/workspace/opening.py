"""Opening a submission's workspace: where it may lie, whose it is, and its checkout.

A record names its workspace; the scorer must not take that name on trust. The directory has
to lie inside the configured root, and under ``workspace_owner = "id"`` it has to be the one
the run's id names, reached without following a link, so that no run can point at another's
files and take its verdict. A ``workspace_ref`` is checked out into a scratch directory under
a quota (:mod:`arena_core.workspace.checkout`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena_core.workspace.checkout import CheckoutError, checkout
from arena_core.workspace.confined import Workspace, WorkspaceError, WorkspaceSettings, scrubbed_environment
from arena_core.workspace.quota import bounded_directory

__all__ = ["open_workspace"]


@contextmanager
def open_workspace(
    location: str, ref: str | None, settings: WorkspaceSettings, *, owner: str | None = None
) -> Iterator[Workspace]:
    """The workspace at ``location`` (a directory; a git repository when ``ref`` is given).

    ``location`` is taken literally (no ``~`` expansion): relative to the configured root, or
    absolute inside it. Opened for a submission (``owner``, its id) under ``workspace_owner =
    "id"``, it must be the directory named by that id under the root, or inside it: a record
    cannot name another submission's workspace and take its verdict.

    :raises WorkspaceError: the directory does not exist, lies outside the configured root, or
        the ref cannot be checked out (see :mod:`arena_core.workspace.checkout`).
    """
    if not isinstance(location, str) or not location or "\x00" in location:
        raise WorkspaceError(f"workspace {location!r} is not a path")
    root = (settings.root or Path.cwd()).resolve()
    if settings.owner_rule == "id" and owner is not None:
        base = _owned(root, location, owner)
    else:
        try:
            base = (root / location).resolve()
        except (OSError, RuntimeError, ValueError):
            raise WorkspaceError(f"workspace {location!r} cannot be resolved") from None
        if not base.is_relative_to(root):
            raise WorkspaceError(f"workspace {location!r} lies outside the workspace root")
    if not base.is_dir():
        raise WorkspaceError(f"workspace {location!r} is not a directory")
    # The checked-out tree and the scratch home, under one quota: twice a workspace's.
    with bounded_directory("arena-check-", 2 * settings.max_bytes, 2 * settings.max_files) as scratch:
        home = Path(scratch, "home")
        home.mkdir()
        if ref is None:
            yield Workspace(base, settings, home)
            return
        try:
            tree = checkout(
                base,
                root,
                ref,
                Path(scratch, "tree"),
                scrubbed_environment(home),
                max_files=settings.max_files,
                max_bytes=settings.max_bytes,
            )
        except CheckoutError as exc:
            raise WorkspaceError(str(exc)) from None
        yield Workspace(tree, settings, home)


def _owned(root: Path, location: str, owner: str) -> Path:
    """The workspace ``location`` of the submission ``owner`` under ``workspace_owner = "id"``:
    the directory named by the id, as one path component of the root, or a directory inside it,
    reached without following a link (a link planted in one's own workspace that points at
    another's, or an id such as ``bob/.`` or ``x/../bob``, would take that one's verdict).

    :raises WorkspaceError: the id is not one path component, or the location is not below it or
        passes through a link.
    """
    if owner in ("", ".", "..") or "/" in owner or "\\" in owner:
        raise WorkspaceError(
            f"submission id {owner!r} names no workspace: under workspace_owner = 'id' a run's workspace is the "
            "directory its id names, and the id must be one path component (no '/', '\\', '.' or '..')"
        )
    given = Path(location)
    if given.is_absolute():
        if not given.is_relative_to(root):
            raise WorkspaceError(f"workspace {location!r} lies outside the workspace root")
        given = given.relative_to(root)
    parts = [p for p in re.split(r"[\\/]", str(given)) if p not in ("", ".")]
    if not parts or parts[0] != owner or ".." in parts:
        raise WorkspaceError(
            f"workspace {location!r} is not this submission's own: under workspace_owner = 'id' it must be "
            f"the directory {owner!r} of the workspace root, or a directory inside it (no '..')"
        )
    place = root
    for part in parts:
        place = place / part
        try:
            if place.is_symlink():
                raise WorkspaceError(
                    f"workspace {location!r} passes through a link ({part!r}); under workspace_owner = 'id' a "
                    "workspace is opened without following links"
                )
        except OSError:
            raise WorkspaceError(f"workspace {location!r} cannot be resolved") from None
    return place
