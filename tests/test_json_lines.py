"""The JSON Lines writer of a batch result encodes a column at a time
(``arena_core.engine.jsonlines``); every line must still be the bytes of
``orjson.dumps(to_dict(evaluation))``, whatever the names hold and wherever blocks end."""

from __future__ import annotations

import io
import math

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core import Arena, to_dict
from arena_core.config.settings import ScoringConfig
from arena_core.engine.jsonlines import _numbers, _optional_strings, _strings, json_line_blocks
from arena_core.engine.results import EvaluationBatch
from arena_core.io.writers import write_evaluations

STAMP = "2026-01-01T00:00:00+00:00"
PREFIX = b',"key":'


@given(st.lists(st.text()))
def test_a_column_of_strings_is_each_string_as_orjson_writes_it(values: list[str]) -> None:
    # st.text() draws quotes, backslashes, control characters, U+2028 and emoji: the quick
    # join must be taken only where it gives orjson's bytes.
    assert _strings(values, PREFIX) == [PREFIX + orjson.dumps(v) for v in values]


def test_names_that_need_escaping_take_the_encoder_and_plain_ones_the_join() -> None:
    plain = ["frontend-001/000", "ünïcødé ✓", "with space", "emoji 🚀"]
    assert _strings(plain, PREFIX) == [PREFIX + orjson.dumps(v) for v in plain]
    for odd in ['say "hi"', "back\\slash", "tab\there", "line\nbreak", "\x00", "\u2028"]:
        column = [*plain, odd]
        assert _strings(column, PREFIX) == [PREFIX + orjson.dumps(v) for v in column], odd


def test_a_column_with_none_leaves_the_key_out_there() -> None:
    values = ["aider", None, 'quote"d', "aider", None]
    assert _optional_strings([None, None], PREFIX) == [b"", b""]
    assert _optional_strings(values, PREFIX) == [
        PREFIX + b'"aider"',
        b"",
        PREFIX + b'"quote\\"d"',
        PREFIX + b'"aider"',
        b"",
    ]


@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=False),
            st.sampled_from([0.0, -0.0, 1e16, 1e-7, 5e-324, 87.36, 100.0]),
        ),
    )
)
def test_a_column_of_numbers_is_each_number_as_orjson_writes_it(values: list[float]) -> None:
    import numpy as np

    expected = [PREFIX + (b"null" if math.isnan(v) else orjson.dumps(v)) for v in values]
    assert _numbers(np.array(values), PREFIX) == expected
    strided = np.repeat(np.array(values), 2)[::2]  # a column of a matrix is such a view
    assert strided.flags.c_contiguous == (len(values) < 2)
    assert _numbers(strided, PREFIX) == expected
    ints = np.arange(len(values)) * 7 - 3
    assert _numbers(ints, PREFIX) == [PREFIX + orjson.dumps(int(i)) for i in ints]


def _odd_arena() -> tuple[list[dict], dict[str, dict]]:
    """Names with quotes, backslashes and non-ASCII (names are printable, so nothing else needs
    escaping); tools and models left out on some
    rows; metrics missing on some rows (reweighted, filled); two profiles with different
    dimensions; tools with fewer than three runs on a task (provisional)."""
    tasks = {
        't"1': {"id": 't"1', "category": "debugging", "success_criteria": [{"type": "tests_pass"}]},
        "t\\2": {"id": "t\\2", "success_criteria": [{"type": "no_errors"}]},
        "tâche-3": {"id": "tâche-3", "category": "refactoring", "difficulty": "advanced"},
    }
    names = list(tasks)
    subs = []
    for i in range(60):
        sub: dict = {
            "id": ["run %d", 'run "%d"', "exécution %d", "run\\%d"][i % 4] % i,
            "task_id": names[i % 3] if i < 58 else "tâche-3",
            "total_tokens": 1000 + 37 * i,
            "tool_calls": 3 + i % 7,
            "iterations": 1 + i % 3,
            "execution_time": 30.0 + i,
            "estimated_cost": 0.01 * (1 + i % 5),
            "success": i % 4 != 0,
            "tests_total": 10,
            "tests_passed": i % 11,
        }
        if i % 5:
            sub["tool"] = ["aider", 'cl"aude', "ünï"][i % 3]
        if i % 7:
            sub["model"] = "m\\" + str(i % 2)
        if i % 6 == 0:
            del sub["total_tokens"]
        if i % 9 == 0:
            del sub["estimated_cost"]
        if i % 8 == 1:
            del sub["execution_time"]
        subs.append(sub)
    return subs, tasks


def test_odd_names_missing_metrics_and_block_edges_give_each_evaluations_own_bytes() -> None:
    subs, tasks = _odd_arena()
    config = ScoringConfig(
        missing={"total_tokens": "reweight", "execution_time": "reweight", "estimated_cost": "neutral"},
        weights={"default": {"efficiency": 0.6, "correctness": 0.4}},
    )
    batch = Arena(config, autoload=False).evaluate_many(subs, tasks, evaluated_at=STAMP)
    assert isinstance(batch, EvaluationBatch)
    expected = b"".join(orjson.dumps(to_dict(e)) + b"\n" for e in batch)
    # The arena has what the quick paths must step around (so this test can fail).
    shown = [to_dict(e) for e in batch]
    assert any("tool" not in r for r in shown) and any("filled" in r for r in shown)
    assert any(r.get("provisional") for r in shown)
    assert len({tuple(r["breakdown"]) for r in shown}) == 3  # two profiles, and rows without speed
    assert any(len(r["metric_scores"]) == 2 for r in shown)  # and without tokens
    for block, joined in ((7, 3), (8, 8), (1, 1), (64, 5), (32768, 4096)):
        assert b"".join(json_line_blocks(batch, block=block, joined=joined)) == expected, (block, joined)
    text = io.StringIO()  # a stream without a binary buffer gets the same text
    write_evaluations(batch, "jsonl", text)
    assert text.getvalue().encode() == expected
