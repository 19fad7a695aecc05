"""Columnar files and frames: JSON Lines read by pyarrow, Parquet in and out, pandas/polars/Arrow
frames in and out; each gives exactly what the record path gives, and a bad row is still
reported with its own error."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from arena_core import Arena, ValidationError
from arena_core.cli import main
from arena_core.engine.tables import columns_from_table
from arena_core.examples.synthetic import generate_arena

TASKS, SUBS = generate_arena(tasks=6, submissions_per_task=20, seed=9)
TASK_MAP = {t["id"]: t for t in TASKS}
STAMP = "2026-01-01T00:00:00+00:00"


def _holey(subs: list[dict]) -> list[dict]:
    """Real telemetry has holes: every third run lacks tokens, every fifth its cost and tool."""
    out = []
    for i, s in enumerate(subs):
        s = dict(s)
        s.pop("meta", None)
        if i % 3 == 0:
            s.pop("total_tokens", None)
        if i % 5 == 0:
            s.pop("estimated_cost", None)
            s.pop("tool", None)
        out.append(s)
    return out


RUNS = _holey(SUBS)


def _table(rows: list[dict]) -> pa.Table:
    """Rows as a table with a column for every key any row has (``from_pylist`` would take the
    first row's keys only); a key a row lacks is null there."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return pa.table({k: [r.get(k) for r in rows] for k in keys})


def _reweighting() -> Arena:
    from arena_core.config.settings import ScoringConfig

    return Arena(ScoringConfig(missing={"total_tokens": "reweight", "estimated_cost": "reweight"}), autoload=False)


def _same(a, b) -> None:
    assert [json.dumps(r, sort_keys=True) for r in a.records()] == [json.dumps(r, sort_keys=True) for r in b.records()]


@pytest.mark.parametrize("frame", ["arrow", "pandas", "polars"])
def test_a_frame_scores_as_its_records_do(frame: str) -> None:
    arena = _reweighting()
    table = _table(RUNS)
    data = {"arrow": table, "pandas": table.to_pandas(), "polars": pl.from_arrow(table)}[frame]
    expected = arena.evaluate_many(RUNS, TASK_MAP, evaluated_at=STAMP)
    got = arena.evaluate_many(data, TASK_MAP, evaluated_at=STAMP)
    assert got.path == "batch"
    _same(got, expected)


def test_a_table_columns_are_refused_only_where_a_record_would_be() -> None:
    arena = _reweighting()
    table = _table(RUNS)
    assert columns_from_table(table) is not None
    bad = [dict(r) for r in RUNS]
    bad[7]["execution_time"] = -3.0
    with pytest.raises(ValidationError) as caught:
        arena.evaluate_many(_table(bad), TASK_MAP)
    assert caught.value.field == "execution_time" and bad[7]["id"] in caught.value.record
    nulls = [dict(r) for r in RUNS]
    nulls[3]["iterations"] = None  # a null iterations is absent in a table: the default, not an error
    result = arena.evaluate_many(_table(nulls), TASK_MAP, evaluated_at=STAMP)
    absent = [dict(r) for r in RUNS]
    del absent[3]["iterations"]
    _same(result, arena.evaluate_many(absent, TASK_MAP, evaluated_at=STAMP))


def test_a_file_name_holding_a_nul_is_a_name_like_any_other() -> None:
    """Lists of files are told apart by their names' codes, not joined into text: a name holding
    a NUL, or the bytes of two names, stays one name, as the records keep it."""
    rows = [dict(r) for r in RUNS]
    main_file = next(c for c in TASKS[0]["success_criteria"] if c["type"] == "file_exists")["file_path"]
    rows[0]["files_created"] = [f"x\x00{main_file}"]  # holds the path's bytes, is not the path
    rows[0]["task_id"] = TASKS[0]["id"]
    table = _table(rows)
    columns = columns_from_table(table)
    assert columns is not None and columns.files_created[0] == (f"x\x00{main_file}",)
    arena = _reweighting()
    got, expected = arena.evaluate_many(table, TASK_MAP, evaluated_at=STAMP), arena.evaluate_many(rows, TASK_MAP, evaluated_at=STAMP)
    _same(got, expected)
    assert got[0].criteria[[c.type for c in got[0].criteria].index("file_exists")].status == "failed"


def test_lists_of_files_are_coded_as_the_records_code_them() -> None:
    """Every distinct list (empty, an empty name, names that join into another's, the same names
    in another order, repeated names) gets its own code, shared by the rows holding it, in the
    order rows first hold them: what the records' factorize gives; in a slice, on its rows."""
    from arena_core.engine.columns import factorize
    from arena_core.engine.tables import _file_lists

    rng = np.random.default_rng(11)
    pool = ["", "a", "b", "a\x00b", "ab", "src/app.py", "é"]
    lists = [[], [""], ["a", "b"], ["b", "a"], ["a\x00b"], ["ab"], ["a", "a"], ["a", "b", "a"]]
    lists += [list(rng.choice(pool, size=k)) for k in rng.integers(0, 6, 400)]
    column = pa.array(lists, pa.list_(pa.string()))
    single = pa.array([[name] for name in rng.choice(pool, 300)], pa.large_list(pa.string()))  # a name each
    for part in (column, column.slice(37, 200), pa.chunked_array([column.slice(0, 100), column.slice(100)]), single, single.slice(9)):
        coded = _file_lists(part)
        held = part.to_pylist()
        codes, distinct = factorize([tuple(x) for x in held])
        assert coded is not None and coded.codes.tolist() == codes.tolist() and coded.distinct == distinct
    assert _file_lists(pa.array([["a", None]], pa.list_(pa.string()))) is None  # a null name: the records say


def test_batch_to_arrow_pandas_and_polars_hold_the_numbers_of_the_evaluations() -> None:
    result = _reweighting().evaluate_many(RUNS, TASK_MAP, evaluated_at=STAMP)
    table = result.to_arrow()
    assert table.num_rows == len(RUNS)
    evaluations = list(result)
    assert table["overall_score"].to_pylist() == [e.overall_score for e in evaluations]
    assert table["overall_ranking"].to_pylist() == [e.overall_ranking for e in evaluations]
    tokens = table["metric_scores.token_efficiency"].to_pylist()
    for ev, value in zip(evaluations, tokens, strict=True):
        expected = ev.metric_scores.get("token_efficiency")
        assert (value is None or math.isnan(value)) if expected is None else value == expected
    filled = table["filled"].to_pylist()
    assert filled[0] == "token_efficiency=reweight;cost=reweight"  # run 0 lacks tokens and cost
    assert filled[1] == ""  # run 1 measured everything
    frame = result.to_pandas()
    assert list(frame["submission_id"]) == [e.submission_id for e in evaluations]
    polars_frame = result.to_polars()
    cost = polars_frame["cost_score"].to_list()
    assert [None if math.isnan(v) else v for v in cost] == [e.scores.get("cost") for e in evaluations]


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_parquet_in_and_out_and_pyarrow_jsonl_give_what_the_record_reader_gives(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps(TASKS))
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in SUBS))
    array = tmp_path / "runs.json"  # a JSON array: always read record by record
    array.write_text(json.dumps(SUBS))
    parquet = tmp_path / "runs.parquet"
    pq.write_table(_table([{k: v for k, v in r.items() if k != "meta"} for r in SUBS]), parquet)
    outputs = {}
    for source in (runs, array, parquet):
        out = tmp_path / f"{source.stem}{source.suffix}.csv"
        code, printed = _cli("score", str(source), "--tasks", str(tasks), "--format", "csv", "-o", str(out))
        assert code == 0, printed
        outputs[source.suffix] = out.read_text()
    assert outputs[".jsonl"] == outputs[".json"] == outputs[".parquet"]
    scores = tmp_path / "scores.parquet"
    code, printed = _cli("score", str(runs), "--tasks", str(tasks), "--format", "parquet", "-o", str(scores))
    assert code == 0, printed
    written = pq.read_table(scores)
    csv_rows = pd.read_csv(tmp_path / "runs.jsonl.csv")
    assert written.num_rows == len(SUBS)
    assert written["submission_id"].to_pylist() == list(csv_rows["submission_id"])
    assert written["overall_score"].to_pylist() == list(csv_rows["overall_score"])
    code, printed = _cli("score", str(runs), "--tasks", str(tasks), "--format", "parquet")
    assert code == 2 and "give -o FILE" in printed


def test_a_bad_line_is_still_reported_with_its_line_when_pyarrow_reads_jsonl(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps(TASKS))
    lines = [json.dumps(r) for r in SUBS]
    bad = dict(SUBS[4])
    bad["tool_calls"] = -2
    lines[4] = json.dumps(bad)
    runs = tmp_path / "runs.jsonl"
    runs.write_text("\n".join(lines) + "\n")
    code, printed = _cli("score", str(runs), "--tasks", str(tasks), "-o", str(tmp_path / "out.jsonl"))
    assert code == 2
    assert f"runs.jsonl:5: submission {bad['id']!r}: tool_calls" in printed
    assert not (tmp_path / "out.jsonl").exists()
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    code, printed = _cli("score", str(broken), "--tasks", str(tasks))
    assert code == 2 and "broken.parquet: not a readable Parquet file" in printed


def _arrays() -> list[pa.ChunkedArray | pa.Array]:
    """Numbers and booleans as tables hold them: several chunks, slices that start inside a
    byte of a bitmap, nulls, and empty."""
    ints = pa.array([3, None, 7, 11, None, 13, 17, 19, 23], type=pa.int64())
    floats = pa.array([0.5, 1.25, None, -0.0, 1e300, 7.0, None, 2.0, 9.5])
    flags = pa.array([True, False, True, True, False, False, True, False, True, True, False])
    return [
        ints,
        ints.slice(3),
        ints.slice(1, 5),
        pa.chunked_array([ints.slice(0, 4), ints.slice(5)]),
        floats.slice(2, 6),
        pa.chunked_array([floats, floats.slice(7)]),
        pa.array([1, 2, 3], type=pa.int32()).slice(1),
        flags,
        flags.slice(3),
        pa.chunked_array([flags.slice(5), flags.slice(1, 3)]),
        pa.array([], type=pa.int64()),
    ]


@pytest.mark.parametrize("array", _arrays(), ids=lambda a: f"{a.type}-{len(a)}")
def test_arrays_read_from_their_buffers_equal_pyarrows_own_conversion(array) -> None:
    import numpy as np

    from arena_core.io.arrays import to_numpy

    expected = array.to_numpy(zero_copy_only=False) if isinstance(array, pa.Array) else array.to_numpy()
    got = to_numpy(array)
    assert got.dtype.kind == expected.dtype.kind
    np.testing.assert_array_equal(got, expected)


def test_arrays_built_from_their_buffers_equal_pyarrows_own_conversion() -> None:
    import numpy as np

    from arena_core.io.arrays import from_numpy, repeated, text_array

    for values in (np.arange(5, dtype=np.int64), np.array([0.5, np.nan, -2.0]), np.array([True, False, True] * 4),
                   np.arange(10, dtype=np.int32)[::3], np.zeros(0, dtype=np.int64)):  # fmt: skip
        built, expected = from_numpy(values), pa.array(values)
        assert built.type == expected.type and built.null_count == expected.null_count == 0
        np.testing.assert_array_equal(built.to_numpy(zero_copy_only=False), values)  # NaN equals NaN here
    for texts in (["a", None, "é", ""], [], [None], ["x" * 1000, "y"]):
        assert text_array(texts).equals(pa.array(texts, type=pa.string())), texts
    assert repeated("task_id=é", 3).equals(pa.array(["task_id=é"] * 3, pa.string()))
    assert repeated("k", 0).equals(pa.array([], pa.string()))


@pytest.mark.parametrize(
    "ids",
    [["run-1", "run 2"], ["run-1", "   "], ["", "a"], ["a\tb"], ["a\x7f"], ["x" * 1000], ["x" * 1001], ["é"], [" a "],
     ["a", " "], []],
)  # fmt: skip
def test_ids_read_from_their_bytes_are_valid_names_exactly_when_the_records_say_so(ids: list[str]) -> None:
    from arena_core.engine.records import valid_names
    from arena_core.engine.tables import _printable_ascii_names

    fast = _printable_ascii_names(pa.chunked_array([pa.array(["pad", *ids]).slice(1)]))
    assert fast == valid_names(ids) or (not fast and not all(i.isascii() for i in ids))


def test_ids_read_from_a_table_become_strings_only_when_read() -> None:
    from arena_core import Arena
    from arena_core.io.arrays import ArrowText

    runs = [{k: v for k, v in s.items() if k != "meta"} for s in SUBS]
    table = pa.table({k: [r.get(k) for r in runs] for k in runs[0]})
    columns = columns_from_table(table)
    assert columns is not None and isinstance(columns.ids, ArrowText)
    arena = Arena(autoload=False)
    board = arena.leaderboard(arena.evaluate_many(columns.ids_checked(), TASK_MAP))
    assert board and columns.ids._values is None  # a leaderboard never read them
    written = arena.evaluate_many(columns_from_table(table), TASK_MAP).to_arrow()["submission_id"]
    assert written.to_pylist() == [r["id"] for r in runs] and written.type == pa.string()
    assert columns.ids == [r["id"] for r in runs] and list(columns.ids) == columns.ids[:]


def test_reading_a_file_into_columns_leaves_pandas_unimported(tmp_path: Path) -> None:
    """pyarrow's ``to_numpy`` imports pandas whenever it is installed (it is, here: these tests
    use it), about 0.15 s of every command; the table reader converts without it."""
    import subprocess
    import sys

    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in RUNS))
    script = (
        "import sys, pyarrow.json; from arena_core.engine.tables import columns_from_table; "
        f"columns = columns_from_table(pyarrow.json.read_json({str(runs)!r})); "
        "assert columns is not None and columns.size == %d, columns; "
        "print('pandas' in sys.modules)" % len(RUNS)
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_text_read_as_parquet_dictionaries_is_coded_as_the_strings_would_be(tmp_path: Path) -> None:
    """Tasks and tools read as Arrow dictionaries (chunks of their own, values no kept row holds,
    nulls, a slice, a taken subset) give the codes and values that coding their strings gives:
    first-seen order, only values held, a null as a value; and the same columns as the table
    of strings."""
    import numpy as np
    import pyarrow.compute as pc

    from arena_core.io.arrays import first_seen
    from arena_core.io.pieces import open_source, rows_of_tasks

    rng = np.random.default_rng(21)
    words = ["t-b", "t-a", "é", "t-c", None, "t-d"]
    for trial in range(200):
        chunks = [pa.array([words[k] for k in rng.integers(0, len(words), rng.integers(0, 9))], pa.string()) for _ in range(3)]
        dictionaries = [c.dictionary_encode() for c in chunks]
        column = pa.chunked_array(dictionaries, pa.dictionary(pa.int32(), pa.string()))
        if trial % 3 == 1:  # a slice, whose dictionaries hold values its rows do not
            column = column.slice(2, max(0, len(column) - 4))
        if trial % 3 == 2 and len(column):
            column = column.take(pa.array(rng.integers(0, len(column), 5)))
        strings = column.cast(pa.string())
        encoded = pc.dictionary_encode(strings, null_encoding="encode").combine_chunks()
        codes, values = first_seen(column)
        assert values == encoded.dictionary.to_pylist() and codes.tolist() == encoded.indices.to_pylist(), trial
    # As the streaming path reads a file: the same columns as from its strings.
    runs = [{k: v for k, v in s.items() if k != "meta"} for s in SUBS]
    pq.write_table(pa.table({k: [r.get(k) for r in runs] for k in runs[0]}), tmp_path / "runs.parquet", row_group_size=7)
    source = open_source([tmp_path / "runs.parquet"])
    tasks = sorted({r["task_id"] for r in runs})[1:]
    coded = rows_of_tasks(source.read(source.pieces, coded=("task_id", "tool", "model")), tasks).drop_columns(["__row"])
    plain = rows_of_tasks(source.read(source.pieces), tasks).drop_columns(["__row"])
    assert pa.types.is_dictionary(coded["task_id"].type) and not pa.types.is_dictionary(plain["task_id"].type)
    ours, theirs = columns_from_table(coded), columns_from_table(plain)
    assert ours is not None and theirs is not None
    for name in ("task_ids", "tools", "models"):
        assert list(getattr(ours, name)) == list(getattr(theirs, name)) and getattr(ours, name).distinct == getattr(theirs, name).distinct


def test_the_table_reader_is_refused_a_file_exactly_where_a_line_by_line_look_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines are found a block at a time and only the doubtful ones looked at alone; on random
    files of objects, blank lines, other values, CRLF ends, deep lines and lines longer than the
    longest given to Arrow (here 40 bytes), read in blocks that split lines anywhere, the answer
    is that of looking at every line in turn."""
    import random

    from arena_core.io import tables
    from arena_core.io.tables import _depth, _object_or_blank, table_reader_refuses

    monkeypatch.setattr(tables, "LONGEST_TABLE_LINE", 40)

    def each_line(data: bytes, limit: int) -> bool:
        return any((len(line) > limit and _depth(line) > limit) or not _object_or_blank(line) or len(line) > 40
                   for line in data.split(b"\n"))  # fmt: skip

    pieces = [b'{"a": 1}', b'  {"b": [2]}', b"", b"   ", b"null", b"[1]", b"5", b'{"d": [[[[[[1]]]]]]}',
              b'{"s": "[[[[[[["}', b'\t{"t": 1}', b'{"a": 1}\r', b'{"long": "' + b"x" * 30 + b'"}']  # fmt: skip
    rng = random.Random(3)
    refused = 0
    for trial in range(400):
        weights = [30, 5, 3, 2, 1, 1, 1, 2, 2, 2, 3, 1] if trial % 2 else [30, 5, 3, 2, 0, 0, 0, 2, 2, 2, 3, 0]
        data = b"\n".join(rng.choices(pieces, weights, k=rng.randint(0, 30)))
        data += b"\n" if rng.random() < 0.5 else b""
        (tmp_path / "f.jsonl").write_bytes(data)
        limit, chunk = rng.choice([3, 6, 50]), rng.randint(1, 64)
        expected = each_line(data, limit)
        assert table_reader_refuses(tmp_path / "f.jsonl", limit, chunk) == expected, (data, limit, chunk)
        refused += expected
    assert 50 < refused < 350  # both answers were asked for
