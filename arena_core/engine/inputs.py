"""What ``Arena.evaluate_many`` accepts, as what the engine scores: columns, or structured records."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from arena_core.engine.columns import Columns
from arena_core.engine.records import columns_from_records
from arena_core.engine.tables import columns_from_table, table_of
from arena_core.io.tables import records_of_table
from arena_core.model.records import Submission
from arena_core.model.serde import structure_each

__all__ = ["records_of"]


def records_of(
    submissions: Iterable[Submission | Mapping[str, Any]] | Mapping[str, Any] | Columns,
    structure_one: Callable[[Any], Submission],
    *,
    strict: bool,
    as_records: bool = False,
) -> Sequence[Submission] | Columns:
    """Records (models or dicts), a mapping of columns, :class:`Columns`, or a table (Arrow,
    pandas, polars) as columns when every row is valid and nothing needs a model, else as
    models structured by ``structure_one`` (which raises the first invalid record's error).

    :param as_records: always models, one per row (every record goes through ``structure_one``:
        a configuration that prices costs rewrites each record there).
    """
    table = table_of(submissions)
    if table is not None:  # Arrow, pandas, polars: columns when every row is valid, else records
        if not as_records:
            found = columns_from_table(table, strict=strict)
            if found is not None:
                return found
        return structure_each(records_of_table(table), structure_one)
    if isinstance(submissions, Mapping):
        submissions = Columns.from_mapping(submissions)
    if isinstance(submissions, Columns):
        if not as_records:
            return submissions
        return structure_each([submissions.record(i) for i in range(submissions.size)], structure_one)
    items = submissions if isinstance(submissions, Sequence) else list(submissions)
    columns = None if as_records else columns_from_records(items, structure_one, strict=strict)
    # models, or workspaces to check: the per-record path needs objects
    return columns if columns is not None else structure_each(items, structure_one)
