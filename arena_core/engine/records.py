"""Submission records (dicts) to columns in one pass, with the records' own validation.

Building a :class:`~arena_core.model.records.Submission` per record costs more than scoring it.
Here each field is read from every record into one array and checked with vectorised tests
that accept exactly what the models accept; only records that fail a test are structured one
by one, so a bad record raises the very error the model gives it (naming the record, the field
and what was expected), and a record the tests were merely unsure of (a float ``3.0`` for a
whole number) is taken from its model.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from itertools import chain, repeat
from typing import Any

import numpy as np

from arena_core.engine.columns import NUMERIC_FIELDS, Coded, Columns, bad_figures, factorize
from arena_core.engine.nesting import deep_rows
from arena_core.model.checks import moment
from arena_core.model.errors import ValidationError
from arena_core.model.records import MAX_FIGURE, MAX_NAME_LENGTH, RUN_DETAILS, Submission, with_derived

__all__ = [
    "KNOWN_FIELDS",
    "columns_from_records",
    "inconsistent",
    "metas_are_empty",
    "run_detail",
    "run_metas",
    "valid_names",
]

_ABSENT = object()
_is_not_none = partial(operator.is_not, None)
_NAME_FIELDS = ("id", "task_id", "tool", "model")


def columns_from_records(
    records: Sequence[Any],
    structure_one: Callable[[Any], Submission],
    *,
    strict: bool = False,
    on_invalid: Callable[[int, ValidationError], None] | None = None,
    with_meta: bool = False,
    metas_checked: bool = False,
) -> Columns | None:
    """``records`` as :class:`Columns`, or ``None`` when they need the per-record path (an item
    that is not a dict, or a workspace to check).

    :param structure_one: how one record becomes a model (it raises the record's error).
    :param strict: unknown keys are errors rather than ``meta``.
    :param on_invalid: called with the row and the error of every invalid record, instead of
        raising for the first (the columns then still hold the invalid rows: the caller reports
        and discards them).
    :param with_meta: keep each record's ``meta`` as the model would (:func:`run_metas`).
    :param metas_checked: the records were each a model once (a store's): their metas are not
        walked again for their depth (:func:`~arena_core.engine.nesting.deep_rows`).
    :raises ValidationError: the first invalid record, as ``structure_one`` reports it.
    """
    n = len(records)
    if set(map(type, records)) != {dict}:
        return None
    present = set().union(*records)  # every key any record has, in one pass at C speed
    if "workspace" in present or "workspace_ref" in present:
        return None
    suspect = np.zeros(n, dtype=bool)

    def column(name: str, absent: Any = None) -> list[Any]:
        if name not in present:  # no record has it: nothing to read or check
            return [absent] * n
        if absent is None:  # dict.get's own default: one argument fewer per record (15% faster)
            return list(map(dict.get, records, repeat(name, n)))
        return list(map(dict.get, records, repeat(name, n), repeat(absent, n)))  # C speed: no bytecode per record

    names = {name: column(name, _ABSENT if name == "id" else None) for name in _NAME_FIELDS}
    codes: dict[str, tuple[np.ndarray, list[Any]] | None] = {}  # task ids and tools, for the engine's grouping
    for name, values in names.items():
        bad, codes[name] = _bad_names(values, required=name == "id", coded=name in ("task_id", "tool"))
        suspect |= bad
    numeric: dict[str, np.ndarray] = {}
    for name in NUMERIC_FIELDS:
        if name not in present:
            numeric[name] = np.full(n, np.nan)
            continue
        array, bad = _numbers(column(name), name)
        numeric[name] = array
        suspect |= bad
    success_values = column("success", _ABSENT)
    success_types = set(map(type, success_values))
    if success_types <= {bool, type(_ABSENT)}:
        success = np.array(success_values, dtype=bool)  # by truth: an absent value is True, the default
    else:
        success = np.ones(n, dtype=bool)
        suspect |= np.array([type(v) is not bool and v is not _ABSENT for v in success_values])
    files_created = column("files_created", ())
    bad, file_codes = _file_lists(files_created)
    suspect |= bad
    meta = column("meta", _ABSENT)
    if not set(map(type, meta)) <= {dict, type(_ABSENT)}:
        suspect |= np.array([v is not _ABSENT and type(v) is not dict for v in meta])
    extra = present - KNOWN_FIELDS
    if not metas_checked and ("meta" in present or extra):  # no meta, no unknown key: nothing to walk
        suspect[deep_rows(meta, {name: column(name) for name in extra})] = True
    if strict and not present <= KNOWN_FIELDS:  # a record with a key that is no field
        suspect |= np.fromiter((not (r.keys() <= KNOWN_FIELDS) for r in records), dtype=bool, count=n)
    for name in RUN_DETAILS:  # checked here, kept with the record only (scores never read them)
        if name in present:
            suspect |= np.array([not run_detail(name, v) for v in column(name)], dtype=bool)
    suspect |= inconsistent(numeric, len(suspect))
    ids, task_ids, tools, models = (names[f] for f in ("id", "task_id", "tool", "model"))
    for row in map(int, np.flatnonzero(suspect)):  # raises for the first record that is really invalid
        try:
            submission = structure_one(records[row])
        except ValidationError as exc:
            if on_invalid is None:
                raise exc.at_position(row) from None
            on_invalid(row, exc)
            continue
        ids[row], task_ids[row], tools[row], models[row] = (
            submission.id,
            submission.task_id,
            submission.tool,
            submission.model,
        )
        for name in NUMERIC_FIELDS:
            value = getattr(submission, name)
            numeric[name][row] = np.nan if value is None else float(value)
        success[row] = submission.success
        files_created[row] = submission.files_created
    # Every row now holds a valid id and a task id or None (refused later, by the task lookup,
    # naming the submission).
    clean = not suspect.any()  # the codes found while checking (a structured record may change a row)
    return Columns(
        ids,
        Coded(*codes["task_id"]) if clean and codes["task_id"] is not None else task_ids,
        numeric,
        tools=Coded(*codes["tool"]) if clean and codes["tool"] is not None else tools,
        models=models,
        success=success,
        files_created=Coded(*file_codes) if clean and file_codes is not None else files_created,
        metas=run_metas(records, meta, present) if with_meta else None,
    )


def run_metas(records: Sequence[dict[str, Any]], meta: list[Any], present: set[str]) -> list[dict[str, Any]]:
    """Per record, the ``meta`` its model holds: its unknown keys under its own ``meta`` (the
    converter's ``{**extras, **meta}``), and ``derived`` naming ``total_tokens`` when the model
    sums it from the input and output tokens; ``meta`` is the records' meta column."""
    extra = present - KNOWN_FIELDS
    derives = _DERIVING.issubset(present)
    out = []
    for record, own in zip(records, meta, strict=True):
        found = own if type(own) is dict else {}
        if extra and not record.keys() <= KNOWN_FIELDS:
            found = {**{k: v for k, v in record.items() if k not in KNOWN_FIELDS}, **found}
        if (
            derives
            and record.get("total_tokens") is None
            and None not in (record.get("input_tokens"), record.get("output_tokens"))
        ):
            found = with_derived(found, "total_tokens")
        out.append(found)
    return out


def metas_are_empty(present: set[str]) -> bool:
    """Whether records whose keys are ``present`` each have an empty meta as :func:`run_metas`
    gives it: no ``meta``, no unknown key to put under it, no total tokens to mark derived."""
    return "meta" not in present and present <= KNOWN_FIELDS and not _DERIVING.issubset(present)


#: Keys from whose sum the model derives ``total_tokens`` when a record does not give it.
_DERIVING = frozenset(("input_tokens", "output_tokens"))


#: Fields a record may hold; anything else goes under ``meta`` (or is refused in strict mode).
KNOWN_FIELDS = frozenset(
    (*_NAME_FIELDS, *NUMERIC_FIELDS, *RUN_DETAILS, "success", "files_created", "meta", "workspace", "workspace_ref")
)


def run_detail(name: str, value: Any) -> bool:
    """Whether a record's ``started_at``, ``finished_at`` or ``provider`` is valid (or absent)."""
    if value is None:
        return True
    if type(value) is not str:
        return False
    return moment(value) is not None if name != "provider" else valid_names([value])


def valid_names(text: list[str]) -> bool:
    """Whether every string is a valid name: printable, not blank, not over the length limit."""
    return (
        "".join(text).isprintable() and all(map(str.strip, text)) and max(map(len, text), default=0) <= MAX_NAME_LENGTH
    )


def _bad_names(
    values: list[Any], *, required: bool, coded: bool = False
) -> tuple[np.ndarray, tuple[np.ndarray, list[Any]] | None]:
    """(rows whose value is not a valid name (``None``/absent allowed unless ``required``),
    the :func:`factorize` of the values when ``coded`` and they are all valid).

    Types are checked where the values are handled anyway: required names by the join that
    tests them (it refuses anything but text), optional ones among their distinct values
    (tools, models and task ids repeat: each is checked once)."""
    try:
        codes = factorize(values) if coded else None  # TypeError: an unhashable value
        if required:
            text = values
        else:
            distinct = codes[1] if codes is not None else set(values)
            if not set(map(type, distinct)) <= _OPTIONAL_NAME_TYPES:
                raise TypeError
            text = [v for v in distinct if type(v) is str]
        if valid_names(text):  # TypeError: something other than text among required names
            return np.zeros(len(values), dtype=bool), codes
    except TypeError:
        pass
    return np.array(
        [
            not (type(v) is str and v.isprintable() and v.strip() and len(v) <= MAX_NAME_LENGTH)
            and not (not required and v is None)
            for v in values
        ]
    ), None


_OPTIONAL_NAME_TYPES = frozenset({str, type(None), type(_ABSENT)})


def _numbers(values: list[Any], name: str) -> tuple[np.ndarray, np.ndarray]:
    """(the figures as float64 with NaN where absent, rows to check one by one)."""
    n = len(values)
    types = set(map(type, values))
    if not types <= {int, float, type(None), type(_ABSENT)}:
        bad = np.array([type(v) not in (int, float) and v is not None and v is not _ABSENT for v in values])
        values = [v if type(v) in (int, float) else None for v in values]
    else:
        bad = np.zeros(n, dtype=bool)
    try:
        array = np.array(values, dtype=float)
    except OverflowError:  # an integer beyond float: find it one by one
        array = np.array([v if v is None or abs(v) <= MAX_FIGURE * 10 else np.inf for v in values], dtype=float)
    missing = np.isnan(array)
    if float not in types:
        given = ~missing  # every NaN is an absent figure
    elif type(None) not in types:
        given = np.ones(n, dtype=bool)  # every figure is given: a NaN is one given as such
    elif int(missing.sum()) == values.count(None):
        given = ~missing
    else:  # some record gives NaN itself
        given = np.fromiter(map(operator.is_not, values, repeat(None, n)), dtype=bool, count=n)
    bad |= (given & missing) | bad_figures(array, name)  # a NaN given as such, or out of bounds
    return array, bad


def _file_lists(values: list[Any]) -> tuple[np.ndarray, tuple[np.ndarray, list[Any]] | None]:
    """(rows whose ``files_created`` is not a list of strings (absent ones are ``()``), the
    :func:`factorize` of the lists as tuples when all are: what ``Columns.file_sets`` would
    compute again). Lists repeat, so the names' types are checked in the distinct lists only."""
    if set(map(type, values)) <= {list, tuple}:
        try:
            codes = factorize(list(map(tuple, values)))
        except TypeError:  # something unhashable in a list: not a name
            codes = None
        if codes is not None and set(map(type, chain.from_iterable(codes[1]))) <= {str}:
            return np.zeros(len(values), dtype=bool), codes
    return np.array([not (type(v) in (list, tuple) and all(type(x) is str for x in v)) for v in values]), None


def inconsistent(numeric: Mapping[str, np.ndarray], size: int) -> np.ndarray:
    """Rows breaking a rule across fields: correctness above 1, tests_passed without tests_total
    (or the other way), more tests passed than run, more cached input tokens than input tokens
    or reasoning tokens than output tokens;
    and rows whose total tokens the model derives from their breakdown. A field absent from
    ``numeric`` is absent from every row (a rule needing it holds)."""
    rows = np.zeros(size, dtype=bool)
    given = {f: v for f, v in numeric.items() if f in _RULE_FIELDS}
    with np.errstate(invalid="ignore"):
        if "correctness" in given:
            rows |= given["correctness"] > 1
        passed, total = given.get("tests_passed"), given.get("tests_total")
        if passed is not None or total is not None:
            rows |= _measured(passed, size) != _measured(total, size)
        if passed is not None and total is not None:
            rows |= passed > total
        cached = [np.nan_to_num(given[f]) for f in ("cache_read_tokens", "cache_write_tokens") if f in given]
        if "input_tokens" in given and cached:
            rows |= sum(cached) > given["input_tokens"]  # NaN (no input count) compares false
        if "reasoning_tokens" in given and "output_tokens" in given:
            rows |= given["reasoning_tokens"] > given["output_tokens"]
    if "input_tokens" in given and "output_tokens" in given:  # a total the model derives from the breakdown
        derived = ~np.isnan(given["input_tokens"]) & ~np.isnan(given["output_tokens"])
        rows |= derived if "total_tokens" not in given else derived & np.isnan(given["total_tokens"])
    return rows


_RULE_FIELDS = frozenset(
    {"correctness", "tests_passed", "tests_total", "cache_read_tokens", "cache_write_tokens", "input_tokens",
     "reasoning_tokens", "output_tokens", "total_tokens"}
)  # fmt: skip


def _measured(values: np.ndarray | None, size: int) -> np.ndarray:
    return np.zeros(size, dtype=bool) if values is None else ~np.isnan(values)
