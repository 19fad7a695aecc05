"""Attacks on the scorer's disk, time and privileges through a sandboxed command's workspace:
each proves it ran (the files were written, the sparse file is large, the tree is deep) before
its failure counts, and the rest of the batch is scored."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from arena_core import Arena
from arena_core.model.errors import ArenaError
from arena_core.workspace.quota import quotas_enforced, remove_tree

LIMITS = {"command_memory_limit": "256M", "command_max_processes": 32, "command_max_file_size": "16M"}


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    try:
        Arena({"command_runner": "sandbox"}, autoload=False)
    except ArenaError as exc:
        pytest.skip(f"the sandbox cannot run here: {exc}")


def _score(tmp_path: Path, workspaces: dict[str, Path], script: str, **config: object) -> dict:
    for workspace in workspaces.values():
        (workspace / "attack.py").write_text(textwrap.dedent(script))
    arena = Arena({"command_runner": "sandbox", "workspace_root": str(tmp_path), "command_timeout": 30, **LIMITS,
                   **config}, autoload=False)
    task = {"id": "t", "success_criteria": [{"type": "command_succeeds", "command": [sys.executable, "attack.py"]}]}
    runs = [{"id": name, "task_id": "t", "total_tokens": 1, "tool_calls": 1, "workspace": str(w)}
            for name, w in workspaces.items()]
    return {e.submission_id: e.criteria[0] for e in arena.evaluate_many(runs, {"t": task})}


def _workspaces(tmp_path: Path, *names: str) -> dict[str, Path]:
    out = {}
    for name in names:
        (tmp_path / name).mkdir()
        out[name] = tmp_path / name
    return out


FILL = """
    import os, sys
    written = 0
    try:
        for i in range(200):  # 200 files of 1 MiB, each under the 16 MiB per-file limit
            with open(os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", f"f{i}"), "wb") as out:
                out.write(b"x" * (1 << 20))
            written += 1
    except OSError as exc:
        print("wrote", written, "then", exc.strerror, flush=True)
        sys.exit(7)
    sys.exit(0)
"""


@pytest.mark.parametrize("where", ["workspace copy", "scratch home"])
def test_many_files_under_the_per_file_limit_stop_at_the_quota(tmp_path: Path, where: str) -> None:
    if not quotas_enforced():
        pytest.skip("the scorer cannot mount a tmpfs here (not root): only the per-file limit holds, as documented")
    script = FILL if where == "workspace copy" else FILL.replace('sys.argv[1] if len(sys.argv) > 1 else "."',
                                                                 'os.environ["HOME"]')
    verdicts = _score(tmp_path, _workspaces(tmp_path, "filler", "honest"), script, workspace_max_bytes="16M")
    reason = verdicts["filler"].reason
    assert verdicts["filler"].status == "failed" and "wrote" in reason and "No space left" in reason  # it ran
    assert int(reason.split("wrote ")[1].split()[0]) < 64  # stopped near the quota, far below 200 MiB
    assert verdicts["honest"].reason.startswith("exit code 7")  # the honest run also stopped: same script, scored


def test_a_sparse_file_is_refused_before_it_is_copied(tmp_path: Path) -> None:
    workspaces = _workspaces(tmp_path, "sparse", "honest")
    with open(workspaces["sparse"] / "hole", "wb") as out:
        out.truncate(6 << 30)  # 6 GiB that take no disk
    assert (workspaces["sparse"] / "hole").stat().st_blocks < 100
    verdicts = _score(tmp_path, workspaces, "import sys; sys.exit(0)")
    assert verdicts["sparse"].status == "failed" and "more than 1,073,741,824 bytes" in verdicts["sparse"].reason
    assert verdicts["honest"].status == "passed"


def test_too_many_files_are_refused_before_they_are_copied(tmp_path: Path) -> None:
    workspaces = _workspaces(tmp_path, "crowded", "honest")
    for i in range(1200):
        (workspaces["crowded"] / f"f{i}").write_text("x")
    verdicts = _score(tmp_path, workspaces, "import sys; sys.exit(0)", workspace_max_files=1000)
    assert verdicts["crowded"].status == "failed" and "more than 1,000 files" in verdicts["crowded"].reason
    assert verdicts["honest"].status == "passed"


def test_a_deep_tree_fails_alone_and_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scoring's temporary folders go to a folder of this test's own (another test running
    beside it makes its own sandbox folders in the shared one), which they are seen to use."""
    import tempfile

    own = tmp_path / "temporary"
    own.mkdir()
    monkeypatch.setenv("TMPDIR", str(own))
    monkeypatch.setattr(tempfile, "tempdir", str(own))
    workspaces = _workspaces(tmp_path, "deep", "honest")
    directory = os.open(workspaces["deep"], os.O_RDONLY)
    for _ in range(1500):  # deeper than the interpreter's recursion limit
        os.mkdir("d", dir_fd=directory)
        inner = os.open("d", os.O_RDONLY, dir_fd=directory)
        os.close(directory)
        directory = inner
    os.close(directory)
    touched = own.stat().st_mtime_ns
    try:
        verdicts = _score(tmp_path, workspaces, "import sys; sys.exit(0)")
    finally:
        remove_tree(workspaces["deep"])  # pytest's own clean-up would recurse once per level, and fail
    assert verdicts["deep"].status == "failed" and "more than 256 levels" in verdicts["deep"].reason
    assert verdicts["honest"].status == "passed"
    assert own.stat().st_mtime_ns != touched  # folders were made (and removed) here
    assert list(own.iterdir()) == []


def test_no_nested_user_namespace_inside_the_sandbox(tmp_path: Path) -> None:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare program on this machine to try it with")
    verdicts = _score(tmp_path, _workspaces(tmp_path, "nested"), f"""
        import subprocess, sys
        done = subprocess.run([{unshare!r}, "-Ur", "id", "-u"], capture_output=True, text=True)
        print("unshare said", done.returncode, done.stdout.strip(), done.stderr.strip()[:80], flush=True)
        sys.exit(0 if done.stdout.strip() == "0" else 7)
    """)
    assert verdicts["nested"].reason.startswith("exit code 7") and "unshare said" in verdicts["nested"].reason


def test_the_copy_counts_against_the_commands_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import arena_plugins.sandbox as sandbox

    real = sandbox.throwaway_copy

    def slow_copy(*args: object) -> None:  # what copying 100,000 files costs
        time.sleep(1.5)
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(sandbox, "throwaway_copy", slow_copy)
    verdicts = _score(tmp_path, _workspaces(tmp_path, "slow"), "import sys; sys.exit(0)", command_timeout=1)
    assert verdicts["slow"].status == "failed" and "timed out" in verdicts["slow"].reason


def test_shared_memory_is_bounded(tmp_path: Path) -> None:
    verdicts = _score(tmp_path, _workspaces(tmp_path, "shm"), """
        import sys
        written = 0
        try:
            with open("/dev/shm/fill", "wb") as out:
                for _ in range(200):
                    out.write(b"x" * (1 << 20))
                    out.flush()
                    written += 1
        except OSError as exc:
            print("wrote", written, "MiB then", exc.strerror, flush=True)
            sys.exit(7)
        sys.exit(0)
    """, command_max_file_size="1G")
    reason = verdicts["shm"].reason
    assert reason.startswith("exit code 7") and "No space left" in reason and int(reason.split("wrote ")[1].split()[0]) <= 16


def test_a_workspace_whose_name_is_not_utf8_fails_alone_with_git(tmp_path: Path) -> None:
    """git's messages then carry bytes that are not UTF-8 (a refused clone names the path)."""
    root = tmp_path / "root"
    os.makedirs(bytes(root) + b"/ws/bad\xff")
    arena = Arena({"workspace_root": str(root)}, autoload=False)
    task = {"id": "t", "success_criteria": [{"type": "file_exists", "file_path": "a"}]}
    [evaluation] = arena.evaluate_many([{"id": "ws", "task_id": "t", "total_tokens": 1, "tool_calls": 1,
                                         "workspace": os.fsdecode(b"ws/bad\xff"), "workspace_ref": "main"}], {"t": task})
    reason = evaluation.criteria[0].reason
    assert evaluation.criteria[0].status == "error" and "cannot check out" in reason
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in reason) and str(root) not in reason
