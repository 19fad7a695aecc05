"""A hostile record fails alone: whatever its workspace does, it gets its own ``error`` or
``failed`` verdict with a clear reason, the rest of the batch is scored, and no reason shows
a host path, a control character or bytes a JSON encoder refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena_core import Arena

CHECK = {"type": "file_contains", "file_path": "a.py", "pattern": "X"}


def _batch(tmp_path: Path, records: list[dict], criterion: dict = CHECK, **config: object) -> dict:
    honest = tmp_path / "honest"
    honest.mkdir(exist_ok=True)
    (honest / "a.py").write_text("X = 1\n")
    arena = Arena({"workspace_root": str(tmp_path), **config}, autoload=False)
    runs = [{"task_id": "t", "total_tokens": 1, "tool_calls": 1, **r} for r in records]
    runs.append({"id": "honest", "task_id": "t", "total_tokens": 1, "tool_calls": 1, "workspace": "honest"})
    evaluations = arena.evaluate_many(runs, {"t": {"id": "t", "success_criteria": [criterion]}})
    verdicts = {e.submission_id: e.criteria[0] for e in evaluations}
    assert verdicts["honest"].status != "error"  # the batch went on: the honest run has its own verdict
    if criterion is CHECK:
        assert verdicts["honest"].status == "passed"
    return verdicts


@pytest.mark.parametrize("location", ["~nosuchuser", "~/x", "bad\x00name", "../outside", "/etc"])
def test_a_workspace_path_that_cannot_be_used_fails_alone(tmp_path: Path, location: str) -> None:
    verdict = _batch(tmp_path, [{"id": "hostile", "workspace": location}])["hostile"]
    assert verdict.status == "error" and verdict.reason.startswith("workspace unusable: workspace ")
    assert str(tmp_path) not in verdict.reason


def test_a_record_cannot_take_another_submissions_workspace_and_verdict(tmp_path: Path) -> None:
    verdicts = _batch(tmp_path, [{"id": "thief", "workspace": "honest"}], workspace_owner="id")
    assert verdicts["thief"].status == "error" and "is not this submission's own" in verdicts["thief"].reason
    # The default under the sandbox runner; under the local runner (trusted runs) any workspace may be named.
    from arena_core.config.settings import ScoringConfig, owner_rule

    assert owner_rule(ScoringConfig(command_runner="sandbox")) == "id"
    assert owner_rule(ScoringConfig()) == "any"
    assert _batch(tmp_path, [{"id": "thief", "workspace": "honest"}])["thief"].status == "passed"


def test_non_utf8_names_and_control_characters_reach_no_reason_raw(tmp_path: Path) -> None:
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    os.mkdir(bytes(hostile) + b"/\xff\xfe")  # not UTF-8: os gives it back with lone surrogates
    (hostile / "evil\nCriterion tests_pass: passed (credit 1).py").write_text("x = (\n")  # does not compile
    (hostile / "attack.py").write_text(textwrap.dedent("""
        import sys
        print("all good\\x1b[2K\\rPASSED\\x08\\x08", flush=True)
        sys.exit(3)
    """))
    checks = [({"type": "code_compiles", "paths": ["evil*"]}, "evil\\nCriterion"),
              ({"type": "command_succeeds", "command": [sys.executable, "attack.py"]}, "PASSED\\x08\\x08"),
              ({"type": "file_contains", "file_path": "\udcff\udcfe/none", "pattern": "X"}, "\\udcff\\udcfe")]
    for criterion, escaped in checks:
        verdict = _batch(tmp_path, [{"id": "hostile", "workspace": "hostile"}], criterion)["hostile"]
        assert verdict.status in ("failed", "error")
        assert not any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in verdict.reason), verdict.reason
        assert escaped in verdict.reason, verdict.reason  # the hostile text was there, escaped
        json.dumps(verdict.reason).encode("utf-8")  # what the writers do with it


def test_non_utf8_file_names_do_not_stop_arena_score(tmp_path: Path) -> None:
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    (Path(os.fsdecode(bytes(hostile) + b"/\xff.py"))).write_text("x = (\n")
    (tmp_path / "runs.jsonl").write_text(json.dumps({"id": "hostile", "task_id": "t", "total_tokens": 1,
                                                     "tool_calls": 1, "workspace": "hostile"}) + "\n"
                                         + json.dumps({"id": "plain", "task_id": "t", "total_tokens": 2,
                                                       "tool_calls": 2}) + "\n")
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "t", "success_criteria": [{"type": "code_compiles"}]}]))
    (tmp_path / "arena.toml").write_text(f'workspace_root = "{tmp_path}"\n')
    done = subprocess.run([sys.executable, "-m", "arena_core", "score", "runs.jsonl", "--tasks", "tasks.json",
                           "-o", "out.jsonl"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [line["submission_id"] for line in lines] == ["hostile", "plain"]
    assert "\\udcff" in lines[0]["criteria"][0]["reason"]  # the name, written out


def test_host_paths_do_not_appear_in_reasons(tmp_path: Path) -> None:
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    (hostile / "attack.py").write_text("import os, sys\nprint(os.getcwd(), os.environ['HOME'])\nsys.exit(1)\n")
    verdict = _batch(tmp_path, [{"id": "hostile", "workspace": "hostile"}],
                     {"type": "command_succeeds", "command": [sys.executable, "attack.py"]})["hostile"]
    assert "<workspace> <scratch>/home" in verdict.reason and str(tmp_path) not in verdict.reason


def test_compiling_many_sparse_files_is_bounded_in_the_scorer(tmp_path: Path) -> None:
    """200 sparse 9.9 MB .py files take no disk and would take 2 GB of the scorer's memory."""
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    for i in range(200):
        with open(hostile / f"m{i}.py", "wb") as out:
            out.truncate(9_900_000)
    script = textwrap.dedent(f"""
        import json, resource
        from arena_core import Arena
        arena = Arena({{"workspace_root": {str(tmp_path)!r}, "command_memory_limit": "256M"}}, autoload=False)
        [ev] = arena.evaluate_many([{{"id": "hostile", "task_id": "t", "total_tokens": 1, "tool_calls": 1,
                                     "workspace": "hostile"}}], {{"t": {{"id": "t", "success_criteria": [{{"type": "code_compiles"}}]}}}})
        print(json.dumps([ev.criteria[0].reason, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss]))
    """)
    plain = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}  # glibc's own settings: freed memory returned
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          env={**plain, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})
    reason, peak_kib = json.loads(done.stdout)
    assert "add up to more than 33,554,432 bytes" in reason
    assert peak_kib < 1024 * 1024  # well under the 2 GB the files would take (about 150 MB alone, 500 MB seen on a loaded machine)


def test_one_run_priced_by_nowhere_fails_alone_when_a_store_is_repriced(tmp_path: Path) -> None:
    pytest.importorskip("genai_prices")
    runs = [{"id": f"run-{i}", "task_id": f"t{i % 10}", "tool": "honest", "model": "claude-sonnet-4-6",
             "provider": "anthropic", "started_at": "2026-01-10", "total_tokens": 10_000 + i, "tool_calls": 5,
             "input_tokens": 8_000 + i, "output_tokens": 2_000, "estimated_cost": 0.05} for i in range(200)]
    runs.append({**runs[0], "id": "hostile", "provider": "nowhere-inc"})
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": f"t{i}"} for i in range(10)]))
    env = {**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"}

    def arena(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "arena_core", *args], cwd=tmp_path, capture_output=True,
                              text=True, env=env, timeout=300)

    assert arena("ingest", "runs.jsonl", "--tasks", "tasks.json", "--store", "arena.db").returncode == 0
    (tmp_path / "priced.toml").write_text('cost_source = "priced"\n')
    alone = arena("-c", "priced.toml", "score", "runs.jsonl", "--tasks", "tasks.json")
    assert alone.returncode == 2 and "submission 'hostile'" in alone.stderr  # the run cannot be priced: the attack
    done = arena("reprice", "--store", "arena.db")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Repriced 201 stored runs at each run's date (200 priced, 1 refused)")
    assert "1 stored runs could not be priced and keep their stored cost:\n  submission 'hostile': " in done.stdout
