"""Boards that say what they were computed from, and ``arena verify`` (issue 52, item 5).

Every JSON board carries the digests of the runs and tasks it read after selection, the
configuration's digest, the version, the window and the command; the digests are of content
(any order, any file format, the streaming path alike) and ``arena verify`` computes the board
again and finds a changed run, task, configuration or version (mutation tests).
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from clirun import run_arena

import arena_core.examples
from arena_core.engine.columns import Columns
from arena_core.engine.fingerprints import runs_digest, task_run_digests, tasks_digest
from arena_core.model.records import Submission, Task
from arena_core.model.serde import structure

EXAMPLES = Path(arena_core.examples.__file__).parent
RUNS = [
    {**json.loads(line), "meta": {"harness": "v1" if k % 3 else "v2"}}
    for k, line in enumerate((EXAMPLES / "submissions.jsonl").read_text().splitlines())
]
TASKS = json.loads((EXAMPLES / "tasks.json").read_text())


def _write(folder: Path, runs: list[dict], tasks: list[dict] | None = None, name: str = "runs.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    (folder / "tasks.json").write_text(json.dumps(TASKS if tasks is None else tasks))
    return path


def _board(folder: Path, *args: str) -> dict:
    found = run_arena(*args, "--format", "json", cwd=folder)
    assert found.returncode == 0, found.stderr
    return json.loads(found.stdout)


def test_the_runs_digest_is_sha256_over_each_tasks_runs_in_id_order() -> None:
    """An independent computation of the digest from its definition: per task, the runs' ids,
    files, figures and success in id order; then the tasks' digests in task order."""
    subs = [structure(r, Submission) for r in RUNS]
    columns = Columns.from_submissions(subs)
    mine = task_run_digests(subs)
    for task in {s.task_id for s in subs}:
        rows = sorted((s for s in subs if s.task_id == task), key=lambda s: s.id)
        h = hashlib.sha256()
        for name in ("id", "tool", "model"):
            h.update(b"\x1e".join(b"\x00" if getattr(s, name) is None else getattr(s, name).encode() for s in rows))
        h.update(b"\x1e".join(b"\x1f".join(f.encode() for f in s.files_created) for s in rows))
        for name in columns.numeric:
            values = [getattr(s, name) for s in rows]
            h.update(struct.pack(f"<{len(values)}d", *(float("nan") if v is None else float(v) for v in values)))
        h.update(bytes(int(s.success) for s in rows))
        assert mine[task] == h.hexdigest(), task
    combined = hashlib.sha256("".join(f"{t}\t{mine[t]}\n" for t in sorted(mine)).encode()).hexdigest()
    assert runs_digest(subs) == runs_digest(columns) == combined
    moved = [*subs]
    moved[3] = structure({**RUNS[3], "total_tokens": RUNS[3]["total_tokens"] + 1}, Submission)
    assert runs_digest(moved) != combined  # one token more is another digest
    assert tasks_digest([structure(t, Task) for t in TASKS]) != tasks_digest([structure(t, Task) for t in TASKS[1:]])


def test_the_digest_is_of_content_whatever_the_order_format_or_path(tmp_path: Path) -> None:
    _write(tmp_path, RUNS)
    first = _board(tmp_path, "leaderboard", "runs.jsonl", "--tasks", "tasks.json")["provenance"]
    shuffled = [*RUNS]
    random.Random(3).shuffle(shuffled)
    _write(tmp_path, shuffled, name="shuffled.jsonl")
    keys = list(dict.fromkeys(k for r in RUNS for k in r if k != "meta"))
    pq.write_table(pa.table({k: [r.get(k) for r in shuffled] for k in keys}), tmp_path / "runs.parquet", row_group_size=25)
    (tmp_path / "small.toml").write_text("partition_rows = 40\n")
    for args in (
        ["leaderboard", "shuffled.jsonl", "--by", "model"],  # objects (a model board reads meta)
        ["leaderboard", "runs.parquet"],  # columns
        ["-c", "small.toml", "leaderboard", "runs.parquet"],  # streamed, a partition of whole tasks at a time
        ["tasks", "runs.jsonl"],
        ["pareto", "runs.jsonl"],
    ):
        found = run_arena(*args, "--tasks", "tasks.json", "--format", "json", cwd=tmp_path)
        assert found.returncode == 0, found.stderr
        made = json.loads(found.stdout)["provenance"]
        assert (made["runs"], made["n_runs"], made["tasks"], made["n_tasks"]) == (
            first["runs"], 180, first["tasks"], 12,
        ), args  # fmt: skip
        if "pareto" not in args:  # (which reads correctness alone: the other figures may be missing)
            assert made["config_digest"] == first["config_digest"]  # partition_rows does not score
    assert "streaming 180 runs" in run_arena("-c", "small.toml", "leaderboard", "runs.parquet", "--tasks",
                                              "tasks.json", "--format", "json", cwd=tmp_path).stderr  # fmt: skip


def test_the_digests_are_of_the_runs_and_tasks_selected(tmp_path: Path) -> None:
    _write(tmp_path, RUNS)
    where = ["--where", "meta.harness=v2"]
    kept = _board(tmp_path, "leaderboard", "runs.jsonl", "--tasks", "tasks.json", *where)["provenance"]
    assert kept["n_runs"] == sum(r["meta"]["harness"] == "v2" for r in RUNS) < len(RUNS)
    assert kept["command"] == ["leaderboard", *where]
    changed = [{**r, "total_tokens": 1} if r["meta"]["harness"] != "v2" else r for r in RUNS]
    _write(tmp_path, changed, name="changed.jsonl")
    again = _board(tmp_path, "leaderboard", "changed.jsonl", "--tasks", "tasks.json", *where)["provenance"]
    assert again["runs"] == kept["runs"]  # runs left out by --where are not in its digest
    task = TASKS[0]["id"]
    one = _board(tmp_path, "leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--task", task)["provenance"]
    assert one["n_tasks"] == 1 and one["tasks"] == tasks_digest([structure(TASKS[0], Task)])


def _verify(folder: Path, board: str, *inputs: str, config: tuple[str, ...] = ()) -> tuple[int, str]:
    found = run_arena(*config, "verify", board, *inputs, cwd=folder)
    assert found.returncode in (0, 1), found.stderr
    return found.returncode, found.stdout


BOARDS = [
    ["leaderboard", "--by", "model", "--pairwise"],
    ["leaderboard", "--by", "submission"],
    ["leaderboard", "--method", "win_rate", "--where", "meta.harness=v1"],
    ["tasks", "--select", "4"],
    ["pareto", "--by", "model", "--x", "time"],
    ["compare", "--b", "log-tokens"],
    ["card", "frontend-001/000"],
]


@pytest.mark.parametrize("command", BOARDS, ids=lambda c: " ".join(c))
def test_verify_finds_every_board_identical_and_a_changed_run_in_each(tmp_path: Path, command: list[str]) -> None:
    _write(tmp_path, RUNS)
    found = run_arena(command[0], *command[1:], "runs.jsonl", "--tasks", "tasks.json", "--format", "json", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    (tmp_path / "board.json").write_text(found.stdout)
    assert json.loads(found.stdout)["provenance"]["command"][0] == command[0]
    code, said = _verify(tmp_path, "board.json", "runs.jsonl", "--tasks", "tasks.json")
    assert code == 0 and said.startswith("identical"), said
    # A run that every board reads (the card's task's, kept by --where): its tokens tripled.
    changed = [{**r, "total_tokens": r["total_tokens"] * 3} if r["id"] == RUNS[1]["id"] else r for r in RUNS]
    assert RUNS[1]["task_id"] == "frontend-001" and RUNS[1]["meta"]["harness"] == "v1"
    _write(tmp_path, changed, name="changed.jsonl")
    code, said = _verify(tmp_path, "board.json", "changed.jsonl", "--tasks", "tasks.json")
    assert code == 1 and said.startswith("differs"), said
    assert "the runs read differ (digest)" in said


def test_verify_names_a_changed_task_configuration_or_version(tmp_path: Path) -> None:
    _write(tmp_path, RUNS)
    (tmp_path / "board.json").write_text(run_arena("leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--format",
                                                   "json", cwd=tmp_path).stdout)  # fmt: skip
    # A task: another difficulty, which the overall score reads.
    tasks = [{**t, "difficulty": "advanced" if t["difficulty"] != "advanced" else "beginner"} if t["id"] == TASKS[0]["id"] else t for t in TASKS]
    assert tasks != TASKS
    (tmp_path / "tasks2.json").write_text(json.dumps(tasks))
    code, said = _verify(tmp_path, "board.json", "runs.jsonl", "--tasks", "tasks2.json")
    assert code == 1 and "the tasks read differ (digest)" in said and "the runs read differ" not in said
    assert "rows[" in said  # and what moved on the board
    # The configuration: other weights.
    (tmp_path / "weights.toml").write_text("[weights.default]\nefficiency = 0.1\nspeed = 0.1\ncost = 0.1\ncorrectness = 0.7\n")
    code, said = _verify(tmp_path, "board.json", "runs.jsonl", "--tasks", "tasks.json", config=("-c", "weights.toml"))
    assert code == 1 and "the configuration differs (digest)" in said and "the tasks read" not in said
    # The version that made it.
    board = json.loads((tmp_path / "board.json").read_text())
    board["provenance"]["arena_core"] = "0.0.1"
    (tmp_path / "old.json").write_text(json.dumps(board))
    code, said = _verify(tmp_path, "old.json", "runs.jsonl", "--tasks", "tasks.json")
    assert code == 1 and 'the arena-core version differs: "0.0.1" in the board' in said
    # A row edited by hand, everything else as computed.
    board = json.loads((tmp_path / "board.json").read_text())
    board["rows"][1]["score"] += 0.5
    (tmp_path / "edited.json").write_text(json.dumps(board))
    code, said = _verify(tmp_path, "edited.json", "runs.jsonl", "--tasks", "tasks.json")
    assert code == 1 and said.splitlines()[1].strip().startswith("rows[1].score:"), said


def test_verify_refuses_what_is_not_a_board(tmp_path: Path) -> None:
    _write(tmp_path, RUNS)
    for text, expected in (
        ("[1, 2]", "provenance: expected a board printed with --format json"),
        ('{"provenance": {"command": "leaderboard"}}', "provenance.command: expected the command"),
        ('{"provenance": {"command": ["serve"]}}', "'serve' is not a command that prints a board"),
        ('{"provenance": {"command": ["verify", "x"]}}', "'verify' is not a command that prints a board"),
        ("{", "board.json"),
    ):
        (tmp_path / "board.json").write_text(text)
        found = run_arena("verify", "board.json", "runs.jsonl", "--tasks", "tasks.json", cwd=tmp_path)
        assert found.returncode == 2 and expected in found.stderr and "Traceback" not in found.stderr, found.stderr


def test_windows_are_recorded_and_verified(livecodebench: Path) -> None:
    args = ["-p", "correctness-only", "leaderboard", "runs.jsonl", "--tasks", "tasks.json", "--by", "model", "--models", "models.csv",
            "--window", "after-release", "--since", "2023-09-01"]  # fmt: skip
    found = run_arena(*args, "--format", "json", cwd=livecodebench)
    assert found.returncode == 0, found.stderr
    made = json.loads(found.stdout)["provenance"]
    assert made["window"] == {"since": "2023-09-01", "window": "after-release"}
    assert made["command"] == ["leaderboard", "--by", "model", "--models", "models.csv", "--window", "after-release",
                               "--since", "2023-09-01"]  # fmt: skip
    whole = json.loads(run_arena(*args[:10], "--format", "json", cwd=livecodebench).stdout)["provenance"]
    assert made["n_tasks"] < whole["n_tasks"] and made["n_runs"] < whole["n_runs"]
    (livecodebench / "board.json").write_text(found.stdout)
    profile = ("-p", "correctness-only")
    code, said = _verify(livecodebench, "board.json", "runs.jsonl", "--tasks", "tasks.json", config=profile)
    assert code == 0, said
    shutil.copy(livecodebench / "models.csv", livecodebench / "kept.csv")
    text = (livecodebench / "models.csv").read_text().splitlines()
    (livecodebench / "models.csv").write_text("\n".join([text[0], *(line[:-2] + "01" for line in text[1:])]) + "\n")
    code, said = _verify(livecodebench, "board.json", "runs.jsonl", "--tasks", "tasks.json", config=profile)
    assert code == 1 and "the runs read differ" in said, said  # other release dates: other windows, other runs read


def test_a_report_says_on_every_page_what_it_was_computed_from(tmp_path: Path) -> None:
    _write(tmp_path, RUNS)
    found = run_arena("report", "runs.jsonl", "--tasks", "tasks.json", "-o", "site", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    made = json.loads((tmp_path / "site" / "provenance.json").read_text())
    board = _board(tmp_path, "leaderboard", "runs.jsonl", "--tasks", "tasks.json")["provenance"]
    assert {k: v for k, v in made.items() if k != "command"} == {k: v for k, v in board.items() if k != "command"}
    assert made["command"] == ["report"]
    pages = list((tmp_path / "site").rglob("*.html"))
    assert len(pages) > 20
    for page in pages:
        text = page.read_text()
        assert f"(SHA-256 {made['runs'][:16]})" in text and "provenance.json</a>" not in text.split("<footer>")[0]
        depth = "../" if page.parent.name in ("tasks", "cards") else ""
        assert f'<a href="{depth}provenance.json">provenance</a>' in text


def test_the_service_board_says_what_the_cli_board_of_the_store_says(tmp_path: Path) -> None:
    """``GET /leaderboard``'s ``Arena-Provenance`` header and ``arena leaderboard --store``'s
    provenance name the same runs, tasks and configuration, before and after a new batch."""
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from fastapi.testclient import TestClient

    from arena_core import Arena
    from arena_core.service.app import create_app
    from arena_core.service.tokens import TokenStore
    from arena_core.store import SQLiteStore

    _write(tmp_path, RUNS[:120])
    _write(tmp_path, RUNS[120:], name="more.jsonl")
    (tmp_path / "arena.toml").write_text('workspace_owner = "id"\n')
    assert run_arena("ingest", "runs.jsonl", "--tasks", "tasks.json", "--store", "a.db", cwd=tmp_path).returncode == 0
    arena, store = Arena({"workspace_owner": "id"}, autoload=False), SQLiteStore(tmp_path / "a.db")
    tokens = TokenStore(tmp_path / "a.db")
    client = TestClient(create_app(arena, store, tokens, allow_local_runner=True, board_ttl=0))  # ingest shows at once
    reader = {"Authorization": f"Bearer {tokens.create('operator', [])[1]}"}
    seen = []
    for batch in ("runs.jsonl", "more.jsonl"):
        if batch == "more.jsonl":
            assert run_arena("ingest", batch, "--tasks", "tasks.json", "--store", "a.db", cwd=tmp_path).returncode == 0
        printed = _board(tmp_path, "leaderboard", "--store", "a.db")
        served = client.get("/leaderboard", headers=reader)
        assert served.status_code == 200, served.text
        made = json.loads(served.headers["Arena-Provenance"])
        assert made == {**printed["provenance"], "command": ["leaderboard", "--by", "tool", "--test", "t", "--adjust",
                                                             "holm"]}  # fmt: skip
        assert made["runs"] == runs_digest([structure(r, Submission) for r in RUNS[: 120 if not seen else 180]])
        seen.append(made["runs"])
    assert seen[0] != seen[1]
    # A task's rankings: the provenance of its runs, as the CLI's board of that task says it.
    task = TASKS[0]["id"]
    served = client.get(f"/tasks/{task}/rankings", headers=reader)
    made = json.loads(served.headers["Arena-Provenance"])
    printed = _board(tmp_path, "leaderboard", "--store", "a.db", "--by", "submission", "--task", task)["provenance"]
    assert made == printed and made["command"] == ["leaderboard", "--by", "submission", "--task", task]
    assert made["n_runs"] == len(served.json()) == sum(r["task_id"] == task for r in RUNS) and made["n_tasks"] == 1
    # A stored run's card: the runs of its task, which its baseline was computed from.
    card = _board(tmp_path, "card", RUNS[0]["id"], "--store", "a.db")["provenance"]
    assert (card["runs"], card["n_runs"], card["tasks"]) == (made["runs"], made["n_runs"], made["tasks"])


def test_a_store_read_as_columns_prints_what_reading_its_runs_as_objects_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--store`` commands read the stored runs as columns that keep each run's meta and score
    them as one batch; every board, choice of runs (--task, --category, --where, harness errors
    excluded, one that keeps nothing) and its provenance prints what reading each run as an
    object printed, and no run object is made."""
    import json
    import random

    from arena_core.cli import selection
    from arena_core.examples.synthetic import generate_arena
    from arena_core.model import records

    tasks, runs = generate_arena(tasks=8, submissions_per_task=9, seed=4)
    rng = random.Random(2)
    for run in runs:
        run["meta"] = {"lang": rng.choice(["py", "js"]), **({"flags": ["harness_error"]} if rng.random() < 0.15 else {})}
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "excluding.toml").write_text('infra_failures = "exclude"\n')
    assert run_arena("ingest", "runs.jsonl", "--tasks", "tasks.json", "--store", "a.db", cwd=tmp_path).returncode == 0
    task, category = tasks[0]["id"], tasks[1]["category"]
    commands = [
        ["leaderboard", "--format", "json"],
        ["leaderboard", "--by", "tool,model"],
        ["leaderboard", "--by", "meta.lang", "--format", "json"],
        ["leaderboard", "--task", task, "--format", "json"],
        ["leaderboard", "--category", category, "--where", "meta.lang=py", "--format", "json"],
        ["leaderboard", "--where", "meta.lang=none"],
        ["-c", "excluding.toml", "leaderboard", "--format", "json"],
        ["tasks", "--by", "model", "--format", "json"],
        ["tasks", "--where", "meta.lang=js"],
    ]

    def printed() -> list[tuple[int, str, str]]:
        found = []
        for command in commands:
            done = run_arena(*command, "--store", "a.db", cwd=tmp_path)
            found.append((done.returncode, done.stdout, done.stderr))
        return found

    made: list[int] = []
    real_init = records.Submission.__init__
    monkeypatch.setattr(records.Submission, "__init__", lambda self, *a, **k: made.append(1) or real_init(self, *a, **k))
    as_columns = printed()
    assert made == []  # no run became an object
    monkeypatch.setattr(selection, "stored_columns", lambda arena, store: None)  # as the runs were read before
    as_objects = printed()
    assert made  # that path made them
    assert as_columns == as_objects
    assert [code for code, _, _ in as_columns].count(0) == len(commands) - 1  # all but the one that keeps nothing
    assert "left out (infra_failures = exclude)" in as_columns[6][2]
