"""docs/serve.md's quickstart, run as written from a plain install: its first bash block, line by
line (the install in the checkout, the rest in an empty directory, ``arena`` being the fresh
virtual environment's), the server started by its last line; then what a new operator does
first: define a task, post a run, read the leaderboard and /docs back, stop the server.

Usage (by .ci/run): VENV/bin/python .ci/quickstart.py VENV SCRATCH
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
venv, scratch = Path(sys.argv[1]), Path(sys.argv[2])
block = re.findall(r"```bash\n(.*?)```", (ROOT / "docs" / "serve.md").read_text(), flags=re.S)[0]
lines = [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
install, *setup, serve = lines
assert install.startswith("pip install") and serve.startswith("arena serve --store"), lines


def run(line: str, cwd: Path) -> str:
    done = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        sys.exit(f"ERROR: docs/serve.md's quickstart: {line!r} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


run(install + " --quiet --disable-pip-version-check", ROOT)
work = scratch / "quickstart"
work.mkdir()
token = ""
for line in setup:
    printed = run(line, work)
    if "token create" in line:
        token = printed.strip().splitlines()[-1]
assert token.startswith("arena_"), token
server = subprocess.Popen(["bash", "-c", f"exec {serve}"], cwd=work, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)  # fmt: skip
try:
    for _ in range(200):
        try:
            if httpx.get("http://127.0.0.1:8000/health").status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    else:
        sys.exit("ERROR: docs/serve.md's quickstart: the server did not answer /health within 20 s")
    headers = {"Authorization": f"Bearer {token}"}
    base = "http://127.0.0.1:8000"
    task = {"success_criteria": [{"type": "command_succeeds", "command": ["true"]}]}
    checks = [
        httpx.put(f"{base}/tasks/t1", json=task, headers=headers).status_code == 200,
        httpx.post(f"{base}/submissions", json={"id": "r1", "task_id": "t1", "tool": "aider", "total_tokens": 900,
                                                 "tool_calls": 3}, headers=headers).status_code == 201,  # fmt: skip
        httpx.get(f"{base}/leaderboard", headers=headers).json()[0]["group"] == "aider",
        "/static-offline-docs/" in httpx.get(f"{base}/docs").text,
    ]
    if not all(checks):
        sys.exit(f"ERROR: docs/serve.md's quickstart: the first requests did not answer as expected: {checks}")
finally:
    server.send_signal(signal.SIGTERM)
    _, stderr = server.communicate(timeout=30)
if server.returncode != 0 or "stopped cleanly (SIGTERM)" not in stderr:
    sys.exit(f"ERROR: docs/serve.md's quickstart: the server did not stop cleanly ({server.returncode}):\n{stderr}")
print("docs/serve.md's quickstart, from a plain install in a fresh venv: serves, scores a run, stops cleanly")
