"""People labelling runs: the label store and its review queue, the service's review endpoints
(blind, bounded, surviving kill -9 under eight reviewers at once), and labels stored by the CLI."""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from servers import KillableServer

from arena_core.model.errors import ArenaError
from arena_core.model.labels import Label
from arena_core.store.labels import LabelStore, QueuedItem, item_id

pytest.importorskip("fastapi", reason="the service extra (fastapi, uvicorn, httpx) is not installed")

REQUIREMENTS = [{"id": f"r{k}", "criteria": f"Requirement {k} holds", "prerequisites": []} for k in range(3)]


def _items(groups: int, per_group: int, split_every: int = 0) -> list[QueuedItem]:
    return [QueuedItem(f"run-{g}-{i}", "t", "r0", f"g{g}", bool(split_every and i % split_every == 0))
            for g in range(groups) for i in range(per_group)]  # fmt: skip


def _keys(path: Path) -> dict[str, tuple[str, float, int]]:
    import sqlite3

    with sqlite3.connect(path) as db:
        return {i: (g, k, d) for i, g, k, d in db.execute("SELECT id, grp, rkey, random_drawn FROM review_items")}


def test_the_queue_draws_each_group_in_random_order_and_sets_disagreements_apart(tmp_path: Path) -> None:
    """Labelled items of a group are always the lowest keys of its random order (a uniform random
    sample), groups take turns, and items drawn for a disagreement count as random only once the
    random order reaches them."""
    store = LabelStore(tmp_path / "a.db", reviews_per_item=1)
    store._random = random.Random(11)  # the keys and the streams' coin, seeded: the same draws every run
    assert store.queue(_items(3, 20, split_every=4)) == 60 and store.queue(_items(3, 20)) == 0
    rng = random.Random(7)
    for turn in range(45):
        before = Counter(g for g, _, d in _keys(tmp_path / "a.db").values() if d)
        item = store.next(f"rev-{turn}", disagreement_share=0.3 if turn < 30 else 0.0)
        assert item is not None
        store.answer(item.id, f"rev-{turn}", rng.random() < 0.5)
        keys = _keys(tmp_path / "a.db")
        for group in ("g0", "g1", "g2"):
            order = sorted((k, d) for g, k, d in keys.values() if g == group)
            flags = [d for _, d in order]
            assert flags == sorted(flags, reverse=True), "the random sample is a prefix of the random order"
        if turn == 29:
            assert any(x.sample == "disagreement" for x in store.labels()), "some drawn for a split, not yet reached"
        if turn >= 30:  # the random stream alone: the group with the fewest drawn goes next
            assert before[keys[item.id][0]] == min(before[g] for g in ("g0", "g1", "g2")), (before, keys[item.id][0])
    keys = _keys(tmp_path / "a.db")
    for x in store.labels():
        assert (x.sample == "random") == bool(keys[item_id(x.submission_id, x.requirement)][2])


def test_an_item_goes_to_its_reviewers_once_each_and_to_one_more_on_a_split(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "a.db", reviews_per_item=2, lease=0.5)
    store.queue(_items(1, 1))
    first = store.next("ana")
    assert first is not None and store.next("ana") == first  # its open item, again
    store.answer(first.id, "ana", True)
    with pytest.raises(FileExistsError):
        store.answer(first.id, "ana", False)
    assert store.next("ana") is None  # nothing it has not labelled
    with pytest.raises(PermissionError):
        store.answer(first.id, "bo", True)  # not handed to bo
    assert store.next("bo") == first
    store.answer(first.id, "bo", False)  # a split: one more reviewer
    assert store.next("cy") == first
    time.sleep(0.6)  # cy's lease runs out: the item goes to someone else
    assert store.next("dee") == first
    store.answer(first.id, "dee", True)
    assert store.next("eve") is None
    assert sorted((x.rater, x.label) for x in store.labels()) == [("ana", True), ("bo", False), ("dee", True)]
    with pytest.raises(LookupError):
        store.answer("nosuchitem", "ana", True)


def test_labels_are_stored_all_or_none(tmp_path: Path) -> None:
    store = LabelStore(tmp_path / "a.db")
    store.add([Label("r1", True, "ana", "r0")])
    with pytest.raises(ArenaError, match="'ana' labelled requirement 'r0' of run 'r1' already; nothing stored"):
        store.add([Label("r2", True, "ana", "r0"), Label("r1", False, "ana", "r0")])
    assert [(x.submission_id, x.label) for x in store.labels()] == [("r1", True)]


def _token(root: Path, role: str, note: str = "") -> dict[str, str]:
    """A token made as ``arena serve token create --role ROLE`` makes it (in this process: the
    server reads the same file)."""
    from arena_core.service.tokens import TokenStore

    return {"Authorization": f"Bearer {TokenStore(root / 'a.db').create(role, note=note)[1]}"}


def test_eight_reviewers_at_once_label_each_item_as_configured_through_a_kill_and_restart(tmp_path: Path) -> None:
    """Over a real socket: 8 runs of two tools, three requirements each (24 items), eight
    reviewers labelling at once; the server is killed with SIGKILL midway and started again. Every
    item ends with exactly two reviewers' labels (three where the two split), every label a
    reviewer was told was stored is stored, and no response to a reviewer names a tool, a model,
    a run or a verdict."""
    import httpx
    from test_serve import _sandboxed

    _sandboxed()
    verdicts = [{"submission_id": f"run-{i}", "requirement": r["id"], "verdict": (i + k) % 3 != 0, "judge": "panel-a"}
                for i in range(8) for k, r in enumerate(REQUIREMENTS)]  # fmt: skip
    (tmp_path / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    (tmp_path / "arena.toml").write_text('command_runner = "sandbox"\njudge_cache = ""\n\n[judges.people]\n'
                                         'provider = "recorded"\npath = "verdicts.jsonl"\n')  # fmt: skip
    operator = _token(tmp_path, "operator")
    reviewers = [_token(tmp_path, "reviewer", f"reviewer {n}") for n in range(8)]
    server = KillableServer(tmp_path, "--rate", "1000")
    server.start()
    url = f"http://127.0.0.1:{server.port}"
    task = {
        "success_criteria": [
            {"type": "judge", "judge": "people", "requirements": REQUIREMENTS, "evidence": ["final_answer"]}
        ]
    }
    assert httpx.put(f"{url}/tasks/t", json=task, headers=operator).status_code == 200
    for i in range(8):
        run = {"id": f"run-{i}", "task_id": "t", "tool": ("aider", "openhands")[i % 2], "model": "gpt-5-mini",
               "total_tokens": 1000 + i, "tool_calls": 5, "meta": {"final_answer": f"Answer number {i}"}}  # fmt: skip
        assert httpx.post(f"{url}/submissions", json=run, headers=operator, timeout=60).status_code == 201
    acknowledged: list[tuple[str, str, bool]] = []
    seen: list[str] = []
    lock = threading.Lock()
    failures: list[BaseException] = []
    # A reviewer told "nothing left" (204) asks again until every reviewer was told so after the
    # last label: an item handed out but not answered yet may still split and want one more.
    idle_after = [-1] * len(reviewers)

    def review(n: int) -> None:
        try:
            label_items(n)
        except BaseException as error:  # a reviewer's thread must not die unseen
            failures.append(error)

    def label_items(n: int) -> None:
        rng = random.Random(n)
        deadline = time.monotonic() + 240  # by time, not tries: a loaded machine restarts the server slowly
        while time.monotonic() < deadline:
            try:
                answered = len(acknowledged)
                got = httpx.get(f"{url}/review/next", headers=reviewers[n], timeout=30)
                if got.status_code == 204:
                    with lock:
                        idle_after[n] = answered
                        if all(x == len(acknowledged) for x in idle_after):
                            return
                    time.sleep(0.1)
                    continue
                assert got.status_code == 200, got.text
                label = rng.random() < 0.5
                done = httpx.post(
                    f"{url}/review/{got.json()['item']}", json={"label": label}, headers=reviewers[n], timeout=30
                )
                assert done.status_code == 201, done.text
                with lock:
                    seen.append(got.text)
                    acknowledged.append((got.json()["item"], f"reviewer {n}", label))
            except httpx.TransportError:
                time.sleep(0.2)  # the server is being restarted
        raise AssertionError("a reviewer never ran out of items")

    threads = [threading.Thread(target=review, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    while len(acknowledged) < 17:
        time.sleep(0.05)
    server.kill()
    server.start()
    for thread in threads:
        thread.join(timeout=300)
    server.kill()
    assert not failures, failures
    assert len(acknowledged) >= 48
    labels = LabelStore(tmp_path / "a.db").labels()
    by_item: dict[tuple[str, str | None], list[Label]] = defaultdict(list)
    for label in labels:
        by_item[(label.submission_id, label.requirement)].append(label)
    assert len(by_item) == 24
    for given in by_item.values():
        raters = [x.rater for x in given]
        assert len(set(raters)) == len(raters)
        first_two = [x.label for x in sorted(given, key=lambda x: x.at or "")[:2]]
        assert len(given) == (3 if len(set(first_two)) > 1 else 2), given
    ids = {item_id(x.submission_id, x.requirement) for x in labels}
    assert {item for item, _, _ in acknowledged} <= ids  # nothing a reviewer was told was stored is lost
    for text in seen:
        assert not any(word in text for word in ("aider", "openhands", "gpt-5", "run-", "verdict", "panel-a")), text
    assert json.loads(seen[0]).keys() == {"item", "task", "requirement", "evidence"}


def test_a_reviewer_may_only_review_and_calibration_is_read_from_what_is_stored(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient
    from test_serve import _sandboxed

    from arena_core import Arena
    from arena_core.service.app import create_app
    from arena_core.service.tokens import TokenStore
    from arena_core.store import SQLiteStore

    (tmp_path / "verdicts.jsonl").write_text("".join(
        json.dumps({"submission_id": f"run-{i}", "requirement": r["id"], "verdict": i % 2 == 0, "judge": "j"}) + "\n"
        for i in range(4) for r in REQUIREMENTS))  # fmt: skip
    arena = Arena({**_sandboxed(), "workspace_root": str(tmp_path), "judge_cache": "",
                   "judges": {"people": {"provider": "recorded", "path": str(tmp_path / "verdicts.jsonl")}}}, autoload=False)  # fmt: skip
    tokens = TokenStore(tmp_path / "a.db")
    client = TestClient(create_app(arena, SQLiteStore(tmp_path / "a.db"), tokens))
    operator = {"Authorization": f"Bearer {tokens.create('operator')[1]}"}
    reviewer = {"Authorization": f"Bearer {tokens.create('reviewer')[1]}"}
    submitter = {"Authorization": f"Bearer {tokens.create('submitter', ['aider'], models=['m'])[1]}"}
    client.put(
        "/tasks/t",
        json={"success_criteria": [{"type": "judge", "judge": "people", "requirements": REQUIREMENTS}]},
        headers=operator,
    )
    for i in range(4):
        assert client.post("/submissions", json={"id": f"run-{i}", "task_id": "t", "tool": "aider", "model": "m",
                                                 "total_tokens": 10 + i, "tool_calls": 2}, headers=operator).status_code == 201  # fmt: skip
    for path in ("/leaderboard", "/tasks/t/rankings", "/calibration"):
        assert client.get(path, headers=reviewer).status_code == 403
    assert client.post("/submissions", json={"id": "x", "task_id": "t"}, headers=reviewer).status_code == 403
    assert client.get("/review/next", headers=submitter).status_code == 403
    item = client.get("/review/next", headers=reviewer).json()
    assert item["requirement"]["criteria"].startswith("Requirement") and "evidence" in item
    page = (Path(__file__).parent.parent / "docs" / "serve.md").read_text()
    [shown] = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", page, flags=re.S) if '"item"' in b]
    assert shown.keys() == item.keys() and shown["requirement"].keys() == item["requirement"].keys()  # as documented
    assert len(shown["item"]) == len(item["item"]) and set(item["task"]) <= set(shown["task"])
    assert client.post(f"/review/{item['item']}", json={"label": "yes"}, headers=reviewer).status_code == 422
    assert client.post(f"/review/{item['item']}", json={"label": True}, headers=reviewer).status_code == 201
    assert client.post(f"/review/{item['item']}", json={"label": True}, headers=reviewer).status_code == 409
    other = client.get("/review/next", headers=reviewer).json()["item"]
    assert (
        client.post(f"/review/{other}", json={"label": False}, headers=operator).status_code == 403
    )  # not handed to it
    assert client.post("/review/0000", json={"label": False}, headers=reviewer).status_code == 404
    rows = {r["group"]: r for r in client.get("/calibration", headers=operator).json()}
    assert rows["aider"]["items"] == 12 and rows["aider"]["n"] == 1 and rows["(all)"]["n"] == 1


def test_labels_ingested_are_what_calibrate_reads_from_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DevAI's runs stored, scored by a recorded judge over its verdicts, its labels stored apart:
    ``arena calibrate --store`` reads both back and agrees with the files."""
    from click.testing import CliRunner

    from arena_core.cli import main

    devai = Path(__file__).parent / "data" / "devai" / "judgment"
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    made = runner.invoke(main, ["import", "devai", str(devai), "-o", "runs.jsonl", "--tasks-out", "tasks.json",
                                "--verdicts-out", "verdicts.jsonl", "--labels-out", "labels.jsonl"])  # fmt: skip
    assert made.exit_code == 0, made.output
    stored = runner.invoke(main, ["ingest", "--labels", "labels.jsonl", "--store", "a.db"])
    assert stored.exit_code == 0 and "Stored 24 labels" in stored.stdout, stored.output
    again = runner.invoke(main, ["ingest", "--labels", "labels.jsonl", "--store", "a.db"])
    assert again.exit_code != 0 and "labelled requirement '0' of run 'AgentOne/01_" in again.stderr
    assert len(LabelStore(tmp_path / "a.db").labels()) == 24  # nothing more stored
    Path("arena.toml").write_text('judge_cache = ""\n\n[judges.devai]\nprovider = "recorded"\npath = "verdicts.jsonl"\n'
                                  'judge = "agent-as-a-judge/gray_box"\n')  # fmt: skip
    ingested = runner.invoke(main, ["ingest", "runs.jsonl", "--tasks", "tasks.json", "--store", "a.db"])
    assert ingested.exit_code == 0, ingested.output
    from_files = runner.invoke(main, ["calibrate", "runs.jsonl", "--labels", "labels.jsonl", "--verdicts",
                                      "verdicts.jsonl", "--format", "json"])  # fmt: skip
    from_store = runner.invoke(main, ["calibrate", "--store", "a.db", "--format", "json"])
    assert from_store.exit_code == 0, from_store.output
    assert json.loads(from_store.stdout) == json.loads(from_files.stdout)
