"""People's labels where runs are scored: recorded beside the judges' verdicts
(``label_policy = "calibrate"``), scoring what they label (``"override"``), and a leaderboard's
correctness corrected by them, checked against ppi-python and by simulation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from arena_core.cli import main

TASK = {"id": "fashion-mnist", "category": "data_analysis", "success_criteria": [{
    "type": "judge", "judge": "people", "evidence": ["final_answer"], "requirements": [
        {"id": "r0", "criteria": "The dataset is loaded", "prerequisites": []},
        {"id": "r1", "criteria": "Data is augmented", "prerequisites": ["r0"]},
        {"id": "r2", "criteria": "The model is saved", "prerequisites": ["r0", "r1"]}]}]}  # fmt: skip
RUN = {"id": "metagpt-1", "task_id": "fashion-mnist", "tool": "metagpt", "model": "gpt-4o",
       "total_tokens": 64000, "tool_calls": 22, "meta": {"final_answer": "Model trained and saved."}}  # fmt: skip
VERDICTS = [("r0", False), ("r1", True), ("r2", None)]


def _arena(tmp_path: Path, policy: str, labels: list[dict]) -> list[str]:
    (tmp_path / "tasks.json").write_text(json.dumps([TASK]))
    (tmp_path / "runs.jsonl").write_text(json.dumps(RUN) + "\n")
    (tmp_path / "verdicts.jsonl").write_text("".join(
        json.dumps({"submission_id": "metagpt-1", "requirement": r, "verdict": v, "judge": "human"}) + "\n"
        for r, v in VERDICTS))  # fmt: skip
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(label) + "\n" for label in labels))
    (tmp_path / "arena.toml").write_text(
        f'judge_cache = ""\nlabel_policy = "{policy}"\n[judges.people]\nprovider = "recorded"\npath = "{tmp_path / "verdicts.jsonl"}"\n'
    )
    return ["--config", str(tmp_path / "arena.toml"), "score", str(tmp_path / "runs.jsonl"),
            "--tasks", str(tmp_path / "tasks.json"), "--format", "json"]  # fmt: skip


def _scored(args: list[str], *more: str) -> dict:
    result = CliRunner().invoke(main, [*args, *more])
    assert result.exit_code == 0, result.output
    [evaluation] = json.loads(result.stdout)
    return evaluation


LABELS = [{"submission_id": "metagpt-1", "requirement": "r0", "label": True, "rater": "ana"},
          {"submission_id": "metagpt-1", "requirement": "r0", "label": True, "rater": "bo"},
          {"submission_id": "metagpt-1", "requirement": "r2", "label": True, "rater": "ana"},
          {"submission_id": "metagpt-1", "requirement": "r2", "label": False, "rater": "bo"}]  # fmt: skip


def test_labels_are_evidence_by_default_and_score_what_they_label_under_override(tmp_path: Path) -> None:
    calibrate = _arena(tmp_path, "calibrate", LABELS)
    without = _scored(calibrate)
    assert without["correctness_score"] == 0.0  # r0 unmet by the judge: every requirement unmet
    kept = _scored(calibrate, "--labels", str(tmp_path / "labels.jsonl"))
    assert kept["correctness_score"] == 0.0  # the labels change nothing under calibrate...
    [criterion] = kept["criteria"]
    r0, r1, r2 = criterion["details"]
    assert r0["people"] == {"met": 2, "unmet": 0} and "scored_by" not in r0  # ...but are recorded
    assert r2["people"] == {"met": 1, "unmet": 1} and "people" not in r1

    overridden = _scored(_arena(tmp_path, "override", LABELS), "--labels", str(tmp_path / "labels.jsonl"))
    [criterion] = overridden["criteria"]
    r0, r1, r2 = criterion["details"]
    assert (r0["verdict"], r0["scored_by"]) == ("met", "people") and "2 met, 0 not" in r0["reason"]
    assert r0["judges"]["people"]["verdict"] is False  # the judge's own answer is kept
    assert r1["verdict"] == "met"  # its prerequisite is met now
    assert r2["verdict"] == "unscored" and "scored_by" not in r2  # the people tie: the judge (no verdict) stands
    assert overridden["correctness_score"] == 100.0  # 2 of 2 scored requirements met
    assert "(1 scored by people's labels)" in criterion["reason"]


def test_a_bad_labels_line_on_a_scoring_command_is_named(tmp_path: Path) -> None:
    args = _arena(tmp_path, "override", [*LABELS, {"submission_id": "metagpt-1", "label": "yes", "rater": "cy"}])
    result = CliRunner().invoke(main, [*args, "--labels", str(tmp_path / "labels.jsonl")])
    assert result.exit_code == 2
    assert "labels.jsonl:5" in result.stderr and "label" in result.stderr and "Traceback" not in result.output


def _simulated_arena(
    tmp_path: Path, seed: int, runs: int = 300
) -> tuple[dict[str, dict[str, tuple[float, float]]], list]:
    """Runs of two tools on one task of two requirements (r1 needs r0), a judge that catches 85%
    of met requirements and 90% of unmet ones, and a random 30% of runs labelled by two people
    who see the truth. Returns, per tool, each run's (people's, judge's) correctness as the test
    computes it, and the labelled run ids."""
    rng = np.random.default_rng(seed)
    task = {"id": "t", "category": "data_analysis", "success_criteria": [{"type": "judge", "judge": "j", "requirements": [
        {"id": "r0", "criteria": "first"}, {"id": "r1", "criteria": "second", "prerequisites": ["r0"]}]}]}  # fmt: skip
    records, verdicts, labels, truth = [], [], [], {}
    for i in range(runs):
        tool = ("a", "b")[i % 2]
        sid = f"{tool}-{i}"
        records.append({"id": sid, "task_id": "t", "tool": tool, "total_tokens": 1000 + i, "tool_calls": 3})
        met = {r: bool(rng.random() < (0.75 if tool == "a" else 0.45)) for r in ("r0", "r1")}
        said = {r: (rng.random() < 0.85) if met[r] else (rng.random() >= 0.90) for r in met}
        verdicts += [
            {"submission_id": sid, "requirement": r, "verdict": bool(v), "judge": "j"} for r, v in said.items()
        ]
        if rng.random() < 0.3:
            labels += [{"submission_id": sid, "requirement": r, "label": met[r], "rater": who, "sample": "random"}
                       for r in met for who in ("ana", "bo")]  # fmt: skip

        def credit(v: dict[str, bool]) -> float:
            return (v["r0"] + (v["r0"] and v["r1"])) / 2 * 100

        truth[sid] = (tool, credit(met), credit(said))
    (tmp_path / "tasks.json").write_text(json.dumps([task]))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(label) + "\n" for label in labels))
    (tmp_path / "arena.toml").write_text(
        f'judge_cache = ""\n[judges.j]\nprovider = "recorded"\npath = "{tmp_path / "verdicts.jsonl"}"\n'
    )
    per_tool: dict[str, dict[str, tuple[float, float]]] = {"a": {}, "b": {}}
    for sid, (tool, people, judge) in truth.items():
        per_tool[tool][sid] = (people, judge)
    return per_tool, sorted({label["submission_id"] for label in labels})


def test_the_corrected_board_matches_ppi_python_on_the_runs_correctness(tmp_path: Path) -> None:
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    per_tool, labelled = _simulated_arena(tmp_path, 7)
    result = CliRunner().invoke(main, [
        "--config", str(tmp_path / "arena.toml"), "leaderboard", str(tmp_path / "runs.jsonl"), "--tasks",
        str(tmp_path / "tasks.json"), "--labels", str(tmp_path / "labels.jsonl"), "--correctness-source", "corrected",
        "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = {row["group"]: row["correctness_corrected"] for row in json.loads(result.stdout)["rows"]}
    for tool, runs in per_tool.items():
        everything = np.array([judge for _, judge in runs.values()])
        y = np.array([runs[s][0] for s in labelled if s in runs])
        f = np.array([runs[s][1] for s in labelled if s in runs])
        (low,), (high,) = ppi_mean_ci(y, f, everything, alpha=0.05, lam=1)
        (estimate,) = ppi_mean_pointestimate(y, f, everything, lam=1)
        row = rows[tool]
        assert (row["runs"], row["labelled"]) == (len(runs), len(y))
        assert row["judge"] == pytest.approx(everything.mean(), abs=1e-9)
        assert row["corrected"] == pytest.approx(estimate, abs=1e-9)
        assert (row["low"], row["high"]) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
        assert row["warnings"] == []

    table = CliRunner().invoke(main, [
        "--config", str(tmp_path / "arena.toml"), "leaderboard", str(tmp_path / "runs.jsonl"), "--tasks",
        str(tmp_path / "tasks.json"), "--labels", str(tmp_path / "labels.jsonl"), "--correctness-source", "corrected"])  # fmt: skip
    assert table.exit_code == 0, table.output
    header = table.stdout.splitlines()[0]
    assert "Judge corr." in header and "Corrected" in header and "Labelled" in header
    assert f"{rows['a']['corrected']:.2f}" in table.stdout and "prediction-powered" in table.stdout
    missing = CliRunner().invoke(main, ["--config", str(tmp_path / "arena.toml"), "leaderboard",
                                        str(tmp_path / "runs.jsonl"), "--tasks", str(tmp_path / "tasks.json"),
                                        "--correctness-source", "corrected"])  # fmt: skip
    assert missing.exit_code == 2 and "needs people's labels" in missing.stderr


def test_the_corrected_interval_covers_the_peoples_mean_where_the_judges_does_not() -> None:
    """Simulation with known truth, on the module's own function over evaluations made here: the
    corrected 95% interval covers the mean correctness people would give every run about 95% of
    the time; the judges' mean misses it."""
    from arena_core.model.labels import Label
    from arena_core.model.records import CriterionResult, Evaluation, SuccessCriterion, Task
    from arena_core.stats.corrected import corrected_correctness

    task = Task("t", success_criteria=(SuccessCriterion("judge", params={"requirements": [
        {"id": "r0", "criteria": "first"}, {"id": "r1", "criteria": "second", "prerequisites": ["r0"]}]}),))  # fmt: skip
    rng = np.random.default_rng(3)
    covered, judge_off, replications = 0, [], 200
    for _ in range(replications):
        evaluations, labels, people_mean = [], [], []
        for i in range(400):
            met = rng.random(2) < 0.6
            said = np.where(met, rng.random(2) < 0.85, rng.random(2) >= 0.90)
            people = (int(met[0]) + int(met[0] and met[1])) / 2 * 100
            judged = (int(said[0]) + int(said[0] and said[1])) / 2 * 100
            people_mean.append(people)
            result = CriterionResult("judge", "failed", judged / 100)
            evaluations.append(
                Evaluation(f"s{i}", "t", 0.0, {"correctness": judged}, {}, "d", 0.0, "", criteria=(result,))
            )
            if i < 100:  # the first 100 of 400 exchangeable runs: a random sample
                labels += [
                    Label(f"s{i}", bool(m), "ana", r, sample="random") for r, m in zip(("r0", "r1"), met, strict=True)
                ]
        [row] = corrected_correctness(evaluations, ["all"] * 400, {"t": task}, labels).values()
        truth = float(np.mean(people_mean))
        covered += row.low <= truth <= row.high
        judge_off.append(row.judge - truth)
    assert covered / replications >= 0.92
    assert abs(float(np.mean(judge_off))) > 3  # the judge's bias, which the correction removes


def test_a_worker_rebuilding_the_arena_scores_with_the_labels_of_its_run(tmp_path: Path) -> None:
    """Checks that run elsewhere (check_executor processes or dask) rebuild the Arena from its
    configuration: the labels of the run travel with it."""
    from arena_core import Arena
    from arena_core.model.labels import Label
    from arena_core.model.records import Submission, Task
    from arena_core.model.serde import structure

    _arena(tmp_path, "override", LABELS)
    config = {"judge_cache": "", "label_policy": "override",
              "judges": {"people": {"provider": "recorded", "path": str(tmp_path / "verdicts.jsonl")}}}  # fmt: skip
    arena = Arena(config)
    task, run = structure(TASK, Task), structure(RUN, Submission)
    job = arena.scorer.remote_job
    assert job is not None
    before = job(run, task, arena.default_baseline, "2026-11-27T00:00:00Z")
    arena.use_labels([Label(**{k: v for k, v in label.items()}) for label in LABELS])
    after = arena.scorer.remote_job(run, task, arena.default_baseline, "2026-11-27T00:00:00Z")  # type: ignore[misc]
    assert (before.scores["correctness"], after.scores["correctness"]) == (0.0, 100.0)
