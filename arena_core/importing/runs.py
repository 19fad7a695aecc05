"""What an importer yields, and the helpers importers read their sources with.

An importer turns a harness's own files into :class:`ImportedRun` records: a submission as
data (the fields of :class:`~arena_core.model.records.Submission`), the task it answers when the
source names one, and where in the source it came from. The helpers here give every importer
the same errors: ``FILE: field: expected ..., got ...``, naming the record when a file holds
several.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from attrs import field, frozen

from arena_core.importing.heads import peek
from arena_core.io.decoding import InputError, decode_text, loads, read_bytes
from arena_core.model.checks import moment

__all__ = [
    "ImportedRun",
    "present",
    "run_times",
    "verdict_task",
    "problem_date",
    "repository_of",
    "load_json",
    "decode_json",
    "value",
    "count",
    "amount",
    "seconds_between",
    "new_files_in_patch",
    "files_under",
    "peek",
    "trajectory_text",
    "unlinked_file",
]

#: The criterion a derived task carries: the harness's own verdict, as the importer set it in
#: ``success``, so a correctness-only profile reproduces the harness's accuracy.
VERDICT_CRITERION = "harness_verdict"


@frozen
class ImportedRun:
    """One run of a harness, as arena-core reads it."""

    where: str
    """Where in the source it came from (``FILE`` or ``FILE: record N``), for error messages."""
    submission: Mapping[str, Any]
    """The submission's fields as data; figures the source does not report are left out."""
    task: Mapping[str, Any] | None = field(default=None)
    """The task, when the source names one: its id, and category or difficulty where known."""
    verdicts: tuple[Mapping[str, Any], ...] = ()
    """Judges' verdicts on the run the source records, as lines of a verdicts file
    (:mod:`arena_core.io.judgements`): ``arena import --verdicts-out`` writes them."""
    labels: tuple[Mapping[str, Any], ...] = ()
    """People's labels of the run the source records, as lines of a labels file:
    ``arena import --labels-out`` writes them."""


def verdict_task(task_id: str, harness: str, **known: Any) -> dict[str, Any]:
    """A task derived from a source: its id, what the source says of it (``category``,
    ``difficulty``, ``meta``) and one criterion, the harness's verdict."""
    task: dict[str, Any] = {
        "id": task_id,
        "success_criteria": [{"type": VERDICT_CRITERION, "description": f"{harness} judged the run resolved"}],
    }
    task.update(present(known))
    return task


#: Where datasets record when a problem was published: SWE-bench's and SWE-bench-Live's
#: ``created_at`` (the issue's creation), LiveCodeBench's ``contest_date``.
PROBLEM_DATES = ("created_at", "contest_date")


def problem_date(row: Any) -> str | None:
    """When a dataset row's problem was published (a task's ``created_at``), where the row
    records it as an ISO-8601 date or time; ``None`` otherwise."""
    if not isinstance(row, Mapping):
        return None
    for key in PROBLEM_DATES:
        found = row.get(key)
        if isinstance(found, str) and moment(found) is not None:
            return found
    return None


#: A SWE-bench instance id: ``OWNER__REPO-NUMBER`` (``django__django-16255``).
_INSTANCE = re.compile(r"^(?P<owner>[^_/]+(?:_[^_/]+)*?)__(?P<repo>.+)-\d+$")


def repository_of(instance_id: str | None) -> str | None:
    """The repository a SWE-bench-style instance comes from (``django/django``), kept in a run's
    ``meta.repo`` so that leaderboards can treat a repository's instances as one family
    (``--cluster meta.repo``); ``None`` for ids of another shape."""
    found = _INSTANCE.match(instance_id or "")
    return f"{found['owner']}/{found['repo']}" if found else None


def present(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The entries whose value is not ``None``: what a source does not record stays absent."""
    return {key: given for key, given in fields.items() if given is not None}


def load_json(path: str | Path) -> Any:
    """A whole JSON file; :raises InputError: ``FILE:LINE: invalid JSON ...`` (a truncated file
    included), ``FILE:LINE: not UTF-8 text`` or ``FILE: cannot read``.

    orjson decodes the bytes as read, checking their UTF-8 itself: decoding them to text first,
    which orjson then reads back as UTF-8, was a tenth of reading a trajectory. A file orjson
    refuses is decoded to text, and by :func:`~arena_core.io.decoding.loads`, for its error."""
    return decode_json(read_bytes(path), path)


def decode_json(data: bytes, path: str | Path) -> Any:
    """The JSON of a file's bytes already read, as :func:`load_json` decodes them."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    text = decode_text(data, path)
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    return loads(text, path)


def value(data: Any, dotted: str, where: str, kind: type | tuple[type, ...], *, required: bool = False) -> Any:
    """The value at ``dotted`` (``"a.b.c"``) in nested tables, checked to be of ``kind``.

    A value that is absent, or ``null``, is ``None`` (or an error when ``required``).

    :raises InputError: ``WHERE: a.b.c: expected ..., got ...``.
    """
    found: Any = data
    for key in _keys(dotted):
        if type(found) is not dict and not isinstance(found, Mapping):  # JSON's tables are dicts: no ABC check
            found = None
            break
        found = found.get(key)
    if found is None:
        if required:
            raise InputError(f"{where}: {dotted}: expected {_describe(kind)}, got nothing")
        return None
    if type(found) is kind or (type(kind) is tuple and type(found) in kind):  # what sources hold
        if type(found) is float and not math.isfinite(found):
            raise InputError(f"{where}: {dotted}: expected a finite number, got {found!r}")
        return found
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(found, bool) and bool not in kinds:
        raise InputError(f"{where}: {dotted}: expected {_describe(kind)}, got {found!r}")
    if not isinstance(found, kinds):
        raise InputError(f"{where}: {dotted}: expected {_describe(kind)}, got {_shown(found)}")
    if isinstance(found, float) and not math.isfinite(found):
        raise InputError(f"{where}: {dotted}: expected a finite number, got {found!r}")
    return found


#: Dotted paths split once: an importer asks for the same few hundred times a file.
_SPLIT: dict[str, tuple[str, ...]] = {}


def _keys(dotted: str) -> tuple[str, ...]:
    keys = _SPLIT.get(dotted)
    if keys is None:
        keys = tuple(dotted.split("."))
        if len(_SPLIT) < 4096:  # the importers' own paths; a path built from data is split each time
            _SPLIT[dotted] = keys
    return keys


def count(data: Any, dotted: str, where: str, *, zero_is_missing: bool = False) -> int | None:
    """A whole, non-negative number at ``dotted``; ``None`` when absent (or 0, when the source
    writes 0 for "not recorded")."""
    found = value(data, dotted, where, int)
    if found is not None and found < 0:
        raise InputError(f"{where}: {dotted}: expected a whole number of at least 0, got {found}")
    if zero_is_missing and found == 0:
        return None
    return found  # type: ignore[no-any-return]


def amount(data: Any, dotted: str, where: str, *, zero_is_missing: bool = False) -> float | None:
    """A non-negative number at ``dotted`` (cost, seconds); ``None`` when absent (or 0, when the
    source writes 0 for "not recorded")."""
    found = value(data, dotted, where, (int, float))
    if found is not None and found < 0:
        raise InputError(f"{where}: {dotted}: expected a number of at least 0, got {found}")
    if zero_is_missing and found == 0:
        return None
    return None if found is None else float(found)


def seconds_between(data: Any, start: str, end: str, where: str) -> float | None:
    """Seconds from the timestamp at ``start`` to the one at ``end`` (ISO 8601); ``None`` when
    either is absent. :raises InputError: naming the field that is not a timestamp, or ``end``
    when it is before ``start``."""
    begun, ended = (_timestamp(data, key, where) for key in (start, end))
    if begun is None or ended is None:
        return None
    try:
        seconds = (ended - begun).total_seconds()
    except TypeError:  # one with a time zone, one without
        raise InputError(f"{where}: {end}: expected a time zone as in {start}, or none in both") from None
    if seconds < 0:
        raise InputError(
            f"{where}: {end}: expected a time after {start} ({begun.isoformat()}), got {ended.isoformat()}"
        )
    return seconds


def run_times(data: Any, start: str, end: str, where: str) -> dict[str, str]:
    """The run's ``started_at`` and ``finished_at`` from the timestamps at ``start`` and ``end``
    (ISO 8601), those present, as a submission records them (prices are looked up at them).

    :raises InputError: naming the field that is not a timestamp."""
    found = {name: _timestamp(data, key, where) for name, key in (("started_at", start), ("finished_at", end))}
    return {name: stamp.isoformat() for name, stamp in found.items() if stamp is not None}


def _timestamp(data: Any, key: str, where: str) -> datetime | None:
    text = value(data, key, where, str)
    if text is None:
        return None
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"{where}: {key}: expected an ISO 8601 timestamp, got {text!r}") from None
    return stamp


def new_files_in_patch(patch: str) -> list[str]:
    """Paths a git diff creates (its ``new file mode`` entries), in order."""
    created = []
    current = None
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            current = line.rsplit(" b/", 1)[-1].strip()
        elif line.startswith("new file mode") and current:
            created.append(current)
    return created


def _describe(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words = {
        str: "text",
        int: "a whole number",
        float: "a number",
        bool: "true or false",
        list: "a list",
        dict: "a table",
    }
    if set(kinds) == {int, float}:
        return "a number"
    return " or ".join(words.get(k, k.__name__) for k in kinds)


def _shown(found: Any) -> str:
    if isinstance(found, Mapping):
        return "a table"
    if isinstance(found, list):
        return "a list"
    text = repr(found)
    return text if len(text) <= 60 else text[:57] + "..."


def files_under(paths: Sequence[Path], accept: Callable[[Path], bool]) -> Iterator[Path]:
    """The files among ``paths`` and, for a directory, the files under it that ``accept``
    takes, in name order (so an import is the same on every machine). A file given by name is
    always yielded: the importer then says what is wrong with it."""
    for path in paths:
        if path.is_dir():
            yield from sorted((p for p in regular_files(path) if accept(p)), key=_parts)
        else:
            yield path


def _parts(path: Path) -> tuple[str, ...]:
    """A path's order, as a path's own comparison orders it (part by part), compared as a tuple
    of strings: Python's path comparison rebuilds its parts at every one of a sort's calls."""
    return path.parts


def regular_files(root: Path) -> list[Path]:
    """The regular files under ``root``: special files (FIFOs, devices, sockets) are skipped, and
    a symlink is followed only when what it names lies inside ``root`` (a run folder's link to
    a host file must not pull that file into an import). Linked folders are not entered.

    Folders are listed with ``os.scandir``, whose entries know their own type: a file that is
    not a link costs no call to the system (``Path.rglob`` and a ``stat`` each took three)."""
    top = root.resolve()
    found = []
    folders = [os.fspath(root)]
    while folders:
        try:
            with os.scandir(folders.pop()) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_symlink():
                    target = Path(entry.path).resolve()
                    if target.is_relative_to(top) and stat.S_ISREG(os.stat(entry.path).st_mode):
                        found.append(Path(entry.path))
                elif entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                elif entry.is_file(follow_symlinks=False):  # a regular file: not a FIFO, device or socket
                    found.append(Path(entry.path))
            except (OSError, RuntimeError):
                continue
    return found


#: The most of a run's trajectory an importer keeps (its last characters), for a judge's evidence.
TRAJECTORY_CHARS = 16_384


def trajectory_text(messages: Any, limit: int = TRAJECTORY_CHARS) -> str | None:
    """A harness's message list as ``role: content`` paragraphs, its last ``limit`` characters
    (with a line saying how much was left out), for ``meta.trajectory``: what a ``judge``
    criterion shows of the run. ``None`` when there are no messages."""
    if not isinstance(messages, list) or not messages:
        return None
    parts = []
    for message in messages:
        if type(message) is not dict and not isinstance(message, Mapping):  # JSON's tables are dicts
            continue
        content = message.get("content")
        if isinstance(content, list):  # parts: [{"type": "text", "text": ...}, ...]
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
        parts.append(f"{message.get('role', '?')}: {content if content is not None else ''}")
    text = "\n\n".join(parts)
    if len(text) <= limit:
        return text
    return f"[the first {len(text) - limit:,} characters are left out]\n" + text[-limit:]


def unlinked_file(path: str | Path, below: str | Path) -> bool:
    """Whether ``path`` is a regular file reached from the folder ``below`` without passing a
    link (neither it nor a folder between is a symlink): a file a run's folder names by a fixed
    name (a trial's ``agent/trajectory.json``) is read only when it really lies there."""
    base, target = os.fspath(below), os.fspath(path)  # both normalised by Path: compared as strings
    if base == os.curdir:  # Path(".") / "agent" is "agent"
        base = ""
    prefix = base if not base or base.endswith(os.sep) else base + os.sep
    if not target.startswith(prefix):
        return False
    place = base
    for part in target[len(prefix) :].split(os.sep):
        place = os.path.join(place, part)
        try:
            mode = os.lstat(place).st_mode
        except (OSError, ValueError):  # ValueError: a name with a NUL byte, which names no file
            return False
        if stat.S_ISLNK(mode):
            return False
    return stat.S_ISREG(mode)


def is_regular(path: Path) -> bool:
    """Whether ``path`` is a regular file (following a link), without opening it."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False
