"""Shared fixtures: every test gets plugins from this checkout only, never from the machine."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena_core import Arena
from arena_core.registry.manager import DISABLE_AUTOLOAD_ENV, DISABLED_PLUGINS_ENV

REAL_DATA = Path(__file__).parent / "data" / "aider-leaderboards"

BASELINE = {
    "median_tokens": 5000, "min_tokens": 1000, "max_tokens": 10000,
    "median_tool_calls": 10, "min_tool_calls": 2, "max_tool_calls": 30,
    "median_execution_time": 300, "min_execution_time": 60, "max_execution_time": 1800,
    "median_cost": 0.05, "min_cost": 0.01, "max_cost": 0.20,
    "median_iterations": 3,
}


@pytest.fixture(autouse=True)
def _isolated_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entry-point plugins installed on the machine must not change test results."""
    monkeypatch.setenv(DISABLE_AUTOLOAD_ENV, "1")
    monkeypatch.delenv(DISABLED_PLUGINS_ENV, raising=False)


@pytest.fixture(autouse=True)
def _environment_restored() -> Iterator[None]:
    """What a library leaves in this process's environment stays in its test: a Dask nanny sets
    its allocator's variables (``MALLOC_TRIM_THRESHOLD_``...), which every command a later test
    starts would inherit, as it does when tests share a worker process under pytest-xdist."""
    import os

    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="session")
def arena() -> Arena:
    return Arena(autoload=False)


@pytest.fixture
def baseline() -> dict[str, float]:
    return dict(BASELINE)


@pytest.fixture(scope="session")
def real_submissions() -> list[dict]:
    with (REAL_DATA / "submissions.jsonl").open() as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="session")
def real_tasks() -> dict[str, dict]:
    return {t["id"]: t for t in json.loads((REAL_DATA / "tasks.json").read_text())}


def _postgres_binaries() -> Path | None:
    import glob

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server of this machine's installation (Debian's package), started for the
    session in a temporary directory, on a Unix socket only; yields a function giving the URL of
    a new, empty database. Skipped, saying why, where PostgreSQL or psycopg is not installed."""
    import os
    import pwd
    import shutil
    import subprocess
    import tempfile
    import uuid

    pytest.importorskip("psycopg", reason="the postgresql extra (psycopg) is not installed")
    binaries = _postgres_binaries()
    if binaries is None:
        pytest.skip("PostgreSQL's server is not installed (Debian: apt-get install postgresql)")
    # Not under pytest's own temporary directory, which only root may enter.
    root = Path(tempfile.mkdtemp(prefix="arena-postgres-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    run_as: list[str] = []
    if os.geteuid() == 0:  # the server refuses to run as root: as the package's own user
        user = pwd.getpwnam("postgres")
        os.chmod(root, 0o755)
        shutil.chown(root, user.pw_uid, user.pw_gid)
        shutil.chown(sockets, user.pw_uid, user.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*run_as, str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "arena"],
                   check=True, capture_output=True)  # fmt: skip
    options = f"-c listen_addresses='' -c unix_socket_directories={sockets} -c fsync=off"
    subprocess.run([*run_as, str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-w", "start",
                    "-l", str(root / "log")], check=True, capture_output=True)  # fmt: skip
    import psycopg

    def new_database() -> str:
        name = f"arena_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(f"host={sockets} user=arena dbname=postgres", autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return f"postgresql://arena@/{name}?host={sockets}"

    try:
        yield new_database
    finally:
        subprocess.run([*run_as, str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


LIVECODEBENCH = Path(__file__).parent / "data" / "livecodebench" / "performances_execution.json"


def day(milliseconds: int) -> str:
    return datetime.datetime.fromtimestamp(milliseconds / 1000, datetime.UTC).date().isoformat()


@pytest.fixture
def livecodebench(tmp_path: Path) -> Path:
    """LiveCodeBench's public per-problem results (its site's data: 7 models, 479 problems with
    their contest dates) as runs, tasks and a CSV of the models' release dates."""
    data = json.loads(LIVECODEBENCH.read_text())
    samples = {p["sample_id"]: p["date"] for p in data["performances"]}
    tasks = [{"id": s, "created_at": day(d), "success_criteria": [{"type": "tests_pass"}]} for s, d in samples.items()]
    runs = [{"id": f"{p['model']}/{p['sample_id']}", "task_id": p["sample_id"], "tool": "livecodebench",
             "model": p["model"], "tests_passed": round(p["Pass@1"] / 10), "tests_total": 10}
            for p in data["performances"]]  # fmt: skip
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    rows = [f"{m['model_repr']},{day(m['release_date'])}" for m in data["models"]]
    (tmp_path / "models.csv").write_text("name,release_date\n" + "\n".join(rows) + "\n")
    return tmp_path
