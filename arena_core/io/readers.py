"""Reading records from files and writing results, with errors that point at ``FILE:LINE``.

Submissions come as JSON Lines, a JSON array or CSV; tasks as JSON (an array, or an object
keyed by id) or TOML (``[[tasks]]`` or ``[tasks.ID]`` tables). Records are structured as they
are read, so a bad one is reported with its file and line and nothing downstream sees it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from arena_core.io.csvfile import csv_records
from arena_core.io.decoding import (
    InputError,
    bounded_lines,
    decode_line,
    line_too_long,
    loads,
    loads_array,
    open_binary,
    read_lines,
    read_text,
)
from arena_core.io.tables import records_of_parquet
from arena_core.model.errors import ValidationError
from arena_core.model.records import Submission, Task
from arena_core.model.serde import structure

__all__ = [  # InputError is defined in arena_core.io.decoding and raised by these readers
    "InputError",
    "Located",
    "Problems",
    "read_records",
    "iter_submissions",
    "locate_submission",
    "locate_task",
    "read_submissions",
    "read_tasks",
    "used_twice",
]

#: Turns one record into a :class:`Submission` (``Arena.structure_submission`` applies the
#: configuration's strictness).
Structurer = Callable[[Any], Submission]


#: How many bad records one error lists before it only counts the rest.
MAX_REPORTED = 20


def _json_records(path: Path) -> Iterator[tuple[str, Any]]:
    """(location, decoded record) from JSON Lines (``.jsonl``, ``.ndjson``: always one record a
    line), or from a JSON array (other names whose first character is ``[``)."""
    lines = read_lines(path)
    as_array = False
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        with open_binary(path) as fh:
            head = fh.read(4096).lstrip()
        as_array = head.startswith(b"[")
    if as_array:
        text = read_text(path)
        records = loads_array(text, path)
        if not isinstance(records, list):
            raise InputError(f"{path}: expected a JSON array of submissions")
        for index, record in enumerate(records):
            yield f"{path}: record {index + 1}", record
        return
    empty = True
    for number, line in lines:
        if not line.strip():
            continue
        empty = False
        yield f"{path}:{number}", _Deferred(line, path, number)
    if empty:
        raise InputError(f"{path}: the file is empty")


class _Deferred:
    """A line whose JSON is decoded by the consumer, so one bad line is reported beside the others."""

    __slots__ = ("number", "path", "text")

    def __init__(self, text: str, path: Path, number: int) -> None:
        self.text = text
        self.path = path
        self.number = number

    def decode(self) -> Any:
        return loads(self.text, self.path, self.number)


def _decoded(record: Any) -> Any:
    """A record as a source yielded it, as data: a deferred line decoded, a source's error raised."""
    if isinstance(record, InputError):
        raise record
    if isinstance(record, _Deferred):
        return record.decode()
    return record


def _records_of(path: Path) -> Iterator[tuple[str, Any]]:
    """(location, record) of a CSV, Parquet or JSON file."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return csv_records(path)
    if suffix == ".parquet":
        return ((f"{path}: record {row}", r) for row, r in enumerate(records_of_parquet(path), start=1))
    return _json_records(path)


def _submission(record: Any) -> Submission:
    return structure(record, Submission)


def iter_submissions(path: str | Path, structurer: Structurer = _submission) -> Iterator[Submission]:
    """Submissions one at a time (JSON Lines, JSON array or ``.csv``).

    Every record is checked: the bad ones, and ids used twice, are reported together at the end
    (up to :data:`MAX_REPORTED`, then a count), so one run shows every problem of the file.

    :raises InputError: one line per bad record, each naming ``FILE:LINE``, the record and the field.
    """
    path = Path(path)
    records = _records_of(path)
    problems = Problems()
    first_seen: dict[str, str] = {}
    for where, record in records:
        try:
            submission = structurer(_decoded(record))
        except InputError as exc:
            problems.add(str(exc))
            continue
        except ValidationError as exc:
            problems.add(f"{where}: {exc}")
            continue
        if submission.id in first_seen:
            problems.add(used_twice(where, submission.id, first_seen[submission.id]))
            continue
        first_seen[submission.id] = where
        if not problems:
            yield submission
    problems.raise_if_any()


def used_twice(where: str, submission_id: str, first: str) -> str:
    """The problem line for an id that a file uses again at ``where`` (first at ``first``)."""
    return f"{where}: submission {submission_id!r}: id: expected an id used once, also used at {first}"


class Problems:
    """Bad records of one file, reported together."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def __bool__(self) -> bool:
        return self.count > 0

    def add(self, message: str) -> None:
        self.count += 1
        if len(self.lines) < MAX_REPORTED:
            self.lines.append(message)

    def raise_if_any(self) -> None:
        if self.count > len(self.lines):
            self.lines.append(f"... and {self.count - len(self.lines)} more bad records")
        if self.lines:
            raise InputError("\n".join(self.lines))


def locate_submission(path: str | Path, submission_id: str) -> str | None:
    """Where in ``path`` the submission ``submission_id`` is (``FILE:LINE``), for error messages."""
    path = Path(path)
    records = csv_records(path) if path.suffix.lower() == ".csv" else _json_records(path)
    try:
        for where, record in records:
            record = _decoded(record)
            if isinstance(record, dict) and record.get("id") == submission_id:
                return where
    except InputError:
        return None
    return None


def locate_task(path: str | Path, task_id: str) -> str | None:
    """Where in ``path`` the task ``task_id`` is (``FILE: task N``), for error messages."""
    try:
        tasks = read_tasks(path)
    except InputError:
        return None
    for number, known in enumerate(tasks, start=1):
        if known == task_id:
            return f"{path}: task {number}"
    return None


class Located:
    """Decoded records of one file with where each came from, and the problems found so far."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[Any] = []
        self.lines: list[int] = []
        """Per record, its line (JSON Lines, CSV) or its position in a JSON array."""
        self.in_array = False
        self.places: list[str] | None = None
        """Per record, where it was read, when an importer read it (else FILE:LINE from ``lines``)."""
        self.problems = Problems()

    def where(self, index: int) -> str:
        """``FILE:LINE`` (or ``FILE: record N``, or an importer's place) of record ``index``."""
        if self.places is not None:
            return self.places[index]
        if self.in_array:
            return f"{self.path}: record {self.lines[index]}"
        return f"{self.path}:{self.lines[index]}"


def read_records(path: str | Path, *, task_id: str | None = None) -> Located:
    """Every record of a submissions file, decoded but not yet validated (the CLI checks them as
    columns); bad lines are collected in ``problems``.

    :param task_id: keep only the records of this task.
    """
    located = Located(Path(path))
    if _is_json_lines(located.path):
        _read_json_lines(located, task_id)
        return located
    located.in_array = located.path.suffix.lower() != ".csv"  # a JSON array or Parquet: "record N"
    source = _records_of(located.path)
    for where, record in source:
        try:
            record = _decoded(record)
        except InputError as exc:
            located.problems.add(str(exc))
            continue
        if task_id is not None and isinstance(record, dict) and record.get("task_id") != task_id:
            continue
        located.records.append(record)
        located.lines.append(int(where.rsplit(" " if located.in_array else ":", 1)[-1]))  # "FILE: record N", "FILE:N"
    return located


def _is_json_lines(path: Path) -> bool:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    if path.suffix.lower() in (".csv", ".parquet"):
        return False
    with open_binary(path) as fh:
        return not fh.read(4096).lstrip().startswith(b"[")


def _read_json_lines(located: Located, task_id: str | None) -> None:
    """The fast path of :func:`read_records` for JSON Lines: orjson decodes each line's bytes;
    only a line it refuses goes through the careful decoding that words the error."""
    empty = True
    with open_binary(located.path) as fh:
        for number, raw in bounded_lines(fh):
            if raw is None:
                located.problems.add(str(line_too_long(f"{located.path}:{number}")))
                empty = False
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                if not raw.strip():
                    continue
                try:
                    record = loads(decode_line(raw, f"{located.path}:{number}"), located.path, number)
                except InputError as exc:
                    located.problems.add(str(exc))
                    empty = False
                    continue
            empty = False
            if task_id is not None and isinstance(record, dict) and record.get("task_id") != task_id:
                continue
            located.records.append(record)
            located.lines.append(number)
    if empty:
        raise InputError(f"{located.path}: the file is empty")


def read_submissions(path: str | Path, structurer: Structurer = _submission) -> list[Submission]:
    """Every submission of a file; see :func:`iter_submissions`."""
    subs = list(iter_submissions(path, structurer))
    if not subs:
        raise InputError(f"{path}: no submissions in the file")
    return subs


def read_tasks(path: str | Path) -> dict[str, Task]:
    """Tasks by id, from JSON or TOML. :raises InputError: naming the file and the task."""
    path = Path(path)
    text = read_text(path)
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
        data = loads(text, path)
    if isinstance(data, dict):
        if "id" in data and not isinstance(data["id"], dict):
            raise InputError(
                f"{path}: expected a list of tasks or tables keyed by task id; this is one task: put it in [ ]"
            )
        data = [{"id": key, **value} if isinstance(value, dict) else value for key, value in data.items()]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of tasks or tables keyed by task id")
    tasks: dict[str, Task] = {}
    problems = Problems()
    for index, record in enumerate(data):
        try:
            task = structure(record, Task)
        except ValidationError as exc:
            problems.add(f"{path}: task {index + 1}: {exc}")
            continue
        if task.id in tasks:
            problems.add(
                f"{path}: task {index + 1}: task {task.id!r}: id: expected an id used once, also used by an earlier task"
            )
            continue
        tasks[task.id] = task
    problems.raise_if_any()
    return tasks
