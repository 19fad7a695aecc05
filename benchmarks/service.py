"""``arena serve`` over HTTP while its store grows: leaderboard latency and POST tail latency.

A real server (``arena serve``, uvicorn, one process) on 127.0.0.1, driven by HTTP clients in
this process. The store (a SQLite file, or the PostgreSQL database ``--store`` names) grows from
1,000 to 100,000 runs over 100 tasks (the growth itself is ingested straight into the store, as
``arena ingest`` would, beside the running server).
At each size: the median of ``GET /leaderboard`` over 40 requests; one ``POST /submissions``
to each task in turn (the first write of a task after the growth reads its figures and scores
from the database: their median and slowest are printed); then the latencies of 400 posts from 8
concurrent clients, and a count of what was stored.

Targets (docs/serve.md): the leaderboard's median at 100,000 runs within 2x its median at 1,000;
POST p99 under 250 ms with 8 concurrent clients; nothing lost.

    python benchmarks/service.py            # about two minutes on 2 cores
    python benchmarks/service.py --store postgresql://arena@/bench?host=/run/postgresql
    python benchmarks/service.py --sizes 1000,100000,1000000   # the last size takes an hour
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from arena_core import Arena
from arena_core.cli.stores import open_store
from arena_core.service.tokens import TokenStore

TASKS = [f"task-{k:03d}" for k in range(100)]
TOOLS = [f"tool-{k}" for k in range(8)]


def _run(i: int, rng: random.Random) -> dict:
    return {
        "id": f"run-{i}",
        "task_id": TASKS[i % len(TASKS)],
        "tool": TOOLS[i % len(TOOLS)],
        "model": f"model-{i % 5}",
        "total_tokens": rng.randint(1000, 50000),
        "tool_calls": rng.randint(1, 60),
        "execution_time": rng.uniform(5, 900),
        "estimated_cost": rng.uniform(0.01, 2),
        "success": rng.random() < 0.6,
    }


def _grow(location: Path | str, start: int, stop: int) -> None:
    rng = random.Random(start)
    arena, store = Arena({"workspace_owner": "id"}, autoload=False), open_store(location)
    for first in range(start, stop, 20_000):
        arena.process([_run(i, rng) for i in range(first, min(stop, first + 20_000))], store=store)


def _first_board(base: str, headers: dict[str, str]) -> float:
    """The first board after the growth, which rescores every task the growth moved."""
    start = time.perf_counter()
    assert httpx.get(f"{base}/leaderboard", headers=headers, timeout=None).status_code == 200
    return time.perf_counter() - start


def _leaderboard_median(base: str, headers: dict[str, str]) -> float:
    times = []
    with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
        for _ in range(40):
            start = time.perf_counter()
            assert client.get("/leaderboard").status_code == 200
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def _posts(base: str, headers: dict[str, str], first: int) -> tuple[list[float], list[int]]:
    latencies: list[float] = []
    statuses: list[int] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        rng = random.Random(first + k)
        with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
            for j in range(50):
                run = _run(first + k * 50 + j, rng)
                start = time.perf_counter()
                status = http.post("/submissions", json=run).status_code
                with lock:
                    latencies.append(time.perf_counter() - start)
                    statuses.append(status)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, statuses


def _first_posts(base: str, headers: dict[str, str], first: int) -> list[float]:
    """One post to each task, one at a time: the first write of a task after the growth (written
    by another process) reads its stored figures and scores from the database, the later ones
    find them kept (docs/store.md)."""
    rng = random.Random(first)
    latencies = []
    with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
        for i in range(first, first + len(TASKS)):
            start = time.perf_counter()
            assert http.post("/submissions", json=_run(i, rng)).status_code == 201
            latencies.append(time.perf_counter() - start)
    return latencies


def _stored(location: Path | str) -> int:
    with open_store(location).transaction(write=False) as tx:
        return sum(len(tx.scores(t).ids) for t in TASKS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", help="a postgresql:// URL of an empty database (default: a new SQLite file)")
    parser.add_argument("--sizes", default="1000,100000", help="stored runs to measure at, comma-separated")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    folder = Path(tempfile.mkdtemp(prefix="arena-serve-bench-"))
    database: Path | str = args.store or folder / "arena.db"
    _, token = TokenStore(database).create("operator")
    headers = {"Authorization": f"Bearer {token}"}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "arena_core", "serve", "--store", args.store or f"sqlite:///{database}", "--port", str(port),
         "--allow-local-runner", "--rate", "100000"],
        cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )  # fmt: skip
    try:
        for _ in range(200):
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(base_url=base, headers=headers) as client:
            for task in TASKS:
                client.put(f"/tasks/{task}", json={"category": "debugging"}).raise_for_status()
        figures = {}
        posted = 10_000_000
        for size in sizes:
            _grow(database, _stored_total(database), size)
            before = _stored(database)
            rescored = _first_board(base, headers)
            median = _leaderboard_median(base, headers)
            cold = _first_posts(base, headers, posted)
            latencies, statuses = _posts(base, headers, posted + len(TASKS))
            posted += 1000
            lost = 400 + len(TASKS) - (_stored(database) - before)
            p99 = statistics.quantiles(latencies, n=100)[98]
            figures[size] = (median, p99, statuses.count(201), lost)
            print(
                f"{size:>7,} runs: first GET /leaderboard after the growth {rescored:.1f} s, then median "
                f"{median * 1000:7.1f} ms; first POST of each task (reads its figures and scores) median "
                f"{statistics.median(cold) * 1000:.1f} ms, slowest {max(cold) * 1000:.1f} ms; then POST with 8 clients: "
                f"p50 {statistics.median(latencies) * 1000:6.1f} ms, p99 {p99 * 1000:6.1f} ms; "
                f"{statuses.count(201)} of 400 created, {lost} lost"
            )
        first, last = sizes[0], sizes[-1]
        ratio = figures[last][0] / figures[first][0]
        worst_p99 = max(f[1] for f in figures.values())
        p99_ratio = figures[last][1] / figures[first][1]
        print(
            f"leaderboard median {last:,} / {first:,} runs: {ratio:.2f}x (target < 2x: {'met' if ratio < 2 else 'NOT met'})"
        )
        print(
            f"POST p99 {last:,} / {first:,} runs: {p99_ratio:.2f}x (target < 2x: {'met' if p99_ratio < 2 else 'NOT met'})"
        )
        print(
            f"POST p99 with 8 clients: {worst_p99 * 1000:.1f} ms (target < 250 ms: "
            f"{'met' if worst_p99 < 0.25 else 'NOT met'})"
        )
        print(f"nothing lost: {'yes' if all(f[3] == 0 and f[2] == 400 for f in figures.values()) else 'NO'}")
    finally:
        server.terminate()
        server.wait(timeout=30)


def _stored_total(location: Path | str) -> int:
    with open_store(location).transaction(write=False) as tx:
        return sum(len(tx.scores(t).ids) for t in tx.task_ids())


if __name__ == "__main__":
    main()
