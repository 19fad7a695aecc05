"""``arena serve``: the real app, attacked and used as its clients would, through FastAPI's test
client (and once over a real socket, through the command)."""

from __future__ import annotations

import json
import os
import random
import secrets
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi, uvicorn, httpx) is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from arena_core import Arena, ArenaError, to_dict  # noqa: E402
from arena_core.service.app import create_app  # noqa: E402
from arena_core.service.tokens import TokenStore  # noqa: E402
from arena_core.store import SQLiteStore  # noqa: E402
from servers import free_port, wait_until_serving  # noqa: E402

TASKS = ["t1", "t2", "t3"]
PROBLEM = {"type", "title", "status", "detail"}


def _sandboxed() -> dict:
    try:
        Arena({"command_runner": "sandbox"}, autoload=False)
    except ArenaError as exc:
        pytest.skip(f"the sandbox cannot run here: {exc}")
    return {"command_runner": "sandbox", "command_memory_limit": "256M", "command_max_processes": 32}


class Service:
    def __init__(self, tmp_path: Path, database: str | None = None, **options: object) -> None:
        """The app over an SQLite file, or over the PostgreSQL database ``database`` names."""
        self.root = tmp_path / "workspaces"
        self.root.mkdir()
        self.db = tmp_path / "arena.db"
        self.arena = Arena({**_sandboxed(), "workspace_root": str(self.root)}, autoload=False)
        self.where = database or str(self.db)
        self.tokens = TokenStore(database or self.db)
        if database is None:
            self.store = SQLiteStore(self.db)
        else:
            from arena_core.store.postgres import PostgresStore

            self.store = PostgresStore(database)
        self.client = TestClient(create_app(self.arena, self.store, self.tokens, **options))
        self.operator = self.bearer("operator")
        self.aider = self.bearer("submitter", ["aider"])
        self.other = self.bearer("submitter", ["other"])

    def bearer(self, role: str, tools: list[str] | None = None, models: tuple[str, ...] = ("m0", "m1")) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens.create(role, tools or [], models=models)[1]}"}


@pytest.fixture(params=["sqlite", "postgresql"])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Service:
    """The service over each store it runs on: every attack below runs against both."""
    s = Service(tmp_path, request.getfixturevalue("postgres_server")() if request.param == "postgresql" else None)
    for task_id in TASKS:
        assert s.client.put(f"/tasks/{task_id}", json={"category": "debugging", "success_criteria": [
            {"type": "no_errors"}]}, headers=s.operator).status_code == 200
    return s


def _run(i: int, rng: random.Random, tool: str = "aider") -> dict:
    return {"id": f"run-{i}", "task_id": TASKS[i % 3], "tool": tool, "model": f"m{i % 2}",
            "total_tokens": rng.randint(1000, 20000), "tool_calls": rng.randint(1, 40),
            "execution_time": rng.uniform(10, 900), "success": rng.random() < 0.7}


def _is_problem(response, status: int) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert PROBLEM <= set(body) and body["status"] == status
    return body


def test_no_endpoint_is_open_without_a_token_unless_reads_are_public(service: Service, tmp_path: Path) -> None:
    for method, path in (("get", "/leaderboard"), ("get", "/tasks/t1/rankings"), ("post", "/submissions"),
                         ("put", "/tasks/x"), ("get", "/tasks"), ("get", "/tasks/t1"), ("get", "/submissions/run-0")):
        _is_problem(service.client.request(method, path, json={}), 401)
        _is_problem(service.client.request(method, path, json={}, headers={"Authorization": "Bearer arena_x.y"}), 401)
    assert service.client.get("/health").json() == {"status": "ok"}
    (tmp_path / "public").mkdir()
    public = Service(tmp_path / "public", public_read=True)
    assert public.client.get("/leaderboard").status_code == 200
    _is_problem(public.client.post("/submissions", json=_run(0, random.Random(0))), 401)


def test_a_submitter_cannot_define_tasks_nor_post_for_another_tool(service: Service) -> None:
    task = {"success_criteria": [{"type": "command_succeeds", "command": ["sh", "-c", "cat /etc/hostname"]}]}
    _is_problem(service.client.put("/tasks/evil", json=task, headers=service.aider), 403)
    _is_problem(service.client.post("/submissions", json=_run(0, random.Random(0), tool="other"),
                                    headers=service.aider), 403)
    with service.store.transaction(write=False) as tx:
        assert tx.get_task("evil") is None and tx.task_of("run-0") is None


def test_a_task_command_cannot_read_host_files_and_a_run_names_only_its_own_workspace(service: Service,
                                                                                     tmp_path: Path) -> None:
    """What ran commands as root on the example service: an operator's task runs sandboxed, and a
    run's workspace must be its own directory under the root."""
    secret = tmp_path / "secret"
    secret.write_text(token := secrets.token_hex(8))
    secret.chmod(0o600)
    task = {"success_criteria": [{"type": "command_succeeds", "command": ["cat", str(secret)]}]}
    assert service.client.put("/tasks/cmd", json=task, headers=service.operator).status_code == 200
    (service.root / "run-a").mkdir()
    run = {"id": "run-a", "task_id": "cmd", "tool": "aider", "total_tokens": 1, "tool_calls": 1, "workspace": "run-a"}
    created = service.client.post("/submissions", json=run, headers=service.aider)
    assert created.status_code == 201
    verdict = created.json()["criteria"][0]
    assert verdict["status"] == "failed" and token not in json.dumps(created.json())  # the command ran, confined
    stolen = service.client.post("/submissions", json={**run, "id": "run-b", "workspace": "."}, headers=service.aider)
    assert stolen.status_code == 201 and "not this submission's own" in stolen.json()["criteria"][0]["reason"]


def test_the_local_runner_is_refused_unless_allowed(tmp_path: Path) -> None:
    arena = Arena({"workspace_owner": "id"}, autoload=False)
    with pytest.raises(ArenaError, match="runs task commands unconfined"):
        create_app(arena, SQLiteStore(tmp_path / "a.db"), TokenStore(tmp_path / "a.db"))
    create_app(arena, SQLiteStore(tmp_path / "a.db"), TokenStore(tmp_path / "a.db"), allow_local_runner=True)
    with pytest.raises(ArenaError, match="workspace_owner must be 'id'"):
        create_app(Arena(autoload=False), SQLiteStore(tmp_path / "a.db"), TokenStore(tmp_path / "a.db"),
                   allow_local_runner=True)


def test_a_run_no_verdict_grades_is_refused_not_ranked_as_a_failure(service: Service) -> None:
    rng = random.Random(3)
    assert service.client.put("/tasks/hv", json={"success_criteria": [{"type": "harness_verdict"}]},
                              headers=service.operator).status_code == 200  # fmt: skip
    run = {**_run(0, rng), "id": "ungraded", "task_id": "hv", "meta": {"flags": ["not_graded"]}}
    refused = _is_problem(service.client.post("/submissions", json=run, headers=service.aider), 400)
    assert "has no verdict (meta.flags: not_graded)" in refused["detail"]
    with service.store.transaction(write=False) as tx:
        assert tx.task_of("ungraded") is None
    graded = {**run, "task_id": "t1"}  # t1's criterion checks the run itself: it grades it
    assert service.client.post("/submissions", json=graded, headers=service.aider).status_code == 201


def test_ids_are_immutable_and_only_their_own_tool_replaces_them(service: Service) -> None:
    rng = random.Random(1)
    first = _run(0, rng)
    assert service.client.post("/submissions", json=first, headers=service.aider).status_code == 201
    moved = _is_problem(service.client.post("/submissions", json={**first, "task_id": "t2"}, headers=service.aider), 409)
    assert moved["error"]["code"] == "duplicate_id" and "stored for task 't1'" in moved["detail"]
    again = _is_problem(service.client.post("/submissions", json=first, headers=service.aider), 409)
    for refusal in (moved, again):  # written for the HTTP client: what it can send, not a CLI flag
        assert "?replace=true" in refusal["detail"] and "?replace=true" in refusal["error"]["expected"]
        assert "arena ingest" not in json.dumps(refusal) and "replace=True" not in json.dumps(refusal)
    _is_problem(service.client.post("/submissions?replace=true", json={**first, "tool": "other"},
                                    headers=service.other), 403)
    assert service.client.post("/submissions?replace=true", json=first, headers=service.aider).status_code == 201
    with service.store.transaction(write=False) as tx:
        assert tx.task_of("run-0") == "t1" and [e.submission_id for e in tx.evaluations("t1")] == ["run-0"]


def test_a_client_reads_back_tasks_and_runs_and_only_the_runs_own_submitter_reads_the_run_itself(
    service: Service,
) -> None:
    rng = random.Random(2)
    for i in range(4):
        assert service.client.post("/submissions", json=_run(i, rng), headers=service.aider).status_code == 201
    page = service.client.get("/tasks?offset=1&limit=1", headers=service.other).json()
    assert page == {"total": 3, "offset": 1, "limit": 1, "tasks": [{"id": "t2", "category": "debugging",
                                                                    "difficulty": None}]}
    task = service.client.get("/tasks/t1", headers=service.other).json()
    assert task["task"]["id"] == "t1" and task["runs"] == 2 and task["baseline"]["task_id"] == "t1"
    _is_problem(service.client.get("/tasks/nope", headers=service.other), 404)
    first = _run(0, random.Random(2))
    assert service.client.post("/submissions?replace=true", json={**first, "meta": {"note": "second try"}},
                               headers=service.aider).status_code == 201
    own = service.client.get("/submissions/run-0", headers=service.aider).json()
    assert own["task_id"] == "t1" and own["evaluation"]["submission_id"] == "run-0"
    assert own["verdicts"] == own["evaluation"]["criteria"] and own["verdicts"][0]["type"] == "no_errors"
    assert own["submission"]["meta"] == {"note": "second try"}
    assert own["history"] == []  # nothing superseded yet: a replaced run is scored afresh
    from arena_core.store.repricing import reprice

    reprice(Arena({"cost_source": "priced"}, autoload=False), service.store, reason="reprice for the test")
    now = service.client.get("/submissions/run-0", headers=service.aider).json()
    assert [h["reason"] for h in now["history"]] == ["reprice for the test"]
    assert now["history"][0]["evaluation"] == own["evaluation"]  # the evaluation read before, kept as a version
    seen = service.client.get("/submissions/run-0", headers=service.other).json()  # scores, not the run's meta
    assert "submission" not in seen and seen["evaluation"] == now["evaluation"]
    for blind in ("reviewer", "voter"):  # they judge runs without knowing whose: they read none of this
        _is_problem(service.client.get("/submissions/run-0", headers=service.bearer(blind)), 403)
        _is_problem(service.client.get("/tasks/t1", headers=service.bearer(blind)), 403)
    assert "submission" in service.client.get("/submissions/run-0", headers=service.operator).json()
    _is_problem(service.client.get("/submissions/nope", headers=service.aider), 404)


def test_bodies_too_large_or_too_deep_and_bad_parameters_get_one_problem_shape(service: Service) -> None:
    big = json.dumps({**_run(0, random.Random(0)), "meta": {"pad": "x" * (2 << 20)}})
    _is_problem(service.client.post("/submissions", content=big, headers={**service.aider,
                                                                          "Content-Type": "application/json"}), 413)

    def chunks():
        yield big[: 1 << 20].encode()
        yield big[1 << 20 :].encode()

    _is_problem(service.client.post("/submissions", content=chunks(), headers=service.aider), 413)  # no length given
    deep: dict = {}
    for _ in range(900):
        deep = {"k": deep}
    body = _is_problem(service.client.post("/submissions", json={**_run(1, random.Random(0)), "meta": deep},
                                           headers=service.aider), 400)
    assert "nests deeper" in body["detail"]
    invalid = _is_problem(service.client.post("/submissions", json={"id": "x", "task_id": "t1", "tool": "aider",
                                                                    "total_tokens": "many", "tool_calls": 3},
                                              headers=service.aider), 400)
    assert invalid["error"]["field"] == "total_tokens" and invalid["error"]["code"] == "invalid_value"
    _is_problem(service.client.get("/leaderboard?by=nonsense", headers=service.aider), 400)
    _is_problem(service.client.get("/nowhere", headers=service.aider), 404)
    _is_problem(service.client.delete("/leaderboard", headers=service.aider), 405)
    _is_problem(service.client.post("/submissions", content=b"{not json", headers=service.aider), 400)
    _is_problem(service.client.get("/tasks/none/rankings", headers=service.aider), 404)
    for response in (service.client.post("/submissions", content=b"{", headers=service.aider),
                     service.client.get("/tasks/none/rankings", headers=service.aider)):
        assert service.where not in response.text and "Traceback" not in response.text


def test_the_rate_is_limited_per_token(tmp_path: Path) -> None:
    service = Service(tmp_path, rate=1.0, burst=3)
    answers = [service.client.get("/leaderboard", headers=service.aider).status_code for _ in range(5)]
    assert answers[:3] == [200, 200, 200] and answers[3] == 429
    limited = service.client.get("/leaderboard", headers=service.aider)
    assert "Retry-After" in limited.headers and _is_problem(limited, 429)
    assert service.client.get("/leaderboard", headers=service.other).status_code == 200  # another token's own rate


def test_concurrent_posts_lose_nothing_and_the_board_is_the_stores(service: Service) -> None:
    rng = random.Random(7)
    runs = [_run(i, rng, tool=("aider", "other")[i % 2]) for i in range(120)]
    answers: list[int] = []

    def post(part: list[dict]) -> None:
        for run in part:
            headers = service.aider if run["tool"] == "aider" else service.other
            answers.append(service.client.post("/submissions", json=run, headers=headers).status_code)

    threads = [threading.Thread(target=post, args=(runs[k::8],)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [201] * 120
    with service.store.transaction(write=False) as tx:
        assert sum(len(tx.evaluations(t)) for t in TASKS) == 120
    for by in ("tool", "model"):
        served = service.client.get(f"/leaderboard?by={by}", headers=service.aider).json()
        expected = [to_dict(r) for r in service.arena.leaderboard(store=service.store, by=by)]
        assert [(r["group"], r["n_runs"], r["n_tasks"], r["rank"], r["inverts"]) for r in served] == [
            (r["group"], r["n_runs"], r["n_tasks"], r["rank"], r["inverts"]) for r in expected]
        for got, want in zip(served, expected, strict=True):
            assert (got["score"], got["ci_low"], got["ci_high"], got["means"]) == (
                want["score"], want["ci_low"], want["ci_high"], want["means"])  # the cells' sums are exact
    page = service.client.get("/tasks/t1/rankings?limit=5", headers=service.aider).json()
    assert [e["overall_ranking"] for e in page] == sorted(e["overall_ranking"] for e in page) and len(page) == 5


def test_arena_serve_runs_from_the_command_with_tokens_made_by_the_command(tmp_path: Path) -> None:
    _sandboxed()
    arena = [sys.executable, "-m", "arena_core"]
    (tmp_path / "arena.toml").write_text('command_runner = "sandbox"\n')
    made = subprocess.run([*arena, "serve", "token", "create", "--role", "operator", "--store", "sqlite:///a.db"],
                          cwd=tmp_path, capture_output=True, text=True, check=True)
    token = made.stdout.splitlines()[-1]
    port = free_port()
    server = subprocess.Popen([*arena, "serve", "--store", "sqlite:///a.db", "--port", str(port)], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})
    try:
        import httpx

        wait_until_serving(port, tries=100)
        headers = {"Authorization": f"Bearer {token}"}
        assert httpx.put(f"http://127.0.0.1:{port}/tasks/t", json={}, headers=headers).status_code == 200
        listed = subprocess.run([*arena, "serve", "token", "list", "--store", "sqlite:///a.db"], cwd=tmp_path,
                                capture_output=True, text=True, check=True).stdout
        assert "operator" in listed and token.split(".")[1] not in listed
        token_id = token.split(".")[0].removeprefix("arena_")
        subprocess.run([*arena, "serve", "token", "revoke", token_id, "--store", "sqlite:///a.db"], cwd=tmp_path,
                       check=True, capture_output=True)
        assert httpx.put(f"http://127.0.0.1:{port}/tasks/t", json={}, headers=headers).status_code == 401
    finally:
        server.terminate()
        server.wait(timeout=20)
    stopped = server.stderr.read().decode() if server.stderr else ""
    assert server.returncode == 0 and "arena serve stopped cleanly (SIGTERM)" in stopped, stopped
    assert "Error" not in stopped
    (tmp_path / "arena.toml").unlink()  # the default runner, local: refused
    refused = subprocess.run([*arena, "serve", "--store", "sqlite:///a.db"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=60)
    assert refused.returncode == 2 and "runs task commands unconfined" in refused.stderr


def test_the_api_pages_load_nothing_from_another_host(tmp_path: Path) -> None:
    """/docs and /redoc on a machine without internet: every script, style and icon they name is
    served by the app itself (fastapi-offline's assets), none from a CDN."""
    import re

    client = Service(tmp_path).client
    for page in ("/docs", "/redoc"):
        html = client.get(page)
        assert html.status_code == 200 and "http://" not in html.text and "https://" not in html.text
        assets = re.findall(r'(?:src|href)="([^"]+)"', html.text)
        assert any(a.endswith(".js") for a in assets)
        for asset in assets:
            assert asset.startswith("/") and client.get(asset).status_code == 200, asset


def test_the_documented_openapi_schema_is_the_apps(tmp_path: Path) -> None:
    app = create_app(Arena({**_sandboxed(), "workspace_root": str(tmp_path)}, autoload=False),
                     SQLiteStore(tmp_path / "a.db"), TokenStore(tmp_path / "a.db"))
    documented = json.loads((Path(__file__).parent.parent / "docs" / "serve-openapi.json").read_text())
    assert documented == json.loads(json.dumps(app.openapi()))
    assert set(documented["paths"]) == {"/health", "/tasks/{task_id}", "/submissions", "/tasks/{task_id}/rankings",
                                        "/leaderboard", "/review/next", "/review/{item}", "/calibration", "/battles/next",
                                        "/votes", "/votes/leaderboard", "/weights/fit", "/weights", "/weights/{version}",
                                        "/tasks", "/submissions/{submission_id}"}
