"""The built-in importers on real files written by the harnesses themselves (tests/data/formats,
each folder's README names its source), and on malformed ones."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from arena_core import Arena
from arena_core.importing.collect import ImportSession, detect_format
from arena_core.io.decoding import InputError

FORMATS = Path(__file__).parent / "data" / "formats"
TB = FORMATS / "harbor-terminal-bench"
SWE = FORMATS / "swe-bench"
MINI = FORMATS / "mini-swe-agent"
OPENHANDS = FORMATS / "openhands-eval-output"
INSPECT = FORMATS / "inspect-ai-eval-log"
AIDER_DATA = Path(__file__).parent / "data" / "aider-leaderboards"
SB_CLI = SWE / "sb-cli-report.swe-bench_verified__test__20251118_mini-v1.15.0_gemini-3-pro-preview-20251118.json"


@pytest.fixture(scope="module")
def arena() -> Arena:
    return Arena(autoload=False)


def imported(arena: Arena, fmt: str, *paths: Path) -> tuple[list[dict], ImportSession]:
    session = ImportSession(arena.components.importers[fmt], list(paths))
    return [dict(run.submission) for run in session.runs()], session


def by_id(runs: list[dict]) -> dict[str, dict]:
    return {run["id"]: run for run in runs}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena_core", *args], capture_output=True, text=True, cwd=cwd)


# ---------------------------------------------------------------------------
# Terminal-Bench
# ---------------------------------------------------------------------------


@pytest.fixture
def tb_run(tmp_path: Path) -> Path:
    """A run folder as `tb run` writes it: the run's results.json and run_metadata.json, and one
    trial's own folder (the run's file lists all 80 trials; most have no folder here)."""
    run = tmp_path / "tb_rc2_g5_1"
    trial = run / "hello-world" / "hello-world.1-of-1.tb_rc2_g5_1"
    trial.mkdir(parents=True)
    shutil.copy(TB / "tb.run.droid-gpt-5.results.json", run / "results.json")
    shutil.copy(TB / "tb.run.droid-gpt-5.run_metadata.json", run / "run_metadata.json")
    shutil.copy(TB / "tb.trial.droid-gpt-5.hello-world.results.json", trial / "results.json")
    return run


def test_a_terminal_bench_run_is_every_trial_once_with_the_runs_metadata(arena: Arena, tb_run: Path) -> None:
    runs, session = imported(arena, "terminal-bench", tb_run)
    assert len(runs) == 80 and len(session.tasks) == 80  # the trial folder is not read twice
    hello = next(r for r in runs if r["task_id"] == "hello-world")
    assert hello["id"] == "d2d9db98-4e4a-45b6-8402-c03ea3332008"
    assert hello["tool"] == "Factory Droid" and "model" not in hello  # model_name is null: left absent
    assert hello["success"] is True and (hello["tests_passed"], hello["tests_total"]) == (2, 2)
    assert hello["execution_time"] == pytest.approx(79.775981)  # agent_ended_at - agent_started_at
    assert "total_tokens" not in hello  # 0 in and 0 out: this agent reports no tokens
    assert hello["meta"]["dataset"] == "terminal-bench-core@0.1.1" and hello["meta"]["run_id"] == "tb_rc2_g5_1"
    fix_git = next(r for r in runs if r["task_id"] == "fix-git")
    assert fix_git["success"] is False and (fix_git["tests_passed"], fix_git["tests_total"]) == (1, 2)
    cron = next(r for r in runs if r["task_id"] == "cron-broken-network")
    assert cron["success"] is False and cron["meta"]["flags"] == ["verdict_missing"]
    assert cron["meta"]["failure_mode"] == "parse_error" and "tests_total" not in cron
    assert sum(r["success"] for r in runs) == 39
    assert sum("verdict_missing" in r["meta"]["flags"] for r in runs) == 3


def test_a_terminal_bench_run_in_a_leaderboard_submission_folder_takes_the_model_from_its_name(
    arena: Arena, tb_run: Path
) -> None:
    """The terminal-bench-leaderboard repository keeps a run under
    ``results/<dataset>/<YYYYMMDD>_<agent>_<model>/<run_id>/``; its metadata's model_name is null."""
    folder = tb_run.parent / "results" / "terminal-bench-core@0.1.1" / "20250924_droid_gpt-5"
    folder.mkdir(parents=True)
    shutil.move(tb_run, folder / tb_run.name)
    runs, _ = imported(arena, "terminal-bench", folder.parent)
    assert {(r["tool"], r["model"]) for r in runs} == {("Factory Droid", "gpt-5")}
    assert all("model_from_name" in r["meta"]["flags"] for r in runs)


def test_every_command_that_reads_harness_output_takes_tool_and_model(tb_run: Path, tmp_path: Path) -> None:
    """``--model`` names the model a harness did not record, on the board itself, not only in
    ``arena import``; arena-core's own files record theirs, so there it is refused."""
    from click.testing import CliRunner

    from arena_core.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        done = CliRunner().invoke(main, list(args))
        return done.exit_code, done.stdout, done.stderr

    code, out, err = run("-p", "correctness-only", "leaderboard", "--from", "terminal-bench", str(tb_run), "--by",
                         "tool,model", "--model", "gpt-5", "--tool", "ignored", "--format", "json")  # fmt: skip
    assert code == 0, err
    assert [row["group"] for row in json.loads(out)["rows"]] == ["Factory Droid / gpt-5"]  # the recorded tool kept
    code, out, err = run("-p", "correctness-only", "tasks", "--from", "terminal-bench", str(tb_run), "--by", "model",
                         "--model", "gpt-5", "--format", "json")  # fmt: skip
    assert code == 0, err
    assert {tuple(row["group_solve_rates"]) for row in json.loads(out)["rows"]} == {("gpt-5",)}
    code, _, err = run("leaderboard", "--example", "--model", "gpt-5")
    assert code == 2 and "--tool and --model name what a harness's output does not record" in err


def test_a_terminal_bench_run_scored_on_correctness_alone_is_its_published_accuracy(tb_run: Path) -> None:
    published = json.loads((tb_run / "results.json").read_text())["accuracy"]
    result = cli(
        "-p", "correctness-only", "leaderboard", "--from", "terminal-bench", str(tb_run), "--format", "json", cwd=tb_run
    )
    assert result.returncode == 0, result.stderr
    [group] = json.loads(result.stdout)["rows"]
    assert group["group"] == "Factory Droid" and group["n_runs"] == group["n_tasks"] == 80
    assert group["means"]["correctness"] == pytest.approx(published * 100) == pytest.approx(48.75)
    assert group["score"] == pytest.approx(48.75)


def test_terminal_bench_trials_alone_and_the_older_writer(arena: Arena) -> None:
    runs = by_id(imported(arena, "terminal-bench", TB / "tb.trial.orchestrator-opus.fix-git.1-of-5.results.json")[0])
    older = runs["17894ce8-15ca-4123-8c40-6c5e5d955a66"]  # `uuid`, no `id`
    assert older["total_tokens"] == 26446 + 3270 and "execution_time" not in older  # no timestamps
    assert "tool" not in older  # no run_metadata.json beside it


def test_a_run_whose_totals_its_trials_do_not_reproduce_is_flagged(arena: Arena, tb_run: Path) -> None:
    data = json.loads((tb_run / "results.json").read_text())
    data["n_resolved"] = 40
    (tb_run / "results.json").write_text(json.dumps(data))
    runs, _ = imported(arena, "terminal-bench", tb_run)
    assert all("run_totals_disagree" in r["meta"]["flags"] and r["meta"]["run_n_resolved"] == 40 for r in runs)


def test_a_malformed_terminal_bench_trial_names_the_file_and_field(arena: Arena, tmp_path: Path) -> None:
    data = json.loads((TB / "tb.trial.droid-gpt-5.fix-git.results.json").read_text())
    data["is_resolved"] = "yes"
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"results\.json: is_resolved: expected true or false, got 'yes'"):
        imported(arena, "terminal-bench", bad)
    bad.write_text(json.dumps(data)[:200])  # truncated
    with pytest.raises(InputError, match=r"results\.json:\d+: invalid JSON"):
        imported(arena, "terminal-bench", bad)


# ---------------------------------------------------------------------------
# Harbor
# ---------------------------------------------------------------------------


def harbor_trial(root: Path, **changes: object) -> Path:
    """A trial folder as Harbor writes it: result.json (hand-made from harbor's TrialResult model,
    as no real one is public) and the agent's real ATIF trajectory."""
    trial = root / "hello-world__Ab3xY"
    (trial / "agent").mkdir(parents=True)
    shutil.copy(TB / "atif.terminus-2.hello-world-timeout.trajectory.json", trial / "agent" / "trajectory.json")
    result = {
        "id": "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
        "task_name": "hello-world",
        "trial_name": "hello-world__Ab3xY",
        "trial_uri": f"file://{trial}",
        "task_id": {"path": "tasks/hello-world"},
        "source": "terminal-bench@2.0",
        "task_checksum": "abc123",
        "config": {},
        "agent_info": {
            "name": "terminus-2",
            "version": "2.0.0",
            "model_info": {"name": "gpt-4o", "provider": "openai"},
        },
        "agent_result": {"n_input_tokens": 982, "n_cache_tokens": 0, "n_output_tokens": 145, "cost_usd": 0.003905},
        "verifier_result": {"rewards": {"reward": 1.0}},
        "exception_info": None,
        "started_at": "2025-11-02T10:00:00.000000Z",
        "finished_at": "2025-11-02T10:03:10.500000Z",
        "agent_execution": {"started_at": "2025-11-02T10:00:40Z", "finished_at": "2025-11-02T10:02:30.25Z"},
        **changes,
    }
    (trial / "result.json").write_text(json.dumps(result, indent=4))
    return trial


def test_a_harbor_trial_joins_its_result_and_its_trajectory(arena: Arena, tmp_path: Path) -> None:
    harbor_trial(tmp_path)
    assert detect_format(arena.components.importers.values(), [tmp_path]) == "harbor"
    [run], session = imported(arena, "harbor", tmp_path)
    assert (run["id"], run["task_id"], run["tool"], run["model"]) == (
        "hello-world__Ab3xY",
        "hello-world",
        "terminus-2",
        "gpt-4o",
    )
    assert run["success"] is True and run["correctness"] == 1.0
    assert run["total_tokens"] == 1127 and run["estimated_cost"] == 0.003905  # result and trajectory agree
    assert (run["tool_calls"], run["iterations"]) == (3, 3)  # from the trajectory's steps
    assert run["execution_time"] == 110.25  # agent_execution, not the whole trial
    assert run["meta"]["flags"] == [] and run["provider"] == "openai" and run["started_at"].startswith("20")
    assert session.tasks["hello-world"]["success_criteria"][0]["type"] == "harness_verdict"


def test_a_harbor_trial_that_raised_or_disagrees_is_flagged(arena: Arena, tmp_path: Path) -> None:
    failure = {
        "exception_type": "AgentTimeoutError",
        "exception_message": "timed out",
        "exception_traceback": "",
        "occurred_at": "2025-11-02T10:02:30",
    }
    harbor_trial(
        tmp_path, exception_info=failure, agent_result={"n_input_tokens": 5000, "n_output_tokens": 100, "cost_usd": 0}
    )
    [run], _ = imported(arena, "harbor", tmp_path)
    assert run["success"] is False and run["correctness"] == 1.0  # the reward stays, the verdict does not
    assert run["meta"]["flags"] == ["agent_failure", "total_tokens_disagrees_with_trajectory"]
    assert run["total_tokens"] == 5100 and run["estimated_cost"] == pytest.approx(
        0.003905
    )  # cost 0 = not recorded: the trajectory's


def test_a_lone_atif_trajectory_has_no_task_and_no_verdict(arena: Arena) -> None:
    [run], session = imported(arena, "harbor", TB / "atif.openhands.hello-world.trajectory.json")
    assert run["tool"] == "openhands" and "model" not in run and "task_id" not in run
    assert (run["tool_calls"], run["iterations"], run["total_tokens"], run["estimated_cost"]) == (2, 2, 300, 0.00135)
    assert run["success"] is False and run["meta"]["flags"] == ["not_graded"] and not session.tasks


def test_a_malformed_harbor_result_names_the_file_and_field(arena: Arena, tmp_path: Path) -> None:
    harbor_trial(tmp_path, verifier_result={"rewards": {"reward": 2.5}})
    with pytest.raises(
        InputError, match=r"result\.json: verifier_result\.rewards\.reward: expected a reward from 0 to 1, got 2\.5"
    ):
        imported(arena, "harbor", tmp_path)


# ---------------------------------------------------------------------------
# SWE-bench, mini-swe-agent, OpenHands
# ---------------------------------------------------------------------------


def test_an_sb_cli_report_scored_on_correctness_alone_is_its_resolved_share(arena: Arena) -> None:
    runs, session = imported(arena, "swebench", SB_CLI)
    report = json.loads(SB_CLI.read_text())
    assert len(runs) == report["submitted_instances"] == 500
    assert sum(r["success"] for r in runs) == report["resolved_instances"] == 371
    scorer = Arena(
        {
            "weights": {"default": {"efficiency": 0, "speed": 0, "cost": 0, "correctness": 1}},
            "missing": dict.fromkeys(("total_tokens", "tool_calls"), "reweight"),
        },
        autoload=False,
    )
    evaluations = scorer.evaluate_many(runs, session.tasks, evaluated_at="2026-01-01T00:00:00Z")
    mean = sum(e.scores["correctness"] for e in evaluations) / len(evaluations)
    assert mean == pytest.approx(100 * 371 / 500)


def test_a_harness_run_report_flags_errors_rather_than_hiding_them(arena: Arena) -> None:
    runs = by_id(imported(arena, "swebench", SWE / "gold.jest-gold.json")[0])
    assert len(runs) == 300 and sum(r["success"] for r in runs.values()) == 12
    assert runs["apache__druid-13704"]["meta"]["flags"] == ["model_from_name", "harness_error"]
    assert not runs["apache__druid-13704"]["success"]
    assert runs["babel__babel-13928"]["success"] and runs["babel__babel-13928"]["meta"]["flags"] == ["model_from_name"]
    assert {r["model"] for r in runs.values()} == {"gold"}  # gold.jest-gold.json: model gold, run jest-gold


@pytest.fixture
def swebench_run(tmp_path: Path) -> Path:
    """Per-instance reports as the published run lays them out (logs/ID/report.json), and the
    same run's mini-swe-agent trajectories."""
    for instance in ("django__django-16255", "django__django-16667"):
        (tmp_path / "logs" / instance).mkdir(parents=True)
        shutil.copy(SWE / f"instance-report.{instance}.report.json", tmp_path / "logs" / instance / "report.json")
        (tmp_path / "trajs").mkdir(exist_ok=True)
        shutil.copy(MINI / f"{instance}.traj.json", tmp_path / "trajs" / f"{instance}.traj.json")
    return tmp_path


def test_swebench_joins_verdicts_with_the_agents_trajectories(arena: Arena, swebench_run: Path) -> None:
    runs = by_id(imported(arena, "swebench", swebench_run / "logs", swebench_run / "trajs")[0])
    assert set(runs) == {"django__django-16255", "django__django-16667"}
    resolved, partial = runs["django__django-16255"], runs["django__django-16667"]
    assert resolved["success"] is True and (resolved["tests_passed"], resolved["tests_total"]) == (37, 37)
    assert (resolved["iterations"], resolved["total_tokens"], resolved["execution_time"]) == (17, 63385, 68.0)
    assert resolved["estimated_cost"] == pytest.approx(0.0893484) and resolved["model"] == "google/gemini-3-pro-preview"
    assert partial["success"] is False and (partial["tests_passed"], partial["tests_total"]) == (25, 26)
    assert partial["meta"]["flags"] == ["partially_resolved"] and partial["iterations"] == 19
    # the mini-swe-agent importer joins the same way
    again = by_id(imported(arena, "mini-swe-agent", swebench_run)[0])
    assert again["django__django-16667"]["tests_passed"] == 25


def test_a_trajectory_is_never_opened_to_ask_whether_it_is_a_report(
    arena: Arena, swebench_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``*.traj.json`` is a trajectory by its name: only the other files are asked whether they
    are SWE-bench reports (each such question reads the file's head), and the trajectories are
    still graded by the reports beside them."""
    from arena_plugins.importers import mini_swe_agent

    asked: list[str] = []
    real = mini_swe_agent.is_report
    monkeypatch.setattr(mini_swe_agent, "is_report", lambda p: asked.append(p.name) or real(p))
    runs = by_id(imported(arena, "mini-swe-agent", swebench_run)[0])
    assert runs["django__django-16255"]["success"] is True and runs["django__django-16667"]["success"] is False
    assert "report.json" in asked and not [name for name in asked if name.endswith(".traj.json")]


def test_a_board_never_ranks_runs_no_verdict_grades(swebench_run: Path, tmp_path: Path) -> None:
    """Trajectories without the report that grades them would rank as failures (0.00); the board
    sets them aside, names them and says what would grade them."""
    from click.testing import CliRunner

    from arena_core.cli import main

    shutil.rmtree(swebench_run / "logs" / "django__django-16667")  # this one's verdict is gone
    current = Path(__file__).parent / "data" / "formats" / "mini-swe-agent-current" / "toolcall.traj.json"
    shutil.copy(current, swebench_run / "trajs" / "other.traj.json")  # another model's run, ungraded
    runner = CliRunner()
    done = runner.invoke(main, ["leaderboard", "--from", "mini-swe-agent", str(swebench_run), "--by", "model",
                                "--format", "json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)["rows"]
    assert [row["group"] for row in rows] == ["google/gemini-3-pro-preview"]  # the ungraded model is not on it
    assert rows[0]["n_runs"] == 1 and rows[0]["means"]["correctness"] == 100.0  # only the graded run counts
    assert "note: 2 runs have no verdict (flagged not_graded) and are not ranked" in done.stderr
    assert "mini-swe-agent / anthropic/claude-sonnet-4-5: 1" in done.stderr and "SWE-bench run report" in done.stderr
    runs, tasks = str(tmp_path / "runs.jsonl"), str(tmp_path / "tasks.json")  # imported first: the same board
    assert runner.invoke(main, ["import", "mini-swe-agent", str(swebench_run), "-o", runs, "--tasks-out", tasks]).exit_code == 0
    again = runner.invoke(main, ["leaderboard", runs, "--tasks", tasks, "--by", "model", "--format", "json"])
    assert [row["group"] for row in json.loads(again.stdout)["rows"]] == ["google/gemini-3-pro-preview"]
    assert "note: 2 runs have no verdict" in again.stderr
    stored = runner.invoke(main, ["ingest", runs, "--tasks", tasks, "--store", str(tmp_path / "a.db")])
    assert stored.exit_code == 0 and "Stored 1 evaluations" in stored.stdout  # the store ranks what it holds
    assert "note: 2 runs have no verdict (flagged not_graded) and are not stored" in stored.stderr
    only_ungraded = tmp_path / "alone"
    only_ungraded.mkdir()
    shutil.copy(current, only_ungraded / "x.traj.json")
    refused = runner.invoke(main, ["leaderboard", "--from", "mini-swe-agent", str(only_ungraded)])
    assert refused.exit_code != 0 and "no run has a verdict: grade them by giving the report that grades them" in refused.output
    graded_by_judge = tmp_path / "tasks.json"  # a task whose criterion checks the run grades it: it stays
    graded_by_judge.write_text(json.dumps([{"id": "django__django-11099", "success_criteria": [
        {"type": "file_exists", "file_path": "fix.txt"}]}]))
    kept = runner.invoke(main, ["leaderboard", "--from", "mini-swe-agent", str(only_ungraded), "--tasks",
                                str(graded_by_judge), "--format", "json"])
    assert kept.exit_code == 0, kept.output
    assert "not_graded" not in kept.stderr


def test_a_trajectory_without_a_report_is_flagged_not_graded(arena: Arena) -> None:
    runs = by_id(imported(arena, "mini-swe-agent", MINI)[0])
    rfc = runs["harbor-rfc.mini-swe-agent-trajectory"]  # no instance_id: named after its file
    assert "task_id" not in rfc and rfc["model"] == "anthropic/claude-3-5-sonnet-20241022"
    assert rfc["iterations"] == 3 and rfc["estimated_cost"] == pytest.approx(0.010521)
    assert rfc["meta"]["flags"] == ["empty_patch", "not_graded"] and rfc["success"] is False
    assert runs["django__django-16255"]["meta"]["harness_version"] == "1.15.0"


def test_a_malformed_swebench_report_names_the_file_and_field(arena: Arena, tmp_path: Path) -> None:
    data = json.loads(SB_CLI.read_text())
    data["resolved_ids"][3] = 5
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"report\.json: resolved_ids\.3: expected an instance id, got 5"):
        imported(arena, "swebench", bad)


def test_a_malformed_trajectory_names_the_file_and_field(arena: Arena, tmp_path: Path) -> None:
    data = json.loads((MINI / "django__django-16255.traj.json").read_text())
    data["info"]["model_stats"]["api_calls"] = "seventeen"
    bad = tmp_path / "x.traj.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(
        InputError, match=r"x\.traj\.json: model_stats\.api_calls: expected a whole number, got 'seventeen'"
    ):
        imported(arena, "mini-swe-agent", bad)


def test_openhands_outputs_keep_what_they_record_and_no_more(arena: Arena) -> None:
    runs = by_id(imported(arena, "openhands", OPENHANDS)[0])
    eval_run = runs["ponylang__ponyc-4595"]
    assert (eval_run["tool"], eval_run["model"]) == ("openhands/CodeActAgent", "openai/openrouter-llama-4-maverick")
    assert (eval_run["total_tokens"], eval_run["iterations"], eval_run["tool_calls"]) == (565158 + 2558, 23, 22)
    assert eval_run["execution_time"] == pytest.approx(88.24115)
    assert "estimated_cost" not in eval_run  # accumulated_cost 0.0: no price for the model
    assert eval_run["meta"]["flags"] == ["cost_reported_as_zero", "not_graded"] and eval_run["success"] is False
    resolver = runs["neubig/pr-viewer#5"]
    assert resolver["success"] is True and resolver["estimated_cost"] == pytest.approx(0.070713)
    assert resolver["files_created"] == ["LICENSE"]


def test_a_malformed_openhands_line_is_named_and_the_others_read(arena: Arena, tmp_path: Path) -> None:
    bad = tmp_path / "output.jsonl"
    good = (OPENHANDS / "multi_swe_bench.output.first-line.jsonl").read_text().strip()
    bad.write_text(good + "\n" + good[:500] + "\n")
    with pytest.raises(InputError, match=r"output\.jsonl:2: invalid JSON") as info:
        imported(arena, "openhands", bad)
    assert "output.jsonl:1" not in str(info.value)
    session = ImportSession(arena.components.importers["openhands"], [bad], skip_bad=True)
    assert [r.submission["id"] for r in session.runs()] == ["ponylang__ponyc-4595"]
    assert len(session.skipped) == 1 and session.skipped[0].startswith(f"{bad}:2:")


# ---------------------------------------------------------------------------
# Inspect AI
# ---------------------------------------------------------------------------


def test_inspect_logs_give_one_submission_per_sample(arena: Arena) -> None:
    runs = by_id(imported(arena, "inspect", INSPECT)[0])
    assert len(runs) == 5
    popularity = [runs[f"VnKtvCqGnnegLQ7qSBFDzx/{i}/1"] for i in (1, 2, 3)]
    assert [r["correctness"] for r in popularity] == [1.0, 1.0, 0.0]  # C, C, I
    assert [r["total_tokens"] for r in popularity] == [66, 60, 72]
    assert [r["execution_time"] for r in popularity] == [0.664, 1.775, 0.657]
    assert (
        popularity[0]["tool"] == "inspect_ai/system_message+generate" and popularity[0]["model"] == "openai/gpt-4o-mini"
    )
    assert popularity[0]["meta"]["log_status"] == "cancelled" and popularity[0]["task_id"] == "popularity/1"
    browser = runs["ZB2vu5GNujYaBdPSReCeop/1/1"]
    assert (browser["tool_calls"], browser["iterations"], browser["total_tokens"]) == (4, 5, 15516)
    assert browser["success"] is True and "estimated_cost" not in browser  # no cost in the log
    zipped = next(r for r in runs.values() if r["task_id"] == "inspect_test_utils/guess_number/0")
    assert (zipped["tool_calls"], zipped["execution_time"], zipped["correctness"]) == (5, 0.457, 0.0)
    assert "total_tokens" not in zipped and zipped["model"] == "hardcoded/hardcoded"  # model_usage is {}


def test_malformed_inspect_logs_name_the_file_and_field(arena: Arena, tmp_path: Path) -> None:
    data = json.loads((INSPECT / "2025-05-12T20-28-13-04-00_popularity.json").read_text())
    data["samples"][1]["scores"]["match"]["value"] = "maybe"
    bad = tmp_path / "log.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(
        InputError, match=r"log\.json: samples\.1: scores\.match\.value: expected C, I, P, N or a number, got 'maybe'"
    ):
        imported(arena, "inspect", bad)
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(INSPECT / "log_message_deduplication.eval") as source, zipfile.ZipFile(broken, "w") as target:
        for name in source.namelist():
            if name != "header.json":
                target.writestr(name, source.read(name))
    with pytest.raises(InputError, match=r"broken\.eval: header\.json: expected in the archive"):
        imported(arena, "inspect", broken)


# ---------------------------------------------------------------------------
# Aider
# ---------------------------------------------------------------------------


def test_aiders_leaderboards_import_as_the_published_conversion(arena: Arena) -> None:
    runs, session = imported(arena, "aider", *sorted(Path(arena_examples_dir()).glob("*.yml")))
    expected = {
        json.loads(line)["id"]: json.loads(line) for line in (AIDER_DATA / "submissions.jsonl").read_text().splitlines()
    }
    assert set(by_id(runs)) == set(expected) and len(runs) == 181
    for run in runs:
        want = dict(expected[run["id"]])
        got_meta, want_meta = dict(run.pop("meta")), want.pop("meta")
        # Beyond the published conversion: the run's start from its folder's name, and the
        # token breakdown that prices need (the published total is their sum).
        started = run.pop("started_at")
        assert started.startswith(want_meta["date"]) and started[11:] == want_meta["dirname"][11:19].replace("-", ":")
        if "input_tokens" in run:
            assert run.pop("input_tokens") + run.pop("output_tokens") == want["total_tokens"]
        assert run == want
        for key in ("source", "harness"):
            got_meta.pop(key)
        want_meta.pop("source")
        assert got_meta == want_meta
    assert set(session.tasks) == {"aider-polyglot", "aider-edit", "aider-refactor"}


def arena_examples_dir() -> Path:
    from arena_core import examples

    return examples.AIDER


def exercise(root: Path, name: str, **fields: object) -> Path:
    folder = root / "2025-01-01-00-00-00--run" / "python" / "exercises" / "practice" / name
    folder.mkdir(parents=True)
    results = {
        "testdir": f"/benchmarks/run/python/exercises/practice/{name}",
        "testcase": name,
        "model": "gpt-4o",
        "edit_format": "diff",
        "tests_outcomes": [False, True],
        "cost": 0.0123,
        "duration": 21.5,
        "test_timeouts": 0,
        "commit_hash": "5dc9490-dirty",
        "num_error_outputs": 0,
        "num_user_asks": 0,
        "num_exhausted_context_windows": 0,
        "num_malformed_responses": 0,
        "syntax_errors": 0,
        "indentation_errors": 0,
        "lazy_comments": 0,
        "reasoning_effort": None,
        "prompt_tokens": 3000,
        "completion_tokens": 400,
        "thinking_tokens": None,
        "chat_hashes": [["a", "b"], ["c", "d"]],
        **fields,
    }  # the fields benchmark.py writes (no real file is public; see the folder's README)
    (folder / ".aider.results.json").write_text(json.dumps(results, indent=4))
    return folder


def test_aider_exercise_results_and_a_failed_exercise(arena: Arena, tmp_path: Path) -> None:
    exercise(tmp_path, "bowling")
    exercise(tmp_path, "grep", tests_outcomes=[False, False], cost=0)
    runs = by_id(imported(arena, "aider", tmp_path)[0])
    bowling = runs["2025-01-01-00-00-00--run/python/bowling"]
    assert (bowling["task_id"], bowling["tool"], bowling["success"], bowling["correctness"]) == (
        "python/bowling",
        "aider/diff",
        True,
        1.0,
    )
    assert (bowling["total_tokens"], bowling["iterations"], bowling["execution_time"]) == (3400, 2, 21.5)
    assert bowling["meta"]["tries"] == 2 and bowling["estimated_cost"] == 0.0123
    grep = runs["2025-01-01-00-00-00--run/python/grep"]
    assert grep["success"] is False and "estimated_cost" not in grep  # cost 0: not recorded
    crashed = exercise(tmp_path, "zipper")
    (crashed / ".aider.results.json").write_text(json.dumps({"exception": "Traceback ..."}))
    with pytest.raises(InputError, match=r"zipper/\.aider\.results\.json: the benchmark failed on this exercise"):
        imported(arena, "aider", tmp_path)


def test_a_malformed_leaderboard_names_the_file_and_line(arena: Arena, tmp_path: Path) -> None:
    bad = tmp_path / "polyglot_leaderboard.yml"
    bad.write_text("- dirname: a\n  pass_rate_1: 10\n  model: [unclosed\n")
    with pytest.raises(InputError, match=r"polyglot_leaderboard\.yml:\d+: invalid YAML"):
        imported(arena, "aider", bad)
    bad.write_text("- dirname: a\n  test_cases: 225\n  model: m\n  edit_format: diff\n  pass_rate_1: 140\n")
    with pytest.raises(
        InputError, match=r"polyglot_leaderboard\.yml: a: pass_rate_1: expected a percentage from 0 to 100, got 140"
    ):
        imported(arena, "aider", bad)


# ---------------------------------------------------------------------------
# The CLI
# ---------------------------------------------------------------------------


def test_arena_import_writes_submissions_and_tasks_that_score_as_the_harness_did(tb_run: Path, tmp_path: Path) -> None:
    result = cli("import", "terminal-bench", str(tb_run), "-o", "runs.jsonl", "--tasks-out", "tasks.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Imported 80 terminal-bench runs to runs.jsonl (80 tasks); 0 sources skipped" in result.stderr
    lines = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert len(lines) == 80 and lines[0]["meta"]["harness"] == "terminal-bench"
    scored = cli(
        "-p", "correctness-only", "leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--format", "json", cwd=tmp_path
    )
    assert json.loads(scored.stdout)["rows"][0]["means"]["correctness"] == pytest.approx(48.75)


def test_a_bad_source_refuses_the_import_unless_skipped(tb_run: Path, tmp_path: Path) -> None:
    trials = tmp_path / "trials"
    for name in ("hello-world", "fix-git"):
        (trials / name).mkdir(parents=True)
        shutil.copy(TB / f"tb.trial.droid-gpt-5.{name}.results.json", trials / name / "results.json")
    (trials / "fix-git" / "results.json").write_text('{"task_id": "fix-git", "is_resolved": tru')
    refused = cli("import", "terminal-bench", "trials", "-o", "runs.jsonl", cwd=tmp_path)
    assert refused.returncode == 2 and not (tmp_path / "runs.jsonl").exists()
    assert refused.stderr.startswith("Error: trials/fix-git/results.json:1: invalid JSON")
    skipped = cli("import", "terminal-bench", "trials", "-o", "runs.jsonl", "--skip-bad", cwd=tmp_path)
    assert skipped.returncode == 0, skipped.stderr
    assert "skipped: trials/fix-git/results.json:1: invalid JSON" in skipped.stderr
    assert [json.loads(line)["task_id"] for line in (tmp_path / "runs.jsonl").read_text().splitlines()] == [
        "hello-world"
    ]


def test_a_run_refused_by_the_submission_model_is_skipped_and_not_counted(tmp_path: Path) -> None:
    trials = tmp_path / "trials"
    for name in ("hello-world", "fix-git"):
        (trials / name).mkdir(parents=True)
        shutil.copy(TB / f"tb.trial.droid-gpt-5.{name}.results.json", trials / name / "results.json")
    data = json.loads((trials / "fix-git" / "results.json").read_text())
    data["id"] = "trial\u0007"  # valid JSON, but not a printable id
    (trials / "fix-git" / "results.json").write_text(json.dumps(data))
    result = cli("import", "terminal-bench", "trials", "-o", "runs.jsonl", "--skip-bad", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "skipped: trials/fix-git/results.json: submission" in result.stderr
    assert "Imported 1 terminal-bench runs to runs.jsonl" in result.stderr
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == 1


def test_commands_detect_a_harnesss_output_and_say_what_they_leave_out(swebench_run: Path) -> None:
    result = cli("leaderboard", "trajs", "--by", "model", "--format", "json", cwd=swebench_run)
    # detected: mini-swe-agent; without the reports nothing grades the runs: no board of 0.00
    assert result.returncode == 2 and result.stderr.startswith("Error: mini-swe-agent: no run has a verdict")
    mixed = cli("leaderboard", "logs", "trajs", cwd=swebench_run)
    assert mixed.returncode == 2 and "give it with --from FORMAT" in mixed.stderr
    unknown = cli("leaderboard", "--from", "swe-bench", "logs", cwd=swebench_run)
    assert (
        unknown.returncode == 2
        and "no importer named 'swe-bench' is registered; did you mean 'swebench'?" in unknown.stderr
    )


def test_the_aider_example_is_a_real_leaderboard(tmp_path: Path) -> None:
    result = cli("leaderboard", "--example", "aider", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    groups = {g["group"]: g for g in json.loads(result.stdout)["rows"]}
    assert sum(g["n_runs"] for g in groups.values()) == 181
    assert groups["aider/diff"]["n_runs"] == 86 and groups["aider/whole"]["n_runs"] == 78
    # The example's own arena.toml says what missing figures do: no note of them; the one note
    # says that its tools (Aider's edit formats) each pool several models.
    assert result.stderr.startswith("note: aider/whole (76 models)") and len(result.stderr.splitlines()) == 1


def test_leaderboards_rank_tool_and_model_pairs(arena: Arena) -> None:
    runs, session = imported(arena, "inspect", INSPECT)
    scorer = Arena({"missing": dict.fromkeys(("total_tokens", "tool_calls"), "reweight")}, autoload=False)
    batch = scorer.evaluate_many(runs, session.tasks, evaluated_at="2026-01-01T00:00:00Z")
    from_arrays = scorer.leaderboard(batch, by="tool,model")
    from_objects = scorer.leaderboard(list(batch), by="tool,model")
    assert [(g.group, g.n_runs) for g in from_arrays] == [(g.group, g.n_runs) for g in from_objects]
    assert sorted((g.group, g.n_runs) for g in from_arrays) == [
        ("inspect_ai/system_message+generate / openai/gpt-4o-mini", 3),
        ("inspect_ai/use_tools+generate / hardcoded/hardcoded", 1),
        ("inspect_ai/use_tools+generate / openai/gpt-4o-mini", 1),
    ]


def test_import_names_the_tool_and_model_a_harness_does_not_record(tmp_path: Path) -> None:
    trial = TB / "tb.trial.droid-gpt-5.fix-git.results.json"  # a trial alone: no run_metadata.json
    assert "model" not in json.loads(trial.read_text()) and "model_name" not in json.loads(trial.read_text())
    done = cli(
        "import",
        "terminal-bench",
        str(trial),
        "-o",
        "runs.jsonl",
        "--tool",
        "orchestrator",
        "--model",
        "qwen3-coder",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    [run] = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert (run["tool"], run["model"]) == ("orchestrator", "qwen3-coder")
    tb_run = tmp_path / "run"
    tb_run.mkdir()
    shutil.copy(TB / "tb.run.droid-gpt-5.results.json", tb_run / "results.json")
    shutil.copy(TB / "tb.run.droid-gpt-5.run_metadata.json", tb_run / "run_metadata.json")
    done = cli("import", "terminal-bench", str(tb_run), "-o", "recorded.jsonl", "--tool", "other", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    tools = {json.loads(line)["tool"] for line in (tmp_path / "recorded.jsonl").read_text().splitlines()}
    recorded = json.loads((TB / "tb.run.droid-gpt-5.run_metadata.json").read_text())["agent_name"]
    assert recorded and tools == {recorded}  # what the harness recorded is kept


def test_imported_files_score_as_the_harness_output_does(tb_run: Path, tmp_path: Path) -> None:
    """The tasks arena import writes carry the fields the format never records, so scoring the
    written files leaves them out as scoring the run folder does (it used to refuse the files)."""
    done = cli("import", "terminal-bench", str(tb_run), "-o", "runs.jsonl", "--tasks-out", "tasks.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert {t["meta"]["unrecorded"][0] for t in json.loads((tmp_path / "tasks.json").read_text())} == {"tool_calls"}
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    published = json.loads((tb_run / "results.json").read_text())
    assert all(isinstance(r["success"], bool) for r in runs)  # written where true too, as the harness said it
    assert sum(r["success"] for r in runs) == published["n_resolved"]
    (tmp_path / "arena.toml").write_text('[missing]\ntotal_tokens = "reweight"\n')  # tool_calls: the default, refused
    files = cli("leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--format", "json", cwd=tmp_path)
    folder = cli("leaderboard", "--from", "terminal-bench", str(tb_run), "--format", "json", cwd=tmp_path)
    assert files.returncode == folder.returncode == 0, files.stderr
    from_files, from_folder = json.loads(files.stdout), json.loads(folder.stdout)
    assert from_files["rows"] == from_folder["rows"]
    # The same runs; the written tasks are other records (they say what the format never records).
    assert from_files["provenance"]["runs"] == from_folder["provenance"]["runs"]
    note = "terminal-bench output never records tool_calls, estimated_cost"
    assert note in files.stderr and note in folder.stderr
    plain = [{k: v for k, v in t.items() if k != "meta"} for t in json.loads((tmp_path / "tasks.json").read_text())]
    (tmp_path / "plain.json").write_text(json.dumps(plain))  # the tasks without what the import wrote: refused
    refused = cli("leaderboard", "runs.jsonl", "--tasks", "plain.json", cwd=tmp_path)
    assert refused.returncode == 2 and "tool_calls" in refused.stderr


def test_runs_stopped_at_the_harness_step_limit_are_flagged_and_counted_per_task(arena: Arena, tmp_path: Path) -> None:
    """mini-swe-agent: the real trajectories (17 of 250 calls) are not flagged; the same one ended
    by LimitsExceeded, or at 250 calls, is. OpenHands: the iteration-limit error, or as many LLM
    calls as max_iterations. arena tasks counts them."""
    assert not any("step_limit" in r["meta"]["flags"] for r in imported(arena, "mini-swe-agent", MINI)[0])
    data = json.loads((MINI / "django__django-16255.traj.json").read_text())
    assert data["info"]["config"]["agent"]["step_limit"] == 250
    (tmp_path / "trajs").mkdir()
    for name, change in (
        ("limits", {"exit_status": "LimitsExceeded"}),
        ("at-limit", {"model_stats": {**data["info"]["model_stats"], "api_calls": 250}}),
    ):
        variant = {**data, "instance_id": f"django__django-16255-{name}", "info": {**data["info"], **change}}
        (tmp_path / "trajs" / f"{name}.traj.json").write_text(json.dumps(variant))
    runs = by_id(imported(arena, "mini-swe-agent", tmp_path / "trajs")[0])
    assert {i: "step_limit" in r["meta"]["flags"] for i, r in runs.items()} == {
        "django__django-16255-limits": True,
        "django__django-16255-at-limit": True,
    }
    assert {r["meta"]["step_limit"] for r in runs.values()} == {250}
    line = json.loads((OPENHANDS / "multi_swe_bench.output.first-line.jsonl").read_text().splitlines()[0])
    stopped = {
        **line,
        "error": "RuntimeError: Agent reached maximum iteration in headless mode. Current iteration: 100",
    }
    (tmp_path / "output.jsonl").write_text(json.dumps(line) + "\n")
    assert "step_limit" not in imported(arena, "openhands", tmp_path / "output.jsonl")[0][0]["meta"]["flags"]
    (tmp_path / "output.jsonl").write_text(json.dumps(stopped) + "\n")
    assert "step_limit" in imported(arena, "openhands", tmp_path / "output.jsonl")[0][0]["meta"]["flags"]
    checked = [{"id": i, "success_criteria": [{"type": "no_errors"}]} for i in runs]  # graded: not set aside
    (tmp_path / "tasks.json").write_text(json.dumps(checked))
    done = cli(
        "-p", "gated", "tasks", "--from", "mini-swe-agent", str(tmp_path / "trajs"), "--tasks", "tasks.json",
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert all("step_limit" in row["flags"] for row in json.loads(done.stdout)["rows"])
