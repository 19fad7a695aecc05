"""Files of votes, one JSON object a line (:mod:`arena_core.model.votes`)::

    {"id": "v1", "task_id": "t1", "a": "run-7", "b": "run-9", "winner": "a", "voter": "ana", "at": "2026-11-02T10:00:00Z"}

Every line is checked and every bad one reported (``FILE:LINE: field: expected ..., got ...``)
before any is used, as for labels: votes are evidence, and a hole in them would bias every
rating computed from the rest. :func:`check_votes` then holds each vote against the runs: both
must exist and be runs of the vote's task.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from arena_core.io.decoding import InputError
from arena_core.io.judgements import ABSENT, checked_records, is_time, name_field, shown
from arena_core.model.errors import ValidationError
from arena_core.model.votes import WINNERS, Vote

__all__ = ["check_votes", "read_vote_files", "read_votes", "vote_of"]

#: Problems named in one error.
_SHOWN = 20


def vote_of(line: Mapping[str, Any], where: str) -> Vote:
    """One vote, checked. :raises InputError: ``WHERE: field: expected ..., got ...``."""
    winner = line.get("winner", ABSENT)
    if winner not in WINNERS:
        raise InputError(f"{where}: winner: expected one of {', '.join(WINNERS)}, got {shown(winner)}")
    at = line.get("at")
    if at is not None and not is_time(at):
        raise InputError(f"{where}: at: expected an ISO 8601 time, got {shown(at)}")
    a, b = name_field(line, "a", where), name_field(line, "b", where)
    if a == b:
        raise InputError(f"{where}: b: expected a run other than a, got {shown(b)} twice")
    voter = line.get("voter")
    if not isinstance(voter, str) or not voter.strip():
        raise InputError(f"{where}: voter: expected who voted (a name), got {shown(voter)}")
    try:
        return Vote(name_field(line, "id", where), name_field(line, "task_id", where), a, b, str(winner), voter, at)
    except ValidationError as error:  # a name a terminal would obey (ESC, a bidirectional override)
        raise InputError(f"{where}: {error.field}: expected {error.expected}, got {shown(error.got)}") from None


def read_votes(path: Path) -> list[Vote]:
    """The votes of a file, in its order (see the module's note).

    :raises InputError: naming ``FILE:LINE`` and the field of each line that is not a vote, and
        each id used twice.
    """
    seen: dict[str, str] = {}

    def once(line: dict[str, Any], where: str) -> Vote:
        found = vote_of(line, where)
        if found.id in seen:
            raise InputError(f"{where}: id: {found.id!r} is the id of the vote at line {seen[found.id]} already")
        seen[found.id] = where.rsplit(":", 1)[1]
        return found

    return list(checked_records(path, once, "a vote"))


def read_vote_files(paths: Iterable[Path]) -> list[Vote]:
    """The votes of several files, in order; an id in two files is refused (naming both).

    :raises InputError: as :func:`read_votes`, and for an id used in two files.
    """
    found: list[Vote] = []
    first: dict[str, Path] = {}
    for path in paths:
        for vote in read_votes(path):
            if vote.id in first:
                raise InputError(f"{path}: id: {vote.id!r} is the id of a vote in {first[vote.id]} already")
            first[vote.id] = path
            found.append(vote)
    return found


def check_votes(votes: Iterable[Vote], task_of: Mapping[str, str | None]) -> None:
    """Hold each vote against the runs: ``task_of`` maps every run's id to its task.

    :raises InputError: ``vote ID: a: expected a run of task T, got ...`` for every vote that
        names a run there is not, or a run of another task.
    """
    problems = []
    for vote in votes:
        for side in ("a", "b"):
            run = getattr(vote, side)
            if run not in task_of:
                problems.append(
                    f"vote {vote.id!r}: {side}: expected a run of task {vote.task_id!r}, got {run!r}, no run"
                )
            elif task_of[run] != vote.task_id:
                problems.append(
                    f"vote {vote.id!r}: {side}: expected a run of task {vote.task_id!r}, "
                    f"got {run!r}, a run of task {task_of[run]!r}"
                )
    if problems:
        more = f"\n... and {len(problems) - _SHOWN} more" if len(problems) > _SHOWN else ""
        raise InputError("\n".join(problems[:_SHOWN]) + more)
