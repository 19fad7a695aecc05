"""Comparing two scoring profiles on the same submissions."""

from __future__ import annotations

import json
from pathlib import Path

from clirun import run_arena

import arena_core.examples
from arena_core.compare import compare
from arena_core.config.settings import ScoringConfig

EXAMPLES = Path(arena_core.examples.__file__).parent


def _arena():
    subs = [json.loads(line) for line in (EXAMPLES / "submissions.jsonl").read_text().splitlines() if line.strip()]
    tasks = json.loads((EXAMPLES / "tasks.json").read_text())
    return subs, (tasks if isinstance(tasks, dict) else {t["id"]: t for t in tasks})


def test_a_profile_compared_with_itself_changes_nothing() -> None:
    subs, tasks = _arena()
    report = compare(subs, tasks, ("default", ScoringConfig()), ("same", ScoringConfig()), resamples=500)
    assert report.kendall_tau_b == 1.0 and report.spearman_rho == 1.0 and report.top_k_overlap == 1.0
    assert {r["delta"] for r in report.submissions} == {0.0} and report.largest_movers == ()
    assert report.mean_delta == 0.0 and report.delta_interval == (0.0, 0.0)
    assert all(t["kendall_tau_b"] == 1.0 for t in report.tasks)
    json.dumps(report.as_dict())  # JSON-ready for notebooks


def test_a_swap_with_a_known_effect_is_detected_in_the_right_direction() -> None:
    subs, tasks = _arena()
    # B weighs correctness only: submissions that met every criterion gain, the rest lose.
    only_correctness = {name: {"efficiency": 0.0, "speed": 0.0, "cost": 0.0, "correctness": 1.0}
                        for name in ("default", "frontend_development", "backend_development", "data_processing",
                                     "debugging", "refactoring")}
    b = ScoringConfig(weights=only_correctness)
    report = compare(subs, tasks, ("default", ScoringConfig()), ("correctness", b), resamples=500, seed=3)
    # Weights change the overall score only, never a dimension's score.
    assert {d for r in report.submissions for d in r["metric_deltas"].values()} == {0.0}
    # Every criterion met: correctness 100 beats any mix, so those submissions can only gain.
    perfect = [r for r in report.submissions if r["score_b"] >= 100.0]
    assert perfect and all(r["delta"] >= 0 for r in perfect) and any(r["delta"] > 0 for r in perfect)
    assert any(r["delta"] < 0 for r in report.submissions)
    low, high = report.delta_interval
    assert low <= report.mean_delta <= high and report.kendall_tau_b < 1.0
    again = compare(subs, tasks, ("default", ScoringConfig()), ("correctness", b), resamples=500, seed=3)
    assert again.as_dict() == report.as_dict()  # seeded: the same inputs give the same report
    assert report.largest_movers and abs(report.largest_movers[0]["rank_change"]) >= abs(report.largest_movers[-1]["rank_change"])


# ---------------------------------------------------------------------------
# arena compare: terminal, JSON and HTML reports
# ---------------------------------------------------------------------------

import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402

import pytest  # noqa: E402

from arena_core import Submission, structure  # noqa: E402
from arena_core.config.files import load_config  # noqa: E402

PROFILES = """
[profiles.log-tokens.metrics]
token_efficiency = "token_efficiency_log"

[profiles.percentile.metrics]
token_efficiency = "token_efficiency_percentile"
tool_call_efficiency = "tool_call_efficiency_percentile"
speed = "speed_percentile"
cost = "cost_percentile"
"""


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_arena(*args, cwd=cwd)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "arena.toml").write_text(PROFILES)
    return tmp_path


def test_the_terminal_report_of_a_profile_against_itself(workdir: Path) -> None:
    result = arena("compare", "--example", "--a", "default", "--b", "default", cwd=workdir)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "mean difference B - A +0.00 (95% CI +0.00 to +0.00" in out
    assert "Kendall tau-b 1.000, Spearman rho 1.000" in out and "Top-10 overlap: 100%" in out
    assert "none: every submission kept its score and rank" in out
    tools = out.split("Tools (ranked")[1].split("\n\n")[0].splitlines()[3:]
    assert len(tools) == 5 and all(line.split()[2] == line.split()[3] for line in tools)  # rank A == rank B


def test_the_json_report_is_the_python_api_and_records_provenance(workdir: Path) -> None:
    result = arena("compare", "--example", "--b", "log-tokens", "--format", "json", "--resamples", "300", "--seed", "7",
                   cwd=workdir)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    subs, tasks = _arena()
    loaded = load_config(workdir / "arena.toml")
    expected = compare(subs, tasks, loaded.profile("default"), loaded.profile("log-tokens"), resamples=300, seed=7,
                       autoload=False)
    made = data.pop("provenance")  # what the comparison read: the runs and tasks, as every JSON board says
    assert data == json.loads(json.dumps(expected.as_dict()))
    assert data["provenance_b"]["profile"] == "log-tokens"
    assert made["n_runs"] == len(subs) and made["command"][:3] == ["compare", "--b", "log-tokens"]
    assert data["provenance_b"]["algorithms"]["token_efficiency"] == "token_efficiency_log"
    assert data["provenance_a"]["algorithms"]["token_efficiency"] == "token_efficiency"
    assert data["provenance_a"]["config_digest"] != data["provenance_b"]["config_digest"]
    # The log score charges large token counts more: efficiency falls for every tool, nothing else moves.
    assert all(t["metric_deltas"]["efficiency"] < 0 and t["metric_deltas"]["speed"] == 0 for t in data["tools"])


def test_the_html_report_is_self_contained_with_both_plots(workdir: Path) -> None:
    target = workdir / "report.html"
    result = arena("compare", "--example", "--b", "percentile", "--format", "html", "-o", str(target), cwd=workdir)
    assert result.returncode == 0 and result.stdout == "", result.stderr
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert not re.search(r"(src|href)=", page)  # nothing to fetch
    svgs = [ET.fromstring(m) for m in re.findall(r"<svg.*?</svg>", page, flags=re.S)]
    assert len(svgs) == 2
    ns = "{http://www.w3.org/2000/svg}"
    slopes = [line for line in svgs[0].iter(f"{ns}line")]
    assert len(slopes) == 5  # one per tool
    report = json.loads(arena("compare", "--example", "--b", "percentile", "--format", "json", cwd=workdir).stdout)
    moved = sum(t["rank_a"] != t["rank_b"] for t in report["tools"])
    assert sum(line.get("stroke") != "#888" for line in slopes) == moved
    counts = [int(t.text.split()[0]) for t in svgs[1].iter(f"{ns}title")]
    assert sum(counts) == 180  # every submission's difference is in the histogram
    assert "B percentile" not in page and "percentile (B)" in page
    assert os.stat(target).st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_an_unknown_profile_is_one_line_and_writes_nothing(workdir: Path) -> None:
    target = workdir / "report.html"
    result = arena("compare", "--example", "--b", "log-token", "--format", "html", "-o", str(target), cwd=workdir)
    assert result.returncode == 2 and not target.exists()
    assert result.stderr.strip().splitlines() == [
        f"Error: {workdir / 'arena.toml'}: profiles: no profile or .toml file named 'log-token'; "
        "did you mean 'log-tokens'? (profiles: default, log-tokens, percentile, robust-tokens, correctness-only, robust, gated)"
    ]


def test_tool_means_are_the_leaderboards() -> None:
    from arena_core import Arena

    subs, tasks = _arena()
    report = compare(subs, tasks, ("default", ScoringConfig()), ("log", ScoringConfig(metrics={
        "token_efficiency": "token_efficiency_log"})), resamples=10, autoload=False)
    for profile, side in ((ScoringConfig(), "a"), (ScoringConfig(metrics={"token_efficiency": "token_efficiency_log"}), "b")):
        arena = Arena(profile, autoload=False)
        board = {g.group: (g.rank, round(g.score, 2)) for g in arena.leaderboard(arena.evaluate_many(subs, tasks))}
        assert {t["tool"]: (t[f"rank_{side}"], t[f"mean_{side}"]) for t in report.tools} == board


def test_scoring_commands_take_a_profile_and_record_it(workdir: Path) -> None:
    default = [json.loads(line) for line in arena("score", "--example", cwd=workdir).stdout.splitlines()]
    logged = [json.loads(line) for line in arena("-p", "log-tokens", "score", "--example", cwd=workdir).stdout.splitlines()]
    assert {e["provenance"]["profile"] for e in default} == {"default"}
    assert {e["provenance"]["profile"] for e in logged} == {"log-tokens"}
    assert logged[0]["provenance"]["algorithms"]["token_efficiency"] == "token_efficiency_log"
    changed = [a["submission_id"] for a, b in zip(default, logged) if a["metric_scores"] != b["metric_scores"]]
    assert changed and all(a["speed_score"] == b["speed_score"] for a, b in zip(default, logged))
    board = arena("-p", "percentile", "leaderboard", "--example", cwd=workdir).stdout
    assert board != arena("leaderboard", "--example", cwd=workdir).stdout and "aider/diff" in board


def test_tied_tasks_are_not_movers_and_undefined_agreement_sorts_last() -> None:
    """A task where every run ties under both scorings says nothing about movement: its runs are
    not listed as movers even when the shared score shifts, and its undefined tau-b sorts after
    every measured task in the report."""
    from arena_core.engine.results import EvaluationList
    from arena_core.model.provenance import Provenance
    from arena_core.model.records import Evaluation
    from arena_core.report.comparison import render_text
    from arena_core.stats.comparison import compare_scorings

    def ev(sid: str, task: str, score: float, rank: int) -> Evaluation:
        return Evaluation(submission_id=sid, task_id=task, overall_score=score, scores={"speed": score},
                          weights={"speed": 1.0}, weight_profile="p", unadjusted_overall_score=score,
                          evaluated_at="x", tool="t", overall_ranking=rank)

    a = [ev("flat-1", "flat", 50.0, 1), ev("flat-2", "flat", 50.0, 1),
         ev("real-1", "real", 80.0, 1), ev("real-2", "real", 60.0, 2), ev("real-3", "real", 40.0, 3)]
    b = [ev("flat-1", "flat", 70.0, 1), ev("flat-2", "flat", 70.0, 1),
         ev("real-1", "real", 61.0, 2), ev("real-2", "real", 79.0, 1), ev("real-3", "real", 40.0, 3)]
    provenance = Provenance("p", "0", {}, {})
    report = compare_scorings(("A", EvaluationList(a, "test"), provenance), ("B", EvaluationList(b, "test"), provenance))
    assert [m["submission_id"] for m in report.largest_movers] == ["real-1", "real-2"]  # the flat task shifted 20, uniformly
    tasks_section = render_text(report).split("Tasks (least agreement first)")[1]
    assert tasks_section.index("real") < tasks_section.index("flat")


def test_compare_groups_by_model_tool_and_model_or_meta() -> None:
    from arena_core import ValidationError
    from arena_core.compare import group_labels
    from arena_core.report.comparison import render_text

    subs, tasks = _arena()
    loaded = load_config(None)
    by_model = compare(subs, tasks, ("default", loaded.config), loaded.profile("log-tokens"), resamples=10,
                       autoload=False, by="model")
    models = {s["model"] for s in subs}
    assert {t["tool"] for t in by_model.tools} == models and by_model.by == "model"
    assert sum(t["submissions"] for t in by_model.tools) == len(subs)
    both = group_labels(subs, "tool,model")
    assert both[0] == f"{subs[0]['tool']} / {subs[0]['model']}"
    assert group_labels([{"meta": {}}], "meta.repo") == ["(unknown)"]
    with pytest.raises(ValidationError, match="'tool', 'model', 'tool,model' or 'meta.KEY'"):
        group_labels(subs, "colour")
    text = render_text(by_model)
    assert "Models (ranked" in text and "\nModel " in text


def test_a_provisional_group_is_listed_unranked_as_on_the_leaderboard() -> None:
    """A tool that ran fewer tasks than min_tasks_per_group has no rank in a comparison either:
    its row says provisional, the others are ranked as the leaderboard ranks them."""
    from arena_core import Arena
    from arena_core.report.comparison import render_html, render_text

    subs, tasks = _arena()
    few = [dict(s, tool="newcomer", id=f"new-{s['id']}") for s in subs if s["tool"] == "swe-agent"][:2]
    subs = [*subs, *few]
    config = ScoringConfig(metrics={"token_efficiency": "token_efficiency_log"})
    report = compare(subs, tasks, ("default", ScoringConfig()), ("log", config), resamples=10, autoload=False)
    row = next(t for t in report.tools if t["tool"] == "newcomer")
    assert (row["provisional"], row["rank_a"], row["rank_b"], row["tasks"]) == (True, None, None, len({s["task_id"] for s in few}))
    arena = Arena(config, autoload=False)
    board = {g.group: g.rank for g in arena.leaderboard(arena.evaluate_many(subs, tasks))}
    assert {t["tool"]: t["rank_b"] for t in report.tools} == board
    text = render_text(report)
    assert "newcomer *" in text and "* provisional: fewer tasks than min_tasks_per_group" in text
    assert "newcomer" not in render_html(report).split("<svg")[1].split("</svg>")[0]  # no rank to draw


def test_the_rows_read_a_column_at_a_time_are_the_rows_read_one_by_one() -> None:
    """``as_dict`` writes the per-submission rows from their columns; they are the rows the
    sequence gives one at a time, NaN figures as ``None`` and undefined metric deltas left out."""
    from arena_core.stats.comparison import _jsonable

    subs, tasks = _arena()
    subs[0] = {k: v for k, v in subs[0].items() if k not in ("execution_time", "estimated_cost")}  # unmeasured
    loaded = load_config(None)
    report = compare(subs, tasks, ("default", loaded.config), loaded.profile("log-tokens"), resamples=50, autoload=False)
    one_by_one = [{k: _jsonable(v) for k, v in row.items()} for row in report.submissions]
    assert report.as_dict()["submissions"] == one_by_one and len(one_by_one) == len(subs)


def test_sides_read_a_task_at_a_time_and_joined_are_the_side_of_all_of_them() -> None:
    """``Side.concat`` (a re-pricing keeps each task's scores as columns, then joins them):
    equal to the side of every evaluation at once, a metric some tasks lack NaN in their rows."""
    import math

    import attrs
    import numpy as np

    from arena_core import Arena
    from arena_core.stats.deltas import Side

    subs, tasks = _arena()
    evaluations = list(Arena(autoload=False).evaluate_many(subs, tasks))
    evaluations[1] = attrs.evolve(evaluations[1], metric_scores={**evaluations[1].metric_scores, "extra": 7.0})
    parts = {}
    for e in evaluations:
        parts.setdefault(e.task_id, []).append(e)
    assert len(parts) > 1 and not all("extra" in e.metric_scores for e in parts[evaluations[1].task_id])
    joined = Side.concat([Side.of(part) for part in parts.values()])
    whole = Side.of([e for part in parts.values() for e in part])
    assert (joined.ids, joined.task_ids, joined.tools) == (whole.ids, whole.task_ids, whole.tools)
    assert list(joined.metrics) == list(whole.metrics) and "extra" in joined.metrics
    for name in ("overall", "ranks"):
        assert np.array_equal(getattr(joined, name), getattr(whole, name))
    for name, values in whole.metrics.items():
        assert np.array_equal(joined.metrics[name], values, equal_nan=True), name
    assert sum(not math.isnan(v) for v in joined.metrics["extra"]) == 1
    empty = Side.concat([])
    assert (list(empty.ids), len(empty.overall), empty.metrics) == ([], 0, {})


def test_a_file_compared_by_tool_is_read_straight_into_a_table(workdir: Path, monkeypatch) -> None:
    """Grouped by tool, no group's name reads a run's meta: the file goes straight into a table
    (no record per line), and the report is the one the records gave. By model the meta is read
    (an unknown model is named by its harness run): beside the table from the lines when some
    run has one, and none read when none can (each meta then empty, as the records' would be)."""
    from arena_core.cli import inputs

    pytest.importorskip("pyarrow")
    subs, tasks = _arena()
    runs, task_file = workdir / "runs.jsonl", workdir / "tasks.json"
    runs.write_text("".join(json.dumps(s) + "\n" for s in subs))
    task_file.write_text(json.dumps(list(tasks.values())))
    straight = []
    reader = inputs._table_columns
    monkeypatch.setattr(inputs, "_table_columns", lambda *a, **k: straight.append(reader(*a, **k)) or straight[-1])
    command = ("compare", str(runs), "--tasks", str(task_file), "--b", "log-tokens", "--format", "json")
    by_tool = arena(*command, "--resamples", "300", cwd=workdir)
    assert by_tool.returncode == 0, by_tool.stderr
    assert [found is not None for found in straight] == [True]
    data = json.loads(by_tool.stdout)
    data.pop("provenance")
    loaded = load_config(workdir / "arena.toml")
    expected = compare(subs, tasks, loaded.profile("default"), loaded.profile("log-tokens"), resamples=300,
                       autoload=False)  # fmt: skip
    assert data == json.loads(json.dumps(expected.as_dict()))
    with_metas = arena(*command, "--by", "model", "--resamples", "300", cwd=workdir)
    assert with_metas.returncode == 0, with_metas.stderr
    assert [found is not None for found in straight] == [True, True]  # 3 of the 180 runs have a meta
    assert [dict(m) for m in straight[-1].metas] == [dict(structure(s, Submission).meta) for s in subs]
    assert sum(bool(m) for m in straight[-1].metas) == 3
    data = json.loads(with_metas.stdout)
    data.pop("provenance")
    expected = compare(subs, tasks, loaded.profile("default"), loaded.profile("log-tokens"), resamples=300,
                       by="model", autoload=False)  # fmt: skip
    assert data == json.loads(json.dumps(expected.as_dict()))
    for sub in subs:
        sub.pop("meta", None)
    del subs[-1]["model"]  # its group is named by its id: "(unknown model: ...)"
    runs.write_text("".join(json.dumps(s) + "\n" for s in subs))
    by_model = arena(*command, "--by", "model", "--resamples", "300", cwd=workdir)
    assert by_model.returncode == 0, by_model.stderr
    assert straight[-1] is not None and all(meta == {} for meta in straight[-1].metas)
    data = json.loads(by_model.stdout)
    data.pop("provenance")
    expected = compare(subs, tasks, loaded.profile("default"), loaded.profile("log-tokens"), resamples=300,
                       by="model", autoload=False)  # fmt: skip
    assert data == json.loads(json.dumps(expected.as_dict()))
    assert f"(unknown model: {subs[-1]['id']})" in by_model.stdout
