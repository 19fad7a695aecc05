"""Files of judgements, one JSON object a line: judges' verdicts and people's labels.

Verdicts (the ``recorded`` judge's format, what ``arena judge`` writes)::

    {"submission_id": "run-7", "requirement": "r1", "verdict": true, "reason": "...", "judge": "sonnet"}

``verdict`` is ``true``, ``false`` or ``null`` (the judge gave none); ``requirement`` left out
(or ``null``) is a verdict on the whole run; ``judge`` left out names the file's judge by the
file's stem.

Labels (:mod:`arena_core.model.labels`)::

    {"submission_id": "run-7", "requirement": "r1", "label": false, "rater": "ana", "at": "2026-11-02T10:00:00Z"}

Every line is checked and every bad one reported (``FILE:LINE: field: expected ..., got ...``,
the first 20 of them) before anything is used: a file of judgements is evidence, and a hole in
it would bias what is computed from the rest. A person labelling one item twice is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from attrs import frozen

from arena_core.io.decoding import InputError, bounded_lines, decode_line, line_too_long, loads, open_binary
from arena_core.model.errors import bounded_repr
from arena_core.model.labels import SAMPLES, Label

__all__ = [
    "ABSENT",
    "VerdictLine",
    "checked_records",
    "is_time",
    "label_of",
    "name_field",
    "read_labels",
    "read_verdicts",
    "shown",
    "verdict_of",
]

#: Bad lines named in one error.
_SHOWN = 20


@frozen
class VerdictLine:
    """One judge's verdict on one item."""

    submission_id: str
    requirement: str | None
    judge: str
    verdict: bool | None
    reason: str = ""


def verdict_of(line: Mapping[str, Any], where: str, judge: str, *, whole_runs: bool = True) -> VerdictLine:
    """One verdict, checked; ``judge`` names it when the line does not.

    :raises InputError: ``WHERE: field: expected ..., got ...``.
    """
    given = line.get("verdict", ABSENT)
    if given is ABSENT or (given is not None and not isinstance(given, bool)):
        raise InputError(f"{where}: verdict: expected true, false or null, got {shown(given)}")
    named = line.get("judge", judge)
    if not isinstance(named, str) or not named:
        raise InputError(f"{where}: judge: expected the judge's name, got {shown(named)}")
    requirement = _requirement(line, where)
    if requirement is None and not whole_runs:
        raise InputError(f"{where}: requirement: expected the requirement it judges, got nothing")
    reason = line.get("reason") or ""
    return VerdictLine(name_field(line, "submission_id", where), requirement, named, given, str(reason))


def label_of(line: Mapping[str, Any], where: str) -> Label:
    """One label, checked. :raises InputError: ``WHERE: field: expected ..., got ...``."""
    given = line.get("label", ABSENT)
    if not isinstance(given, bool):
        raise InputError(f"{where}: label: expected true or false, got {shown(given)}")
    rater = line.get("rater")
    if not isinstance(rater, str) or not rater.strip():
        raise InputError(f"{where}: rater: expected who labelled it (a name), got {shown(rater)}")
    at = line.get("at")
    if at is not None and not is_time(at):
        raise InputError(f"{where}: at: expected an ISO 8601 time, got {shown(at)}")
    sample = line.get("sample")
    if sample is not None and sample not in SAMPLES:
        raise InputError(f"{where}: sample: expected one of {', '.join(SAMPLES)}, got {shown(sample)}")
    return Label(name_field(line, "submission_id", where), given, rater, _requirement(line, where), at, sample)


def read_verdicts(path: Path, *, whole_runs: bool = True) -> list[VerdictLine]:
    """The verdicts of a file (see the module's note); a line that names no judge is the file's
    (its name without the suffix).

    :param whole_runs: whether a verdict may judge a whole run (leave out ``requirement``).
    :raises InputError: naming ``FILE:LINE`` and the field of each line that is not a verdict.
    """
    return list(
        checked_records(
            path, lambda line, where: verdict_of(line, where, path.stem, whole_runs=whole_runs), "a verdict"
        )
    )


def read_labels(path: Path) -> list[Label]:
    """The labels of a file (see the module's note).

    :raises InputError: naming ``FILE:LINE`` and the field of each line that is not a label, and
        each item a rater labelled twice.
    """
    seen: dict[tuple[str, str | None, str], str] = {}

    def once(line: dict[str, Any], where: str) -> Label:
        found = label_of(line, where)
        key = (found.submission_id, found.requirement, found.rater)
        if key in seen:
            raise InputError(f"{where}: rater: {found.rater!r} labelled this item already, at line {seen[key]}")
        seen[key] = where.rsplit(":", 1)[1]
        return found

    return list(checked_records(path, once, "a label"))


#: What ``line.get(key, ABSENT)`` returns for a field the line does not have.
ABSENT = object()


def checked_records(path: Path, make: Callable[[dict[str, Any], str], Any], what: str) -> Iterator[Any]:
    """Each line of ``path`` made into a record by ``make``; every bad line reported at the end."""
    problems: list[str] = []
    found = []
    with open_binary(path) as handle:
        for number, raw in bounded_lines(handle):
            where = f"{path}:{number}"
            try:
                if raw is None:
                    raise line_too_long(where)
                text = decode_line(raw, where)
                if not text.strip():
                    continue
                line = loads(text, path, number)
                if not isinstance(line, dict):
                    raise InputError(f"{where}: expected {what} (a JSON object), got {shown(line)}")
                found.append(make(line, where))
            except InputError as error:
                problems.append(str(error))
    if problems:
        more = f"\n... and {len(problems) - _SHOWN} more" if len(problems) > _SHOWN else ""
        raise InputError("\n".join(problems[:_SHOWN]) + more)
    yield from found


def name_field(line: Mapping[str, Any], key: str, where: str) -> str:
    """``line[key]`` as a non-empty name (a string, or an integer written as one).

    :raises InputError: ``WHERE: KEY: expected a name, got ...``."""
    value = line.get(key)
    if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
        raise InputError(f"{where}: {key}: expected a name, got {shown(value)}")
    return str(value)


def _requirement(line: Mapping[str, Any], where: str) -> str | None:
    return None if line.get("requirement") is None else name_field(line, "requirement", where)


def is_time(value: Any) -> bool:
    """Whether ``value`` is an ISO 8601 time."""
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def shown(value: Any) -> str:
    """``value`` as an error message shows it, bounded (``nothing`` for an absent field)."""
    return "nothing" if value is ABSENT else bounded_repr(value)
