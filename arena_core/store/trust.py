"""Whether a store someone else could have made may be trusted, and secrets kept out of messages.

A store holds the service's token hashes and decides the board, so a file or a table another
user planted (with an operator token of theirs, or a trigger that undoes ``token revoke``)
must never be adopted. A SQLite store is created readable by its owner only, and an existing
one is used only when it is a regular file owned by the user opening it and writable by nobody
else, in a directory no one else can swap it in, with no trigger or view the schema does not
define. A PostgreSQL store's tables must belong to the role connecting, and carry no trigger.

Connection strings carry passwords (``postgresql://user:secret@host/db``,
``s3://KEY:SECRET@bucket``): :func:`redact` takes them out of any text before it is shown.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from arena_core.model.errors import ArenaError

__all__ = [
    "check_sqlite_schema", "check_postgres_tables", "create_private", "redact", "trusted_sqlite_file", "unambiguous_url",
]  # fmt: skip

#: ``password=...`` in a query string or a libpq keyword string.
_KEYWORD = re.compile(r"(?i)(password|passwd|pwd|secret|token|sslpassword)=('[^']*'|[^&\s'\"]*)")


def redact(text: str, *urls: str) -> str:
    """``text`` without the passwords of ``urls``, nor any other URL's password or
    ``password=`` value it holds: each becomes ``***``, whatever characters it has."""
    for url in urls:
        for secret in _secrets_of(url):
            text = text.replace(secret, "***")
    text = _KEYWORD.sub(lambda m: f"{m[1]}=***", text)
    return _redact_userinfo(text)


def unambiguous_url(url: str) -> None:
    """Refuse a connection URL whose password holds an unencoded ``@``: libpq then reads part of
    the password as the host, and echoes it in its errors.

    :raises ArenaError: saying to percent-encode it.
    """
    if "://" in url and url.split("://", 1)[1].split("?", 1)[0].count("@") > 1:
        raise ArenaError(
            f"{redact(url)}: the password holds an unencoded '@', which libpq would read as part of the host "
            "(and show in its errors): write it as %40, or give the password in PGPASSWORD or ~/.pgpass"
        )


def _redact_userinfo(text: str) -> str:
    out, start = [], 0
    for match in re.finditer(r"[A-Za-z][A-Za-z0-9+.-]*://", text):
        if match.start() < start:
            continue
        end = _token_end(text, match.end())
        out.append(text[start : match.end()])
        out.append(_strip_password(text[match.end() : end]))
        start = end
    out.append(text[start:])
    return "".join(out)


def _token_end(text: str, at: int) -> int:
    """Where the URL starting at ``at`` (after its scheme) ends: white space or a quote."""
    found = re.search(r"[\s'\"<>]", text[at:])
    return at + found.start() if found else len(text)


def _strip_password(rest: str) -> str:
    """``user:secret@host/...`` as ``user:***@host/...``; the last ``@`` before the path ends the secret."""
    at = rest.rfind("@")
    if at < 0:
        return rest
    userinfo = rest[:at]
    if ":" not in userinfo:
        return rest
    user = userinfo.split(":", 1)[0]
    return f"{user}:***{rest[at:]}"


def _secrets_of(url: str) -> list[str]:
    """The password a connection string holds, as written and decoded (both may be echoed)."""
    found: list[str] = []
    if "://" in url:
        rest = url.split("://", 1)[1]
        at = rest.rfind("@")
        if at > 0 and ":" in rest[:at]:
            found.append(rest[:at].split(":", 1)[1])
    found += [m[2].strip("'") for m in _KEYWORD.finditer(url)]
    return [s for secret in found if secret for s in dict.fromkeys((secret, unquote(secret))) if len(s) >= 3]


def create_private(path: Path) -> None:
    """Create ``path`` empty, readable and writable by its owner only (SQLite makes its journal
    files with the database's mode), unless it exists."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600))


def trusted_sqlite_file(path: Path) -> None:
    """Refuse a SQLite store file (or its journal) that someone else made or can change.

    :raises ArenaError: naming the file and what is wrong with it.
    """
    if os.name != "posix":
        return
    me = os.geteuid()
    directory = path.parent if str(path.parent) else Path(".")
    try:
        folder = os.stat(directory)
    except OSError as exc:
        raise ArenaError(f"{path}: its folder cannot be read ({exc.strerror})") from None
    if folder.st_mode & stat.S_IWOTH and not folder.st_mode & stat.S_ISVTX:
        raise ArenaError(
            f"{path}: its folder is writable by every user (without the sticky bit), so another user could swap the "
            "database; keep the store in a folder of yours"
        )
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            info = os.lstat(name)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode):
            raise ArenaError(f"{name}: not a regular file (a link or a device); refusing to use it as an arena store")
        if info.st_uid != me:
            raise ArenaError(
                f"{name}: owned by user {info.st_uid}, not by the user opening it ({me}); a store another user made "
                "could hold their tokens or triggers: refusing it"
            )
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ArenaError(
                f"{name}: writable by other users (mode {stat.S_IMODE(info.st_mode):o}); refusing it: "
                f"chmod 600 {name} if you made it"
            )


def check_sqlite_schema(connection: sqlite3.Connection, path: Path) -> None:
    """Refuse a SQLite store holding a trigger or a view: arena-core makes none, and one can
    change what a statement does (undo a revocation, copy tokens elsewhere)."""
    rows = connection.execute("SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view')").fetchall()
    if rows:
        found = ", ".join(f"{kind} {name!r}" for kind, name in rows[:5])
        raise ArenaError(f"{path}: holds {found}, which arena-core never makes; refusing a store someone altered")


def check_postgres_tables(cursor: Any, tables: Iterable[str], where: str) -> None:
    """Refuse PostgreSQL tables of the store that another role owns, or that carry a trigger
    (``CREATE TABLE IF NOT EXISTS`` would otherwise adopt a table another role made first)."""
    names = list(tables)
    cursor.execute(
        "SELECT c.relname, pg_get_userbyid(c.relowner) FROM pg_class c "
        "WHERE c.relnamespace = to_regnamespace(current_schema())::oid AND c.relname = ANY(%s) "
        "AND pg_get_userbyid(c.relowner) <> current_user",
        (names,),
    )
    foreign = cursor.fetchall()
    if foreign:
        shown = ", ".join(f"{name} (owned by {owner})" for name, owner in foreign)
        raise ArenaError(
            f"{where}: table {shown} belongs to another role than the one connecting; refusing a store another "
            "role made (its owner could read or change what it holds)"
        )
    cursor.execute(
        "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "WHERE NOT t.tgisinternal AND c.relnamespace = to_regnamespace(current_schema())::oid AND c.relname = ANY(%s)",
        (names,),
    )
    triggers = cursor.fetchall()
    if triggers:
        shown = ", ".join(f"trigger {name!r} on {table}" for name, table in triggers)
        raise ArenaError(f"{where}: holds {shown}, which arena-core never makes; refusing a store someone altered")
