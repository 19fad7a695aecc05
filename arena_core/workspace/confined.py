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
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Protocol, runtime_checkable

from attrs import frozen

from arena_core.config.settings import ScoringConfig, owner_rule
from arena_core.model.errors import ArenaError
from arena_core.workspace.checkout import REF
from arena_core.workspace.reading import (
    ConfinedFileError,
    OverLimitError,
    confined_files,
    glob_pattern,
    is_confined_file,
    read_confined,
)

__all__ = [
    "CommandResult",
    "CommandRunner",
    "FILE_LIMIT",
    "FileTooLarge",
    "Workspace",
    "WorkspaceError",
    "WorkspaceSettings",
    "glob_pattern",
    "scrubbed_environment",
]


class WorkspaceError(ArenaError):
    """A path or workspace that checking refuses; the message is the reason recorded."""


class FileTooLarge(WorkspaceError):
    """A workspace file larger than it may be read within."""


#: The most of one workspace file a check reads.
FILE_LIMIT = 10_000_000
#: How many of a failed command's last output lines its verdict's reason keeps, and at most
#: how many characters of them.
REASON_LINES = 8
REASON_CHARS = 800


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
        """One line for an evaluation's reason: what happened, and the output's last lines
        (:data:`REASON_LINES` of them, joined by `` | ``, at most :data:`REASON_CHARS`), enough to
        act on: a test runner's summary sits below the failure it summarises."""
        if self.error:
            return self.error
        if self.timed_out:
            status = f"timed out after {timeout:g} s (killed)"
        else:
            status = f"exit code {self.exit_code}"
        lines = [line.strip() for line in self.output.splitlines() if line.strip()][-REASON_LINES:]
        tail = " | ".join(lines)
        if len(tail) > REASON_CHARS:
            tail = "..." + tail[-REASON_CHARS:]
        return f"{status}: {tail}" if tail else status


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
    max_files: int = 50_000
    """Files a workspace may hold: in a checked-out ref, and in the copy a sandboxed command gets."""
    max_bytes: int = 1 << 30
    """Bytes the files of a workspace may add up to (their apparent size: a sparse file counts
    whole), likewise."""
    owner_rule: str = "any"
    """``any``: a record may name any workspace under the root; ``id``: only the directory named by
    its id (``workspace_owner``)."""

    @classmethod
    def of(cls, runner: CommandRunner | None, config: ScoringConfig) -> WorkspaceSettings:
        """The settings ``config`` gives, commands run by ``runner``."""
        return cls(
            runner,
            config.command_timeout,
            config.command_output_limit,
            # Never the whole filesystem: unset, the root is where the operator runs arena-core.
            Path(config.workspace_root) if config.workspace_root else Path.cwd(),
            config.command_memory_limit,
            config.workspace_max_files,
            config.workspace_max_bytes,
            owner_rule(config),
        )


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

    def read_text(self, relative: str, limit: int = FILE_LIMIT) -> str:
        """The file's text (UTF-8, undecodable bytes replaced), refused beyond ``limit`` bytes,
        read without following symlinks (see :mod:`arena_core.workspace.reading`)."""
        self.path(relative)
        try:
            return read_confined(self.root, relative, limit).decode("utf-8", errors="replace")
        except FileNotFoundError:
            raise WorkspaceError(f"file {relative!r} does not exist in the workspace") from None
        except OverLimitError as exc:
            raise FileTooLarge(str(exc)) from None
        except ConfinedFileError as exc:
            raise WorkspaceError(str(exc)) from None

    def read_head(self, relative: str, limit: int) -> tuple[str, int]:
        """The first ``limit`` bytes of the file as text (a 2 GiB file is never read whole), and
        the file's size, read as :meth:`read_text` reads."""
        self.path(relative)
        try:
            data = read_confined(self.root, relative, limit, head=True)
            size = (self.root / relative).stat().st_size if len(data) == limit else len(data)
        except FileNotFoundError:
            raise WorkspaceError(f"file {relative!r} does not exist in the workspace") from None
        except ConfinedFileError as exc:
            raise WorkspaceError(str(exc)) from None
        return data.decode("utf-8", errors="replace"), size

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

        New files count as changes (unless a ``.gitignore`` of the tree names them), as an
        agent's new files should. The submission's repository lends its objects and its ref
        and nothing else: git runs with a fresh git directory of the checker's (no config, so no
        filters, drivers or hooks of the submission's; no ``info/attributes`` or
        ``info/exclude``), a throwaway index in which every file is marked intent-to-add, and
        through the configured runner like any task command. The diff is written to a scratch
        file and read back without following links (:meth:`read_scratch`), so the runner's
        output limit does not cut it and a command cannot swap it for a host file.

        :raises WorkspaceError: ``base`` is not a git ref, the workspace is not a git work tree,
            git fails, or the diff is larger than ``limit`` bytes.
        """
        if not REF.match(base):
            raise WorkspaceError(f"diff base {base!r} is not a git ref")
        for relative in paths:
            self.path(relative)  # confined, like every path a checker names
        own = ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.devnull]
        located = self.run([*own, "rev-parse", "--git-path", "objects"])
        resolved = self.run([*own, "rev-parse", "--verify", "--end-of-options", f"{base}^{{commit}}"])
        for result in (located, resolved):
            if not result.succeeded:
                raise WorkspaceError(f"git diff {base}: {result.describe(self.settings.timeout)}")
        objects_dir = (self.root / _last_line(located.output)).resolve()
        commit_id = _last_line(resolved.output)
        if not re.fullmatch(r"[0-9a-f]{40,64}", commit_id) or not objects_dir.is_relative_to(self.root):
            raise WorkspaceError(f"git diff {base}: the workspace's repository is not its own")
        scratch = self.scratch()
        fresh, patch = scratch / "git", scratch / "changes.diff"
        for sub in ("objects/info", "refs"):
            (fresh / sub).mkdir(parents=True)
        (fresh / "HEAD").write_text("ref: refs/heads/none\n")
        (fresh / "objects" / "info" / "alternates").write_text(f"{objects_dir}\n")
        env = {"GIT_DIR": str(fresh), "GIT_WORK_TREE": str(self.root), "GIT_INDEX_FILE": str(scratch / "index")}
        git = [*own, "-c", "core.quotePath=false", "-c", "core.attributesFile=" + os.devnull,
               "-c", "core.excludesFile=" + os.devnull]  # fmt: skip
        plain = ["--no-ext-diff", "--no-textconv", "--no-color", "--binary", f"--output={patch}"]
        for argv in (
            [*git, "add", "--intent-to-add", "--all", "--", "."],
            [*git, "diff", *plain, commit_id, "--", *paths],
        ):
            result = self.run(argv, env=env)
            if not result.succeeded:
                raise WorkspaceError(f"git diff {base}: {result.describe(self.settings.timeout)}")
        try:
            text = self.read_scratch(patch, limit) or b""
        except OverLimitError as exc:
            raise WorkspaceError(
                f"the diff against {base} is {exc.size:,} bytes, more than the limit of {limit:,}"
            ) from None
        return text.decode("utf-8", errors="replace")

    def redact(self, text: str) -> str:
        """``text`` without the host paths of this check: the workspace as ``<workspace>``, the
        scratch home as ``<scratch>`` (a reason shown to a submitter tells it nothing of the host)."""
        for path, name in ((self.root, "<workspace>"), (self._home.parent, "<scratch>")):
            text = text.replace(str(path), name)
        return text

    def scratch(self) -> Path:
        """A fresh directory outside the workspace for files a command writes for the checker.
        The command may write there too (a sandboxed command can reach its home): read what it
        left with :meth:`read_scratch`, never by opening the path."""
        return Path(tempfile.mkdtemp(prefix="report-", dir=self._home))

    def read_scratch(self, path: Path, limit: int) -> bytes | None:
        """The bytes of a file a command wrote under :meth:`scratch`, ``None`` when there is none.
        Read as workspace files are (:mod:`arena_core.workspace.reading`): without following a
        symlink anywhere below the home, as a regular file with one link, at most ``limit``
        bytes; a command that swapped the file for a link to a host file gets it refused.

        :raises WorkspaceError: the file is refused; the reason names it relative to the home.
        :raises OverLimitError: it is larger than ``limit``.
        """
        relative = path.relative_to(self._home).as_posix()
        try:
            return read_confined(self._home, relative, limit)
        except FileNotFoundError:
            return None
        except OverLimitError:
            raise
        except ConfinedFileError as exc:
            raise WorkspaceError(str(exc).replace("file ", "scratch file ", 1)) from None


def _last_line(output: str) -> str:
    lines = output.strip().splitlines()
    return lines[-1].strip() if lines else ""
