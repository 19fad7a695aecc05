"""Attacks on what the scorer reads back from a checked workspace: reports and diffs a sandboxed
command could swap for links to host files, git configuration that forges a diff, and
``workspace_ref`` repositories that lead outside the workspace root. Each test proves the attack
ran (the link was made, the filter was configured, the clone was tried) before its failure
counts; secrets are files the test made, 0600, outside the workspace."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena_core import Arena
from arena_core.io.junit import parse_junit
from arena_core.model.errors import ArenaError
from arena_core.workspace.confined import WorkspaceError
from arena_core.workspace.opening import open_workspace

LIMITS = {"command_memory_limit": "256M", "command_max_processes": 32, "command_max_file_size": "16M"}


@pytest.fixture(params=["sandbox", "local"])
def runner(request: pytest.FixtureRequest) -> str:
    if request.param == "sandbox":
        try:
            Arena({"command_runner": "sandbox"}, autoload=False)
        except ArenaError as exc:
            pytest.skip(f"the sandbox cannot run here: {exc}")
    return str(request.param)


def _secret(tmp_path: Path, text: str) -> Path:
    secret = tmp_path / "secret"
    secret.write_text(text)
    secret.chmod(0o600)
    return secret


def _git(cwd: Path, *argv: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv], cwd=cwd, check=True,
                   capture_output=True)


def _score(tmp_path: Path, runner: str, criterion: dict, workspace: Path, ref: str | None = None):
    arena = Arena({"command_runner": runner, "workspace_root": str(tmp_path), "command_timeout": 30, **LIMITS},
                  autoload=False)
    run = {"id": "hostile", "task_id": "t", "total_tokens": 10, "tool_calls": 1, "workspace": str(workspace)}
    if ref is not None:
        run["workspace_ref"] = ref
    [evaluation] = arena.evaluate_many([run], {"t": {"id": "t", "success_criteria": [criterion]}})
    return evaluation.criteria[0]


@pytest.mark.parametrize("swap", ["file", "directory"])
def test_a_junit_report_swapped_for_a_link_to_a_host_file_is_refused(tmp_path: Path, runner: str, swap: str) -> None:
    token = "SECRET" + secrets.token_hex(6)
    secret = _secret(tmp_path, f"<{token}/>")  # valid XML: the old reader named its root tag in the reason
    (tmp_path / "decoy").mkdir()
    (tmp_path / "decoy" / "junit.xml").symlink_to(secret)
    workspace = tmp_path / "hostile"
    workspace.mkdir()
    (workspace / "attack.py").write_text(textwrap.dedent(f"""
        import os, sys
        report = sys.argv[1]
        if {swap!r} == "file":
            os.symlink({str(secret)!r}, report)
        else:  # the report's whole directory for a link to a host directory holding a link
            os.rename(os.path.dirname(report), os.path.dirname(report) + ".gone")
            os.symlink({str(tmp_path / "decoy")!r}, os.path.dirname(report))
        print("swapped", flush=True)
    """))
    verdict = _score(tmp_path, runner, {"type": "tests_pass", "command": [sys.executable, "attack.py", "{junit_xml}"]},
                     workspace)
    assert "symbolic link" in verdict.reason  # the swap was made, and refused
    assert verdict.status == "failed" and token not in verdict.reason


def test_a_junit_report_declaring_entities_is_refused_unexpanded() -> None:
    bomb = ('<!DOCTYPE t [<!ENTITY a "' + "x" * 1000 + '">'
            + "".join(f'<!ENTITY {chr(98 + i)} "' + f"&{chr(97 + i)};" * 10 + '">' for i in range(8))
            + ']><testsuite><testcase name="&i;"/></testsuite>')  # 10^8 KB if expanded
    with pytest.raises(ValueError, match="declares a document type"):
        parse_junit(bomb.encode())
    with pytest.raises(ValueError, match="declares a document type"):  # however it is encoded
        parse_junit(bomb.replace("<!DOCTYPE", '<?xml version="1.0" encoding="utf-16"?><!DOCTYPE', 1).encode("utf-16"))


def _repository(workspace: Path) -> None:
    (workspace / "tests").mkdir(parents=True)
    (workspace / "tests" / "test_app.py").write_text("def test_real():\n    assert 1 + 1 == 2\n" * 20)
    (workspace / "app.py").write_text("X = 1\n")
    _git(workspace, "init", "-q")
    _git(workspace, "add", ".")
    _git(workspace, "commit", "-qm", "base")


def test_a_diff_output_swapped_by_the_submissions_clean_filter_never_reads_a_host_file(
    tmp_path: Path, runner: str
) -> None:
    token = "SECRET" + secrets.token_hex(6)
    secret = _secret(tmp_path, token)
    workspace = tmp_path / "hostile"
    _repository(workspace)
    marker = tmp_path / "filter-ran"
    # The filter runs while git diffs (in the sandbox, on the workspace copy): it replaces every
    # file named changes.diff it can find with a link to the secret.
    swap = (f"sh -c 'touch {marker} 2>/dev/null; for f in $HOME/report-*/changes.diff $TMPDIR/report-*/changes.diff; "
            f"do rm -f $f; ln -s {secret} $f; done; cat'")
    _git(workspace, "config", "filter.swap.clean", swap)
    (workspace / ".git" / "info" / "attributes").write_text("* filter=swap\n")
    (workspace / "app.py").write_text("X = 2\n")
    with open_workspace(str(workspace), None, _settings(tmp_path, runner)) as ws:
        subprocess.run(["git", "-c", f"filter.swap.clean={swap}", "diff", "--quiet"], cwd=workspace)  # proof it runs
        assert marker.exists()
        marker.unlink()
        diff = ws.diff("HEAD")
    assert token not in diff and "+X = 2" in diff and not marker.exists()  # the submission's filter never ran


def test_a_diff_cannot_be_forged_by_attributes_excludes_or_config(tmp_path: Path, runner: str) -> None:
    workspace = tmp_path / "hostile"
    _repository(workspace)
    (workspace / "tests" / "test_app.py").write_text("")  # the real tests gutted
    (workspace / "cheat.py").write_text("import os\n")  # a new file
    git_dir = workspace / ".git"
    (git_dir / "info" / "attributes").write_text("* filter=hide diff=hide -text\n")
    (git_dir / "info" / "exclude").write_text("cheat.py\n")
    _git(workspace, "config", "filter.hide.clean", "cat tests/test_app.py.orig 2>/dev/null || cat")
    _git(workspace, "config", "diff.hide.command", "true")
    _git(workspace, "config", "core.excludesFile", str(git_dir / "info" / "exclude"))
    forged = subprocess.run(["git", "status", "--porcelain"], cwd=workspace, capture_output=True, text=True).stdout
    assert "cheat.py" not in forged  # what the submission's own git shows: the new file hidden
    with open_workspace(str(workspace), None, _settings(tmp_path, runner)) as ws:
        diff = ws.diff("HEAD")
    assert "+++ b/cheat.py" in diff and "-def test_real():" in diff


def _settings(tmp_path: Path, runner: str):
    return Arena({"command_runner": runner, "workspace_root": str(tmp_path), **LIMITS},
                 autoload=False).scorer.workspace_settings()


def _outside_repository(tmp_path: Path, token: str) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(token)
    _git(outside, "init", "-q")
    _git(outside, "add", ".")
    _git(outside, "commit", "-qm", "host")
    return outside


def _escape(tmp_path: Path, how: str, token: str) -> Path:
    root = tmp_path / "root"
    workspace = root / "hostile"
    workspace.mkdir(parents=True)
    outside = _outside_repository(tmp_path, token)
    if how == "gitfile":
        (workspace / ".git").write_text(f"gitdir: {outside / '.git'}\n")
    elif how == "symlinked .git":
        (workspace / ".git").symlink_to(outside / ".git")
    elif how == "alternates":
        _repository(workspace)
        (workspace / ".git" / "objects" / "info" / "alternates").write_text(f"{outside / '.git' / 'objects'}\n")
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=outside, capture_output=True, text=True).stdout
        (workspace / ".git" / "refs" / "heads" / "host").write_text(head)
    elif how == "commondir":
        _repository(workspace)
        (workspace / ".git" / "commondir").write_text(str(outside / ".git"))
    elif how == "fifo config":
        _repository(workspace)
        (workspace / ".git" / "config").unlink()
        os.mkfifo(workspace / ".git" / "config")
    return root


@pytest.mark.parametrize("how", ["gitfile", "symlinked .git", "alternates", "commondir", "fifo config"])
def test_a_workspace_ref_cannot_reach_another_repository(tmp_path: Path, how: str) -> None:
    token = "SECRET" + secrets.token_hex(6)
    root = _escape(tmp_path, how, token)
    # Without the checks, git itself follows these: proof the repository leads outside.
    if how in ("gitfile", "symlinked .git", "alternates"):
        shown = subprocess.run(["git", "-C", str(root / "hostile"), "show", f"{'host' if how == 'alternates' else 'HEAD'}:secret.txt"],
                               capture_output=True, text=True).stdout
        assert shown == token
    arena = Arena({"workspace_root": str(root)}, autoload=False)
    task = {"id": "t", "success_criteria": [{"type": "file_contains", "file_path": "secret.txt", "pattern": "SECRET"}]}
    ref = "host" if how == "alternates" else "HEAD"
    [evaluation] = arena.evaluate_many([{"id": "hostile", "task_id": "t", "total_tokens": 1, "tool_calls": 1,
                                         "workspace": "hostile", "workspace_ref": ref}], {"t": task})
    verdict = evaluation.criteria[0]
    assert verdict.status == "error" and token not in verdict.reason and str(tmp_path) not in verdict.reason
    assert "refused" in verdict.reason or "outside the workspace root" in verdict.reason


def test_a_git_bomb_is_refused_before_it_is_checked_out(tmp_path: Path) -> None:
    """A few kilobytes of objects that name one blob 10^6 times in nested trees."""
    root = tmp_path / "root"
    workspace = root / "bomb"
    workspace.mkdir(parents=True)
    _git(workspace, "init", "-q")

    def git_out(*argv: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", *argv], cwd=workspace, input=data, capture_output=True, check=True).stdout.decode().strip()

    blob = git_out("hash-object", "-w", "--stdin", data=b"x" * 1000)
    entry = f"100644 blob {blob}\t"
    tree = git_out("mktree", data="".join(f"{entry}f{i}\n" for i in range(10)).encode())
    for _ in range(5):
        tree = git_out("mktree", data="".join(f"040000 tree {tree}\td{i}\n" for i in range(10)).encode())
    commit = git_out("-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", tree, "-m", "bomb")
    git_out("update-ref", "refs/heads/main", commit)
    size = sum(f.stat().st_size for f in (workspace / ".git").rglob("*") if f.is_file())
    assert size < 200_000  # a small repository...
    arena = Arena({"workspace_root": str(root)}, autoload=False)
    task = {"id": "t", "success_criteria": [{"type": "file_exists", "file_path": "d0/f0"}]}
    [evaluation] = arena.evaluate_many([{"id": "bomb", "task_id": "t", "total_tokens": 1, "tool_calls": 1,
                                         "workspace": "bomb", "workspace_ref": "main"}], {"t": task})
    verdict = evaluation.criteria[0]
    assert verdict.status == "error" and "more than 50,000 files" in verdict.reason  # ...of a million files


def test_a_program_found_outside_usr_runs_sandboxed_with_its_own_folder_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A criterion's program on the host's PATH outside /usr (an /opt-style installation) runs in
    the sandbox with its installation bound read-only, and nothing beside it; one under a home
    directory, or not on the PATH, does not start, and the reason says what to do."""
    from arena_core.workspace.confined import scrubbed_environment
    from arena_plugins.sandbox import SandboxRunner

    try:
        Arena({"command_runner": "sandbox"}, autoload=False)
    except ArenaError as exc:
        pytest.skip(f"the sandbox cannot run here: {exc}")
    opt = tmp_path / "opt"
    (opt / "tool" / "bin").mkdir(parents=True)
    (opt / "tool" / "share").mkdir()
    (opt / "tool" / "share" / "data").write_text("the tool's own data\n")
    secret = _secret(opt, "SECRET" + secrets.token_hex(6))  # beside the installation, not in it
    program = opt / "tool" / "bin" / "checktool"
    program.write_text(f"#!/bin/sh\ncat {opt}/tool/share/data\ncat {secret} || echo no secret\n")
    program.chmod(0o755)
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "hometool").write_text("#!/bin/sh\necho ran\n")
    (home / ".local" / "bin" / "hometool").chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    workspace, scratch = tmp_path / "ws", tmp_path / "scratch"
    workspace.mkdir()
    scratch.mkdir()
    env = scrubbed_environment(scratch)
    env["PATH"] = f"{opt / 'tool' / 'bin'}:{home / '.local' / 'bin'}:{env['PATH']}"
    assert subprocess.run(["checktool"], env=env, capture_output=True, text=True).stdout.count("SECRET") == 1  # on the host

    def run(name: str):
        return SandboxRunner(256 << 20, 16 << 20, 32).run([name], cwd=workspace, env=env, timeout=30, output_limit=10_000)

    ran = run("checktool")
    assert ran.exit_code == 0 and "the tool's own data" in ran.output
    assert "no secret" in ran.output and "SECRET" not in ran.output
    refused = run("hometool")
    assert refused.exit_code is None and "under a folder the sandbox never exposes" in refused.error
    assert "install it under /usr or /opt" in refused.error
    missing = run("no-such-tool")
    assert missing.exit_code is None and "is not on the PATH the checks run with" in missing.error
