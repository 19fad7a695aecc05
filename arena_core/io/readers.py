"""Reading records from files and writing results, with errors that point at ``FILE:LINE``.

Submissions come as JSON Lines, a JSON array or CSV; tasks as JSON (an array, or an object
keyed by id) or TOML (``[[tasks]]`` or ``[tasks.ID]`` tables). Records are structured as they
are read, so a bad one is reported with its file and line and nothing downstream sees it.
Output files are written to a temporary file beside the target and renamed into place, so an
error never leaves a half-written file.
"""

from __future__ import annotations

import csv
import json
import os
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import attrs

from arena_core.model.errors import ArenaError, ValidationError, closest
from arena_core.model.records import Submission, Task
from arena_core.model.serde import structure

__all__ = ["InputError", "atomic_output", "iter_submissions", "read_submissions", "read_tasks"]

#: Turns one record into a :class:`Submission` (``Arena.structure_submission`` applies the
#: configuration's strictness).
Structurer = Callable[[Any], Submission]


class InputError(ArenaError):
    """A file could not be read or holds an invalid record; the message starts ``FILE:LINE:``."""


def _open(path: Path) -> IO[str]:
    try:
        return path.open(encoding="utf-8", newline="")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _json_records(path: Path) -> Iterator[tuple[str, Any]]:
    """(location, decoded record) from JSON Lines, or from a JSON array."""
    with _open(path) as fh:
        first = fh.read(1)
        while first.isspace():
            first = fh.read(1)
        if not first:
            raise InputError(f"{path}: the file is empty")
        if first == "[":
            try:
                records = json.loads(first + fh.read())
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
            for index, record in enumerate(records):
                yield f"{path}: record {index + 1}", record
            return
        fh.seek(0)
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield f"{path}:{number}", json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: invalid JSON: {exc.msg} (column {exc.colno})") from None


_LIST_FIELDS = {"files_created"}
_BOOL_FIELDS = {"success"}
_TEXT_FIELDS = {"id", "task_id", "tool", "model"}


def _csv_value(column: str, text: str) -> Any:
    if column in _TEXT_FIELDS or column.startswith("meta."):
        return text
    if column in _LIST_FIELDS:
        return [p for p in text.split(";") if p]
    if column in _BOOL_FIELDS:
        lowered = text.strip().lower()
        return {"true": True, "false": False, "1": True, "0": False}.get(lowered, text)
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text  # reported by the model as "expected a number"


def _csv_records(path: Path) -> Iterator[tuple[str, Any]]:
    """CSV: a header of submission fields (``meta.KEY`` columns go under ``meta``);
    an empty cell is a missing value; lists are ``;``-separated."""
    fields = [a.name for a in attrs.fields(Submission) if a.name != "meta"]
    with _open(path) as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise InputError(f"{path}: the file is empty")
        for column in header:
            if column not in fields and not column.startswith("meta."):
                raise InputError(
                    f"{path}:1: unknown column {column!r}{closest(column, fields)} (columns are submission fields or meta.KEY)"
                )
        for row in reader:
            number = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise InputError(f"{path}:{number}: expected {len(header)} cells as in the header, got {len(row)}")
            record: dict[str, Any] = {}
            for column, cell in zip(header, row, strict=True):
                if cell == "":
                    continue
                if column.startswith("meta."):
                    record.setdefault("meta", {})[column[5:]] = cell
                else:
                    record[column] = _csv_value(column, cell)
            yield f"{path}:{number}", record


def _submission(record: Any) -> Submission:
    return structure(record, Submission)


def iter_submissions(path: str | Path, structurer: Structurer = _submission) -> Iterator[Submission]:
    """Submissions one at a time (JSON Lines, JSON array or ``.csv``).

    :raises InputError: naming ``FILE:LINE`` and the field.
    """
    path = Path(path)
    records = _csv_records(path) if path.suffix.lower() == ".csv" else _json_records(path)
    for where, record in records:
        try:
            yield structurer(record)
        except ValidationError as exc:
            raise InputError(f"{where}: {exc}") from None


def read_submissions(path: str | Path, structurer: Structurer = _submission) -> list[Submission]:
    """Every submission of a file; see :func:`iter_submissions`."""
    subs = list(iter_submissions(path, structurer))
    if not subs:
        raise InputError(f"{path}: no submissions in the file")
    return subs


def read_tasks(path: str | Path) -> dict[str, Task]:
    """Tasks by id, from JSON or TOML. :raises InputError: naming the file and the task."""
    path = Path(path)
    with _open(path) as fh:
        text = fh.read()
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    if path.suffix.lower() == ".toml":
        try:
            data: Any = tomllib.loads(text).get("tasks")
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{path}: invalid TOML: {exc}") from None
        if data is None:
            raise InputError(f"{path}: expected [[tasks]] or [tasks.ID] tables")
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    if isinstance(data, dict):
        data = [{"id": key, **value} if isinstance(value, dict) else value for key, value in data.items()]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of tasks or tables keyed by task id")
    tasks: dict[str, Task] = {}
    for index, record in enumerate(data):
        try:
            task = structure(record, Task)
        except ValidationError as exc:
            raise InputError(f"{path}: task {index + 1}: {exc}") from None
        if task.id in tasks:
            raise InputError(f"{path}: task {index + 1}: task id {task.id!r} appears twice")
        tasks[task.id] = task
    return tasks


@contextmanager
def atomic_output(path: str | Path | None) -> Iterator[IO[str]]:
    """A text stream for ``path`` that appears only when the block succeeds (stdout for ``None``)."""
    if path is None:
        yield sys.stdout
        return
    target = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            yield fh
        mask = os.umask(0)  # read the umask (there is no other way) and put it back
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)  # as an ordinary new file, not mkstemp's owner-only 0600
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
