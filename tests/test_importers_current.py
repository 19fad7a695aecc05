"""Importers on outputs written by today's harness releases themselves (tests/data/formats/*-current,
each folder's make.py regenerates them), asserted field by field against what the harness reports."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core import Arena
from arena_core.importing.collect import ImportSession
from arena_core.io.decoding import InputError

FORMATS = Path(__file__).parent / "data" / "formats"
INSPECT = FORMATS / "inspect-ai-current"


@pytest.fixture(scope="module")
def arena() -> Arena:
    return Arena(autoload=False)


def imported(arena: Arena, fmt: str, *paths: Path) -> dict[str, dict]:
    session = ImportSession(arena.components.importers[fmt], list(paths))
    return {run.submission["id"]: run.submission for run in session.runs()}


def board(tmp_path: Path, config: str, fmt: str, source: Path, *options: str) -> list[dict]:
    """The JSON rows of a correctness-only leaderboard of ``source`` read by ``fmt``, under the
    configuration ``config``, as a user runs the command."""
    (tmp_path / "arena.toml").write_text(config)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena_core",
            "-c",
            str(tmp_path / "arena.toml"),
            "-p",
            "correctness-only",
            "leaderboard",
            "--from",
            fmt,
            str(source),
            *options,
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["rows"]


def test_a_zstd_eval_log_of_inspect_0_3_285_imports_on_this_python(arena: Arena) -> None:
    with zipfile.ZipFile(INSPECT / "epochs.eval") as archive:
        assert {info.compress_type for info in archive.infolist()} == {93}  # zstd, every member
    runs = imported(arena, "inspect", INSPECT / "epochs.eval")
    assert len(runs) == 6  # 2 samples x 3 epochs: repeated attempts of the same tasks
    by_attempt = {(r["meta"]["sample_id"], r["meta"]["epoch"]): r for r in runs.values()}
    assert {r["task_id"] for r in runs.values()} == {"epochs_task/capital", "epochs_task/product"}
    for (sample, epoch), run in by_attempt.items():
        assert run["model"] == "mockllm/model" and run["meta"]["harness_version"] == "0.3.285"
        assert run["meta"]["format_version"] == "inspect-log-v2"
        # usage as the log has it: 200 fresh + 1,000 cache read + 100 cache write in, 40 out
        assert (run["total_tokens"], run["input_tokens"], run["output_tokens"]) == (1340, 1300, 40)
        assert (run["cache_read_tokens"], run["cache_write_tokens"]) == (1000, 100)
        assert run["estimated_cost"] == pytest.approx(0.0021)
        assert 0 < run["execution_time"] < 5
        if sample == "capital":
            assert run["success"] is True and run["correctness"] == 1.0
        elif epoch < 3:
            assert run["success"] is False and run["correctness"] == 0.0
    invalid = by_attempt[("product", 3)]
    assert invalid["success"] is False and "correctness" not in invalid
    assert "invalidated" in invalid["meta"]["flags"] and invalid["meta"]["invalidation_reason"] == "scorer was wrong"


def test_a_dict_score_is_the_mean_of_its_checks(arena: Arena) -> None:
    runs = {r["meta"]["sample_id"]: r for r in imported(arena, "inspect", INSPECT / "dict-score.eval").values()}
    assert runs["capital"]["correctness"] == 1.0 and runs["capital"]["success"] is True
    assert runs["product"]["correctness"] == 0.5 and runs["product"]["success"] is False  # answered C, exact I
    assert runs["product"]["meta"]["score"] == {"answered": "C", "exact": "I"}


def test_the_epochs_give_pass_at_k_and_invalidated_runs_follow_infra_failures(arena: Arena, tmp_path: Path) -> None:
    (counted,) = board(tmp_path, "", "inspect", INSPECT / "epochs.eval", "--pass-k", "1,2")
    assert counted["n_runs"] == 6 and counted["pass_at_k"]["1"]["value"] == pytest.approx(0.5)
    (left_out,) = board(tmp_path, 'infra_failures = "exclude"\n', "inspect", INSPECT / "epochs.eval", "--pass-k", "1,2")
    assert left_out["n_runs"] == 5 and left_out["attempts"] == 2


def test_a_log_schema_newer_than_known_is_refused_by_name(arena: Arena, tmp_path: Path) -> None:
    header = json.loads(json.dumps(_header(INSPECT / "dict-score.eval")))
    header["version"] = 4
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**header, "samples": []}))
    with pytest.raises(
        InputError, match=r"newer\.json: version: log schema 4 is newer than the newest this importer reads \(3\)"
    ):
        list(imported(arena, "inspect", newer))


def test_a_corrupt_zstd_member_is_named(arena: Arena, tmp_path: Path) -> None:
    broken = tmp_path / "broken.eval"
    shutil.copy(INSPECT / "dict-score.eval", broken)
    data = bytearray(broken.read_bytes())
    with zipfile.ZipFile(broken) as archive:
        info = archive.getinfo("header.json")
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start : start + 16] = b"\x00" * 16  # the zstd frame's magic number and header overwritten
    broken.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"broken\.eval: header\.json: not readable: bad zstd data"):
        list(imported(arena, "inspect", broken))


def _header(path: Path) -> dict:
    from arena_plugins.importers.inspect_archive import member

    with zipfile.ZipFile(path) as archive:
        return member(archive, path, "header.json")


MINI = FORMATS / "mini-swe-agent-current"


def test_mini_swe_agent_2_native_tool_calls_times_and_tokens(arena: Arena) -> None:
    runs = imported(arena, "mini-swe-agent", MINI)
    chat, responses, limited = runs["django__django-11099"], runs["django__django-11133"], runs["sympy__sympy-20590"]
    for run in (chat, responses):  # the same work, through chat completions and through the Responses API
        assert run["tool_calls"] == 3 and run["iterations"] == 2
        assert run["total_tokens"] == 1560 + 1820
        assert (run["input_tokens"], run["output_tokens"]) == (3300, 80)
        assert (run["cache_read_tokens"], run["cache_write_tokens"]) == (2700, 0)
        assert run["estimated_cost"] == pytest.approx(0.02)
        assert run["execution_time"] is not None and 0 <= run["execution_time"] < 60
        assert run["meta"]["format_version"] == "mini-swe-agent-1.1" and run["meta"]["harness_version"] == "2.4.6"
        assert "step_limit" not in run["meta"]["flags"]
    assert (chat["model"], responses["model"]) == ("anthropic/claude-sonnet-4-5", "openai/gpt-5")
    assert limited["tool_calls"] == 3 and limited["meta"]["exit_status"] == "LimitsExceeded"
    assert "step_limit" in limited["meta"]["flags"] and limited["meta"]["step_limit"] == 3
    assert "total_tokens" not in limited  # the text-based test model reported no usage: absent, not 0


def test_a_refused_reply_is_billed_and_the_wall_time_is_the_harness_clock(arena: Arena) -> None:
    """mini-swe-agent keeps a reply it could not parse (``FormatError``) as a ``user`` message
    with the billed response: its tokens count, and its provider ``created`` stamp (whole
    seconds, another clock) does not stretch the wall time."""
    path = MINI / "format-error.traj.json"
    [run] = imported(arena, "mini-swe-agent", path).values()
    messages = json.loads(path.read_text())["messages"]
    assert [m["role"] for m in messages].count("assistant") == 5
    assert run["iterations"] == 6 and run["tool_calls"] == 5  # six calls billed, five turns ran a command
    assert run["total_tokens"] == 2080 + 2350 + 2640 + 2940 + 3130 + 3320
    assert (run["input_tokens"], run["output_tokens"], run["cache_read_tokens"]) == (16_200, 260, 12_900)
    stamps = [m["extra"]["timestamp"] for m in messages if "timestamp" in m.get("extra", {})]
    assert run["execution_time"] == pytest.approx(max(stamps) - min(stamps)) and run["execution_time"] < 1
    assert run["meta"]["format_errors"] == 1
    assert run["estimated_cost"] == pytest.approx(json.loads(path.read_text())["info"]["model_stats"]["instance_cost"])


def test_mini_swe_agent_1_trajectories_still_import_as_before(arena: Arena) -> None:
    runs = imported(arena, "mini-swe-agent", FORMATS / "mini-swe-agent")
    old = runs["django__django-16255"]
    assert (old["total_tokens"], old["tool_calls"], old["iterations"]) == (63385, 17, 17)
    assert old["execution_time"] == 68.0 and old["meta"]["format_version"] == "mini-swe-agent-1"
    assert old["input_tokens"] + old["output_tokens"] == old["total_tokens"]


def test_an_unknown_trajectory_format_is_refused_by_name(arena: Arena, tmp_path: Path) -> None:
    data = json.loads((MINI / "toolcall.traj.json").read_text())
    data["trajectory_format"] = "mini-swe-agent-2"
    (tmp_path / "x.traj.json").write_text(json.dumps(data))
    with pytest.raises(
        InputError,
        match=r"x\.traj\.json: trajectory_format: 'mini-swe-agent-2' is not a format this "
        r"importer reads \(mini-swe-agent-1, mini-swe-agent-1\.1; the newest is",
    ):
        imported(arena, "mini-swe-agent", tmp_path / "x.traj.json")



def _first_usage(data: dict) -> dict:
    turn = next(m for m in data["messages"] if m.get("object") == "response" or m.get("role") == "assistant")
    return turn["usage"] if "usage" in turn else turn["extra"]["response"]["usage"]


@pytest.mark.parametrize(
    ("sample", "path", "bad", "shown"),
    [
        ("toolcall", ("prompt_tokens",), -3, "-3"),
        ("toolcall", ("completion_tokens",), "60", "'60'"),
        ("toolcall", ("total_tokens",), True, "True"),
        ("toolcall", ("prompt_tokens_details", "cached_tokens"), 1.5, "1.5"),
        ("toolcall", ("cache_creation_input_tokens",), -1, "-1"),
        ("responses", ("input_tokens",), [1500], "a list"),
        ("responses", ("input_tokens_details", "cached_tokens"), -1200, "-1200"),
    ],
)
def test_a_turn_s_token_count_that_is_not_a_count_is_named(
    arena: Arena, tmp_path: Path, sample: str, path: tuple[str, ...], bad: object, shown: str
) -> None:
    """A turn's usage is read without checks while every count is a plain whole number; any
    other value is refused naming the file, the field and what it holds, as the checked path
    always did, and the plain counts it stood among are still summed when it is mended."""
    data = json.loads((MINI / f"{sample}.traj.json").read_text())
    usage = _first_usage(data)
    *parents, key = path
    for part in parents:
        usage = usage[part]
    good = usage.get(key, 0)
    usage[key] = bad
    (tmp_path / "x.traj.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=rf"x\.traj\.json: messages: .*{key}.*{re.escape(shown)}"):
        imported(arena, "mini-swe-agent", tmp_path / "x.traj.json")
    usage[key] = good
    (tmp_path / "x.traj.json").write_text(json.dumps(data))
    [run] = imported(arena, "mini-swe-agent", tmp_path / "x.traj.json").values()
    assert run["total_tokens"] == 1560 + 1820


OPENHANDS_V1 = FORMATS / "openhands-v1-current"


def test_openhands_v1_events_model_and_token_breakdown(arena: Arena) -> None:
    [run] = imported(arena, "openhands", OPENHANDS_V1 / "plain").values()  # V0 crashed on the action tables
    assert run["model"] == "litellm_proxy/anthropic/claude-sonnet-4-5-20250929"  # metadata.llm.model
    assert (run["tool_calls"], run["iterations"], run["execution_time"]) == (2, 3, 29.0)
    assert (run["total_tokens"], run["input_tokens"], run["output_tokens"]) == (122_700, 120_000, 2_700)
    assert (run["cache_read_tokens"], run["cache_write_tokens"]) == (90_000, 2_000)
    assert run["estimated_cost"] == pytest.approx(0.31) and run["meta"]["format_version"] == "openhands-v1"
    assert run["success"] is False and "not_graded" in run["meta"]["flags"]


OPENHANDS_SDK = FORMATS / "openhands-sdk-current"


def test_an_openhands_sdk_conversation_is_one_ungraded_run_with_its_calls_and_usage(arena: Arena) -> None:
    """The SDK's persisted conversation: usage per call in base_state.json, tool calls from the
    action events (the finish tool's is not one), the time from the first event to the last."""
    [run] = imported(arena, "openhands", OPENHANDS_SDK).values()
    [folder] = (OPENHANDS_SDK / "conversations").iterdir()
    state = json.loads((folder / "base_state.json").read_text())
    assert run["id"] == state["id"] and run["model"] == "anthropic/claude-sonnet-4-5-20250929"
    assert (run["tool_calls"], run["iterations"]) == (2, 3)
    assert (run["input_tokens"], run["output_tokens"], run["total_tokens"]) == (10_100, 240, 10_340)
    assert (run["cache_read_tokens"], run["cache_write_tokens"]) == (5_400, 2_900)
    assert run["estimated_cost"] == pytest.approx(state["stats"]["usage_to_metrics"]["agent"]["accumulated_cost"])
    events = sorted((folder / "events").glob("event-*.json"))
    first, last = (json.loads(events[i].read_text())["timestamp"] for i in (0, -1))
    assert run["execution_time"] == pytest.approx(
        (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()
    )
    assert run["meta"]["flags"] == ["not_graded"] and run["success"] is False and "task_id" not in run
    assert run["meta"]["format_version"] == "openhands-sdk-conversation"


def test_a_damaged_sdk_conversation_names_the_file(arena: Arena, tmp_path: Path) -> None:
    for number, damaged in enumerate(("/base_state.json", "/events/event-00003")):
        copy = tmp_path / str(number)
        shutil.copytree(OPENHANDS_SDK, copy)
        [path] = [p for p in copy.rglob("*.json") if damaged in p.as_posix()]
        path.write_text(path.read_text()[: len(path.read_text()) // 2])
        with pytest.raises(InputError, match=path.name):
            imported(arena, "openhands", copy)


def test_critic_attempts_give_one_run_per_instance_with_what_every_attempt_spent(arena: Arena, tmp_path: Path) -> None:
    runs = imported(arena, "openhands", OPENHANDS_V1 / "critic")
    assert set(runs) == {"astropy__astropy-12907", "sympy__sympy-20590"}  # no duplicate ids from the attempt files
    astropy, sympy = runs["astropy__astropy-12907"], runs["sympy__sympy-20590"]
    assert astropy["estimated_cost"] == pytest.approx(0.10 + 0.12) and astropy["meta"]["critic_attempts"] == 2
    assert astropy["meta"]["attempt"] == 2 and astropy["tool_calls"] == 2  # the chosen attempt's own work
    assert astropy["total_tokens"] == 81_800 + 122_700
    assert sympy["estimated_cost"] == pytest.approx(0.20) and sympy["meta"]["critic_attempts"] == 1
    only_attempts = tmp_path / "attempts"
    only_attempts.mkdir()
    for name in ("output.critic_attempt_1.jsonl", "output.critic_attempt_2.jsonl"):
        shutil.copy(OPENHANDS_V1 / "critic" / name, only_attempts / name)
    again = imported(arena, "openhands", only_attempts)  # without output.jsonl: the last attempt of each
    assert {i: r["meta"]["attempt"] for i, r in again.items()} == {"astropy__astropy-12907": 2, "sympy__sympy-20590": 1}
    assert again["astropy__astropy-12907"]["estimated_cost"] == pytest.approx(0.22)


def test_openhands_v0_outputs_still_import_as_before(arena: Arena) -> None:
    runs = imported(arena, "openhands", FORMATS / "openhands-eval-output")
    assert (
        runs["ponylang__ponyc-4595"]["tool_calls"] == 22
        and runs["ponylang__ponyc-4595"]["meta"]["format_version"] == "openhands-v0"
    )


def test_swe_bench_pro_results_and_infra_errors(arena: Arena, tmp_path: Path) -> None:
    pro = FORMATS / "swe-bench-pro"
    runs = imported(arena, "swebench", pro)
    assert len(runs) == 4 and sum(r["success"] for r in runs.values()) == 2
    errored = [r for r in runs.values() if "harness_error" in r["meta"]["flags"]]
    assert [r["id"] for r in errored] == [next(iter(json.loads((pro / "infra_errors.json").read_text())))]
    assert board(tmp_path, "", "swebench", pro)[0]["score"] == pytest.approx(50.0)  # 2 of 4: the error is a failure
    excluded = board(tmp_path, 'infra_failures = "exclude"\n', "swebench", pro)
    assert excluded[0]["score"] == pytest.approx(100 * 2 / 3)  # the script's own accuracy
    (tmp_path / "eval_results.json").write_text('{"x__y-1": "yes"}')
    with pytest.raises(InputError, match=r"eval_results\.json: x__y-1: expected true or false \(resolved\), got 'yes'"):
        imported(arena, "swebench", tmp_path / "eval_results.json")


def test_an_eval_log_and_its_converted_json_twin_are_read_once(arena: Arena) -> None:
    """``converted/epochs.json`` is what Inspect's own ``inspect log convert --to json`` made of
    ``epochs.eval`` (make.py): the same log, which a folder holding both gives once."""
    twin = INSPECT / "converted" / "epochs.json"

    def without_source(runs: dict[str, dict]) -> dict[str, dict]:
        return {i: {**r, "meta": {k: v for k, v in r["meta"].items() if k != "source"}} for i, r in runs.items()}

    archive = imported(arena, "inspect", INSPECT / "epochs.eval")
    assert without_source(imported(arena, "inspect", twin)) == without_source(archive)  # field by field
    both = imported(arena, "inspect", INSPECT)  # both logs, and dict-score.eval: no id twice
    assert {i: r for i, r in both.items() if i in archive} == archive  # from the archive
    assert len(both) == len(archive) + len(imported(arena, "inspect", INSPECT / "dict-score.eval"))


def test_a_swe_bench_5_run_report_counts_the_instances_it_never_predicted_as_unresolved(
    arena: Arena, tmp_path: Path
) -> None:
    """SWE-bench 5's own make_run_report (tests/data/formats/swe-bench-current/make.py): 4 instances,
    3 predicted (one an empty patch), 1 resolved. SWE-bench's rate is 1 of 4, over the dataset."""
    report = FORMATS / "swe-bench-current" / "openai__gpt-5-mini.verified-mini.json"
    published = json.loads(report.read_text())
    runs = imported(arena, "swebench", report)
    assert len(runs) == published["total_instances"] == 4
    assert [i for i, r in runs.items() if r["success"]] == published["resolved_ids"]
    assert "not_completed" in runs["sympy__sympy-20590"]["meta"]["flags"]  # in incomplete_ids, not submitted_ids
    assert "empty_patch" in runs["django__django-11133"]["meta"]["flags"]
    # The report records no model; its name does (openai/gpt-5-mini, "/" written "__"), and says so.
    assert {(r["model"], "model_from_name" in r["meta"]["flags"]) for r in runs.values()} == {
        ("openai/gpt-5-mini", True)
    }
    rate = board(tmp_path, "", "swebench", report)[0]["means"]["correctness"]
    assert rate == pytest.approx(100 * published["resolved_instances"] / published["total_instances"])  # 25, not 33.3
    (tmp_path / "half.json").write_text(report.read_text()[: len(report.read_text()) // 2])
    with pytest.raises(InputError, match="half.json"):
        imported(arena, "swebench", tmp_path / "half.json")


HARBOR = FORMATS / "harbor-current"


def test_harbor_0_25_trials_field_by_field(arena: Arena) -> None:
    runs = imported(arena, "harbor", HARBOR)
    assert set(runs) == {"multi-step__a1", "multi-key__b1", "sandbox-timeout__c1", "agent-timeout__d1", "continued__e1"}
    multi = runs["multi-step__a1"]  # 50k+1k and 60k+2k tokens at $0.10 and $0.12, on two steps
    assert (multi["total_tokens"], multi["estimated_cost"]) == (113_000, pytest.approx(0.22))
    assert (multi["input_tokens"], multi["cache_read_tokens"], multi["output_tokens"]) == (110_000, 95_000, 3_000)
    assert multi["execution_time"] == 105.0 and multi["meta"]["steps"] == 2
    # Harbor's reward of a multi-step trial is the steps' mean (its default strategy); each step's own is kept
    assert multi["correctness"] == 0.75 and multi["success"] is False
    assert multi["meta"]["step_rewards"] == {"setup": 1.0, "fix": 0.5}
    # one run, its steps' trajectories counted (steps/NAME/agent/trajectory.json): 1 + 2 tool calls, 2 + 3 model calls
    assert (multi["tool_calls"], multi["iterations"]) == (3, 5)
    assert not [f for f in multi["meta"]["flags"] if "disagrees" in f]
    keys = runs["multi-key__b1"]
    assert keys["correctness"] == 0.875 and keys["success"] is False and "reward_aggregated" in keys["meta"]["flags"]
    assert keys["meta"]["rewards"] == {"tests_passed": 0.75, "lint": 1}
    assert (keys["cache_read_tokens"], keys["input_tokens"]) == (97_845, 97_938)  # cached tokens kept apart
    sandbox = runs["sandbox-timeout__c1"]
    assert (
        "harness_error" in sandbox["meta"]["flags"] and sandbox["meta"]["exception"] == "EnvironmentStartTimeoutError"
    )
    timed_out = runs["agent-timeout__d1"]
    assert "agent_failure" in timed_out["meta"]["flags"] and "harness_error" not in timed_out["meta"]["flags"]
    assert timed_out["correctness"] == 0.0 and timed_out["success"] is False
    # ATIF 1.8: no session_id, a continuation, a copied step, a subagent whose usage the root's totals hold
    continued = runs["continued__e1"]
    assert continued["tool_calls"] == 1 + 2 + 2 and continued["iterations"] == 1 + 0 + 1 + 2
    assert continued["total_tokens"] == 23_750 and continued["meta"]["format_version"] == "ATIF-v1.8"
    assert not [f for f in continued["meta"]["flags"] if "disagrees" in f]  # result and trajectory agree


def test_a_lone_continued_trajectory_is_one_run_and_atif_2_is_refused(arena: Arena, tmp_path: Path) -> None:
    runs = imported(arena, "harbor", HARBOR / "continued__e1" / "agent")
    [run] = runs.values()  # the continuation file is part of the run, not a second one
    assert run["id"] == "trajectory" and run["tool_calls"] == 5 and run["estimated_cost"] == pytest.approx(0.071)
    data = json.loads((HARBOR / "continued__e1" / "agent" / "trajectory.json").read_text())
    escape = {**data, "continued_trajectory_ref": "../../multi-key__b1/result.json"}
    (tmp_path / "trajectory.json").write_text(json.dumps(escape))
    with pytest.raises(InputError, match="continued_trajectory_ref: expected a file name in the same folder"):
        imported(arena, "harbor", tmp_path / "trajectory.json")
    (tmp_path / "trajectory.json").write_text(json.dumps({**data, "continued_trajectory_ref": "later.json"}))
    later = json.loads((HARBOR / "continued__e1" / "agent" / "trajectory.cont-1.json").read_text())
    (tmp_path / "later.json").write_text(json.dumps({**later, "schema_version": "ATIF-v2.0"}))
    with pytest.raises(InputError, match=r"later\.json: schema_version: ATIF-v2\.0 is newer"):  # a newer continuation
        imported(arena, "harbor", tmp_path / "trajectory.json")
    (tmp_path / "later.json").unlink()
    (tmp_path / "trajectory.json").write_text(
        json.dumps({**data, "schema_version": "ATIF-v2.0", "continued_trajectory_ref": None})
    )
    with pytest.raises(
        InputError, match=r"ATIF-v2\.0 is newer than the newest ATIF this importer reads \(ATIF-v1\.8\)"
    ):
        imported(arena, "harbor", tmp_path / "trajectory.json")


def test_harness_errors_of_harbor_leave_the_denominator_on_request(tmp_path: Path) -> None:
    def runs(config: str) -> int:
        return sum(row["n_runs"] for row in board(tmp_path, config, "harbor", HARBOR))

    assert runs("") == 5 and runs('infra_failures = "exclude"\n') == 4


def test_the_job_totals_harbor_counted_agree_with_the_trials_and_analysis_checks_are_kept(
    arena: Arena, tmp_path: Path
) -> None:
    runs = imported(arena, "harbor", HARBOR)
    assert {r["meta"]["job_id"] for r in runs.values()} == {"00000000-0000-0000-0000-000000000001"}
    assert not [r for r in runs.values() if "job_totals_disagree" in r["meta"]["flags"]]  # Harbor's own sums agree
    hacked = runs["continued__e1"]["meta"]
    assert hacked["analysis"] == {"reward_hacking": "fail", "task_specification": "pass"}
    assert "analysis_reward_hacking_failed" in hacked["flags"] and runs["continued__e1"]["success"] is True
    job = tmp_path / "job"
    shutil.copytree(HARBOR, job, ignore=shutil.ignore_patterns("make.py", "multi-key__b1"))  # one trial lost
    moved = imported(arena, "harbor", job)
    checks = {r["meta"].get("job_check") for r in moved.values()}
    assert checks == {
        "5 trials completed, 4 in the folder; n_input_tokens 250938 recorded, 153000 in the trials; "
        "n_cache_tokens 209845 recorded, 112000 in the trials; n_output_tokens 5450 recorded, 4250 in "
        "the trials; cost_usd 0.361 recorded, 0.311 in the trials"
    }
    assert all("job_totals_disagree" in r["meta"]["flags"] for r in moved.values())


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.lists(st.sampled_from(["job", "job2", "job0", "jo", "job-", "..", "t1"]), max_size=4)), max_size=12),
    st.lists(st.tuples(st.booleans(), st.lists(st.sampled_from(["job", "job2", "jo", "job-", ".."]), max_size=3)), max_size=4),
)
def test_a_job_s_trials_are_the_files_below_its_folder(files, folders) -> None:
    """A job's (and an analysis') trials are those below its folder, found by comparing paths
    as text, as ``folder in trial.parents`` finds them, in the order given, each folder asked of
    one index: siblings sharing a prefix (``job``, ``job0``, ``job2``, ``jo``, ``job-``, whose texts sort
    around a folder's own files), ``..``, relative paths below ``.``, absolute ones and the root."""
    from plugins.importers.harbor_jobs import Below

    trials = [Path("/" if rooted else "", *parts, "result.json") for rooted, parts in files]
    below = Below(trials)
    for absolute, parts in folders:
        folder = Path("/" if absolute else ".", *parts)
        assert below.under(folder) == [t for t in trials if folder in t.parents]


def test_the_importer_and_the_format_versions_it_read_are_in_the_provenance(tmp_path: Path) -> None:
    def algorithms(*args: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "arena_core", "-p", "correctness-only", "score", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[0])["provenance"]["algorithms"]

    both = algorithms(
        "--from", "mini-swe-agent", str(MINI), str(FORMATS / "mini-swe-agent" / "django__django-16255.traj.json")
    )
    assert (both["importer"], both["input_formats"]) == ("mini-swe-agent", "mini-swe-agent-1, mini-swe-agent-1.1")
    assert algorithms("--from", "inspect", str(INSPECT / "epochs.eval"))["input_formats"] == "inspect-log-v2"
    assert "importer" not in algorithms("--example")  # arena-core's own files: nothing imported


def test_a_figure_the_version_always_records_but_the_file_lacks_is_flagged(arena: Arena, tmp_path: Path) -> None:
    trial = tmp_path / "multi-key__b1"
    shutil.copytree(HARBOR / "multi-key__b1", trial)
    data = json.loads((trial / "result.json").read_text())
    assert "usage_missing" not in imported(arena, "harbor", trial)["multi-key__b1"]["meta"]["flags"]
    (trial / "result.json").write_text(json.dumps({**data, "agent_result": None}))
    run = imported(arena, "harbor", trial)["multi-key__b1"]
    assert "usage_missing" in run["meta"]["flags"] and "total_tokens" not in run
    line = json.loads((OPENHANDS_V1 / "plain" / "output.jsonl").read_text())
    (tmp_path / "output.jsonl").write_text(json.dumps({**line, "metrics": None}) + "\n")
    assert (
        "usage_missing"
        in imported(arena, "openhands", tmp_path / "output.jsonl")["django__django-11099"]["meta"]["flags"]
    )


@pytest.mark.parametrize(
    ("fmt", "folder"),
    [
        ("inspect", INSPECT),
        ("mini-swe-agent", MINI),
        ("openhands", OPENHANDS_V1),
        ("openhands", OPENHANDS_SDK),
        ("harbor", HARBOR),
        ("swebench", FORMATS / "swe-bench-pro"),
    ],
)
def test_every_current_fixture_cut_short_or_retyped_gives_a_named_error_never_a_traceback(
    arena: Arena, tmp_path: Path, fmt: str, folder: Path
) -> None:
    """Each data file of the folder, cut in half or with its values swapped for wrong types, read
    alone: the importer reports it by name (an InputError) or reads what is left; nothing else."""
    files = [p for p in folder.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".eval")]
    assert files
    refused = 0
    for path in files:
        for variant in ("cut", "retyped"):
            copy = tmp_path / variant / path.relative_to(folder)
            copy.parent.mkdir(parents=True, exist_ok=True)
            raw = path.read_bytes()
            if variant == "cut":
                copy.write_bytes(raw[: len(raw) // 2])
            elif path.suffix == ".eval":
                copy.write_bytes(raw.replace(b"PK\x03\x04", b"PK\x03\x05", 1))
            else:
                text = raw.decode()
                copy.write_text(text.replace(": 0.", ': "zero point ').replace(": true", ': "yes"'))
            try:
                list(ImportSession(arena.components.importers[fmt], [copy]).runs())
            except InputError as exc:
                assert copy.name in str(exc)
                refused += variant == "cut"
    assert refused == len(files)  # every file cut in half was refused by name: the attack ran


def test_the_reward_rule_is_configurable(tmp_path: Path) -> None:
    trial = HARBOR / "multi-key__b1"  # {"tests_passed": 0.75, "lint": 1}

    def correctness(config: str) -> float:
        (tmp_path / "arena.toml").write_text(config)
        done = subprocess.run(
            [sys.executable, "-m", "arena_core", "-c", str(tmp_path / "arena.toml"), "import", "harbor", str(trial)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        return float(json.loads(done.stdout)["correctness"])

    assert correctness("") == pytest.approx(0.875)  # the mean
    assert correctness('[plugins.importers]\nharbor_reward_aggregate = "min"\n') == pytest.approx(0.75)
    assert correctness('[plugins.importers]\nharbor_reward_key = "lint"\n') == pytest.approx(1.0)
    (tmp_path / "arena.toml").write_text('[plugins.importers]\nharbor_reward_aggregate = "median"\n')
    done = subprocess.run(
        [sys.executable, "-m", "arena_core", "-c", str(tmp_path / "arena.toml"), "import", "harbor", str(trial)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "harbor_reward_aggregate" in done.stderr and "Traceback" not in done.stderr


def test_a_file_given_by_name_that_is_no_harbor_file_is_read_and_refused(arena: Arena, tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    with pytest.raises(InputError, match=r"notes\.json: schema_version: expected ATIF-vMAJOR\.MINOR"):
        imported(arena, "harbor", tmp_path / "notes.json")
    (tmp_path / "result.json").write_text('{"hello": 1}')
    with pytest.raises(InputError, match=r"result\.json: task_name"):
        imported(arena, "harbor", tmp_path / "result.json")


OPENHANDS_INDEX = FORMATS / "openhands-index"


def test_the_openhands_index_boards_give_back_each_published_score(arena: Arena) -> None:
    """One board per benchmark (``where`` meta.benchmark, correctness alone: what ``arena
    leaderboard --where meta.benchmark=...`` prints, as docs/importers/openhands-index.md runs
    it) reproduces every ``scores.json`` accuracy whose instance file agrees with it; the one
    that does not is flagged, and SWE-bench Multimodal's solvable-subset metric is named, not
    reproduced."""
    from arena_core.model.serde import to_dict

    runs = imported(arena, "openhands-index", OPENHANDS_INDEX)
    glm_swt = [r for r in runs.values() if r["model"] == "GLM-5" and r["meta"]["benchmark"] == "swt-bench"]
    assert len(glm_swt) == 433 and sum("missing_from_results" in r["meta"]["flags"] for r in glm_swt) == 99
    published: dict[tuple[str, str], float] = {}
    for run in runs.values():
        if run["meta"]["published_metric"] == "accuracy":
            published[(run["meta"]["benchmark"], f"{run['tool']} / {run['model']}")] = run["meta"]["published_score"]
    assert len(published) == 12 and ("swt-bench", "Claude Code v1.25.0 / claude-opus-4-6") in published
    disagreeing = {(r["meta"]["benchmark"], r["model"]) for r in runs.values()
                   if "published_score_disagrees" in r["meta"]["flags"]}  # fmt: skip
    assert disagreeing == {("commit0", "claude-opus-4-6")}
    reproduced = 0
    unrecorded = ("total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost")
    scorer = Arena({"missing": dict.fromkeys(unrecorded, "reweight")}, autoload=False, profile="correctness-only")
    session = ImportSession(scorer.components.importers["openhands-index"], [OPENHANDS_INDEX])
    read = [r.submission for r in session.runs()]
    evaluations = scorer.evaluate_many(read, session.tasks)  # scored once; a board per benchmark
    meta = {r["id"]: r["meta"] for r in read}
    for benchmark in ("swe-bench", "swt-bench", "commit0", "gaia"):
        board = scorer.leaderboard(evaluations, by="tool,model", where={"benchmark": benchmark}, meta=meta)
        for row in (to_dict(g) for g in board):
            score = published[(benchmark, row["group"])]
            if (benchmark, row["group"].rsplit(" / ", 1)[1]) in disagreeing:
                assert round(row["means"]["correctness"], 1) == 50.0 != score
                continue
            assert round(row["means"]["correctness"], 1) == pytest.approx(score), (benchmark, row["group"])
            reproduced += 1
    assert reproduced == 11
    assert {r["meta"]["published_metric"] for r in runs.values() if r["meta"]["benchmark"] == "swe-bench-multimodal"} == {
        "solveable_accuracy"
    }
    opus = runs["Claude Code/claude-opus-4-6/swe-bench/astropy__astropy-12907"]
    assert opus["success"] is True and opus["estimated_cost"] == pytest.approx(0.3331345)
    assert opus["meta"]["model_release_date"] == "2026-02-05" and opus["task_id"] == "swe-bench/astropy__astropy-12907"


def test_a_damaged_openhands_index_file_is_named_and_the_other_folders_still_read(arena: Arena, tmp_path: Path) -> None:
    copy = tmp_path / "index"
    shutil.copytree(OPENHANDS_INDEX, copy)
    gaia = copy / "results" / "GLM-5" / "instance_results" / "gaia.json"
    gaia.write_text(gaia.read_text()[: len(gaia.read_text()) // 2])
    with pytest.raises(InputError, match=r"GLM-5/instance_results/gaia\.json"):
        imported(arena, "openhands-index", copy)
    session = ImportSession(arena.components.importers["openhands-index"], [copy], skip_bad=True)
    assert {r.submission["model"] for r in session.runs()} == {"claude-sonnet-4-5", "claude-opus-4-6"}
    shutil.copy(OPENHANDS_INDEX / "results" / "GLM-5" / "instance_results" / "gaia.json", gaia)
    swe = copy / "results" / "GLM-5" / "instance_results" / "swe-bench.json"
    swe.write_text(swe.read_text().replace('"resolved":true', '"resolved":"yes"', 1))
    with pytest.raises(InputError, match=r"swe-bench\.json: [^:]+: resolved: expected true, false or null, got 'yes'"):
        imported(arena, "openhands-index", copy)



@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(["```bash", "```", " ", "\t", "\n", "ls", "`", "bash"]), max_size=14))
def test_a_one_x_turn_counts_a_command_exactly_when_mini_swe_agent_s_action_regex_matches(parts: list[str]) -> None:
    """The importer asks whether mini-swe-agent's action regex matches with a substring search
    (plugins/importers/mini_swe_agent.py); on replies built from fences, blanks and breaks it
    answers as the regex itself does."""
    import re

    from arena_plugins.importers.mini_swe_agent import _commands

    content = "".join(parts)
    regex = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
    assert _commands({"role": "assistant", "content": content}, "t") == (1 if regex.search(content) else 0), content


def _atif_steps_as_checked_one_by_one(steps: list) -> tuple[int, int, list[str]]:
    """What ATIF steps count to, each field read through ``value``/``count`` in the order the
    importer uses them (its reading before fields were looked up directly): the oracle."""
    from collections.abc import Mapping

    from arena_core.importing.runs import count, value

    tools = iterations = 0
    stamps = []
    for index, step in enumerate(steps):
        at = f"t.json: steps.{index}"
        if not isinstance(step, Mapping):
            raise InputError(f"{at}: expected a step (a table)")
        if value(step, "is_copied_context", at, bool):
            continue
        tools += len(value(step, "tool_calls", at, list) or [])
        if value(step, "source", at, str) == "agent":
            calls = count(step, "llm_call_count", at)
            iterations += 1 if calls is None else calls
        if stamp := value(step, "timestamp", at, str):
            stamps.append(stamp)
    return tools, iterations, stamps


_ODD = st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.floats(allow_nan=True), st.text(max_size=3),
                 st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=1))  # fmt: skip
_STEP = st.one_of(
    st.fixed_dictionaries({}, optional={"is_copied_context": st.one_of(st.booleans(), _ODD),
                                        "tool_calls": st.one_of(st.lists(st.just({}), max_size=3), _ODD),
                                        "source": st.one_of(st.sampled_from(["agent", "user", "system"]), _ODD),
                                        "timestamp": st.one_of(st.just("2026-01-01T00:00:00Z"), _ODD),
                                        "llm_call_count": st.one_of(st.integers(0, 4), _ODD)}),  # fmt: skip
    _ODD,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_STEP, max_size=6))
def test_atif_steps_read_directly_count_and_fail_as_each_field_checked_in_turn(steps: list) -> None:
    """An ATIF step's fields are looked up directly, and checked through ``value`` only when one
    is not what ATIF writes: on any steps, the figures, and the error naming the first field
    that is wrong (a copied step's others, and a step's model calls unless an agent's, unread),
    equal reading each field through the checks in turn."""
    from arena_plugins.importers.atif import _add

    figures = {"tool_calls": 0, "iterations": 0}
    stamps: list[str] = []
    try:
        expected = _atif_steps_as_checked_one_by_one(steps)
    except InputError as exc:
        with pytest.raises(InputError) as raised:
            _add({"steps": steps}, "t.json", figures, None, {}, stamps, [])
        assert str(raised.value) == str(exc)
        return
    _add({"steps": steps}, "t.json", figures, None, {}, stamps, [])
    assert (figures["tool_calls"], figures["iterations"], stamps) == expected


def test_a_harbor_trial_s_result_is_read_twice_with_its_job_s_file(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beside its job's ``result.json``, a trial's is read once to tell what it is, which notes
    its tokens and cost for the job's totals, and once by the trial: the job's check no longer
    reads it a third time. The runs and their job notes are those the sample gives."""
    from arena_core.importing import runs as runs_module
    from arena_plugins.importers import harbor as harbor_module

    reads: list[str] = []  # every read of a file, whole or its head
    real, real_peek, real_either = runs_module.read_bytes, harbor_module.peek, harbor_module.head_or_whole

    def counted(path: str | Path) -> bytes:
        reads.append(str(path))
        return real(path)

    def peeked(path: Path, size: int = 4096) -> bytes:
        reads.append(str(path))
        return real_peek(path, size)

    def either(path: Path, size: int, whole: Any) -> tuple[bytes, bool]:
        reads.append(str(path))
        return real_either(path, size, whole)

    monkeypatch.setattr(runs_module, "read_bytes", counted)
    monkeypatch.setattr(harbor_module, "peek", peeked)
    monkeypatch.setattr(harbor_module, "head_or_whole", either)
    runs = imported(arena, "harbor", HARBOR)
    trials = sorted(str(p) for p in HARBOR.glob("*/result.json"))
    assert len(trials) == 5 and [reads.count(t) for t in trials] == [2] * 5
    assert reads.count(str(HARBOR / "result.json")) == 2  # told, then checked
    assert {r["meta"].get("job_id") for r in runs.values()} == {json.loads((HARBOR / "result.json").read_text())["id"]}


def test_a_result_json_that_is_not_a_trial_s_is_read_no_further_than_its_head(
    arena: Arena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trial's ``result.json`` is read whole when its head tells it (for its job's totals), but
    another file of that name, however large, only to its head: 4 MB beside the sample's trials
    add under 8 KB to what is read, and nothing to the runs."""
    job = tmp_path / "job"
    shutil.copytree(HARBOR, job, ignore=shutil.ignore_patterns("make.py", "README.md"))
    (job / "other").mkdir()
    (job / "other" / "result.json").write_bytes(b'{"data": "' + b"x" * (4 << 20) + b'"}')
    read = 0
    real = os.read

    def counted(fd: int, size: int) -> bytes:
        nonlocal read
        found = real(fd, size)
        read += len(found)
        return found

    with monkeypatch.context() as patched:
        patched.setattr(os, "read", counted)
        runs = imported(arena, "harbor", job)
    alone = sum(p.stat().st_size for p in HARBOR.rglob("*.json"))
    assert read < 3 * alone + (8 << 10)  # each file read at most three times, and 8 KB of the other
    assert set(runs) == set(imported(arena, "harbor", HARBOR))


def test_harbor_reads_the_head_of_a_trial_s_result_not_of_its_agent_files(
    arena: Arena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder's files are told apart by their heads (a ``result.json`` by one read of the whole
    file), except those in the agent folder of a trial found there (its trajectory is read by the
    trial; nothing else there is a run): the runs are those read when every head was read, and a
    trajectory given by name is still read."""
    from arena_plugins.importers import harbor as harbor_module

    job = tmp_path / "job"
    shutil.copytree(HARBOR, job, ignore=shutil.ignore_patterns("make.py", "README.md"))
    lone = job / "lone" / "agent"
    lone.mkdir(parents=True)  # a trajectory no trial wrote: a run of its own
    shutil.copy(HARBOR / "continued__e1" / "agent" / "trajectory.cont-1.json", lone / "trajectory.json")
    heads: list[Path] = []
    real, real_result = harbor_module._kind, harbor_module._result_kind
    monkeypatch.setattr(harbor_module, "_kind", lambda p: heads.append(p) or real(p))
    monkeypatch.setattr(harbor_module, "_result_kind", lambda p, noted: heads.append(p) or real_result(p, noted))
    runs = imported(arena, "harbor", job)
    assert sorted(p.name for p in heads) == ["analysis.json", *["result.json"] * 6, "trajectory.json"]
    assert [p for p in heads if p.name == "trajectory.json"] == [lone / "trajectory.json"]
    trials = imported(arena, "harbor", HARBOR)
    assert len(runs) == len(trials) + 1 and set(trials) <= set(runs)
    heads.clear()
    given = job / "continued__e1" / "agent" / "trajectory.json"
    [run] = imported(arena, "harbor", given).values()  # by name: read as what its name says
    assert run["tool_calls"] == 5
