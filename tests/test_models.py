"""Models and the dict boundary: spec-shaped dicts in, clear errors for bad input, dicts out."""

from __future__ import annotations

import math

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core import Baseline, Evaluation, Submission, Task, ValidationError, structure, to_dict
from arena_core.model.records import SuccessCriterion


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        ({"id": "s1", "total_tokens": -5}, "total_tokens", "submission 's1': total_tokens: expected a finite number >= 0, got -5"),
        ({"id": "s1", "total_tokens": "12"}, "total_tokens", "submission 's1': total_tokens: expected a whole number, got '12'"),
        ({"id": "s1", "tool_calls": 2.5}, "tool_calls", "expected a whole number, got 2.5"),
        ({"id": "s1", "execution_time": math.nan}, "execution_time", "expected a finite number >= 0, got nan"),
        ({"id": "s1", "execution_time": math.inf}, "execution_time", "expected a finite number >= 0, got inf"),
        ({"id": "s1", "estimated_cost": "cheap"}, "estimated_cost", "expected a number, got 'cheap'"),
        ({"id": "s1", "iterations": 0}, "iterations", "expected a finite number >= 1, got 0"),
        ({"id": "s1", "success": "false"}, "success", "expected true or false, got 'false'"),
        ({"id": "s1", "files_created": "app.py"}, "files_created", "expected a list of strings, got 'app.py'"),
        ({"id": "s1", "total_tokens": True}, "total_tokens", "expected a whole number, got True"),
        ({"id": "s1", "correctness": 35.6}, "correctness", "expected a pass rate between 0 and 1, got 35.6"),
        ({"id": "s1", "tests_passed": 5, "tests_total": 3}, "tests_passed", "expected at most tests_total (3), got 5"),
        ({"total_tokens": 3}, "id", "submission (no id): id: expected a value (the field is required)"),
        ({"id": ""}, "id", "expected a non-empty string"),
    ],
)
def test_bad_submission_fields_are_named(record: dict, field: str, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        structure(record, Submission)
    assert info.value.field == field
    assert message in str(info.value)


def test_a_submission_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(ValidationError, match="expected a submission record"):
        structure(["s1", 100], Submission)


def test_nested_errors_name_the_path_inside_the_task() -> None:
    with pytest.raises(ValidationError) as info:
        structure({"id": "t1", "success_criteria": [{"type": "no_errors"}, {"type": "x", "weight": -1}]}, Task)
    assert str(info.value) == "task 't1': success_criteria.1.weight: expected a finite number >= 0, got -1.0"
    with pytest.raises(ValidationError, match=r"task 't1': success_criteria.0: expected a criterion table"):
        structure({"id": "t1", "success_criteria": [{"file_path": "a.py"}]}, Task)
    with pytest.raises(ValidationError, match=r"task 't1': default_baseline.min_tokens: expected a value"):
        structure({"id": "t1", "default_baseline": {"median_tokens": 1}}, Task)


def test_baseline_order_of_min_median_max_is_enforced(baseline: dict) -> None:
    with pytest.raises(ValidationError, match="median_cost: expected min_cost <= median_cost <= max_cost"):
        structure({**baseline, "median_cost": 5.0}, Baseline)


def test_extra_keys_are_kept_under_meta_and_round_trip() -> None:
    record = {"id": "s1", "total_tokens": 10, "tool_calls": 1, "run": "r7", "meta": {"date": "2025-01-01"}}
    sub = structure(record, Submission)
    assert sub.meta == {"run": "r7", "date": "2025-01-01"}
    assert to_dict(sub) == {"id": "s1", "total_tokens": 10, "tool_calls": 1, "meta": {"run": "r7", "date": "2025-01-01"}}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (Submission("s1", 10, 2, iterations=3, files_created=("a.py",)),
         {"id": "s1", "total_tokens": 10, "tool_calls": 2, "iterations": 3, "files_created": ["a.py"]}),
        (Task("t1", "debugging", "advanced", (SuccessCriterion("file_exists", {"file_path": "a.py"}),)),
         {"id": "t1", "category": "debugging", "difficulty": "advanced",
          "success_criteria": [{"type": "file_exists", "file_path": "a.py"}]}),
        (Task("t2", success_criteria=(SuccessCriterion("tests_pass", weight=2.0, description="all green"),)),
         {"id": "t2", "success_criteria": [{"type": "tests_pass", "weight": 2.0, "description": "all green"}]}),
    ],
)
def test_round_trip(obj: object, expected: dict) -> None:
    assert to_dict(obj) == expected
    assert structure(expected, type(obj)) == obj


def test_evaluation_round_trips_through_its_spec_dict(arena, baseline) -> None:
    ev = arena.evaluate(
        {"id": "s1", "total_tokens": 3000, "tool_calls": 5, "tool": "aider/diff"},
        {"id": "t1", "category": "debugging", "success_criteria": [{"type": "no_errors"}]},
        baseline,
        evaluated_at="2026-01-01T00:00:00+00:00",
    )
    data = to_dict(ev)
    assert data["breakdown"] == {"efficiency_weight": 0.25, "speed_weight": 0.35, "cost_weight": 0.15, "correctness_weight": 0.25}
    assert data["speed_score"] == 50.0
    assert structure(data, Evaluation) == ev


def test_pass_rate_prefers_counts_over_the_reported_fraction() -> None:
    assert Submission("s", tests_passed=3, tests_total=4, correctness=0.1).pass_rate == 0.75
    assert Submission("s", correctness=0.4).pass_rate == 0.4
    assert Submission("s").pass_rate is None
    assert Submission("s", tests_passed=0, tests_total=0).pass_rate is None



def _nested(value: object) -> object:
    """A table as deep as a record's may be (``"deepest"``), one level deeper (``"too deep"``),
    or ``value`` itself."""
    from arena_core.model.scalars import MAX_NESTING

    if value not in ("deepest", "too deep"):
        return value
    table: object = {}
    for _ in range(MAX_NESTING - 1 if value == "deepest" else MAX_NESTING):
        table = {"k": table}
    return table


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 20),
    st.sampled_from([10**16, 10**400, -(10**400)]),
    st.sampled_from([0.0, 2.5, 3.0, 1e16, math.nan, math.inf, 0.356]),
    st.sampled_from(["", "s1", "aider", " ", "a\x1bb", "12"]),
    st.lists(st.sampled_from(["a.py", "b.py", 3]), max_size=3),
    st.tuples(st.sampled_from(["a.py", 7])),
    st.dictionaries(st.sampled_from(["k"]), st.integers(0, 2), max_size=1),
    st.sampled_from([{"run": {"trajectory": "a", "steps": [1, {"k": None}]}}, "deepest", "too deep"]).map(_nested),
)
_KEYS = st.sampled_from(
    [
        "id", "task_id", "tool", "model", "total_tokens", "tool_calls", "iterations", "execution_time",
        "estimated_cost", "success", "files_created", "correctness", "tests_passed", "tests_total", "meta",
        "workspace", "extra",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=8), st.booleans())
def test_plain_records_structure_exactly_as_the_converter_does(record: dict, with_id: bool) -> None:
    """The quick path for plain submission dicts gives the converter's model (each field's value
    and type) or, for anything it does not take, the converter's own error."""
    import arena_core.model.serde as serde

    if with_id:
        record = {"id": "s1", **record}

    def outcome(quick: bool):
        with pytest.MonkeyPatch.context() as patch:
            if not quick:
                patch.setattr(serde, "plain_submission", lambda data: None)
            try:
                made = structure(record, Submission)
            except ValidationError as exc:
                return ("error", str(exc))
        return tuple((f.name, type(v), v if v == v else "nan") for f in attrs.fields(Submission) for v in [getattr(made, f.name)])

    assert outcome(True) == outcome(False)


_CRITERIA = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["file_exists", "tests_pass", "", 3])}),
    st.fixed_dictionaries(
        {"type": st.just("file_exists"), "file_path": st.sampled_from(["a.py", 1, None])},
        optional={"weight": st.sampled_from([1, 1.0, True, 2.5, "2"]), "description": st.sampled_from(["x", 5])},
    ),
    st.just({"weight": 1.0}),
    st.just("tests_pass"),
    st.just({"type": "tests_pass", "tags": ["slow"]}),
)


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["id", "category", "difficulty", "success_criteria", "meta", "default_baseline", "extra"]),
        st.one_of(
            st.sampled_from([None, "t1", "", "debugging", "a\x1bb", 7, True]),
            st.lists(_CRITERIA, max_size=3),
            st.tuples(_CRITERIA),
            st.dictionaries(st.sampled_from(["k"]), st.integers(0, 2), max_size=1),
        ),
        max_size=5,
    ),
    st.booleans(),
)
def test_plain_tasks_structure_exactly_as_the_converter_does(record: dict, with_id: bool) -> None:
    """The quick path for plain task dicts gives the converter's task (criteria included, value
    and type of each field) or, for anything it does not take, the converter's own error."""
    import arena_core.model.serde as serde

    if with_id:
        record = {"id": "t1", **record}

    def outcome(quick: bool):
        with pytest.MonkeyPatch.context() as patch:
            if not quick:
                patch.setattr(serde, "plain_task", lambda data, criterion: None)
            try:
                made = structure(record, Task)
            except ValidationError as exc:
                return ("error", str(exc))
        return (
            tuple((f.name, type(getattr(made, f.name)), getattr(made, f.name)) for f in attrs.fields(Task)),
            tuple((type(c.weight), c.weight, tuple((type(v), v) for v in c.params.values())) for c in made.success_criteria),
        )

    assert outcome(True) == outcome(False)


def test_tasks_with_equal_criteria_share_one_structured_tuple() -> None:
    """Tasks of one kind repeat their criteria: structured once and shared, so per-task checks
    can key on the tuple; a value of another type (1, 1.0, True are equal in Python) is not
    mistaken for it."""
    criteria = [{"type": "file_exists", "file_path": "a.py"}, {"type": "min_functionality", "min_pass_rate": 1}]
    first, second = (structure({"id": i, "success_criteria": [dict(c) for c in criteria]}, Task) for i in "ab")
    assert first.success_criteria is second.success_criteria
    assert first.success_criteria == tuple(structure(c, SuccessCriterion) for c in criteria)
    for other in (1.0, True):
        changed = [criteria[0], {**criteria[1], "min_pass_rate": other}]
        made = structure({"id": "c", "success_criteria": changed}, Task)
        assert made.success_criteria is not first.success_criteria
        assert type(made.success_criteria[1].params["min_pass_rate"]) is type(other)
    listed = structure({"id": "d", "success_criteria": [criteria[0], {"type": "tests_pass", "tags": ["x"]}]}, Task)
    assert listed.success_criteria[1].params == {"tags": ["x"]}  # not flat: structured one by one


def test_the_token_breakdown_is_kept_and_cached_tokens_cannot_exceed_the_input() -> None:
    from arena_core.engine.records import columns_from_records

    record = {"id": "s", "task_id": "t", "total_tokens": 1340, "input_tokens": 1300, "output_tokens": 40,
              "cache_read_tokens": 1000, "cache_write_tokens": 100}
    submission = structure(record, Submission)
    assert (submission.input_tokens, submission.cache_read_tokens) == (1300, 1000)
    assert to_dict(submission)["cache_write_tokens"] == 100
    columns = columns_from_records([record], lambda r: structure(r, Submission))
    assert columns.numeric["cache_read_tokens"].tolist() == [1000.0]
    bad = {**record, "cache_read_tokens": 1250}  # 1,250 + 100 cached of 1,300 input
    with pytest.raises(ValidationError, match="input_tokens: expected at least the cached tokens it includes \\(1350\\)"):
        structure(bad, Submission)
    with pytest.raises(ValidationError, match="input_tokens"):
        columns_from_records([bad], lambda r: structure(r, Submission))


def test_a_total_given_only_as_its_breakdown_is_derived_and_says_so() -> None:
    from arena_core import Arena
    from arena_core.engine.records import columns_from_records

    record = {"id": "s", "task_id": "t", "input_tokens": 1300, "output_tokens": 40, "tool_calls": 3}
    submission = structure(record, Submission)
    assert submission.total_tokens == 1340 and submission.meta["derived"] == ["total_tokens"]
    again = structure(to_dict(submission), Submission)  # a written file read back: derived once, noted once
    assert again.total_tokens == 1340 and again.meta["derived"] == ["total_tokens"]
    given = structure({**record, "total_tokens": 2000}, Submission)  # a total given is kept as given
    assert given.total_tokens == 2000 and "derived" not in given.meta
    columns = columns_from_records([record], lambda r: structure(r, Submission))
    assert columns.numeric["total_tokens"].tolist() == [1340.0]
    arena = Arena(autoload=False)
    by_columns = arena.evaluate_many([record], {"t": {"id": "t"}})[0]
    assert by_columns.scores == arena.evaluate_many([{**record, "total_tokens": 1340}], {"t": {"id": "t"}})[0].scores
