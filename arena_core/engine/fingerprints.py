"""Digests of the runs and tasks a board read, for its provenance.

A board says what it was computed from by two SHA-256 digests: one of its runs, one of its
tasks. Both are of content, not of files: the same runs read from JSON Lines or Parquet, in any
order, in one file or in shards, give one digest, and a run changed in any field that scoring
reads (its id, task, tool, model, figures, success, files) gives another. The runs' digest is
built from one digest per task (its runs in id order), so the streaming path, which scores a
partition of whole tasks at a time, finds the same digest without holding every run, and a
store can keep each task's digest until the task's runs change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import orjson

from arena_core.engine.columns import NUMERIC_FIELDS, Columns
from arena_core.model.provenance import BoardProvenance, Provenance, arena_core_version
from arena_core.model.records import Submission, Task
from arena_core.model.serde import to_dict

__all__ = ["combined_digest", "provenance_of", "runs_digest", "task_run_digests", "tasks_digest"]

_SEPARATOR = b"\x1f"


def task_run_digests(runs: Columns | Sequence[Submission]) -> dict[str, str]:
    """Each task's digest of its runs: SHA-256 over the runs' scored fields, in id order."""
    columns = runs if isinstance(runs, Columns) else Columns.from_submissions(runs)
    if not columns.size:
        return {}
    codes, names = columns.codes("task_ids")
    order = np.lexsort((np.asarray(columns.ids, dtype=str), codes))
    ends = np.flatnonzero(np.diff(codes[order])) + 1
    numeric = [_canonical(columns.numeric[f][order]) for f in NUMERIC_FIELDS]
    success = columns.success[order].astype(np.uint8)
    texts = [_reordered(values, order) for values in (columns.ids, columns.tools, columns.models)]
    joined = [_SEPARATOR.join(f.encode() for f in files) for files in columns.files_created]
    files = [joined[i] for i in order]
    digests: dict[str, str] = {}
    for start, end in zip([0, *ends], [*ends, columns.size], strict=True):
        h = hashlib.sha256()
        for values in texts:
            h.update(b"\x1e".join(values[start:end]))
        h.update(b"\x1e".join(files[start:end]))
        for array in numeric:
            h.update(array[start:end].tobytes())
        h.update(success[start:end].tobytes())
        digests[str(names[codes[order[start]]])] = h.hexdigest()
    return digests


def combined_digest(per_task: Mapping[str, str]) -> str:
    """The runs' digest from their tasks' digests, whatever order the tasks came in."""
    h = hashlib.sha256()
    for task in sorted(per_task):
        h.update(f"{task}\t{per_task[task]}\n".encode())
    return h.hexdigest()


def runs_digest(runs: Columns | Sequence[Submission]) -> str:
    """:func:`combined_digest` of :func:`task_run_digests`."""
    return combined_digest(task_run_digests(runs))


def tasks_digest(tasks: Iterable[Task]) -> str:
    """SHA-256 over the tasks' records as canonical JSON, in id order."""
    h = hashlib.sha256()
    for task in sorted(tasks, key=lambda t: t.id):
        h.update(orjson.dumps(to_dict(task), option=orjson.OPT_SORT_KEYS) + b"\n")
    return h.hexdigest()


def provenance_of(
    per_task: Mapping[str, str],
    runs: int,
    tasks: Mapping[str, Task],
    scoring: Provenance,
    window: Any,
    command: Sequence[str],
) -> BoardProvenance:
    """A board's provenance: its runs' digest from ``per_task`` (:func:`task_run_digests`), the
    digest of ``tasks``, the configuration ``scoring`` names, this version, ``window``'s
    ``since``/``until``/``window`` (any object with them, or ``None``) and the ``command``."""
    return BoardProvenance(
        runs=combined_digest(per_task),
        n_runs=runs,
        tasks=tasks_digest(tasks.values()),
        n_tasks=len(tasks),
        config_digest=scoring.config_digest,
        profile=scoring.profile,
        arena_core=arena_core_version(),
        window={k: v for k in ("since", "until", "window") if (v := getattr(window, k, None))},
        command=command,
    )


def _canonical(values: np.ndarray) -> np.ndarray:
    """Figures with one NaN and one zero, so a missing figure or ``-0.0`` hashes alike on every path."""
    out = np.asarray(values, dtype=np.float64) + 0.0
    out[np.isnan(out)] = np.nan
    return out


def _reordered(values: Sequence[object], order: np.ndarray) -> list[bytes]:
    encoded = [b"\x00" if v is None else str(v).encode() for v in values]
    return [encoded[i] for i in order]
