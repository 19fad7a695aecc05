"""Hostile workspaces against the checks: each test is one attack, scored the way an arena
scores a stranger's run, and asserts that the attack failed.

Every attack aims only at what the test itself created (a secret file in its temporary
directory, a variable in the scorer's environment, a listener it opened, a marker process it
looks for) and is bounded in memory, processes and disk; nothing touches the machine's own
files. The ``sandbox`` tests skip, saying why, only where the kernel refuses namespaces.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from arena_core import Arena
from arena_core.model.errors import ArenaError
from arena_core.workspace.confined import Workspace, WorkspaceError, WorkspaceSettings

LIMITS = {"command_memory_limit": "256M", "command_max_processes": 32, "command_max_file_size": "16M"}


def _sandbox_or_skip() -> None:
    try:
        Arena({"command_runner": "sandbox"}, autoload=False)
    except ArenaError as exc:
        pytest.skip(f"the sandbox cannot run here: {exc}")


@pytest.fixture(params=["sandbox", "local"])
def runner(request: pytest.FixtureRequest) -> str:
    if request.param == "sandbox":
        _sandbox_or_skip()
    return str(request.param)


BLOCKED = 7  # what an attack script exits with when the attack failed: proof that it ran


def _attack(tmp_path: Path, runner: str, script: str, *, name: str = "hostile", files: dict | None = None) -> str:
    """Score one submission whose workspace holds ``attack.py``; the criterion passes only if
    the attack script exits 0, which it does when the attack worked. Returns the verdict,
    ``"blocked"`` for a failed criterion whose script ran and exited with :data:`BLOCKED`."""
    workspace = tmp_path / name
    workspace.mkdir()
    (workspace / "attack.py").write_text(textwrap.dedent(script))
    for relative, text in (files or {}).items():
        (workspace / relative).write_text(text)
    arena = Arena({"command_runner": runner, "workspace_root": str(tmp_path), "command_timeout": 20, **LIMITS},
                  autoload=False)
    task = {"id": "t", "success_criteria": [{"type": "command_succeeds", "command": [sys.executable, "attack.py"]}]}
    [evaluation] = arena.evaluate_many([{"id": name, "task_id": "t", "total_tokens": 10, "tool_calls": 1,
                                         "workspace": str(workspace)}], {"t": task})
    verdict = evaluation.criteria[0]
    assert "bwrap" not in verdict.reason and "cannot run" not in verdict.reason, verdict.reason  # the attack ran
    return "blocked" if verdict.reason.startswith(f"exit code {BLOCKED}") else verdict.status


def test_a_host_secret_file_cannot_be_read(tmp_path: Path, runner: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(token := secrets.token_hex(8))
    secret.chmod(0o600)
    verdict = _attack(tmp_path, runner, f"""
        import sys
        try:
            sys.exit(0 if "{token}" in open("{secret}").read() else 1)
        except OSError:
            sys.exit(7)
    """)
    assert verdict == ("blocked" if runner == "sandbox" else "passed")  # local is no sandbox: it reads


def test_the_scorers_environment_cannot_be_read(tmp_path: Path, runner: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_TEST_SECRET", token := secrets.token_hex(8))
    verdict = _attack(tmp_path, runner, f"""
        import os, sys
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            try:
                if b"{token}" in open(f"/proc/{{pid}}/environ", "rb").read():
                    sys.exit(0)
            except OSError:
                pass
        sys.exit(7)
    """)
    if runner == "sandbox":  # local: /proc shows a process's environment as it started, so this varies
        assert verdict == "blocked"


def test_nothing_is_written_outside_the_workspace_copy(tmp_path: Path, runner: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    verdict = _attack(tmp_path, runner, f"""
        import sys
        open("planted.txt", "w").write("x")  # into the workspace: must not reach the next check
        try:
            open("{outside}/planted.txt", "w").write("x")
            sys.exit(0)
        except OSError:
            sys.exit(7)
    """)
    if runner == "sandbox":
        assert verdict == "blocked" and not (outside / "planted.txt").exists()
        assert not (tmp_path / "hostile" / "planted.txt").exists()  # the workspace itself is unchanged


def _alive(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("how", ["child", "double-forked daemon"])
def test_nothing_the_command_started_outlives_it(tmp_path: Path, runner: str, how: str) -> None:
    token = secrets.token_hex(8)
    sleeper = f"import time; time.sleep(60)  # {token}"
    spawn = (
        f"subprocess.Popen([sys.executable, '-c', {sleeper!r}])"
        if how == "child"
        else f"subprocess.Popen([sys.executable, '-c', {sleeper!r}], start_new_session=True, env={{}})"
    )
    _attack(tmp_path, runner, f"""
        import subprocess, sys, os
        if os.fork() == 0:
            os.setsid()
            {spawn}
            os._exit(0)
        {spawn}
        sys.exit(0)
    """)
    survivors = _alive(token)
    for pid in survivors:  # clean up before failing: the test never leaves a process behind
        os.kill(pid, 9)
    if runner == "sandbox" or how == "child":
        assert survivors == []


def test_a_daemon_cannot_sabotage_the_next_submission(tmp_path: Path) -> None:
    _sandbox_or_skip()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "check.py").write_text("import time, sys; time.sleep(1.5); sys.exit(0 if open('x').read() == 'ok' else 7)")
    (victim / "x").write_text("ok")
    saboteur = tmp_path / "saboteur"
    saboteur.mkdir()
    (saboteur / "check.py").write_text(textwrap.dedent(f"""
        import os, subprocess, sys
        code = "import time\\nfor _ in range(40):\\n    time.sleep(0.1)\\n    try: open('{victim}/x', 'w').write('sabotaged')\\n    except OSError: pass"
        subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        sys.exit(0)
    """))
    arena = Arena({"command_runner": "sandbox", "workspace_root": str(tmp_path), "check_concurrency": 1, **LIMITS},
                  autoload=False)
    task = {"id": "t", "success_criteria": [{"type": "command_succeeds", "command": [sys.executable, "check.py"]}]}
    runs = [{"id": w.name, "task_id": "t", "total_tokens": 10, "tool_calls": 1, "workspace": str(w)}
            for w in (saboteur, victim)]
    verdicts = {e.submission_id: e.criteria[0].status for e in arena.evaluate_many(runs, {"t": task})}
    assert verdicts == {"saboteur": "passed", "victim": "passed"} and (victim / "x").read_text() == "ok"


@pytest.mark.parametrize(
    "script",
    [
        "b = bytearray(600 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); sys.exit(0)",  # 600 MiB > 256 MiB
        "import subprocess\nps = [subprocess.Popen(['sleep', '5']) for _ in range(100)]; sys.exit(0)",  # > 32
        "open('big', 'wb').write(b'x' * (64 * 1024 * 1024)); sys.exit(0)",  # 64 MiB > 16 MiB
    ],
    ids=["memory", "processes", "file size"],
)
def test_resources_are_bounded(tmp_path: Path, script: str) -> None:
    _sandbox_or_skip()
    assert _attack(tmp_path, "sandbox", "import sys\nprint('started', flush=True)\n" + script) == "failed"


def test_there_is_no_network(tmp_path: Path, runner: str) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        verdict = _attack(tmp_path, runner, f"""
            import socket, sys
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
                sys.exit(0)
            except OSError:
                sys.exit(7)
        """)
    assert verdict == ("blocked" if runner == "sandbox" else "passed")


#: The hardened test criterion docs/security.md recommends, read from the page.
_PAGE = (Path(__file__).parent.parent.parent / "docs" / "security.md").read_text()
HARDENED_CRITERION = json.loads(re.search(r"```json\n(.*?)```", _PAGE, flags=re.S)[1])
HARDENED = [sys.executable if arg == "python" else arg for arg in HARDENED_CRITERION["command"]]
FAILING_TESTS = "def test_one():\n    assert False\n\ndef test_two():\n    assert False\n"


@pytest.mark.parametrize(
    "trick",
    [
        {"report.xml": '<testsuite tests="2" failures="0"><testcase name="test_one"/><testcase name="test_two"/></testsuite>',
         "sitecustomize.py": "import os\nos._exit(0)\n"},
        {"conftest.py": "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                        "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"},
        {"pytest.ini": "[pytest]\naddopts = -p forge\n", "forge.py": "def pytest_collection_modifyitems(items):\n"
                                                                    "    items.clear()\n"},
    ],
    ids=["planted report and exit 0", "conftest makereport hook", "plugin in the pytest options"],
)
def test_a_hardened_test_command_is_not_fooled(tmp_path: Path, runner: str, trick: dict) -> None:
    workspace = tmp_path / "forger"
    workspace.mkdir()
    (workspace / "test_real.py").write_text(FAILING_TESTS)
    for name, text in trick.items():
        (workspace / name).write_text(text)
    arena = Arena({"command_runner": runner, "workspace_root": str(tmp_path), **LIMITS}, autoload=False)
    task = {"id": "t", "success_criteria": [{**HARDENED_CRITERION, "command": HARDENED}]}
    [evaluation] = arena.evaluate_many([{"id": "forger", "task_id": "t", "total_tokens": 10, "tool_calls": 1,
                                         "workspace": str(workspace)}], {"t": task})
    verdict = evaluation.criteria[0]
    assert (verdict.status, verdict.credit) == ("failed", 0.0)
    assert verdict.reason == "0 of 2 tests passed (0 skipped)"  # the real tests ran, and were reported


def _workspace(root: Path) -> Workspace:
    home = root / "home"
    home.mkdir(exist_ok=True)
    return Workspace(root / "ws", WorkspaceSettings(None, root=root), home)


def test_a_swapped_symlink_never_reads_a_host_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET " + secrets.token_hex(8))
    (tmp_path / "ws").mkdir()
    target = tmp_path / "ws" / "notes.txt"
    target.write_text("harmless")
    workspace = _workspace(tmp_path)
    stop = threading.Event()

    def swap() -> None:  # what a daemon left behind would do: flip the file for a symlink
        while not stop.is_set():
            spare = tmp_path / "ws" / "spare"
            spare.unlink(missing_ok=True)
            spare.symlink_to(secret)
            os.replace(spare, target)
            spare.write_text("harmless")
            os.replace(spare, target)

    flipper = threading.Thread(target=swap)
    flipper.start()
    read: list[str] = []
    refused = 0
    deadline = time.monotonic() + 30
    try:  # race until both outcomes were seen: a busy machine can starve either thread for a while
        while (len(read) < 20 or refused < 20) and time.monotonic() < deadline:
            try:
                read.append(workspace.read_text("notes.txt"))
            except WorkspaceError as exc:
                refused += 1
                assert str(tmp_path) not in str(exc)  # reasons never show host paths
    finally:
        stop.set()
        flipper.join()
    assert refused and read  # the swap was met, and reads between swaps still worked
    assert not any("SECRET" in text for text in read)


def test_hard_links_and_symlinks_to_host_files_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    (tmp_path / "ws").mkdir()
    os.link(secret, tmp_path / "ws" / "linked.txt")
    (tmp_path / "ws" / "pointer.txt").symlink_to(secret)
    (tmp_path / "ws" / "sub").symlink_to(tmp_path)
    workspace = _workspace(tmp_path)
    for name, reason in (("linked.txt", "more than one link"), ("pointer.txt", "symbolic link"),
                         ("sub/secret.txt", "symbolic link")):
        with pytest.raises(WorkspaceError, match=reason) as refused:
            workspace.read_text(name)
        assert str(tmp_path) not in str(refused.value)
    assert list(workspace.files()) == ["linked.txt"]  # listed (a regular file), but refused when read


def test_a_pattern_cannot_hang_the_scorer(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big.py").write_text("def f(" + "x" * 2_000_000)  # quadratic for Python's re: minutes
    arena = Arena({"workspace_root": str(tmp_path)}, autoload=False)
    task = {"id": "t", "success_criteria": [{"type": "file_contains", "file_path": "big.py",
                                             "pattern": r"def \w+\(.*\) -> int:"}]}
    done: list = []
    worker = threading.Thread(target=lambda: done.extend(arena.evaluate_many(
        [{"id": "s", "task_id": "t", "total_tokens": 1, "tool_calls": 1, "workspace": str(tmp_path / "ws")}],
        {"t": task})))
    worker.start()
    worker.join(timeout=60)  # linear time takes milliseconds; the old matcher took minutes here
    assert done and done[0].criteria[0].status == "failed"
    with pytest.raises(ArenaError, match="RE2 accepts"):
        arena.evaluate_many([], {"t": {"id": "t", "success_criteria": [
            {"type": "file_contains", "file_path": "a", "pattern": r"(a)\1"}]}})


def test_compiling_a_hostile_file_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "huge.py").write_text("x = [" + "1," * 3_000_000 + "]\n")  # about 2 GB to compile
    arena = Arena({"workspace_root": str(tmp_path), "command_memory_limit": "256M"}, autoload=False)
    task = {"id": "t", "success_criteria": [{"type": "code_compiles"}]}
    [evaluation] = arena.evaluate_many(
        [{"id": "s", "task_id": "t", "total_tokens": 1, "tool_calls": 1, "workspace": str(tmp_path / "ws")}], {"t": task})
    verdict = evaluation.criteria[0]
    assert verdict.status == "failed" and ("MemoryError" in verdict.reason or "memory limit" in verdict.reason)


def test_a_record_cannot_name_a_host_directory_as_its_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no workspace_root: the root is where the operator runs the command
    arena = Arena(autoload=False)
    task = {"id": "t", "success_criteria": [{"type": "file_contains", "file_path": "passwd", "pattern": "root"}]}
    [evaluation] = arena.evaluate_many(
        [{"id": "s", "task_id": "t", "total_tokens": 1, "tool_calls": 1, "workspace": "/etc"}], {"t": task})
    verdict = evaluation.criteria[0]
    assert verdict.status == "error" and "lies outside the workspace root" in verdict.reason


def test_the_sandbox_refuses_to_start_without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena_plugins.sandbox as sandbox

    monkeypatch.setattr(sandbox, "bwrap_binary", lambda: None)
    with pytest.raises(ArenaError, match=r"command_runner 'sandbox': bubblewrap is not installed"):
        Arena({"command_runner": "sandbox"}, autoload=False)
