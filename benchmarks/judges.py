"""``arena judge`` against an OpenAI-compatible stub: does it sustain the configured concurrency?

A stub endpoint (FastAPI and uvicorn, in a process of its own on 127.0.0.1) answers every
chat completion after ``DELAY`` seconds, so its own limit with ``C`` requests in flight is
``C / DELAY`` requests a second. ``arena judge`` then asks it for 1,000 runs x 5 requirements
(5,000 requests, no cache) with ``--concurrency`` runs at once and the judge's ``concurrency``
set alike. Printed: requests a second, against the stub's limit at that concurrency, and the most
requests the stub saw in flight at once. Target: at least 0.8 of the limit.

    python benchmarks/judges.py                # about a minute on 2 cores
    python benchmarks/judges.py --runs 200     # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

DELAY = 0.05
REQUIREMENTS = 5


def serve_stub(port: int) -> None:
    """The stub endpoint: every answer SATISFIED after DELAY seconds; ``GET /stats`` says how many
    requests came and the most in flight at once."""
    import asyncio

    import uvicorn
    from fastapi import FastAPI

    app = FastAPI()
    seen = {"requests": 0, "in_flight": 0, "most": 0}

    @app.post("/v1/chat/completions")
    async def chat() -> dict:
        seen["requests"] += 1
        seen["in_flight"] += 1
        seen["most"] = max(seen["most"], seen["in_flight"])
        await asyncio.sleep(DELAY)
        seen["in_flight"] -= 1
        content = '{"verdict": "SATISFIED", "reason": "ok"}'
        return {"choices": [{"message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 900, "completion_tokens": 20}}  # fmt: skip

    @app.get("/stats")
    def stats() -> dict:
        return seen

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--stub", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stub:
        serve_stub(args.stub)
        return
    folder = Path(tempfile.mkdtemp(prefix="arena-judge-bench-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    stub = subprocess.Popen([sys.executable, __file__, "--stub", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        for _ in range(300):
            try:
                httpx.get(f"http://127.0.0.1:{port}/stats", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        requirements = [
            {"id": f"r{k}", "criteria": f"requirement {k}", "prerequisites": []} for k in range(REQUIREMENTS)
        ]
        task = {"id": "t", "success_criteria": [{"type": "judge", "judge": "stub", "evidence": ["final_answer"],
                                                  "requirements": requirements}]}  # fmt: skip
        (folder / "tasks.json").write_text(json.dumps([task]))
        runs = [{"id": f"run-{i}", "task_id": "t", "model": "m", "total_tokens": 100, "tool_calls": 1,
                 "meta": {"final_answer": f"answer {i}"}} for i in range(args.runs)]  # fmt: skip
        (folder / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
        (folder / "arena.toml").write_text(
            f'judge_cache = ""\nprice_source = ""\n[judges.stub]\nprovider = "openai"\nmodel = "stub"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\nconcurrency = {args.concurrency}\n'
        )
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "arena_core", "judge", "runs.jsonl", "--tasks", "tasks.json",
                               "-o", "verdicts.jsonl", "--concurrency", str(args.concurrency), "-q"], cwd=folder,
                              capture_output=True, text=True, env={**os.environ, "ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})  # fmt: skip
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        stats = httpx.get(f"http://127.0.0.1:{port}/stats").json()
    finally:
        stub.terminate()
        stub.wait(timeout=20)
    requests = args.runs * REQUIREMENTS
    assert stats["requests"] == requests, stats
    rate, limit = requests / elapsed, args.concurrency / DELAY
    print(f"arena judge: {args.runs:,} runs x {REQUIREMENTS} requirements = {requests:,} requests in {elapsed:.1f} s "
          f"(the command's start-up included)")  # fmt: skip
    print(f"   {rate:.0f} requests/s against the stub's limit of {limit:.0f}/s at {args.concurrency} in flight "
          f"({DELAY * 1000:.0f} ms a reply): {rate / limit:.2f} of it; at most {stats['most']} in flight "
          f"(target >= 0.8: {'met' if rate / limit >= 0.8 else 'NOT met'})")  # fmt: skip


if __name__ == "__main__":
    main()
