"""Rows dealt to partitions through temporary Arrow files, for an input whose tasks are spread
over its row groups (rows in any order): one pass reads the input a batch at a time and appends
each row to its partition's file; each partition is then read from its own file, its rows in
input order.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from arena_core.io.arrays import from_numpy, to_numpy
from arena_core.io.pieces import Source

__all__ = ["SPILL_BATCH", "read_spilled", "spill", "write_spilled"]

#: Rows read at a time while spilling: a row group may itself be larger than memory.
SPILL_BATCH = 1 << 18


def spill(source: Source, partition_of: Mapping[str | None, int], count: int, folder: Path) -> list[Path]:
    """Every row of ``source`` appended to the file of its task's partition (``partition_of``;
    a row without a task goes where ``None`` goes); the ``count`` files, in partition order."""
    import pyarrow.compute as pc
    import pyarrow.ipc

    paths = [folder / f"partition-{k:05d}.arrow" for k in range(count)]
    writers = [pyarrow.ipc.new_file(str(path), source.schema) for path in paths]
    try:
        for piece in source.pieces:
            for table in source.batches(piece, SPILL_BATCH):
                encoded = pc.dictionary_encode(table["task_id"], null_encoding="encode").combine_chunks()
                lookup = np.array([partition_of[t] for t in encoded.dictionary.to_pylist()], dtype=np.int64)
                codes = to_numpy(encoded.indices)
                target = lookup[codes] if len(lookup) else np.zeros(0, dtype=np.int64)
                order = np.argsort(target, kind="stable")
                bounds = np.searchsorted(target[order], np.arange(count + 1))
                for k in np.unique(target).tolist():
                    rows = from_numpy(order[bounds[k] : bounds[k + 1]])
                    writers[k].write_table(table.take(rows))
    finally:
        for writer in writers:
            writer.close()
    return paths


def read_spilled(path: Path) -> Any:
    """A partition's spill file as one table (memory-mapped: its pages are read as used)."""
    import pyarrow as pa
    import pyarrow.ipc

    return pyarrow.ipc.open_file(pa.memory_map(str(path))).read_all()  # the map lives as long as the table


def write_spilled(table: Any, path: str) -> None:
    """A table as an Arrow file that :func:`read_spilled` maps (a worker's evaluations handed to
    the command on the same machine)."""
    import pyarrow.ipc

    with pyarrow.ipc.new_file(path, table.schema) as writer:
        writer.write_table(table)
