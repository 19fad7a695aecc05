"""Stores someone else made, and secrets in connection strings.

A store holds the service's token hashes and decides the board: a file or a table another user
planted (their operator token inside, a trigger that undoes ``token revoke``) must be refused,
and a password in a store or object-storage URL must show nowhere: not in errors, not in what
a command prints, not in the process list. Each attack is first shown to work with the check
taken away, then shown refused.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from arena_core.model.errors import ArenaError
from arena_core.store import SQLiteStore
from arena_core.store import trust as trust_module
from arena_core.store.trust import redact

pytest.importorskip("fastapi", reason="the service extra is not installed")
from arena_core.store import side as side_module  # noqa: E402
from arena_core.service.tokens import TokenStore  # noqa: E402

NOBODY = 65534


def _planted(path: Path) -> str:
    """A store another user made, holding an operator token of theirs: the token."""
    planted = TokenStore(path)
    _, token = planted.create("operator", note="mallory")
    return token


def _without_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("trusted_sqlite_file", "check_sqlite_schema"):
        monkeypatch.setattr(side_module, name, lambda *a, **k: None)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_store_file_another_user_owns_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "arena.db"
    token = _planted(path)
    os.chown(path, NOBODY, NOBODY)
    with monkeypatch.context() as unguarded:
        _without_checks(unguarded)
        assert TokenStore(path).verify(token).role == "operator"  # type: ignore[union-attr]  # the attack: their token works
    for opening in (TokenStore, SQLiteStore):
        with pytest.raises(ArenaError, match=rf"owned by user {NOBODY}, not by the user opening it"):
            opening(path)


def test_a_store_file_others_may_write_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "arena.db"
    token = _planted(path)
    path.chmod(0o666)
    with monkeypatch.context() as unguarded:
        _without_checks(unguarded)
        assert TokenStore(path).verify(token) is not None
    for opening in (TokenStore, SQLiteStore):
        with pytest.raises(ArenaError, match="writable by other users"):
            opening(path)


def test_a_trigger_that_undoes_a_revocation_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "arena.db"
    tokens = TokenStore(path)
    token_id, token = tokens.create("operator")
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TRIGGER undo AFTER UPDATE OF revoked ON service_tokens "
                           "BEGIN UPDATE service_tokens SET revoked = NULL WHERE id = new.id; END")
    assert tokens.revoke(token_id)  # "revoked", says the command
    assert tokens.verify(token) is not None  # and yet the token still works: the attack
    for opening in (TokenStore, SQLiteStore):
        with pytest.raises(ArenaError, match="holds trigger 'undo', which arena-core never makes"):
            opening(path)


def test_a_view_in_the_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    SQLiteStore(path)
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE VIEW peek AS SELECT * FROM tasks")
    with pytest.raises(ArenaError, match="holds view 'peek'"):
        SQLiteStore(path)


def test_a_link_in_place_of_the_store_file_is_refused(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "real.db")
    os.symlink(tmp_path / "real.db", tmp_path / "arena.db")
    with pytest.raises(ArenaError, match="not a regular file"):
        SQLiteStore(tmp_path / "arena.db")


def test_a_store_in_a_folder_anyone_may_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # another user could swap the database for theirs
    with pytest.raises(ArenaError, match="folder is writable by every user"):
        SQLiteStore(shared / "arena.db")
    shared.chmod(0o1777)  # with the sticky bit (as /tmp), only the owner may rename or remove it
    SQLiteStore(shared / "arena.db")


def test_stores_are_made_readable_by_their_owner_only(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "arena.db")
    TokenStore(tmp_path / "arena.db").create("operator")
    with store.transaction() as tx:
        tx.task_ids()
    for name in ("arena.db", "arena.db-wal", "arena.db-shm"):
        if (tmp_path / name).exists():
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE((tmp_path / "arena.db").stat().st_mode) == 0o600
    assert stat.S_IMODE(TokenStore(tmp_path / "tokens.db").where.stat().st_mode) == 0o600  # type: ignore[union-attr]


def test_a_postgres_table_another_role_made_first_is_refused(postgres_server, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    from arena_core.store.postgres import PostgresStore

    url = postgres_server()
    admin, _, query = url.partition("?")
    mallory = url.replace("postgresql://arena@", "postgresql://mallory@")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE ROLE mallory LOGIN")
        connection.execute("GRANT CREATE ON SCHEMA public TO mallory")
    with psycopg.connect(mallory, autocommit=True) as connection:  # mallory gets there first
        connection.execute("CREATE TABLE service_tokens (id TEXT PRIMARY KEY, digest TEXT NOT NULL, role TEXT NOT NULL, "
                           "tools TEXT NOT NULL, note TEXT NOT NULL, created TEXT NOT NULL, revoked TEXT, "
                           "models TEXT NOT NULL DEFAULT '[]')")
        connection.execute("GRANT ALL ON service_tokens TO PUBLIC")
        connection.execute("CREATE TABLE evaluations (seq BIGSERIAL, submission_id TEXT PRIMARY KEY, "
                           "task_id TEXT NOT NULL, data TEXT NOT NULL)")
        connection.execute("GRANT ALL ON evaluations TO PUBLIC")
    with monkeypatch.context() as unguarded:  # without the check, CREATE TABLE IF NOT EXISTS adopts it
        unguarded.setattr(side_module, "check_postgres_tables", lambda *a, **k: None)
        TokenStore(url).create("operator", note="the operator's")
    with psycopg.connect(mallory) as connection:  # and mallory reads the operator's token hashes
        assert connection.execute("SELECT note FROM service_tokens").fetchall() == [("the operator's",)]
    with pytest.raises(ArenaError, match=r"table service_tokens \(owned by mallory\) belongs to another role"):
        TokenStore(url)
    with pytest.raises(ArenaError, match=r"table evaluations \(owned by mallory\) belongs to another role"):
        PostgresStore(url)


# --- Secrets in connection strings -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("connection to postgresql://bob:s3cr3t-pw@db.internal:5432/arena failed", ""),
        ("error: postgresql://bob@db/arena?sslmode=require&password=s3cr3t-pw", ""),
        ("failed for postgresql://bob:p%40ss-s3cr3t-pw@db/x", ""),
        ("s3://AKIAKEY:s3cr3t-pw@bucket/runs.parquet: not found", ""),
        ("https://token:s3cr3t-pw@example.org/x.parquet: 403", ""),
        ("password authentication failed: got s3cr3t-pw", "postgresql://bob:s3cr3t-pw@db/arena"),
        ("host=db password=s3cr3t-pw dbname=arena", ""),
    ],
)
def test_redaction_leaves_no_password_whatever_its_spelling(text: str, url: str) -> None:
    assert "s3cr3t-pw" in text  # the secret is there to leak
    shown = redact(text, *([url] if url else []))
    assert "s3cr3t-pw" not in shown and "***" in shown


def test_store_errors_and_messages_show_no_password(tmp_path: Path) -> None:
    from arena_core.store.postgres import PostgresStore

    for url in ("postgresql://bob:hunter2-s3cr3t@/nodb?host=/nonexistent&connect_timeout=1",
                "postgresql://bob@/nodb?host=/nonexistent&password=hunter2-s3cr3t&connect_timeout=1"):
        with pytest.raises(ArenaError) as refused:
            PostgresStore(url, timeout=1)
        assert "hunter2-s3cr3t" not in str(refused.value) and "nonexistent" in str(refused.value)
        with pytest.raises(ArenaError) as refused:
            TokenStore(url)
        assert "hunter2-s3cr3t" not in str(refused.value)
    with pytest.raises(ArenaError, match="unencoded '@'") as refused:
        PostgresStore("postgresql://bob:p@ss@word-s3cr3t@127.0.0.1:1/db")
    assert "word-s3cr3t" not in str(refused.value)


def _arena(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena_core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def test_commands_refuse_a_password_on_their_command_line_and_take_it_from_the_environment(tmp_path: Path) -> None:
    url = "postgresql://bob:hunter2-s3cr3t@/nodb?host=/nonexistent&connect_timeout=1"
    for args in (["serve", "token", "create", "--role", "operator", "--store", url],
                 ["history", "--store", url], ["leaderboard", "--store", url]):
        done = _arena(*args, cwd=tmp_path)
        assert done.returncode == 2 and "hunter2-s3cr3t" not in done.stdout + done.stderr
        assert "shown to every user of this machine (ps)" in done.stderr, done.stderr
    done = _arena("serve", "token", "create", "--role", "operator", cwd=tmp_path, env={"ARENA_STORE": url})
    assert done.returncode == 2 and "hunter2-s3cr3t" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "nonexistent" in done.stderr  # the database was tried, said plainly


def test_object_storage_credentials_are_not_echoed(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text('[{"id": "t"}]')
    done = _arena("leaderboard", "s3://AKIAKEY:hunter2-s3cr3t@no-such-bucket.invalid/runs.parquet", "--tasks",
                  "tasks.json", cwd=tmp_path, env={"AWS_EC2_METADATA_DISABLED": "true"})
    assert done.returncode == 2 and "no-such-bucket" in done.stderr  # the URL was read and refused
    assert "hunter2-s3cr3t" not in done.stdout + done.stderr
