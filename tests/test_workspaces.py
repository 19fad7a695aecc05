"""Criterion checkers on real temporary workspaces: files, regular expressions, byte-compilation,
real pytest runs with JUnit reports, hanging commands, escaping paths and crashing checkers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arena_core import Arena, ValidationError, hookimpl
from arena_core.registry.manager import get_plugin_manager
from arena_core.workspace.confined import CommandResult, WorkspaceError
from arena_core.workspace.opening import open_workspace

PY = sys.executable
RUN = {"id": "run-1", "task_id": "t", "total_tokens": 4000, "tool_calls": 6}
PYTEST = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml={junit_xml}"]


def task(*criteria: dict) -> dict:
    return {"id": "t", "success_criteria": list(criteria)}


def check(arena: Arena, workspace: Path | None, *criteria: dict, **fields: object):
    run = {**RUN, **fields, **({"workspace": str(workspace)} if workspace is not None else {})}
    return arena.evaluate(run, task(*criteria), arena.default_baseline)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run where the workspaces are: unset, ``workspace_root`` is the working directory."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def arena() -> Arena:
    return Arena(autoload=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "README.md").write_text("# Demo\nLicense: MIT\n")
    return root


# ---------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------


def test_file_exists_looks_at_the_workspace_and_without_one_at_the_claims(arena: Arena, workspace: Path) -> None:
    present, absent = {"type": "file_exists", "file_path": "src/app.py"}, {"type": "file_exists", "file_path": "src/b.py"}
    ev = check(arena, workspace, present, absent, files_created=["src/b.py"])  # the claim is ignored
    assert [c.status for c in ev.criteria] == ["passed", "failed"]
    assert ev.criteria[1].reason == "file 'src/b.py' does not exist in the workspace"
    assert ev.correctness_score == 50.0
    claims = check(arena, None, present, absent, files_created=["src/b.py"])
    assert [c.status for c in claims.criteria] == ["failed", "passed"]


def test_file_contains_searches_with_a_regular_expression(arena: Arena, workspace: Path) -> None:
    ev = check(arena, workspace,
               {"type": "file_contains", "file_path": "README.md", "pattern": r"^License: (MIT|Apache-2\.0)$"},
               {"type": "file_contains", "file_path": "src/app.py", "pattern": r"def sub\("},
               {"type": "file_contains", "file_path": "missing.txt", "pattern": "x"})
    assert [c.status for c in ev.criteria] == ["passed", "failed", "failed"]
    assert ev.criteria[1].reason == "file 'src/app.py' has no match for 'def sub\\\\('"
    assert ev.criteria[2].reason == "file 'missing.txt' does not exist in the workspace"


def test_a_bad_pattern_is_an_error_in_the_task_not_a_failed_criterion(arena: Arena, workspace: Path) -> None:
    with pytest.raises(ValidationError, match=r"task 't': success_criteria.0.pattern: expected a regular expression RE2 accepts, no backreferences or lookaround \(missing \): \(unclosed\)"):
        check(arena, workspace, {"type": "file_contains", "file_path": "README.md", "pattern": "(unclosed"})


def test_without_a_workspace_workspace_criteria_are_not_checkable_never_passed(arena: Arena) -> None:
    ev = check(arena, None, {"type": "file_contains", "file_path": "a", "pattern": "x"}, {"type": "code_compiles"},
               {"type": "command_succeeds", "command": ["true"]}, {"type": "tests_pass", "command": PYTEST})
    assert [c.status for c in ev.criteria] == ["not_checkable"] * 4
    assert ev.criteria[0].reason == "needs the submission's workspace; the submission names none"
    assert ev.correctness_score == 0.0
    # The batch path agrees with the per-record path on this.
    batch = arena.evaluate_many([{**RUN, "id": f"r{i}"} for i in range(3)], {"t": task({"type": "code_compiles"})})
    assert {c.status for e in batch for c in e.criteria} == {"not_checkable"}


# ---------------------------------------------------------------------------
# safety: paths
# ---------------------------------------------------------------------------


def test_paths_leaving_the_workspace_are_refused_with_a_reason(arena: Arena, workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2\n")
    (workspace / "notes.txt").symlink_to(secret)
    (workspace / "etc").symlink_to("/etc")
    ev = check(arena, workspace,
               {"type": "file_exists", "file_path": "../secret.txt"},
               {"type": "file_contains", "file_path": "notes.txt", "pattern": "password"},
               {"type": "file_exists", "file_path": "etc/hostname"},
               {"type": "file_exists", "file_path": str(secret)},
               {"type": "file_exists", "file_path": "src/../README.md"})
    statuses = [(c.status, c.reason) for c in ev.criteria]
    assert statuses[0] == ("failed", "path '../secret.txt' leaves the workspace ('..' is not allowed)")
    assert statuses[1][0] == "failed" and statuses[1][1].startswith("path 'notes.txt' resolves outside the workspace")
    assert statuses[2][0] == "failed" and "resolves outside the workspace" in statuses[2][1]
    assert statuses[3] == ("failed", f"path {str(secret)!r} is absolute; criterion paths are relative to the workspace")
    assert statuses[4][0] == "failed" and "'..' is not allowed" in statuses[4][1]
    assert ev.correctness_score == 0.0


def test_a_symlink_is_never_followed_even_inside_the_workspace(arena: Arena, workspace: Path) -> None:
    """A link that points inside now could point outside by the time the file is opened."""
    (workspace / "latest.py").symlink_to(workspace / "src" / "app.py")
    ev = check(arena, workspace, {"type": "file_contains", "file_path": "latest.py", "pattern": "def add"})
    assert ev.criteria[0].status == "failed" and "symbolic link" in ev.criteria[0].reason
    assert str(workspace) not in ev.criteria[0].reason


def test_the_workspace_root_setting_confines_workspaces(workspace: Path, tmp_path: Path) -> None:
    confined = Arena({"workspace_root": str(tmp_path / "elsewhere")}, autoload=False)
    (tmp_path / "elsewhere").mkdir()
    ev = check(confined, workspace, {"type": "file_exists", "file_path": "src/app.py"}, {"type": "no_errors"})
    assert ev.criteria[0].status == "error" and "lies outside the workspace root" in ev.criteria[0].reason
    assert ev.criteria[1].status == "passed"  # judged on the claims, as without a workspace
    inside = Arena({"workspace_root": str(tmp_path)}, autoload=False)
    assert check(inside, Path("work"), {"type": "file_exists", "file_path": "src/app.py"}).criteria[0].status == "passed"


def test_a_missing_workspace_is_reported_on_the_criteria_that_need_it(arena: Arena, tmp_path: Path) -> None:
    ev = check(arena, tmp_path / "nope", {"type": "file_exists", "file_path": "a"}, {"type": "no_errors"})
    assert ev.criteria[0].status == "error"
    assert ev.criteria[0].reason == f"workspace unusable: workspace {str(tmp_path / 'nope')!r} is not a directory"
    assert ev.criteria[1].status == "passed"


# ---------------------------------------------------------------------------
# code_compiles
# ---------------------------------------------------------------------------


def test_code_compiles_byte_compiles_python_without_running_it(arena: Arena, workspace: Path) -> None:
    (workspace / "src" / "side_effect.py").write_text(f"open({str(workspace / 'ran')!r}, 'w').write('x')\n")
    assert check(arena, workspace, {"type": "code_compiles"}).criteria[0].status == "passed"
    assert not (workspace / "ran").exists()
    (workspace / "src" / "broken.py").write_text("def f(:\n    pass\n")
    ev = check(arena, workspace, {"type": "code_compiles"})
    assert ev.criteria[0].status == "failed" and ev.criteria[0].reason.startswith("src/broken.py:1: ")
    only_app = check(arena, workspace, {"type": "code_compiles", "paths": ["src/app.py"]})
    assert only_app.criteria[0].status == "passed"
    none = check(arena, workspace, {"type": "code_compiles", "paths": ["**/*.rs"]})
    assert none.criteria[0].status == "not_checkable"


def test_code_compiles_with_the_tasks_own_command(arena: Arena, workspace: Path) -> None:
    ok = {"type": "code_compiles", "command": [PY, "-c", "import ast, sys; ast.parse(open('src/app.py').read())"]}
    bad = {"type": "code_compiles", "command": [PY, "-c", "raise SystemExit('type errors: 3')"]}
    ev = check(arena, workspace, ok, bad)
    assert [c.status for c in ev.criteria] == ["passed", "failed"]
    assert ev.criteria[1].reason == "exit code 1: type errors: 3"


# ---------------------------------------------------------------------------
# tests_pass: real pytest runs
# ---------------------------------------------------------------------------


def _suite(root: Path, failing: int, passing: int, skipped: int = 0) -> None:
    lines = ["import pytest", ""]
    lines += [f"def test_ok_{i}():\n    assert 1 + 1 == 2\n" for i in range(passing)]
    lines += [f"def test_bad_{i}():\n    assert 1 + 1 == 3\n" for i in range(failing)]
    lines += [f"@pytest.mark.skip(reason='later')\ndef test_skip_{i}():\n    pass\n" for i in range(skipped)]
    (root / "test_solution.py").write_text("\n".join(lines))


def test_a_passing_suite_earns_full_credit(arena: Arena, workspace: Path) -> None:
    _suite(workspace, failing=0, passing=3)
    ev = check(arena, workspace, {"type": "tests_pass", "command": PYTEST})
    assert (ev.criteria[0].status, ev.criteria[0].credit) == ("passed", 1.0)


def test_a_failing_suite_earns_partial_credit_from_the_junit_report(arena: Arena, workspace: Path) -> None:
    _suite(workspace, failing=1, passing=2, skipped=1)
    # A report planted in the workspace is never read: the command writes to a fresh path.
    (workspace / "junit.xml").write_text('<testsuite><testcase name="fake"/></testsuite>')
    ev = check(arena, workspace, {"type": "tests_pass", "command": PYTEST}, {"type": "no_errors"})
    result = ev.criteria[0]
    assert (result.status, result.credit) == ("failed", 2 / 3)
    assert result.reason == "2 of 3 tests passed (1 skipped)"
    assert ev.correctness_score == round((2 / 3 + 1) / 2 * 100, 2)


def test_empty_ini_keeps_the_workspace_pytest_configuration_out(arena: Arena, workspace: Path) -> None:
    """A workspace ``pytest.ini`` that hides every test would make the suite report nothing;
    ``-c {empty_ini}`` (an empty ``pytest.ini`` outside the workspace) keeps it out."""
    _suite(workspace, failing=1, passing=2)
    (workspace / "pytest.ini").write_text("[pytest]\npython_functions = nothing_matches_*\n")
    hidden = check(arena, workspace, {"type": "tests_pass", "command": PYTEST})
    assert hidden.criteria[0].reason == "no test ran (0 skipped)"  # the planted file was read
    kept_out = check(arena, workspace, {"type": "tests_pass", "command": [*PYTEST, "-c", "{empty_ini}", "--rootdir", "."]})
    assert kept_out.criteria[0].reason == "2 of 3 tests passed (0 skipped)"
    # The empty configuration lives outside the workspace: no other .ini appears in it, and the
    # planted one is untouched. (Plugins of the host's pytest may add their own directories,
    # such as pytest-benchmark's .benchmarks, so the listing is not compared whole.)
    assert sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*.ini")) == ["pytest.ini"]
    assert (workspace / "pytest.ini").read_text() == "[pytest]\npython_functions = nothing_matches_*\n"


def test_without_a_report_the_exit_status_decides(arena: Arena, workspace: Path) -> None:
    _suite(workspace, failing=1, passing=2)
    command = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    ev = check(arena, workspace, {"type": "tests_pass", "command": command})
    assert ev.criteria[0].status == "failed" and ev.criteria[0].reason.startswith("exit code 1: ")
    assert "1 failed, 2 passed" in ev.criteria[0].reason


def test_without_a_command_tests_pass_uses_the_reported_results(arena: Arena, workspace: Path) -> None:
    ev = check(arena, workspace, {"type": "tests_pass"}, tests_passed=3, tests_total=4)
    assert (ev.criteria[0].status, ev.criteria[0].credit) == ("failed", 0.75)


def test_a_command_must_be_a_list_of_arguments(arena: Arena, workspace: Path) -> None:
    with pytest.raises(ValidationError, match=r"task 't': success_criteria.0.command: expected a list of arguments"):
        check(arena, workspace, {"type": "command_succeeds", "command": "pytest && rm -rf /"})


# ---------------------------------------------------------------------------
# command safety: timeout, output cap, environment, no shell
# ---------------------------------------------------------------------------


def test_a_hanging_command_is_killed_at_the_timeout(arena: Arena, workspace: Path) -> None:
    # The command starts a grandchild that would outlive it; the whole group is killed.
    hang = [PY, "-c", "import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
                      "open('grandchild.pid', 'w').write(str(p.pid)); time.sleep(600)"]
    started = time.monotonic()
    ev = check(arena, workspace, {"type": "command_succeeds", "command": hang, "timeout": 2})
    assert time.monotonic() - started < 60  # not the 600 s the command asked for
    assert (ev.criteria[0].status, ev.criteria[0].reason) == ("failed", "timed out after 2 s (killed)")
    grandchild = int((workspace / "grandchild.pid").read_text())
    for _ in range(50):
        if not _alive(grandchild):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the command's child {grandchild} survived the timeout")


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a parent that may never reap it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def test_output_beyond_the_limit_is_discarded(workspace: Path) -> None:
    from arena_plugins.runners import LocalRunner

    result = LocalRunner().run([PY, "-c", "print('x' * 5_000_000); print('last')"], cwd=workspace,
                               env={"PATH": os.environ["PATH"]}, timeout=60, output_limit=1000)
    assert result.exit_code == 0 and result.truncated and len(result.output) == 1000


def test_commands_get_a_scrubbed_environment_and_no_shell(arena: Arena, workspace: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_TEST_SECRET", "hunter2")
    leak = [PY, "-c", "import os, sys; sys.exit('leaked' if 'ARENA_TEST_SECRET' in os.environ else 0)"]
    no_shell = [PY, "-c", "import sys; sys.exit(0 if sys.argv[1] == '$HOME; echo hi' else 1)", "$HOME; echo hi"]
    cwd = [PY, "-c", f"import os, sys; sys.exit(0 if os.getcwd() == {str(workspace.resolve())!r} else 1)"]
    ev = check(arena, workspace, *({"type": "command_succeeds", "command": c} for c in (leak, no_shell, cwd)))
    assert [c.status for c in ev.criteria] == ["passed"] * 3


def test_a_program_that_does_not_exist_fails_with_a_reason(arena: Arena, workspace: Path) -> None:
    ev = check(arena, workspace, {"type": "command_succeeds", "command": ["no-such-program-xyz"]})
    assert ev.criteria[0].status == "failed"
    assert ev.criteria[0].reason.startswith("cannot run 'no-such-program-xyz'")


def test_blocking_the_runners_plugin_turns_commands_off(workspace: Path) -> None:
    arena = Arena(autoload=False, blocked=("runners",))
    touch = [PY, "-c", "open('ran', 'w')"]
    ev = check(arena, workspace, {"type": "command_succeeds", "command": touch})
    assert ev.criteria[0].reason == "commands are disabled: no command runner is registered"
    assert not (workspace / "ran").exists()


# ---------------------------------------------------------------------------
# many submissions: crashes, concurrency
# ---------------------------------------------------------------------------


def test_a_crashing_checker_costs_its_criterion_never_the_batch(workspace: Path) -> None:
    class Flaky:
        type = "flaky"

        def check(self, submission, criterion, task):
            return True

        def check_workspace(self, workspace, submission, criterion, task):
            if submission.id == "r1":
                raise RuntimeError("vendor bug")
            return True

    class Plugin:
        @hookimpl
        def arena_register_criterion_checkers(self):
            return [Flaky()]

    pm = get_plugin_manager(autoload=False)
    pm.register(Plugin(), name="flaky")
    arena = Arena(plugin_manager=pm)
    runs = [{**RUN, "id": f"r{i}", "workspace": str(workspace)} for i in range(3)]
    evaluations = arena.evaluate_many(runs, {"t": task({"type": "flaky"}, {"type": "file_exists", "file_path": "README.md"})})
    assert [e.submission_id for e in evaluations] == ["r0", "r1", "r2"]
    assert [e.criteria[0].status for e in evaluations] == ["passed", "error", "passed"]
    assert evaluations[1].criteria[0].reason == "RuntimeError: vendor bug"
    assert evaluations[1].criteria[1].status == "passed" and evaluations[1].correctness_score == 50.0


def _counting_arena(concurrency: int) -> tuple[Arena, list[int]]:
    active, peak, lock = [0], [0], threading.Lock()

    class Slow:
        name = "slow"

        def run(self, argv, *, cwd, env, timeout, output_limit):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            time.sleep(0.2)
            with lock:
                active[0] -= 1
            return CommandResult(0 if argv[-1] == "ok" else 1, "", 0.2)

    class Plugin:
        @hookimpl
        def arena_register_command_runners(self):
            return [Slow()]

    pm = get_plugin_manager(autoload=False)
    pm.register(Plugin(), name="slow")
    return Arena({"command_runner": "slow", "check_concurrency": concurrency}, plugin_manager=pm), peak


def test_workspaces_are_checked_concurrently_up_to_the_limit(workspace: Path) -> None:
    tasks = {"t": task({"type": "command_succeeds", "command": ["check", "ok"]}),
             "u": {"id": "u", "success_criteria": [{"type": "command_succeeds", "command": ["check", "bad"]}]}}
    runs = [{**RUN, "id": f"r{i}", "task_id": "tu"[i % 2], "workspace": str(workspace)} for i in range(8)]
    results = {}
    for concurrency in (1, 3):
        arena, peak = _counting_arena(concurrency)
        results[concurrency] = arena.evaluate_many(runs, tasks, evaluated_at="2026-01-01T00:00:00+00:00")
        assert peak[0] == 1 if concurrency == 1 else 1 < peak[0] <= 3
    assert [e.correctness_score for e in results[3]] == [100.0, 0.0] * 4
    assert results[1] == results[3]


def test_the_pipeline_checks_workspaces_too(arena: Arena, workspace: Path) -> None:
    import asyncio

    from arena_core.store import MemoryStore

    runs = [{**RUN, "id": f"r{i}", "workspace": str(workspace)} for i in range(2)]
    result = asyncio.run(arena.process_batch(runs, store=MemoryStore(),
                                             tasks={"t": task({"type": "file_exists", "file_path": "README.md"})}))
    assert [e.criteria[0].status for e in result.evaluations] == ["passed", "passed"]


# ---------------------------------------------------------------------------
# git workspaces
# ---------------------------------------------------------------------------

git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


@git
def test_a_git_ref_is_checked_as_it_was_committed(arena: Arena, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "app.py").write_text("print('v1')\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "v1")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "app.py").write_text("print('v2'\n")  # a syntax error, committed second
    (repo / "extra.py").write_text("x = 1\n")
    _git(repo, "commit", "-qam", "v2")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "extra")
    criteria = ({"type": "file_exists", "file_path": "extra.py"}, {"type": "code_compiles"})
    at_first = check(arena, repo, *criteria, workspace_ref=first)
    at_head = check(arena, repo, *criteria, workspace_ref="HEAD")
    assert [c.status for c in at_first.criteria] == ["failed", "passed"]
    assert [c.status for c in at_head.criteria] == ["passed", "failed"]
    assert _git(repo, "status", "--porcelain") == ""  # the repository itself is untouched
    bad = check(arena, repo, *criteria, workspace_ref="--upload-pack=touch /tmp/x")
    assert bad.criteria[0].status == "error" and "is not a git ref" in bad.criteria[0].reason
    unknown = check(arena, repo, *criteria, workspace_ref="no-such-branch")
    assert unknown.criteria[0].status == "error" and "cannot check out 'no-such-branch'" in unknown.criteria[0].reason


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("**/*.py", "a.py", True), ("**/*.py", "src/pkg/a.py", True), ("src/**/*.py", "src/a.py", True),
    ("src/**/*.py", "src/x/y/a.py", True), ("src/**/*.py", "lib/a.py", False), ("*.py", "src/a.py", False),
    ("src/*.py", "src/x/a.py", False), ("test_?.py", "test_1.py", True), ("a.py", "xa.py", False),
])
def test_glob_patterns_match_whole_relative_paths(pattern: str, path: str, matches: bool) -> None:
    from arena_core.workspace.confined import glob_pattern

    assert bool(glob_pattern(pattern).fullmatch(path)) is matches


# ---------------------------------------------------------------------------
# Workspace.diff, the helper for checkers that judge what an agent changed
# ---------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_shows_changed_and_new_files_and_leaves_the_index_alone(arena: Arena, workspace: Path) -> None:
    _git(workspace, "init", "-q")
    _git(workspace, "add", ".")
    _git(workspace, "commit", "-qm", "base")
    (workspace / "src" / "app.py").write_text("def add(a, b):\n    return b + a\n")
    (workspace / "src" / "new.py").write_text("X = 1\n")
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "noise.log").write_text("ignored\n")
    index_before = (workspace / ".git" / "index").read_bytes()
    with open_workspace(str(workspace), None, arena.scorer.workspace_settings()) as ws:
        whole = ws.diff("HEAD")
        only_src = ws.diff("HEAD", ["src/new.py"])
        with pytest.raises(WorkspaceError, match="is not a git ref"):
            ws.diff("--output=/tmp/elsewhere")
        with pytest.raises(WorkspaceError, match="git diff nope: exit code 128"):
            ws.diff("nope")
        with pytest.raises(WorkspaceError, match="leaves the workspace"):
            ws.diff("HEAD", ["../x"])
        with pytest.raises(WorkspaceError, match="more than the limit of 10"):
            ws.diff("HEAD", limit=10)
    assert "-    return a + b\n+    return b + a\n" in whole
    assert "new file mode 100644" in whole and "+++ b/src/new.py\n@@ -0,0 +1 @@\n+X = 1\n" in whole
    assert "noise.log" not in whole and "+++ b/.gitignore" in whole
    assert only_src.startswith("diff --git a/src/new.py b/src/new.py") and "app.py" not in only_src
    assert (workspace / ".git" / "index").read_bytes() == index_before


def test_the_checkers_world_is_what_the_guide_says(arena: Arena, workspace: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/writing-a-checker.md, "The checker's world": the environment's exact variables,
    stdout and stderr interleaved in ``output``, and what a ``workspace_ref`` clone holds."""

    monkeypatch.setenv("ARENA_TEST_TOKEN", "secret")
    show_env = [PY, "-c", "import json, os; print(json.dumps(dict(os.environ)))"]
    both = [PY, "-c", "import sys; print('out', flush=True); print('err', file=sys.stderr, flush=True); print('out2')"]
    with open_workspace(str(workspace), None, arena.scorer.workspace_settings()) as ws:
        env = json.loads(ws.run(show_env, env={"TASK_VAR": "1"}).output)
        home = Path(env["HOME"])
        assert home.is_dir() and not home.is_relative_to(workspace) and env["TMPDIR"] == env["HOME"]
        mixed = ws.run(both)
    assert not home.exists()  # removed after the submission
    assert set(env) == {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED",
                        "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_TERMINAL_PROMPT", "TASK_VAR", "ARENA_RUN_MARK"}
    assert (env["PATH"], env["LANG"], env["LC_ALL"], env["GIT_CONFIG_GLOBAL"]) == (
        os.environ["PATH"], "C.UTF-8", "C.UTF-8", os.devnull)
    assert mixed.output == "out\nerr\nout2\n" and mixed.succeeded

    if shutil.which("git") is None:
        return
    repo = tmp_path / "repo"
    shutil.copytree(workspace, repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "first")
    _git(repo, "branch", "feature")
    (repo / "later.txt").write_text("x\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "second")
    (repo / "untracked.txt").write_text("not committed\n")
    (repo / "README.md").write_text("changed, not committed\n")
    with open_workspace(str(repo), "feature", arena.scorer.workspace_settings()) as ws:
        assert ws.root != repo.resolve()
        log = ws.run(["git", "log", "--all", "--format=%s"]).output.split()
        branches = ws.run(["git", "branch", "-r", "--format=%(refname:short)"]).output.split()
        head = ws.run(["git", "rev-parse", "--abbrev-ref", "HEAD"]).output.strip()
        assert sorted(log) == ["first", "second"] and {"origin/main", "origin/feature"} <= set(branches)
        assert head == "HEAD"  # detached at the ref
        assert not ws.is_file("later.txt") and not ws.is_file("untracked.txt")
        assert ws.read_text("README.md") == "# Demo\nLicense: MIT\n"


def test_a_failed_commands_reason_keeps_its_last_lines_bounded() -> None:
    """A test runner prints the failure above its summary: the last line alone (`1 failed`) is
    not enough to act on; the reason keeps the last lines, within a bound."""
    output = "\n".join(f"line {i}" for i in range(20)) + "\n\n"
    assert CommandResult(1, output, 0.1).describe(5) == "exit code 1: " + " | ".join(f"line {i}" for i in range(12, 20))
    long = CommandResult(1, "\n".join("x" * 500 for _ in range(8)), 0.1).describe(5)
    assert long.startswith("exit code 1: ...") and len(long) == len("exit code 1: ...") + 800
    assert CommandResult(None, "line", 5.0, timed_out=True).describe(5) == "timed out after 5 s (killed): line"
