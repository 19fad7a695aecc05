"""The ``gated`` profile: a composite that cannot reward failure, checked against the spec's own
functions (tests/spec_reference.py) and on real leaderboards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import kendalltau

import spec_reference as spec
from arena_core import Arena, to_dict
from arena_core.config.files import load_config
from arena_core.importing.collect import ImportSession
from arena_core.model.records import Task
from arena_core.model.serde import structure
from arena_core.report.card import cards_for, recompute
from arena_core.store import MemoryStore, SQLiteStore
from arena_core.store.pipeline import run_batch

ROOT = Path(__file__).parent
AIDER_CONFIG = ROOT.parent / "arena_core" / "examples" / "aider" / "arena.toml"
FORMATS = ROOT / "data" / "formats"
STAMP = "2026-01-01T00:00:00+00:00"
CRITERIA = [{"type": "file_exists", "file_path": "a.py"}, {"type": "no_errors"}]
FACTORS = {"beginner": 1.0, "intermediate": 1.1, "advanced": 1.2}


def gated(path: Path | None = None) -> Arena:
    return Arena(load_config(path).profile("gated")[1], autoload=False)


def run(i: int, files: list[str], success: bool = True, scale: float = 1.0, **extra) -> dict:
    return {
        "id": f"r{i}",
        "task_id": "t",
        "tool": extra.pop("tool", f"tool{i % 3}"),
        "total_tokens": int((4000 + 700 * i) * scale),
        "tool_calls": int((6 + i) * scale),
        "iterations": 1 + i % 3,
        "execution_time": (100.0 + 37 * i) * scale,
        "estimated_cost": (0.02 + 0.004 * i) * scale,
        "files_created": files,
        "success": success,
        **extra,
    }


RUNS = [
    run(0, ["a.py"]),
    run(1, ["a.py"], success=False),  # half the criteria: correctness 50
    run(2, ["a.py"]),
    run(3, [], success=False, scale=0.3),  # failed, and cheaper than any run that solved something
    run(4, ["a.py"]),
    run(5, []),  # half
    run(6, ["a.py"]),
]
TASK = {"id": "t", "difficulty": "intermediate", "success_criteria": CRITERIA}


def test_resources_are_credited_in_proportion_to_correctness_against_the_solvers_baseline() -> None:
    """Every score is the spec's own formula (spec_reference) against the baseline of the runs
    that solved the task in whole or in part, times the run's correctness / 100."""
    evaluations = {e.submission_id: e for e in gated().evaluate_many(RUNS, {"t": TASK}, evaluated_at=STAMP)}
    correctness = {r["id"]: spec.calculate_correctness_score(r, TASK) for r in RUNS}
    solvers = [r for r in RUNS if correctness[r["id"]] > 0]
    assert len(solvers) == 6  # the failed run is not part of the baseline
    baseline = spec.calculate_task_baseline("t", solvers)
    for r in RUNS:
        credit = round(correctness[r["id"]], 2) / 100
        own = {
            "efficiency": spec.calculate_efficiency_score(r, baseline) * credit,
            "speed": spec.calculate_speed_score(r, baseline) * credit,
            "cost": spec.calculate_cost_score(r, baseline) * credit,
        }
        weights = {"efficiency": 0.35, "speed": 0.25, "cost": 0.20, "correctness": 0.20}
        overall = sum(own[d] * weights[d] for d in own) + round(correctness[r["id"]], 2) * weights["correctness"]
        ev = evaluations[r["id"]]
        assert ev.scores == {**{d: round(v, 2) for d, v in own.items()}, "correctness": correctness[r["id"]]}
        assert ev.unadjusted_overall_score == round(overall, 2)
        assert ev.overall_score == round(overall * FACTORS["intermediate"] / 1.2, 2)  # rescaled, no cap
    failed = evaluations["r3"]
    assert failed.overall_score == 0.0 and failed.efficiency_score == failed.cost_score == 0.0


def test_the_spec_default_scores_resources_whatever_the_outcome() -> None:
    """What the gate changes: under the spec the failed run's cheapness is rewarded."""
    evaluations = {e.submission_id: e for e in Arena(autoload=False).evaluate_many(RUNS, {"t": TASK})}
    assert evaluations["r3"].efficiency_score > 0 and evaluations["r3"].overall_score > 0


def test_cheap_failures_neither_score_nor_move_the_solved_runs() -> None:
    arena = gated()
    before = {e.submission_id: e.overall_score for e in arena.evaluate_many(RUNS, {"t": TASK}, evaluated_at=STAMP)}
    cheap = [run(10 + i, [], success=False, scale=0.05) for i in range(5)]  # gave up at once
    after = {
        e.submission_id: e.overall_score for e in arena.evaluate_many(RUNS + cheap, {"t": TASK}, evaluated_at=STAMP)
    }
    assert {k: after[k] for k in before} == before
    assert all(after[c["id"]] == 0.0 for c in cheap)
    # Under the spec, the same cheap failures outscore runs that solved the task.
    spec_scores = {e.submission_id: e.overall_score for e in Arena(autoload=False).evaluate_many(RUNS + cheap, {"t": TASK})}
    assert max(spec_scores[c["id"]] for c in cheap) > min(spec_scores[r["id"]] for r in RUNS if r["files_created"])


def test_a_task_nobody_solved_carries_correctness_alone() -> None:
    failures = [run(i, [], success=False) for i in range(6)]
    for ev in gated().evaluate_many(failures, {"t": TASK}):
        assert ev.scores == {"correctness": 0.0} and ev.overall_score == 0.0
        assert ev.filled == {"efficiency": "unsolved", "speed": "unsolved", "cost": "unsolved"}
        assert ev.weights == {"correctness": 1.0}


def test_equal_verdicts_are_ordered_by_resources_frugal_first() -> None:
    tasks = {f"t{k}": {**TASK, "id": f"t{k}"} for k in range(6)}
    runs = []
    for k in range(6):
        for j, (tool, scale) in enumerate((("frugal", 1.0), ("lavish", 2.0), ("other", 1.5))):
            files = ["a.py"] if (k + j) % 4 else []  # the two compared tools share every verdict
            files = ["a.py"] if tool != "other" and k % 3 else files
            for attempt in range(2):
                runs.append(run(len(runs), files, scale=scale * (1 + 0.1 * attempt), tool=tool, task_id=f"t{k}"))
    arena = gated()
    board = {row.group: row for row in arena.leaderboard(arena.evaluate_many(runs, tasks))}
    assert board["frugal"].means["correctness"] == board["lavish"].means["correctness"]
    assert board["frugal"].rank < board["lavish"].rank and board["frugal"].score > board["lavish"].score


def test_reporting_a_figure_is_never_punished() -> None:
    """Two runs alike but for tokens reported by one of them score alike: the figure is left
    out for every run of the task (comparable), not for the one that lacks it alone."""
    runs = [run(i, ["a.py"]) for i in range(6)]
    runs.append({k: v for k, v in runs[2].items() if k != "total_tokens"} | {"id": "quiet"})
    evaluations = {e.submission_id: e for e in gated().evaluate_many(runs, {"t": TASK})}
    assert evaluations["quiet"].overall_score == evaluations["r2"].overall_score
    assert evaluations["r2"].filled["token_efficiency"] == "reweight"


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_pipeline_scores_a_batch_as_evaluate_many_does_and_keeps_stored_solvers(kind: str, tmp_path) -> None:
    """On a store of objects and on SQLite, whose kept figures a later batch reads joined with its own."""
    arena = gated()
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "arena.db")
    first = run_batch(arena, RUNS, store, {"t": TASK})
    expected = arena.evaluate_many(RUNS, {"t": TASK})
    for got, want in zip(first.evaluations, expected, strict=True):
        assert (got.overall_score, got.scores, got.filled) == (want.overall_score, want.scores, want.filled)
    # A later failure is scored against the stored solvers' baseline, which it does not join.
    later = run_batch(arena, [run(20, [], success=False, scale=0.01)], store)
    assert later.evaluations[0].overall_score == 0.0
    assert later.baselines["t"].submission_count == 6 and later.baselines["t"].min_tokens == 4000


def test_a_score_card_redoes_a_gated_score() -> None:
    arena = gated()
    subs = [arena.structure_submission(r) for r in RUNS]
    cards = cards_for(arena, subs, {"t": structure(TASK, Task)}, [r["id"] for r in RUNS])
    for card in cards:
        assert card["gate"] == "correctness" and recompute(card) == card["overall_score"]
        assert card["baseline"]["submission_count"] == 6  # the runs that passed the gate
    failed = next(c for c in cards if c["submission_id"] == "r3")
    assert {d["dimension"]: d.get("credit") for d in failed["dimensions"]} == {
        "efficiency": 0.0, "speed": 0.0, "cost": 0.0, "correctness": None}


# -- real leaderboards ------------------------------------------------------------------------


def test_aider_leaderboards_rank_by_outcome_first(real_submissions, real_tasks) -> None:
    """On each of Aider's three public benchmarks: the gated score agrees with the published pass
    rate at Kendall tau-b >= 0.8 (SciPy's), where the spec's default does not, and no run that
    solved nothing scores above one that solved something."""
    evaluations = gated(AIDER_CONFIG).evaluate_many(real_submissions, real_tasks)
    spec_default = Arena(load_config(AIDER_CONFIG).config, autoload=False).evaluate_many(real_submissions, real_tasks)
    for benchmark in ("aider-edit", "aider-polyglot", "aider-refactor"):
        rows = [(s["correctness"], e.overall_score, d.overall_score)
                for s, e, d in zip(real_submissions, evaluations, spec_default, strict=True)
                if s["task_id"] == benchmark]
        published = [r[0] for r in rows]
        assert kendalltau([r[1] for r in rows], published, variant="b").statistic >= 0.8, benchmark
        assert kendalltau([r[2] for r in rows], published, variant="b").statistic < 0.8, benchmark
        solved = [score for rate, score, _ in rows if rate > 0]
        assert all(score < min(solved) for rate, score, _ in rows if rate == 0)


def test_terminal_bench_needs_no_configuration_and_keeps_the_published_accuracy() -> None:
    arena = gated()
    session = ImportSession(arena.components.importers["terminal-bench"],
                            [FORMATS / "harbor-terminal-bench" / "tb.run.droid-gpt-5.results.json"])
    runs = [dict(r.submission) for r in session.runs()]
    tasks = session.tasks
    evaluations = arena.evaluate_many(runs, tasks)
    (row,) = arena.leaderboard(evaluations)
    assert round(row.score, 2) == 48.75 and row.inverts == ()  # the run's own published accuracy
    for ev in evaluations:
        assert ev.overall_score == ev.correctness_score  # each task's one run: no other solver to beat


def test_swe_bench_needs_no_configuration_and_keeps_the_resolved_rate() -> None:
    """sb-cli's report of a SWE-bench Verified run (500 instances, one model): no resource figures,
    so every instance is scored on its verdict and the score is the published resolved rate."""
    arena = gated()
    report = FORMATS / "swe-bench" / "sb-cli-report.swe-bench_verified__test__20251118_mini-v1.15.0_gemini-3-pro-preview-20251118.json"
    session = ImportSession(arena.components.importers["swebench"], [report])
    runs = [dict(r.submission) for r in session.runs()]
    evaluations = arena.evaluate_many(runs, session.tasks)
    resolved = json.loads(report.read_text())["resolved_instances"]
    (row,) = arena.leaderboard(evaluations)
    assert row.n_tasks == 500 and row.score == pytest.approx(100 * resolved / 500)
    assert {e.overall_score for e in evaluations} == {0.0, 100.0}


def test_the_batch_path_reads_the_gate_without_building_the_first_pass_and_a_record_pass_hands_it_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a gate the second pass by columns reads the first pass's gate scores as a column: no
    evaluation of the first pass is built (300,000 runs spent about 5 s building them); a pass
    record by record (a run with a workspace) still hands each run its gate result (that both
    score alike is tests/test_batch.py's)."""
    from arena_core.engine import gating
    from arena_core.engine.results import EvaluationBatch

    arena = gated()
    built: list[int] = []
    real_item, real_known = EvaluationBatch._item, gating.known_gates
    monkeypatch.setattr(EvaluationBatch, "_item", lambda self, i: built.append(i) or real_item(self, i))
    handed: list[int] = []
    monkeypatch.setattr(gating, "known_gates", lambda first, gate: handed.append(len(first)) or real_known(first, gate))
    by_columns = arena.evaluate_many(RUNS, {"t": TASK}, evaluated_at=STAMP)
    assert isinstance(by_columns, EvaluationBatch) and built == [] and handed == []
    (tmp_path / "a.py").write_text("")
    with_workspace = [{**r, "workspace": str(tmp_path)} if r["files_created"] else r for r in RUNS]
    by_records = arena.evaluate_many(with_workspace, {"t": TASK}, evaluated_at=STAMP)
    assert handed == [len(RUNS)] and len(by_records) == len(RUNS)  # handed the first pass's gate results
