"""Where an arena is stored, as the commands take it: a SQLite file, or a PostgreSQL URL."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from arena_core.store import SQLiteStore, Store
from arena_core.store.postgres import PostgresStore, is_postgres_url
from arena_core.store.trust import redact

__all__ = [
    "STORE_ENV",
    "PathOrTextParam",
    "StoreLocation",
    "no_password_in_arguments",
    "open_store",
    "stored_arena_option",
]

#: The environment variable every ``--store`` option also reads: a URL there, password included,
#: is not shown to other users in the process list, as a command-line argument is.
STORE_ENV = "ARENA_STORE"


def no_password_in_arguments(url: str, param: click.Parameter | None, ctx: click.Context | None) -> None:
    """Refuse a store URL with a password given as a command-line argument: every local user
    reads those (``ps``). From the environment (:data:`STORE_ENV`) it is kept private.

    :raises click.BadParameter: naming the safe places for the password.
    """
    if redact(url) == url or ctx is None or param is None or param.name is None:
        return
    if ctx.get_parameter_source(param.name) == click.core.ParameterSource.ENVIRONMENT:
        return
    raise click.BadParameter(
        f"{redact(url)}: a password on the command line is shown to every user of this machine (ps); give it in "
        f"PGPASSWORD, a password file (~/.pgpass) or a service file (PGSERVICE), or the whole URL in {STORE_ENV}",
        ctx,
        param,
    )


if TYPE_CHECKING:
    PathOrTextParam = click.ParamType[Path | str]
else:  # generic only from click 8.2
    PathOrTextParam = click.ParamType
"""The base of a parameter that is a local path or a URL kept as text (a path would fold its ``//``)."""


class StoreLocation(PathOrTextParam):
    """A SQLite file (a path) or a PostgreSQL database (a ``postgresql://`` URL, kept as text:
    a path would fold its ``//``)."""

    name = "PATH|postgresql://URL"

    def __init__(self, *, exists: bool = False) -> None:
        self.exists = exists

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path | str:
        text = str(value)
        if is_postgres_url(text):
            no_password_in_arguments(text, param, ctx)
            return text
        path = Path(text)
        if path.is_dir():
            self.fail(f"{text}: a directory, not an arena database", param, ctx)
        if self.exists and not path.exists():
            self.fail(f"{text}: no such arena database (create one with `arena ingest`)", param, ctx)
        return path


def open_store(location: Path | str, *, timeout: float = 30.0) -> Store:
    """The store at ``location`` (see :class:`StoreLocation`)."""
    if isinstance(location, str):
        return PostgresStore(location, timeout=timeout)
    return SQLiteStore(location, timeout=timeout)


#: ``--store``, required, naming an arena that exists (``history``, ``reprice``).
stored_arena_option = click.option(
    "--store",
    "store_path",
    type=StoreLocation(exists=True),
    envvar=STORE_ENV,
    required=True,
    help="The arena database (see `arena ingest`): a SQLite file or a postgresql:// URL.",
)
