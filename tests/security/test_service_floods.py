"""Denial of service against ``arena serve``: slow checks holding the one writer, idle sockets
holding every descriptor, floods of anonymous reads and of tokens that do not verify, meta
padding, offsets past what a store counts.

Each attack is shown to do what it does (the check does sleep, the sockets are open and silent,
the flood is sent), then the honest clients are shown to be served. Every load is on 127.0.0.1,
bounded in count and time.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from arena_core import Arena  # noqa: E402
from arena_core.service.app import create_app  # noqa: E402
from arena_core.service.tokens import TokenStore  # noqa: E402
from arena_core.store import SQLiteStore  # noqa: E402

SLEEP = 3.0


def _service(tmp_path: Path, **options: object) -> tuple[TestClient, SQLiteStore, TokenStore, Arena]:
    root = tmp_path / "workspaces"
    root.mkdir(exist_ok=True)
    arena = Arena({"workspace_owner": "id", "workspace_root": str(root), "check_concurrency": 4}, autoload=False)
    store, tokens = SQLiteStore(tmp_path / "a.db"), TokenStore(tmp_path / "a.db")
    return TestClient(create_app(arena, store, tokens, allow_local_runner=True, **options)), store, tokens, arena


def _bearer(tokens: TokenStore, role: str, tool: str = "", model: str = "m") -> dict[str, str]:
    made = tokens.create(role, [tool] if tool else [], models=[model] if role == "submitter" else [])[1]
    return {"Authorization": f"Bearer {made}"}


def _slow_task() -> dict:
    sleeper = [sys.executable, "-c", f"import time; time.sleep({SLEEP})"]
    return {"success_criteria": [{"type": "command_succeeds", "command": sleeper}]}


def test_slow_checks_do_not_hold_the_writer_and_are_capped_per_token(tmp_path: Path) -> None:
    client, store, tokens, _ = _service(tmp_path)
    operator = _bearer(tokens, "operator")
    slow, honest = _bearer(tokens, "submitter", "slow"), _bearer(tokens, "submitter", "honest")
    client.put("/tasks/slow", json=_slow_task(), headers=operator)
    client.put("/tasks/quick", json={"success_criteria": [{"type": "no_errors"}]}, headers=operator)
    for i in range(3):
        (tmp_path / "workspaces" / f"s{i}").mkdir()
    answers: dict[str, tuple[int, float]] = {}

    def post(name: str, run: dict, headers: dict) -> None:
        started = time.monotonic()
        answers[name] = (client.post("/submissions", json=run, headers=headers).status_code, time.monotonic() - started)

    attackers = [threading.Thread(target=post, args=(f"s{i}", {"id": f"s{i}", "task_id": "slow", "tool": "slow",
                                                              "model": "m", "total_tokens": 1, "tool_calls": 1,
                                                              "workspace": f"s{i}"}, slow)) for i in range(3)]
    for thread in attackers:
        thread.start()
    time.sleep(0.5)  # the checks are running now
    for i in range(5):
        post(f"h{i}", {"id": f"h{i}", "task_id": "quick", "tool": "honest", "model": "m", "total_tokens": 10 + i,
                       "tool_calls": 1}, honest)
    for thread in attackers:
        thread.join()
    slow_ones = sorted(answers[f"s{i}"] for i in range(3))
    assert [code for code, _ in slow_ones] == [201, 201, 429]  # two in flight per token, the third refused
    assert all(seconds >= SLEEP for code, seconds in slow_ones if code == 201)  # the checks did sleep
    assert all(answers[f"h{i}"][0] == 201 and answers[f"h{i}"][1] < SLEEP / 2 for i in range(5)), answers


def test_a_store_writer_beside_a_slow_check_is_not_refused_as_busy(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    store = SQLiteStore(tmp_path / "a.db", timeout=1.0)  # a writer waits 1 s at most for the lock
    arena = Arena({"workspace_root": str(tmp_path)}, autoload=False)
    arena.process([], store=store, tasks={"slow": {**_slow_task(), "id": "slow"}, "quick": {"id": "quick"}})
    slow = threading.Thread(target=arena.process, args=([{"id": "w", "task_id": "slow", "total_tokens": 1,
                                                          "tool_calls": 1, "workspace": "w"}],),
                            kwargs={"store": store})
    started = time.monotonic()
    slow.start()
    time.sleep(0.5)
    arena.process([{"id": "q", "task_id": "quick", "total_tokens": 1, "tool_calls": 1}], store=store)  # not busy
    beside = time.monotonic() - started
    slow.join()
    assert time.monotonic() - started >= SLEEP > beside  # the slow check ran, and the other write did not wait
    with store.transaction(write=False) as tx:
        assert {e.submission_id for t in ("slow", "quick") for e in tx.evaluations(t)} == {"w", "q"}


def test_anonymous_reads_and_bad_tokens_are_limited_by_address_before_any_lookup(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "public").mkdir()
    public, _, _, _ = _service(tmp_path / "public", public_read=True, rate=0.1, burst=5)
    codes = [public.get("/leaderboard").status_code for _ in range(40)]
    assert codes[:20] == [200] * 20 and codes.count(429) >= 19  # an address may make four times a token's burst
    client, _, _, _ = _service(tmp_path, rate=0.1, burst=5)
    looked_up = []
    verify = TokenStore.verify
    monkeypatch.setattr(TokenStore, "verify", lambda self, token: looked_up.append(token) or verify(self, token))
    bad = {"Authorization": "Bearer arena_0123456789ab." + "x" * 40}  # well-formed, unknown
    codes = [client.get("/leaderboard", headers=bad).status_code for _ in range(60)]
    assert codes[:20] == [401] * 20 and codes.count(429) >= 39  # the flood is cut at its address ...
    assert len(looked_up) == codes.count(401)  # ... before the token store is asked


def test_a_read_flood_computes_one_board_per_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import arena_core.service.boards as boards

    client, _, tokens, _ = _service(tmp_path, public_read=True, rate=1000.0, burst=1000)
    operator, aider = _bearer(tokens, "operator"), _bearer(tokens, "submitter", "aider")
    for t in range(3):
        client.put(f"/tasks/t{t}", json={}, headers=operator)
    for i in range(9):
        client.post("/submissions", json={"id": f"r{i}", "task_id": f"t{i % 3}", "tool": "aider", "model": "m",
                                          "total_tokens": 100 + i, "tool_calls": 2}, headers=aider)
    computed = []
    board = boards.leaderboard
    monkeypatch.setattr(boards, "leaderboard", lambda *a, **k: computed.append(1) or board(*a, **k))
    first = [client.get("/leaderboard").json() for _ in range(50)]
    assert len(computed) == 1 and all(b == first[0] for b in first)
    client.post("/submissions", json={"id": "r9", "task_id": "t0", "tool": "aider", "model": "m",
                                      "total_tokens": 1, "tool_calls": 1}, headers=aider)
    after = client.get("/leaderboard").json()
    assert len(computed) == 2 and after[0]["n_runs"] == 10  # a write is seen at once


def test_meta_padding_and_a_token_past_its_quota_are_refused(tmp_path: Path) -> None:
    client, store, tokens, _ = _service(tmp_path, token_quota=20_000)
    operator, aider = _bearer(tokens, "operator"), _bearer(tokens, "submitter", "aider")
    client.put("/tasks/t", json={}, headers=operator)
    padded = {"id": "p", "task_id": "t", "tool": "aider", "model": "m", "total_tokens": 1, "tool_calls": 1,
              "meta": {"pad": "x" * 70_000}}
    refused = client.post("/submissions", json=padded, headers=aider)
    assert refused.status_code == 413 and "the most a run's meta may hold is 65,536" in refused.json()["detail"]
    codes = [client.post("/submissions", json={**padded, "id": f"p{i}", "meta": {"pad": "x" * 4_000}},
                         headers=aider).status_code for i in range(8)]
    assert codes[:4] == [201] * 4 and codes[-1] == 403  # about 4 KB a run against a 20,000-byte quota
    with store.transaction(write=False) as tx:
        assert len(tx.evaluations("t")) == codes.count(201)
    assert client.post("/submissions", json={**padded, "id": "o", "meta": {"pad": "x" * 4_000}},
                       headers=operator).status_code == 201  # another token's own quota


def test_an_offset_past_what_a_store_counts_is_a_400_not_a_500(tmp_path: Path) -> None:
    client, _, tokens, _ = _service(tmp_path)
    operator = _bearer(tokens, "operator")
    client.put("/tasks/t", json={}, headers=operator)
    for offset in (2**63, 2**63 - 1, 10**12):
        answer = client.get(f"/tasks/t/rankings?offset={offset}", headers=operator)
        assert answer.status_code == 400 and "offset" in answer.json()["detail"]
    assert client.get("/tasks/t/rankings?offset=1000000000", headers=operator).status_code == 200


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_idle_sockets_past_the_descriptor_limit_do_not_take_the_server_down(tmp_path: Path) -> None:
    """1,100 sockets opened and left silent against a server started with the common 1,024-descriptor
    soft limit: /health is still answered, and the silent sockets are closed after --header-timeout."""
    pytest.importorskip("uvicorn")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 4096:
        pytest.skip(f"the machine's hard limit of open files ({hard}) is too low to open 1,100 sockets and serve")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 4096), hard))  # this test's own sockets
    port = _free_port()
    arena = [sys.executable, "-m", "arena_core"]
    subprocess.run([*arena, "serve", "token", "create", "--role", "operator", "--store", "sqlite:///a.db"], cwd=tmp_path,
                   capture_output=True, check=True)  # fmt: skip

    def common_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))

    server = subprocess.Popen([*arena, "serve", "--store", "sqlite:///a.db", "--port", str(port), "--allow-local-runner",
                               "--header-timeout", "2"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, preexec_fn=common_limit,
                              env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})  # fmt: skip
    idle: list[socket.socket] = []
    try:
        import httpx

        for _ in range(200):
            try:
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        for _ in range(1100):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        idle[0].sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # a head never finished (slowloris)
        time.sleep(0.3)
        started = time.monotonic()
        answer = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
        assert answer.status_code == 200 and time.monotonic() - started < 0.5  # served beside 1,100 idle sockets
        time.sleep(3.0)
        for sock in idle[:50]:
            sock.settimeout(2)
            assert sock.recv(1) == b""  # closed by the server
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200
    finally:
        for sock in idle:
            sock.close()
        server.terminate()
        server.wait(timeout=20)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert json.loads('{"done": true}')["done"]
