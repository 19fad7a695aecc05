"""People voting through the service: blind battles, one vote per battle token, a vote rate per
voter, informative pairings, the vote board, learned weight profiles kept as versions, and eight
voters at once through a kill -9 and a restart."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from servers import KillableServer

from arena_core.model.votes import Vote
from arena_core.store.votes import VoteStore

pytest.importorskip("fastapi", reason="the service extra (fastapi, uvicorn, httpx) is not installed")

TOOLS = ("aider", "openhands", "claude-code")
SECRET_WORDS = ("aider", "openhands", "claude-code", "gpt-5", "run-", "estimated_cost", "3.98765")


def _run(i: int, task: str = "t") -> dict:
    return {"id": f"run-{task}-{i}", "task_id": task, "tool": TOOLS[i % 3], "model": "gpt-5-mini", "total_tokens": 1000 + i,
            "tool_calls": 5, "estimated_cost": 3.98765, "files_created": [f"src/f{i}.py"], "tests_passed": i % 4,
            "tests_total": 4, "meta": {"final_answer": f"Answer number {i}"}}  # fmt: skip


def _client(tmp_path: Path, **options: object):
    from fastapi.testclient import TestClient
    from test_serve import _sandboxed

    from arena_core import Arena
    from arena_core.service.app import create_app
    from arena_core.service.tokens import TokenStore
    from arena_core.store import SQLiteStore

    arena = Arena({**_sandboxed(), "workspace_root": str(tmp_path)}, autoload=False)
    tokens = TokenStore(tmp_path / "a.db")
    client = TestClient(create_app(arena, SQLiteStore(tmp_path / "a.db"), tokens, **options))  # type: ignore[arg-type]

    def bearer(role: str, *args: object, **kwargs: object) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens.create(role, *args, **kwargs)[1]}"}  # type: ignore[arg-type]

    return client, bearer


def _stocked(tmp_path: Path, runs: int = 9, **options: object):
    client, bearer = _client(tmp_path, **options)
    operator = bearer("operator")
    assert client.put("/tasks/t", json={"success_criteria": []}, headers=operator).status_code == 200
    for i in range(runs):
        assert client.post("/submissions", json=_run(i), headers=operator).status_code == 201
    return client, bearer, operator


def test_a_voter_gets_blind_battles_and_spends_each_on_one_vote(tmp_path: Path) -> None:
    client, bearer, operator = _stocked(tmp_path)
    voter, other = bearer("voter"), bearer("voter")
    got = client.get("/battles/next", headers=voter)
    assert got.status_code == 200, got.text
    battle = got.json()
    assert battle.keys() == {"battle", "task", "a", "b"} and battle["task"] == {"id": "t"}
    assert battle["a"].keys() == {"files_created", "tests"} and not any(w in got.text for w in SECRET_WORDS)
    assert client.post("/votes", json={"battle": battle["battle"], "winner": "left"}, headers=voter).status_code == 422
    assert client.post("/votes", json={"battle": battle["battle"], "winner": "a"}, headers=other).status_code == 403
    assert client.post("/votes", json={"battle": battle["battle"], "winner": "a"}, headers=voter).status_code == 201
    assert client.post("/votes", json={"battle": battle["battle"], "winner": "b"}, headers=voter).status_code == 409
    assert client.post("/votes", json={"battle": "nope", "winner": "b"}, headers=voter).status_code == 404
    [stored] = VoteStore(tmp_path / "a.db").votes()
    assert stored.winner == "a" and stored.task_id == "t" and {stored.a, stored.b} <= {f"run-t-{i}" for i in range(9)}
    assert TOOLS.index(_tool(stored.a)) != TOOLS.index(_tool(stored.b))  # two groups battle, never one
    # A voter may only vote; no one else may vote but an operator.
    for path in ("/leaderboard", "/votes/leaderboard", "/tasks/t/rankings", "/calibration", "/weights"):
        assert client.get(path, headers=voter).status_code == 403, path
    for role in (bearer("reviewer"), bearer("submitter", ["aider"], models=["gpt-5-mini"])):
        assert client.get("/battles/next", headers=role).status_code == 403
    assert client.get("/battles/next", headers=operator).status_code == 200


def _tool(run_id: str) -> str:
    return TOOLS[int(run_id.rsplit("-", 1)[1]) % 3]


def test_battles_favour_close_groups_with_few_votes_between_them(tmp_path: Path) -> None:
    client, bearer, _ = _stocked(tmp_path)
    store = VoteStore(tmp_path / "a.db")
    rng = random.Random(1)
    store.add(
        [Vote(f"seed-{n}", "t", "run-t-0", "run-t-1", rng.choice("ab"), f"v{n}") for n in range(300)]
    )  # aider-openhands
    voter = bearer("voter")
    pairs = Counter()
    for _ in range(90):
        assert client.get("/battles/next", headers=voter).status_code == 200
        pairs[frozenset(_groups_of_last_battle(tmp_path))] += 1  # the store keeps the battle's runs
    # The pair with 300 votes weighs 1/301 of a fresh pair's (their ratings are equal): about once in 600.
    assert pairs[frozenset({"aider", "openhands"})] <= 2, pairs
    assert min(pairs[frozenset({"aider", "claude-code"})], pairs[frozenset({"openhands", "claude-code"})]) >= 28, pairs


def _groups_of_last_battle(tmp_path: Path) -> tuple[str, str]:
    import sqlite3

    with sqlite3.connect(tmp_path / "a.db") as db:
        a, b = db.execute("SELECT a, b FROM battles ORDER BY rowid DESC LIMIT 1").fetchone()
    return _tool(a), _tool(b)


def test_a_voter_is_held_to_the_vote_rate(tmp_path: Path) -> None:
    client, bearer, _ = _stocked(tmp_path, vote_rate=0.01)
    voter = bearer("voter")
    codes = []
    for _ in range(12):
        battle = client.get("/battles/next", headers=voter).json()["battle"]
        codes.append(client.post("/votes", json={"battle": battle, "winner": "tie"}, headers=voter).status_code)
    assert codes[:10] == [201] * 10 and codes[10:] == [429, 429]
    assert len(VoteStore(tmp_path / "a.db").votes()) == 10


def test_the_vote_board_and_learned_profiles_kept_as_versions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The service draws battles from the system's randomness (a voter must not predict them); here
    # a seeded draw, so that the sixty votes, and the weights they teach, are the same every run.
    monkeypatch.setattr("arena_core.service.battles.random.SystemRandom", lambda: random.Random(8))
    client, bearer, operator = _stocked(tmp_path, runs=9, vote_rate=1000.0)
    voters = [bearer("voter") for _ in range(6)]
    assert client.get("/votes/leaderboard", headers=operator).status_code == 404  # no votes yet
    rng = random.Random(3)
    for n in range(60):  # people prefer aider's runs, seven times in ten
        battle = client.get("/battles/next", headers=voters[n % 6])
        a, b = _groups_of_last_battle(tmp_path)
        prefer_a = rng.random() < (0.7 if a == "aider" else 0.3 if b == "aider" else 0.5)
        vote = {"battle": battle.json()["battle"], "winner": "a" if prefer_a else "b"}
        assert client.post("/votes", json=vote, headers=voters[n % 6]).status_code == 201
    board = client.get("/votes/leaderboard", headers=operator)
    assert board.status_code == 200 and board.headers["Arena-Profile"].startswith("default ")
    counted = board.json()
    hygiene = counted["hygiene"]
    assert counted["rows"][0]["group"] == "aider"
    assert counted["used"] + hygiene["repeated"] + hygiene["near_duplicates"] + hygiene["removed"] == 60
    assert client.get("/leaderboard", headers=operator).headers["Arena-Profile"] == board.headers["Arena-Profile"]
    assert client.post("/weights/fit", json={"resamples": 20}, headers=voters[0]).status_code == 403
    assert client.post("/weights/fit", json={"resamples": 3}, headers=operator).status_code == 422
    before = client.get("/tasks/t/rankings", headers=operator).json()
    fitted = client.post("/weights/fit", json={"resamples": 20}, headers=operator)
    assert fitted.status_code == 201, fitted.text
    assert fitted.json()["version"] == 1 and abs(sum(fitted.json()["weights"].values()) - 1) < 1e-9
    assert client.post("/weights/fit", json={"resamples": 20}, headers=operator).json()["version"] == 2
    assert [v["version"] for v in client.get("/weights", headers=operator).json()] == [1, 2]
    text = client.get("/weights/1", headers=operator).text
    assert text.startswith("# Weights learned by `arena weights fit`") and "[weights.default]" in text
    assert client.get("/weights/9", headers=operator).status_code == 404
    assert client.get("/tasks/t/rankings", headers=operator).json() == before  # nothing rescored silently


def test_eight_voters_at_once_through_a_kill_and_restart_lose_no_acknowledged_vote(tmp_path: Path) -> None:
    import httpx
    from test_serve import _sandboxed

    from arena_core.service.tokens import TokenStore

    _sandboxed()
    (tmp_path / "arena.toml").write_text('command_runner = "sandbox"\n')
    tokens = TokenStore(tmp_path / "a.db")
    operator = {"Authorization": f"Bearer {tokens.create('operator')[1]}"}
    voters = [{"Authorization": f"Bearer {tokens.create('voter', note=f'voter {n}')[1]}"} for n in range(8)]
    server = KillableServer(tmp_path, "--rate", "1000", "--vote-rate", "1000")
    server.start()
    url = f"http://127.0.0.1:{server.port}"
    assert httpx.put(f"{url}/tasks/t", json={"success_criteria": []}, headers=operator).status_code == 200
    for i in range(9):
        assert httpx.post(f"{url}/submissions", json=_run(i), headers=operator, timeout=60).status_code == 201
    acknowledged: list[str] = []
    seen: list[str] = []
    failures: list[str] = []
    lock = threading.Lock()

    def vote(n: int) -> None:
        rng = random.Random(n)
        mine = 0
        for _ in range(200):
            if mine == 4:
                return
            try:
                got = httpx.get(f"{url}/battles/next", headers=voters[n], timeout=30)
                assert got.status_code == 200, got.text
                battle = got.json()["battle"]
                done = httpx.post(
                    f"{url}/votes", json={"battle": battle, "winner": rng.choice("ab")}, headers=voters[n], timeout=30
                )
                assert done.status_code == 201, done.text
                again = httpx.post(
                    f"{url}/votes", json={"battle": battle, "winner": "tie"}, headers=voters[n], timeout=30
                )
                assert again.status_code == 409, again.text
                with lock:
                    seen.extend((got.text, done.text, again.text))
                    acknowledged.append(done.json()["at"])
                mine += 1
            except httpx.TransportError:
                time.sleep(0.2)  # the server is being restarted
            except AssertionError as error:
                failures.append(str(error))
                return
        failures.append(f"voter {n} voted {mine} times in 200 tries")

    threads = [threading.Thread(target=vote, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    while len(acknowledged) < 10:
        time.sleep(0.05)
    server.kill()
    server.start()
    for thread in threads:
        thread.join(timeout=300)
    server.kill()
    stored = VoteStore(tmp_path / "a.db").votes()
    assert not failures, failures
    assert len(acknowledged) == 32
    assert set(acknowledged) <= {v.at for v in stored}  # nothing a voter was told was stored is lost
    assert len({v.id for v in stored}) == len(stored)  # one vote per battle
    assert Counter(v.voter for v in stored).keys() == {t.id for t in tokens.tokens() if t.role == "voter"}
    for text in seen:
        assert not any(word in text for word in SECRET_WORDS), text
    assert json.loads(seen[0]).keys() == {"battle", "task", "a", "b"}
