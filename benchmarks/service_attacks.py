"""``arena serve`` under two denials of service, each against the same measurement without it.

1. **Slow checks.** An attacker's token keeps posting runs whose workspace check sleeps until the
   command's timeout (2 s here), from 4 clients at once, while 8 honest clients post runs
   without workspaces. The honest posts' p50 and p99, against the same honest load with no
   attacker, measured in the same run. Target: p99 under 250 ms (the service target of
   docs/serve.md) however long the attacker's checks take.
2. **Idle connections.** 2,000 sockets opened and left silent (the server started with the
   common 1,024-descriptor soft limit), then ``GET /health`` 50 times: its median and worst,
   against the same with no idle socket. Target: under 50 ms.

A real server (``arena serve``, uvicorn, one process) on 127.0.0.1; every client in this process.

    python benchmarks/service_attacks.py       # about a minute on 2 cores
"""

from __future__ import annotations

import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from arena_core.service.tokens import TokenStore

SLEEP = 2.0


def _serve(folder: Path, database: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)

    def common_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))

    (folder / "arena.toml").write_text(f"command_timeout = {SLEEP + 1}\ncheck_concurrency = 4\n")
    server = subprocess.Popen(
        [sys.executable, "-m", "arena_core", "serve", "--store", f"sqlite:///{database}", "--port", str(port),
         "--allow-local-runner", "--rate", "100000", "--checks-per-token", "4", *extra],
        cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=common_limit,
        env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    return server, base


def _honest(base: str, headers: dict[str, str], first: int) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
            for j in range(25):
                i = first + k * 25 + j
                run = {"id": f"h{i}", "task_id": f"quick-{i % 10}", "tool": "honest", "model": "m",
                       "total_tokens": 1000 + i % 997, "tool_calls": 1 + i % 13}  # fmt: skip
                start = time.perf_counter()
                assert http.post("/submissions", json=run).status_code == 201
                with lock:
                    latencies.append(time.perf_counter() - start)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies


def _slow_checks(folder: Path, base: str, headers: dict[str, str], stop: threading.Event) -> list[threading.Thread]:
    def attacker(k: int) -> None:
        with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
            n = 0
            while not stop.is_set():
                name = f"a{k}-{n}"
                (folder / "workspaces" / name).mkdir()
                run = {"id": name, "task_id": "slow", "tool": "slow", "model": "m", "total_tokens": 1, "tool_calls": 1,
                       "workspace": name}  # fmt: skip
                http.post("/submissions", json=run)
                n += 1

    threads = [threading.Thread(target=attacker, args=(k,), daemon=True) for k in range(4)]
    for t in threads:
        t.start()
    return threads


def _percentiles(latencies: list[float]) -> tuple[float, float]:
    return statistics.median(latencies) * 1000, statistics.quantiles(latencies, n=100)[98] * 1000


def slow_checks() -> None:
    folder = Path(tempfile.mkdtemp(prefix="arena-attack-bench-"))
    (folder / "workspaces").mkdir()
    database = folder / "arena.db"
    tokens = TokenStore(database)
    operator = {"Authorization": f"Bearer {tokens.create('operator')[1]}"}
    honest = {"Authorization": f"Bearer {tokens.create('submitter', ['honest'], models=['m'])[1]}"}
    slow = {"Authorization": f"Bearer {tokens.create('submitter', ['slow'], models=['m'])[1]}"}
    server, base = _serve(folder, database)
    (folder / "arena.toml").unlink()
    try:
        with httpx.Client(base_url=base, headers=operator) as client:
            for k in range(10):
                client.put(f"/tasks/quick-{k}", json={"category": "debugging"}).raise_for_status()
            sleeper = [sys.executable, "-c", f"import time; time.sleep({SLEEP})"]
            client.put("/tasks/slow", json={"success_criteria": [{"type": "command_succeeds", "command": sleeper}]})
        alone = _honest(base, honest, 0)
        stop = threading.Event()
        attackers = _slow_checks(folder, base, slow, stop)
        time.sleep(0.5)
        flooded = _honest(base, honest, 10_000)
        stop.set()
        for t in attackers:
            t.join(timeout=SLEEP * 3)
        (p50a, p99a), (p50f, p99f) = _percentiles(alone), _percentiles(flooded)
        print("1. honest posts (8 clients, 200 runs) beside an attacker's slow checks (4 clients, each check 2 s)")
        print(f"   no attacker:     p50 {p50a:6.1f} ms, p99 {p99a:6.1f} ms (the reference)")
        print(f"   under the flood: p50 {p50f:6.1f} ms, p99 {p99f:6.1f} ms = {p99f / p99a:.2f}x the reference's p99")
        print(f"   p99 under the flood: {p99f:.1f} ms (target < 250 ms: {'met' if p99f < 250 else 'NOT met'})")
    finally:
        server.terminate()
        server.wait(timeout=30)


def _health(base: str) -> tuple[float, float]:
    times = []
    with httpx.Client(base_url=base, timeout=10) as client:
        for _ in range(50):
            start = time.perf_counter()
            assert client.get("/health").status_code == 200
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, max(times) * 1000


def idle_connections(count: int = 2000) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < count + 256:
        print(f"2. skipped: the hard limit of open files ({hard}) is below {count + 256}")
        return
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, count + 256), hard))
    folder = Path(tempfile.mkdtemp(prefix="arena-attack-bench-"))
    server, base = _serve(folder, folder / "arena.db", "--header-timeout", "30")
    idle: list[socket.socket] = []
    try:
        quiet = _health(base)
        port = int(base.rsplit(":", 1)[1])
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(count)]
        time.sleep(0.5)
        loaded = _health(base)
        print(f"2. GET /health with {count:,} idle connections open (server started at a 1,024-descriptor soft limit)")
        print(f"   none open:  median {quiet[0]:5.2f} ms, worst {quiet[1]:5.2f} ms (the reference)")
        print(f"   {count:,} open: median {loaded[0]:5.2f} ms, worst {loaded[1]:5.2f} ms = {loaded[0] / quiet[0]:.2f}x "
              "the reference's median")  # fmt: skip
        print(
            f"   worst under 2,000 idle: {loaded[1]:.2f} ms (target < 50 ms: {'met' if loaded[1] < 50 else 'NOT met'})"
        )
    finally:
        for sock in idle:
            sock.close()
        server.terminate()
        server.wait(timeout=30)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


if __name__ == "__main__":
    slow_checks()
    idle_connections()
