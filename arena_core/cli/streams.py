"""The streaming path of ``arena score`` and ``arena leaderboard`` (:mod:`arena_core.streaming`):
when a command takes it, and where its evaluations go.

A command streams arena-core's own Parquet runs (files, folders of shards, or URLs) when they
hold more than ``partition_rows`` runs, or are URLs, and nothing asked for needs every run in
memory: not a single task or category, no ``--where``, no priced cost, no scoped baselines,
no fitted difficulty, no harness errors to leave out, no workspaces to check; for a leaderboard,
a grouping by tool or model, no ``--cluster`` or ``--pass-k``, and an aggregator that reads
per-task cells (all but ``pooled``). Otherwise the command reads its input whole, as before.
"""

from __future__ import annotations

import importlib
import os
import secrets
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import click

from arena_core.cli.app import State
from arena_core.cli.inputs import InputFiles, read_task_file
from arena_core.cli.picking import Pick
from arena_core.io.allocator import keep_freed_arrays
from arena_core.io.decoding import InputError
from arena_core.io.locations import is_url
from arena_core.io.output import atomic_output
from arena_core.io.pieces import Source, conform, open_source
from arena_core.model.records import Task
from arena_core.stats.celltable import CellTable
from arena_core.stats.tasktable import TaskTable
from arena_core.streaming import Streamed, stream

__all__ = ["STREAMED_FORMATS", "stream_leaderboard", "stream_scores", "streamed_source"]

#: What ``arena score`` writes when it streams.
STREAMED_FORMATS = ("jsonl", "parquet")
#: The hive partition keys a folder of streamed evaluations keeps, as its input had them.
_EVALUATION_KEYS = ("task_id", "tool", "model")


def streamed_source(state: State, given: InputFiles, pick: Pick, *, why_not: str | None = None) -> Source | None:
    """The input as a :class:`Source` when the command streams it; ``None`` to read it whole.

    :param why_not: what of the command itself keeps it from streaming (an option), if anything.
    :raises click.UsageError: URLs (only the streaming path reads them) with something that
        keeps the command from streaming.
    """
    if given.example is not None or given.from_format is not None or not given.submissions:
        return None
    remote = any(is_url(p) for p in given.submissions)
    names = [str(p) for p in given.submissions]
    arena, config = state.arena, state.arena.config
    reason = why_not or _reason(state, pick)
    if reason is None and not remote and not all(_parquet(Path(p)) for p in given.submissions):
        return None
    if reason is not None:
        if remote:
            raise click.UsageError(f"{names[0]}: URLs are read by the streaming path, which {reason}")
        return None
    source = open_source(list(given.submissions))
    if {"workspace", "workspace_ref"} & set(source.schema.names) or arena.recipe is None:
        if remote:
            raise click.UsageError(f"{names[0]}: runs with workspaces are checked in memory, not streamed")
        return None
    return source if remote or source.rows > config.partition_rows else None


def _parquet(path: Path) -> bool:
    if path.is_dir():
        return any(f.suffix.lower() == ".parquet" for f in path.rglob("*.parquet"))
    return path.suffix.lower() == ".parquet"


def _reason(state: State, pick: Pick) -> str | None:
    """What of the configuration or selection keeps the runs in memory, if anything."""
    config = state.arena.config
    if pick.chooses:
        return "does not select tasks or runs (--task, --category, --where)"
    if state.arena.pricer is not None:
        return "takes costs as reported (cost_source = reported)"
    if config.baseline_scope != "task":
        return "scores with per-task baselines (baseline_scope = task)"
    if config.difficulty_source != "label":
        return "takes difficulty from the labels (difficulty_source = label)"
    if config.infra_failures != "fail":
        return "counts harness errors as failures (infra_failures = fail)"
    return None


def stream_leaderboard(
    state: State, source: Source, given: InputFiles, pick: Pick, by: str, quiet: bool, digests: bool = False,
    cells: bool = False,
) -> tuple[TaskTable | CellTable, dict[str, Task]]:  # fmt: skip
    """The runs' cells grouped ``by``, streamed, and the tasks; with ``digests``, the runs' digests
    noted for the board's provenance; with ``cells``, a board too large for its dense table as its
    cells that hold runs (for a method that scores them)."""
    tasks = read_task_file(state, given, pick)
    # The board's interval and tests need SciPy's special functions, 0.2 s to import: done while
    # the workers score (once they are started: a process with a thread does not fork them).
    started = _import_in_background("scipy.special")
    found = _stream(state, source, tasks, by, None, quiet, started=started, digests=digests, cells=cells)
    assert found.table is not None
    state.runs_read, state.runs_count = found.digests, found.runs
    return found.table, tasks


def stream_scores(
    state: State, source: Source, given: InputFiles, fmt: str, output: Path | None, folder: bool, quiet: bool
) -> None:
    """Every run's evaluation, streamed: to ``output`` (a file, or with ``folder`` a folder of one
    shard per partition, in the input's ``task_id=``, ``tool=`` or ``model=`` folders when it had
    them) or to stdout, appearing only when every partition was scored."""
    if fmt not in STREAMED_FORMATS:
        raise click.UsageError(f"--format {fmt}: the streaming path writes {' or '.join(STREAMED_FORMATS)}")
    tasks = read_task_file(state, given, Pick())
    if folder:
        assert output is not None
        if output.exists() and any(output.iterdir()):
            raise InputError(f"{output}: a folder that is not empty; give a new or empty one")
        target = output.parent / f".{output.name}.{secrets.token_hex(8)}"
    else:
        target = Path(os.environ.get("TMPDIR", "/tmp")) / f"arena-shards-{secrets.token_hex(8)}"
    target.mkdir()
    try:
        keys = [k for k in dict.fromkeys(k for keys in source.keys for k, _ in keys) if k in _EVALUATION_KEYS]
        if folder or fmt == "jsonl":
            found = _stream(
                state, source, tasks, None, (target, fmt), quiet, keys if folder and fmt == "parquet" else []
            )
            if folder:
                assert output is not None
                if output.exists():
                    output.rmdir()
                target.rename(output)
                return
            _concatenate(found.shards, output)
            return
        # Written while later partitions are scored, beside the output (renamed to it when whole).
        path = target / "whole.parquet" if output is None else output.parent / f".{output.name}.{secrets.token_hex(8)}"
        whole = _ParquetAppender(path, output)
        try:
            _stream(state, source, tasks, None, None, quiet, on_table=whole.add)
            if output is None:
                _concatenate([whole.finish()], None)
            else:
                whole.finish(output)
        finally:
            whole.close()
            path.unlink(missing_ok=True)
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _stream(
    state: State,
    source: Source,
    tasks: dict[str, Task],
    by: str | None,
    shards: tuple[Path, str] | None,
    quiet: bool,
    partition_by: Sequence[str] = (),
    on_table: Callable[[Any], None] | None = None,
    started: Callable[[], None] | None = None,
    digests: bool = False,
    cells: bool = False,
) -> Streamed:
    config = state.arena.config
    if not quiet:
        click.echo(
            f"streaming {source.rows:,} runs from {len(source.names)} file(s), partitions of whole tasks of at "
            f"most {config.partition_rows:,} runs (partition_rows)",
            err=True,
        )
    stamp = datetime.now(UTC).isoformat()
    if source.rows > config.partition_rows:  # this process scores partitions too
        keep_freed_arrays()
    found = stream(
        state.arena, source, tasks, by=by, stamp=stamp, shards=shards, partition_by=partition_by,
        on_table=on_table, limit=config.partition_rows, started=started, digests=digests, cells=cells,
    )  # fmt: skip
    if not quiet:
        click.echo(f"scored {found.runs:,} runs in {found.partitions} partition(s)", err=True)
    return found


def _import_in_background(module: str) -> Callable[[], None]:
    """What starts importing ``module`` in a thread of its own."""
    return threading.Thread(target=importlib.import_module, args=(module,), daemon=True).start


def _concatenate(shards: Sequence[Path], output: Path | None) -> None:
    """The files' bytes, in order, as one file (or stdout): what appears is whole or nothing."""
    with atomic_output(output) as out:
        _copy(shards, out)


class _ParquetAppender:
    """The evaluations of each partition appended to one Parquet file as soon as the partition is
    scored, while the next ones are (reading them back and writing them again at the end took a
    third of a ten-million-run command). Its schema is the first partition's; when a later one
    brings a column it lacks (a dimension no run before measured), the file is written again with
    the schemas unified, a row group at a time, and appending goes on."""

    def __init__(self, path: Path, shown: Path | None = None) -> None:
        self.path = path
        self.shown = shown or path
        """The path messages name: the output the file becomes."""
        self.writer: Any = None
        self.schema: Any = None

    def add(self, table: Any) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        with self._writing():
            if self.writer is None:
                self.schema = table.schema
                self.writer = pq.ParquetWriter(str(self.path), self.schema)
            else:
                unified = pa.unify_schemas([self.schema, table.schema], promote_options="default")
                if not unified.equals(self.schema):
                    self._widen(unified)
            self.writer.write_table(conform(table, self.schema))

    def _widen(self, schema: Any) -> None:
        """The file written so far, written again with ``schema``, row group by row group."""
        import pyarrow.parquet as pq

        self.close()
        narrow = self.path.with_name(f"{self.path.name}.narrow")
        self.path.replace(narrow)
        try:
            self.schema, self.writer = schema, pq.ParquetWriter(str(self.path), schema)
            written = pq.ParquetFile(str(narrow))
            for group in range(written.num_row_groups):
                self.writer.write_table(conform(written.read_row_group(group), schema))
        finally:
            narrow.unlink(missing_ok=True)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Writing the file: a full disk or a folder that is not there is said, naming the output."""
        try:
            yield
        except OSError as exc:
            raise InputError(f"{self.shown}: cannot write: {exc.strerror or exc}") from None

    def close(self) -> None:
        """The file closed, whatever was written (before it is removed, on a failure)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def finish(self, to: Path | None = None) -> Path:
        """The file, whole: every partition's evaluations in partition order (renamed ``to``
        that path when given)."""
        assert self.writer is not None  # a stream without a run has raised before
        with self._writing():
            self.close()
            if to is not None:
                return self.path.replace(to)
        return self.path


def _copy(shards: Sequence[Path], out: IO[str]) -> None:
    buffer = getattr(out, "buffer", None)
    out.flush()
    for shard in shards:
        with shard.open("rb") as fh:
            if buffer is None:
                out.write(fh.read().decode())
            else:
                shutil.copyfileobj(fh, buffer, 1 << 20)
    if buffer is not None:
        buffer.flush()
