"""The vendor checker of docs/writing-a-checker.md (examples/arena-license-checker) is a real
package: built and installed with pip, found through its entry point, and used by `arena score`
on a real workspace, exactly as the guide walks through it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "examples" / "arena-license-checker"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    source = shutil.copytree(PACKAGE, tmp_path_factory.mktemp("src") / "pkg")  # builds leave files behind
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(source)],
                   check=True, capture_output=True, text=True)
    return target


def arena(site: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    environ.update(env, PYTHONPATH=str(site))
    return subprocess.run([sys.executable, "-m", "arena_core", *args], capture_output=True, text=True, cwd=cwd, env=environ)


def test_the_installed_checker_is_listed(site: Path, tmp_path: Path) -> None:
    listed = json.loads(arena(site, "plugins", "--json", cwd=tmp_path).stdout)
    assert [(p["name"], p["distribution"], p["version"], p["components"]) for p in listed] == [
        ("license", "arena-license-checker", "0.1.0", {"checkers": ["license_header"]})
    ]


def test_the_installed_checker_scores_workspaces_end_to_end(site: Path, tmp_path: Path) -> None:
    for name, header in (("good", True), ("partial", False)):
        src = tmp_path / name / "src"
        src.mkdir(parents=True)
        (src / "a.py").write_text("# SPDX-License-Identifier: MIT\nx = 1\n")
        (src / "b.py").write_text(("# SPDX-License-Identifier: MIT\n" if header else "") + "y = 2\n")
    tasks = {"t1": {"id": "t1", "category": "backend_development", "success_criteria": [
        {"type": "license_header", "license": "MIT", "paths": ["src/**/*.py"]},
        {"type": "file_exists", "file_path": "src/a.py"},
    ]}}
    runs = [{"id": name, "task_id": "t1", "total_tokens": 1000, "tool_calls": 4, "workspace": str(tmp_path / name)}
            for name in ("good", "partial")] + [{"id": "claims-only", "task_id": "t1", "total_tokens": 1000,
                                                   "tool_calls": 4, "files_created": ["src/a.py"]}]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    done = arena(site, "score", "runs.jsonl", "--tasks", "tasks.json", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    by_id = {e["submission_id"]: e for e in map(json.loads, done.stdout.splitlines())}
    assert [c["status"] for c in by_id["good"]["criteria"]] == ["passed", "passed"]
    partial = by_id["partial"]["criteria"][0]
    assert (partial["status"], partial["credit"], partial["reason"]) == ("failed", 0.5, "no MIT header in src/b.py")
    assert by_id["partial"]["correctness_score"] == 75.0
    assert by_id["claims-only"]["criteria"][0]["status"] == "not_checkable"

    blocked = arena(site, "score", "runs.jsonl", "--tasks", "tasks.json", "-q", cwd=tmp_path,
                    ARENA_DISABLED_PLUGINS="license")
    assert blocked.returncode == 2
    assert "success_criteria.0.type: expected a registered criterion type" in blocked.stderr


def _blocks(lang: str) -> list[str]:
    import re

    return re.findall(rf"```{lang}\n(.*?)```", (ROOT / "docs" / "writing-a-checker.md").read_text(), flags=re.S)


def test_the_guide_shows_the_package_as_it_is() -> None:
    python = _blocks("python")
    assert python[0] == (PACKAGE / "arena_license_checker" / "__init__.py").read_text()
    assert [b for b in _blocks("toml") if "[project]" in b] == [(PACKAGE / "pyproject.toml").read_text()]


def test_the_guides_development_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(PACKAGE))
    exec(compile(_blocks("python")[1], "docs/writing-a-checker.md", "exec"), {"__name__": "guide"})


def test_the_guide_shows_what_arena_plugins_prints(site: Path, tmp_path: Path) -> None:
    shown = [b for b in _blocks("text") if "Registers" in b][0]
    assert arena(site, "plugins", cwd=tmp_path).stdout == shown


def test_the_operator_configures_the_checker_in_arena_toml(site: Path, tmp_path: Path) -> None:
    """``[plugins.license] header_lines`` reaches the installed checker; a bad value is refused
    with the file and key, as the guide shows."""
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "a.py").write_text('"""Module."""\n# SPDX-License-Identifier: MIT\n')
    tasks = {"t1": {"id": "t1", "success_criteria": [{"type": "license_header", "license": "MIT"}]}}
    run = {"id": "r", "task_id": "t1", "total_tokens": 1000, "tool_calls": 4, "workspace": str(tmp_path / "ws")}
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "runs.jsonl").write_text(json.dumps(run) + "\n")

    def status(toml: str) -> str:
        (tmp_path / "arena.toml").write_text(toml)
        done = arena(site, "score", "runs.jsonl", "--tasks", "tasks.json", "-q", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["criteria"][0]["status"]

    assert status("") == "passed"  # default: the header may be in the first five lines
    assert status("[plugins.license]\nheader_lines = 1\n") == "failed"
    (tmp_path / "arena.toml").write_text('[plugins.license]\nheader_lines = "10"\n')
    refused = arena(site, "score", "runs.jsonl", "--tasks", "tasks.json", "-q", cwd=tmp_path)
    assert refused.returncode == 2
    shown = next(line for line in (ROOT / "docs" / "writing-a-checker.md").read_text().splitlines()
                 if line.startswith("`Error: arena.toml: plugins.license"))
    assert refused.stderr == f"Error: {tmp_path / 'arena.toml'}: plugins.license.header_lines: expected a whole number, got '10'\n"
    assert shown == "`Error: arena.toml: plugins.license.header_lines: expected a whole number, got '10'`."
    (tmp_path / "arena.toml").unlink()
    disabled = arena(site, "--disable", "license_header", "score", "runs.jsonl", "--tasks", "tasks.json", "-q",
                     cwd=tmp_path)
    assert "'license_header' of plugin 'license' is disabled" in disabled.stderr


def test_the_installed_checker_without_a_batch_form_slows_only_the_tasks_that_use_it(site: Path, tmp_path: Path) -> None:
    script = """
import json
from arena_core import Arena
arena = Arena()
runs = [{"id": f"r{i}", "task_id": "t", "total_tokens": 1000 + i, "tool_calls": 3} for i in range(6)]
plain = arena.evaluate_many(runs, {"t": {"id": "t", "success_criteria": [{"type": "no_errors"}]}})
using = arena.evaluate_many(runs, {"t": {"id": "t", "success_criteria": [{"type": "license_header", "license": "MIT"}]}})
print(json.dumps([[p.name for p in arena.plugins(include_builtins=False)], plain.path, using.path, using.fallback_reason]))
"""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    environ["PYTHONPATH"] = str(site)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=environ)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        ["license"], "batch", "per-record", "checker 'license_header' has no batch form (check_batch); task 't' uses it"
    ]
