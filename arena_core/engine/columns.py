"""Submissions as columns: the batch path's input, with the grouping helpers it sorts by."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import Any

import numpy as np

from arena_core.engine.ordered import Ordered
from arena_core.engine.sequences import Joined
from arena_core.model.errors import ValidationError
from arena_core.model.records import MAX_FIGURE, RUN_DETAILS, TOKEN_BREAKDOWN, Submission

NUMERIC_FIELDS = (
    "total_tokens",
    "tool_calls",
    "iterations",
    "execution_time",
    "estimated_cost",
    "correctness",
    "tests_passed",
    "tests_total",
    *TOKEN_BREAKDOWN,
)
#: Numeric fields that hold whole numbers.
INTEGER_FIELDS = frozenset(
    {"total_tokens", "tool_calls", "iterations", "tests_passed", "tests_total", *TOKEN_BREAKDOWN}
)
#: The smallest value of each figure, as the model's validators have it (0 unless listed).
FIGURE_MINIMUM = {"iterations": 1.0}


def bad_figures(values: np.ndarray, name: str, *, whole: bool = False) -> np.ndarray:
    """Rows whose figure is given (not NaN) but outside the model's bounds: below the figure's
    minimum, above :data:`MAX_FIGURE` (infinities included), or not whole for a count (unless
    ``whole``: the values were read as integers). The columns and records ways in share it, so
    both refuse what a model refuses."""
    minimum = FIGURE_MINIMUM.get(name, 0.0)
    # fmin and fmax skip NaN (a figure not given): the usual case, two reductions and a test of
    # whole numbers instead of eight passes. Both are NaN when no value is given.
    if len(values) and np.fmin.reduce(values) >= minimum and np.fmax.reduce(values) <= MAX_FIGURE:
        if whole or name not in INTEGER_FIELDS:
            return np.zeros(len(values), bool)
        with np.errstate(invalid="ignore"):
            fraction: np.ndarray = (values - np.floor(values)) > 0  # exact for every double; NaN: not
        return fraction
    with np.errstate(invalid="ignore"):
        bad: np.ndarray = ~np.isnan(values) & ~((values >= minimum) & (values <= MAX_FIGURE))
        if name in INTEGER_FIELDS and not whole:
            bad |= np.isfinite(values) & (values != np.floor(values))
    return bad


def all_measured(values: np.ndarray, zero_missing: bool = False) -> bool:
    """Whether no value is missing: none is NaN (nor 0, with ``zero_missing``). One reduction,
    the minimum, which is NaN when any value is; callers compute the rows only when it says
    some lack (a negative figure, which validation refuses, also sends them there)."""
    if not len(values):
        return True
    least = values.min()
    return bool(least > 0) if zero_missing else not math.isnan(least)


def repeated_ids(ids: Sequence[Any]) -> Iterator[tuple[int, int]]:
    """(row, first row with the same id) for every row whose id came before; nothing, after one
    set-size test, when all are distinct."""
    if len(set(ids)) == len(ids):
        return
    first: dict[Any, int] = {}
    for row, ident in enumerate(ids):
        if ident in first:
            yield row, first[ident]
        else:
            first[ident] = row


class Coded(Sequence[Any]):
    """Values held as what :func:`factorize` returns: a code per element into the distinct
    values, in first-seen order. It reads like a list, and :func:`factorize` of it is free, so a
    column read coded (an Arrow dictionary) is never hashed value by value again.
    """

    __slots__ = ("codes", "distinct")

    def __init__(self, codes: np.ndarray, distinct: list[Any]) -> None:
        self.codes, self.distinct = codes, distinct

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self.distinct[c] for c in self.codes[index].tolist()]
        return self.distinct[self.codes[index]]

    def __iter__(self) -> Iterator[Any]:
        return iter(np.array(self.distinct, dtype=object)[self.codes].tolist() if len(self.codes) else [])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, Coded)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable


def factorize(values: Sequence[Any]) -> tuple[np.ndarray, list[Any]]:
    """(code per element, distinct values in first-seen order), by hashing: O(n)."""
    if isinstance(values, Coded):
        return values.codes, values.distinct
    distinct = list(dict.fromkeys(values))
    index = {v: k for k, v in enumerate(distinct)}
    return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values)), distinct


def factorize_objects(objects: Sequence[Any]) -> tuple[np.ndarray, list[Any]]:
    """Like :func:`factorize`, by identity: for objects that are unhashable or costly to compare
    (baselines, weight profiles, adjusters), of which a batch holds a few shared instances."""
    index: dict[int, int] = {}
    codes = np.fromiter((index.setdefault(id(o), len(index)) for o in objects), dtype=np.int64, count=len(objects))
    return codes, list({id(o): o for o in objects}.values())


class Columns:
    """Submissions as columns: ids, task ids, tool, model, numeric figures, success, files."""

    def __init__(
        self,
        ids: Sequence[str],
        task_ids: Sequence[str],
        numeric: Mapping[str, np.ndarray],
        *,
        tools: Sequence[str | None] | None = None,
        models: Sequence[str | None] | None = None,
        success: np.ndarray | None = None,
        files_created: Sequence[Sequence[str]] | None = None,
        metas: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        self.size = len(ids)
        self.metas = metas
        """Per submission, its ``meta`` as the model holds it, when the reader was asked for it
        (grouping by ``meta.KEY``, the importers' flags): ``None`` otherwise."""
        self.ids = ids
        self.task_ids = task_ids
        self.tools = tools if tools is not None else [None] * self.size
        self.models = models if models is not None else [None] * self.size
        absent = np.full(self.size, np.nan)
        absent.flags.writeable = False  # shared by every field not given
        self.numeric = {f: numeric.get(f, absent) for f in NUMERIC_FIELDS}
        self._absent = absent
        self.success = success if success is not None else np.ones(self.size, dtype=bool)
        self.files_created = files_created if files_created is not None else [()] * self.size
        self._file_index: dict[str, list[int]] | None = None
        self._codes: dict[str, tuple[np.ndarray, list[Any]]] = {}
        self._ids_distinct = False
        self.orders: dict[str, Ordered] = {}
        """The figures :meth:`order` put in order so far, by name."""

    def repeated_ids(self) -> list[tuple[int, int]]:
        """:func:`repeated_ids` of the ids; once they are found distinct (a reader checks, and so
        does ``evaluate_many``: a set of a million ids is 0.15 s), without looking again."""
        if self._ids_distinct:
            return []
        repeats = list(repeated_ids(self.ids))
        self._ids_distinct = not repeats
        return repeats

    def ids_checked(self) -> Columns:
        """These columns, their ids checked distinct by the caller (the streaming path checks every
        partition's ids together, by their hashes), so not looked at again."""
        self._ids_distinct = True
        return self

    def codes(self, field: str) -> tuple[np.ndarray, list[Any]]:
        """:func:`factorize` of ``task_ids`` or ``tools``, computed once (free when the readers
        hand them over as :class:`Coded`, as they do when they found the codes while checking)."""
        if field not in self._codes:
            self._codes[field] = factorize(getattr(self, field))
        return self._codes[field]

    def order(self, field: str) -> Ordered:
        """``field``'s values in order (NaN last), sorted once: a store keeps a task's stored
        columns from batch to batch and adds each batch's runs to their order
        (:func:`~arena_core.store.figurecache.grown_columns`), so a baseline's medians read the
        task's history by rank rather than sorting it again (a batch over 100 tasks of 10,000
        runs sorted a million values a figure)."""
        if field not in self.orders:
            self.orders[field] = Ordered.of(self.numeric[field])
        return self.orders[field]

    def file_sets(self) -> tuple[np.ndarray, list[Any]]:
        """Rows' ``files_created`` as codes into the distinct lists, as tuples (computed once)."""
        if "files_created" not in self._codes:
            files = self.files_created
            self._codes["files_created"] = factorize(files if isinstance(files, Coded) else list(map(tuple, files)))
        return self._codes["files_created"]

    def lists_with(self, path: str) -> list[int]:
        """The codes (of :meth:`file_sets`) of the distinct lists holding ``path``: an index
        built once, so each file criterion looks up its path instead of scanning every list."""
        if self._file_index is None:
            index: dict[str, list[int]] = {}
            for code, files in enumerate(self.file_sets()[1]):
                for name in set(files):
                    index.setdefault(name, []).append(code)
            self._file_index = index
        return self._file_index.get(path, [])

    def record(self, i: int) -> dict[str, Any]:
        """Row ``i`` as a submission record, figures that are NaN left out (for the per-record path)."""
        record: dict[str, Any] = {
            "id": self.ids[i],
            "task_id": self.task_ids[i],
            "tool": self.tools[i],
            "model": self.models[i],
            "success": bool(self.success[i]),
            "files_created": list(self.files_created[i]),
        }
        for name, values in self.numeric.items():
            value = float(values[i])
            if not math.isnan(value):
                record[name] = int(value) if name in INTEGER_FIELDS else value
        return record

    def take(self, rows: np.ndarray) -> Columns:
        """The rows selected by ``rows`` (a boolean mask or positions), in their order."""
        positions = np.flatnonzero(rows) if rows.dtype == bool else rows
        picked = positions.tolist()

        def chosen(values: Sequence[Any]) -> list[Any]:  # a joined or grown sequence indexed as a list
            held = values if isinstance(values, (list, tuple)) else list(values)
            return [held[i] for i in picked]

        return Columns(
            chosen(self.ids),
            chosen(self.task_ids),
            {f: v[positions] for f, v in self.numeric.items()},
            tools=chosen(self.tools),
            models=chosen(self.models),
            success=self.success[positions],
            files_created=chosen(self.files_created),
        )

    @classmethod
    def concat(cls, parts: Sequence[Columns], *, in_place: bool = False) -> Columns:
        """The rows of every part, one part after another; ``in_place``: the parts' names (ids,
        tools, ...) are read where they are, not copied (:class:`~arena_core.engine.sequences.Joined`)."""

        def joined(name: str) -> Sequence[Any]:  # chained in C: tasks' 10,000 stored rows each and a few new runs
            if in_place:
                return Joined(*(getattr(p, name) for p in parts))
            return list(chain.from_iterable(getattr(p, name) for p in parts))

        return cls(
            joined("ids"),
            joined("task_ids"),
            {  # a field no part was given stays absent, not copied (a pipeline group's stored rows hold 5)
                f: np.concatenate([p.numeric[f] for p in parts])
                for f in NUMERIC_FIELDS
                if any(p.numeric[f] is not p._absent for p in parts)
            },
            tools=joined("tools"),
            models=joined("models"),
            success=np.concatenate([p.success for p in parts]),
            files_created=joined("files_created"),
        )

    @classmethod
    def from_submissions(cls, subs: Sequence[Submission]) -> Columns:
        given = {f: [getattr(s, f) for s in subs] for f in NUMERIC_FIELDS}
        return cls(
            [s.id for s in subs],
            [s.task_id for s in subs],  # type: ignore[misc]  # a structured submission always has its task
            {  # None becomes NaN; a field no run reports stays absent (see concat)
                f: np.array(values, dtype=float) for f, values in given.items() if values.count(None) < len(values)
            },
            tools=[s.tool for s in subs],
            models=[s.model for s in subs],
            success=np.array([s.success for s in subs], dtype=bool),
            files_created=[s.files_created for s in subs],
        )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Columns:
        """Columns from a mapping of field name to array-like (NumPy, Arrow, pandas, lists).

        :raises ValidationError: naming the first offending row by its id.
        """
        for required in ("id", "task_id"):
            if required not in data:
                raise ValidationError("columns", required, "a column of the same length as the others")
        ids = data["id"]
        n = len(ids)
        known = {"id", "task_id", "tool", "model", "success", "files_created", *NUMERIC_FIELDS}
        for name in data:
            if name in ("workspace", "workspace_ref"):
                raise ValidationError(
                    "columns", name, "no workspaces in columns: pass submissions with workspaces as records"
                )
            if name in RUN_DETAILS:
                raise ValidationError("columns", name, "a scored field (run times and providers travel with records)")
            if name not in known and name != "meta":
                raise ValidationError("columns", name, "a submission field")
        numeric: dict[str, np.ndarray] = {}
        for name in NUMERIC_FIELDS:
            if name not in data:
                continue
            try:
                values = np.asarray(data[name], dtype=float)
            except (TypeError, ValueError):
                raise ValidationError("columns", name, "numbers (NaN or None for missing)") from None
            if values.shape != (n,):
                raise ValidationError("columns", name, f"{n} values, like the id column", values.shape)
            bad = bad_figures(values, name)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                value = float(values[row])
                if math.isfinite(value) and value > MAX_FIGURE:
                    expected = f"a number <= {MAX_FIGURE:.0e}".replace("e+", "e")
                else:
                    minimum = FIGURE_MINIMUM.get(name, 0.0)
                    expected = f"a finite {'whole ' if name in INTEGER_FIELDS else ''}number >= {minimum:g}"
                raise ValidationError(f"submission {ids[row]!r}", name, expected, value)
            numeric[name] = values
        success = np.asarray(data["success"], dtype=bool) if "success" in data else None
        if len(data["task_id"]) != n:
            raise ValidationError("columns", "task_id", f"{n} values, like the id column", len(data["task_id"]))
        return cls(
            ids,
            data["task_id"],
            numeric,
            tools=data.get("tool", None),
            models=data.get("model", None),
            success=success,
            files_created=data.get("files_created", None),
        )
