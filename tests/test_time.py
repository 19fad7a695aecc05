"""Tasks in time: a task's ``created_at`` and the boards' windows on it (docs/time.md)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import LIVECODEBENCH, day

from arena_core.cli import main
from arena_core.model.errors import ValidationError
from arena_core.model.records import Task
from arena_core.model.serde import structure


@pytest.fixture
def dated(tmp_path: Path) -> Path:
    """40 problems published from January to December 2025 (every tenth undated), two models."""
    rng = random.Random(2)
    tasks = [{"id": f"p{k}", "success_criteria": [{"type": "no_errors"}],
              **({"created_at": f"2025-{k % 12 + 1:02d}-15"} if k % 10 else {})} for k in range(40)]  # fmt: skip
    runs = [{"id": f"{m}-{t['id']}", "task_id": t["id"], "tool": "agent", "model": m, "success": rng.random() < 0.5}
            for m in ("a", "b") for t in tasks]  # fmt: skip
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    return tmp_path


def test_a_window_scores_each_model_on_the_problems_published_in_it(dated: Path) -> None:
    """LiveCodeBench's rule: the mean pass rate over the problems whose date falls in the window
    (both ends inclusive, a date covering its day), computed here from the files directly."""
    done = CliRunner().invoke(main, ["-p", "correctness-only", "leaderboard", str(dated / "runs.jsonl"), "--tasks",
                                     str(dated / "tasks.json"), "--by", "model", "--since", "2025-03-15", "--until",
                                     "2025-06-15", "--format", "json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    tasks = {t["id"]: t for t in json.loads((dated / "tasks.json").read_text())}
    inside = {t for t, task in tasks.items() if "2025-03-15" <= task.get("created_at", "") <= "2025-06-15"}
    runs = [json.loads(line) for line in (dated / "runs.jsonl").read_text().splitlines()]
    for row in json.loads(done.stdout)["rows"]:
        mine = [r for r in runs if r["model"] == row["group"] and r["task_id"] in inside]
        assert row["n_tasks"] == len(inside) == 14
        assert row["means"]["correctness"] == pytest.approx(100 * sum(r["success"] for r in mine) / len(mine))
    assert "note: 4 tasks have no created_at and are in no window (--since 2025-03-15 --until 2025-06-15)" in done.stderr


def test_windows_are_checked_and_an_empty_window_is_refused(dated: Path) -> None:
    base = ["leaderboard", str(dated / "runs.jsonl"), "--tasks", str(dated / "tasks.json")]
    bad = CliRunner().invoke(main, [*base, "--since", "yesterday"])
    assert bad.exit_code == 2 and "expected an ISO-8601 date or time" in bad.output
    empty = CliRunner().invoke(main, [*base, "--since", "2030-01-01"])
    assert empty.exit_code == 2 and "--since 2030-01-01: no task was created in it" in empty.output
    with pytest.raises(ValidationError, match="created_at"):
        structure({"id": "t", "created_at": "last spring"}, Task)


def _board(folder: Path, *options: str) -> tuple[list[dict], str]:
    done = CliRunner().invoke(main, ["-p", "correctness-only", "leaderboard", str(folder / "runs.jsonl"), "--tasks",
                                     str(folder / "tasks.json"), "--by", "model", "--format", "json", *options])  # fmt: skip
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)["rows"], done.stderr


def test_a_window_per_model_is_livecodebench_s_score_after_each_release(livecodebench: Path) -> None:
    """``--window after-release``: each model's score is the mean pass@1 over the problems
    published after its release, computed here from LiveCodeBench's own file (dates in
    milliseconds, pass@1 in percent), not from the runs the command read."""
    rows, said = _board(livecodebench, "--models", str(livecodebench / "models.csv"), "--window", "after-release")
    data = json.loads(LIVECODEBENCH.read_text())
    released = {m["model_repr"]: m["release_date"] for m in data["models"]}
    for row in rows:
        after = [p["Pass@1"] for p in data["performances"]
                 if p["model"] == row["group"] and p["date"] >= released[row["group"]] + 86_400_000]  # fmt: skip
        assert row["n_tasks"] == len(after) and row["score"] == pytest.approx(sum(after) / len(after), abs=1e-9)
        assert f"window after-release: {row['group']}: tasks created after {day(released[row['group']])} " \
               f"({len(after)} tasks)" in said  # fmt: skip
    counts = {r["group"]: r["n_tasks"] for r in rows}
    assert counts["GPT-4-0613"] == 479 and counts["DSCoder-33b-Ins"] < 479 and len(rows) == 7
    whole, _ = _board(livecodebench)  # without the window, the contaminated problems count too
    assert {r["group"]: r["n_tasks"] for r in whole}["DSCoder-33b-Ins"] == 479


def test_models_without_the_date_are_left_out_and_named(livecodebench: Path) -> None:
    """A model the models file does not date is left out of the window, never guessed; the
    configuration's [models] tables count, through [model_aliases]."""
    kept = (livecodebench / "models.csv").read_text().splitlines()
    (livecodebench / "models.csv").write_text("\n".join(line for line in kept if not line.startswith("Claude")) + "\n")
    rows, said = _board(livecodebench, "--models", str(livecodebench / "models.csv"), "--window", "after-release")
    assert "Claude-3-Opus" not in {r["group"] for r in rows}
    assert "note: 479 runs of models without a release_date left out of --window after-release: Claude-3-Opus (479)" \
           in said  # fmt: skip
    (livecodebench / "arena.toml").write_text('[model_aliases]\n"Claude-3-Opus" = "claude-3-opus"\n\n'
                                             '[models."claude-3-opus"]\nknowledge_cutoff = "2023-08-31"\n')  # fmt: skip
    done = CliRunner().invoke(main, ["-c", str(livecodebench / "arena.toml"), "-p", "correctness-only", "leaderboard",
                                     str(livecodebench / "runs.jsonl"), "--tasks", str(livecodebench / "tasks.json"),
                                     "--by", "model", "--window", "after-cutoff", "--format", "json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert [r["group"] for r in json.loads(done.stdout)["rows"]] == ["claude-3-opus"]
    assert "window after-cutoff: claude-3-opus: tasks created after 2023-08-31" in done.stderr
    assert "runs of models without a knowledge_cutoff left out of --window after-cutoff: DSCoder-33b-Ins (479)" \
           in done.stderr  # fmt: skip


def test_a_bad_models_file_is_named_with_its_model_and_field(tmp_path: Path) -> None:
    from arena_core.io.modelfiles import read_models

    (tmp_path / "models.json").write_text(json.dumps({"m1": {"release_date": "spring 2024"}}))
    with pytest.raises(ValidationError, match=r"models\.json: models\.m1\.release_date: expected an ISO-8601 date"):
        read_models(tmp_path / "models.json")
    (tmp_path / "models.json").write_text(json.dumps([{"name": "m1", "released": "2024-01-01"}]))
    with pytest.raises(ValidationError, match=r"models\.m1\.released: expected one of release_date, knowledge_cutoff"):
        read_models(tmp_path / "models.json")
    (tmp_path / "models.toml").write_text('[models."m1"]\nrelease_date = 2024-01-01\nknowledge_cutoff = "2023-06"\n')
    with pytest.raises(ValidationError, match=r"models\.m1\.knowledge_cutoff: expected an ISO-8601 date"):
        read_models(tmp_path / "models.toml")  # TOML's own date is one; a month alone is not
    (tmp_path / "models.toml").write_text('[models."m1"]\nrelease_date = 2024-01-01\n')
    assert read_models(tmp_path / "models.toml")["m1"].release_date == "2024-01-01"


def test_the_time_page_shows_current_output(livecodebench: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``$ arena ...`` block of docs/time.md prints what the page shows (``...`` standing for
    lines left out), run where the LiveCodeBench runs, tasks and models were written."""
    import re
    import shlex

    from test_docs import _matches

    page = (Path(__file__).parent.parent / "docs" / "time.md").read_text()
    blocks = re.findall(r"```console\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 5
    monkeypatch.chdir(livecodebench)
    for block in blocks:
        command, *shown = block.splitlines()
        command, _, target = command.partition(" > ")  # the shell's redirection of standard output
        done = CliRunner().invoke(main, shlex.split(command.removeprefix("$ arena ")))
        assert done.exit_code == 0, done.output
        if target:
            (livecodebench / target).write_text(done.stdout)
            assert json.loads(done.stdout)["provenance"]["n_runs"] == 2116
        printed = done.stderr.splitlines() + ([] if target else done.stdout.splitlines())
        assert _matches(shown, printed), done.output


def test_importers_read_when_each_problem_was_published(tmp_path: Path) -> None:
    """Inspect keeps a dataset's row as each sample's ``metadata``; OpenHands' evaluation output
    keeps it as each line's ``instance``: their ``created_at`` (SWE-bench) or ``contest_date``
    (LiveCodeBench) becomes the task's ``created_at``; a value that is not a date is not read."""
    formats = Path(__file__).parent / "data" / "formats"
    log = json.loads((formats / "inspect-ai-current" / "converted" / "epochs.json").read_text())
    for k, sample in enumerate(log["samples"]):
        sample["metadata"] = {"contest_date": "2024-11-02T00:00:00"} if k % 2 == 0 else {"created_at": "last week"}
    (tmp_path / "inspect").mkdir()
    (tmp_path / "inspect" / "log.json").write_text(json.dumps(log))
    line = json.loads((formats / "openhands-eval-output" / "multi_swe_bench.output.first-line.jsonl").read_text())
    line["instance"]["created_at"] = "2024-07-16T19:41:02Z"
    (tmp_path / "openhands").mkdir()
    (tmp_path / "openhands" / "output.jsonl").write_text(json.dumps(line) + "\n")
    for name, expected in (("inspect", {"2024-11-02T00:00:00", None}), ("openhands", {"2024-07-16T19:41:02Z"})):
        done = CliRunner().invoke(main, ["import", name, str(tmp_path / name), "-o", str(tmp_path / f"{name}.jsonl"),
                                         "--tasks-out", str(tmp_path / f"{name}-tasks.json")])  # fmt: skip
        assert done.exit_code == 0, done.output
        tasks = json.loads((tmp_path / f"{name}-tasks.json").read_text())
        tasks = tasks if isinstance(tasks, list) else list(tasks.values())
        assert {t.get("created_at") for t in tasks} == expected, (name, tasks)


def test_the_api_and_the_service_take_the_windows_the_cli_takes(tmp_path: Path) -> None:
    """The same store, the same window: ``arena leaderboard --store --window``, the Python API
    (``TimeWindow.evaluations`` then ``Arena.leaderboard``) and ``GET /leaderboard?window=`` give
    the same rows; the service says each model's window in the ``Arena-Window`` header."""
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from clirun import run_arena
    from fastapi.testclient import TestClient

    from arena_core import Arena
    from arena_core.cli.selection import finite
    from arena_core.model.serde import to_dict
    from arena_core.service.app import create_app
    from arena_core.service.tokens import TokenStore
    from arena_core.stats.windows import TimeWindow
    from arena_core.store import SQLiteStore

    rng = random.Random(8)
    tasks = [{"id": f"p{k}", "success_criteria": [{"type": "no_errors"}], "created_at": f"2025-{k % 12 + 1:02d}-10"}
             for k in range(36)]  # fmt: skip
    runs = [{"id": f"{m}-{t['id']}", "task_id": t["id"], "tool": "agent", "model": m, "total_tokens": 1000,
             "tool_calls": 5, "success": rng.random() < 0.6} for m in ("a", "b", "c") for t in tasks]  # fmt: skip
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    models = {"a": {"knowledge_cutoff": "2025-04-30"}, "b": {"knowledge_cutoff": "2025-08-31"}}
    (tmp_path / "arena.toml").write_text('workspace_owner = "id"\n[models.a]\nknowledge_cutoff = "2025-04-30"\n'
                                         '[models.b]\nknowledge_cutoff = "2025-08-31"\n')  # fmt: skip
    assert run_arena("ingest", "runs.jsonl", "--tasks", "tasks.json", "--store", "a.db", cwd=tmp_path).returncode == 0
    printed = run_arena("leaderboard", "--store", "a.db", "--by", "model", "--window", "after-cutoff", "--format", "json",
                        cwd=tmp_path)  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    arena, store = Arena({"workspace_owner": "id", "models": models}, autoload=False), SQLiteStore(tmp_path / "a.db")
    window = TimeWindow(window="after-cutoff", models=arena.config.models)
    stored_tasks = {t["id"]: structure(t, Task) for t in tasks}
    api = arena.leaderboard(window.evaluations(arena.current_scores(store).evaluations(store), stored_tasks), by="model")
    tokens = TokenStore(tmp_path / "a.db")
    client = TestClient(create_app(arena, store, tokens, allow_local_runner=True))
    reader = {"Authorization": f"Bearer {tokens.create('operator', [])[1]}"}
    served = client.get("/leaderboard", params={"by": "model", "window": "after-cutoff"}, headers=reader)
    assert served.status_code == 200, served.text
    board = json.loads(printed.stdout)
    assert board["rows"] == finite([to_dict(r) for r in api]) == finite(served.json())
    assert {r["group"] for r in served.json()} == {"a", "b"}  # c has no date: left out
    # The same provenance: the runs and tasks in the window, the configuration, the window.
    made = json.loads(served.headers["Arena-Provenance"])
    assert made == {**board["provenance"], "command": made["command"]} and made["window"] == {"window": "after-cutoff"}
    assert made["n_runs"] == 24 + 12 and made["n_tasks"] == 36
    notes = json.loads(served.headers["Arena-Window"])
    assert "window after-cutoff: a: tasks created after 2025-04-30 (24 tasks)" in notes
    assert "window after-cutoff: b: tasks created after 2025-08-31 (12 tasks)" in notes
    assert any("runs of models without a knowledge_cutoff left out of --window after-cutoff: c (36)" in n for n in notes)
    assert "window after-cutoff: a: tasks created after 2025-04-30 (24 tasks)" in printed.stderr
    bad = client.get("/leaderboard", params={"since": "yesterday"}, headers=reader)
    assert bad.status_code == 400 and "since" in bad.text


def test_arena_compare_compares_two_profiles_on_each_model_s_window(livecodebench: Path) -> None:
    done = CliRunner().invoke(main, ["compare", str(livecodebench / "runs.jsonl"), "--tasks", str(livecodebench / "tasks.json"),
                                     "--a", "correctness-only", "--b", "gated", "--by", "model", "--models",
                                     str(livecodebench / "models.csv"), "--window", "after-release", "--format", "json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    windows = [int(n) for n in re.findall(r"\((\d+) tasks\)", done.stderr)]
    assert len(windows) == 7 and len(json.loads(done.stdout)["submissions"]) == sum(windows) == 2116


def test_the_report_s_time_page_is_arena_trend_and_arena_contamination(livecodebench: Path) -> None:
    """With the models' dates, a report by model has a time page: its frontier is `arena trend`'s
    and its gaps are `arena contamination`'s (the intervals drawn with fewer resamples)."""
    import html

    common = [str(livecodebench / "runs.jsonl"), "--tasks", str(livecodebench / "tasks.json"), "--by", "model",
              "--models", str(livecodebench / "models.csv")]  # fmt: skip
    made = CliRunner().invoke(main, ["-p", "correctness-only", "report", *common, "-o", str(livecodebench / "site")])
    assert made.exit_code == 0, made.output
    page = html.unescape((livecodebench / "site" / "time.html").read_text())
    assert 'href="time.html"' in (livecodebench / "site" / "index.html").read_text()
    trend = json.loads(CliRunner().invoke(main, ["trend", *common, "--y", "correctness", "--format", "json"]).stdout)
    cell = r"<td[^>]*>([^<]*)</td>"
    rows = re.findall(rf"<tr[^>]*>{cell * 6}</tr>", page[: page.index("</table>")])
    assert [(r[2], r[5] == "yes") for r in rows] == [(p["group"], p["on_frontier"]) for p in trend["points"]]
    gaps = json.loads(CliRunner().invoke(main, ["contamination", *common[:3], *common[5:], "--window", "after-release",
                                                "--format", "json"]).stdout)["models"]  # fmt: skip
    for gap in gaps:
        if gap["naive"] is not None:
            found = re.search(rf"<td>{re.escape(gap['model'])}</td>{cell * 4}", page)
            assert found is not None and found.groups() == (str(gap["before_tasks"]), str(gap["after_tasks"]),
                                                            f"{gap['naive']:.2f}", f"{gap['adjusted']:.2f}")  # fmt: skip
    assert page.count('class="label"') == 7  # seven models, each labelled with its number
