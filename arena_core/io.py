"""Reading records from files, with errors that point at ``FILE:LINE``.

Submissions come as JSON Lines (one object per line) or a JSON array; tasks as a JSON array
or object keyed by id. Each record is structured as it is read, so a bad record is reported
with its file and line, and nothing downstream ever sees it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena_core.errors import ArenaError, ValidationError
from arena_core.models import Submission, Task
from arena_core.serde import structure

__all__ = ["InputError", "read_submissions", "read_tasks"]


class InputError(ArenaError):
    """A file could not be read or holds an invalid record; the message starts ``FILE:LINE:``."""


def _records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, decoded record) for JSON Lines or a JSON array file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    stripped = text.lstrip()
    if not stripped:
        raise InputError(f"{path}: the file is empty")
    if stripped.startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
        for record in records:
            yield 0, record
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: invalid JSON: {exc.msg} (column {exc.colno})") from None


def _where(path: Path, line: int, index: int) -> str:
    return f"{path}:{line}" if line else f"{path}: record {index + 1}"


def read_submissions(path: str | Path) -> list[Submission]:
    """Every submission of a JSONL or JSON-array file. :raises InputError: naming ``FILE:LINE``."""
    path = Path(path)
    out = []
    for index, (line, record) in enumerate(_records(path)):
        try:
            out.append(structure(record, Submission))
        except ValidationError as exc:
            raise InputError(f"{_where(path, line, index)}: {exc}") from None
    return out


def read_tasks(path: str | Path) -> dict[str, Task]:
    """Tasks by id, from a JSON array or an object keyed by id. :raises InputError: naming the file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    if isinstance(data, dict):
        data = [{"id": key, **value} if isinstance(value, dict) else value for key, value in data.items()]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of tasks or an object keyed by task id")
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
