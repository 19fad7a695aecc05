"""The example service (examples/service/) embeds arena-core over SQLite: tested with FastAPI's
test client, including four clients posting 500 runs at once."""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi, httpx) is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from arena_core import Arena, to_dict  # noqa: E402
from arena_core.engine.ranking import rank  # noqa: E402
from arena_core.model.records import Evaluation  # noqa: E402
from arena_core.model.serde import structure  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent / "examples" / "service"))
from arena_service import create_app  # noqa: E402

TASKS = ["t1", "t2", "t3"]


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    app = create_app(tmp_path / "arena.db", Arena(autoload=False))
    with TestClient(app) as client:
        for task_id in TASKS:
            task = {"category": "debugging", "success_criteria": [{"type": "no_errors"}]}
            assert client.put(f"/tasks/{task_id}", json=task).status_code == 200
        yield client


def _run(i: int, rng: random.Random) -> dict:
    return {"id": f"run-{i}", "task_id": TASKS[i % 3], "tool": f"tool-{i % 4}", "model": f"model-{i % 2}",
            "total_tokens": rng.randint(1000, 20000), "tool_calls": rng.randint(1, 40),
            "execution_time": rng.uniform(10, 900), "success": rng.random() < 0.7}


def test_a_run_is_scored_and_a_bad_one_gets_400_with_the_field(client: TestClient) -> None:
    created = client.post("/submissions", json=_run(0, random.Random(1)))
    assert created.status_code == 201
    assert created.json()["submission_id"] == "run-0" and 0 <= created.json()["overall_score"] <= 100
    bad = client.post("/submissions", json={"id": "x", "task_id": "t1", "total_tokens": "many", "tool_calls": 3})
    assert bad.status_code == 400
    assert bad.json()["error"] == {
        "code": "invalid_value", "record": "submission 'x'", "field": "total_tokens", "expected": "a whole number",
        "got": "many", "missing": False, "message": "submission 'x': total_tokens: expected a whole number, got 'many'",
    }
    missing = client.post("/submissions", json={"id": "y", "task_id": "t1", "tool_calls": 3})
    assert missing.status_code == 400
    assert (missing.json()["error"]["field"], missing.json()["error"]["got"], missing.json()["error"]["code"]) == (
        "total_tokens", None, "missing_telemetry")
    no_id = client.post("/submissions", json={"task_id": "t1", "total_tokens": 5, "tool_calls": 3})
    assert no_id.json()["error"]["record"] == "submission at position 0 (no id)"
    again = client.post("/submissions", json=_run(0, random.Random(1)))
    assert again.status_code == 409 and again.json()["error"]["code"] == "duplicate_id"
    unknown = client.get("/tasks/nope/rankings")
    assert unknown.status_code == 400 and unknown.json()["error"]["field"] == "task_id"


def test_four_concurrent_clients_post_500_runs_and_nothing_is_lost(client: TestClient) -> None:
    runs = [_run(i, random.Random(i)) for i in range(500)]
    statuses: list[int] = []
    lock = threading.Lock()

    def post(share: list[dict]) -> None:
        for run in share:
            status = client.post("/submissions", json=run).status_code
            with lock:
                statuses.append(status)

    threads = [threading.Thread(target=post, args=(runs[k::4],)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [201] * 500

    stored = []
    for task_id in TASKS:
        listing = client.get(f"/tasks/{task_id}/rankings", params={"limit": 1000}).json()
        ranked = [structure(e, Evaluation) for e in listing]
        page = client.get(f"/tasks/{task_id}/rankings", params={"offset": 3, "limit": 4}).json()
        assert page == [to_dict(e) for e in ranked[3:7]]
        assert [e.overall_score for e in ranked] == sorted((e.overall_score for e in ranked), reverse=True)
        stored += ranked
        # The stored ranks are the ranks of the stored scores, as if the task were ranked now.
        expected = {e.submission_id: e.overall_ranking for e in rank(ranked, frozenset())}
        assert {e.submission_id: e.overall_ranking for e in ranked} == expected
    assert sorted(e.submission_id for e in stored) == sorted(r["id"] for r in runs)

    board = client.get("/leaderboard", params={"by": "tool"}).json()
    assert sum(row["n_runs"] for row in board) == 500
    # The leaderboard of what was stored is the one the Python API gives for the same evaluations.
    assert board == [to_dict(row) for row in Arena(autoload=False).leaderboard(stored, by="tool")]


def test_the_service_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    monkeypatch.chdir(tmp_path)
    page = Path(__file__).parent.parent / "examples" / "service" / "README.md"
    for block in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S):
        exec(compile(block, str(page), "exec"), {"__name__": "service_readme"})
