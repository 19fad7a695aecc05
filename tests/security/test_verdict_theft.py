"""Verdict theft: a run that names another run's workspace, or posts under another's name, or
flags its own failures away, takes a place on the board it did not earn.

Each attack is first shown to work where nothing stops it (the path leads to the honest
workspace, the unguarded rule passes it), then shown to fail, alone, where arena-core scores
strangers' runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena_core import Arena

CHECK = {"type": "file_contains", "file_path": "a.py", "pattern": "X"}


@pytest.fixture(autouse=True)
def _bobs_workspace(tmp_path: Path) -> None:
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / "a.py").write_text("X = 1\n")  # bob's work passes the check


def _verdicts(tmp_path: Path, records: list[dict], owner: str) -> dict:
    arena = Arena({"workspace_root": str(tmp_path), "workspace_owner": owner}, autoload=False)
    runs = [{"task_id": "t", "total_tokens": 1, "tool_calls": 1, **r} for r in records]
    runs.append({"id": "bob", "task_id": "t", "total_tokens": 1, "tool_calls": 1, "workspace": "bob"})
    evaluations = arena.evaluate_many(runs, {"t": {"id": "t", "success_criteria": [CHECK]}})
    found = {e.submission_id: e.criteria[0] for e in evaluations}
    assert found["bob"].status == "passed"  # the honest run keeps its own verdict
    return found


@pytest.mark.parametrize("thief", ["bob/.", "./bob", "bob/", "x/../bob", "bob//", "./bob/."])
def test_an_id_that_spells_another_runs_directory_takes_nothing(tmp_path: Path, thief: str) -> None:
    (tmp_path / "x").mkdir()
    assert (tmp_path / thief).resolve() == (tmp_path / "bob").resolve()  # the id does lead to bob's workspace
    assert _verdicts(tmp_path, [{"id": thief, "workspace": thief}], "any")[thief].status == "passed"  # the theft
    verdict = _verdicts(tmp_path, [{"id": thief, "workspace": thief}], "id")[thief]
    assert verdict.status == "error" and "must be one path component" in verdict.reason, verdict.reason


def test_a_link_in_ones_own_workspace_to_anothers_takes_nothing(tmp_path: Path) -> None:
    (tmp_path / "mal3").mkdir()
    os.symlink("../bob", tmp_path / "mal3" / "x")
    assert (tmp_path / "mal3" / "x" / "a.py").read_text() == "X = 1\n"  # the link reaches bob's files
    for thief, workspace in [("mal3/x", "mal3/x"), ("mal3", "mal3/x")]:
        assert _verdicts(tmp_path, [{"id": thief, "workspace": workspace}], "any")[thief].status == "passed"
        verdict = _verdicts(tmp_path, [{"id": thief, "workspace": workspace}], "id")[thief]
        assert verdict.status == "error", verdict.reason
        assert "one path component" in verdict.reason or "passes through a link" in verdict.reason


def test_a_workspace_directory_that_is_itself_a_link_is_refused(tmp_path: Path) -> None:
    os.symlink("bob", tmp_path / "mal4")  # the id's own directory name, planted as a link to bob's
    assert _verdicts(tmp_path, [{"id": "mal4", "workspace": "mal4"}], "any")["mal4"].status == "passed"
    verdict = _verdicts(tmp_path, [{"id": "mal4", "workspace": "mal4"}], "id")["mal4"]
    assert verdict.status == "error" and "passes through a link ('mal4')" in verdict.reason


def test_an_own_subdirectory_and_an_absolute_path_to_it_still_work(tmp_path: Path) -> None:
    own = tmp_path / "carol" / "repo"
    own.mkdir(parents=True)
    (own / "a.py").write_text("X = 2\n")
    for workspace in ["carol/repo", str(own), "carol/./repo"]:
        assert _verdicts(tmp_path, [{"id": "carol", "workspace": workspace}], "id")["carol"].status == "passed"


# --- Fields the submitter controls must not decide the board --------------------------------


def test_labels_that_read_alike_stay_two_groups() -> None:
    arena = Arena(autoload=False)
    tasks = {f"t{i}": {"id": f"t{i}"} for i in range(3)}
    runs = [{"id": f"{side}-{i}-{k}", "task_id": f"t{i}", "total_tokens": 1000 + 100 * k + (500 if side == "b" else 0),
             "tool_calls": 3, **fields}
            for side, fields in (("a", {"tool": "openhands", "model": "CodeAct / gpt-5"}),
                                 ("b", {"tool": "openhands / CodeAct", "model": "gpt-5"}))
            for i in range(3) for k in range(3)]
    assert " / ".join(runs[0]["tool"] and (runs[0]["tool"], runs[0]["model"])) == " / ".join(
        (runs[-1]["tool"], runs[-1]["model"]))  # joined as text, the two groups read alike
    board = arena.leaderboard(arena.evaluate_many(runs, tasks), by="tool,model")
    assert sorted(row.group for row in board) == ['"openhands / CodeAct" / "gpt-5"', '"openhands" / "CodeAct / gpt-5"']
    assert all(row.n_runs == 9 for row in board)
    unknown = [{**r, "id": f"u{n}", "tool": "(unknown)" if n % 2 else None} for n, r in enumerate(runs[:9])]
    board = arena.leaderboard(arena.evaluate_many(unknown, tasks), by="tool")  # a tool named like an absent one
    assert sorted((row.group, row.n_runs) for row in board) == [('"(unknown)"', 4), ("(unknown)", 5)]
    for n, run in enumerate(unknown):
        run["model"] = "(unknown model: job)" if n % 2 else None  # a model named like the runs of an unnamed one
        run["meta"] = {"run_id": "job"}
    board = arena.leaderboard(arena.evaluate_many(unknown, tasks), by="model", meta={r["id"]: r["meta"] for r in unknown})
    assert sorted((row.group, row.n_runs) for row in board) == [('"(unknown model: job)"', 4), ("(unknown model: job)", 5)]


def test_a_parquet_null_success_is_refused_as_json_lines_refuses_it(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = [{"id": f"r{i}", "task_id": "t", "total_tokens": 100 + i, "tool_calls": 3, "tool": "a",
             "success": None if i == 0 else True} for i in range(6)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "runs.parquet")
    assert pq.read_table(tmp_path / "runs.parquet")["success"].null_count == 1  # the hole is in the file
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "tasks.json").write_text('[{"id": "t"}]')
    (tmp_path / "stream.toml").write_text("partition_rows = 2\n")  # the streamed path too
    for config in (["-c", "/dev/null"], ["-c", "stream.toml"]):
        for name in ("runs.parquet", "runs.jsonl"):
            done = subprocess.run([sys.executable, "-m", "arena_core", *config, "score", name, "--tasks", "tasks.json"],
                                  cwd=tmp_path, capture_output=True, text=True, timeout=120)
            assert done.returncode == 2 and "submission 'r0': success: expected true or false, got None" in done.stderr


def _service(tmp_path: Path, **config: object) -> tuple[object, object, object]:
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from fastapi.testclient import TestClient

    from arena_core.service.app import create_app
    from arena_core.service.tokens import TokenStore
    from arena_core.store import SQLiteStore

    arena = Arena({"workspace_owner": "id", "workspace_root": str(tmp_path), **config}, autoload=False)
    store, tokens = SQLiteStore(tmp_path / "a.db"), TokenStore(tmp_path / "a.db")
    client = TestClient(create_app(arena, store, tokens, allow_local_runner=True))
    return client, store, tokens


def _bearer(tokens: object, role: str, tools: tuple[str, ...] = (), models: tuple[str, ...] = ()) -> dict[str, str]:
    return {"Authorization": f"Bearer {tokens.create(role, tools, models=models)[1]}"}  # type: ignore[attr-defined]


def _run(i: int, tool: str, model: str, success: bool = True, **extra: object) -> dict:
    return {"id": f"{tool}-{model}-{i}", "task_id": f"t{i % 3}", "tool": tool, "model": model,
            "total_tokens": 1000 + 37 * i, "tool_calls": 3 + i % 4, "success": success, **extra}


def test_a_submitter_cannot_flag_its_own_failures_out_of_the_board(tmp_path: Path) -> None:
    client, store, tokens = _service(tmp_path, infra_failures="exclude")
    operator = _bearer(tokens, "operator")
    vendor = _bearer(tokens, "submitter", ("aider",), ("gpt-5",))
    for t in range(3):
        assert client.put(f"/tasks/t{t}", json={}, headers=operator).status_code == 200  # type: ignore[attr-defined]
    flagged = _run(0, "aider", "gpt-5", success=False, meta={"flags": ["harness_error"]})
    refused = client.post("/submissions", json=flagged, headers=vendor)  # type: ignore[attr-defined]
    assert refused.status_code == 403 and "only an operator's token may flag a run" in refused.json()["detail"]
    assert client.post("/submissions", json=flagged, headers=operator).status_code == 201  # type: ignore[attr-defined]
    arena = Arena({"infra_failures": "exclude"}, autoload=False)
    assert arena.leaderboard(store=store) == []  # the flag does take a run off the board: the attack's aim


def test_a_submitter_cannot_post_failures_under_another_vendors_model(tmp_path: Path) -> None:
    client, store, tokens = _service(tmp_path)
    operator = _bearer(tokens, "operator")
    honest = _bearer(tokens, "submitter", ("claude-code",), ("claude-sonnet-4-5",))
    rival = _bearer(tokens, "submitter", ("aider",), ("gpt-5",))
    for t in range(3):
        client.put(f"/tasks/t{t}", json={"success_criteria": [{"type": "no_errors"}]}, headers=operator)  # type: ignore[attr-defined]
    for i in range(9):
        assert client.post("/submissions", json=_run(i, "claude-code", "claude-sonnet-4-5"),  # type: ignore[attr-defined]
                           headers=honest).status_code == 201
    before = {r["group"]: r["score"] for r in client.get("/leaderboard?by=model", headers=honest).json()}  # type: ignore[attr-defined]
    for i in range(9):
        sabotage = _run(i, "aider", "claude-sonnet-4-5", success=False, total_tokens=90_000, tool_calls=80)
        answer = client.post("/submissions", json=sabotage, headers=rival)  # type: ignore[attr-defined]
        assert answer.status_code == 403 and "posts runs of the models gpt-5 only" in answer.json()["detail"]
    after = {r["group"]: r["score"] for r in client.get("/leaderboard?by=model", headers=honest).json()}  # type: ignore[attr-defined]
    assert after == before
    trusted = _bearer(tokens, "submitter", ("aider",), ("*",))  # a token the operator trusts with every model
    for i in range(9):
        sabotage = _run(i, "aider", "claude-sonnet-4-5", success=False, total_tokens=90_000, tool_calls=80)
        assert client.post("/submissions", json=sabotage, headers=trusted).status_code == 201  # type: ignore[attr-defined]
    after = {r["group"]: r["score"] for r in client.get("/leaderboard?by=model", headers=honest).json()}  # type: ignore[attr-defined]
    assert after["claude-sonnet-4-5"] < before["claude-sonnet-4-5"] - 15  # what a bound token is kept from doing


def test_a_submitter_token_must_bind_its_models(tmp_path: Path) -> None:
    from arena_core.model.errors import ArenaError
    from arena_core.service.tokens import TokenStore

    pytest.importorskip("fastapi")
    with pytest.raises(ArenaError, match="names the models it may post runs of"):
        TokenStore(tmp_path / "tokens.db").create("submitter", ["aider"])
