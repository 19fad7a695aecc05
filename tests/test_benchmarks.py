"""The benchmark runs: every section prints its figures (speed itself is read from its output,
never asserted in a test)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parent.parent


def test_every_section_of_the_benchmark_runs_and_prints_its_ratio() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--tiny"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    printed = result.stdout
    for section in (
        "1. per-record vs batch path",
        "2. batch path",
        "3. single Arena.evaluate",
        "4. evaluate_many from",
        "5. the command line on a",
        "6. compare of two profiles",
        "7. the pipeline:",
        "8. the sandbox runner:",
        "9. check executors:",
    ):
        assert section in printed, printed
    assert len(re.findall(r"against the NumPy reference from the same dicts", printed)) == 2
    assert re.search(r"reference [\d.]+ s: [\d.]+x \(target <= 2x\)", printed)
    assert len(re.findall(r"arena (score -o out.jsonl|leaderboard) +[\d.]+ s = +[\d.]+x the reference", printed)) == 2
    assert re.search(
        r"the submission as a dict \(validated and structured on each call\): median [\d.]+ us \(target < 15 us\)",
        printed,
    )
    assert re.search(r"= [\d.]+x one NumPy reference scoring", printed)
    assert re.search(r"last three / first three \(medians\): [\d.]+x", printed)
    assert re.search(r"sandbox [\d.]+ ms per command \(medians\): [+-][\d.]+ ms, [\d.]+x local", printed) or (
        "   skipped: command_runner 'sandbox'" in printed
    )
    assert re.search(r"dask \(a local cluster of 2 workers, started in the run\) [\d.]+ workspaces/s", printed) or (
        "   skipped: dask is not installed" in printed
    )


def test_the_scale_benchmarks_peers_score_as_arena_core_does(tmp_path: Path) -> None:
    """benchmarks/scale.py times arena-core against a polars query and DuckDB SQL of the same
    scoring: its ratios mean something only while the peers compute what arena-core computes,
    run for run (its --check), which this holds on a small dataset streamed in partitions."""
    import pytest

    pytest.importorskip("polars")
    pytest.importorskip("duckdb", reason="the scale benchmark's DuckDB peer is not installed")
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--runs", "20000", "--tasks", "20", "--check", "--repeat", "1"],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "median of 1 runs each" in result.stdout
    checked = re.findall(r"(polars|duckdb): 20,000 runs joined, (\d+) differ in (\w+)", result.stdout)
    assert len(checked) == 6 and all(differ == "0" for _, differ, _ in checked), result.stdout
    for job in ("leaderboard", "score -o parquet"):
        assert re.search(rf"{re.escape(job)} +arena-core +[\d.]+ s .* arena-core / faster peer: [\d.]+x", result.stdout)


def test_the_votes_benchmark_runs_and_prints_its_figures() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "votes.py"), "--tiny"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    printed = result.stdout
    assert re.search(r"statsmodels GLM \(reference\) [\d.]+ s: [\d.]+x the reference; largest coefficient gap", printed)
    assert re.search(r"2\. bootstrap, \d+ resamples of [\d,]+ votes: with style [\d.]+ s", printed)
    assert re.search(r"3\. sandwich 95% intervals hold the true ratings [\d.]+% of", printed)
    assert re.search(r"4\. hygiene, .* recall [\d.]+, precision [\d.]+; the group's inflation [+-][\d.]+ Elo", printed)
    assert re.search(r"5\. bootstrap 95% intervals \(\d+ resamples\) hold the true ratings [\d.]+% of", printed)


def test_the_feature_fit_benchmark_finds_scipy_s_mode_and_prints_its_ratio() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "irt_features.py"), "--groups", "10", "--tasks", "300"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr  # the script asserts the two modes equal before timing
    assert re.search(r"10 groups x 300 tasks, 8 features: arena-core [\d.]+ s, SciPy L-BFGS-B [\d.]+ s: [\d.]+x; "
                     r"largest gap [\d.e+-]+ logits", result.stdout)  # fmt: skip


def test_the_board_benchmark_checks_its_rows_against_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    """benchmarks/boards.py compares arena-core's board with its NumPy reference before timing
    them; the comparison fails on a row that differs, so its "rows equal" is earned."""
    import attrs

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import boards
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    boards.run(12, 40)
    assert re.search(r"12 groups x 40 tasks \([\d,]+ inversions\): arena-core [\d.]+ s, NumPy reference [\d.]+ s: "
                     r"[\d.]+x \(rows equal\)", capsys.readouterr().out)  # fmt: skip
    table = boards.board(12, 40)
    rows = boards.ours(table)
    expected = boards.reference(table.means, table.dimension_means["correctness"])
    assert boards.check(table, rows, expected) > 0  # inversions were there to compare
    inverting = next(i for i, row in enumerate(rows) if row.inverts)
    for at, changed in ((3, attrs.evolve(rows[3], rank_high=rows[3].rank_high + 1)),
                        (inverting, attrs.evolve(rows[inverting], inverts=rows[inverting].inverts[1:]))):  # fmt: skip
        with pytest.raises(AssertionError):
            boards.check(table, [*rows[:at], changed, *rows[at + 1 :]], expected)


def test_the_bradley_terry_benchmark_s_choix_fit_maximises_the_aggregator_s_likelihood(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """benchmarks/bradley_terry.py times one fit against choix's ILSR on the same wins, the
    prior's tied games given to choix as a reference player; the two equal before they are
    timed, and choix without those games (another likelihood) would fail the check."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bradley_terry
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    from arena_plugins.aggregators import BradleyTerry, _wins

    aggregator, table = BradleyTerry(), bradley_terry.board(30, 60)
    bradley_terry.one_fit(aggregator, table)
    assert re.search(r"30 groups x 60 tasks, one fit on the wins: arena-core [\d.]+ s, choix ILSR [\d.]+ s: [\d.]+x "
                     r"\(ratings equal within [\d.e+-]+\)", capsys.readouterr().out)  # fmt: skip
    wins = _wins(table, np.ones((1, 60)))[0]
    logs = np.log10(aggregator.fit(wins[None])[0])
    ours = 1000 + 400 * (logs - logs.mean())
    assert np.max(np.abs(bradley_terry.choix_ratings(wins, aggregator.prior) - ours)) < 1e-6
    assert np.max(np.abs(bradley_terry.choix_ratings(wins, 0.3) - ours)) > 1e-2


def test_the_importer_benchmark_imports_every_run_it_wrote(capsys: pytest.CaptureFixture[str]) -> None:
    """benchmarks/importers.py writes trajectories and trials from the samples and times their
    import against reading the same files; the import must yield one run a copy before it is
    timed (the script asserts it), so a ratio is of the same work; and each folder's format is
    told as the importer's before detection is timed."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import importers
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    for kind in ("mini-swe-agent", "harbor"):
        importers.run(kind, 12)
    out = capsys.readouterr().out
    for kind in ("mini-swe-agent", "harbor"):
        assert re.search(rf"arena import {kind}, 12 runs: [\d.]+ s; reading and decoding the same files [\d.]+ s: [\d.]+x", out)
    assert len(re.findall(r"telling the format: [\d.]+ s; reading each file's head once [\d.]+ s: [\d.]+x", out)) == 2


def test_the_import_growth_benchmark_imports_every_run_of_each_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks/import_growth.py writes each layout at two sizes and imports it, checking that
    every run it wrote is imported; its Terminal-Bench layout reads half its trials from their
    run's own file and half from the trial files (the two ways a trial is found)."""
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import import_growth
        from benchmarks.importers import imported
    finally:
        sys.path.remove(str(ROOT))
    for kind in import_growth.LAYOUTS:
        import_growth.run(kind, 6)
    out = capsys.readouterr().out
    for kind in import_growth.LAYOUTS:
        assert re.search(rf"arena import {kind}: 6 runs [\d.]+ s, 24 runs [\d.]+ s: [\d.]+x a run's time", out)
    root = import_growth.terminal_bench(tmp_path, 1000)
    imported("terminal-bench", root, tmp_path / "runs.jsonl")
    sources = [json.loads(line)["meta"]["source"] for line in (tmp_path / "runs.jsonl").open()]
    assert sum(s == str(root / "run-000" / "results.json") for s in sources) == 500
    assert sum(s.startswith(str(root / "run-001" / "task-")) for s in sources) == 500


def test_the_reprice_benchmark_s_reference_reprices_as_arena_core_does(tmp_path: Path) -> None:
    """benchmarks/reprice.py times arena-core against one batch doing the same repricing; both
    give every run the same overall score, which differs from the score before (so the check
    compares the work, not two untouched stores)."""
    import sqlite3

    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import reprice
    finally:
        sys.path.remove(str(ROOT))
    reprice.grow(tmp_path / "store.db", 300)
    with sqlite3.connect(tmp_path / "store.db") as db:
        before = dict(db.execute("SELECT submission_id, overall_score FROM evaluations"))
    found = {}
    for kind in ("arena_core", "reference"):
        reprice.copy(tmp_path / "store.db", tmp_path / f"{kind}.db")
        found[kind] = getattr(reprice, kind)(tmp_path / f"{kind}.db")
    assert found["arena_core"] == found["reference"] and len(found["reference"]) == 300
    assert sum(found["reference"][i] != before[i] for i in before) > 100


def test_the_postgresql_pipeline_benchmark_s_reference_writes_the_rows_the_pipeline_wrote(postgres_server) -> None:
    """The same on PostgreSQL: the store and the reference are copies of one grown database, and
    afterwards the reference holds every run and evaluation of the store but the one-run
    batches', column for column."""
    import psycopg

    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import pipeline
    finally:
        sys.path.remove(str(ROOT))
    url = postgres_server()
    found = pipeline.measure_postgres(url, stored=600, batch=100, batches=2, singles=3, keep=True)
    assert all(found[k] > 0 for k in ("pipeline", "raw", "single"))
    tables = {}
    for name in ("store", "reference"):
        with psycopg.connect(pipeline._database(url, f"arena_pipeline_{name}")) as db:
            tables[name] = [set(db.execute(f"SELECT * FROM {t}").fetchall()) for t in ("submissions", "evaluations")]
    for stored, copied in zip(tables["store"], tables["reference"], strict=True):
        assert copied < stored and len(stored - copied) == 3 and len(copied) == 600 + 300


def test_the_pipeline_benchmark_s_reference_writes_the_rows_the_pipeline_wrote(tmp_path: Path) -> None:
    """benchmarks/pipeline.py times pipeline batches against a raw insert of the rows they wrote
    into a copy of the store: afterwards the copy holds every run and evaluation of the store
    but the one-run batches', byte for byte."""
    import sqlite3

    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import pipeline
    finally:
        sys.path.remove(str(ROOT))
    found = pipeline.measure(stored=1_000, batch=150, batches=2, singles=3, folder=tmp_path)
    assert all(found[k] > 0 for k in ("pipeline", "raw", "single"))
    tables = {}
    for name in ("arena", "reference"):
        with sqlite3.connect(tmp_path / f"{name}.db") as db:
            tables[name] = [set(db.execute(f"SELECT * FROM {t}")) for t in ("submissions", "evaluations")]
        db.close()
    for stored, copied in zip(tables["arena"], tables["reference"], strict=True):
        assert copied < stored and len(stored - copied) == 3 and len(copied) == 1_000 + 300


def test_the_pipeline_benchmark_spreads_its_runs_over_as_many_tasks_as_asked(tmp_path: Path) -> None:
    """``--tasks``: a store of 300 runs over 150 tasks, then batches of 150 runs, one a task (the
    shape of one agent's run of a benchmark); the reference copy holds every run the store holds
    but the one-run batch's."""
    import sqlite3

    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import pipeline
    finally:
        sys.path.remove(str(ROOT))
    pipeline.measure(stored=300, batch=150, batches=2, singles=1, folder=tmp_path, tasks=150)
    runs = {}
    for name in ("arena", "reference"):
        with sqlite3.connect(tmp_path / f"{name}.db") as db:
            runs[name] = set(db.execute("SELECT * FROM submissions"))
            assert db.execute("SELECT COUNT(DISTINCT task_id) FROM submissions").fetchone() == (150,)
            assert {n for (n,) in db.execute("SELECT COUNT(*) FROM submissions GROUP BY task_id")} == {4} | (
                {5} if name == "arena" else set()
            )
        db.close()
    assert runs["reference"] < runs["arena"] and len(runs["arena"] - runs["reference"]) == 1


def test_the_compare_benchmark_s_reference_prints_what_arena_compare_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """benchmarks/compare.py times arena compare against polars, SciPy and NumPy computing the
    same report: its check (both profiles' scores run for run, then the report's lines of means,
    interval and rank agreement) must hold for its ratio to mean anything."""
    pytest.importorskip("polars")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import compare
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    runs, task_file = compare.generate(tmp_path, 6000, 30)
    compare.check(runs, task_file, tmp_path)
    lines = compare.reference(runs, task_file)
    assert lines[0].startswith("Mean overall score: A ") and "95% CI" in lines[0]
    scored_as = compare.polars_query
    monkeypatch.setattr(compare, "polars_query", lambda frame, tasks, log_tokens=False: scored_as(frame, tasks))
    with pytest.raises(AssertionError, match="log-tokens"):  # a peer scoring both profiles alike is caught
        compare.check(runs, task_file, tmp_path)


def test_the_tasks_benchmark_s_reference_computes_arena_tasks_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/tasks.py times arena tasks against polars and SciPy's Newton-CG computing the
    same rows: its check (counts, rates, discrimination, difficulty, flags, task by task) must
    hold for its ratio to mean anything, and fail when the reference computes something else."""
    pytest.importorskip("polars")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import tasks
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    runs, task_file = tasks.generate(tmp_path, 4000, 200, with_meta=True)
    tasks.check(runs, task_file)
    rows = tasks.reference(runs, task_file)
    assert 0 < rows["solve_rate"].mean() < 1 and rows["flags"].str.contains("flaky").any()  # a board with verdicts
    fitted = tasks.rasch
    monkeypatch.setattr(tasks, "rasch", lambda group, task, n, wins, count: fitted(group, task, n, n / 2, count))
    with pytest.raises(AssertionError, match="difficulty"):  # a reference fitting other wins is caught
        tasks.check(runs, task_file)
