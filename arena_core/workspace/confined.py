"""A submission's workspace: the files it produced, reached only through confined paths.

Submissions are untrusted. A criterion names paths and commands (from the task definition,
never from the submission); a :class:`Workspace` resolves every path inside its root and
refuses the rest (absolute paths, ``..``, symlinks that lead out) with a reason, and runs
commands through the configured :class:`CommandRunner` with a timeout, an output cap and a
scrubbed environment, the workspace as working directory.

A workspace is a directory, or a git repository and a ref: the ref is checked out into a
fresh clone in a temporary directory (the repository's own configuration, which could name
filters or hooks, is never used), removed when checking ends.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Protocol, runtime_checkable

from attrs import frozen

from arena_core.model.errors import ArenaError
from arena_core.workspace.reading import ConfinedFileError, confined_files, is_confined_file, read_confined

__all__ = [
    "CommandResult",
    "CommandRunner",
    "Workspace",
    "WorkspaceError",
    "WorkspaceSettings",
    "open_workspace",
    "glob_pattern",
    "scrubbed_environment",
]

#: A ref must look like one: no leading dash (it would be read as an option), no spaces.
_REF = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./@^~{}+-]*$")


class WorkspaceError(ArenaError):
    """A path or workspace that checking refuses; the message is the reason recorded."""


@frozen
class CommandResult:
    """What running one command produced."""

    exit_code: int | None
    """The exit status; ``None`` when the command was killed at the timeout or could not start."""
    output: str
    """Standard output and error, interleaved, cut at the runner's output limit."""
    duration: float
    """Wall time in seconds."""
    timed_out: bool = False
    truncated: bool = False
    """Whether output beyond the limit was discarded."""
    error: str = ""
    """Why the command could not start (e.g. the program does not exist)."""

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def describe(self, timeout: float) -> str:
        """One line for an evaluation's reason: what happened, and the output's last line."""
        if self.error:
            return self.error
        if self.timed_out:
            status = f"timed out after {timeout:g} s (killed)"
        else:
            status = f"exit code {self.exit_code}"
        tail = next((line.strip() for line in reversed(self.output.splitlines()) if line.strip()), "")
        return f"{status}: {tail[:200]}" if tail else status


@runtime_checkable
class CommandRunner(Protocol):
    """Runs one command of a task's criterion; registered with ``arena_register_command_runners``.

    ``argv`` is a list (never a shell string); ``cwd`` the workspace; ``env`` the complete
    environment; the runner must stop the command at ``timeout`` seconds and keep at most
    ``output_limit`` bytes of its output.
    """

    name: str

    def run(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, output_limit: int
    ) -> CommandResult: ...


def scrubbed_environment(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a checked command gets: a search path, a locale and a home of its own;
    nothing of the host's (no tokens, no credentials), plus what the task itself sets."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(home),
        "TMPDIR": str(home),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    if os.name == "nt":  # Windows cannot start programs without these
        env.update({k: os.environ[k] for k in ("SYSTEMROOT", "COMSPEC", "PATHEXT") if k in os.environ})
    env.update(extra or {})
    return env


@frozen
class WorkspaceSettings:
    """How workspaces are opened and commands run (from the configuration)."""

    runner: CommandRunner | None
    """``None`` when no runner is registered (the built-in ``runners`` plugin blocked): every
    command is then refused, which is how a host turns command execution off."""
    timeout: float = 60.0
    output_limit: int = 65_536
    root: Path | None = None
    """Every workspace must lie inside it; relative workspace paths are taken from it (the
    engine always sets one: the working directory when the configuration names none)."""
    memory_limit: int = 1 << 30
    """Bytes of memory bounded work on the workspace's files (compiling) may use."""


class Workspace:
    """One submission's files, for criterion checkers: confined paths and commands."""

    def __init__(self, root: Path, settings: WorkspaceSettings, home: Path) -> None:
        self.root = root.resolve()
        self.settings = settings
        self._home = home

    def path(self, relative: str) -> Path:
        """The absolute path of ``relative`` inside the workspace.

        :raises WorkspaceError: the path is absolute, contains ``..``, or resolves (through a
            symlink) outside the workspace.
        """
        if not isinstance(relative, str) or not relative:
            raise WorkspaceError(f"path {relative!r} is not a relative path")
        if (
            PurePosixPath(relative).is_absolute()
            or PureWindowsPath(relative).is_absolute()
            or PureWindowsPath(relative).drive
        ):
            raise WorkspaceError(f"path {relative!r} is absolute; criterion paths are relative to the workspace")
        if ".." in re.split(r"[\\/]", relative):
            raise WorkspaceError(f"path {relative!r} leaves the workspace ('..' is not allowed)")
        try:
            target = (self.root / relative).resolve()
        except OSError:  # a link changing under our feet
            raise WorkspaceError(f"path {relative!r} cannot be resolved") from None
        if not target.is_relative_to(self.root):
            raise WorkspaceError(f"path {relative!r} resolves outside the workspace (through a symbolic link)")
        return target

    def is_file(self, relative: str) -> bool:
        """Whether ``relative`` is a regular file of the workspace that checks may read (see
        :mod:`arena_core.workspace.reading`)."""
        self.path(relative)
        try:
            return is_confined_file(self.root, relative)
        except ConfinedFileError as exc:
            raise WorkspaceError(str(exc)) from None

    def read_text(self, relative: str, limit: int = 10_000_000) -> str:
        """The file's text (UTF-8, undecodable bytes replaced), refused beyond ``limit`` bytes,
        read without following symlinks (see :mod:`arena_core.workspace.reading`)."""
        self.path(relative)
        try:
            return read_confined(self.root, relative, limit).decode("utf-8", errors="replace")
        except FileNotFoundError:
            raise WorkspaceError(f"file {relative!r} does not exist in the workspace") from None
        except ConfinedFileError as exc:
            raise WorkspaceError(str(exc)) from None

    def files(self, pattern: str = "**/*") -> Iterator[str]:
        """Relative paths of the regular files matching the glob ``pattern`` (see
        :func:`glob_pattern`), in sorted order, skipping tool directories (``.git``,
        ``node_modules``, ...) and symlinks."""
        matcher = glob_pattern(pattern)
        yield from (relative for relative in confined_files(self.root) if matcher.fullmatch(relative))

    def run(
        self, argv: Sequence[str], *, timeout: float | None = None, env: Mapping[str, str] | None = None
    ) -> CommandResult:
        """Run a task's command in the workspace through the configured runner."""
        limit = self.settings.timeout if timeout is None else timeout
        if self.settings.runner is None:
            return CommandResult(None, "", 0.0, error="commands are disabled: no command runner is registered")
        return self.settings.runner.run(
            list(argv),
            cwd=self.root,
            env=scrubbed_environment(self._home, env),
            timeout=limit,
            output_limit=self.settings.output_limit,
        )

    def diff(self, base: str = "HEAD", paths: Sequence[str] = (), *, limit: int = 10_000_000) -> str:
        """The workspace's changes since ``base`` (a commit, branch or tag of its git history) as
        a unified diff, optionally only under ``paths``; ``""`` when nothing changed.

        New files count as changes (unless ``.gitignore`` names them), as an agent's new files
        should: git works on a throwaway index in which every file is marked intent-to-add, so
        the workspace's own index is neither read nor changed. git runs through the configured
        runner like any task command (the workspace's git configuration is the submission's,
        no more trusted than its code), with external diff drivers, text conversion and
        fsmonitor off, and writes the diff to a scratch file outside the workspace, so the
        runner's output limit does not cut it.

        :raises WorkspaceError: ``base`` is not a git ref, the workspace is not a git work tree,
            git fails, or the diff is larger than ``limit`` bytes.
        """
        if not _REF.match(base):
            raise WorkspaceError(f"diff base {base!r} is not a git ref")
        for relative in paths:
            self.path(relative)  # confined, like every path a checker names
        scratch = self.scratch()
        patch, index = scratch / "changes.diff", {"GIT_INDEX_FILE": str(scratch / "index")}
        git = ["git", "-c", "core.fsmonitor=false", "-c", "core.quotePath=false"]
        plain = ["--no-ext-diff", "--no-textconv", "--no-color", "--binary", f"--output={patch}"]
        steps = (
            [*git, "add", "--intent-to-add", "--all", "--", "."],
            [*git, "diff", *plain, base, "--", *paths],
        )
        for argv in steps:
            result = self.run(argv, env=index)
            if not result.succeeded:
                raise WorkspaceError(f"git diff {base}: {result.describe(self.settings.timeout)}")
        size = patch.stat().st_size if patch.exists() else 0
        if size > limit:
            raise WorkspaceError(f"the diff against {base} is {size:,} bytes, more than the limit of {limit:,}")
        return patch.read_text(encoding="utf-8", errors="replace") if size else ""

    def scratch(self) -> Path:
        """A fresh directory outside the workspace for files a command writes for the checker
        (a report there cannot have been planted by the submission)."""
        return Path(tempfile.mkdtemp(prefix="report-", dir=self._home))


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


@contextmanager
def open_workspace(location: str, ref: str | None, settings: WorkspaceSettings) -> Iterator[Workspace]:
    """The workspace at ``location`` (a directory; a git repository when ``ref`` is given).

    :raises WorkspaceError: the directory does not exist, lies outside the configured root, or
        the ref cannot be checked out.
    """
    base = Path(location).expanduser()
    if settings.root is not None:
        root = settings.root.resolve()
        base = (root / base).resolve()
        if not base.is_relative_to(root):
            raise WorkspaceError(f"workspace {location!r} lies outside the workspace root {str(root)!r}")
    if not base.is_dir():
        raise WorkspaceError(f"workspace {location!r} is not a directory")
    with tempfile.TemporaryDirectory(prefix="arena-check-") as scratch:
        home = Path(scratch, "home")
        home.mkdir()
        if ref is None:
            yield Workspace(base, settings, home)
        else:
            yield Workspace(_checkout(base, ref, Path(scratch, "tree"), home), settings, home)


def _checkout(repository: Path, ref: str, into: Path, home: Path) -> Path:
    """``ref`` of ``repository`` checked out, detached, in a fresh clone at ``into``.

    In the clone the repository's branches are ``origin/*``, so a branch name is looked up
    there when it is not a commit, tag or ``HEAD`` of the clone itself.
    """
    if not _REF.match(ref):
        raise WorkspaceError(f"workspace ref {ref!r} is not a git ref")
    git = shutil.which("git")
    if git is None:
        raise WorkspaceError("the workspace is a git ref, but git is not installed")
    env = scrubbed_environment(home)

    def git_in(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [git, *argv], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )

    def refuse(done: subprocess.CompletedProcess[str]) -> WorkspaceError:
        message = (done.stderr.strip().splitlines() or ["git failed"])[-1]
        return WorkspaceError(f"cannot check out {ref!r} of {str(repository)!r}: {message}")

    done = git_in("clone", "--quiet", "--no-local", "--no-checkout", "--", str(repository), str(into))
    if done.returncode != 0:
        raise refuse(done)
    for candidate in (ref, f"refs/remotes/origin/{ref}"):
        found = git_in(
            "-C", str(into), "rev-parse", "--verify", "--quiet", "--end-of-options", f"{candidate}^{{commit}}"
        )
        if found.returncode == 0:
            break
    else:
        raise WorkspaceError(f"cannot check out {ref!r} of {str(repository)!r}: no such commit, tag or branch")
    done = git_in(
        "-C",
        str(into),
        "-c",
        "core.hooksPath=" + os.devnull,
        "checkout",
        "--quiet",
        "--detach",
        found.stdout.strip(),
        "--",
    )
    if done.returncode != 0:
        raise refuse(done)
    return into
