"""Runs in CSV: a header of submission fields (``meta.KEY`` columns go under ``meta``), an empty
cell a missing value, lists ``;``-separated; each row a record for the record reader."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from arena_core.io.decoding import InputError, read_lines
from arena_core.model.errors import closest
from arena_core.model.records import Submission

__all__ = ["CSV_CELL_LIMIT", "csv_records"]

#: The longest CSV cell accepted (the csv module's default is 128 KiB).
CSV_CELL_LIMIT = 16 * 1024 * 1024


_LIST_FIELDS = {"files_created"}
_BOOL_FIELDS = {"success"}
_TEXT_FIELDS = {"id", "task_id", "tool", "model", "workspace", "workspace_ref"}


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


def csv_records(path: Path) -> Iterator[tuple[str, Any]]:
    """CSV: a header of submission fields (``meta.KEY`` columns go under ``meta``);
    an empty cell is a missing value; lists are ``;``-separated."""
    fields = [a.name for a in attrs.fields(Submission) if a.name != "meta"]
    csv.field_size_limit(CSV_CELL_LIMIT)
    reader = csv.reader(line for _, line in read_lines(path))
    try:
        header = next(reader, None)
        if header is None:
            raise InputError(f"{path}: the file is empty")
        seen: set[str] = set()
        for column in header:
            if column not in fields and not column.startswith("meta."):
                raise InputError(
                    f"{path}:1: unknown column {column!r}{closest(column, fields)} "
                    "(columns are submission fields or meta.KEY)"
                )
            if column in seen:
                raise InputError(f"{path}:1: column {column!r} appears twice in the header")
            seen.add(column)
        for row in reader:
            number = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                yield (
                    f"{path}:{number}",
                    InputError(f"{path}:{number}: expected {len(header)} cells as in the header, got {len(row)}"),
                )
                continue
            record: dict[str, Any] = {}
            for column, cell in zip(header, row, strict=True):
                if cell == "":
                    continue
                if column.startswith("meta."):
                    record.setdefault("meta", {})[column[5:]] = cell
                else:
                    record[column] = _csv_value(column, cell)
            yield f"{path}:{number}", record
    except csv.Error as exc:
        limit = f" (the limit is {CSV_CELL_LIMIT:,} characters)" if "field larger" in str(exc) else ""
        raise InputError(f"{path}:{reader.line_num}: invalid CSV: {exc}{limit}") from None
