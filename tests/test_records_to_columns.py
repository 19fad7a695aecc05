"""Records to columns in one pass gives exactly what building a model per record gives.

For valid records: the same columns. For invalid ones: the same error, word for word.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core import Submission, ValidationError, structure
from arena_core.engine.columns import NUMERIC_FIELDS, Columns
from arena_core.engine.records import columns_from_records
from arena_core.model.serde import structure_strict

GOOD_NAME = st.sampled_from(["a", "aider/diff", "claude-code", "gpt-4.1", "x y", "ünï"])
ODD_VALUES = st.sampled_from(
    [None, -1, -0.5, 0, 0.0, 3.0, 2.5, 1, 10**20, 10**400, 1e15, 1e16, math.nan, math.inf, "12", True, [], {}]
)


@st.composite
def records(draw: st.DrawFn, *, valid: bool) -> dict[str, Any]:
    record: dict[str, Any] = {"id": draw(GOOD_NAME) + str(draw(st.integers(0, 10**6))), "task_id": "t"}
    for field in ("tool", "model"):
        if draw(st.booleans()):
            record[field] = draw(GOOD_NAME)
    for field in ("total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost"):
        if draw(st.booleans()):
            low = 1 if field == "iterations" else 0
            record[field] = draw(st.integers(low, 10**6) if field in ("total_tokens", "tool_calls", "iterations")
                                 else st.floats(0, 1e6))
    if draw(st.booleans()):
        total = draw(st.integers(0, 20))
        record["tests_total"], record["tests_passed"] = total, draw(st.integers(0, total))
    if draw(st.booleans()):
        record["correctness"] = draw(st.floats(0, 1))
    if draw(st.booleans()):
        record["success"] = draw(st.booleans())
    if draw(st.booleans()):
        record["files_created"] = draw(st.lists(st.sampled_from(["a.py", "b/c.ts"]), max_size=3))
    if draw(st.booleans()):
        record["notes"] = "kept under meta"
    if draw(st.booleans()):
        record["meta"] = draw(st.dictionaries(st.sampled_from(["flags", "notes", "derived", "run"]),
                                              st.sampled_from([["step_limit"], "from meta", 1]), max_size=3))  # fmt: skip
    if draw(st.booleans()) and "total_tokens" not in record:  # the model sums them, and says so in meta
        record["input_tokens"], record["output_tokens"] = draw(st.integers(0, 10**5)), draw(st.integers(0, 10**5))
    if not valid:
        field = draw(st.sampled_from([*NUMERIC_FIELDS, "id", "tool", "model", "success", "files_created", "meta"]))
        record[field] = draw(st.one_of(ODD_VALUES, st.sampled_from(["", " ", "a\x1b", "b\u202e", ["a", 1], ["a", ["b"]], [{"x": 1}], "s"])))
    return record


def _same(a: Columns, b: Columns) -> None:
    assert list(a.ids) == list(b.ids) and list(a.task_ids) == list(b.task_ids)
    assert list(a.tools) == list(b.tools) and list(a.models) == list(b.models)
    assert a.success.tolist() == b.success.tolist()
    assert [tuple(f) for f in a.files_created] == [tuple(f) for f in b.files_created]
    for name in NUMERIC_FIELDS:
        np.testing.assert_array_equal(a.numeric[name], b.numeric[name], err_msg=name)


def _structure(record: Any) -> Submission:
    return structure(record, Submission)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(batch=st.lists(records(valid=True), min_size=1, max_size=12))
def test_valid_records_give_the_columns_of_their_models(batch: list[dict[str, Any]]) -> None:
    expected = Columns.from_submissions([_structure(r) for r in batch])
    got = columns_from_records(batch, _structure)
    assert got is not None
    _same(got, expected)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(batch=st.lists(records(valid=True), min_size=1, max_size=12))
def test_the_columns_keep_each_runs_meta_as_its_model_holds_it(batch: list[dict[str, Any]]) -> None:
    """``with_meta``: the meta a command groups and filters by, read from the records (unknown
    keys under it, the record's own meta winning, ``derived`` where the model sums the tokens)."""
    got = columns_from_records(batch, _structure, with_meta=True)
    assert got is not None and got.metas is not None
    assert [dict(m) for m in got.metas] == [dict(_structure(r).meta) for r in batch]
    assert columns_from_records(batch, _structure).metas is None  # kept only when asked for


@settings(max_examples=200, deadline=None, derandomize=True)
@given(batch=st.lists(records(valid=True), max_size=6), bad=records(valid=False), position=st.integers(0, 6))
def test_an_invalid_record_raises_the_models_own_error_or_is_taken_from_its_model(
    batch: list[dict[str, Any]], bad: dict[str, Any], position: int
) -> None:
    batch.insert(min(position, len(batch)), bad)
    try:
        expected = Columns.from_submissions([_structure(r) for r in batch])
    except ValidationError as exc:
        with pytest.raises(ValidationError) as info:
            columns_from_records(batch, _structure)
        failing = next(i for i, r in enumerate(batch) if _fails(r))
        assert str(info.value) == str(exc.at_position(failing))  # a record without an id is named by position
        return
    got = columns_from_records(batch, _structure)  # accepted by the models (3.0 for a count): same columns
    assert got is not None
    _same(got, expected)


def _fails(record: dict[str, Any]) -> bool:
    try:
        _structure(record)
    except ValidationError:
        return True
    return False


def test_strict_mode_refuses_unknown_keys_as_the_model_does() -> None:
    batch = [{"id": "a", "task_id": "t", "total_tokens": 5}, {"id": "b", "task_id": "t", "tokens": 5}]
    with pytest.raises(ValidationError, match="b.*tokens: expected a known field.*did you mean 'total_tokens'"):
        columns_from_records(batch, lambda r: structure_strict(r, Submission), strict=True)
    assert columns_from_records(batch, _structure) is not None  # not strict: kept under meta


def test_models_and_workspaces_take_the_per_record_path() -> None:
    assert columns_from_records([Submission(id="a", task_id="t")], _structure) is None
    assert columns_from_records([{"id": "a", "task_id": "t", "workspace": "/w"}], _structure) is None


def test_scoring_pauses_the_cyclic_collector_and_restores_it() -> None:
    """evaluate_many pauses the cyclic collector (millions of acyclic records) and leaves it as
    it found it: on stays on, off (a host's choice) stays off, also when scoring fails."""
    import gc

    from arena_core import Arena, ValidationError
    from arena_core.engine.collector import collector_paused
    from arena_core.examples.synthetic import generate_arena

    tasks, subs = generate_arena(tasks=2, submissions_per_task=6, seed=1)
    task_map = {t["id"]: t for t in tasks}
    arena = Arena(autoload=False)
    seen = []
    original = arena.structure_submission

    def spy(record):
        seen.append(gc.isenabled())
        return original(record)

    arena.structure_submission = spy  # called for a record the vectorised checks doubt
    was = gc.isenabled()
    try:
        gc.enable()
        with pytest.raises(ValidationError):
            arena.evaluate_many([*subs[:-1], {**subs[-1], "tool_calls": -1}], task_map)
        assert seen and seen[-1] is False  # paused while scoring
        assert gc.isenabled()  # restored after the error
        gc.disable()
        arena.evaluate_many(subs, task_map)
        assert not gc.isenabled()  # a host's choice is kept
        gc.enable()
        with collector_paused():
            with collector_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_the_rules_across_fields_treat_an_absent_field_as_absent_from_every_row() -> None:
    """A table gives only the fields it has; the rules then read as if the others were NaN."""
    from arena_core.engine.records import inconsistent

    rng = np.random.default_rng(11)
    n = 400
    full = {f: np.where(rng.random(n) < 0.3, np.nan, rng.integers(0, 6, n).astype(float)) for f in NUMERIC_FIELDS}
    full["correctness"] = rng.random(n) * 1.2
    expected_any = False
    for _ in range(300):
        kept = {f: v for f, v in full.items() if rng.random() < 0.5}
        got = inconsistent(kept, n)
        assert (got == _rules({f: kept.get(f, np.full(n, np.nan)) for f in NUMERIC_FIELDS})).all(), sorted(kept)
        expected_any |= bool(got.any())
    assert expected_any


def _rules(v: dict[str, np.ndarray]) -> np.ndarray:
    """The rules written out on every field (NaN: absent), as the model's validators state them."""
    with np.errstate(invalid="ignore"):
        cached = np.nan_to_num(v["cache_read_tokens"]) + np.nan_to_num(v["cache_write_tokens"])
        return (
            (v["correctness"] > 1)
            | (np.isnan(v["tests_passed"]) != np.isnan(v["tests_total"]))
            | (v["tests_passed"] > v["tests_total"])
            | (cached > v["input_tokens"])
            | (v["reasoning_tokens"] > v["output_tokens"])
            | (np.isnan(v["total_tokens"]) & ~np.isnan(v["input_tokens"]) & ~np.isnan(v["output_tokens"]))
        )


def test_a_figures_bounds_are_checked_alike_with_or_without_holes() -> None:
    """The check of a column in bounds (its usual case, taken in fewer passes) and of one with a
    NaN, an infinity or a value out of bounds flag the same rows as the rule written out."""
    from arena_core.engine.columns import FIGURE_MINIMUM, INTEGER_FIELDS, MAX_FIGURE, bad_figures

    rng = np.random.default_rng(12)
    odd = [math.nan, math.inf, -math.inf, -1.0, 0.5, 0.0, 1.0, MAX_FIGURE, MAX_FIGURE * 2, 3.25]
    flagged = 0
    for name in ("iterations", "total_tokens", "execution_time", "estimated_cost"):
        for case in range(200):
            values = rng.integers(1, 50, 64).astype(float)
            if name not in INTEGER_FIELDS:
                values += rng.random(64)
            if case % 2:  # about half the columns hold odd values somewhere
                values[rng.integers(0, 64, 3)] = rng.choice(odd, 3)
            with np.errstate(invalid="ignore"):
                minimum = FIGURE_MINIMUM.get(name, 0.0)
                expected = ~np.isnan(values) & ~((values >= minimum) & (values <= MAX_FIGURE))
                if name in INTEGER_FIELDS:
                    expected |= np.isfinite(values) & (values != np.floor(values))
            got = bad_figures(values, name)
            assert got.dtype == bool and (got == expected).all(), (name, values)
            flagged += int(got.any())
    assert 0 < flagged < 800


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    batch=st.lists(records(valid=True), min_size=1, max_size=10, unique_by=lambda r: r["id"]),
    blank=st.lists(st.sampled_from([b"\n", b"  \n", b"\r\n"]), max_size=3),
    block=st.integers(1, 64),
    other_task=st.booleans(),
)
def test_the_metas_read_beside_a_table_are_the_records_own(
    tmp_path_factory: pytest.TempPathFactory, batch: list[dict[str, Any]], blank: list[bytes], block: int, other_task: bool
) -> None:
    """``line_metas``, the metas of a file whose columns came from an Arrow table, equal what
    the records' models hold, the file read in blocks that split lines (blank lines skipped, a
    task's runs only when asked), so the table path keeps exactly the record path's metas."""
    import orjson

    from arena_core.engine import tablemetas

    if other_task:
        batch[0] = {**batch[0], "task_id": "u"}
    lines = [orjson.dumps(r) + b"\n" for r in batch]
    for at, line in enumerate(blank):
        lines.insert(at * 2, line)
    path = tmp_path_factory.mktemp("metas") / "runs.jsonl"
    path.write_bytes(b"".join(lines).rstrip(b"\n"))  # the last line unended
    present = set().union(*batch)
    kept = [r for r in batch if r["task_id"] == "t"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tablemetas, "_BLOCK", block)
        got = tablemetas.line_metas(path, present, [r["id"] for r in kept], "t")
        assert got is not None
        assert [dict(m) for m in got] == [dict(_structure(r).meta) for r in kept]
        assert tablemetas.line_metas(path, present, [r["id"] for r in reversed(batch)] + ["x"]) is None  # other rows
        assert tablemetas.line_metas(path, present, [r["id"] for r in batch]) is not None


@pytest.mark.parametrize(
    "line",
    [b'{"id": "b", "meta": "text"}', b'{"id": "b", "meta": null}', b'["id", "b"]', b'{"id": "b"', b'{"id": "b"} x'],
)
def test_a_line_the_table_path_cannot_vouch_for_sends_the_file_to_the_records(tmp_path, line: bytes) -> None:
    """A meta that is not a table (or an explicit null), a line that is not one object: no metas
    (the record reader then reads the file and words the error at its line)."""
    from arena_core.engine.tablemetas import line_metas

    path = tmp_path / "runs.jsonl"
    path.write_bytes(b'{"id": "a", "meta": {"run": 1}}\n' + line + b"\n")
    assert line_metas(path, {"id", "meta"}, ["a", "b"]) is None
    path.write_bytes(b'{"id": "a", "meta": {"run": 1}}\n{"id": "b", "meta": {}}\n')
    assert line_metas(path, {"id", "meta"}, ["a", "b"]) == [{"run": 1}, {}]
