"""A meta nested deeper than the model takes is refused on every path, as the model refuses it:
built per run, read into columns from records, or read straight from an Arrow table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clirun import run_arena
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core import Submission, ValidationError, structure
from arena_core.engine import nesting as batch_nesting
from arena_core.engine.records import columns_from_records
from arena_core.model.scalars import MAX_NESTING, nesting


def _deep(levels: int) -> dict[str, Any]:
    """A table nested ``levels`` deep (itself the first level)."""
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"x": value}
    return value


def _outcome(call: Any) -> str:
    try:
        call()
    except ValidationError as exc:
        return str(exc)
    return "accepted"


@pytest.mark.parametrize("levels", [MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1, 3 * MAX_NESTING])
@pytest.mark.parametrize("under", ["meta", "extra", "list"])
def test_the_columns_refuse_a_deep_meta_exactly_where_the_model_does(levels: int, under: str) -> None:
    """Under ``meta``, under an unknown key (which the model puts under its meta: one level
    more) and as a list inside the meta, at the limit and past it."""
    record: dict[str, Any] = {"id": "deep", "task_id": "t"}
    if under == "meta":
        record["meta"] = _deep(levels)
    elif under == "extra":
        record["notes"] = _deep(levels - 1)
    else:
        record["meta"] = {"flags": [_deep(levels - 2)]}
    honest = {"id": "honest", "task_id": "t", "meta": {"flags": ["a"]}}
    expected = _outcome(lambda: structure(record, Submission))
    assert (expected == "accepted") == (levels <= MAX_NESTING)  # the cases straddle the model's limit
    assert _outcome(lambda: columns_from_records([honest, record], lambda r: structure(r, Submission))) == expected


_JSON = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=2)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    metas=st.lists(st.one_of(st.just(None), st.dictionaries(st.sampled_from("abc"), _JSON, max_size=3)), max_size=6),
    extra=st.lists(_JSON, max_size=6),
    limit=st.integers(1, 5),
)
def test_the_batch_walk_finds_the_rows_a_walk_per_run_finds(metas: list[Any], extra: list[Any], limit: int) -> None:
    """``deep_rows``, a level at a time over every run, against ``nesting`` of each run's meta
    as the model holds it, at limits that the random tables straddle."""
    extra = (extra + [None] * len(metas))[: len(metas)]
    expected = [
        row for row, meta in enumerate(metas)
        if nesting({"notes": extra[row], **(meta or {})}) > limit
    ]  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batch_nesting, "MAX_NESTING", limit)
        assert batch_nesting.deep_rows(metas, {"notes": extra}) == expected


@pytest.mark.parametrize("under", ["meta", "extra"])
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_file_with_a_deep_meta_is_refused_by_the_commands_that_score(tmp_path: Path, suffix: str, under: str) -> None:
    """A JSON Lines file (read as an Arrow table, whose meta column's type, or an unknown key's
    column's one level less, is too deep) and a JSON array (read as records): ``arena score``
    names the record and the field, as ``arena report`` always did; at the limit the file is
    scored."""
    pytest.importorskip("pyarrow")
    from arena_core.engine.tables import columns_from_table
    from arena_core.io.tables import read_table

    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"id": "t", "category": "debugging", "difficulty": "beginner", "success_criteria": []}]))
    for levels, refused in ((MAX_NESTING, False), (MAX_NESTING + 1, True)):
        spent = {"task_id": "t", "total_tokens": 10, "tool_calls": 2, "execution_time": 3.0, "estimated_cost": 0.1}
        held = {"meta": _deep(levels)} if under == "meta" else {"notes": _deep(levels - 1)}
        runs = [{"id": "honest", **spent}, {"id": "deep", **spent, **held}]
        path = tmp_path / f"runs{suffix}"
        path.write_text("".join(json.dumps(r) + "\n" for r in runs) if suffix == ".jsonl" else json.dumps(runs))
        if suffix == ".jsonl":  # the table path refuses the file only for its meta's depth
            assert (columns_from_table(read_table(path)) is None) == refused
        done = run_arena("score", str(path), "--tasks", str(tasks), "-o", str(tmp_path / "out.jsonl"), cwd=tmp_path)
        if refused:
            assert done.returncode == 2 and not (tmp_path / "out.jsonl").exists()
            assert f"{path.name}:" in done.stderr and "submission 'deep': meta: expected a table nested at most" in done.stderr
        else:
            assert done.returncode == 0, done.stderr
            (tmp_path / "out.jsonl").unlink()
