"""The metas of a JSON Lines file whose columns were read as an Arrow table.

A table cannot give back a run's ``meta`` as its record holds it: a struct column fills the
keys a run lacks with nulls, widens an integer to a float beside a float, and reads ISO text as
a timestamp. So a command that keeps metas (``arena tasks``, boards by a meta key) read such a
file record by record, and on 500,000 runs that cost about 4 s (1.4 s decoding the lines into
dicts, 2.5 s checking the dicts into columns) where the table gives the same columns in 0.8 s.
The table now gives the columns, and one more pass decodes each line for its meta alone,
through :func:`~arena_core.engine.records.run_metas`, the record path's own rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

import orjson

from arena_core.engine.records import run_metas
from arena_core.io.decoding import open_binary
from arena_core.io.tables import LONGEST_TABLE_LINE

__all__ = ["line_metas"]

#: Bytes read at a time; the lines are decoded a block at a time, never the whole file's at once.
_BLOCK = 1 << 24
_ABSENT = object()


def line_metas(path: Path, present: set[str], ids: Sequence[Any], task_id: str | None = None) -> list[Any] | None:
    """Per run of the JSON Lines file ``path`` (only ``task_id``'s runs when given), the meta its
    model holds, in the file's order; ``present`` is every key a run has (the table's columns).

    ``None`` when a line is not what the table made of it: not one JSON object, a meta that is
    not a table, a line longer than the table reader takes, or runs whose ids are not ``ids``
    (the table's rows) one for one. The record reader then reads the file and says what is
    wrong, as it did before the table was read.
    """
    metas: list[Any] = []
    seen: list[Any] = []
    rest = b""
    with open_binary(path) as fh:
        while block := fh.read(_BLOCK):
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            if len(rest) > LONGEST_TABLE_LINE or not _take(lines, present, task_id, metas, seen):
                return None
    if rest and not _take([rest], present, task_id, metas, seen):
        return None
    return metas if seen == list(ids) else None


def _take(lines: list[bytes], present: set[str], task_id: str | None, metas: list[Any], seen: list[Any]) -> bool:
    """The metas and ids of ``lines``' runs appended; ``False`` when a line is not one object
    with a meta that is a table (or none)."""
    try:
        records = list(map(orjson.loads, lines))
    except orjson.JSONDecodeError:  # a blank line, which the record reader skips too, or worse
        lines = [line for line in lines if line.strip()]
        try:
            records = list(map(orjson.loads, lines))
        except orjson.JSONDecodeError:
            return False
    if records and set(map(type, records)) != {dict}:
        return False
    if task_id is not None:
        records = [record for record in records if record.get("task_id") == task_id]
    own = list(map(dict.get, records, repeat("meta", len(records)), repeat(_ABSENT, len(records))))
    if not set(map(type, own)) <= {dict, type(_ABSENT)}:
        return False
    metas += run_metas(records, own, present)
    seen += map(dict.get, records, repeat("id", len(records)))
    return True
