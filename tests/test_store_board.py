"""One definition of a store's board: every stored run scored against its task's current
baseline, whatever order the runs arrived in; ``arena leaderboard --store``, ``arena report
--store``, ``Arena.leaderboard(store=...)`` and ``GET /leaderboard`` give it alike, and it is
the board of the same runs given at once as files."""

from __future__ import annotations

import html
import json
import random
import re
from pathlib import Path

import pytest
from clirun import run_arena

from arena_core import Arena, to_dict
from arena_core.cli.selection import finite
from arena_core.examples import SUBMISSIONS, TASKS
from arena_core.examples.synthetic import generate_arena
from arena_core.store import SQLiteStore, Store
from arena_core.store.current import CurrentScores

RUNS = [json.loads(line) for line in SUBMISSIONS.read_text().splitlines() if line.strip()]
TASK_LIST = json.loads(TASKS.read_text())
TASK_MAP = TASK_LIST if isinstance(TASK_LIST, dict) else {t["id"]: t for t in TASK_LIST}


def _open(where: str) -> Store:
    if where.startswith("postgresql://"):
        from arena_core.store.postgres import PostgresStore

        return PostgresStore(where)
    return SQLiteStore(where)


def _arrive(arena: Arena, where: str, seed: int) -> Store:
    """The example arena's runs stored in a random order, in batches of random sizes."""
    rng = random.Random(seed)
    runs = RUNS[:]
    rng.shuffle(runs)
    store = _open(where)
    first = True
    while runs:
        size = rng.randint(1, 40)
        batch, runs = runs[:size], runs[size:]
        arena.process(batch, store=store, tasks=TASK_MAP if first else None)
        first = False
    return store


def _rows(found: list) -> list[dict]:
    return finite([row if isinstance(row, dict) else to_dict(row) for row in found])


def _report_rows(site: Path) -> list[tuple[str, str, str]]:
    """(rank, group, score) of each row of the report's board."""
    index = (site / "index.html").read_text()
    board = index[: index.index("</table>")]
    shown = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", board, flags=re.S)[1:]:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        group = html.unescape(re.sub(r"<[^>]+>", "", cells[2])).rstrip(" *\u2020")
        shown.append((cells[0], group, cells[5]))
    return shown


@pytest.fixture(params=["sqlite", "postgresql"])
def places(request: pytest.FixtureRequest, tmp_path: Path):
    """A new store's location for each arrival order: an SQLite file, or a PostgreSQL database."""
    if request.param == "sqlite":
        return lambda n: str(tmp_path / f"arena-{n}.db")
    new_database = request.getfixturevalue("postgres_server")
    return lambda n: new_database()


def test_every_path_gives_the_store_board_whatever_the_arrival_order(places, tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from fastapi.testclient import TestClient

    from arena_core.service.app import create_app
    from arena_core.service.tokens import TokenStore

    arena = Arena(autoload=False)
    at_once = {by: _rows(arena.leaderboard(arena.evaluate_many(RUNS, TASK_MAP), by=by)) for by in ("tool", "model")}
    seen_on_arrival = set()
    for order, seed in enumerate((3, 17, 40)):
        where = places(order)
        store = _arrive(arena, where, seed)
        with store.transaction(write=False) as tx:  # the history: what each run scored on arrival
            seen_on_arrival.add(tuple(sorted((e.submission_id, e.overall_score) for t in tx.task_ids()
                                             for e in tx.evaluations(t))))  # fmt: skip
        tokens = TokenStore(where)
        served_by = Arena({"workspace_owner": "id"}, autoload=False)  # as `arena serve` requires; scores alike
        client = TestClient(create_app(served_by, store, tokens, allow_local_runner=True))  # no workspaces here
        reader = {"Authorization": f"Bearer {tokens.create('operator', [])[1]}"}
        for by in ("tool", "model"):
            api = _rows(Arena(autoload=False).leaderboard(store=store, by=by))
            printed = run_arena("leaderboard", "--store", where, "--by", by, "--format", "json", cwd=tmp_path)
            assert printed.returncode == 0, printed.stderr
            served = client.get("/leaderboard", params={"by": by}, headers=reader)
            assert served.status_code == 200, served.text
            assert api == json.loads(printed.stdout)["rows"] == finite(served.json()) == at_once[by], (order, by)
        task = sorted(TASK_MAP)[order]
        served = client.get(f"/tasks/{task}/rankings", params={"limit": 1000}, headers=reader).json()
        want = sorted((e for e in arena.evaluate_many(RUNS, TASK_MAP) if e.task_id == task), key=lambda e: e.overall_ranking)
        assert [e["overall_score"] for e in served] == [e.overall_score for e in want]  # best first
        assert sorted((e["overall_ranking"], e["submission_id"], e["overall_score"]) for e in served) == sorted(
            (e.overall_ranking, e.submission_id, e.overall_score) for e in want)  # fmt: skip
        site = tmp_path / f"site-{order}"
        made = run_arena("report", "--store", where, "-o", str(site), cwd=tmp_path)
        assert made.returncode == 0, made.stderr
        assert _report_rows(site) == [(str(r["rank"]), r["group"], f"{r['score']:.2f}") for r in at_once["tool"]]
    assert len(seen_on_arrival) == 3  # the orders did differ where the board must not: in what was stored on arrival


def test_a_task_s_first_runs_are_not_scored_against_defaults(tmp_path: Path) -> None:
    """One run stored alone, scored on arrival against the default baseline; once its task has
    more runs, the store's board scores it against the baseline of them all."""
    arena = Arena(autoload=False)
    store = SQLiteStore(tmp_path / "arena.db")
    task = next(iter(TASK_MAP))
    mine = [r for r in RUNS if r["task_id"] == task]
    arena.process(mine[:1], store=store, tasks={task: TASK_MAP[task]})
    arena.process(mine[1:], store=store)
    with store.transaction(write=False) as tx:
        first = next(e for e in tx.evaluations(task) if e.submission_id == mine[0]["id"])
    assert first.baseline_version == 1 and first.scores["efficiency"] != pytest.approx(0)
    current = {e.submission_id: e for e in arena.current_scores(store).evaluations(store)}
    whole = {e.submission_id: e for e in arena.evaluate_many(mine, {task: TASK_MAP[task]})}
    assert current[mine[0]["id"]].overall_score == whole[mine[0]["id"]].overall_score
    assert current[mine[0]["id"]].overall_score != first.overall_score  # the default baseline is gone


def test_a_write_rescores_only_the_tasks_it_touched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a batch of one task, a board rescores that task alone (its generation moved), so a
    read after a write costs the written tasks, not the store; a task redefined is rescored too."""
    tasks, runs = generate_arena(tasks=6, submissions_per_task=10, seed=4)
    arena = Arena(autoload=False)
    store = SQLiteStore(tmp_path / "arena.db")
    arena.process(runs, store=store, tasks={t["id"]: t for t in tasks})
    current = CurrentScores(arena)
    assert len(current.evaluations(store)) == len(runs)
    scored: list[list[str]] = []
    from arena_core.store import current as module

    real = module.CurrentScores._scored  # what reads and scores the tasks a read finds stale
    monkeypatch.setattr(
        module.CurrentScores, "_scored", lambda self, s, ids, g: scored.append(list(ids)) or real(self, s, ids, g)
    )
    extra = [{**runs[0], "id": "late"}]
    arena.process(extra, store=store)
    after = current.evaluations(store)
    assert scored == [[runs[0]["task_id"]]] and len(after) == len(runs) + 1
    assert current.evaluations(store) == after and len(scored) == 1  # nothing moved: nothing rescored
    redefined = {**next(t for t in tasks if t["id"] == runs[-1]["task_id"]), "difficulty": "advanced"}
    arena.process([], store=store, tasks={redefined["id"]: redefined})
    current.evaluations(store)
    assert scored[-1] == [redefined["id"]]
    fresh = {e.submission_id: e.overall_score for e in CurrentScores(arena).evaluations(store)}
    assert {e.submission_id: e.overall_score for e in current.evaluations(store)} == fresh


def test_a_selection_of_runs_is_read_off_the_store_board_by_every_command(tmp_path: Path) -> None:
    """``--where`` keeps some runs of each task: ``arena leaderboard --store`` and ``arena report
    --store`` both show those runs as the store's board scores them (against baselines of all
    of their tasks' stored runs), not the runs scored again on their own."""
    arena = Arena(autoload=False)
    runs = [{**r, "meta": {**r.get("meta", {}), "half": "a" if k % 2 else "b"}} for k, r in enumerate(RUNS)]
    store = SQLiteStore(tmp_path / "arena.db")
    arena.process(runs, store=store, tasks=TASK_MAP)
    where = ["--store", "arena.db", "--where", "meta.half=a"]
    printed = run_arena("leaderboard", *where, "--format", "json", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    board = json.loads(printed.stdout)["rows"]
    current = arena.current_scores(store).evaluations(store)
    kept = [e for e in current if e.submission_id in {r["id"] for r in runs if r["meta"]["half"] == "a"}]
    assert board == _rows(arena.leaderboard(kept))
    alone = _rows(arena.leaderboard(arena.evaluate_many([r for r in runs if r["meta"]["half"] == "a"], TASK_MAP)))
    assert [r["score"] for r in board] != [r["score"] for r in alone]  # scored on their own, the baselines differ
    made = run_arena("report", *where, "-o", "site", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert _report_rows(tmp_path / "site") == [(str(r["rank"]), r["group"], f"{r['score']:.2f}") for r in board]


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_server")())
    return str(tmp_path / "arena.db")


def test_the_board_read_as_columns_is_the_board_read_as_objects(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store's board reads its runs' records as columns and sums its cells from the scores'
    columns, never building an evaluation; every figure equals, to the bit, the board read
    as objects (each run structured, each evaluation added to the cells one by one): on real
    runs with holes (Aider's), on runs with unknown keys and meta, on runs without a tool."""
    from arena_core.importing.collect import ImportSession
    from arena_core.config.files import load_config
    from arena_core.examples import AIDER_CONFIG, AIDER_RUNS, AIDER_TASKS
    from arena_core.store import current as module

    arena = Arena(load_config(AIDER_CONFIG).config, autoload=False)  # holes reweighted: coverage below 1
    aider = [dict(run.submission) for run in ImportSession(arena.components.importers["aider"], list(AIDER_RUNS)).runs()]
    odd = [{**RUNS[i], "id": f"odd-{i}", "notes": "an unknown key", "meta": {"k": [1, None]}} for i in range(0, 40, 3)]
    odd += [{k: v for k, v in RUNS[i].items() if k != "tool"} | {"id": f"toolless-{i}"} for i in range(1, 40, 7)]
    store = _open(where)
    arena.process(RUNS + odd, store=store, tasks=TASK_MAP)
    arena.process(aider, store=store, tasks={t["id"]: t for t in json.loads(AIDER_TASKS.read_text())})

    def board(columns: bool) -> tuple:
        if not columns:
            monkeypatch.setattr(module, "stored_columns", lambda *_: None)
        current = CurrentScores(arena)
        read, meta = current.read(store)
        cells = {by: sorted(current.cells(store, by)) for by in ("tool", "model")}
        monkeypatch.undo()
        rows = [{k: v for k, v in to_dict(e).items() if k != "evaluated_at"} for e in read]
        return rows, meta, cells, current.run_digests(store)

    as_columns, as_objects = board(True), board(False)
    assert isinstance(CurrentScores(arena)._refreshed(store)[0].evaluations, module._Rows)  # the columns were read
    assert len(as_columns[0]) == len(RUNS) + len(odd) + len(aider) > 300
    assert as_columns[0] == as_objects[0]  # every evaluation, field by field
    assert as_columns[1] == as_objects[1] and as_columns[1]["odd-0"] == {"notes": "an unknown key", "k": [1, None]}
    assert as_columns[2] == as_objects[2] and as_columns[3] == as_objects[3]
    inexact = [row for row in as_columns[2]["tool"] if row[3]]
    assert len(as_columns[2]["tool"]) > 20 and not inexact  # scores in hundredths: whole units throughout
