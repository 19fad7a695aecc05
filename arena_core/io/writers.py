"""Writing evaluations as JSON Lines, JSON, CSV or a terminal table, one record at a time, from
their spec-shaped dicts."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import chain
from pathlib import Path
from typing import IO, Any

import orjson

from arena_core.io.table import render
from arena_core.io.tables import write_parquet
from arena_core.model.records import Evaluation
from arena_core.model.serde import to_dict

__all__ = ["FORMATS", "write_blocks", "write_evaluations", "write_shard"]

FORMATS = ("jsonl", "json", "csv", "parquet", "table")


def _dimensions(records: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(
        dict.fromkeys(
            k[: -len("_score")] for r in records for k in r if k.endswith("_score") and k not in _NOT_DIMENSIONS
        )
    )


_NOT_DIMENSIONS = frozenset({"overall_score", "unadjusted_overall_score"})


def _row(record: Mapping[str, Any], dimensions: Sequence[str]) -> list[object]:
    return [
        record["submission_id"],
        record["task_id"],
        record.get("tool"),
        record.get("model"),
        record["overall_score"],
        *(record.get(f"{d}_score") for d in dimensions),
        record["unadjusted_overall_score"],
        record.get("overall_ranking"),
        record.get("percentile"),
        record.get("provisional", False),
        record["weight_profile"],
        record["difficulty"],
        ";".join(f"{k}={v}" for k, v in record.get("filled", {}).items()),
        record.get("coverage", 1.0),
    ]


def _cells(column: Any) -> list[Any]:
    """A column's CSV cells: an absent value (``None``, or a NaN score) is an empty cell, text
    neutralised (:func:`csv_safe`)."""
    values = column.tolist() if hasattr(column, "tolist") else list(column)
    return ["" if v is None or v != v else csv_safe(v) for v in values]


#: What a spreadsheet takes a cell starting with for a formula (OWASP's CSV injection list).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """Text that a spreadsheet would run as a formula (an id ``=HYPERLINK(...)``) prefixed with a
    single quote, as OWASP recommends; numbers and other text unchanged."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _header(dimensions: Sequence[str]) -> list[str]:
    return [
        "submission_id",
        "task_id",
        "tool",
        "model",
        "overall_score",
        *(f"{d}_score" for d in dimensions),
        "unadjusted_overall_score",
        "overall_ranking",
        "percentile",
        "provisional",
        "weight_profile",
        "difficulty",
        "filled",
        "coverage",
    ]


def write_evaluations(evaluations: Sequence[Evaluation], fmt: str, out: IO[str]) -> None:
    """Write ``evaluations`` to ``out`` in ``fmt`` (one of :data:`FORMATS`).

    A result that can give its evaluations directly (an ``EvaluationBatch``: ``json_lines()``
    for JSON Lines and JSON, ``table()`` for CSV and Parquet, ``records()`` and ``dimensions()``
    for the terminal) is written from those, without an evaluation object per submission; the
    bytes written are the same.
    """
    if fmt == "parquet":
        _write_parquet(evaluations, out)
        return
    json_lines = getattr(evaluations, "json_lines", None)
    if fmt == "jsonl" and json_lines is not None:
        write_blocks(json_lines(), out)
        return
    if fmt == "json" and json_lines is not None and len(evaluations):
        # The array's items are the lines, each after ", " but the first, which is indented.
        blocks = json_lines(lead=b", ")
        write_blocks(chain([b"[\n  " + next(blocks)[2:]], blocks, [b"]\n"]), out)
        return
    as_records = getattr(evaluations, "records", None)
    records: Iterable[Mapping[str, Any]] = as_records() if as_records else (to_dict(ev) for ev in evaluations)
    if fmt == "jsonl":
        out.writelines(orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE).decode() for r in records)
        return
    if fmt == "json":
        out.write("[\n")
        for index, record in enumerate(records):
            out.write(("  " if index == 0 else ", ") + orjson.dumps(record).decode() + "\n")
        out.write("]\n")
        return
    listing = getattr(evaluations, "dimensions", None)
    if listing is None:
        records = list(records)
        dimensions = _dimensions(records)
    else:
        dimensions = listing()
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        header = _header(dimensions)
        writer.writerow(header)
        table = getattr(evaluations, "table", None)
        if table is not None:  # an EvaluationBatch: its columns, not a dict per evaluation
            columns = table()
            cells = [_cells(columns[name]) for name in header]
            writer.writerows(zip(*cells, strict=True))
            return
        writer.writerows(["" if v is None else csv_safe(v) for v in _row(r, dimensions)] for r in records)
        return
    rows = [
        [
            r["task_id"],
            r.get("overall_ranking"),
            r["submission_id"],
            r.get("tool"),
            r["overall_score"],
            *(r.get(f"{d}_score") for d in dimensions),
            r.get("percentile"),
            r.get("coverage", 1.0),
        ]
        for r in records
    ]
    header = [
        "Task",
        "Rank",
        "Submission",
        "Tool",
        "Overall",
        *(d.capitalize() for d in dimensions),
        "Pctl",
        "Coverage",
    ]
    out.write(render(header, rows) + "\n")


def _write_parquet(evaluations: Sequence[Evaluation], out: IO[str]) -> None:
    """Parquet: an ``EvaluationBatch``'s flat columns (``table()``), or, for evaluations made one
    at a time, the CSV writer's columns built from their records."""
    table = getattr(evaluations, "table", None)
    if table is not None:
        columns = table()
    else:
        records = [to_dict(ev) for ev in evaluations]
        dimensions = _dimensions(records)
        rows = [_row(r, dimensions) for r in records]
        columns = {name: [row[k] for row in rows] for k, name in enumerate(_header(dimensions))}
    out.flush()
    write_parquet(columns, out.buffer)  # type: ignore[attr-defined]


def write_blocks(blocks: Iterator[bytes], out: IO[str]) -> None:
    """Encoded blocks of lines to the stream's binary buffer when it has one, with no decoding
    and re-encoding (decoded for a text-only stream)."""
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.writelines(block.decode() for block in blocks)
        return
    out.flush()
    _write_behind(blocks, buffer)
    buffer.flush()


def _write_behind(blocks: Iterable[bytes], buffer: IO[bytes]) -> None:
    """Write each block from a worker thread while the next one is encoded. A file write
    releases the GIL, so on two cores the writing (3.7 s for the 1.6 GB of a million
    evaluations on this project's machine) hides behind the encoding instead of adding to it.
    One block is in flight at a time; a failed write is raised here, and nothing more is written."""
    with ThreadPoolExecutor(max_workers=1) as writer:
        pending: Future[int] | None = None
        for block in blocks:
            if pending is not None:
                pending.result()
            pending = writer.submit(buffer.write, block)
        if pending is not None:
            pending.result()


def write_shard(result: Any, path: str, partition_by: tuple[str, ...]) -> None:
    """A batch of evaluations (``result``: an :class:`~arena_core.engine.results.EvaluationBatch`),
    a streamed partition's, as one file (Parquet, or JSON Lines), or as a hive dataset by ``partition_by`` (the
    file's name, numbered, in each ``KEY=VALUE`` folder)."""
    if path.endswith(".parquet") and partition_by:
        import pyarrow.dataset as ds

        where = Path(path)
        ds.write_dataset(result.to_arrow(), where.parent, format="parquet", partitioning=list(partition_by),
                         partitioning_flavor="hive", basename_template=f"{where.stem}-{{i}}.parquet",
                         existing_data_behavior="overwrite_or_ignore")  # fmt: skip
        return
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        pq.write_table(result.to_arrow(), path)
        return
    with open(path, "wb") as out:
        for block in result.json_lines():
            out.write(block)
