"""The batch path gives exactly the per-record path's evaluations."""

from __future__ import annotations

import io
import random
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arena_core.engine.many as arena_module
from arena_core import Arena, ValidationError, hookimpl, to_dict
from arena_core.io.writers import write_evaluations
from arena_core.engine.grouped import competition_ranks_by_group
from arena_core.engine.ranking import annotate
from arena_core.engine.results import EvaluationBatch
from arena_core.examples.synthetic import CATEGORIES, DIFFICULTIES
from arena_core.registry.manager import get_plugin_manager

STAMP = "2026-01-01T00:00:00+00:00"
FILES = ["a.py", "b.py", "tests/test_a.py"]
CRITERIA = [
    {"type": "file_exists", "file_path": "a.py"},
    {"type": "file_exists", "file_path": "tests/test_a.py", "weight": 2.0},
    {"type": "no_errors"},
    {"type": "tests_pass"},
    {"type": "min_functionality"},
    {"type": "min_functionality", "min_pass_rate": 0.5},
]


def per_record(arena: Arena, subs, tasks):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arena_module, "evaluate_columns", lambda *args, **kwargs: None)
        result = arena.evaluate_many(subs, tasks, evaluated_at=STAMP)
    assert isinstance(result, list)
    return result


@st.composite
def arenas(draw: st.DrawFn, *, complete: bool = True) -> tuple[list[dict], dict[str, dict]]:
    task_count = draw(st.integers(1, 4))
    tasks = {}
    for k in range(task_count):
        task = {"id": f"t{k}", "success_criteria": draw(st.lists(st.sampled_from(CRITERIA), max_size=4))}
        if draw(st.booleans()):
            task["category"] = draw(st.sampled_from(CATEGORIES))
        if draw(st.booleans()):
            task["difficulty"] = draw(st.sampled_from(DIFFICULTIES))
        tasks[task["id"]] = task
    subs = []
    for i in range(draw(st.integers(1, 40))):
        sub: dict = {
            "id": f"s{i}",
            "task_id": f"t{draw(st.integers(0, task_count - 1))}",
            "tool": draw(st.sampled_from(["a", "b", "c"])),
            "model": draw(st.sampled_from(["m1", "m2"])),
        }
        if complete or draw(st.booleans()):
            sub["total_tokens"] = draw(st.integers(0, 40)) * 250
        if complete or draw(st.booleans()):
            sub["tool_calls"] = draw(st.integers(0, 12))
        for field, values in (
            ("iterations", st.integers(1, 8)),
            ("execution_time", st.sampled_from([0, 3.0, 60.0, 95.5, 300.0, 1799.0])),
            ("estimated_cost", st.sampled_from([0.0, 0.01, 0.033, 0.2, 0.5])),
            ("success", st.booleans()),
            ("files_created", st.lists(st.sampled_from(FILES), unique=True)),
        ):
            if draw(st.booleans()):
                sub[field] = draw(values)
        reported = draw(st.sampled_from(["none", "counts", "fraction", "zero"]))
        if reported == "counts":
            total = draw(st.integers(1, 10))
            sub.update(tests_total=total, tests_passed=draw(st.integers(0, total)))
        elif reported == "fraction":
            sub["correctness"] = draw(st.sampled_from([0.0, 0.356, 0.5, 1.0]))
        elif reported == "zero":
            sub.update(tests_total=0, tests_passed=0)
        subs.append(sub)
    return subs, tasks


def assert_same(batch, records) -> None:
    assert len(batch) == len(records)
    for got, expected in zip(batch, records):
        assert to_dict(got) == to_dict(expected)


@settings(max_examples=60, deadline=None)
@given(arenas())
def test_batch_equals_per_record_with_the_default_configuration(arena_and_tasks) -> None:
    subs, tasks = arena_and_tasks
    arena = Arena(autoload=False)
    batch = arena.evaluate_many(subs, tasks, evaluated_at=STAMP)
    assert isinstance(batch, EvaluationBatch)
    assert_same(batch, per_record(arena, subs, tasks))


POLICY_CONFIGS = [
    {"missing": {"total_tokens": "reweight", "tool_calls": "neutral", "execution_time": "reweight"}},
    {
        "missing": {"total_tokens": "neutral", "tool_calls": "reweight", "estimated_cost": "reweight"},
        "baseline_scope": "task_tool",
    },
    {
        "missing": {"total_tokens": "reweight", "tool_calls": "reweight"},
        "baseline_scope": "task_tool_model",
        "weights": {"default": {"efficiency": 0.6, "correctness": 0.4}},
    },
    # The gated profile's keys (engine/gating.py): two passes, baselines from the runs that passed.
    {
        "gate": "correctness",
        "missing": dict.fromkeys(
            ("total_tokens", "tool_calls", "iterations", "execution_time", "estimated_cost"), "comparable"
        ),
        "difficulty_adjusters": {d: f"{d}_rescaled" for d in DIFFICULTIES},
    },
    {
        "gate": "correctness",
        "missing": {"total_tokens": "reweight", "tool_calls": "neutral", "estimated_cost": "reweight"},
        "baseline_scope": "task_tool",
    },
]


@settings(max_examples=60, deadline=None)
@given(arenas(complete=False), st.sampled_from(POLICY_CONFIGS))
def test_batch_equals_per_record_under_missing_telemetry_policies(arena_and_tasks, config) -> None:
    subs, tasks = arena_and_tasks
    arena = Arena(config, autoload=False)
    try:
        expected = per_record(arena, subs, tasks)
    except ValidationError as exc:  # every metric left out: both paths must refuse the same record
        with pytest.raises(ValidationError) as info:
            arena.evaluate_many(subs, tasks, evaluated_at=STAMP)
        assert info.value.record == exc.record
        return
    assert_same(arena.evaluate_many(subs, tasks, evaluated_at=STAMP), expected)



@settings(max_examples=30, deadline=None)
@given(arenas(complete=False), st.sampled_from(POLICY_CONFIGS), st.integers(1, 5))
def test_a_batch_iterated_block_by_block_gives_each_evaluation_as_indexing_does(arena_and_tasks, config, block) -> None:
    """Iterating a batch builds its evaluations from each block's columns turned into lists
    (engine/objects.py), here blocks of 1 to 5 rows so that every draw crosses their edges, and
    criterion verdicts a task's rows at a time: every evaluation, and the type of every value
    in its record (criteria included), is the one indexing the batch row by row builds, and the
    one the per-record path makes."""
    import arena_core.engine.results as results

    subs, tasks = arena_and_tasks
    arena = Arena(config, autoload=False)
    try:
        expected = per_record(arena, subs, tasks)
    except ValidationError:
        return  # every metric left out: refused on both paths (the test above)
    batch = arena.evaluate_many(subs, tasks, evaluated_at=STAMP)
    real = results.BLOCK
    try:
        results.BLOCK = block
        iterated = list(batch)
    finally:
        results.BLOCK = real
    indexed = [batch[i] for i in range(len(batch))]
    assert iterated == indexed
    def types(value: object) -> object:
        if isinstance(value, dict):
            return {k: types(v) for k, v in value.items()}
        if isinstance(value, list):
            return [types(v) for v in value]
        return type(value)

    assert [types(to_dict(e)) for e in iterated] == [types(to_dict(e)) for e in expected]
    assert_same(iterated, expected)

@settings(max_examples=50, deadline=None)
@given(arenas(complete=False), st.sampled_from(POLICY_CONFIGS), st.integers(1, 4))
def test_rows_scored_in_blocks_of_whole_tasks_equal_per_record(arena_and_tasks, config, block) -> None:
    """Runs in task order are scored in blocks of whole tasks (engine/vectorised.BLOCK_ROWS
    rows, here 1 to 4 so that every draw has several): scores, filled metrics in each run's own
    order, verdicts and the record an error names are those of the runs one by one."""
    from unittest import mock

    import arena_core.engine.vectorised as vectorised

    subs, tasks = arena_and_tasks
    subs = sorted(subs, key=lambda s: s["task_id"])
    arena = Arena(config, autoload=False)
    with mock.patch.object(vectorised, "BLOCK_ROWS", block):
        try:
            expected = per_record(arena, subs, tasks)
        except ValidationError as exc:
            with pytest.raises(ValidationError) as info:
                arena.evaluate_many(subs, tasks, evaluated_at=STAMP)
            assert info.value.record == exc.record
            return
        batch = arena.evaluate_many(subs, tasks, evaluated_at=STAMP)
    assert_same(batch, expected)
    assert [e.filled for e in batch] == [e.filled for e in expected]  # as dicts, in order
    assert [list(e.filled) for e in batch] == [list(e.filled) for e in expected]


def test_runs_of_consecutive_tasks_are_scored_in_blocks_and_others_whole(monkeypatch) -> None:
    """The blocks the property above relies on: 36 runs of 4 tasks, 9 each, in blocks of 3 rows
    are 4 blocks (a task is never cut); the same runs with two of one task apart, one block."""
    import arena_core.engine.batch as batch_module
    import arena_core.engine.vectorised as vectorised
    from arena_core.examples.synthetic import generate_arena

    tasks, subs = generate_arena(tasks=4, submissions_per_task=9, seed=2)
    subs = sorted(subs, key=lambda s: s["task_id"])
    blocks: list[int] = []
    begin = batch_module.Recorder.begin_block
    monkeypatch.setattr(batch_module.Recorder, "begin_block", lambda self: blocks.append(1) or begin(self))
    monkeypatch.setattr(vectorised, "BLOCK_ROWS", 3)
    arena, by_id = Arena(autoload=False), {t["id"]: t for t in tasks}
    assert_same(arena.evaluate_many(subs, by_id, evaluated_at=STAMP), per_record(arena, subs, by_id))
    assert len(blocks) == 4
    blocks.clear()
    apart = [*subs[1:], subs[0]]
    assert_same(arena.evaluate_many(apart, by_id, evaluated_at=STAMP), per_record(arena, apart, by_id))
    assert len(blocks) == 1


@settings(max_examples=50, deadline=None)
@given(arenas(complete=False), st.sampled_from(POLICY_CONFIGS))
def test_records_written_from_arrays_are_the_evaluations_own(arena_and_tasks, config) -> None:
    """``EvaluationBatch.records()`` (what files are written from) serialises to exactly the bytes
    of ``to_dict`` of each evaluation, with filled metrics, reweighting and provisional marks;
    ``dimensions()`` lists them in the order the evaluations first show them."""
    import json

    subs, tasks = arena_and_tasks
    arena = Arena(config, autoload=False)
    try:
        batch = arena.evaluate_many(subs, tasks, evaluated_at=STAMP)
    except ValidationError:
        return
    assert isinstance(batch, EvaluationBatch)
    assert [json.dumps(r) for r in batch.records()] == [json.dumps(to_dict(e)) for e in batch]
    assert batch.dimensions() == list(dict.fromkeys(d for e in batch for d in e.scores))
    # The JSON Lines writer (shared parts encoded once) writes each evaluation's own bytes.
    written = io.StringIO()
    write_evaluations(batch, "jsonl", written)
    assert written.getvalue().splitlines() == [orjson.dumps(to_dict(e)).decode() for e in batch]
    # ... and so it does with blocks that end anywhere (rows of several tasks and profiles in one).
    from arena_core.engine.jsonlines import json_line_blocks

    assert b"".join(json_line_blocks(batch, block=3, joined=2)).decode() == written.getvalue()
    # So does the JSON array writer, which writes the same lines as the array's items.
    as_array, one_by_one = io.StringIO(), io.StringIO()
    write_evaluations(batch, "json", as_array)
    write_evaluations(list(batch), "json", one_by_one)
    assert as_array.getvalue() == one_by_one.getvalue()
    # CSV from the batch's columns equals CSV from the evaluations one by one.
    from_columns, from_objects = io.StringIO(), io.StringIO()
    write_evaluations(batch, "csv", from_columns)
    write_evaluations(list(batch), "csv", from_objects)
    assert from_columns.getvalue() == from_objects.getvalue()



def test_columns_give_the_same_evaluations_as_records(arena: Arena) -> None:
    rng = random.Random(4)
    subs = [
        {
            "id": f"s{i}",
            "task_id": f"t{i % 3}",
            "tool": "abc"[i % 3],
            "total_tokens": rng.randint(100, 9000),
            "tool_calls": rng.randint(0, 30),
            "execution_time": rng.choice([0.0, rng.uniform(10, 900)]),
            "estimated_cost": rng.uniform(0.001, 0.3),
            "iterations": rng.randint(1, 5),
            "success": rng.random() < 0.8,
            "files_created": ["a.py"] if rng.random() < 0.5 else [],
        }
        for i in range(300)
    ]
    tasks = {f"t{k}": {"id": f"t{k}", "category": CATEGORIES[k], "success_criteria": CRITERIA[:3]} for k in range(3)}
    columns = {name: np.array([s[name] for s in subs]) for name in subs[0] if name != "files_created"}
    columns["files_created"] = [s["files_created"] for s in subs]
    from_columns = arena.evaluate_many(columns, tasks, evaluated_at=STAMP)
    assert_same(from_columns, arena.evaluate_many(subs, tasks, evaluated_at=STAMP))
    table = from_columns.columns()
    assert table["overall_score"].shape == (300,) and table["overall_ranking"].min() == 1


def test_columns_are_validated_by_row(arena: Arena) -> None:
    tasks = {"t": {"id": "t"}}
    base = {"id": ["a", "b"], "task_id": ["t", "t"], "tool_calls": [1, 2]}
    with pytest.raises(
        ValidationError, match=r"submission 'b': total_tokens: expected a finite whole number >= 0, got -5.0"
    ):
        arena.evaluate_many({**base, "total_tokens": [3, -5]}, tasks)
    with pytest.raises(
        ValidationError, match=r"submission 'a': total_tokens: expected a finite whole number >= 0, got 2.5"
    ):
        arena.evaluate_many({**base, "total_tokens": [2.5, 3]}, tasks)
    with pytest.raises(ValidationError, match=r"submission 'b': total_tokens: expected a value"):
        arena.evaluate_many({**base, "total_tokens": [3, None]}, tasks)
    # The bound the models keep holds for columns too (runs near 1e308 overflowed the baselines).
    with pytest.raises(
        ValidationError, match=r"submission 'a': execution_time: expected a number <= 1e15, got 1e\+300"
    ):
        arena.evaluate_many({**base, "total_tokens": [3, 4], "execution_time": [1e300, 5.0]}, tasks)
    with pytest.raises(
        ValidationError, match=r"submission 'b': execution_time: expected a finite number >= 0, got inf"
    ):
        arena.evaluate_many({**base, "total_tokens": [3, 4], "execution_time": [1.0, float("inf")]}, tasks)
    with pytest.raises(ValidationError, match="columns: total_token: expected a submission field"):
        arena.evaluate_many({**base, "total_token": [3, 4]}, tasks)
    with pytest.raises(ValidationError, match="submission 'a': task_id: expected one of the given tasks"):
        arena.evaluate_many({**base, "total_tokens": [3, 4], "task_id": ["x", "t"]}, tasks)


def test_a_component_without_a_batch_form_falls_back_to_per_record(baseline: dict) -> None:
    class RecordOnly:
        name = "speed_record_only"
        requires = ()

        def score(self, submission, task, baseline):
            return 42.0

    class Plugin:
        @hookimpl
        def arena_register_metrics(self):
            return [RecordOnly()]

    pm = get_plugin_manager(autoload=False)
    pm.register(Plugin(), name="record-only")
    arena = Arena({"metrics": {"speed": "speed_record_only"}}, plugin_manager=pm)
    subs = [{"id": f"s{i}", "task_id": "t", "total_tokens": 100 * i, "tool_calls": i} for i in range(8)]
    result = arena.evaluate_many(subs, {"t": {"id": "t"}}, evaluated_at=STAMP)
    assert isinstance(result, list) and {e.speed_score for e in result} == {42.0}
    columns = {
        "id": [s["id"] for s in subs],
        "task_id": ["t"] * 8,
        "total_tokens": [s["total_tokens"] for s in subs],
        "tool_calls": [s["tool_calls"] for s in subs],
    }
    assert_same(arena.evaluate_many(columns, {"t": {"id": "t"}}, evaluated_at=STAMP), result)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from([0.0, 10.5, 50.0, 50.01, 99.99, 100.0])), min_size=1, max_size=60
    )
)
def test_vectorised_ranks_equal_the_spec_ranking(entries: list[tuple[int, float]]) -> None:
    groups = np.array([g for g, _ in entries])
    scores = np.array([s for _, s in entries])
    ranks, percentiles = competition_ranks_by_group(groups, scores)
    from arena_core.model.records import Evaluation

    for g in set(groups.tolist()):
        rows = [i for i, (gg, _) in enumerate(entries) if gg == g]
        evs = [Evaluation(f"s{i}", "t", entries[i][1], {}, {}, "default", entries[i][1], STAMP) for i in rows]
        for i, ev in zip(rows, annotate(evs)):
            assert (ranks[i], percentiles[i]) == (ev.overall_ranking, ev.percentile)


@settings(max_examples=100, deadline=None)
@given(arenas(complete=False))
def test_vectorised_baselines_equal_compute_baseline(arena_and_tasks) -> None:
    from arena_core import Submission, structure
    from arena_core.engine.baselines import DEFAULT_BASELINE, compute_baseline
    from arena_core.engine.columns import Columns
    from arena_core.engine.grouped import group_baselines

    import attrs

    from arena_core.engine.baselinetable import FIGURE_FIELDS

    subs, tasks = arena_and_tasks
    models = [structure(s, Submission) for s in subs]
    ids = sorted(tasks)
    codes = np.array([ids.index(s.task_id) for s in models], dtype=np.int64)
    # Odd tasks have a default baseline of their own (with quartiles), as a task may.
    own = attrs.evolve(DEFAULT_BASELINE, median_tokens=40_000, q25_tokens=9_000.0, q75_tokens=90_000.0)
    defaults = [own if k % 2 else DEFAULT_BASELINE for k in range(len(ids))]
    got = group_baselines(Columns.from_submissions(models), codes, len(ids), defaults, ids, STAMP)
    # The table's arrays (all the batch engine reads) hold the figures its objects are built with.
    figures = got.figures()
    for name in FIGURE_FIELDS:
        np.testing.assert_array_equal(figures[name], np.array([getattr(b, name) for b in got], dtype=float))
    for task_id, baseline, default in zip(ids, got, defaults):
        own_runs = [s for s in models if s.task_id == task_id]
        expected = compute_baseline(task_id, own_runs, default, now=STAMP)
        assert to_dict(baseline) == to_dict(expected)
        # One group alone (the pipeline's case) reads its medians and quartiles by selection.
        alone = group_baselines(Columns.from_submissions(own_runs), np.zeros(len(own_runs), dtype=np.int64), 1,
                                [default], [task_id], STAMP)  # fmt: skip
        assert to_dict(alone[0]) == to_dict(expected)
    # A given baseline replaces one group's object and its figures.
    given = attrs.evolve(own, task_id=ids[0], median_cost=0.07)
    replaced = got.replaced({0: given})
    assert replaced[0] is given and list(replaced)[1:] == list(got)[1:]
    assert replaced.figures()["median_cost"][0] == 0.07 and replaced.figures()["q25_tokens"][0] == 9_000.0


@pytest.mark.parametrize("by", ["tool", "model"])
def test_leaderboards_aggregated_on_arrays_equal_those_from_evaluations(by: str) -> None:
    """The columns path (no evaluation objects) gives the same rows as aggregating evaluations,
    also on real data with metrics left out (Aider's runs, missing tokens and tool calls)."""
    import json

    from arena_core.examples import SUBMISSIONS, TASKS
    from arena_core.io.readers import read_submissions, read_tasks

    real = Path(__file__).parent / "data" / "aider-leaderboards"
    cases = [
        (Arena(autoload=False), read_submissions(SUBMISSIONS), read_tasks(TASKS)),
        (
            Arena(
                {
                    "category_profiles": {"code_editing": "default"},
                    "missing": {"total_tokens": "reweight", "tool_calls": "reweight"},
                },
                autoload=False,
            ),
            [json.loads(line) for line in (real / "submissions.jsonl").read_text().splitlines()],
            read_tasks(real / "tasks.json"),
        ),
    ]
    for arena, subs, tasks in cases:
        batch = arena.evaluate_many(subs, tasks)
        assert isinstance(batch, EvaluationBatch)
        from_arrays = arena.leaderboard(batch, by=by)
        assert from_arrays == arena.leaderboard(list(batch), by=by)
        assert len(from_arrays) >= 5


def test_the_batch_path_depends_on_what_the_tasks_use_and_says_which_path_ran() -> None:
    """A checker without a batch form, installed but unused, leaves the batch path alone; the
    tasks that use it are scored record by record, and the result names the checker."""

    class RecordOnlyChecker:
        type = "readme_mentions_license"

        def check(self, submission, criterion, task):
            return "README.md" in submission.files_created

    class Plugin:
        @hookimpl
        def arena_register_criterion_checkers(self):
            return [RecordOnlyChecker()]

    pm = get_plugin_manager(autoload=False)
    pm.register(Plugin(), name="vendor")
    arena = Arena(plugin_manager=pm)
    listed = {info.name: info.per_record_only for info in arena.plugins()}
    assert listed["vendor"] == {"checkers": ("readme_mentions_license",)}  # what `arena plugins` marks
    assert not any(listed[name] for name in ("metrics", "checkers", "difficulty"))  # built-ins: all batch
    subs = [
        {
            "id": f"s{i}",
            "task_id": "t",
            "total_tokens": 100 * i + 50,
            "tool_calls": i + 1,
            "files_created": ["README.md"] if i % 2 else [],
        }
        for i in range(8)
    ]
    plain = {"t": {"id": "t", "success_criteria": [{"type": "no_errors"}]}}
    result = arena.evaluate_many(subs, plain, evaluated_at=STAMP)
    assert isinstance(result, EvaluationBatch) and result.path == "batch" and result.fallback_reason is None
    using = {"t": {"id": "t", "success_criteria": [{"type": "readme_mentions_license"}]}}
    result = arena.evaluate_many(subs, using, evaluated_at=STAMP)
    assert result.path == "per-record"
    assert result.fallback_reason == (
        "checker 'readme_mentions_license' has no batch form (check_batch); task 't' uses it"
    )
    assert [e.correctness_score for e in result] == [0.0, 100.0] * 4
    with_workspace = [{**subs[0], "workspace": "."}, *subs[1:]]
    assert arena.evaluate_many(with_workspace, plain, evaluated_at=STAMP).fallback_reason == (
        "submission 's0' has a workspace to check"
    )


def test_verdict_codes_tell_apart_what_the_records_show() -> None:
    """Rows share a verdict code exactly when (status, credit, reason) are equal, whether the
    reasons are asked row by row or once per value of ``reason_by``."""
    import numpy as np

    from arena_core.engine.batch import CheckColumn
    from arena_core.engine.rowparts import _verdict_codes

    rng = np.random.default_rng(5)
    status = rng.integers(0, 4, 500).astype(np.int8)
    credit = np.where(status == 1, 1.0, rng.choice([0.0, 0.25, 0.5], 500))
    notes = rng.integers(0, 3, 500)
    reason = lambda row: f"note {notes[row]}"  # noqa: E731
    for column in (CheckColumn(credit, status, reason), CheckColumn(credit, status, reason, reason_by=notes)):
        codes, keys = _verdict_codes(column, 100, 400)
        shown = [keys[c] for c in codes.tolist()]
        expected = [(int(s), float(c), "" if s == 1 else reason(r)) for r, (s, c) in enumerate(zip(status, credit)) if 100 <= r < 400]
        assert shown == expected
        assert len(keys) == len(set(expected))


def test_tasks_with_equal_criteria_are_checked_together_with_the_same_verdicts() -> None:
    """Sixty tasks share three criteria lists; a list parameter (unhashable) and a checker that
    does not say ``task_independent`` keep their tasks alone. One ``check_batch`` call per
    criterion per group, and every score and verdict equals the per-record path's."""
    calls: list[str] = []

    class Counted:
        """file_exists's verdict, counting batch calls; ``task_independent`` set per instance."""

        def __init__(self, type_: str, independent: bool) -> None:
            self.type, self.task_independent = type_, independent

        def check(self, submission, criterion, task):
            return criterion.params["file_path"] in submission.files_created

        def check_batch(self, batch, criterion, task):
            from arena_core.engine.batch import CheckColumn

            calls.append(f"{self.type}:{task.id}")
            return CheckColumn.of(batch.has_file(criterion.params["file_path"]))

    class Plugin:
        @hookimpl
        def arena_register_criterion_checkers(self):
            return [Counted("shared_file", True), Counted("own_file", False)]

    pm = get_plugin_manager(autoload=False)
    pm.register(Plugin(), name="counted")
    arena = Arena(plugin_manager=pm)
    kinds = [
        [{"type": "shared_file", "file_path": "a.py"}, {"type": "tests_pass"}],
        [{"type": "shared_file", "file_path": "b.py", "weight": 2.0}, {"type": "no_errors"}],
        [{"type": "no_errors"}, {"type": "min_functionality", "min_pass_rate": 0.5}],
        [{"type": "shared_file", "file_path": "a.py", "tags": ["x"]}],  # unhashable: alone
        [{"type": "own_file", "file_path": "a.py"}],  # not task_independent: alone
    ]
    tasks = {f"t{k}": {"id": f"t{k}", "success_criteria": kinds[k % 5]} for k in range(60)}
    rng = random.Random(3)
    subs = []
    for i in range(600):
        total = rng.randint(1, 10)
        subs.append(
            {
                "id": f"s{i}",
                "task_id": f"t{rng.randrange(60)}",
                "tool": rng.choice("abc"),
                "total_tokens": rng.randint(1, 40) * 250,
                "tool_calls": rng.randint(1, 12),
                "success": rng.random() < 0.7,
                "files_created": rng.sample(FILES, rng.randint(0, 3)),
                "tests_total": total,
                "tests_passed": rng.randint(0, total),
            }
        )
    batch = arena.evaluate_many(subs, tasks, evaluated_at=STAMP)
    assert isinstance(batch, EvaluationBatch)
    assert_same(batch, per_record(arena, subs, tasks))
    assert [orjson.dumps(r) for r in batch.records()] == [orjson.dumps(to_dict(e)) for e in batch]
    shared = [c for c in calls if c.startswith("shared_file:")]
    alone = {c.split(":")[1] for c in calls if c.startswith("own_file:")}
    # Two groups call shared_file once each; the twelve tasks with a list parameter, once each.
    assert len(shared) == 2 + 12
    assert alone == {f"t{k}" for k in range(4, 60, 5)}  # once per task
    assert len(calls) == len(shared) + 12


@pytest.mark.parametrize("groups", [1, 7, 65_535, 65_536, 100_000, 1 << 33])
def test_order_within_groups_is_lexsort_by_group_then_value(groups: int) -> None:
    """Group codes are sorted 16 bits at a time (NumPy's radix sort): below and above one and
    two 16-bit digits, rows come out by group, then by value, as ``np.lexsort`` orders them."""
    from arena_core.engine.ordered import order_within_groups

    rng = np.random.default_rng(groups)
    codes = rng.integers(0, groups, 50_000).astype(np.int64)
    values = np.round(rng.random(50_000) * 10, 1)  # ties within a group need no order
    order = order_within_groups(values, codes)
    expected = np.lexsort((values, codes))
    assert sorted(order.tolist()) == list(range(50_000))
    assert np.array_equal(codes[order], codes[expected]) and np.array_equal(values[order], values[expected])


@pytest.mark.parametrize(
    ("highest", "shape"),
    [(0, "random"), (255, "random"), (65_535, "random"), (65_536, "random"), (1 << 40, "random"),
     (1 << 50, "random"), (9, "sorted"), (1 << 20, "sorted"), (300, "runs"), (-1, "random")],
)  # fmt: skip
def test_stable_order_is_numpys_stable_argsort(highest: int, shape: str) -> None:
    """Keys of one, two, three 16-bit digits and wider, already in order, in runs of equal keys
    (a clustered partition's task codes), and negative: the permutation is NumPy's stable sort's,
    alone and composed after a given order."""
    from arena_core.engine.ordered import split_by_code, stable_order

    rng = np.random.default_rng(abs(highest) % 1000)
    low = -5 if highest < 0 else 0
    keys = rng.integers(low, max(highest, 0) + 1, 40_000, dtype=np.int64)
    if shape == "sorted":
        keys = np.sort(keys)
    if shape == "runs":
        keys = np.repeat(rng.permutation(highest + 1), 40_000 // (highest + 1) + 1)[:40_000]
    assert np.array_equal(stable_order(keys), np.argsort(keys, kind="stable"))
    first = rng.permutation(len(keys))
    assert np.array_equal(stable_order(keys, first), first[np.argsort(keys[first], kind="stable")])
    if low == 0:
        split = {code: rows.tolist() for code, rows in split_by_code(keys)}
        assert split == {int(k): np.flatnonzero(keys == k).tolist() for k in np.unique(keys)}
    assert stable_order(keys[:0]).tolist() == []


def test_group_medians_are_sorted_for_only_when_read(monkeypatch) -> None:
    """Bounds come from a scatter, medians and quartiles from a sort made when first read: the
    batch path's metrics read the bounds and the median of iterations only."""
    import arena_core.engine.grouped as grouped
    from arena_core.engine.baselines import DEFAULT_BASELINE, compute_baseline
    from arena_core.engine.columns import Columns
    from arena_core.examples.synthetic import generate_arena
    from arena_core import Submission, structure

    tasks, subs = generate_arena(tasks=3, submissions_per_task=9, seed=2)
    models = [structure(s, Submission) for s in subs]
    ids = [t["id"] for t in tasks]
    codes = np.array([ids.index(s.task_id) for s in models], dtype=np.int64)
    from arena_core.engine import grouporder

    sorted_fields: list[str] = []
    sort = grouporder.GroupOrder.sorted
    monkeypatch.setattr(grouporder.GroupOrder, "sorted", lambda self, f: sorted_fields.append(f) or sort(self, f))
    table = grouped.group_baselines(Columns.from_submissions(models), codes, 3, [DEFAULT_BASELINE] * 3, ids, STAMP)
    figures = table.figures()
    assert [figures[f"{k}_tokens"].tolist() for k in ("min", "max")] and sorted_fields == []
    median = figures["median_tokens"]
    assert len(sorted_fields) == 1
    q25 = figures["q25_tokens"]
    assert len(sorted_fields) == 1  # the same sort gave the quartiles
    for k, task_id in enumerate(ids):
        expected = compute_baseline(task_id, [s for s in models if s.task_id == task_id], DEFAULT_BASELINE, now=STAMP)
        assert (median[k], q25[k]) == (expected.median_tokens, expected.q25_tokens)
    from arena_core.engine.baselinetable import FIGURE_FIELDS

    assert sorted(figures) == sorted(FIGURE_FIELDS) and len(figures) == len(FIGURE_FIELDS)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.one_of(st.integers(0, 70), st.integers(0, 1100))), max_size=60),
    st.integers(7, 9),
)
def test_counted_medians_equal_sorted_ones(rows, count) -> None:
    """Whole numbers up to a thousand (iteration counts) are counted, not sorted, into medians:
    the same medians as statistics.median, and no answer when the values are too large to count
    or the table of groups by values would be many times larger than the rows."""
    import statistics

    from arena_core.engine.grouporder import _COUNTED_UP_TO, _counted_medians

    groups = np.array([g for g, _ in rows], dtype=np.int64)
    values = np.array([float(v) for _, v in rows])
    counted = _counted_medians(values, groups, count)
    if len(rows) == 0 or max(v for _, v in rows) > _COUNTED_UP_TO:
        assert counted is None
        return
    if count * (max(v for _, v in rows) + 1) > 4 * len(rows) + 4096:
        assert counted is None
        return
    assert counted is not None
    for g in range(count):
        mine = [v for k, v in rows if k == g]
        assert counted[g] == (statistics.median([float(v) for v in mine]) if mine else 0.0)
    assert _counted_medians(values + 0.5, groups, count) is None  # not whole numbers: sorted instead


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.floats(0, 1e6, allow_nan=False)), max_size=400),
    st.booleans(),
    st.sampled_from([1, 3, 32]),
)
def test_values_sorted_within_groups_are_a_lexsort_of_them(rows, laid_out, apart) -> None:
    """Each figure's kept values sorted within their groups, whether the groups are sorted one
    at a time (large groups, laid out by group first when they are not already) or all at once,
    are ``np.lexsort((values, groups))``'s, with each group's bounds; the medians read from them
    are ``statistics.median``'s."""
    import statistics

    from arena_core.engine import grouporder
    from arena_core.engine.columns import Columns

    if laid_out:
        rows = sorted(rows, key=lambda r: r[0])
    groups = np.array([g for g, _ in rows], dtype=np.int64)
    values = np.array([v for _, v in rows])
    columns = Columns([f"r{i}" for i in range(len(rows))], ["t"] * len(rows), {"execution_time": values})
    before = grouporder.SORTED_APART
    grouporder.SORTED_APART = apart
    try:
        order = grouporder.GroupOrder(columns, groups, 5, False)
        data, bounds = order.sorted("execution_time")
        medians = order.median("execution_time")
    finally:
        grouporder.SORTED_APART = before
    kept = values > 0  # time counts when positive
    expected = np.lexsort((values[kept], groups[kept]))
    assert data.tolist() == values[kept][expected].tolist()
    assert bounds.tolist() == np.searchsorted(groups[kept][expected], np.arange(6)).tolist()
    for g in range(5):
        mine = [v for k, v in rows if k == g and v > 0]
        assert medians[g] == (statistics.median(mine) if mine else 0.0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 80), st.integers(0, 6)), min_size=1, max_size=5),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_a_history_read_in_order_with_its_additions_merged_in_equals_a_sort_of_all(sizes, assume_one, seed) -> None:
    """Groups given as parts (each task's stored runs, then the batch's) read the history's
    values in their kept order and merge the batch's in: the same kept values, bounds, medians
    and token quartiles as sorting all the rows, with holes, zero times and costs (not counted),
    absent iterations (1 when ``assume_one``), ties and groups without history; the medians are
    ``statistics.median``'s. A store's kept order grown by merging (figurecache) is a sort."""
    import statistics

    from arena_core.engine.columns import Columns
    from arena_core.engine.grouporder import SORTED_APART, GroupOrder
    from arena_core.store.figurecache import grown_columns
    from arena_core.store.typed import FIGURES

    rng = np.random.default_rng(seed)

    def columns(n: int) -> Columns:
        figures = {
            "total_tokens": rng.integers(0, 40, n).astype(float) * 1000,  # ties
            "tool_calls": rng.integers(0, 30, n).astype(float),
            "iterations": rng.integers(1, 9, n).astype(float),
            "execution_time": rng.choice([0.0, 1.5, 30.0, 300.0, 7.25], n),
            "estimated_cost": rng.uniform(0, 2, n).round(2),  # zero now and then
        }
        for values in figures.values():
            values[rng.random(n) < rng.choice([0.0, 0.3, 1.0])] = np.nan  # none, some or all absent
        return Columns([f"r{i}" for i in range(n)], ["t"] * n, figures)

    def history(n: int) -> Columns:  # as a store keeps it: in order, a later part kept apart
        first = columns(n - n // 3)
        for field in FIGURES:
            first.order(field)
        return grown_columns(first, columns(n // 3), FIGURES)

    parts = [(history(stored), columns(added)) for stored, added in sizes]
    everyone = Columns.concat([p for pair in parts for p in pair])
    groups = np.repeat(np.arange(len(parts)), [h + a for h, a in sizes])
    merged = GroupOrder(everyone, groups, len(parts), assume_one, parts)
    sorted_all = GroupOrder(everyone, groups, len(parts), assume_one)
    in_parts = len(groups) >= SORTED_APART * len(parts)
    for field in FIGURES:
        data, bounds = merged.sorted(field)
        expected_data, expected_bounds = sorted_all.sorted(field)
        assert (data.tolist(), bounds.tolist()) == (expected_data.tolist(), expected_bounds.tolist())
        medians = merged.median(field)
        for g, (history, added) in enumerate(parts):
            values = np.concatenate([history.numeric[field], added.numeric[field]])
            if field == "iterations" and assume_one:
                values = np.where(np.isnan(values), 1.0, values)
            kept = [v for v in values.tolist() if not np.isnan(v) and (v > 0 or field in ("total_tokens", "tool_calls", "iterations"))]
            assert medians[g] == (statistics.median(kept) if kept else 0.0), (field, g, in_parts)
    for mine, theirs in zip(merged.quartiles(), sorted_all.quartiles()):
        np.testing.assert_array_equal(mine, theirs)  # NaN for a group of fewer than two
    for history, added in parts:  # what a store keeps, grown by a batch: its order merged, still a sort
        grown = grown_columns(history, added, FIGURES)
        for field in FIGURES:
            np.testing.assert_array_equal(grown.order(field).values(), np.sort(grown.numeric[field]))


def test_a_field_no_part_holds_stays_absent_when_columns_are_joined() -> None:
    """Columns of runs that report no figure of a kind leave it absent, and joining columns
    copies only the fields some part holds: a pipeline group's million stored rows kept 5
    figures, and a batch's runs reported 4 more, yet 13 were copied a batch. Every value reads
    as before: NaN where no run reported it."""
    from arena_core import Submission, structure
    from arena_core.engine.columns import NUMERIC_FIELDS, Columns

    runs = [structure({"id": f"r{i}", "task_id": "t", "total_tokens": 10 * i, "execution_time": 1.5}, Submission) for i in range(4)]
    plain = Columns.from_submissions(runs[:2])
    timed = Columns.from_submissions(runs[2:])
    stored = Columns(["s"], ["t"], {"iterations": np.array([4.0])})
    joined = Columns.concat([plain, stored, timed])
    for field in NUMERIC_FIELDS:
        expected = np.concatenate([plain.numeric[field], stored.numeric[field], timed.numeric[field]])
        np.testing.assert_array_equal(joined.numeric[field], expected)
        held = field in ("total_tokens", "execution_time", "iterations")
        assert (joined.numeric[field] is joined._absent) is not held, field
        assert (plain.numeric[field] is plain._absent) is (field not in ("total_tokens", "execution_time"))
    assert joined.numeric["iterations"].tolist()[2] == 4.0 and Columns.from_submissions([]).size == 0


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.one_of(st.integers(-3, 9).map(float), st.just(float("nan"))), max_size=12), max_size=8),
    st.lists(st.integers(0, 9).map(float), max_size=6),
)
def test_an_order_grown_by_parts_is_a_sort_and_reads_any_rank_of_a_union(chunks, small) -> None:
    """An :class:`Ordered` grown chunk by chunk (kept apart while few, merged in past a bound,
    made 4 here) holds a sort of everything added (NaN last); ``union_at`` reads every rank of
    the union of two sorted arrays as their sort has it, and ``merged_in`` lays it out."""
    from arena_core.engine import ordered

    before = ordered._APART_UP_TO
    ordered._APART_UP_TO = 4
    try:
        grown = ordered.Ordered.of(np.array(chunks[0] if chunks else [], dtype=float))
        for chunk in chunks[1:]:
            grown = grown.plus(np.array(chunk, dtype=float))
    finally:
        ordered._APART_UP_TO = before
    everything = np.array([v for chunk in chunks for v in chunk], dtype=float)
    np.testing.assert_array_equal(grown.values(), np.sort(everything))
    assert len(grown) == len(everything) and len(grown.added) <= max(4, len(grown.base) // 16)
    large, more = np.sort(everything[~np.isnan(everything)]), np.sort(np.array(small, dtype=float))
    union = np.sort(np.concatenate([large, more]))
    assert ordered.union_at(large, more, np.arange(len(union))).tolist() == union.tolist()
    assert ordered.merged_in(large, more).tolist() == union.tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", None, "A"]), min_size=1, max_size=12), st.data())
def test_task_groups_gather_equal_keys_and_keep_none_alone(kinds, data) -> None:
    """Tasks with equal keys (shared key objects or equal ones) form one group, a ``None`` key
    keeps its task alone, groups come in the order of their first task, rows ascending."""
    from arena_core import Task
    from arena_core.engine.batch import Batch, Recorder
    from arena_core.engine.columns import Columns

    tasks = [Task(id=f"t{k}") for k in range(len(kinds))]
    shared = {kind: (kind.lower(),) for kind in "abc"}  # "a" and "A": equal keys, distinct objects
    keys = {t.id: (None if kind is None else shared[kind] if kind != "A" else ("a",)) for t, kind in zip(tasks, kinds)}
    task_codes = np.array(data.draw(st.lists(st.integers(0, len(tasks) - 1), min_size=1, max_size=40)), dtype=np.int64)
    n = len(task_codes)
    columns = Columns([f"s{i}" for i in range(n)], [tasks[c].id for c in task_codes], {})
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))), dtype=np.int64)
    batch = Batch(columns, rows, {}, tasks, task_codes, Recorder())
    groups = list(batch.task_groups(lambda task: keys[task.id]))
    present = sorted(set(task_codes[rows].tolist()))
    # Expected: walk the tasks present in code order, opening a group per new key (None: always).
    expected: list[list[str]] = []
    opened: dict[tuple, int] = {}
    for code in present:
        key = keys[tasks[code].id]
        if key is None or key not in opened:
            if key is not None:
                opened[key] = len(expected)
            expected.append([])
        expected[len(expected) - 1 if key is None else opened[key]].append(tasks[code].id)
    assert [[t.id for t in members] for members, _ in groups] == expected
    for members, local in groups:
        assert list(local) == sorted(local)
        assert {tasks[c].id for c in task_codes[rows[local]]} == {t.id for t in members}
    assert sorted(np.concatenate([local for _, local in groups]).tolist()) == list(range(len(rows)))


@pytest.mark.parametrize("entries", [0, 1, 3, 17, 70])
def test_each_rows_filled_text_is_its_entries_in_order_coded_as_first_seen(entries: int) -> None:
    from arena_core.engine.columns import Coded
    from arena_core.engine.rowparts import filled_texts

    rng = np.random.default_rng(entries)
    n = 3000
    filled = [(f"slot{i % 5}", ("neutral", "reweight")[i % 2], rng.random(n) < 0.2) for i in range(entries)]
    expected = [";".join(f"{s}={p}" for s, p, mask in filled if mask[row]) for row in range(n)]
    got = filled_texts(filled, n)
    assert list(got) == expected
    if isinstance(got, Coded):
        firsts = [int(np.flatnonzero(got.codes == c)[0]) for c in range(len(got.distinct))]
        assert firsts == sorted(firsts) and len(set(got.distinct)) == len(got.distinct)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.floats(-1e6, 1e6)), max_size=50), st.integers(9, 11))
def test_bounds_of_rows_in_group_order_equal_those_scattered(rows, count) -> None:
    """Rows that come group by group (a partition clustered by task) are reduced stretch by
    stretch: the same least and greatest values, and inf/-inf for groups without rows, as the
    scatter gives rows in any order."""
    from arena_core.engine.grouped import _bounds

    rows = sorted(rows, key=lambda r: r[0])
    groups = np.array([g for g, _ in rows], dtype=np.int64)
    values = np.array([v for _, v in rows], dtype=float)
    stretched, scattered = _bounds(values, groups, count, True), _bounds(values, groups, count, False)
    for got, expected in zip(stretched, scattered, strict=True):
        np.testing.assert_array_equal(got, expected)
    for g in range(count):
        mine = [v for k, v in rows if k == g]
        assert (stretched[0][g], stretched[1][g]) == ((min(mine), max(mine)) if mine else (np.inf, -np.inf))


def test_no_runs_score_to_an_empty_result_not_an_error() -> None:
    """A task set with no runs (a store's task before its first run, a filter that kept none)
    scores to nothing, as records, as columns and as a table of no rows; it had raised an
    IndexError from the grouping of no rows."""
    from arena_core import Arena

    arena = Arena(autoload=False)
    tasks = {"t": {"id": "t"}}
    for given in ([], {"id": [], "task_id": []}, {"id": np.array([], dtype=str), "task_id": [], "total_tokens": []}):
        result = arena.evaluate_many(given, tasks)
        assert len(result) == 0 and list(result) == []
        assert len(result.columns()["overall_score"]) == 0
