"""Calibrating judges against people: labels and verdicts files, ``arena calibrate``'s rows checked
against independent computations, DevAI's judgments imported and compared."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from arena_core.cli import main
from arena_core.io.decoding import InputError
from arena_core.io.judgements import VerdictLine, read_labels, read_verdicts
from arena_core.model.labels import Label
from arena_core.stats.calibration import ALL, calibrate

DEVAI = Path(__file__).parent / "data" / "devai" / "judgment"


def _simulated(seed: int) -> tuple[list[VerdictLine], list[Label], dict[str, str]]:
    """Runs of three tools, four requirements each, judged by a panel of three judges of
    different quality; about a third of the runs labelled by two or three of five people."""
    rng = np.random.default_rng(seed)
    verdicts, labels, tool = [], [], {}
    for run in range(150):
        sid = f"run-{run}"
        tool[sid] = f"tool-{run % 3}"
        for requirement in range(4):
            truth = rng.random() < (0.3, 0.5, 0.7)[run % 3]
            for judge, accuracy in (("a", 0.9), ("b", 0.8), ("c", 0.65)):
                said = truth if rng.random() < accuracy else not truth
                verdicts.append(VerdictLine(sid, str(requirement), judge, None if rng.random() < 0.03 else said))
            if run % 3 == 0 or rng.random() < 0.3:
                for rater in rng.choice(["p1", "p2", "p3", "p4", "p5"], size=int(rng.integers(1, 4)), replace=False):
                    seen = truth if rng.random() < 0.85 else not truth
                    labels.append(Label(sid, bool(seen), str(rater), str(requirement), sample="random"))
    return verdicts, labels, tool


def _majority(values: list[bool]) -> bool | None:
    yes = sum(values)
    return True if yes * 2 > len(values) else False if yes * 2 < len(values) else None


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_row_matches_scikit_learn_krippendorff_and_ppi_python(seed: int) -> None:
    """Every figure of every row recomputed from the raw lines with the libraries the field uses."""
    import krippendorff
    from ppi_py import ppi_mean_ci
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    verdicts, labels, tool = _simulated(seed)
    rows = {r.group: r for r in calibrate(verdicts, labels, lambda item: tool[item[0]])}
    assert sorted(rows) == [ALL, "tool-0", "tool-1", "tool-2"]
    by_item: dict[tuple[str, str], dict[str, bool | None]] = {}
    for line in verdicts:
        by_item.setdefault((line.submission_id, str(line.requirement)), {})[line.judge] = line.verdict
    people: dict[tuple[str, str], dict[str, bool]] = {}
    for label in labels:
        people.setdefault((label.submission_id, str(label.requirement)), {})[label.rater] = label.label
    for group, row in rows.items():
        items = [i for i in by_item if group == ALL or tool[i[0]] == group]
        panel = {i: _majority([v for v in by_item[i].values() if v is not None]) for i in items}
        judged = [i for i in items if panel[i] is not None]
        labelled = [i for i in judged if i in people and _majority(list(people[i].values())) is not None]
        y = np.array([_majority(list(people[i].values())) for i in labelled], dtype=float)
        f = np.array([panel[i] for i in labelled], dtype=float)
        assert (row.items, row.n) == (len(judged), len(labelled))
        assert row.ties == sum(1 for i in judged if i in people and _majority(list(people[i].values())) is None)
        assert row.agreement == pytest.approx(float(np.mean(y == f)), abs=1e-12)
        assert row.kappa == pytest.approx(cohen_kappa_score(f, y), abs=1e-12)
        tn, fp, fn, tp = confusion_matrix(y, f, labels=[0, 1]).ravel()
        assert (row.tp, row.fp, row.fn, row.tn) == (tp, fp, fn, tn)
        raters = sorted({r for i in labelled for r in people[i]})
        matrix = np.array([[float(panel[i])] + [float(people[i][r]) if r in people[i] else np.nan for r in raters]
                           for i in labelled]).T  # fmt: skip
        expected_alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
        assert row.alpha == pytest.approx(expected_alpha, abs=1e-12)
        several = matrix[1:][:, (~np.isnan(matrix[1:])).sum(axis=0) >= 2]
        assert row.raters_alpha == pytest.approx(
            krippendorff.alpha(reliability_data=several, level_of_measurement="nominal"), abs=1e-12
        )
        judges = np.array([[np.nan if by_item[i].get(j) is None else float(by_item[i][j]) for i in items]
                           for j in ("a", "b", "c")])  # fmt: skip
        assert row.judges_alpha == pytest.approx(
            krippendorff.alpha(reliability_data=judges, level_of_measurement="nominal"), abs=1e-12
        )
        everything = np.array([panel[i] for i in judged], dtype=float)
        assert row.judge_rate == pytest.approx(everything.mean(), abs=1e-12)
        (low,), (high,) = ppi_mean_ci(y, f, everything, alpha=0.05, lam=1)
        assert (row.corrected_low, row.corrected_high) == (
            pytest.approx(max(low, 0.0), abs=1e-9),
            pytest.approx(min(high, 1.0), abs=1e-9),
        )


def test_a_sample_that_is_not_random_is_said_and_a_drawn_one_is_not() -> None:
    verdicts, labels, tool = _simulated(4)
    passed = {(v.submission_id, v.requirement) for v in verdicts if v.judge == "a" and v.verdict}
    picked = [Label(x.submission_id, x.label, x.rater, x.requirement) for x in labels if (x.submission_id, x.requirement) in passed]
    [row] = calibrate(verdicts, picked, None)
    assert any("do not say their items were drawn at random" in w for w in row.warnings)
    assert any("the labelled items are not like the others" in w for w in row.warnings)
    [drawn] = calibrate(verdicts, labels, None)
    assert not any("random" in w or "not like the others" in w for w in drawn.warnings), drawn.warnings


def test_items_drawn_for_a_disagreement_are_kept_apart() -> None:
    verdicts, labels, tool = _simulated(5)
    extra = [Label("run-1", True, "p9", "0", sample="disagreement"), Label("run-1", False, "p8", "0", sample="disagreement")]
    before = {r.group: r for r in calibrate(verdicts, [x for x in labels if (x.submission_id, x.requirement) != ("run-1", "0")], None)}
    after = {r.group: r for r in calibrate(verdicts, labels + extra, None)}
    assert after[ALL].set_apart == 1 and after[ALL].items == before[ALL].items - 1
    assert after[ALL].n == before[ALL].n


def test_labels_of_whole_runs_are_compared_with_a_run_made_of_its_requirements() -> None:
    verdicts = [VerdictLine("r1", "0", "j", True), VerdictLine("r1", "1", "j", True),
                VerdictLine("r2", "0", "j", True), VerdictLine("r2", "1", "j", False),
                VerdictLine("r3", "0", "j", None), VerdictLine("r3", "1", "j", True)]  # fmt: skip
    labels = [Label("r1", True, "ana"), Label("r2", True, "ana"), Label("r3", False, "ana")]
    [row] = calibrate(verdicts, labels, None)
    assert (row.items, row.n, row.tp, row.fp, row.fn, row.tn) == (2, 2, 1, 0, 1, 0)  # r3: no verdict
    with pytest.raises(Exception, match="labels of one level"):
        calibrate(verdicts, [*labels, Label("r1", True, "ana", "0")], None)


def test_bad_lines_of_a_labels_or_verdicts_file_are_each_named(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join([
        json.dumps({"submission_id": "a", "label": True, "rater": "ana"}),
        json.dumps({"submission_id": "a", "label": "yes", "rater": "ana"}),
        json.dumps({"submission_id": "b", "label": False}),
        json.dumps({"submission_id": "a", "label": False, "rater": "ana"}),
        json.dumps({"submission_id": "c", "label": False, "rater": "bo", "at": "yesterday"}),
        json.dumps({"submission_id": "c", "label": False, "rater": "bo", "sample": "convenient"}),
        "[1, 2]", "{not json",
    ]) + "\n")  # fmt: skip
    with pytest.raises(InputError) as raised:
        read_labels(path)
    assert str(raised.value).splitlines() == [
        f"{path}:2: label: expected true or false, got 'yes'",
        f"{path}:3: rater: expected who labelled it (a name), got None",
        f"{path}:4: rater: 'ana' labelled this item already, at line 1",
        f"{path}:5: at: expected an ISO 8601 time, got 'yesterday'",
        f"{path}:6: sample: expected one of random, disagreement, got 'convenient'",
        f"{path}:7: expected a label (a JSON object), got [1, 2]",
        f"{path}:8: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
    ]
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text('{"submission_id": "a", "requirement": "r0"}\n{"submission_id": "a", "verdict": true}\n')
    with pytest.raises(InputError, match=r"verdicts.jsonl:1: verdict: expected true, false or null, got nothing$"):
        read_verdicts(verdicts)
    with pytest.raises(InputError, match=r"verdicts.jsonl:1: verdict: .*\n.*verdicts.jsonl:2: requirement: expected"):
        read_verdicts(verdicts, whole_runs=False)


def _devai_counts() -> dict[str, tuple[int, int]]:
    """Per agent, (items both judged, items they agree on), counted from the JSON files themselves."""
    found = {}
    for agent in sorted(p.name for p in DEVAI.iterdir()):
        same = both = 0
        for human in sorted((DEVAI / agent / "human_as_a_judge").glob("*.json")):
            judge = DEVAI / agent / "agent_as_a_judge" / "gray_box" / human.name
            for h, a in zip(json.loads(human.read_text())["requirements"], json.loads(judge.read_text())["requirements"], strict=True):
                if h["satisfied"] is not None and a["satisfied"] is not None:
                    both += 1
                    same += h["satisfied"] == a["satisfied"]
        found[agent] = (both, same)
    return found


def test_devai_judgments_import_and_calibrate_per_developer_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    done = runner.invoke(main, ["import", "devai", str(DEVAI), "-o", "runs.jsonl", "--tasks-out", "tasks.json",
                                "--verdicts-out", "verdicts.jsonl", "--labels-out", "labels.jsonl"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "Imported 6 devai runs to runs.jsonl (3 tasks)" in done.stderr
    runs = [json.loads(line) for line in Path("runs.jsonl").read_text().splitlines()]
    assert [r["id"] for r in runs][:2] == ["AgentOne/01_Sentiment_Classifier_LogReg_IMDB_ML", "AgentOne/02_Maze_Path_BFS_Grid_Other"]
    tasks = {t["id"]: t for t in json.loads(Path("tasks.json").read_text())}
    [criterion] = tasks["03_House_Prices_XGBoost_Kaggle_ML"]["success_criteria"]
    assert criterion["type"] == "judge" and criterion["judge"] == "devai"
    assert criterion["requirements"][4] == {"id": "4", "criteria": "Feature importances are plotted to `results/importance.png`.",
                                            "prerequisites": ["2"], "category": "Visualization"}  # fmt: skip
    assert len(read_verdicts(Path("verdicts.jsonl"))) == 24 and len(read_labels(Path("labels.jsonl"))) == 24
    result = runner.invoke(main, ["calibrate", "runs.jsonl", "--tasks", "tasks.json", "--labels", "labels.jsonl",
                                  "--verdicts", "verdicts.jsonl", "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = {r["group"]: r for r in json.loads(result.stdout)}
    for agent, (both, same) in _devai_counts().items():
        assert (rows[agent]["n"], rows[agent]["agreement"]) == (both, pytest.approx(same / both, abs=1e-12))
    assert rows[ALL]["n"] == 23  # one requirement the agent judge gave no verdict on
    table = runner.invoke(main, ["calibrate", "runs.jsonl", "--labels", "labels.jsonl", "--verdicts", "verdicts.jsonl",
                                 "--tasks", "tasks.json", "--by", "requirement_category", "--format", "csv"])  # fmt: skip
    assert table.exit_code == 0 and table.stdout.splitlines()[0].startswith("Group,Items,n,Agree %,Kappa")
    assert "Visualization," in table.stdout and "warning: Visualization: only" in table.stderr
    missing = runner.invoke(main, ["calibrate", "runs.jsonl", "--verdicts", "verdicts.jsonl"])
    assert missing.exit_code == 2 and "give --labels FILE" in missing.stderr


@pytest.mark.skipif(not os.environ.get("ARENA_DEVAI_JUDGMENT"), reason="set ARENA_DEVAI_JUDGMENT to DevAI's benchmark/judgment folder")
def test_devais_published_agreement_is_reproduced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Agent-as-a-Judge (gray box) against the human consensus, per developer agent, as published:
    OpenHands 90.16%, MetaGPT 92.07%, GPT-Pilot 86.61% (of 366 requirements each)."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    runner.invoke(main, ["import", "devai", os.environ["ARENA_DEVAI_JUDGMENT"], "-o", "runs.jsonl",
                         "--verdicts-out", "verdicts.jsonl", "--labels-out", "labels.jsonl"], catch_exceptions=False)  # fmt: skip
    result = runner.invoke(main, ["calibrate", "runs.jsonl", "--labels", "labels.jsonl", "--verdicts", "verdicts.jsonl",
                                  "--format", "json"], catch_exceptions=False)  # fmt: skip
    rows = {r["group"]: r for r in json.loads(result.stdout)}
    assert {g: (r["n"], round(r["agreement"] * 100, 2)) for g, r in rows.items() if g != ALL} == {
        "OpenHands": (366, 90.16), "MetaGPT": (366, 92.08), "GPT-Pilot": (366, 86.61)}  # fmt: skip
    assert not math.isnan(rows["OpenHands"]["kappa"])
