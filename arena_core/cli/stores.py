"""Where an arena is stored, as the commands take it: a SQLite file, or a PostgreSQL URL."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from arena_core.store import SQLiteStore, Store
from arena_core.store.postgres import PostgresStore, is_postgres_url

__all__ = ["PathOrTextParam", "StoreLocation", "open_store", "stored_arena_option"]

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
    required=True,
    help="The arena database (see `arena ingest`): a SQLite file or a postgresql:// URL.",
)
